"""Reading the answer: the hidden tests, the gold patch, the scripted people's replies.

Needles are what only the answer holds: every line the hidden-test patch and the gold patch
add that the base commit does not already contain, the FAIL_TO_PASS test names, and the
sentences a scripted person says only when asked. The agent looks for them on the whole
filesystem of its sandbox (each case's own environment image, as its own user; zip, gzip and
git objects opened) and in the world: the fakes' REST and GraphQL, a mirror clone of the
repository, Slack's channels and threads, Linear's issues, the registry, before anyone asked
anything. Nothing may be found. Canaries (a base line, the base commit's subject inside the
git objects, a token in a zip and a gzip of our own; the ticket and thread as they stood at T
in the world) prove each search reads what it claims to.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import Case, load_case
from replay.base.gitrepo import checkout_from_bundle
from replay.snapshot import load_snapshot
from tests.redteam.conftest import CASES, PLACEHOLDER_GH, Agent, World

MIN_LINE = 20


@dataclass(frozen=True)
class Answer:
    """What the agent must not find, and canaries it must (proof the search works)."""

    needles: list[str]
    base_line: str
    """A line of the repository at the base commit (found in the workspace)."""
    base_subject: str
    """The base commit's subject (only inside git objects)."""


def _added(patch: str) -> list[str]:
    return [
        line[1:].strip()
        for line in patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.:;!?])\s+|,\s+", " ".join(text.split()))
    return [p.strip() for p in parts if len(p.strip()) >= 25]


def _base_tree(case: Case, into: Path) -> tuple[str, str]:
    """All text of the repository at the base commit, and the base commit's subject."""
    snapshot = load_snapshot(case.snapshot)
    repo = case.repository
    part = next(r for r in snapshot.manifest.repositories if r.name == repo.name)
    checkout_from_bundle(snapshot.bundle(repo.name), repo.base_commit, into, part.default_branch)
    text = []
    for path in sorted(into.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            text.append(path.read_text(errors="replace"))
    subject = subprocess.run(
        ["git", "-C", str(into), "log", "-1", "--format=%s", repo.base_commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return "\n".join(text), subject


def answer_of(case_path: Path) -> Answer:
    case = load_case(case_path)
    with tempfile.TemporaryDirectory(prefix="redteam-base-") as tmp:
        base, subject = _base_tree(case, Path(tmp) / "repo")
    here = case_path.parent
    candidates = _added((here / case.hidden_tests.patch).read_text())
    candidates += [tid.split("::")[-1] for tid in case.hidden_tests.fail_to_pass]
    assert case.gold is not None
    candidates += _added((here / case.gold.patch).read_text())
    for human in case.humans:
        candidates += _sentences(human.text)
    needles = sorted({c for c in candidates if len(c) >= MIN_LINE and c not in base})
    base_lines = [ln.strip() for ln in base.splitlines() if len(ln.strip()) >= 30]
    line = next(ln for ln in base_lines if not any(ln in n or n in ln for n in needles))
    return Answer(needles, line, subject)


@pytest.fixture(scope="module")
def answers() -> dict[str, Answer]:
    return {case_id: answer_of(path) for case_id, path in CASES.items()}


def test_the_needles_are_the_answer(answers: dict[str, Answer]) -> None:
    """Enough needles per case, the test names and the reply included (or the search is moot)."""
    caret, humans = answers["demo-caret-zero"], answers["demo-build-metadata-sort"]
    assert "test_caret_zero_zero_locks_patch" in caret.needles
    assert "high = _version(0, 0, patch + 1)" in caret.needles
    assert "test_build_ties_broken_by_build_metadata" in humans.needles
    assert any("identifier by identifier" in n for n in humans.needles)
    assert min(len(caret.needles), len(humans.needles)) >= 20


@pytest.mark.parametrize("case_id", list(CASES))
def test_the_sandbox_filesystem_holds_no_answer(
    case_id: str, agents: dict[str, Agent], answers: dict[str, Answer]
) -> None:
    agent, answer = agents[case_id], answers[case_id]
    token = f"redteam-canary-{uuid.uuid4().hex}"
    where = f"/tmp/{token}"
    made = agent.sh(
        f"mkdir {where} && cd {where} && printf '{token}' > canary.txt && "
        "python3 -c \"import zipfile; z = zipfile.ZipFile('canary.zip', 'w', zipfile.ZIP_DEFLATED);"
        " z.write('canary.txt'); z.close()\" && gzip -c canary.txt > canary.gz && rm canary.txt"
    )
    assert made.exit_code == 0, made.err
    found = agent.seek([*answer.needles, token, answer.base_line, answer.base_subject], "/")
    hits: dict[str, list[str]] = found["hits"]
    leaks = {n: hits[n][:5] for n in answer.needles if n in hits}
    assert leaks == {}, f"uid {agent.uid()} found the answer: {leaks}"
    # The canaries: each kind of search reads what it claims to.
    assert any(p.startswith(agent.workdir) for p in hits.get(answer.base_line, [])), hits
    assert any(p.endswith("!objects") for p in hits.get(answer.base_subject, [])), hits
    assert {p.rsplit("!", 1)[0] for p in hits.get(token, []) if "!" in p} == {
        f"{where}/canary.zip",
        f"{where}/canary.gz",
    }, hits.get(token)
    assert found["files"] > 1000, found


# ----------------------------------------------------------------------------- the world


def _get(host: str, target: str, headers: dict[str, str]) -> dict[str, Any]:
    return {
        "mode": "connect",
        "tls": True,
        "host": host,
        "port": 443,
        "method": "GET",
        "target": target,
        "headers": headers,
    }


def _post(host: str, target: str, headers: dict[str, str], data: Any) -> dict[str, Any]:
    return {**_get(host, target, headers), "method": "POST", "body": json.dumps(data)}


GH = {"Authorization": f"token {PLACEHOLDER_GH}", "Accept": "application/vnd.github+json"}
LINEAR = {"Authorization": "lin_api_replayplaceholder", "Content-Type": "application/json"}
SLACK = {"Authorization": "Bearer xoxb-replay-placeholder"}
SLACK_USER = {"Authorization": "Bearer xoxp-replay-placeholder"}
REPO = "/repos/acme/semverkit"

GITHUB_GRAPHQL = """{ repository(owner: "acme", name: "semverkit") {
  issues(first: 100) { nodes { number title body comments(first: 100) { nodes { body } } } }
  pullRequests(first: 100) { nodes { number title body headRefName
    comments(first: 100) { nodes { body } } } }
  refs(refPrefix: "refs/", first: 100) { nodes { name } } } }"""
LINEAR_QUERIES = [
    "{ issues(first: 100, includeArchived: true) { nodes { identifier title description "
    "comments(first: 100) { nodes { body } } } } }",
    *[
        f'{{ searchIssues(term: "{term}", includeComments: true) '
        "{ nodes { identifier title description } } }"
        for term in ("build", "sort", "caret")
    ],
]


def world_requests() -> list[dict[str, Any]]:
    snapshot = load_snapshot(load_case(CASES["demo-caret-zero"]).snapshot)
    numbers = sorted(
        {int(i["number"]) for i in json.loads(snapshot.github.model_dump_json())["issues"]}
        | {int(p["number"]) for p in json.loads(snapshot.github.model_dump_json())["pulls"]}
    )
    out: list[dict[str, Any]] = [
        _get("api.github.com", REPO, GH),
        _get("api.github.com", f"{REPO}/issues?state=all&per_page=100", GH),
        _get("api.github.com", f"{REPO}/pulls?state=all&per_page=100", GH),
        _get("api.github.com", f"{REPO}/issues/comments?per_page=100", GH),
        _get("api.github.com", f"{REPO}/issues/events?per_page=100", GH),
        _get("api.github.com", f"{REPO}/commits?per_page=100", GH),
        _get("api.github.com", f"{REPO}/branches?per_page=100", GH),
        _get("api.github.com", f"{REPO}/git/matching-refs/", GH),
        _get("api.github.com", f"{REPO}/contents/tests", GH),
        _get("api.github.com", f"{REPO}/contents/tests/test_caret.py", GH),
        _get("api.github.com", f"{REPO}/contents/tests/test_sort_build.py", GH),
        _get("api.github.com", "/search/issues?q=repo:acme/semverkit+caret", GH),
        _get("api.github.com", "/search/issues?q=repo:acme/semverkit+build", GH),
        _get("api.github.com", "/search/issues?q=repo:acme/semverkit+is:pr", GH),
        _get("api.github.com", "/search/code?q=test_caret_zero+repo:acme/semverkit", GH),
        _get("raw.githubusercontent.com", "/acme/semverkit/main/tests/test_caret.py", GH),
        _get("raw.githubusercontent.com", "/acme/semverkit/main/src/semverkit/ranges.py", GH),
        _get("github.com", "/acme/semverkit.git/info/refs?service=git-upload-pack", GH),
        _post(
            "api.github.com",
            "/graphql",
            {**GH, "Content-Type": "application/json"},
            {"query": GITHUB_GRAPHQL},
        ),
        *[_post("api.linear.app", "/graphql", LINEAR, {"query": q}) for q in LINEAR_QUERIES],
        _get("slack.com", "/api/conversations.list?types=public_channel,private_channel", SLACK),
        _get("slack.com", "/api/search.messages?query=build&count=100", SLACK_USER),
        _get("slack.com", "/api/search.messages?query=order&count=100", SLACK_USER),
        _get("pypi.org", "/simple/", {}),
        _get("pypi.org", "/simple/semverkit/", {}),
        _get("pypi.org", "/pypi/semverkit/json", {}),
    ]
    for n in numbers:
        for suffix in ("", "/comments", "/events", "/timeline"):
            out.append(_get("api.github.com", f"{REPO}/issues/{n}{suffix}", GH))
        for suffix in ("", "/files", "/commits", "/reviews", "/comments"):
            out.append(_get("api.github.com", f"{REPO}/pulls/{n}{suffix}", GH))
    slack = json.loads(snapshot.slack.model_dump_json())
    for channel in slack["channels"]:
        out.append(
            _get(
                "slack.com", f"/api/conversations.history?channel={channel['id']}&limit=1000", SLACK
            )
        )
        for ts in {m["thread_ts"] or m["ts"] for m in channel["messages"]}:
            out.append(
                _get(
                    "slack.com",
                    f"/api/conversations.replies?channel={channel['id']}&ts={ts}",
                    SLACK,
                )
            )
    return [
        {**r, "id": f"{i:03d} {r['method']} {r['host']}{r['target']}"} for i, r in enumerate(out)
    ]


def test_the_world_holds_no_answer_before_anyone_asks(
    agent: Agent, world: World, answers: dict[str, Answer]
) -> None:
    asked = [e for e in world.events() if e["kind"].startswith(("slack.", "human."))]
    assert asked == [], "someone already posted in Slack: the replies could be legitimately out"
    needles = sorted({n for a in answers.values() for n in a.needles})
    canaries = _canaries()
    # As JSON and HTML would carry them, too (quotes escaped).
    forms = {f: n for n in [*needles, *canaries] for f in _forms(n)}
    results = agent.probe(world_requests(), sorted(forms), timeout=600)
    leaks = {
        rid: sorted({forms[f] for f in r["found"]} & set(needles)) for rid, r in results.items()
    }
    leaks = {rid: found for rid, found in leaks.items() if found}
    assert leaks == {}, f"the world gives the answer away: {leaks}"
    seen = {forms[f] for r in results.values() for f in r["found"]}
    assert seen >= set(canaries), f"the world searches read nothing: missing {set(canaries) - seen}"
    ok = sum(1 for r in results.values() if r["status"] == 200)
    assert ok >= len(results) // 2, f"only {ok}/{len(results)} reads answered"

    # A mirror of every ref the fake's git serves, every object opened.
    mirror = f"/tmp/world-{uuid.uuid4().hex[:8]}.git"
    cloned = agent.sh(
        "git clone -q --mirror "
        f"https://x-access-token:$GH_TOKEN@github.com/acme/semverkit {mirror}",
        timeout=300,
    )
    assert cloned.exit_code == 0, cloned.err
    found = agent.seek([*needles, answers["demo-caret-zero"].base_subject], mirror)
    leaked = {n: w for n, w in found["hits"].items() if n in needles}
    assert leaked == {}, f"the repository the world serves holds the answer: {leaked}"
    assert answers["demo-caret-zero"].base_subject in found["hits"]


def _forms(needle: str) -> set[str]:
    return {needle, json.dumps(needle)[1:-1], html.escape(needle), html.escape(needle, quote=False)}


def _canaries() -> list[str]:
    """Text the world held at T, one per service: proof the reads returned content."""
    snapshot = load_snapshot(load_case(CASES["demo-caret-zero"]).snapshot)
    github = json.loads(snapshot.github.model_dump_json())
    linear = json.loads(snapshot.linear.model_dump_json())
    slack = json.loads(snapshot.slack.model_dump_json())
    issue7 = next(i for i in github["issues"] if i["number"] == 7)
    eng15 = next(i for i in linear["issues"] if i["number"] == 15)
    thread = next(
        m for c in slack["channels"] for m in c["messages"] if m["ts"] == "1773246000.000500"
    )
    return [issue7["title"], eng15["title"], thread["text"][:60]]
