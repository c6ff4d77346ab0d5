"""Keeping the runner's real model key out of everything that comes back from the provider.

The gateway injects the real key on the way out; whatever comes back (headers, a body, a
stream, an error message quoting the key) passes through a :class:`Scrubber` before the agent
or any log sees it. A stream is scrubbed across chunk boundaries: a chunk's tail that could be
the start of a key is held back until the next chunk shows whether it is (never more than
``len(key) - 1`` bytes, so a stream is never held whole). A key is replaced by a mask of the
same length, so a ``content-length`` stays true.

Pure Python, no I/O: runs in the gateway and in the tests alike.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

MARK = b"[replay: credential removed]"


def mask(secret: bytes) -> bytes:
    """What replaces ``secret``: the marker, cut or padded with ``*`` to the same length."""
    return (MARK + b"*" * len(secret))[: len(secret)]


class Scrubber:
    """Replaces every occurrence of the given secrets."""

    def __init__(self, secrets: Iterable[str]) -> None:
        found = {s.encode() for s in secrets if s}
        # Longest first, so a key that contains another is replaced whole.
        self.secrets: tuple[bytes, ...] = tuple(sorted(found, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def scrub(self, data: bytes) -> bytes:
        """``data`` with every secret masked."""
        for secret in self.secrets:
            if secret in data:
                data = data.replace(secret, mask(secret))
        return data

    def scrub_text(self, text: str) -> str:
        """A string with every secret masked (headers, log records)."""
        for secret in self.secrets:
            value = secret.decode()
            if value in text:
                text = text.replace(value, mask(secret).decode())
        return text

    def stream(self) -> StreamScrubber:
        """A scrubber for one stream of chunks."""
        return StreamScrubber(self)

    def _held_tail(self, data: bytes) -> int:
        """How many bytes at the end of ``data`` could be the start of a secret."""
        longest = 0
        for secret in self.secrets:
            for k in range(min(len(secret) - 1, len(data)), longest, -1):
                if data.endswith(secret[:k]):
                    longest = k
                    break
        return longest


class StreamScrubber:
    """Scrubs one stream chunk by chunk, holding back only a possible partial secret."""

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self._held = b""

    @property
    def held(self) -> int:
        """Bytes held back right now (less than the longest secret)."""
        return len(self._held)

    def feed(self, data: bytes) -> bytes:
        """The bytes of ``data`` (and of what was held) that can safely go on."""
        buf = self._scrubber.scrub(self._held + data)
        keep = self._scrubber._held_tail(buf)
        self._held = buf[len(buf) - keep :] if keep else b""
        return buf[: len(buf) - keep]

    def flush(self) -> bytes:
        """The end of the stream: what was held (it was not a secret)."""
        rest, self._held = self._held, b""
        return rest


class UnreadableEncoding(Exception):
    """An answer in a content encoding the gateway cannot decode (so cannot scrub)."""


class StreamDecoder:
    """Decodes a gzip or deflate body chunk by chunk (the gateway asks for ``identity``; this
    is for an upstream that compresses anyway)."""

    READABLE = frozenset({"gzip", "x-gzip", "deflate"})

    def __init__(self, encoding: str) -> None:
        if encoding.strip().lower() not in self.READABLE:
            raise UnreadableEncoding(f"content-encoding {encoding!r}")
        # 32 + 15: a gzip or a zlib header, told apart by the first bytes.
        self._inflate = zlib.decompressobj(wbits=47)

    def feed(self, data: bytes) -> bytes:
        try:
            return self._inflate.decompress(data)
        except zlib.error as exc:
            raise UnreadableEncoding(f"corrupt compressed body: {exc}") from exc

    def flush(self) -> bytes:
        try:
            return self._inflate.flush()
        except zlib.error as exc:
            raise UnreadableEncoding(f"corrupt compressed body: {exc}") from exc
