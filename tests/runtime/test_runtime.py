"""The Docker provider on the real engine: exec, copy, labels, limits, providers by name."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from replay.runtime import (
    PROVIDERS,
    ContainerSpec,
    Limits,
    Runtime,
    UnknownProviderError,
    get_runtime,
)
from replay.runtime.base import OWNER_LABEL, RUN_LABEL, process_start
from replay.runtime.docker import DockerContainer, DockerRuntime


def make(runtime: Runtime, image: str, run: str, **limits: object) -> DockerContainer:
    spec = ContainerSpec(image=image, command=["sleep", "600"], limits=Limits(**limits))  # type: ignore[arg-type]
    container = runtime.create(spec, run)
    assert isinstance(container, DockerContainer)
    return container


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(
        UnknownProviderError, match=r"unknown runtime provider 'podman' \(known: docker\)"
    ):
        get_runtime("podman")
    assert PROVIDERS["docker"] is DockerRuntime


def test_exec_captures_output_and_exit_status(runtime: Runtime, base_image: str) -> None:
    c = make(runtime, base_image, "rt-exec")
    try:
        r = c.exec(["sh", "-c", "echo out; echo err >&2; pwd; exit 3"], workdir="/tmp")
        assert (r.exit_code, r.out, r.err) == (3, "out\n/tmp\n", "err\n")
        assert not r.ok and r.limit is None and not r.timed_out
        r = c.exec(["sh", "-c", 'echo "$GREETING"'], env={"GREETING": "hello"})
        assert r.ok and r.out == "hello\n"
        slow = c.exec(["sleep", "30"], timeout=1)
        assert slow.timed_out and slow.duration < 10 and slow.limit is None
        # The container survives an exec's timeout.
        assert c.exec(["true"]).ok
    finally:
        c.remove()


def test_exec_hands_its_standard_input_in_and_ends_it(runtime: Runtime, base_image: str) -> None:
    """Every byte in (10 MB, more than any pipe holds, echoed back while it is written), end
    of file after it; a command that stops reading early is no error; and without ``stdin``
    the command reads nothing at once."""
    data = bytes(range(256)) * 40_000
    c = make(runtime, base_image, "rt-stdin")
    try:
        echoed = c.exec(["cat"], stdin=data, timeout=60)
        assert echoed.ok and echoed.stdout == data
        stored = c.exec(["sh", "-c", "cat > /tmp/in; wc -c < /tmp/in"], stdin=data, timeout=60)
        assert stored.ok and stored.out.strip() == str(len(data))
        early = c.exec(["sh", "-c", "head -c 3; echo; echo done"], stdin=data * 3, timeout=60)
        assert early.ok and early.stdout == data[:3] + b"\ndone\n"
        assert c.exec(["sh", "-c", "wc -c"], stdin=b"", timeout=60).out.strip() == "0"
        assert c.exec(["sh", "-c", "wc -c"], timeout=60).out.strip() == "0"
    finally:
        c.remove()


def test_copy_in_and_out_as_tar(runtime: Runtime, base_image: str, tmp_path: Path) -> None:
    src = tmp_path / "payload"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "file.txt").write_text("inside\n")
    c = make(runtime, base_image, "rt-copy")
    try:
        c.copy_in(src, "/work/in")
        assert c.exec(["cat", "/work/in/payload/sub/file.txt"]).out == "inside\n"
        assert c.exec(["sh", "-c", "echo made > /work/in/payload/new.txt"]).ok
        c.copy_out("/work/in/payload", tmp_path / "back")
        assert (tmp_path / "back" / "payload" / "new.txt").read_text() == "made\n"
        assert (tmp_path / "back" / "payload" / "sub" / "file.txt").read_text() == "inside\n"
    finally:
        c.remove()


def test_labels_name_the_run_and_the_owner(runtime: Runtime, base_image: str) -> None:
    c = make(runtime, base_image, "rt-labels")
    try:
        labels = c.sdk.labels
        assert labels[RUN_LABEL] == "rt-labels"
        assert labels[OWNER_LABEL] == f"{os.getpid()}@{socket.gethostname()}"
        assert labels["replay.owner.start"] == process_start(os.getpid())
    finally:
        c.remove()
    assert c.status() == "removed"


def test_memory_limit_stops_the_run_and_says_so(runtime: Runtime, base_image: str) -> None:
    c = make(runtime, base_image, "rt-mem", memory=64 * 1024**2)
    try:
        r = c.exec(["python3", "-c", "x = bytearray(400 * 1024 * 1024)"])
        assert r.limit == "memory" and not r.ok
        assert c.limit_hit() == "memory"
        assert c.status() == "exited"
    finally:
        c.remove()


def test_pids_limit_stops_the_run_and_says_so(runtime: Runtime, base_image: str) -> None:
    c = make(runtime, base_image, "rt-pids", pids=32)
    try:
        r = c.exec(["sh", "-c", "for i in $(seq 100); do sleep 60 & done; wait"])
        assert r.limit == "pids"
        assert c.status() == "exited"
    finally:
        c.remove()


def test_wall_time_stops_the_run_and_says_so(runtime: Runtime, base_image: str) -> None:
    c = make(runtime, base_image, "rt-wall", wall_time=2)
    try:
        r = c.exec(["sleep", "60"])
        assert r.limit == "wall_time" and r.exit_code != 0
        assert 2 <= r.duration < 15
        assert c.status() == "exited"
        # Once stopped for a limit, nothing more runs.
        assert c.exec(["true"]).limit == "wall_time"
    finally:
        c.remove()


def test_cpu_quota_is_set_and_within_limits_nothing_is_reported(
    runtime: Runtime, base_image: str
) -> None:
    c = make(runtime, base_image, "rt-cpu", cpus=0.5, memory=256 * 1024**2, pids=64)
    try:
        host = c.sdk.attrs["HostConfig"]
        assert host["NanoCpus"] == 500_000_000
        assert host["Memory"] == host["MemorySwap"] == 256 * 1024**2
        assert host["PidsLimit"] == 64
        r = c.exec(["python3", "-c", "print(sum(range(10**6)))"])
        assert r.ok and r.limit is None and c.limit_hit() is None
    finally:
        c.remove()


def test_waiting_for_output_follows_one_stream_until_the_marker_or_the_end(
    runtime: Runtime, base_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One logs call per wait, however long the command takes to write the marker (a
    split write included); a command that ends without it, or a silent one past the
    timeout, is False (the first without waiting out its ten minutes)."""
    from docker.api.client import APIClient  # type: ignore[import-untyped]

    logs: list[str] = []
    send = APIClient.send

    def counted(self: APIClient, request: Any, **kwargs: Any) -> Any:
        if request.path_url.split("?")[0].endswith("/logs"):
            logs.append(request.path_url)
        return send(self, request, **kwargs)

    monkeypatch.setattr(APIClient, "send", counted)
    script = "sleep 1; printf 'one\\nrea'; sleep 1; echo 'dy-now'; sleep 600"
    for command, marker, timeout, expected in (
        (["sh", "-c", script], b"ready-now", 600.0, True),
        (["sh", "-c", "sleep 1; echo done"], b"ready-now", 600.0, False),
        (["sleep", "600"], b"ready-now", 1.0, False),
    ):
        c = runtime.create(ContainerSpec(image=base_image, command=command), "rt-wait")
        try:
            logs.clear()
            assert c.wait_for_output(marker, timeout) is expected
            assert len(logs) == 1
        finally:
            c.remove()
