"""Issue 16, must show: a case built from a real repository's history with ``case create``
naming only the test requirements (no pins, no build backend, no setup, the default test
command), on the interpreter of T, calibrated.

The history is tomli's own (hukkin/tomli, MIT), from the shared git store the shipped tomli
cases travel in: it holds the real fix 1759a41 (July 2021: a bare carriage return accepted in
a multi-line basic string) because a later tomli case's base comes after it. The registry is
recorded from a loopback index serving the real PyPI files the shipped case recorded (their
real upload times; the recorder picks as of T among them): nothing leaves the machine.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from packaging.version import Version

from replay.base import gitrepo
from replay.base.case import load_case
from replay.base.sharedgit import blob_root
from replay.casebuild.create import FixSource, create_case
from replay.casebuild.environment import Wanted
from replay.registry.serve import Registry, registry_app
from replay.run.calibrate import calibrate
from replay.run.runner import RunOptions
from replay.runtime import get_runtime
from replay.snapshot import load_snapshot
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "cases" / "tomli-multiline-cr" / "case.yaml"
STORE = ROOT / "snapshots" / "blobs" / "git" / "hukkin" / "tomli.git"
FIX = "1759a41480868fd2d60ab68f68b5439aada4e5e5"


def test_case_create_from_real_history_derives_its_environment_as_of_t(tmp_path: Path) -> None:
    shipped = load_case(SHIPPED)
    assert shipped.provenance is not None and shipped.provenance.fix_commit == FIX
    repo = tmp_path / "tomli"
    gitrepo.run(tmp_path, "clone", "-q", "--no-checkout", str(STORE), str(repo))
    gitrepo.run(repo, "cat-file", "-e", f"{FIX}^{{commit}}")  # the real fix, real SHA

    registry = Registry.from_snapshot(load_snapshot(shipped.snapshot))
    with serving(registry_app(registry)) as url:
        src = FixSource(
            repo=repo,
            fix=FIX,
            repo_name="hukkin/tomli",
            ticket_title=shipped.title,
            ticket_body="A bare CR inside a multi-line basic string is accepted.",
            ticket_created=datetime.fromisoformat("2021-07-30T08:00:00Z"),
            wanted=Wanted(requires=("-r tests/requirements.txt",), index_url=f"{url}/simple"),
        )
        runtime = get_runtime("docker")
        try:
            path, lists = create_case("tomli-cr", src, tmp_path / "case", runtime)
        finally:
            runtime.close()

    case = load_case(path)
    # The interpreter of T: Debian bullseye's Python 3.9 (bookworm came out in 2023).
    assert case.environment.base_image == "replay-base:bullseye"
    # Nothing named but the test requirements: the setup is derived, the command the default.
    assert case.environment.setup == ["python -m pip install . -r tests/requirements.txt"]
    assert case.hidden_tests.command.startswith("python -m pytest -q -o cache_dir=")
    # The registry holds what pip at T chose: the project's build backend, final releases,
    # each with its reason (the pre-releases PyPI had then are tests/registry's business: this
    # index serves only the files the shipped case recorded).
    index = json.loads((path.parent / "sources" / "registry" / "index.json").read_text())
    chosen = {(f["project"], f["version"]): f.get("chosen_because", "") for f in index["python"]}
    assert "build requirement of the project" in chosen["flit-core", "3.2.0"]
    assert "newest final release at T" in chosen["pluggy", "0.13.1"]
    versions = {p: v for p, v in chosen}
    assert versions["pytest"] == "6.2.4" and versions["py"] == "1.10.0"
    assert all(not Version(v).is_prerelease for v in versions.values())
    # The measured lists agree with the shipped case's.
    assert lists.fail_to_pass == shipped.hidden_tests.fail_to_pass
    # Calibrated: the gold patch passes and doing nothing fails, every time.
    options = RunOptions(out=tmp_path / "runs", db=str(tmp_path / "results.db"))
    result = calibrate(path, options, runs=2)
    assert result.calibrated, [r.reason for r in [*result.gold, *result.idle]]
    assert blob_root(None) != ROOT / "snapshots" / "blobs"  # nothing written into the checkout
