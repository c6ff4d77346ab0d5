"""Run inside .venv-gateway (it needs mitmproxy): an addon that raises must kill its flow.

Prints one JSON line for tests/gateway/test_failclosed.py to assert on.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mitmproxy.test import tflow

from fakes.core import build_world
from replay.gateway.addons import addons
from replay.gateway.config import GatewayConfig
from replay.gateway.gate import Gate, Guarded
from replay.snapshot import load_snapshot

KEY = "sk-real-secret-in-a-crash-0123456789"


class Quoting(Guarded):
    def request(self, flow: object) -> None:
        raise RuntimeError(f"provider said: invalid key {KEY}")


class Broken(Guarded):
    def request(self, flow: object) -> None:
        raise RuntimeError("bug in an addon")

    async def response(self, flow: object) -> None:
        raise KeyError("async bug")


def main() -> None:
    snapshot = load_snapshot(Path(sys.argv[1]))
    world = build_world(snapshot, ())
    config = GatewayConfig(
        snapshot=snapshot.path,
        confdir=Path("/nonexistent"),
        state_file=Path("/nonexistent/state.json"),
    )
    gate = Gate(config, world.world, {}, frozenset())
    addon = Broken(gate)
    live = tflow.tflow()
    addon.request(live)  # type: ignore[arg-type]
    answered = tflow.tflow(resp=True)
    asyncio.run(addon.response(answered))  # type: ignore[arg-type]
    with world.world.session() as s:
        events = [e.model_dump(mode="json") for e in world.world.events.read(s)]
    # A crash whose message quotes the runner's key: the record of it must not hold the key.
    quoted = build_world(snapshot, ())
    gate2 = Gate(config, quoted.world, {}, frozenset())
    addons(gate2, {"api.openai.com": ("authorization", f"Bearer {KEY}")})
    Quoting(gate2).request(tflow.tflow())  # type: ignore[arg-type]
    with quoted.world.session() as s:
        crash = [e.model_dump(mode="json") for e in quoted.world.events.read(s)]
    print(
        json.dumps(
            {
                "live_killed": live.error is not None and live.error.msg == "Connection killed.",
                "answered_killed": answered.error is not None,
                "invalid": gate.invalid,
                "events": [(e["kind"], e["object"]["id"]) for e in events],
                "crash_records": len(crash),
                "key_in_crash_record": KEY in json.dumps(crash) or KEY in str(gate2.invalid),
            }
        )
    )


if __name__ == "__main__":
    main()
