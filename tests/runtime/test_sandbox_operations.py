"""What starting and closing a sandbox costs, counted in Docker API calls rather than timed
(a count does not vary with the machine's load). Against the real Docker engine.

A start: the image looked up, three bounded volumes made, the keeper and the container each
created (and inspected) and started, the volumes seeded by one exec in the keeper, the
container's cgroups found by one inspection, and its readiness awaited on one followed logs
stream (never polled). A close: the two containers and the three volumes removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker.api.client import APIClient  # type: ignore[import-untyped]

from replay.runtime import Runtime
from tests.runtime.conftest import sandbox


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """The Docker API calls made, by method and kind of resource (``POST volumes``...)."""
    calls: Counter[str] = Counter()
    send = APIClient.send

    def counted(self: APIClient, request: Any, **kwargs: Any) -> Any:
        parts = request.path_url.split("?")[0].split("/")[2:]  # past the API version
        kind = parts[0]
        if kind in ("containers", "exec") and (len(parts) > 2 or parts[-1] == "create"):
            kind += "/" + parts[-1]  # containers/create, containers/start, exec/json...
        calls[f"{request.method} {kind}"] += 1
        return send(self, request, **kwargs)

    monkeypatch.setattr(APIClient, "send", counted)
    yield calls


def test_a_sandbox_starts_in_sixteen_calls_and_closes_in_five(
    runtime: Runtime, base_image: str, gateway: dict[str, Any], run_root: Path, api: Counter[str]
) -> None:
    for _ in range(2):  # the same both times: nothing depends on how fast the engine is
        api.clear()
        box = sandbox(runtime, gateway, base_image).start()
        try:
            assert api == Counter(
                {
                    "GET images": 1,
                    "POST volumes": 3,
                    "POST containers/create": 2,
                    "GET containers/json": 4,
                    "POST containers/start": 2,
                    "POST containers/exec": 1,
                    "POST exec/start": 1,
                    "GET exec/json": 1,
                    "GET containers/logs": 1,
                }
            )
            api.clear()
        finally:
            box.close()
        assert api == Counter({"DELETE containers": 2, "DELETE volumes": 3})


def test_a_sandbox_closed_in_the_background_is_cut_off_before_it_returns(
    runtime: Runtime, base_image: str, gateway: dict[str, Any], run_root: Path, api: Counter[str]
) -> None:
    """Its processes killed and its bridge gone when the call returns (nothing of it reaches
    the world after), the rest removed by the thread: one kill more than a close."""
    box = sandbox(runtime, gateway, base_image).start()
    container, bridge = box.container, box.bridge
    assert container is not None and bridge is not None
    api.clear()
    removal = box.close_in_background()
    try:
        assert box.bridge is None and not bridge.path.exists()
        assert container.status() in ("exited", "removing", "removed")
    finally:
        removal.join()
    assert container.status() == "removed"
    api.pop("GET containers/json", None)  # the status checks above
    assert api == Counter({"POST containers/kill": 1, "DELETE containers": 2, "DELETE volumes": 3})
