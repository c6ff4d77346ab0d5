"""The GitHub fake held to octokit/fixtures' recordings of real api.github.com traffic:
every chosen scenario replays with no failure, a broken fake is caught, a stale gap and a
malformed SOURCE.json are reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.contract.evidence import octokit
from replay.contract.targets import ContractSetupError


def test_every_scenario_replays_without_failure() -> None:
    [report] = octokit.reports()
    print("\n".join(report.lines()))
    scenarios = {c.subject.split(" #", 1)[0] for c in report.checks}
    assert len(scenarios) >= 12
    assert report.total >= 30
    assert report.ok, "\n".join(report.lines())


def test_plain_issues_carry_no_pull_request_and_search_its_own_bucket() -> None:
    # The fake used to send "pull_request": null and "draft": null on plain issues, and
    # count search against the core limit; the recordings say otherwise.
    [report] = octokit.reports(scenarios=("add-labels-to-issue", "search-issues"))
    assert not report.failures and report.passed == report.total == 3


def drop_key(key: str) -> octokit.Wrap:
    """Wraps the GitHub app so every JSON object in a body loses ``key``."""

    def wrap(service: str, app: ASGIApp) -> ASGIApp:
        if service != "github":
            return app

        async def broken(scope: Scope, receive: Receive, send: Send) -> None:
            start: Message = {}

            async def hold(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    start = message
                    return
                body = message.get("body", b"")
                try:
                    data = json.loads(body)
                except ValueError:
                    data = None
                if isinstance(data, dict):
                    data.pop(key, None)
                    body = json.dumps(data).encode()
                headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})
                await send({**message, "body": body, "more_body": False})

            await app(scope, receive, hold)

        return broken

    return wrap


def test_a_broken_fake_fails_a_check() -> None:
    [report] = octokit.reports(wrap=drop_key("state"), scenarios=("add-labels-to-issue",))
    assert not report.ok
    [failed] = report.failures
    assert failed.subject == "add-labels-to-issue #0 POST /repos/{owner}/{repo}/issues"
    assert "$.state: missing" in failed.problems


def copy_evidence(tmp_path: Path) -> Path:
    out = tmp_path / "octokit-fixtures"
    shutil.copytree(octokit.DIR, out)
    return out


def test_a_stale_gap_fails(tmp_path: Path) -> None:
    directory = copy_evidence(tmp_path)
    gaps = json.loads((directory / "gaps.json").read_text())
    gaps.append({"subject": "get-root #0 *", "problem": "status *", "why": "never happens here"})
    (directory / "gaps.json").write_text(json.dumps(gaps))
    [report] = octokit.reports(directory, scenarios=("get-root",))
    assert not report.ok
    assert [g.problem for g in report.unused_gaps][-1] == "status *"
    assert any("stale gap get-root" in line for line in report.lines())


def test_a_malformed_source_is_a_clear_error(tmp_path: Path) -> None:
    directory = copy_evidence(tmp_path)
    (directory / "SOURCE.json").write_text(json.dumps({"repository": "octokit/fixtures"}))
    with pytest.raises(ContractSetupError, match="not a valid evidence source"):
        octokit.reports(directory, scenarios=("get-root",))


def test_label_and_status_writes_replay_with_no_gap() -> None:
    # Creating, reading, renaming and deleting a label, the 422 for a bad colour, and
    # statuses created then listed and combined: all served as GitHub answered them.
    [report] = octokit.reports(scenarios=("labels", "create-status", "errors"))
    assert not report.failures, "\n".join(report.lines())
    gapped = [c.subject for c in report.checks if c.gap]
    assert gapped == ["errors #0 POST /repos/{owner}/{repo}/labels"]  # only its `status` key
    assert report.total == 10


def test_a_wrong_combined_state_fails_a_check() -> None:
    [report] = octokit.reports(wrap=drop_key("state"), scenarios=("create-status",))
    assert {c.subject.split(" ", 1)[1] for c in report.failures} >= {
        "#0 POST /repos/{owner}/{repo}/statuses/{sha}",
        "#3 GET /repos/{owner}/{repo}/commits/{sha}/status",
    }
