"""Run inside .venv-gateway (it needs mitmproxy): the gateway's type check of requests and
responses accepts and refuses exactly what mitmproxy's own does, with the same message.

Prints one JSON line for tests/gateway/test_typecheck.py to assert on.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from mitmproxy import http
from mitmproxy.test import tutils
from mitmproxy.utils import typecheck

from replay.gateway.typecheck import check_message, checks_for, fast_message_typecheck

# A value of each kind a field could be given, right or wrong for it.
VALUES: list[Any] = [
    b"x",
    "x",
    0,
    True,
    1.5,
    None,
    http.Headers(),
    [(b"a", b"b")],
    bytearray(b"x"),
    object(),
]


def mitmproxys(data: Any) -> str | None:
    try:
        for field in dataclasses.fields(data):
            typecheck.check_option_type(field.name, getattr(data, field.name), field.type)
    except TypeError as exc:
        return str(exc)
    return None


def ours(data: Any) -> str | None:
    try:
        check_message(data)
    except TypeError as exc:
        return str(exc)
    return None


def main() -> dict[str, Any]:
    cases = 0
    differ: list[str] = []
    refused = 0
    for message in (tutils.treq(), tutils.tresp()):
        for field in dataclasses.fields(message.data):
            for value in VALUES:
                data = dataclasses.replace(message.data)  # checked: a valid copy
                object.__setattr__(data, field.name, value)
                theirs, mine = mitmproxys(data), ours(data)
                cases += 1
                refused += theirs is not None
                if theirs != mine:
                    where = f"{type(data).__name__}.{field.name}={value!r}"
                    differ.append(f"{where}: {theirs} / {mine}")
    fast_message_typecheck()
    try:
        http.Response(b"HTTP/1.1", "200", b"OK", http.Headers(), b"", None, 0.0, None)  # type: ignore[arg-type]
        installed_refuses = False
    except TypeError:
        installed_refuses = True
    built = http.Response(b"HTTP/1.1", 200, b"OK", http.Headers(), b"", None, 0, None)
    return {
        "cases": cases,
        "refused": refused,
        "differ": differ,
        "all_fast": [
            name
            for cls in (http.RequestData, http.ResponseData)
            for name, accepted, _ in checks_for(cls)
            if accepted is not None
        ],
        "installed_refuses": installed_refuses,
        "installed_accepts": built.status_code == 200,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
