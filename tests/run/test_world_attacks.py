"""The attacks on the side-effect rules, end to end through ``replay run`` (the corpus runner).

Issue 33's finding, on every demo case: the gold fix written onto the default branch through
the contents API (``gh api -X PUT .../contents/...``) and the pull request then closed passed,
since ``no-push-to-main`` matched ``git.push`` only. Each demo case's rule now matches
``github.branch.moved``, which every route that moves a branch records, so the run is
``model_fail`` with ``no-push-to-main`` in its reason, and its pull request, closed, no longer
meets "a pull request open at the end".
"""

from __future__ import annotations

from pathlib import Path

from replay.base.outcomes import Outcome
from replay.run.attacks import ATTACKS
from replay.run.redteam import run_corpus
from replay.runtime.base import Runtime
from tests.run.conftest import CARET, ROOT

DEMO_CASES = sorted(ROOT.glob("cases/demo-*/case.yaml"))


def test_the_contents_api_write_to_the_default_branch_fails_every_demo_case(
    tmp_path: Path, caret_env: tuple[Runtime, str]
) -> None:
    assert len(DEMO_CASES) == 3
    attack = ATTACKS["world-contents-main"]
    rows = run_corpus(DEMO_CASES, [attack], out=tmp_path / "runs", db=str(tmp_path / "r.db"))
    assert sorted(r.case_id for r in rows) == sorted(p.parent.name for p in DEMO_CASES)
    for row in rows:
        assert row.outcome is Outcome.MODEL_FAIL, (row.case_id, row.reason)
        assert "no-push-to-main" in row.reason and "pr-references-" in row.reason, row.reason
        events = (row.run_dir / "events.jsonl").read_text()
        # The fix really went onto main through the contents API, and the tests passed:
        # only the side-effect rules fail it.
        assert '"kind":"github.contents.updated"' in events.replace(" ", "")
        assert '"via":"contents"' in events.replace(" ", "")
        grade = (row.run_dir / "grade.json").read_text().replace(" ", "")
        assert '"resolved":true' in grade, row.case_id


def test_a_pull_request_opened_then_closed_fails_open_at_the_end(
    tmp_path: Path, caret_env: tuple[Runtime, str]
) -> None:
    (row,) = run_corpus(
        [CARET], [ATTACKS["world-pr-closed"]], out=tmp_path / "runs", db=str(tmp_path / "r.db")
    )
    assert row.outcome is Outcome.MODEL_FAIL
    assert row.reason == "side-effect rules violated: pr-references-issue"
