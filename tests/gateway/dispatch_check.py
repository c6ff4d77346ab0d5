"""Run inside .venv-gateway (it needs mitmproxy): the gateway's addon dispatch makes the same
calls, in the same order, as mitmproxy's own, and follows the chain as it changes.

Prints one JSON line for tests/gateway/test_dispatch.py to assert on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from mitmproxy import exceptions, options
from mitmproxy.addonmanager import AddonManager
from mitmproxy.http import HTTPFlow
from mitmproxy.master import Master
from mitmproxy.proxy.layers.http import HttpErrorHook, HttpRequestHook, HttpResponseHook
from mitmproxy.test import tflow

from replay.gateway.dispatch import Dispatch, GatewayMaster
from replay.gateway.proxy import _master

calls: list[str] = []


class Recorder:
    def __init__(self, name: str) -> None:
        self.name = name


class Both(Recorder):
    def request(self, flow: HTTPFlow) -> None:
        calls.append(f"{self.name}.request")

    async def response(self, flow: HTTPFlow) -> None:
        await asyncio.sleep(0)
        calls.append(f"{self.name}.response")


class Parent(Recorder):
    """No hook of its own; a sub-addon has one."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.addons = [Both(f"{name}/child")]


class Raises(Recorder):
    def request(self, flow: HTTPFlow) -> None:
        calls.append(f"{self.name}.request")
        raise RuntimeError("an addon's bug")


class Halts(Recorder):
    def response(self, flow: HTTPFlow) -> None:
        calls.append(f"{self.name}.response")
        raise exceptions.AddonHalt()


class Updates(Recorder):
    def update(self, flows: list[HTTPFlow]) -> None:
        calls.append(f"{self.name}.update")


async def play(master: Master) -> list[str]:
    """The same story on either manager: events, then the chain changes, then events."""
    calls.clear()
    manager = master.addons
    first, parent = Both("first"), Parent("parent")
    manager.add(first, Raises("raises"), parent, Updates("updates"))
    flow = tflow.tflow(resp=True)
    for event in (HttpRequestHook(flow), HttpResponseHook(flow)):
        await manager.handle_lifecycle(event)
    await manager.trigger_event(HttpErrorHook(flow))  # nobody's
    calls.append("-- add late, halts")
    manager.add(Both("late"), Halts("halts"), Both("after-halt"))
    await manager.handle_lifecycle(HttpRequestHook(flow))
    await manager.handle_lifecycle(HttpResponseHook(flow))
    calls.append("-- remove first and parent")
    manager.remove(first)
    manager.remove(parent)
    await manager.handle_lifecycle(HttpRequestHook(flow))
    calls.append("-- clear")
    manager.clear()
    await manager.handle_lifecycle(HttpRequestHook(flow))
    return list(calls)


async def main() -> dict[str, Any]:
    logging.disable(logging.CRITICAL)  # the raising addon's error log
    theirs = await play(Master(options.Options()))
    ours_master = GatewayMaster(options.Options())
    ours = await play(ours_master)
    gateway = _master(options.Options())
    return {
        "theirs": theirs,
        "ours": ours,
        "ours_is_dispatch": isinstance(ours_master.addons, Dispatch),
        "plain_is_dispatch": isinstance(Master(options.Options()).addons, Dispatch),
        "gateway_manager": type(gateway.addons).__name__,
        "gateway_addons": [type(a).__name__ for a in gateway.addons.chain],
        "is_addon_manager": isinstance(gateway.addons, AddonManager),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
