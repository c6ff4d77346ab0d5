"""grade.json is typed and versioned: written and read back whole, another version refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.base.errors import InputError
from replay.base.outcomes import Outcome
from replay.grade.model import GRADE_VERSION, load_grade, parse_grade
from replay.results import GradeRow
from tests.grade.samples import grade

KEYS = [
    "schema",
    "run_id",
    "case_id",
    "attempt",
    "harness",
    "model",
    "image",
    "harness_image",
    "outcome",
    "reason",
    "tests",
    "world_errors",
    "side_effects",
    "interventions",
    "attempts",
    "tokens",
    "cost_usd",
    "model_wait_s",
    "wire",
    "harness_exit",
    "harness_claims",
    "stopped_by",
    "infra_errors",
    "seconds",
    "diff_bytes",
    "harness_egress",
]


def test_a_grade_round_trips_through_grade_json(tmp_path: Path) -> None:
    written = grade(cost_usd=0.0123, tests=None, outcome=Outcome.INFRA_FAIL)
    path = tmp_path / "grade.json"
    path.write_text(written.to_json())
    raw = json.loads(path.read_text())
    # The file keeps its keys, in the order readers of old runs know.
    assert list(raw) == KEYS
    assert raw["schema"] == GRADE_VERSION == 1 and raw["outcome"] == "infra_fail"
    assert raw["side_effects"]["rules"][0]["forbidden"] is True
    assert raw["wire"]["failed_attempts"] == {"http_5xx": 1}
    back = load_grade(path)
    assert back == written
    assert back.outcome is Outcome.INFRA_FAIL and not back.tests_resolved
    # A grade written before harnesses declared their own requests reads as listing none.
    del raw["harness_egress"]
    path.write_text(json.dumps(raw))
    assert load_grade(path) == written and written.harness_egress == []


def test_the_store_row_holds_the_whole_grade() -> None:
    g = grade()
    row = GradeRow.from_grade(g, fail_to_pass_total=2, pass_to_pass_total=1)
    assert (row.fail_to_pass_passed, row.pass_to_pass_passed, row.tests_resolved) == (0, 1, False)
    assert row.detail == json.loads(g.to_json())
    assert row.to_grade() == g


@pytest.mark.parametrize(
    ("schema", "words"), [(2, "format version 2"), (None, "no format version")]
)
def test_another_format_version_is_refused_clearly(
    tmp_path: Path, schema: int | None, words: str
) -> None:
    data = grade().dump()
    if schema is None:
        del data["schema"]
    else:
        data["schema"] = schema
    path = tmp_path / "grade.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_grade(path)
    assert err.value.field == "schema"
    assert words in str(err.value) and "reads version 1" in str(err.value)
    with pytest.raises(InputError, match=words):
        parse_grade(data, "results store: grade of run r1")


def test_an_unknown_field_or_outcome_is_an_input_error(tmp_path: Path) -> None:
    data = grade().dump()
    with pytest.raises(InputError, match="unknown field"):
        parse_grade({**data, "extra": 1}, tmp_path / "grade.json")
    with pytest.raises(InputError, match="outcome"):
        parse_grade({**data, "outcome": "great"}, tmp_path / "grade.json")
