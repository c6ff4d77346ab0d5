"""A warm world reused by a batch: a reset between runs leaves nothing of the previous run.

Run 1 changes the world (an issue, a comment, a Slack message) and makes model calls; after
the reset, run 2 starts from the snapshot at T, and each run's files (``events.db``, the
gateway's log) hold its own traffic and nothing else.
"""

from __future__ import annotations

import http.server
import json
import os
import sqlite3
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from replay.world.warm import WarmWorld, keep_warm, warm_pool

DEMO = Path(__file__).resolve().parents[2] / "snapshots" / "demo"
REPO = "https://api.github.com/repos/acme/semverkit"


class _Model(http.server.BaseHTTPRequestHandler):
    """A provider-compatible chat completions endpoint: one answer, with usage."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body.get("model", "gpt-4.1"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def model() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _client(state: dict[str, Any]) -> httpx.Client:
    context = ssl.create_default_context(cafile=state["ca_bundle"])
    return httpx.Client(proxy=state["proxy"], verify=context, timeout=30)


def _work(state: dict[str, Any], tag: str, calls: int) -> None:
    """A run's traffic: an issue, a comment on it, a Slack message, ``calls`` model calls."""
    env = state["env"]
    gh = {"authorization": f"token {env['GH_TOKEN']}"}
    with _client(state) as client:
        made = client.post(f"{REPO}/issues", json={"title": f"issue {tag}"}, headers=gh)
        assert made.status_code == 201, made.text
        number = made.json()["number"]
        said = client.post(
            f"{REPO}/issues/{number}/comments", json={"body": f"comment {tag}"}, headers=gh
        )
        assert said.status_code == 201, said.text
        posted = client.post(
            "https://slack.com/api/chat.postMessage",
            json={"channel": "C04QL1ENG", "text": f"message {tag}"},
            headers={"authorization": f"Bearer {env['SLACK_BOT_TOKEN']}"},
        )
        assert posted.json()["ok"], posted.text
        for i in range(calls):
            answer = client.post(
                "https://api.openai.com/v1/chat/completions",
                json={"model": "gpt-4.1", "messages": [{"role": "user", "content": f"{tag} {i}"}]},
                headers={"authorization": f"Bearer {env['OPENAI_API_KEY']}"},
            )
            assert answer.status_code == 200, answer.text


def _logged(db: Path) -> list[dict[str, Any]]:
    """The event log in a run's ``events.db`` (the copy the runner reads)."""
    with sqlite3.connect(db) as conn:
        (table,) = [
            r[0]
            for r in conn.execute("select name from sqlite_master where type='table'")
            if "event" in r[0]
        ][:1]
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(f"select * from {table} order by seq")]


def test_a_reset_warm_world_holds_nothing_of_the_previous_run(tmp_path: Path, model: str) -> None:
    runs = [tmp_path / f"run{i}" for i in (1, 2)]
    for run in runs:
        run.mkdir()
    with WarmWorld(DEMO, tmp_path / "world", "--model-upstream", model) as warm:
        with warm.run(runs[0] / "gateway", runs[0] / "events.db") as world:
            at_t = world.dump()
            assert world.events() == []
            _work(world.state, "one", calls=2)
            assert world.dump() != at_t
        with warm.run(runs[1] / "gateway", runs[1] / "events.db") as world:
            # The same process, back at the snapshot: state, event log and model calls.
            assert (warm.starts, warm.resets) == (1, 1)
            assert world.dump() == at_t
            assert world.events() == []
            _work(world.state, "two", calls=1)
            second = world.events()
    one, two = (_logged(run / "events.db") for run in runs)
    kinds = [[e["kind"] for e in log] for log in (one, two)]
    assert kinds[0].count("model.call") == 2 and kinds[1].count("model.call") == 1
    # Run 2's file is its own log, nothing of run 1's (its issue, comment, message, calls).
    assert len(two) == len(second)
    assert "one" not in json.dumps([e["data"] for e in two])
    assert "one" in json.dumps([e["data"] for e in one])
    for run in runs:
        log = (run / "gateway" / "gateway.log").read_text()
        assert log.startswith("# world at T"), log[:200]
        assert (run / "gateway" / "conf" / "mitmproxy-ca-cert.pem").exists()


def test_a_world_that_keeps_a_connection_is_replaced(tmp_path: Path) -> None:
    """A connection of the previous run still open: never reset under it, start afresh."""
    with WarmWorld(DEMO, tmp_path / "world", quiet_timeout=0.5) as warm:
        with warm.run(tmp_path / "g1", tmp_path / "e1.db") as world:
            client = _client(world.state)
            assert client.get(f"{REPO}/issues/7").status_code in (200, 401, 404)
            # The client keeps its connection to the proxy open past the run's end.
        with warm.run(tmp_path / "g2", tmp_path / "e2.db") as world:
            assert (warm.starts, warm.resets) == (2, 0)
            assert world.events() == []
        client.close()


def test_a_pool_keeps_one_world_per_snapshot_and_arguments(tmp_path: Path) -> None:
    entered: list[str] = []

    @contextmanager
    def resource() -> Iterator[str]:
        entered.append("in")
        yield "the resource"
        entered.append("out")

    with keep_warm() as pool:
        assert warm_pool() is pool
        first = pool.world(DEMO, "--service", "github")
        assert pool.world(DEMO, "--service", "github") is first
        with first.run(tmp_path / "g1", tmp_path / "e1.db") as world:
            pid = int(world.state["pid"])
        # Other arguments: another world, and the first one is stopped.
        second = pool.world(DEMO, "--service", "slack")
        assert second is not first
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert pool.shared("r", resource) == pool.shared("r", resource) == "the resource"
        assert entered == ["in"]
    assert entered == ["in", "out"] and warm_pool() is None
