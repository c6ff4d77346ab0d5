"""Reading what comes out of a container with bounds: nothing a sandbox sends is held whole.

Everything that leaves a sandbox (a command's standard output and error, a file or directory
copied out) is hostile input: it may be of any size (a flood on the harness's stdout, a sparse
file of a terabyte that costs the sandbox no disk), of any kind (a directory or a link where a
file is expected) and hold any bytes. The readers here keep at most a cap of each stream: its
first half and its last half, with a visible marker where the middle was cut (a traceback at
the end of a flood survives), and count what they cut. A copy-out makes only regular files and
directories on the host, inside its destination, never a link, a device or a FIFO, and never
follows one.

The caps (:class:`Caps`) are set far above what a real harness or test run produces and can be
raised through the environment (``REPLAY_CAP_<NAME>``, a number of bytes with an optional
``KiB``/``MiB``/``GiB`` suffix).
"""

from __future__ import annotations

import os
import posixpath
import re
import struct
import tarfile
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, BinaryIO

from replay.base.errors import InputError

KiB = 1024
MiB = 1024**2
GiB = 1024**3

ENV_PREFIX = "REPLAY_CAP_"
"""``REPLAY_CAP_COPY=256MiB`` sets :attr:`Caps.copy`, and so on for every field."""


@dataclass(frozen=True)
class Caps:
    """How much of a sandbox's output the runner keeps, in bytes (entries for
    ``copy_entries``). What goes past a cap is cut out of the middle, counted and marked.

    The defaults are far above what the real harnesses and test runs here write (a long
    Claude Code session's stream-json is a few MB; the hidden tests' listing of a tree of
    100,000 files about 30 MB), so only a flood is ever cut; and low enough that the runner's
    memory stays well under 300 MB whatever a sandbox sends (a kept tail is held in memory
    until its stream ends).
    """

    exec_output: int = 64 * MiB
    """Each stream (stdout, stderr) of a command whose output is held in memory (the final
    diff, the hidden tests' output and listings). Transiently twice this per stream."""
    harness_output: int = 64 * MiB
    """Each of the harness's ``stdout.txt`` and ``stderr.txt``, streamed to disk (half of it,
    the tail, held in memory until the harness ends)."""
    copy: int = 64 * MiB
    """What one copy-out writes on the host, all its files together (the harness's transcript,
    the hidden tests' reports): each file keeps its head and tail within what is left."""
    copy_read: int = 2 * GiB
    """What one copy-out reads from the container at most. A sparse file is streamed in full
    (its holes as zeros), so past this the copy stops: the file keeps its head and the rest
    is marked unread."""
    copy_entries: int = 10_000
    """Entries (files, directories, links...) one copy-out looks at; the rest are skipped."""
    transcript_line: int = 8 * MiB
    """The longest line of a transcript that is read; a longer one is skipped."""
    transcript_document: int = 32 * MiB
    """The largest transcript read whole (formats that are one document, not lines)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Caps:
        """The defaults, with every ``REPLAY_CAP_<FIELD>`` set in ``env`` (the process's
        environment by default) applied; a value that is not a size is an
        :class:`~replay.base.errors.InputError` naming the variable."""
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for f in fields(cls):
            name = ENV_PREFIX + f.name.upper()
            raw = env.get(name)
            if raw is not None and raw.strip():
                values[f.name] = parse_size(raw, name)
        return cls(**values)


_SIZE = re.compile(r"^\s*(\d+)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": KiB, "m": MiB, "g": GiB}


def parse_size(text: str, name: str) -> int:
    """``64MiB``, ``2GiB``, ``4096``: a positive number of bytes (units are binary)."""
    match = _SIZE.match(text)
    if match is None or int(match.group(1)) <= 0:
        raise InputError(
            f"${name}", f"{text!r} is not a size: a positive number of bytes, or with KiB/MiB/GiB"
        )
    return int(match.group(1)) * _UNITS[match.group(2)[:1].lower()]


def marker(cut: int, kept_head: int, kept_tail: int, total: int, unread: bool = False) -> bytes:
    """The line that stands where a stream's middle was cut: what was cut and what is kept."""
    if unread:
        what = (
            f"[replay: cut here: more than {total} bytes came, reading stopped at the cap; "
            f"the first {kept_head} are kept above, the rest was never read]"
        )
    elif kept_tail:
        what = (
            f"[replay: {cut} bytes cut here: of {total} bytes, the first {kept_head} and the "
            f"last {kept_tail} are kept]"
        )
    else:
        what = f"[replay: {cut} bytes cut here: of {total} bytes, the first {kept_head} are kept]"
    return f"\n{what}\n".encode()


class Kept:
    """What is kept of one stream: its first half up to ``cap`` written through at once (to
    ``sink``, a binary file, or held here), its last half held in memory until :meth:`close`,
    which writes the marker and the tail after the head when anything was cut.

    Without ``tail``, all of ``cap`` is the head and the marker ends it: a stream that is data
    (a tar, records a parser reads) keeps an intact prefix rather than a hole."""

    def __init__(self, cap: int, sink: IO[bytes] | None = None, *, tail: bool = True) -> None:
        self.cap = max(cap, 0)
        self.tail_cap = self.cap // 2 if tail else 0
        self.head_cap = self.cap - self.tail_cap
        self.sink = sink
        self.head = bytearray()
        self._head_len = 0
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total = 0
        """Bytes that came, kept or not."""
        self.cut = 0
        """Bytes cut (known once closed)."""
        self.unread = False
        """The stream was abandoned before its end (:meth:`close` with ``unread``)."""
        self._closed = False
        # A reader thread writes while the thread that started it may close (a stream that
        # outlived its command): nothing is taken once closed.
        self._lock = threading.Lock()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Take the next piece of the stream (ignored once closed)."""
        with self._lock:
            if not self._closed:
                self._write(data)

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        size = len(view)
        self.total += size
        room = self.head_cap - self._head_len
        if room > 0:
            part = view[:room]
            self._write_head(part)
            view = view[room:]
        if len(view) == 0 or self.tail_cap == 0:
            return
        self._tail.append(bytes(view))
        self._tail_len += len(view)
        # Drop whole pieces from the front while what stays still covers the tail's cap.
        while self._tail and self._tail_len - len(self._tail[0]) >= self.tail_cap:
            self._tail_len -= len(self._tail.popleft())

    def _write_head(self, part: memoryview) -> None:
        self._head_len += len(part)
        if self.sink is not None:
            self.sink.write(part)
        else:
            self.head += part

    def close(self, unread: bool = False) -> int:
        """The stream ended (or, with ``unread``, was abandoned): write the marker and the
        tail if anything was cut; the bytes cut (0 if all of it was kept)."""
        with self._lock:
            if self._closed:
                return self.cut
            self._closed = True
        self.unread = unread
        if unread:
            # The end was never seen: a tail from the middle would mislead; only the head.
            self.cut = self.total - self._head_len
            self._emit(marker(self.cut, self._head_len, 0, self.total, unread=True))
            self._tail.clear()
            return self.cut
        tail = b"".join(self._tail)
        self._tail.clear()
        if len(tail) > self.tail_cap:  # the pieces held may reach past the tail's cap
            tail = tail[len(tail) - self.tail_cap :] if self.tail_cap else b""
        self.cut = self.total - self._head_len - len(tail)
        if self.cut:
            self._emit(marker(self.cut, self._head_len, len(tail), self.total))
        self._emit(tail)
        return self.cut

    def _emit(self, data: bytes) -> None:
        if self.sink is not None:
            self.sink.write(data)
        else:
            self.head += data

    def value(self) -> bytes:
        """Everything kept, the marker included (held in memory: no ``sink``)."""
        self.close()
        data = bytes(self.head)
        self.head = bytearray()
        return data


# ---------------------------------------------------------------------------- exec output


STDOUT, STDERR = 1, 2
READ_SIZE = 1 << 20


def demux(sock: Any, streams: Mapping[int, Kept], ahead: bytes = b"") -> None:
    """Read a Docker exec's multiplexed stream (8-byte frame headers: stream, size) until it
    ends, handing each frame's bytes to ``streams[stream]`` (others are dropped). ``ahead``:
    the stream's first bytes, read before the socket (see
    :func:`replay.runtime.docker.upgraded`). Reads in large pieces: a frame is at most
    32 KiB, and docker-py's own reader pays a poll and a system call for each (about 90 MB/s
    here, against 120 for this)."""
    raw = getattr(sock, "_sock", sock)
    recv: Callable[[int], bytes] = raw.recv if hasattr(raw, "recv") else raw.read
    header = bytearray()
    stream, left = 0, 0
    while True:
        chunk, ahead = (ahead or recv(READ_SIZE)), b""
        if not chunk:
            return
        view = memoryview(chunk)
        i, end = 0, len(view)
        while i < end:
            if left == 0:
                need = 8 - len(header)
                header += view[i : i + need]
                i += min(need, end - i)
                if len(header) < 8:
                    break
                stream, left = struct.unpack(">BxxxL", header)
                header.clear()
                continue
            take = min(left, end - i)
            sink = streams.get(stream)
            if sink is not None:
                sink.write(view[i : i + take])
            i += take
            left -= take


# ---------------------------------------------------------------------------- copy-out


@dataclass
class CopyReport:
    """What a bounded copy-out wrote on the host, and what it left out."""

    kind: str = "none"
    """What the copied path is in the container: ``file``, ``directory``, ``symlink``,
    ``hardlink``, ``fifo``, ``device`` or ``other``; ``none`` when nothing came."""
    files: int = 0
    """Regular files written."""
    written: int = 0
    """Bytes written on the host, markers included."""
    read: int = 0
    """Bytes read from the container's stream."""
    cut: dict[str, int] = field(default_factory=dict)
    """Files cut at the cap (path relative to the destination: bytes cut)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Entries not made on the host (path: why; a link, a device, an entry past the cap...)."""
    unread: bool = False
    """Reading stopped at :attr:`Caps.copy_read` (or the stream broke) before its end."""
    error: str | None = None
    """Why the stream could not be read to its end, if it could not."""


def _kind(member: tarfile.TarInfo) -> str:
    if member.isreg():
        return "file"
    if member.isdir():
        return "directory"
    if member.issym():
        return "symlink"
    if member.islnk():
        return "hardlink"
    if member.isfifo():
        return "fifo"
    if member.isdev():
        return "device"
    return "other"


class _Limited:
    """A file-like view of a stream that reads at most ``limit`` bytes, then reports EOF."""

    def __init__(self, raw: BinaryIO, limit: int) -> None:
        self.raw = raw
        self.limit = limit
        self.count = 0
        self.hit = False

    def read(self, n: int = -1) -> bytes:
        left = self.limit - self.count
        if left <= 0:
            self.hit = True
            return b""
        data = self.raw.read(left if n < 0 else min(n, left))
        self.count += len(data)
        return data


def extract(
    raw: BinaryIO, dest: Path, caps: Caps, *, file_only: bool = False, cap: int | None = None
) -> CopyReport:
    """Unpack the tar stream ``raw`` into the host directory ``dest`` within ``caps``.

    Only directories and regular files are made (mode 0755 and 0644, owned by the runner),
    each at a path inside ``dest`` (an absolute name or one with ``..`` is skipped); every
    other entry (a link of either kind, a device, a FIFO) is listed in
    :attr:`CopyReport.skipped`, never made nor followed. Files together write at most ``cap``
    bytes (:attr:`Caps.copy` by default), each its head and tail with a marker between; at most
    :attr:`Caps.copy_read` bytes are read. With ``file_only``, a stream whose first entry is not
    a regular file writes nothing (its kind is reported). Never raises for what the stream
    holds: a broken stream ends the copy, noted in :attr:`CopyReport.error`.
    """
    budget = caps.copy if cap is None else cap
    report = CopyReport()
    stream = _Limited(raw, caps.copy_read)
    dest.mkdir(parents=True, exist_ok=True)
    entries = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                entries += 1
                kind = _kind(member)
                if entries == 1:
                    report.kind = kind
                    if file_only and kind != "file":
                        break
                name = posixpath.normpath(member.name)
                if name.startswith("/") or ".." in name.split("/") or name in (".", ""):
                    report.skipped[member.name] = "a path outside the destination"
                    continue
                if entries > caps.copy_entries:
                    report.skipped[name] = f"past the cap of {caps.copy_entries} entries"
                    report.unread = True
                    break
                if kind == "directory":
                    try:
                        (dest / name).mkdir(parents=True, exist_ok=True, mode=0o755)
                    except OSError as exc:
                        report.skipped[name] = f"not made: {exc.strerror or exc}"
                elif kind != "file":
                    report.skipped[name] = f"a {kind}: never made on the host"
                elif not _copy_file(tar, member, dest, name, budget, report):
                    break
    except (tarfile.TarError, EOFError, OSError) as exc:
        report.unread = True
        report.error = f"{type(exc).__name__}: {exc}"
    report.read = stream.count
    if stream.hit:
        report.unread = True
        report.error = None  # not broken: stopped at the cap on purpose
    return report


def _copy_file(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    dest: Path,
    name: str,
    budget: int,
    report: CopyReport,
) -> bool:
    """Write one regular file's kept part at ``dest/name``; False when the stream broke (or
    reached the read cap) inside it, which ends the copy."""
    target = dest / name
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        out = open(target, "xb")  # noqa: SIM115 - closed below; "x": a duplicate name is skipped
    except OSError as exc:
        report.skipped[name] = f"not written: {exc.strerror or exc}"
        return True
    broken: str | None = None
    with out:
        os.fchmod(out.fileno(), 0o644)
        kept = Kept(max(budget - report.written, 0), out)
        try:
            source = tar.extractfile(member)
            while source is not None and (data := source.read(READ_SIZE)):
                kept.write(data)
            if kept.total < member.size:
                broken = "the stream ended inside a file"
        except (tarfile.TarError, EOFError) as exc:
            broken = f"{type(exc).__name__}: {exc}"
        cut = kept.close(unread=broken is not None)
        report.written += out.tell()
    report.files += 1
    if cut:
        report.cut[name] = cut
    if broken is not None:
        report.unread = True
        report.error = broken
        return False
    return True
