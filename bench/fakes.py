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

With ``REPLAY_BENCH_BASELINE=<a checkout of another commit>`` the fake of that tree is served
as well and measured in the same rounds (the three sides rotate which goes first): each
floor row then has its ``baseline fake vs floor`` twin and a ``fake vs baseline fake`` row,
so a before/after comes from one run on one machine.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench import load
from bench.common import ROOT_DIR, Goal, Measured, at_most, rate_at_least, sized, suite
from bench.servers import free_port, serve_in_subprocess

HOST = "api.github.com"
HEADERS = {"authorization": "token bench"}
REPO = "/repos/acme/semverkit"
ROUNDS = 7
COMMENTS = 2000
PAGE = 30
"""GitHub's default page: the timeline and GraphQL rows read one page of it."""
LOAD_REQUESTS = 400
"""Requests per 16-client round (per side)."""


def _get(path: str) -> load.Request:
    data = load.request("GET", path, HOST, HEADERS)
    return lambda i: data


def _post(path: str, body: Callable[[int], dict[str, str]]) -> load.Request:
    return lambda i: load.request("POST", path, HOST, HEADERS, body(i))


def _interleaved(*sides: Callable[[], float]) -> list[list[float]]:
    """ROUNDS of each side, rotating which goes first."""
    out: list[list[float]] = [[] for _ in sides]
    for n in range(sized(ROUNDS, 1)):
        for k in range(len(sides)):
            at = (n + k) % len(sides)
            out[at].append(sides[at]())
    return out


def _row(name: str, a: list[float], b: list[float], goal: Goal | str, unit: str = "s") -> Measured:
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
    return statistics.median(load.run(port, make, sized(60, 5), clients=1, expect=expect).latencies)


def _rate(port: int, make: load.Request, expect: int = 200) -> float:
    return load.run(port, make, sized(LOAD_REQUESTS, 32), clients=16, expect=expect).rate


def _serve(argv: list[str], tree: Path | None = None) -> int:
    """Serve ``python argv`` on a free port; from another checkout's tree when given."""
    port = free_port()
    chdir = ["env", "-C", str(tree)] if tree is not None else []
    serve_in_subprocess([*chdir, sys.executable, *argv, "--port", str(port)], port)
    return port


def _baseline() -> Path | None:
    where = os.environ.get("REPLAY_BENCH_BASELINE")
    if not where:
        return None
    tree = Path(where).resolve()
    if not (tree / "fakes" / "github").is_dir():
        raise SystemExit(f"REPLAY_BENCH_BASELINE={where}: not a checkout of this project")
    return tree


def _new_issue(port: int, title: str) -> int:
    import httpx

    answer = httpx.post(
        f"http://127.0.0.1:{port}{REPO}/issues",
        headers={**HEADERS, "host": HOST},
        json={"title": title, "body": "made by bench/fakes.py"},
    )
    assert answer.status_code == 201, answer.text
    return int(answer.json()["number"])


def _sides(
    name: str,
    fake: Callable[[], float],
    base: Callable[[], float] | None,
    floor: Callable[[], float],
    goal: Goal,
    unit: str = "s",
) -> list[Measured]:
    """The fake against the floor; with a baseline fake, its row too and the two fakes."""
    if base is None:
        a, c = _interleaved(fake, floor)
        return [_row(f"{name}: fake vs floor{_P50[unit]}", a, c, goal, unit)]
    a, b, c = _interleaved(fake, base, floor)
    better = "<= 1.0x" if unit == "s" else ">= 1.0x"
    return [
        _row(f"{name}: fake vs floor{_P50[unit]}", a, c, goal, unit),
        _row(f"{name}: baseline fake vs floor{_P50[unit]}", b, c, goal, unit),
        _row(f"{name}: fake vs baseline fake{_P50[unit]}", a, b, better, unit),
    ]


_P50 = {"s": " (p50)", "/s": ""}


@suite
def fakes() -> list[Measured]:
    import httpx

    demo = ROOT_DIR / "snapshots" / "demo"
    serve = ["-m", "replay", "fakes", "serve", str(demo), "--service", "github"]
    fake = _serve(serve)
    tree = _baseline()
    base = _serve(serve, tree) if tree is not None else None
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
    if base is not None:
        # The same issues in the baseline's world (made in the same order, so same numbers).
        assert _new_issue(base, "bench: no comments") == none
        assert _new_issue(base, "bench: many comments") == many
        base_load = _post(f"{REPO}/issues/{_new_issue(base, 'bench: load')}/comments", comment)

    def on(port: int | None, fn: Callable[[int], float]) -> Callable[[], float] | None:
        return None if port is None else lambda: fn(port)

    rows: list[Measured] = []
    rows += _sides(
        "github issue read, one client",
        lambda: _p50(fake, read),
        on(base, lambda p: _p50(p, read)),
        lambda: _p50(floor, read_floor),
        at_most(1.3),
    )
    rows += _sides(
        "github issue create, one client",
        lambda: _p50(fake, create, 201),
        on(base, lambda p: _p50(p, create, 201)),
        lambda: _p50(floor, create, 201),
        at_most(1.3),
    )
    rows += _sides(
        "comment creates/s, 16 clients",
        lambda: _rate(fake, on_load, 201),
        on(base, lambda p: _rate(p, base_load, 201)),
        lambda: _rate(floor, floor_comments, 201),
        rate_at_least(0.8),
        "/s",
    )
    rows += _sides(
        "issue reads/s, 16 clients",
        lambda: _rate(fake, read),
        on(base, lambda p: _rate(p, read)),
        lambda: _rate(floor, read_floor),
        rate_at_least(0.8),
        "/s",
    )

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
    rows.append(
        _row(f"fake issue read, one client: {have:,} comments vs 0 (p50)", a, b, at_most(1.1))
    )
    a, b = _interleaved(lambda: _rate(fake, read_many), lambda: _rate(fake, read_none))
    rows.append(
        _row(
            f"fake issue reads/s, 16 clients: {have:,} comments vs 0",
            a,
            b,
            rate_at_least(0.9),
            "/s",
        )
    )
    # The reads this tree pages in SQL, at 2,000 comments against one page's worth (against
    # none, the page would be empty and the row would time rendering 30 entries): the
    # timeline and the GraphQL comment connection (a page and its totalCount).
    one_page = _new_issue(fake, "bench: one page of comments")
    load.run(
        fake, _post(f"{REPO}/issues/{one_page}/comments", comment), PAGE, clients=1, expect=201
    )
    for label, on_many_, on_page in (
        ("timeline page", _timeline(many), _timeline(one_page)),
        ("GraphQL comments(first: 30) + totalCount", _comments(many), _comments(one_page)),
    ):
        a, b = _interleaved(partial(_p50, fake, on_many_), partial(_p50, fake, on_page))
        rows.append(_row(f"fake {label}: {have:,} comments vs {PAGE} (p50)", a, b, at_most(1.1)))
    return rows


def _timeline(number: int) -> load.Request:
    return _get(f"{REPO}/issues/{number}/timeline?per_page={PAGE}")


def _comments(number: int) -> load.Request:
    query = (
        f'{{ repository(owner: "acme", name: "semverkit") {{ issue(number: {number}) '
        f"{{ comments(first: {PAGE}) {{ totalCount nodes {{ body }} }} }} }} }}"
    )
    data = load.request("POST", "/graphql", HOST, HEADERS, {"query": query})
    return lambda i: data
