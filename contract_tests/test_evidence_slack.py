"""The Slack fake against Slack's published Web API spec (slackapi/slack-api-specs, last
changed September 2021): every scenario response conforms to its method's schema, every
error code the fake can answer is one the spec lists for the method (or a known gap with its
reason), and the checks catch a broken fake, an undeclared code and a stale gap."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contract_tests.test_broken_fake import mutating
from replay.contract.evidence import Report, load_source
from replay.contract.evidence.slack_spec import (
    DIRECTORY,
    SPEC,
    Observed,
    Seen,
    build,
    conformance,
    declared_errors,
    load_spec,
    observe,
    reports,
)

ISSUE_METHODS = {
    "conversations.history",
    "conversations.replies",
    "chat.postMessage",
    "reactions.add",
    "reactions.remove",
    "users.info",
    "users.list",
}
"""The methods issue 15 wants checked against the spec by at least one scenario step."""


@pytest.fixture(scope="module")
def observed() -> Observed:
    return observe()


@pytest.fixture(scope="module")
def families(observed: Observed) -> dict[str, Report]:
    built = build(observed, declared_errors(), load_source(DIRECTORY), load_spec())
    return {r.family: r for r in built}


def test_the_fake_conforms_to_the_spec(families: dict[str, Report]) -> None:
    for report in families.values():
        print("\n".join(report.lines()))
    assert set(families) == {"response conformance", "error codes"}
    for report in families.values():
        assert report.service == "slack" and report.total > 0
        assert report.ok, "\n".join(report.lines())


def test_reports_is_the_same_offline_run() -> None:
    assert [r.headline() for r in reports()] == [
        r.headline()
        for r in build(observe(), declared_errors(), load_source(DIRECTORY), load_spec())
    ]


def test_the_issue_methods_are_each_checked_by_a_step(observed: Observed) -> None:
    checked = {s.method for s in observed.seen if isinstance(s.body, dict) and s.body.get("ok")}
    assert checked >= ISSUE_METHODS, sorted(ISSUE_METHODS - checked)


def test_the_vendored_spec_is_the_named_source() -> None:
    source = load_source(DIRECTORY)
    assert source.repository == "slackapi/slack-api-specs" and source.files == [SPEC]
    assert source.license == "MIT" and "MIT License" in (DIRECTORY / "LICENSE").read_text()


# --------------------------------------------------------------------------- it can fail


def _break(status: int, body: Any) -> tuple[int, Any]:
    """A drifting fake: history loses ``has_more``, a reply count becomes a string, a
    permalink's channel id is lower-cased, and an unknown channel gets an undocumented code."""
    if not isinstance(body, dict):
        return status, body
    body = json.loads(json.dumps(body))
    if "messages" in body and "pin_count" in body:
        body.pop("has_more", None)
        for m in body["messages"]:
            if "reply_count" in m:
                m["reply_count"] = str(m["reply_count"])
    if "permalink" in body:
        body["channel"] = body["channel"].lower()
    if body.get("error") == "channel_not_found":
        body["error"] = "no_such_channel"
    return status, body


@pytest.fixture(scope="module")
def broken() -> Iterator[dict[str, Report]]:
    yield {r.family: r for r in reports(mutating("slack", _break))}


def test_a_missing_key_and_wrong_types_are_caught(broken: dict[str, Report]) -> None:
    report = broken["response conformance"]
    problems = {p for c in report.failures for p in c.problems}
    print("\n".join(report.lines()))
    assert "$.has_more: required by the spec but missing" in problems
    assert any(p.endswith("reply_count: string, the spec says integer") for p in problems)
    assert any(p.startswith("$.channel: ") and "does not match" in p for p in problems)
    assert not report.ok


def test_an_undocumented_error_code_is_caught(broken: dict[str, Report]) -> None:
    report = broken["error codes"]
    failed = {c.subject: c.problems for c in report.failures}
    assert failed["chat.postMessage no_such_channel"] == (
        "not an error the spec lists for chat.postMessage",
        "returned by the fake (errors / unknown channel) but not declared for chat.postMessage",
    )


def test_a_declared_code_the_spec_lacks_is_caught(observed: Observed) -> None:
    declared = dict(declared_errors())
    declared["users.info"] = declared["users.info"] | {"user_vanished"}
    codes = build(observed, declared, load_source(DIRECTORY), load_spec())[1]
    assert [c.subject for c in codes.failures] == ["users.info user_vanished"]


def test_a_stale_gap_fails(observed: Observed, tmp_path: Path) -> None:
    gaps = json.loads((DIRECTORY / "gaps.json").read_text())
    gaps.append(
        {
            "subject": "users.info user_not_found",
            "problem": "*",
            "why": "a gap for a code the spec does list: it matches nothing",
        }
    )
    shutil.copy(DIRECTORY / "SOURCE.json", tmp_path / "SOURCE.json")
    (tmp_path / "gaps.json").write_text(json.dumps(gaps))
    built = build(observed, declared_errors(), load_source(DIRECTORY), load_spec(), tmp_path)
    codes = built[1]
    assert [g.subject for g in codes.unused_gaps] == ["users.info user_not_found"]
    assert not codes.ok and built[0].ok


# --------------------------------------------------------------------------- the reader


def test_slack_items_lists_are_alternatives() -> None:
    """``items: [A, B]`` on a non-array means one of A, B (``tz``: null or a string)."""
    spec = load_spec()
    tz = {"items": [{"type": "null"}, {"type": "string"}]}
    assert spec.validate(tz, None) == [] and spec.validate(tz, "UTC") == []
    assert spec.validate(tz, 3) == ["$: integer, the spec says null"]


def test_error_bodies_are_held_to_the_error_schema() -> None:
    spec = load_spec()
    seen = Seen("t", "s", "users.info", 200, {"ok": False, "error": "x", "extra": 1})
    assert conformance(spec, seen).problems == ("$.extra: not in the spec",)
    ok = Seen("t", "s", "reactions.add", 200, {"ok": True})
    assert conformance(spec, ok).problems == ()
    assert conformance(spec, Seen("t", "s", "no.method", 200, {"ok": True})).problems
