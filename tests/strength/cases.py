"""Cases built for the strength tests from the demo repository's history (acme/semverkit at
the base commit of every demo case).

The gold patch fixes two behaviours at once: caret ranges on 0.x versions (the fix of
``demo-caret-zero``) and the order of numeric prerelease identifiers (the fix of
``demo-prerelease-order``), plus one line of dead code after a ``return``. The *strong*
case's hidden tests check both behaviours; the *weak* one's check only the caret ranges, as a
hidden test set recovered from half a fix would. Both keep the demo case's id, snapshot and
environment, so they grade in its environment image (the same recipe: no new image).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from replay.base import gitrepo
from replay.base.case import load_case, read_patch
from replay.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
PRERELEASE = ROOT / "cases" / "demo-prerelease-order" / "case.yaml"
DEAD = "    return _cmp(x, y)\n"
"""The line of the prerelease fix the dead code goes after."""
DEAD_CODE = "    return 0  # unreachable: kept from an earlier draft\n"


def gold_patch(work: Path) -> str:
    """Both fixes, and one dead line after a return, as one patch from the base commit."""
    caret = load_case(CARET)
    repo = load_snapshot(caret.snapshot).restore(caret.repository.name, work / "repo")
    for case in (CARET, PRERELEASE):
        gitrepo.run(repo, "apply", str(load_case(case).gold.patch))
    version = repo / "src" / "semverkit" / "version.py"
    text = version.read_text()
    assert text.count(DEAD) == 1, "the prerelease fix has one `return _cmp(x, y)`"
    version.write_text(text.replace(DEAD, DEAD + DEAD_CODE))
    gitrepo.run(repo, "add", "-A")
    return gitrepo.run_exact(repo, "diff", "--cached", caret.repository.base_commit)


def write_case(dest: Path, gold: str, *, strong: bool) -> Path:
    """A copy of the caret case at ``dest`` with the two-behaviour gold patch; its hidden
    tests check both behaviours when ``strong``, the caret ranges alone otherwise."""
    dest.mkdir(parents=True)
    data = yaml.safe_load(CARET.read_text())
    caret, prerelease = load_case(CARET), load_case(PRERELEASE)
    data["snapshot"] = str(caret.snapshot)
    (dest / "gold.patch").write_text(gold)
    hidden = read_patch(caret.hidden_tests.patch)
    fail, passing = list(caret.hidden_tests.fail_to_pass), list(caret.hidden_tests.pass_to_pass)
    if strong:
        hidden += read_patch(prerelease.hidden_tests.patch)
        fail += prerelease.hidden_tests.fail_to_pass
        passing += [t for t in prerelease.hidden_tests.pass_to_pass if t not in passing]
    (dest / "hidden_tests.patch").write_text(hidden)
    data["hidden_tests"].update(fail_to_pass=fail, pass_to_pass=passing)
    path = dest / "case.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def dead_line(gold: str) -> int:
    """The line of version.py (with the gold patch) that holds the dead code."""
    section = gold.split("diff --git a/src/semverkit/version.py")[1].split("diff --git")[0]
    line = 0
    for text in section.splitlines():
        hunk = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)", text)
        if hunk:
            line = int(hunk.group(1))
        elif line and text == "+" + DEAD_CODE.rstrip("\n"):
            return line
        elif line and not text.startswith("-"):
            line += 1
    raise AssertionError("the gold patch has no dead code")
