"""The GitHub fake's cost per request, against a bare FastAPI endpoint on the same server stack.

Both are served by uvicorn in processes of their own and called over keep-alive HTTP, so the
ratio is the fake's own work (auth, SQLAlchemy, rendering, the event log) per request.
"""

from __future__ import annotations

import itertools
import sys

import httpx
from fastapi import FastAPI

from bench.common import ROOT_DIR, Pair, suite
from bench.servers import free_port, serve_in_subprocess

HEADERS = {"host": "api.github.com", "authorization": "token bench"}


def bare_app() -> FastAPI:
    app = FastAPI()
    issue = {"number": 7, "title": "^0.2.3 matches 0.3.0", "state": "open", "user": {"login": "x"}}

    @app.get("/repos/{owner}/{repo}/issues/{number}")
    def get(owner: str, repo: str, number: int) -> dict[str, object]:
        return issue

    @app.post("/repos/{owner}/{repo}/issues", status_code=201)
    def create(owner: str, repo: str, body: dict[str, object]) -> dict[str, object]:
        return {**issue, "title": body.get("title")}

    return app


@suite
def fakes() -> list[Pair]:
    fake_port, bare_port = free_port(), free_port()
    demo = ROOT_DIR / "snapshots" / "demo"
    serve_in_subprocess(
        [
            sys.executable,
            "-m",
            "replay",
            "fakes",
            "serve",
            str(demo),
            "--port",
            str(fake_port),
            "--service",
            "github",
        ],
        fake_port,
    )
    serve_in_subprocess(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "bench.fakes:bare_app",
            "--port",
            str(bare_port),
            "--log-level",
            "warning",
        ],
        bare_port,
    )
    fake = httpx.Client(base_url=f"http://127.0.0.1:{fake_port}", headers=HEADERS)
    bare = httpx.Client(base_url=f"http://127.0.0.1:{bare_port}", headers=HEADERS)
    counter = itertools.count()
    path = "/repos/acme/semverkit/issues"

    def create(client: httpx.Client) -> None:
        body = {"title": f"bench {next(counter)}", "body": "made by bench/fakes.py"}
        assert client.post(path, json=body).status_code == 201

    def read(client: httpx.Client) -> None:
        assert client.get(f"{path}/7").status_code == 200

    return [
        Pair(
            "github issue read: fake vs bare FastAPI",
            lambda: read(fake),
            lambda: read(bare),
            rounds=200,
        ),
        Pair(
            "github issue create: fake vs bare FastAPI",
            lambda: create(fake),
            lambda: create(bare),
            rounds=200,
        ),
    ]
