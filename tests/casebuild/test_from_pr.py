"""``case create`` from a merged pull request, read over HTTP from the GitHub fake (a world
cut after the merge, so the PR, its commits and the fix are all there)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from fakes.core import build_world
from replay import gitrepo
from replay.capture.common import CaptureError
from replay.capture.github import GitHubReader
from replay.casebuild.create import fix_source_from_pr, spec_from_fix
from replay.errors import InputError
from replay.snapshot import build_snapshot, load_snapshot
from tests import worlds
from tests.capture.serving import HostAs, serve

TOKEN = "ghp_frompr000000000000000000000000000000"


def test_case_from_merged_pr(tmp_path: Path) -> None:
    src = worlds.make_sources(tmp_path)
    later = tmp_path / "later"
    build_snapshot(src, later, datetime.fromisoformat("2026-03-20T00:00:00Z"))
    world = build_world(load_snapshot(later), services=("github",))
    try:
        with serve(HostAs(world, "api.github.com")) as gh:
            reader = GitHubReader(gh, TOKEN)
            try:
                fix = fix_source_from_pr(reader, gh, TOKEN, "acme/tiny", 3, tmp_path / "clone")
                with pytest.raises(CaptureError, match="pulls/1: 404"):  # an issue, not a PR
                    fix_source_from_pr(reader, gh, TOKEN, "acme/tiny", 1, tmp_path / "c2")
            finally:
                reader.close()
    finally:
        world.world.engine.dispose()
    subjects = gitrepo.run(fix.repo, "log", "--format=%s", f"{fix.base}..{fix.fix}")
    assert subjects == "Fix add (#3)"
    # The ticket is the issue the PR's body closes ("Fixes #1"), filed before the work began.
    assert (fix.issue_number, fix.ticket_title) == (1, "add() subtracts")
    assert fix.ticket_created == datetime.fromisoformat("2026-03-10T00:00:00Z")
    assert gitrepo.run(fix.repo, "show", f"{fix.fix}:lib.py").endswith("return a + b")
    # The tiny fix changes no test file: such a PR cannot become a case by itself.
    with pytest.raises(InputError, match="changes no test file"):
        spec_from_fix("tiny-add", fix)
