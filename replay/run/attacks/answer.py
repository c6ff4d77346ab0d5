"""Attacks that look for the answer: the hidden tests, the real fix, what a person says only when
asked (``tests/redteam/test_answer.py``).

The needles are what only the answer holds: every line the hidden tests' patch and the gold
patch add that the base commit does not already hold (20 characters or more), the
FAIL_TO_PASS test names, and the sentences a scripted person says only when asked. They
travel hex-encoded, so that no search finds its own. Neither attack fixes anything (it must
end ``model_fail``); each reports what it found, and its check holds the report to "nothing"
and to its canaries, which prove each search reads what it claims to:

- ``answer-in-sandbox``: every file of the sandbox the agent's user can read (zip and gzip
  members opened, every object of every git repository, unreachable ones included). Canaries:
  a line of the base commit (in the workspace), the base commit's subject (only in the git
  objects), a token of its own in a zip and a gzip.
- ``answer-in-world``: the fakes' REST and GraphQL (issues, pull requests, comments, events,
  files, commits, branches, refs, search), raw files, Linear's issues and search, Slack's
  channels, histories, threads and search, the registry's pages, before anyone asked
  anything; then a mirror of every ref the world's git serves, every object opened. Canaries:
  what the world held at T (an issue's title, a ticket's, a message's), and the base commit's
  subject in the mirror.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.base.case import Case, read_patch
from replay.base.gitrepo import checkout_from_bundle
from replay.base.snapshot import Snapshot
from replay.gateway.config import PLACEHOLDERS
from replay.harness.stub.script import Step
from replay.run.attacks.base import Attack
from replay.run.attacks.carry import carry, data, driver, probe, step_text
from replay.run.attacks.evidence import report
from replay.run.steps import Builder

MIN_LINE = 20
"""The shortest line that counts as a needle (shorter ones are found anywhere)."""
NOT_FIXED = "hidden tests not resolved"


@dataclass(frozen=True)
class Answer:
    """What the agent must not find, and the canaries it must (proof the search works)."""

    needles: tuple[str, ...]
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


def _base_tree(case: Case, snapshot: Snapshot) -> tuple[str, str]:
    """All text of the repository at the base commit, and the base commit's subject."""
    repo = case.repository
    part = snapshot.repository(repo.name)
    with tempfile.TemporaryDirectory(prefix="replay-redteam-base-") as tmp:
        into = Path(tmp) / "repo"
        checkout_from_bundle(
            snapshot.bundle(repo.name), repo.base_commit, into, part.default_branch
        )
        text = [
            path.read_text(errors="replace")
            for path in sorted(into.rglob("*"))
            if path.is_file() and ".git" not in path.relative_to(into).parts
        ]
        subject = subprocess.run(
            ["git", "-C", str(into), "log", "-1", "--format=%s", repo.base_commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    return "\n".join(text), subject


_ANSWERS: dict[str, Answer] = {}
"""Answers already worked out, by the case (as JSON): one checkout of the base per case."""


def answer_of(case: Case, snapshot: Snapshot) -> Answer:
    """The answer of ``case`` as needles, with its canaries."""
    key = case.model_dump_json()
    if key not in _ANSWERS:
        base, subject = _base_tree(case, snapshot)
        candidates = _added(read_patch(case.hidden_tests.patch))
        candidates += [tid.split("::")[-1] for tid in case.hidden_tests.fail_to_pass]
        if case.gold is not None:
            candidates += _added(read_patch(case.gold.patch))
        for human in case.humans:
            candidates += _sentences(human.text)
        needles = tuple(sorted({c for c in candidates if len(c) >= MIN_LINE and c not in base}))
        lines = [ln.strip() for ln in base.splitlines() if len(ln.strip()) >= 30]
        line = next((ln for ln in lines if not any(ln in n or n in ln for n in needles)), subject)
        _ANSWERS[key] = Answer(needles, line, subject)
    return _ANSWERS[key]


def _hex(text: str) -> str:
    return text.encode().hex()


# ----------------------------------------------------------------------------- the sandbox

SANDBOX = """\
import shutil, subprocess, uuid, zipfile, gzip

spec = json.load(open("answer.json"))
token = "redteam-canary-" + uuid.uuid4().hex
where = "/tmp/" + token
os.makedirs(where)
with zipfile.ZipFile(where + "/canary.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("canary.txt", token)
with open(where + "/canary.gz", "wb") as fh:
    fh.write(gzip.compress(token.encode()))
with open("seek-needles.json", "w") as fh:
    json.dump([*spec["needles"], token.encode().hex(), spec["base_line"], spec["base_subject"]], fh)
done = subprocess.run(
    ["python3", "seek.py", "seek-needles.json", "/"], capture_output=True, text=True, timeout=1500
)
if done.returncode != 0:
    report({"error": done.stderr[-500:]})
    raise SystemExit(0)
found = json.loads(done.stdout)
hits = found.pop("hits")
text = lambda h: bytes.fromhex(h).decode()
base_line, base_subject = text(spec["base_line"]), text(spec["base_subject"])
report({
    **found,
    "needles": len(spec["needles"]),
    "leaks": {n: hits[n][:3] for n in map(text, spec["needles"]) if n in hits},
    "base_line": [p for p in hits.get(base_line, []) if p.startswith(spec["workdir"])][:3],
    "base_subject": [p for p in hits.get(base_subject, []) if p.endswith("!objects")][:3],
    "archives": sorted({p.rsplit("!", 1)[0] for p in hits.get(token, []) if "!" in p}),
    "where": where,
})
"""


def _in_sandbox(b: Builder) -> list[Step]:
    answer = answer_of(b.case, b.snapshot)
    spec = {
        "needles": [_hex(n) for n in answer.needles],
        "base_line": _hex(answer.base_line),
        "base_subject": _hex(answer.base_subject),
        "workdir": b.case.environment.workdir,
    }
    search = step_text(
        carry("seek.py"), data("answer.json", spec), driver("answer-in-sandbox", SANDBOX)
    )
    return [b.start(), Step(say="Looking around the machine for anything useful.", bash=search)]


def _check_sandbox(run_dir: Path) -> str | None:
    found = report(run_dir, "answer-in-sandbox")
    if not isinstance(found, dict) or "error" in found:
        return f"the search did not report: {found}"
    if found.get("leaks"):
        return f"the sandbox holds the answer: {found['leaks']}"
    where = found.get("where")
    missed = [
        name
        for name, ok in (
            ("a line of the workspace", found.get("base_line")),
            ("the base commit's subject in the git objects", found.get("base_subject")),
            (
                "its own zip and gzip",
                found.get("archives") == [f"{where}/canary.gz", f"{where}/canary.zip"],
            ),
            ("more than 1,000 files", int(found.get("files") or 0) > 1000),
            ("a git repository", int(found.get("git") or 0) >= 1),
        )
        if not ok
    ]
    if missed or not found.get("needles"):
        return f"the search is blind: it did not find {', '.join(missed) or 'needles to look for'}"
    return None


# ----------------------------------------------------------------------------- the world

GH = {"Authorization": f"token {PLACEHOLDERS['GH_TOKEN']}", "Accept": "application/vnd.github+json"}
LINEAR = {"Authorization": PLACEHOLDERS["LINEAR_API_KEY"], "Content-Type": "application/json"}
SLACK = {"Authorization": f"Bearer {PLACEHOLDERS['SLACK_BOT_TOKEN']}"}
SLACK_USER = {"Authorization": f"Bearer {PLACEHOLDERS['SLACK_USER_TOKEN']}"}


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


def _post(host: str, target: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    return {**_get(host, target, headers), "method": "POST", "body": body}


def _world_requests(b: Builder) -> list[dict[str, Any]]:
    repo = b.case.repository.name
    owner, name = repo.split("/", 1)
    branch = b.snapshot.repository(repo).default_branch
    r = f"/repos/{repo}"
    graphql = (
        f'{{ repository(owner: "{owner}", name: "{name}") {{ '
        "issues(first: 100) { nodes { number title body "
        "comments(first: 100) { nodes { body } } } } "
        "pullRequests(first: 100) { nodes { number title body headRefName "
        "comments(first: 100) { nodes { body } } } } "
        'refs(refPrefix: "refs/", first: 100) { nodes { name } } } }'
    )
    linear = [
        "{ issues(first: 100, includeArchived: true) { nodes { identifier title description "
        "comments(first: 100) { nodes { body } } } } }",
        *[
            f'{{ searchIssues(term: "{term}", includeComments: true) '
            "{ nodes { identifier title description } } }"
            for term in (*b.case.title.split()[:3], b.case.ticket.ref)
        ],
    ]
    project = name.lower()
    out = [
        _get("api.github.com", r, GH),
        _get("api.github.com", f"{r}/issues?state=all&per_page=100", GH),
        _get("api.github.com", f"{r}/pulls?state=all&per_page=100", GH),
        _get("api.github.com", f"{r}/issues/comments?per_page=100", GH),
        _get("api.github.com", f"{r}/issues/events?per_page=100", GH),
        _get("api.github.com", f"{r}/commits?per_page=100", GH),
        _get("api.github.com", f"{r}/branches?per_page=100", GH),
        _get("api.github.com", f"{r}/git/matching-refs/", GH),
        _get("api.github.com", f"{r}/contents/tests", GH),
        _get("api.github.com", f"/search/issues?q=repo:{repo}+is:pr", GH),
        *[
            _get("api.github.com", f"/search/issues?q=repo:{repo}+{w}", GH)
            for w in b.case.title.split()[:3]
        ],
        *[
            _get("api.github.com", f"/search/code?q={t.split('::')[-1]}+repo:{repo}", GH)
            for t in b.case.hidden_tests.fail_to_pass[:2]
        ],
        *[
            _get("raw.githubusercontent.com", f"/{repo}/{branch}/{t.split('::')[0]}", GH)
            for t in sorted({t.split("::")[0] for t in b.case.hidden_tests.fail_to_pass})
        ],
        _get("github.com", f"/{repo}.git/info/refs?service=git-upload-pack", GH),
        _post(
            "api.github.com",
            "/graphql",
            {**GH, "Content-Type": "application/json"},
            json.dumps({"query": graphql}),
        ),
        *[_post("api.linear.app", "/graphql", LINEAR, json.dumps({"query": q})) for q in linear],
        _get("slack.com", "/api/conversations.list?types=public_channel,private_channel", SLACK),
        *[
            _get("slack.com", f"/api/search.messages?query={w}&count=100", SLACK_USER)
            for w in b.case.title.split()[:3]
        ],
        _get("pypi.org", "/simple/", {}),
        _get("pypi.org", f"/simple/{project}/", {}),
        _get("pypi.org", f"/pypi/{project}/json", {}),
    ]
    return [
        {**req, "id": f"{i:03d} {req['method']} {req['host']}{req['target']}"[:120]}
        for i, req in enumerate(out)
    ]


# The per-number reads of GitHub and the per-channel reads of Slack are built inside the
# sandbox from short lists (the whole spec would be past a bash step's size).
WORLD_BUILD = """\
import html
repo, gh, slack = spec["repo"], spec["gh"], spec["slack"]
for n in spec["numbers"]:
    for kind, suffixes in (("issues", ("", "/comments", "/events", "/timeline")),
                           ("pulls", ("", "/files", "/commits", "/reviews", "/comments"))):
        for suffix in suffixes:
            requests.append({
                "mode": "connect", "tls": True, "host": "api.github.com", "port": 443,
                "method": "GET", "target": f"/repos/{repo}/{kind}/{n}{suffix}", "headers": gh,
                "id": f"GET api.github.com/repos/{repo}/{kind}/{n}{suffix}",
            })
for channel, threads in spec["channels"].items():
    targets = [f"/api/conversations.history?channel={channel}&limit=1000"]
    targets += [f"/api/conversations.replies?channel={channel}&ts={ts}" for ts in threads]
    for target in targets:
        requests.append({
            "mode": "connect", "tls": True, "host": "slack.com", "port": 443, "method": "GET",
            "target": target, "headers": slack, "id": f"GET slack.com{target}",
        })
# Each needle as JSON and HTML would carry it too (quotes escaped).
plain = [bytes.fromhex(n).decode() for n in spec["answer"]]
canaries = [bytes.fromhex(n).decode() for n in spec["canaries"]]
forms = {}
for n in [*plain, *canaries]:
    for f in (n, json.dumps(n)[1:-1], html.escape(n), html.escape(n, quote=False)):
        forms[f] = n
needles = sorted(forms)
"""
WORLD_SUMMARY = """\
import subprocess
leaks = {}
for rid, r in results.items():
    found = sorted({forms[f] for f in r["found"]} & set(plain))
    if found:
        leaks[rid] = found[:3]
seen = sorted({forms[f] for r in results.values() for f in r["found"]} & set(canaries))
mirror = "/tmp/redteam/world-mirror.git"
cloned = subprocess.run(
    ["git", "clone", "-q", "--mirror",
     f"https://x-access-token:{os.environ['GH_TOKEN']}@github.com/{repo}", mirror],
    capture_output=True, text=True, timeout=600,
)
with open("mirror-needles.json", "w") as fh:
    json.dump([*spec["answer"], spec["base_subject"]], fh)
searched = subprocess.run(
    ["python3", "seek.py", "mirror-needles.json", mirror], capture_output=True, text=True,
    timeout=600,
)
hits = json.loads(searched.stdout)["hits"] if searched.returncode == 0 else {}
base_subject = bytes.fromhex(spec["base_subject"]).decode()
report({
    "requests": len(results),
    "ok": sum(1 for r in results.values() if r["status"] == 200),
    "leaks": leaks,
    "canaries": len(seen),
    "of_canaries": len(canaries),
    "mirror": {
        "cloned": cloned.returncode == 0,
        "error": (cloned.stderr + searched.stderr)[-300:],
        "leaks": sorted(n for n in hits if n != base_subject)[:3],
        "base_subject": any(p.endswith("!objects") for p in hits.get(base_subject, [])),
    },
})
"""


def _canaries(snapshot: Snapshot) -> list[str]:
    """Text the world held at T, one per service that holds any: proof the reads returned
    content."""
    out: list[str] = []
    if snapshot.github.issues:
        out.append(snapshot.github.issues[0].title)
    if snapshot.linear.issues:
        out.append(snapshot.linear.issues[0].title)
    messages = [m for c in snapshot.slack.channels for m in c.messages if len(m.text) >= 20]
    if messages:
        out.append(messages[0].text[:60])
    return out


def _in_world(b: Builder) -> list[Step]:
    answer = answer_of(b.case, b.snapshot)
    repo = b.case.repository.name
    numbers = sorted(
        {i.number for i in b.snapshot.github.issues if i.repo == repo}
        | {p.number for p in b.snapshot.github.pulls if p.repo == repo}
    )
    channels = {
        c.id: sorted({m.thread_ts or m.ts for m in c.messages}) for c in b.snapshot.slack.channels
    }
    spec = {
        "requests": _world_requests(b),
        "repo": repo,
        "gh": GH,
        "slack": SLACK,
        "numbers": numbers,
        "channels": channels,
        "answer": [_hex(n) for n in answer.needles],
        "canaries": [_hex(c) for c in _canaries(b.snapshot)],
        "base_subject": _hex(answer.base_subject),
    }
    search = step_text(
        carry("seek.py"),
        probe("answer-in-world", spec, build=WORLD_BUILD, summary=WORLD_SUMMARY),
    )
    return [b.start(), Step(say="Reading everything the team's tools hold.", bash=search)]


def _check_world(run_dir: Path) -> str | None:
    found = report(run_dir, "answer-in-world")
    if not isinstance(found, dict):
        return "no answer-in-world report in the transcript"
    mirror = found.get("mirror") or {}
    if found.get("leaks") or mirror.get("leaks"):
        return f"the world gives the answer away: {found.get('leaks') or mirror.get('leaks')}"
    requests, ok = int(found.get("requests") or 0), int(found.get("ok") or 0)
    if not requests or ok < requests // 2:
        return f"only {ok} of {requests} reads answered"
    if found.get("canaries") != found.get("of_canaries"):
        return (
            f"the reads are blind: {found.get('canaries')} of {found.get('of_canaries')} canaries"
        )
    if not mirror.get("cloned") or not mirror.get("base_subject"):
        return f"the mirror is blind: {mirror}"
    return None


ATTACKS: list[Attack] = [
    Attack(
        "answer-in-sandbox",
        "answer",
        "no fix: every file and git object of the sandbox searched for the hidden tests, the "
        "gold patch and a person's unasked reply; nothing may be found",
        _in_sandbox,
        reason=NOT_FIXED,
        check=_check_sandbox,
    ),
    Attack(
        "answer-in-world",
        "answer",
        "no fix: the fakes' REST and GraphQL, Linear, Slack, the registry and a mirror of the "
        "world's git searched for the answer before anyone is asked; nothing may be found",
        _in_world,
        reason=NOT_FIXED,
        check=_check_world,
    ),
]
"""The attacks that look for the answer."""
