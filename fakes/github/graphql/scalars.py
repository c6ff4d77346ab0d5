"""GitHub's custom scalars as inputs: graphql-ruby refuses a value of the wrong kind.

Without a parser a custom scalar takes any JSON as it comes, so a list sent as a
``GitObjectID`` reached the database. These parsers give the request GitHub's answer (the
variable "was provided invalid value") instead. Output values are already strings.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ariadne import ScalarType


def _text(name: str) -> ScalarType:
    scalar = ScalarType(name)

    @scalar.value_parser
    def parse(value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"Could not coerce value {value!r} to {name}")
        return value

    return scalar


def _parse_datetime(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Could not coerce value {value!r} to DateTime")
    datetime.fromisoformat(value.replace("Z", "+00:00"))  # ValueError when it is not one
    return value


def _parse_big_int(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"Could not coerce value {value!r} to BigInt")
    int(value)  # ValueError when it is not a number
    return str(value)


def scalars() -> list[ScalarType]:
    """The bindables for every custom scalar of the SDL."""
    names = ("Base64String", "GitObjectID", "GitRefname", "GitSSHRemote", "GitTimestamp")
    out = [_text(n) for n in (*names, "HTML", "URI")]
    out.append(ScalarType("DateTime", value_parser=_parse_datetime))
    out.append(ScalarType("BigInt", value_parser=_parse_big_int))
    return out
