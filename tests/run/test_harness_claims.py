"""A harness's own word never voids a run: only evidence the gateway holds does.

The agent shares the harness's container (and a candidate harness is itself under test): a
harness that exits with "transport failure" while the gateway saw a healthy wire used to make
the run ``infra_fail``, out of the quality figures. Now the run is graded on what it did and
the claim is kept in grade.json. End to end through the real gateway, sandbox and grader.
"""

from __future__ import annotations

from pathlib import Path

from replay.run.runner import RunOptions, run_case
from tests.run.conftest import CARET

LYING_HARNESS = """\
schema: 1
name: exits-with-transport
description: Claims a transport failure (exit 4) without calling the model at all.
provider: openai
command: [sh, -c, "exit 4"]
exit_codes:
  transport: 4
"""


def test_a_harness_claiming_a_transport_failure_the_gateway_never_saw_is_graded(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "exits-with-transport.yaml"
    spec.write_text(LYING_HARNESS)
    (run,) = run_case(
        CARET,
        RunOptions(
            harness=str(spec), stub="gold", out=tmp_path / "runs", db=str(tmp_path / "r.db")
        ),
    )
    assert run.grade.harness_exit == 4
    assert run.grade.wire.healthy and run.grade.wire.calls == 0
    assert run.outcome == "model_fail", run.reason
    assert "hidden tests not resolved" in run.reason
    assert run.grade.harness_claims == [
        "the harness reported a transport failure the gateway never saw"
    ]
    assert run.grade.infra_errors == []


def test_an_exit_status_the_spec_does_not_declare_is_no_claim(tmp_path: Path) -> None:
    spec = tmp_path / "exits-4-undeclared.yaml"
    spec.write_text(LYING_HARNESS.split("exit_codes:")[0])
    (run,) = run_case(
        CARET,
        RunOptions(
            harness=str(spec), stub="gold", out=tmp_path / "runs", db=str(tmp_path / "r.db")
        ),
    )
    assert run.grade.harness_exit == 4
    assert run.outcome == "model_fail", run.reason
    assert run.grade.harness_claims == []
