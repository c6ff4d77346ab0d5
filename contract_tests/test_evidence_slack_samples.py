"""The Slack fake against the Java SDK's response samples (slackapi/java-slack-sdk,
``json-logs/samples/api``: every key the SDK's integration runs have seen per method, with
placeholder values): every key the fake answers is one the SDK has seen at that place, with
the placeholder's JSON type; a fake that invents a key or answers a number as a string is
caught; the vendored samples are byte for byte the files ``SOURCE.json`` names."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from fakes.slack import schemas
from fakes.slack.routes import METHODS
from replay.contract.evidence import Report, load_source, vendored_bytes
from replay.contract.evidence.families import FAMILIES
from replay.contract.evidence.slack_samples import (
    DIRECTORY,
    KEYS,
    SAMPLES,
    TYPES,
    Shape,
    build,
    compare,
    load_samples,
    reports,
    shape,
)
from replay.contract.evidence.slack_spec import Observed, Seen, observe
from replay.contract.targets import ContractSetupError


@pytest.fixture(scope="module")
def observed() -> Observed:
    return observe()


@pytest.fixture(scope="module")
def families(observed: Observed) -> dict[str, Report]:
    return {r.family: r for r in build(observed, load_source(DIRECTORY), load_samples())}


def test_the_fake_holds_to_the_samples(families: dict[str, Report]) -> None:
    for report in families.values():
        print("\n".join(report.lines()))
    assert set(families) == {KEYS, TYPES}
    for report in families.values():
        assert report.service == "slack" and report.total > 0
        assert not report.failures and not report.unused_gaps, "\n".join(report.lines())
        assert report.ok


def test_the_family_is_registered_and_reports_the_same_run() -> None:
    assert reports in FAMILIES
    assert [r.headline() for r in reports()] == [
        r.headline() for r in build(observe(), load_source(DIRECTORY), load_samples())
    ]


def test_every_method_the_fake_serves_has_a_sample() -> None:
    assert set(load_samples()) == set(METHODS)


# --------------------------------------------------------------------------- it can fail


def _planted(monkeypatch: pytest.MonkeyPatch, change: Any) -> dict[str, Report]:
    """The family's reports with the fake's response bodies changed by ``change(model,
    body)`` (the fake's own rendering, patched where its routes call it)."""
    real = schemas.body

    def body(model: BaseModel) -> dict[str, Any]:
        out = real(model)
        change(model, out)
        return out

    monkeypatch.setattr(schemas, "body", body)
    return {r.family: r for r in reports()}


def test_an_invented_key_in_chat_post_message_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def invent(model: BaseModel, out: dict[str, Any]) -> None:
        if isinstance(model, schemas.Posted):
            out["message"]["is_starred_by_bot"] = False

    found = _planted(monkeypatch, invent)
    keys = found[KEYS]
    print("\n".join(keys.lines()))
    failed = {c.subject: c.problems for c in keys.failures}
    assert failed and all(s.endswith(" chat.postMessage") for s in failed)
    assert all(
        p == ("$.message.is_starred_by_bot: a key the SDK has not seen",) for p in failed.values()
    )
    assert not keys.ok and found[TYPES].ok


def test_a_number_answered_as_a_string_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def stringify(model: BaseModel, out: dict[str, Any]) -> None:
        for message in out.get("messages", []):
            if "reply_count" in message:
                message["reply_count"] = str(message["reply_count"])

    found = _planted(monkeypatch, stringify)
    types = found[TYPES]
    print("\n".join(types.lines()))
    problems = {p for c in types.failures for p in c.problems}
    assert problems and all(
        p.endswith("reply_count: string, the SDK's sample has number") for p in problems
    )
    methods = {c.subject.rsplit(" ", 1)[1] for c in types.failures}
    assert methods == {"conversations.history", "conversations.replies"}
    assert not types.ok and found[KEYS].ok


def test_a_stale_gap_fails(observed: Observed, tmp_path: Path) -> None:
    gaps = json.loads((DIRECTORY / "gaps.json").read_text())
    gaps.append(
        {
            "subject": "* / * users.list",
            "problem": "$.members[*].nickname: a key the SDK has not seen",
            "why": "a gap for a key the fake does not send: it matches nothing",
        }
    )
    (tmp_path / "gaps.json").write_text(json.dumps(gaps))
    built = build(observed, load_source(DIRECTORY), load_samples(), tmp_path)
    assert [g.subject for g in built[0].unused_gaps] == ["* / * users.list"]
    assert not built[0].ok and built[1].ok


# --------------------------------------------------------------------------- the reader


def test_array_elements_are_merged_and_nulls_are_unknown() -> None:
    sample = shape({"a": [{"x": ""}, {"y": 12345}], "n": None, "e": []})
    value = {"a": [{"x": "s", "y": 1}, {"x": 3}], "n": 5, "e": [{"z": 1}], "b": True}
    assert list(compare(sample, value)) == [
        (TYPES, "$.a[1].x: number, the SDK's sample has string"),
        (KEYS, "$.b: a key the SDK has not seen"),
    ]
    assert list(compare(sample, {"a": None})) == []
    assert shape([]) == Shape(frozenset({"array"}))
    assert list(compare(shape({"ok": False}), {"ok": 1})) == [
        (TYPES, "$.ok: number, the SDK's sample has boolean")
    ]


def test_a_sample_lacking_for_a_method_fails_both_reports() -> None:
    seen = Seen("t", "s", "no.method", 200, {"ok": True})
    built = build(Observed([seen], []), load_source(DIRECTORY), load_samples(), Path("/none"))
    for report in built:
        assert [c.problems for c in report.failures] == [(f"no.method: no sample in {SAMPLES}",)]


# --------------------------------------------------------------------------- the evidence


def test_the_vendored_samples_match_source_json() -> None:
    source = load_source(DIRECTORY)
    assert source.repository == "slackapi/java-slack-sdk" and source.license == "MIT"
    assert "MIT License" in (DIRECTORY / "LICENSE").read_text()
    # Kept gzipped (13 MB as they are): the sha256 is that of the upstream bytes.
    vendored = sorted(
        str(p.relative_to(DIRECTORY)).removesuffix(".gz")
        for p in (DIRECTORY / SAMPLES).rglob("*")
        if p.is_file()
    )
    assert sorted(source.files) == vendored
    assert set(source.sha256) == {"LICENSE", *source.files}
    for path, digest in source.sha256.items():
        assert hashlib.sha256(vendored_bytes(DIRECTORY, path)).hexdigest() == digest, path
    assert {f.removeprefix(f"{SAMPLES}/").removesuffix(".json") for f in source.files} == set(
        METHODS
    )


def test_a_changed_vendored_file_is_refused(tmp_path: Path) -> None:
    source = json.loads((DIRECTORY / "SOURCE.json").read_text())
    name = f"{SAMPLES}/auth.test.json"
    source["files"] = [name]
    source["sha256"] = {name: source["sha256"][name], "LICENSE": source["sha256"]["LICENSE"]}
    source["commits"] = {}
    (tmp_path / name).parent.mkdir(parents=True)
    shutil.copy(DIRECTORY / "LICENSE", tmp_path / "LICENSE")
    shutil.copy(DIRECTORY / f"{name}.gz", tmp_path / f"{name}.gz")
    (tmp_path / "SOURCE.json").write_text(json.dumps(source))
    assert load_source(tmp_path).sha256[name] == source["sha256"][name]
    (tmp_path / f"{name}.gz").write_bytes(gzip.compress(vendored_bytes(DIRECTORY, name) + b"\n"))
    with pytest.raises(ContractSetupError, match=r"differ from SOURCE\.json's sha256"):
        load_source(tmp_path)
