"""The case format: every kind of bad input gives one line, exit status 2, nothing written."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from replay.base.case import Case, EndStateRule, SideEffectRule, load_case
from replay.base.endstate import OBJECTS
from replay.base.errors import CaseError
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.event_helpers import event


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        digest.update(str(p.relative_to(root)).encode())
        if p.is_file():
            digest.update(p.read_bytes())
    return digest.hexdigest()


def edit(case_file: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(case_file.read_text())
    change(data)
    case_file.write_text(yaml.safe_dump(data, sort_keys=False))


def test_valid_case_passes(capsys, tiny_case: Path) -> None:
    result = run_cli(capsys, "case", "validate", str(tiny_case))
    assert result.code == 0, result.err
    assert "gold patch applies at the base commit" in result.out
    assert "2 side-effect rule(s): every kind and field is one the world records" in result.out
    assert "1 FAIL_TO_PASS and 1 PASS_TO_PASS" in result.out


def test_a_parameter_holding_double_colons_is_no_test_name(capsys, tiny_case: Path) -> None:
    """Found by the held-out corpus (dateutil 2020): pytest's id of a parametrized test keeps
    its parameter as written, ``test_invalid_GNU_tzstr[,dfughdfuigpu87\xf1::]``; the
    validator split it at its last ``::`` and looked for a test named ``]``."""
    edit(
        tiny_case,
        lambda d: d["hidden_tests"]["pass_to_pass"].append("test_lib.py::test_zero[a::b]"),
    )
    result = run_cli(capsys, "case", "validate", str(tiny_case))
    assert result.code == 0, result.err


def test_paths_are_resolved_against_the_case_file(tiny_case: Path) -> None:
    case = load_case(tiny_case)
    assert case.gold.patch == (tiny_case.parent / "gold.patch").resolve()
    assert case.hidden_tests.patch.is_absolute()


END_RULE = {
    "id": "pr-open-at-end",
    "at_end": "github.pull_request",
    "where": [{"field": "state", "equals": "open"}],
    "at_least": 1,
}

BAD_CASES = {
    "malformed yaml": (
        lambda p: p.write_text("schema: 1\nid: [unclosed\n"),
        ["malformed YAML", "line"],
    ),
    "duplicate key": (
        lambda p: p.write_text(p.read_text() + "id: again\n"),
        ["duplicate key 'id'"],
    ),
    "missing field": (
        lambda p: edit(p, lambda d: d.pop("ticket")),
        ["ticket: required field is missing"],
    ),
    "unknown field": (
        lambda p: edit(p, lambda d: d.update(colour="red")),
        ["colour: unknown field"],
    ),
    "wrong type": (
        lambda p: edit(p, lambda d: d["hidden_tests"].update(repeat="many")),
        ["hidden_tests.repeat:", "'many'"],
    ),
    "naive timestamp": (
        lambda p: edit(p, lambda d: d.update(at="2026-03-12T09:00:00")),
        ["at: timestamp has no timezone"],
    ),
    "wrong schema version": (lambda p: edit(p, lambda d: d.update(schema=3)), ["schema:"]),
    "bad ticket ref": (
        lambda p: edit(p, lambda d: d["ticket"].update(ref="ENG-12")),
        ["ticket:", "not a github reference"],
    ),
    "nested list item": (
        lambda p: edit(p, lambda d: d["side_effects"][1].pop("kind")),
        ["side_effects[1].kind: required field is missing"],
    ),
    "rule without bounds": (
        lambda p: edit(p, lambda d: d["side_effects"][1].pop("at_least")),
        ["side_effects[1]", "at_least, at_most"],
    ),
    "two tests in one condition": (
        lambda p: edit(p, lambda d: d["side_effects"][0]["where"][0].update(regex="x")),
        ["side_effects[0].where[0]", "exactly one"],
    ),
    "misspelt event kind": (
        lambda p: edit(p, lambda d: d["side_effects"][1].update(kind="github.pull_reqest.opened")),
        [
            "side_effects[1].kind: unknown event kind 'github.pull_reqest.opened'",
            "(did you mean 'github.pull_request.opened'?)",
        ],
    ),
    "misspelt kind in a forbidden rule": (
        lambda p: edit(p, lambda d: d["side_effects"][0].update(kind="git.psuh")),
        ["side_effects[0].kind: unknown event kind 'git.psuh' (did you mean 'git.push'?)"],
    ),
    "misspelt condition field": (
        lambda p: edit(p, lambda d: d["side_effects"][0]["where"][0].update(field="data.reff")),
        [
            "side_effects[0].where[0].field: 'data.reff' is not a field of git.push",
            "(did you mean 'data.ref'?)",
        ],
    ),
    "object_type is object.type in an event": (
        lambda p: edit(p, lambda d: d["side_effects"][0]["where"][0].update(field="object_type")),
        ["side_effects[0].where[0].field", "(did you mean 'object.type'?)"],
    ),
    "condition goes inside a plain value": (
        lambda p: edit(p, lambda d: d["side_effects"][0]["where"][0].update(field="data.ref.name")),
        ["side_effects[0].where[0].field", "inside data.ref, which holds no fields"],
    ),
    "pattern that matches no kind": (
        lambda p: edit(p, lambda d: d["side_effects"][1].update(kind="gihtub.*")),
        ["side_effects[1].kind: the pattern 'gihtub.*' matches no event kind", "'github.*'"],
    ),
    "service that does not record the kind": (
        lambda p: edit(p, lambda d: d["side_effects"][0].update(service="github")),
        ["side_effects[0].service: 'git.push' is recorded by git, not by 'github'"],
    ),
    "service that records nothing": (
        lambda p: edit(p, lambda d: d["side_effects"][0].update(service="registry")),
        ["side_effects[0].service: 'registry' records no events"],
    ),
    "end-state rule in a schema-1 case": (
        lambda p: edit(p, lambda d: d["side_effects"].append(END_RULE)),
        ["side_effects[2].at_end: an end-state rule needs schema: 2"],
    ),
    "end-state rule naming what the end does not hold": (
        lambda p: edit(
            p,
            lambda d: d.update(
                schema=2, side_effects=[*d["side_effects"], END_RULE | {"at_end": "github.pr"}]
            ),
        ),
        ["side_effects[2].at_end: the end state holds no 'github.pr'", "github.pull_request"],
    ),
    "end-state rule on a field objects lack": (
        lambda p: edit(
            p,
            lambda d: d.update(
                schema=2,
                side_effects=[
                    *d["side_effects"],
                    END_RULE | {"where": [{"field": "bdy", "contains": "#1"}]},
                ],
            ),
        ),
        ["side_effects[2].where[0].field: 'bdy' is not a field", "(did you mean 'body'?)"],
    ),
    "end-state rule without bounds": (
        lambda p: edit(
            p,
            lambda d: d.update(
                schema=2,
                side_effects=[*d["side_effects"], {"id": "x", "at_end": "github.issue"}],
            ),
        ),
        ["side_effects[2]: give at_least, at_most or both"],
    ),
    "gold effect of an unknown kind": (
        lambda p: edit(
            p,
            lambda d: d["gold"].update(
                side_effects=[{"service": "github", "kind": "github.pull_request.open"}]
            ),
        ),
        ["gold.side_effects[0].kind: unknown event kind", "'github.pull_request.opened'"],
    ),
    "not a mapping": (lambda p: p.write_text("- just\n- a list\n"), ["expected a mapping"]),
    "empty file": (lambda p: p.write_text(""), ["expected a mapping"]),
    "junit placeholder missing": (
        lambda p: edit(p, lambda d: d["hidden_tests"].update(command="pytest")),
        ["hidden_tests.command", "{junit}"],
    ),
    "T differs from snapshot": (
        lambda p: edit(p, lambda d: d.update(at="2026-03-12T10:00:00Z")),
        ["at:", "not the snapshot's T"],
    ),
    "wrong base commit": (
        lambda p: edit(p, lambda d: d["repository"].update(base_commit="0" * 40)),
        ["repository.base_commit", "not the snapshot's base commit"],
    ),
    "ticket not in world": (
        lambda p: edit(p, lambda d: d["ticket"].update(ref="acme/tiny#99")),
        ["ticket.ref", "acme/tiny#99 is not in the snapshot"],
    ),
    "unknown scripted person": (
        lambda p: edit(
            p,
            lambda d: d.update(
                humans=[
                    {"person": "u-nobody", "service": "linear", "thread": "ENG-1", "text": "hint"}
                ]
            ),
        ),
        ["humans[0].person", "no Linear user 'u-nobody'"],
    ),
    "missing gold patch": (
        lambda p: (p.parent / "gold.patch").unlink(),
        ["gold.patch", "file not found"],
    ),
    "gold patch does not apply": (
        lambda p: (p.parent / "gold.patch").write_text(
            (p.parent / "gold.patch").read_text().replace("return a - b", "return a * b")
        ),
        ["gold.patch", "does not apply"],
    ),
    "fix before T": (
        lambda p: edit(p, lambda d: d.update(fixed_at="2000-01-01T00:00:00Z")),
        ["fixed_at", "the fix is before T"],
    ),
    "fix date without a time zone": (
        lambda p: edit(p, lambda d: d.update(fixed_at="2030-01-01T00:00:00")),
        ["fixed_at", "timezone"],
    ),
    "test id not in hidden tests": (
        lambda p: edit(
            p, lambda d: d["hidden_tests"]["fail_to_pass"].append("test_lib.py::test_nope")
        ),
        ["hidden_tests.fail_to_pass[1]", "no test test_nope"],
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_bad_case_gives_one_line_and_status_2(
    name: str, capsys, tiny_case: Path, tiny_snapshot_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    breaker, fragments = BAD_CASES[name]
    breaker(tiny_case)
    monkeypatch.chdir(tmp_path)
    before = tree_digest(tmp_path), tree_digest(tiny_snapshot_dir)
    result = run_cli(capsys, "case", "validate", str(tiny_case))
    line = assert_one_line_error(result, *fragments)
    assert str(tiny_case) in line or "gold.patch" in line
    assert (tree_digest(tmp_path), tree_digest(tiny_snapshot_dir)) == before, "nothing is written"


def test_missing_case_file(capsys, tmp_path: Path) -> None:
    result = run_cli(capsys, "case", "validate", str(tmp_path / "nope.yaml"))
    assert_one_line_error(result, "nope.yaml", "file not found")


def test_case_error_names_file_and_field(tiny_case: Path) -> None:
    edit(
        tiny_case,
        lambda d: (
            d["budgets"].update(wall_time_s=-1)
            if "budgets" in d
            else d.update(budgets={"wall_time_s": -1})
        ),
    )
    with pytest.raises(CaseError) as exc:
        load_case(tiny_case)
    assert exc.value.field == "budgets.wall_time_s"
    assert exc.value.path == tiny_case


def rule(**kw) -> SideEffectRule:  # type: ignore[no-untyped-def]
    return SideEffectRule.model_validate({"id": "r", "kind": "git.push", "at_most": 0, **kw})


def test_rule_matching() -> None:
    push_main = event(1, "git", "git.push", ref="refs/heads/main")
    push_branch = event(2, "git", "git.push", ref="refs/heads/fix")
    r = rule(where=[{"field": "data.ref", "equals": "refs/heads/main"}])
    assert r.matches(push_main) and not r.matches(push_branch)
    assert r.forbidden and r.holds(0) and not r.holds(1)
    assert rule(where=[{"field": "data.ref", "regex": r"^refs/heads/f"}]).matches(push_branch)
    assert rule(where=[{"field": "data.ref", "contains": "main"}]).matches(push_main)
    # A field the kind has, absent from one event (recorders may leave keys out): no match.
    assert not rule(where=[{"field": "data.forced", "contains": "x"}]).matches(push_main)
    wild = SideEffectRule.model_validate({"id": "w", "kind": "slack.message.*", "at_least": 1})
    assert wild.matches(event(3, "slack", "slack.message.posted")) and not wild.holds(0)
    anything_on_github = rule(kind="*", service="github")
    assert not anything_on_github.matches(push_main)
    assert anything_on_github.matches(event(4, "github", "github.issue.opened"))


def test_rules_may_name_what_some_matched_kind_records() -> None:
    # A pattern's condition needs a field of one of the kinds it matches, not of all of them.
    text = {"id": "t", "kind": "slack.message.*", "at_least": 1}
    SideEffectRule.model_validate({**text, "where": [{"field": "data.text", "contains": "x"}]})
    # Mappings in data may be gone into; every event has the top-level fields.
    moved = {"id": "m", "kind": "github.issue.updated", "service": "github", "at_least": 1}
    where = [
        {"field": "data.changes.state.to", "equals": "closed"},
        {"field": "object.id", "contains": "#7"},
        {"field": "actor", "equals": "acme-agent"},
    ]
    SideEffectRule.model_validate({**moved, "where": where})
    slack = {"id": "s", "kind": "slack.*", "at_least": 1}
    problem = re.escape("'data.txt' is not a field of any of the 7 event kinds the rule matches")
    with pytest.raises(ValueError, match=problem + ".*did you mean 'data.text'"):
        SideEffectRule.model_validate({**slack, "where": [{"field": "data.txt", "equals": "x"}]})


def test_equals_accepts_falsy_values() -> None:
    r = rule(where=[{"field": "data.forced", "equals": False}])
    assert r.matches(event(1, "git", "git.push", forced=False))
    assert not r.matches(event(2, "git", "git.push", forced=True))


def test_case_schema_documents_every_field() -> None:
    # The case format is read by people; every top-level field must be in the model.
    assert {
        "id",
        "title",
        "ticket",
        "snapshot",
        "at",
        "repository",
        "environment",
        "hidden_tests",
        "side_effects",
        "budgets",
        "tags",
        "gold",
        "humans",
    } <= set(Case.model_fields)


def test_fix_date_is_the_case_s_own_or_its_provenance_s(tiny_case: Path) -> None:
    """``fixed_at`` is optional (older case files stay valid), taken from the provenance of a
    public case that predates it, and may not disagree with it."""
    data = yaml.safe_load(tiny_case.read_text())
    data.pop("fixed_at", None)
    tiny_case.write_text(yaml.safe_dump(data, sort_keys=False))
    assert load_case(tiny_case).fixed_at is None
    at = load_case(tiny_case).at
    (tiny_case.parent / "LICENSE").write_text("MIT")
    provenance = {
        "repository": "https://example.org/x",
        "fix_commit": "a" * 40,
        "fixed_at": "2031-05-06T07:08:09Z",
        "license": "MIT",
        "license_file": "LICENSE",
        "ticket": "the issue",
    }
    edit(tiny_case, lambda d: d.update(provenance=provenance))
    case = load_case(tiny_case)
    assert case.fixed_at is not None and case.fixed_at.isoformat() == "2031-05-06T07:08:09+00:00"
    assert case.fixed_at > at
    edit(tiny_case, lambda d: d.update(fixed_at="2031-05-06T07:08:10Z"))
    with pytest.raises(CaseError) as exc:
        load_case(tiny_case)
    assert exc.value.field == "fixed_at" and "differs from provenance.fixed_at" in exc.value.problem


def test_every_shipped_case_has_its_fix_date_after_t() -> None:
    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "cases").glob("*/case.yaml"))
    assert len(files) >= 7
    for path in files:
        assert "fixed_at:" in path.read_text().partition("hidden_tests:")[0], path
        case = load_case(path)
        assert case.fixed_at is not None and case.fixed_at > case.at, path


def test_an_end_state_rule_validates_in_a_schema_2_case(capsys, tiny_case: Path) -> None:
    edit(tiny_case, lambda d: d.update(schema=2, side_effects=[*d["side_effects"], END_RULE]))
    result = run_cli(capsys, "case", "validate", str(tiny_case))
    assert result.code == 0, result.err
    assert "format (schema 2)" in result.out
    assert "1 on the end state, each naming what it holds" in result.out
    (end,) = [r for r in load_case(tiny_case).side_effects if isinstance(r, EndStateRule)]
    assert end.at_end == "github.pull_request" and end.holds(1) and not end.holds(0)
    assert end.matches({"state": "open"}) and not end.matches({"state": "closed"})


def test_every_end_state_field_is_documented() -> None:
    # A rule's author reads the vocabulary: every type and field says what it holds.
    for obj in OBJECTS.values():
        assert obj.doc and obj.fields and all(obj.fields.values()), obj.name
        assert obj.name_of(dict.fromkeys(obj.fields, "x"))
