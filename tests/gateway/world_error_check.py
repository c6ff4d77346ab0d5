"""Run inside .venv-gateway (it needs mitmproxy): a fake that raises answers 500, no more.

Prints one JSON line for tests/gateway/test_failclosed.py to assert on.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mitmproxy.test import tflow

from fakes.core import build_world
from replay.gateway.addons import ServeWorld
from replay.gateway.config import GatewayConfig
from replay.gateway.gate import ROUTE, Gate
from replay.snapshot import load_snapshot


async def raises_at_once(scope: Any, receive: Any, send: Any) -> None:
    raise OverflowError("Python int too large to convert to SQLite INTEGER")


async def raises_after_answering(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 500, "headers": []})
    await send({"type": "http.response.body", "body": b"Internal Server Error"})
    raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")


def install_github_net(app: Any) -> Any:
    """``app`` behind the GitHub fake's own last-resort net, as ``fakes.github.install`` does."""
    from fakes.core.net import Net
    from fakes.github import errors

    return Net(app, "github", errors.not_found_response, errors.failure_response)


def main() -> None:
    snapshot = load_snapshot(Path(sys.argv[1]))
    world = build_world(snapshot, ())
    config = GatewayConfig(
        snapshot=snapshot.path,
        confdir=Path("/nonexistent"),
        state_file=Path("/nonexistent/state.json"),
    )
    netted = install_github_net(raises_at_once)
    answers = []
    for app in (raises_at_once, raises_after_answering, netted):
        gate = Gate(config, world.world, {"fake": app}, frozenset({"api.github.com"}))
        flow = tflow.tflow()
        flow.metadata[ROUTE] = "fake"
        asyncio.run(ServeWorld(gate).request(flow))  # type: ignore[arg-type]
        answers.append(
            {
                "status": flow.response.status_code if flow.response else None,
                "body": flow.response.get_text() if flow.response else None,
                "killed": flow.error is not None,
                "invalid": gate.invalid,
            }
        )
    with world.world.session() as s:
        events = [e.model_dump(mode="json") for e in world.world.events.read(s)]
    print(json.dumps({"answers": answers, "events": events}))


if __name__ == "__main__":
    main()
