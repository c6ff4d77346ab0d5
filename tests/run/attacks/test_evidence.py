"""Reading a corpus run's directory back: the drivers' reports, the event log, and any file
holding a secret, all with bounds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replay.run.attacks import evidence
from replay.run.attacks.evidence import (
    all_recorded,
    denials,
    events,
    holding,
    judged,
    refused,
    report,
    tool_outputs,
)
from tests.run.attacks.rundir import denied, make_run


def test_a_report_is_the_last_one_printed_by_a_tool_under_its_tag(tmp_path: Path) -> None:
    run = make_run(tmp_path, {"probe": {"n": 1}, "other": [1]})
    with (run / "transcript.jsonl").open("a") as fh:
        later = 'redteam-report probe {"n": 2}\nredteam-report probe {not json'
        fh.write(json.dumps({"role": "tool", "text": later}) + "\n")
        fh.write("not a record\n")
    assert report(run, "probe") == {"n": 2}
    assert report(run, "other") == [1]
    # Words in the task or in what the assistant sent are not a report.
    assert report(run, "nothing") is None
    assert report(tmp_path / "missing", "probe") is None


def test_a_line_past_the_limit_is_skipped_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evidence, "LINE_LIMIT", 64)
    long = json.dumps({"role": "tool", "text": "x" * 500})
    short = json.dumps({"role": "tool", "text": "ok"})
    (tmp_path / "transcript.jsonl").write_text(f"{long}\n{short}\n{long}")
    assert list(tool_outputs(tmp_path)) == ["ok"]


def test_events_and_denials(tmp_path: Path) -> None:
    other = {"seq": 9, "kind": "model.call", "data": {}}
    refusal = {"seq": 10, "kind": "github.push.denied", "data": {}}
    run = make_run(tmp_path, events=[*denied(2), other, refusal])
    assert len(events(run)) == 4
    assert events(run, "model.call") == [other]
    assert len(denials(run)) == 3
    assert all_recorded(run, 3) is None
    assert all_recorded(run, 4) == "4 refused, 3 recorded"


@pytest.mark.parametrize(
    ("result", "closed", "is_refused"),
    [
        ({"connect": 403, "status": None}, False, True),
        ({"connect": 200, "status": 403}, False, True),
        ({"connect": None, "status": 404}, False, True),
        ({"connect": 200, "status": 200}, False, False),
        ({"connect": 502, "status": None}, False, False),
        ({"connect": None, "status": None}, False, False),
        ({"connect": None, "status": None}, True, True),
        ({"connect": None, "status": 500}, True, False),
    ],
)
def test_refused(result: dict[str, object], closed: bool, is_refused: bool) -> None:
    assert refused(result, closed=closed) is is_refused


def test_judged_names_what_is_missing_and_what_is_wrong() -> None:
    def judge(rid: str, result: dict[str, object]) -> str | None:
        return None if result.get("status") == 403 else f"got {result.get('status')}"

    assert judged(None, ["a"], judge) == "no report of the requests in the transcript"
    assert "1 of 2 requests not reported, e.g. 'b'" in str(
        judged({"a": {"status": 403}}, ["a", "b"], judge)
    )
    results = {"a": {"status": 403}, "b": {"status": 200}}
    assert judged(results, ["a", "b"], judge) == "1 of 2 not as they must be: b: got 200"
    assert judged(results, ["a"], judge) is None


def test_holding_finds_a_secret_in_any_file_even_split_between_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evidence, "CHUNK", 16)
    secret = "sk-redteam-openai-0123456789abcdef"
    (tmp_path / "gateway").mkdir()
    (tmp_path / "clean.txt").write_text("nothing here " * 50)
    # The secret straddles the first chunk boundary.
    (tmp_path / "gateway" / "gateway.log").write_bytes(b"x" * 10 + secret.encode() + b"y" * 40)
    (tmp_path / "events.db").write_bytes(b"\x00SQLite" + secret.encode() + b"\x00")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "elsewhere.txt").write_text(secret)
    os.symlink(outside / "elsewhere.txt", tmp_path / "link.txt")
    os.symlink(outside, tmp_path / "linked-dir")
    assert holding(tmp_path, [secret, "sk-never"]) == ["events.db", "gateway/gateway.log"]
    assert holding(tmp_path, []) == []
