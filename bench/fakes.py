"""The GitHub fake against its floor: a bare FastAPI + SQLAlchemy + SQLite (WAL) app doing the
same reads and inserts (:mod:`bench.floor`), both served by uvicorn in processes of their own,
measured interleaved in one run; and the fake's issue read at 2,000 comments against 0.

Rows (issue 19's goals beside each):
- one client, keep-alive: p50 latency of an issue read and of an issue create;
- 16 clients (:mod:`bench.load`): comment creates/s and issue reads/s;
- the fake alone: an issue read with 2,000 comments against one with none, at one client
  (latency) and at 16 (reads/s); the two issues are made alike by the benchmark.

Each figure is the median over rounds that alternate which side goes first; the spread of
the ratio over the rounds is printed after the goal.
"""

from __future__ import annotations

import itertools
import statistics
import sys
from collections.abc import Callable

from bench import load
from bench.common import ROOT_DIR, Measured, suite
from bench.servers import free_port, serve_in_subprocess

HOST = "api.github.com"
HEADERS = {"authorization": "token bench"}
REPO = "/repos/acme/semverkit"
ROUNDS = 7
COMMENTS = 2000
LOAD_REQUESTS = 400
"""Requests per 16-client round (per side)."""


def _get(path: str) -> load.Request:
    data = load.request("GET", path, HOST, HEADERS)
    return lambda i: data


def _post(path: str, body: Callable[[int], dict[str, str]]) -> load.Request:
    return lambda i: load.request("POST", path, HOST, HEADERS, body(i))


def _interleaved(
    fake: Callable[[], float], floor: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """ROUNDS of each, alternating which goes first."""
    a: list[float] = []
    b: list[float] = []
    for n in range(ROUNDS):
        order = ((fake, a), (floor, b)) if n % 2 == 0 else ((floor, b), (fake, a))
        for fn, sink in order:
            sink.append(fn())
    return a, b


def _row(name: str, a: list[float], b: list[float], goal: str, unit: str = "s") -> Measured:
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return Measured(
        name,
        statistics.median(a),
        statistics.median(b),
        goal=goal,
        unit=unit,
        spread=f"rounds {min(ratios):.2f}-{max(ratios):.2f}x",
    )


def _p50(port: int, make: load.Request, expect: int = 200) -> float:
    return statistics.median(load.run(port, make, 60, clients=1, expect=expect).latencies)


def _rate(port: int, make: load.Request, expect: int = 200) -> float:
    return load.run(port, make, LOAD_REQUESTS, clients=16, expect=expect).rate


def _serve(argv: list[str]) -> int:
    port = free_port()
    serve_in_subprocess([sys.executable, *argv, "--port", str(port)], port)
    return port


def _new_issue(port: int, title: str) -> int:
    import httpx

    answer = httpx.post(
        f"http://127.0.0.1:{port}{REPO}/issues",
        headers={**HEADERS, "host": HOST},
        json={"title": title, "body": "made by bench/fakes.py"},
    )
    assert answer.status_code == 201, answer.text
    return int(answer.json()["number"])


@suite
def fakes() -> list[Measured]:
    import httpx

    demo = ROOT_DIR / "snapshots" / "demo"
    fake = _serve(["-m", "replay", "fakes", "serve", str(demo), "--service", "github"])
    floor = _serve(["-m", "uvicorn", "--factory", "bench.floor:app", "--log-level", "warning"])
    counter = itertools.count()

    def title(i: int) -> dict[str, str]:
        return {"title": f"bench {next(counter)}", "body": "made by bench/fakes.py"}

    def comment(i: int) -> dict[str, str]:
        return {"body": f"bench comment {next(counter)}"}

    create = _post(f"{REPO}/issues", title)
    # Two issues alike but for their comments (and like the floor's: no labels, assignees).
    none = _new_issue(fake, "bench: no comments")
    read, read_floor = _get(f"{REPO}/issues/{none}"), _get(f"{REPO}/issues/10")
    many = _new_issue(fake, "bench: many comments")
    on_many = _post(f"{REPO}/issues/{many}/comments", comment)
    on_load = _post(f"{REPO}/issues/{_new_issue(fake, 'bench: load')}/comments", comment)
    floor_comments = _post(f"{REPO}/issues/15/comments", comment)

    rows: list[Measured] = []
    a, b = _interleaved(lambda: _p50(fake, read), lambda: _p50(floor, read_floor))
    rows.append(_row("github issue read, one client: fake vs floor (p50)", a, b, "<= 1.3x"))
    a, b = _interleaved(lambda: _p50(fake, create, 201), lambda: _p50(floor, create, 201))
    rows.append(_row("github issue create, one client: fake vs floor (p50)", a, b, "<= 1.3x"))
    a, b = _interleaved(
        lambda: _rate(fake, on_load, 201), lambda: _rate(floor, floor_comments, 201)
    )
    rows.append(_row("comment creates/s, 16 clients: fake vs floor", a, b, ">= 0.8x", "/s"))
    a, b = _interleaved(lambda: _rate(fake, read), lambda: _rate(floor, read_floor))
    rows.append(_row("issue reads/s, 16 clients: fake vs floor", a, b, ">= 0.8x", "/s"))

    # Give the fake's "many" issue exactly COMMENTS comments, and check it says so.
    url = f"http://127.0.0.1:{fake}{REPO}/issues/{many}"
    have = int(httpx.get(url, headers={**HEADERS, "host": HOST}).json()["comments"])
    if have < COMMENTS:
        load.run(fake, on_many, COMMENTS - have, clients=16, expect=201)
    have = int(httpx.get(url, headers={**HEADERS, "host": HOST}).json()["comments"])
    assert have == COMMENTS, have
    read_many = _get(f"{REPO}/issues/{many}")
    read_none = _get(f"{REPO}/issues/{none}")
    a, b = _interleaved(lambda: _p50(fake, read_many), lambda: _p50(fake, read_none))
    rows.append(_row(f"fake issue read, one client: {have:,} comments vs 0 (p50)", a, b, "<= 1.1x"))
    a, b = _interleaved(lambda: _rate(fake, read_many), lambda: _rate(fake, read_none))
    rows.append(
        _row(f"fake issue reads/s, 16 clients: {have:,} comments vs 0", a, b, ">= 0.9x", "/s")
    )
    return rows
