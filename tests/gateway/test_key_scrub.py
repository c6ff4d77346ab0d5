"""The scrubber that keeps the real key out of what comes back: every cut of a stream, masks
of the same length, never a whole stream held, and the encodings it can and cannot read."""

from __future__ import annotations

import gzip
import zlib

import pytest

from replay.gateway.scrub import MARK, Scrubber, StreamDecoder, UnreadableEncoding, mask

KEY = "sk-proj-REALKEYdoNotLeak0123456789abcdefghijklmnop"
ANT = "sk-ant-api03-REALKEY0123456789abcdefghij"
BODY = (
    b'data: {"choices":[{"delta":{"content":"' + KEY.encode() + b'"}}]}\n\n'
    b'data: {"error":{"message":"bad key ' + ANT.encode() + b" and " + KEY.encode() + b'"}}\n\n'
    b"data: [DONE]\n\n"
)


def test_masks_keep_the_length() -> None:
    scrubber = Scrubber([KEY, ANT])
    out = scrubber.scrub(BODY)
    assert len(out) == len(BODY)
    assert KEY.encode() not in out and ANT.encode() not in out
    assert out.count(MARK) == 3
    assert mask(b"short") == MARK[:5]
    assert scrubber.scrub_text(f"Bearer {KEY}") == f"Bearer {mask(KEY.encode()).decode()}"


@pytest.mark.parametrize("pieces", [2, 3])
def test_every_cut_of_a_stream_is_scrubbed(pieces: int) -> None:
    scrubber = Scrubber([KEY, ANT])
    expected = scrubber.scrub(BODY)
    longest = max(len(KEY), len(ANT))
    step = 1 if pieces == 2 else 7
    for a in range(0, len(BODY) + 1, step):
        for b in [a] if pieces == 2 else range(a, len(BODY) + 1, 11):
            stream = scrubber.stream()
            out = b""
            for part in (BODY[:a], BODY[a:b], BODY[b:]):
                out += stream.feed(part)
                assert stream.held < longest, "never more than a key's length minus one"
            out += stream.flush()
            assert out == expected, (a, b)


def test_byte_by_byte_and_nothing_held_when_no_key_could_start() -> None:
    scrubber = Scrubber([KEY])
    stream = scrubber.stream()
    out = b"".join(stream.feed(BODY[i : i + 1]) for i in range(len(BODY)))
    assert out + stream.flush() == scrubber.scrub(BODY)
    # An event that ends in a blank line cannot be the start of a key: it goes out whole.
    stream = scrubber.stream()
    assert stream.feed(b"data: {}\n\n") == b"data: {}\n\n" and stream.held == 0
    assert stream.feed(b"data: sk-pro") == b"data: " and stream.held == len("sk-pro")
    assert stream.feed(b"file\n\n") == b"sk-profile\n\n", "it was not the key after all"


def test_no_secret_scrubs_nothing() -> None:
    scrubber = Scrubber(["", ""])
    assert not scrubber
    stream = scrubber.stream()
    assert stream.feed(BODY) == BODY and stream.held == 0


@pytest.mark.parametrize("encode", [gzip.compress, zlib.compress])
def test_gzip_and_deflate_are_decoded_chunk_by_chunk(encode) -> None:  # type: ignore[no-untyped-def]
    raw = encode(BODY)
    decoder = StreamDecoder("gzip" if encode is gzip.compress else "deflate")
    out = b"".join(decoder.feed(raw[i : i + 5]) for i in range(0, len(raw), 5))
    assert out + decoder.flush() == BODY


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, br"])
def test_an_encoding_it_cannot_read_is_refused(encoding: str) -> None:
    with pytest.raises(UnreadableEncoding):
        StreamDecoder(encoding)


def test_corrupt_gzip_is_refused() -> None:
    decoder = StreamDecoder("gzip")
    with pytest.raises(UnreadableEncoding):
        decoder.feed(b"\x1f\x8b\x08\x00garbage-not-deflate" * 4)
