"""The gate in front of a fake's app: never more than its limit at work, every request answered."""

from __future__ import annotations

import asyncio
from typing import Any

from fakes.core.gate import Gate


def test_at_most_limit_requests_are_inside_and_all_are_answered() -> None:
    inside = 0
    most = 0
    answered: list[int] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await asyncio.sleep(0)  # let the others try to come in
        await asyncio.sleep(0)
        inside -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    gate = Gate(app, limit=2)

    async def one(i: int) -> None:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answered.append(i)

        await gate({"type": "http"}, receive, send)

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(16)))

    asyncio.run(main())
    asyncio.run(main())  # a second event loop gets a semaphore of its own
    assert most == 2
    assert sorted(answered) == sorted(list(range(16)) * 2)
