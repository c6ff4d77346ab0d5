"""What grading one run costs, counted in Docker operations rather than timed, and what the
grading container made ahead of the diff can see. Against the real Docker engine, on the
demo case's environment image.

The grading container is made and readied (the grader's files in, the base commit checked
out and listed) before the agent's diff exists; the diff then goes in on the standard input
of the one exec that applies and lists it, whose standard output is the listings; the case's
test infrastructure goes back by one exec (the paths to put back on its standard input), and
each repeat of the test command is one exec and one copy-out (its report and the guard's
record together).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from docker.api.client import APIClient  # type: ignore[import-untyped]

from replay.base.case import load_case
from replay.grade.hidden_tests import GradingBox
from replay.runtime.base import Runtime
from replay.runtime.docker import DockerContainer, DockerRuntime
from tests.run.conftest import CARET


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Calls of the container operations and of the Docker API, by name, as they happen."""
    calls: Counter[str] = Counter()

    def count(cls: type, name: str) -> None:
        real: Callable[..., Any] = getattr(cls, name)

        def wrapper(self: object, *args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, wrapper)

    for name in ("exec", "copy_in", "copy_out", "remove"):
        count(DockerContainer, name)
    count(DockerRuntime, "create")
    send = APIClient.send

    def api(self: APIClient, request: Any, **kwargs: Any) -> Any:
        path = request.path_url.split("?")[0]
        if path.endswith("/archive"):
            calls[f"api {request.method} archive"] += 1
        elif path.endswith("/exec"):
            calls["api exec"] += 1
        return send(self, request, **kwargs)

    monkeypatch.setattr(APIClient, "send", api)
    yield calls


def test_a_grading_is_one_exec_per_script_and_one_copy_out_per_repeat(
    caret_env: tuple[Runtime, str], counted: Counter[str]
) -> None:
    runtime, image = caret_env
    case = load_case(CARET)
    box = GradingBox(runtime, image, case, f"ops-{uuid.uuid4().hex[:8]}")
    try:
        # What the preparation costs is counted apart (a run has it done while the harness
        # runs, by prepare_in_background: the same steps in a thread).
        box.prepare()
        assert counted == Counter(
            {"create": 1, "copy_in": 1, "exec": 1, "api PUT archive": 1, "api exec": 1}
        )
        counted.clear()
        grading = box.grade(case.gold.patch.read_text())
        box.close()
    finally:
        box.close()
    assert grading.verdict.resolved and grading.applied == "apply"
    assert case.hidden_tests.repeat == 1
    assert counted == Counter(
        {
            # apply and list (the diff in, the listings out); restore; the test command
            "exec": 3,
            "api exec": 3,
            # the report and the guard's record
            "copy_out": 1,
            "api GET archive": 1,
            "remove": 1,
        }
    )


def test_the_grading_container_made_ahead_shares_nothing_with_anyone(
    caret_env: tuple[Runtime, str],
) -> None:
    runtime, image = caret_env
    assert isinstance(runtime, DockerRuntime)
    case = load_case(CARET)
    with GradingBox(runtime, image, case, f"ops-{uuid.uuid4().hex[:8]}") as box:
        box.prepare()
        assert box.container is not None
        attrs = runtime.client.api.inspect_container(box.container.id)
        assert attrs["HostConfig"]["NetworkMode"] == "none"
        assert not attrs["HostConfig"]["Binds"], "no host path is mounted"
        for mount in attrs["Mounts"]:
            # An anonymous volume the image declares: made for this container alone.
            assert mount["Type"] == "volume", mount
            users = runtime.client.containers.list(all=True, filters={"volume": mount["Name"]})
            assert [c.id for c in users] == [box.container.id], mount
        assert attrs["HostConfig"]["VolumesFrom"] in (None, [])
        assert attrs["HostConfig"]["PidMode"] in ("", "private")
        assert attrs["HostConfig"]["IpcMode"] in ("private", "none", "shareable")
        assert attrs["Config"]["Image"] == image
        assert attrs["Config"]["Labels"]["replay.role"] == "grade"
        # Nothing of the agent's is in it yet: the tree is the base commit, clean.
        done = box.container.exec(
            ["bash", "-c", "git status --porcelain --ignored=no; git rev-parse HEAD"],
            workdir=case.environment.workdir,
        )
        assert done.ok and done.out.split() == [case.repository.base_commit]
        cid = box.container.id
    gone = runtime.client.containers.list(all=True, filters={"id": cid})
    assert gone == [], "closing the box removes its container"
