"""What comes out of a container is read within caps: an exec's output and a copy-out keep
their head and tail with a marker and count the cut; a copy-out makes only regular files and
directories inside its destination; the caps are read from the environment."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from replay.base.errors import InputError
from replay.runtime.base import Runtime
from replay.runtime.bounded import Caps, Kept, MiB, extract, parse_size


def test_kept_holds_everything_under_the_cap_and_head_marker_tail_over_it() -> None:
    small = Kept(10)
    small.write(b"abc")
    assert small.value() == b"abc" and small.cut == 0
    big = Kept(10)
    for piece in (b"0123", b"4567", b"89ab", b"cdef"):
        big.write(piece)
    data = big.value()
    assert data.startswith(b"01234") and data.endswith(b"bcdef")
    assert big.cut == 6 and big.total == 16
    assert b"[replay: 6 bytes cut here: of 16 bytes, the first 5 and the last 5 are kept]" in data


def test_kept_streams_its_head_to_a_file_and_holds_only_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "out"
    with path.open("wb") as fh:
        kept = Kept(1 * MiB, fh)
        for _ in range(64):
            kept.write(b"x" * 65536)
        kept.write(b"THE END")
        # While it runs, only the tail (half the cap) is held in memory.
        assert sum(len(p) for p in kept._tail) <= MiB // 2 + 65536
        assert kept.close() == 64 * 65536 + 7 - MiB
    data = path.read_bytes()
    assert len(data) < MiB + 200 and data.endswith(b"THE END")


def test_closing_unread_keeps_only_the_head() -> None:
    kept = Kept(8)
    kept.write(b"0123456789")
    assert kept.close(unread=True) == 6
    assert kept.value().startswith(b"0123\n[replay: cut here: more than 10 bytes came")


def _tar(entries: list[tuple[str, bytes | str | None, bytes]]) -> io.BytesIO:
    """A tar of (name, type, data): type a tarfile type byte."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.type = kind if isinstance(kind, bytes) else tarfile.REGTYPE
            if info.type in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = data.decode()
                tar.addfile(info)
            elif info.type == tarfile.REGTYPE:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    buf.seek(0)
    return buf


def test_a_copy_makes_only_files_and_directories_inside_its_destination(tmp_path: Path) -> None:
    stream = _tar(
        [
            ("d", tarfile.DIRTYPE, b""),
            ("d/ok.txt", None, b"fine\n"),
            ("d/passwd", tarfile.SYMTYPE, b"/etc/passwd"),
            ("d/up", tarfile.SYMTYPE, b"../../.."),
            ("d/hard", tarfile.LNKTYPE, b"/etc/shadow"),
            ("d/fifo", tarfile.FIFOTYPE, b""),
            ("d/null", tarfile.CHRTYPE, b""),
            ("../escape.txt", None, b"out"),
            ("/abs.txt", None, b"out"),
            ("d/ok.txt", None, b"again"),
        ]
    )
    report = extract(stream, tmp_path / "dest", Caps())
    made = sorted(str(p.relative_to(tmp_path / "dest")) for p in (tmp_path / "dest").rglob("*"))
    assert made == ["d", "d/ok.txt"]
    assert (tmp_path / "dest" / "d" / "ok.txt").read_text() == "fine\n"
    assert not (tmp_path / "escape.txt").exists()
    assert report.kind == "directory" and report.files == 1
    assert report.skipped["d/passwd"] == "a symlink: never made on the host"
    assert report.skipped["d/hard"] == "a hardlink: never made on the host"
    assert report.skipped["d/fifo"] == "a fifo: never made on the host"
    assert report.skipped["d/null"] == "a device: never made on the host"
    assert report.skipped["../escape.txt"] == report.skipped["/abs.txt"]
    assert report.skipped["d/ok.txt"].startswith("not written")  # the second of that name


def test_a_copy_cuts_past_its_cap_and_stops_reading_at_its_read_cap(tmp_path: Path) -> None:
    caps = Caps(copy=1000, copy_read=3 * MiB, copy_entries=3)
    report = extract(_tar([("f", None, b"a" * 5000 + b"END")]), tmp_path / "one", caps)
    data = (tmp_path / "one" / "f").read_bytes()
    assert data.startswith(b"a" * 500) and data.endswith(b"a" * 497 + b"END")
    assert report.cut == {"f": 4003} and not report.unread
    # Two files share the cap: the second gets what the first left.
    report = extract(
        _tar([("a", None, b"x" * 800), ("b", None, b"y" * 800)]), tmp_path / "two", caps
    )
    assert report.cut == {"b": 600} and report.written < 1000 + 200
    # A stream longer than the read cap (a sparse file is streamed whole) stops there.
    report = extract(_tar([("big", None, b"\0" * (4 * MiB))]), tmp_path / "three", caps)
    assert report.unread and report.read <= 3 * MiB and report.error is None
    assert b"the rest was never read" in (tmp_path / "three" / "big").read_bytes()
    # Past the entry cap, nothing more is looked at.
    many = _tar([(f"n{i}", None, b"1") for i in range(10)])
    report = extract(many, tmp_path / "four", caps)
    assert report.files == 3 and report.unread


def test_a_copy_of_a_file_only_writes_nothing_for_anything_else(tmp_path: Path) -> None:
    report = extract(
        _tar([("t.jsonl", tarfile.SYMTYPE, b"/etc/passwd")]), tmp_path, Caps(), file_only=True
    )
    assert report.kind == "symlink" and report.files == 0 and list(tmp_path.iterdir()) == []
    report = extract(
        _tar([("t.jsonl", tarfile.DIRTYPE, b""), ("t.jsonl/x", None, b"1")]),
        tmp_path,
        Caps(),
        file_only=True,
    )
    assert report.kind == "directory" and list(tmp_path.iterdir()) == []
    # A broken stream ends the copy with a note, never an exception.
    broken = io.BytesIO(_tar([("t.jsonl", None, b"z" * 10000)]).getvalue()[:3000])
    report = extract(broken, tmp_path, Caps(), file_only=True)
    assert report.unread and report.error and report.kind == "file"


def test_caps_come_from_the_environment_and_a_bad_one_names_its_variable() -> None:
    caps = Caps.from_env({"REPLAY_CAP_COPY": "256MiB", "REPLAY_CAP_EXEC_OUTPUT": "4096"})
    assert caps.copy == 256 * MiB and caps.exec_output == 4096
    assert caps.harness_output == Caps().harness_output
    assert parse_size("2 GiB", "X") == 2 << 30 and parse_size("3k", "X") == 3072
    with pytest.raises(InputError, match=r"REPLAY_CAP_COPY: 'lots' is not a size"):
        Caps.from_env({"REPLAY_CAP_COPY": "lots"})
    with pytest.raises(InputError, match="not a size"):
        Caps.from_env({"REPLAY_CAP_COPY": "0"})


# ------------------------------------------------------------------ through Docker


def test_exec_output_is_cut_at_the_cap_in_memory_and_on_disk(
    runtime: Runtime, base_image: str, tmp_path: Path
) -> None:
    from replay.runtime.base import ContainerSpec

    c = runtime.create(ContainerSpec(image=base_image, command=["sleep", "300"]), "bounded-exec")
    try:
        flood = (
            "head -c 3000000 /dev/zero; echo THE-END; "
            "head -c 300000 /dev/zero >&2; echo TRACEBACK >&2"
        )
        done = c.exec(["sh", "-c", flood], cap=100_000)
        assert done.ok and done.stdout_cut == 3_000_008 - 100_000
        assert done.cut == done.stdout_cut + done.stderr_cut
        # In memory, standard output is a data channel: an intact head, then the marker.
        assert done.stdout.startswith(b"\0" * 100_000)
        assert (
            done.stdout[100_000:]
            == b"\n[replay: 2900008 bytes cut here: of 3000008 bytes, the first 100000 are kept]\n"
        )
        # Standard error keeps its end too (where a traceback is).
        assert done.stderr_cut == 300_010 - 100_000 and done.stderr.endswith(b"TRACEBACK\n")
        assert len(done.stderr) < 100_200
        # To files: nothing held, head and tail, the same cut.
        out, err = tmp_path / "out", tmp_path / "err"
        done = c.exec(["sh", "-c", flood], cap=100_000, stdout_file=out, stderr_file=err)
        assert done.stdout == b"" and done.stdout_cut == 3_000_008 - 100_000
        assert out.stat().st_size < 100_200 and out.read_bytes().endswith(b"THE-END\n")
        assert err.read_bytes().endswith(b"TRACEBACK\n")
        # Unbounded by the caller, the runtime's cap applies (64 MiB): a small output is whole.
        assert c.exec(["echo", "hi"]).stdout == b"hi\n"
    finally:
        c.remove()


def test_copy_out_of_a_sparse_file_and_a_directory_of_links(
    runtime: Runtime, base_image: str, tmp_path: Path
) -> None:
    from replay.runtime.base import ContainerSpec

    c = runtime.create(ContainerSpec(image=base_image, command=["sleep", "300"]), "bounded-copy")
    try:
        made = c.exec(
            [
                "sh",
                "-c",
                "mkdir -p /tmp/d && truncate -s 200M /tmp/d/sparse && echo tail >> /tmp/d/sparse"
                " && ln -s /etc/passwd /tmp/d/passwd && ln -s / /tmp/d/root && mkfifo /tmp/d/fifo"
                " && echo ok > /tmp/d/ok",
            ]
        )
        assert made.ok, made.err
        report = c.copy_out("/tmp/d", tmp_path, cap=2 * MiB)
        files = {p.name: p for p in (tmp_path / "d").iterdir()}
        assert set(files) == {"sparse", "ok"}
        assert {report.skipped[f"d/{n}"].split(":")[0] for n in ("passwd", "root", "fifo")} == {
            "a symlink",
            "a fifo",
        }
        sparse = files["sparse"]
        assert sparse.stat().st_size < 2 * MiB + 200 and sparse.read_bytes().endswith(b"tail\n")
        assert report.cut["d/sparse"] > 198 * MiB and report.written < 2 * MiB + 400
        # A file asked for where a link stands: nothing copied, its kind said.
        report = c.copy_out("/tmp/d/passwd", tmp_path / "link", file_only=True)
        assert report.kind == "symlink" and not any((tmp_path / "link").iterdir())
        assert os.listdir(tmp_path / "link") == []
    finally:
        c.remove()


def test_a_bad_cap_in_the_environment_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import assert_one_line_error, run_cli

    monkeypatch.setenv("REPLAY_CAP_HARNESS_OUTPUT", "a lot")
    case = Path(__file__).resolve().parents[2] / "cases" / "demo-caret-zero" / "case.yaml"
    done = run_cli(capsys, "run", str(case), "--stub", "gold")
    assert_one_line_error(done, "$REPLAY_CAP_HARNESS_OUTPUT", "'a lot' is not a size")
