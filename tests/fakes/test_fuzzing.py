"""The fuzz driver itself (tests/fakes/fuzzing.py) sees a crash: a toy app with a bug behind
one parameter, wrapped in the same net the fakes use, gets server errors reported."""

from __future__ import annotations

from typing import Any

import schemathesis
from fastapi import FastAPI
from starlette.responses import JSONResponse

from fakes.core.net import Net
from tests.fakes.fuzzing import Tally, caught, fuzz, fuzz_variables
from tests.serving import serving


def toy() -> Net:
    app = FastAPI()

    @app.get("/items/{n}")
    def item(n: int) -> dict[str, int]:
        if n > 10:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return {"n": n}

    @app.post("/graphql")
    def graphql(payload: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("a resolver bug")

    def answer(status: int) -> Any:
        return lambda scope: JSONResponse({"message": str(status)}, status_code=status)

    return Net(app, "toy", answer(404), answer(500))


def judge(status: int, body: Any) -> str | None:
    return "server error" if status >= 500 else None


def test_the_driver_reports_a_crash_behind_a_parameter() -> None:
    net = toy()
    doc = net.app.openapi()  # type: ignore[attr-defined]
    doc["paths"] = {"/items/{n}": doc["paths"]["/items/{n}"]}
    with serving(net) as url:
        tally = Tally("toy")
        fuzz(tally, schemathesis.openapi.from_dict(doc), url, judge, headers={}, examples=20)
        caught(net, tally)
    assert tally.operations == 1 and tally.examples == 20
    assert any("GET /items/" in e and "-> 500: server error" in e for e in tally.errors)
    assert any(
        e.startswith("caught by the net: GET") and "OverflowError" in e for e in tally.errors
    )


def test_the_variables_driver_reports_a_crash() -> None:
    net = toy()
    with serving(net) as url:
        tally = Tally("toy graphql")
        sdl = "type Query { item(n: Int!, after: String): Int }"
        fuzz_variables(tally, sdl, f"{url}/graphql", judge, headers={}, examples=5)
        caught(net, tally)
    assert tally.operations == 1 and tally.examples == 5
    assert len([e for e in tally.errors if "query item (variables) -> 500" in e]) == 5
