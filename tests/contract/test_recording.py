"""Comparing a run with its recording: every kind of drift found, known gaps removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.contract.normalise import Normaliser
from replay.contract.recording import (
    Gap,
    Raw,
    Recorder,
    Recording,
    RecordingError,
    compare,
    load,
    save,
)


def recording(status: int, body: object, headers: dict[str, str] | None = None) -> Recording:
    rec = Recorder(Normaliser())
    rec.add("get", "GET", "/things/1", Raw(status, headers or {}, body), operation="things.get")
    return Recording(
        service="github",
        scenario="s",
        recorded_against="self",
        target_url="http://127.0.0.1",
        exchanges=rec.exchanges,
    )


def test_identical_runs_do_not_differ(tmp_path: Path) -> None:
    a = recording(200, {"id": 5, "title": "x"}, {"Content-Type": "application/json"})
    save(a, tmp_path)
    loaded = load(tmp_path, "github", "s")
    assert loaded is not None and compare(loaded, a, []) == []


def test_status_header_shape_and_value_drift() -> None:
    base = recording(200, {"id": 5, "title": "x"}, {"content-type": "application/json"})
    drifted = recording(201, {"id": "5", "titel": "y"}, {"content-type": "text/html"})
    wheres = {d.where for d in compare(base, drifted, [])}
    assert {
        "get.status",
        "get.headers.content-type",
        "get.shape.id",
        "get.shape.title",
        "get.shape.titel",
        "get.body.title",
        "get.body.titel",
    } <= wheres


def test_rate_limit_headers_by_presence_and_gaps_filter() -> None:
    base = recording(
        200, {}, {"X-RateLimit-Remaining": "4999", "Link": '<http://x/a?page=2>; rel="next"'}
    )
    same = recording(
        200, {}, {"x-ratelimit-remaining": "12", "link": '<http://x/a?page=2>; rel="next"'}
    )
    assert compare(base, same, []) == []
    gone = recording(200, {})
    diffs = compare(base, gone, [])
    assert {d.where for d in diffs} == {"get.headers.x-ratelimit-remaining", "get.headers.link"}
    gap = Gap(scenario="s", where="get.headers.link", why="test")
    assert [d.where for d in compare(base, gone, [gap])] == ["get.headers.x-ratelimit-remaining"]


def test_a_recording_says_where_it_came_from_and_a_bad_file_is_named(tmp_path: Path) -> None:
    live = recording(200, {"id": 5}).model_copy(update={"recorded_against": "live"})
    save(live, tmp_path)
    loaded = load(tmp_path, "github", "s")
    assert loaded is not None and loaded.recorded_against == "live"
    path = tmp_path / "github" / "s.json"
    # The old vocabulary ("stand-in", "real") is no longer a recording's provenance.
    path.write_text(path.read_text().replace('"live"', '"stand-in"'))
    with pytest.raises(RecordingError, match=r"s\.json: not a recording of format 1"):
        load(tmp_path, "github", "s")
    path.write_text("{not json")
    with pytest.raises(RecordingError, match=r"s\.json"):
        load(tmp_path, "github", "s")
