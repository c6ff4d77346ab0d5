"""Reading what the sandbox sends without letting it break the reader.

Everything a request carries is the agent's to choose: header names and values in any bytes
(mitmproxy hands them over decoded as UTF-8 with ``surrogateescape``, so a byte that is not
UTF-8 becomes a lone surrogate), bodies that are not JSON, JSON nested deeper than the parser's
recursion limit, strings with lone surrogates (``"\\ud800"`` is valid JSON), numbers written in
digits that are not ASCII (``str.isdigit`` accepts ``'²'``, ``int`` refuses it) or with more
digits than ``int`` converts. None of it may fail a gateway addon: a failed addon marks the run
invalid, so an agent could void a losing run with one odd header. These helpers read such input
and say what it is, so that it can be recorded as it was.

Pure Python, no I/O: used by the gateway's addons and by the model-call observer alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
TEXT_CAP = 2000
"""Characters of one string the gateway keeps in a record, unless told otherwise."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        # A byte that was not UTF-8, as surrogateescape carried it: shown as that byte.
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def safe_text(text: str, cap: int | None = TEXT_CAP) -> str:
    """``text`` as a record can hold it: lone surrogates written as escapes (``\\xff`` for a
    byte that was not UTF-8, ``\\ud800`` for a surrogate from JSON), cut to ``cap`` characters
    with the length it had said at the cut. Encodable as UTF-8, whatever came in."""
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(_escape, text)
    if cap is not None and len(text) > cap:
        text = f"{text[:cap]}... ({len(text)} characters)"
    return text


def safe_data(value: Any) -> Any:
    """A JSON-like value with every string in it (keys too) passed through :func:`safe_text`
    (without a cap: the caller bounds what it records)."""
    if isinstance(value, str):
        return safe_text(value, None)
    if isinstance(value, Mapping):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_data(v) for v in value]
    return value


def parse_json(data: bytes | str) -> tuple[Any, str | None]:
    """``(value, None)`` for a JSON document, ``(None, why)`` for anything else.

    Why not: not UTF-8, not JSON, nested past the parser's recursion limit, or an integer with
    more digits than Python converts; never an exception.
    """
    try:
        return json.loads(data), None
    except RecursionError:
        return None, "JSON nested too deep to read"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        return None, f"not JSON ({type(exc).__name__})"


def ascii_count(value: str, max_digits: int = 6) -> int | None:
    """The count a header value writes in ASCII digits (blanks around allowed), or None for
    anything else: other scripts' digits (``'²'``, ``'\\u0661'``), signs, more than ``max_digits``
    digits."""
    text = value.strip(" \t")
    if not text or len(text) > max_digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def show(value: str, cap: int = 80) -> str:
    """A value as a record quotes it: its ``repr`` (so control characters and odd bytes are
    visible), cut to ``cap`` characters."""
    return safe_text(repr(value), cap)
