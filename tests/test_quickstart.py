"""The README's quickstart, run as written (issue 35): every command of its ``sh`` blocks, in
order, from a folder laid out as the repository's root.

Three things are put in place of what a user has and a test may not reach, each by a stated
rule and nothing else: the real model's calls go to the stub model playing the case's gold
trajectory on loopback (``--model-upstream``, or ``model_upstream=`` in an inline candidate);
"your repository" is a small one with a real fix (tests/casebuild/repos.py), its placeholders
``../mylib`` and ``1a2b3c4`` replaced by its path and fix commit; and the package index is the
demo's frozen registry on loopback (``--index-url``). Results, runs and blobs stay in the
test's folder.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.harness.spec import load_harness
from replay.harness.stub.app import StubConfig, make_stub_app
from replay.registry.serve import Registry, registry_app
from replay.run.runner import _StubServer
from replay.run.trajectories import build_script
from replay.snapshot import load_snapshot
from tests.casebuild.repos import shapes_repo
from tests.cli_helpers import run_cli
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def quickstart_commands() -> list[list[str]]:
    """The commands of the README's Quickstart section, each split as a shell would."""
    text = README.read_text(encoding="utf-8")
    section = text.partition("\n## Quickstart\n")[2].partition("\n## ")[0]
    assert section, "the README has no Quickstart section"
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def test_the_readme_quickstart_has_the_three_jobs() -> None:
    verbs = [" ".join(c[:3]) for c in quickstart_commands()]
    assert verbs == [
        "export OPENAI_API_KEY=sk-your-key",
        "replay run cases/demo-caret-zero/case.yaml",
        "replay results list",
        "replay view --export",
        "replay case calibrate",
        "replay compare cases/demo-caret-zero/case.yaml",
        "replay case create",
        "replay case calibrate",
    ]


def _folder(tmp: Path) -> Path:
    """A folder laid out as the repository's root: its cases, docs and snapshots, a case folder
    of its own to write into, and a blob store whose files are the repository's."""
    work = tmp / "work"
    (work / "cases").mkdir(parents=True)
    for case in (ROOT / "cases").iterdir():
        if case.is_dir():
            (work / "cases" / case.name).symlink_to(case)
    (work / "docs").symlink_to(ROOT / "docs")
    (work / "snapshots").symlink_to(ROOT / "snapshots")
    blobs = tmp / "blobs"
    (blobs / "git").mkdir(parents=True)
    (blobs / "sha256").symlink_to(ROOT / "snapshots" / "blobs" / "sha256")
    return work


def test_the_readme_quickstart_runs_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _folder(tmp_path)
    monkeypatch.chdir(work)
    monkeypatch.setenv("REPLAY_DB", str(work / ".replay" / "results.db"))
    monkeypatch.setenv("REPLAY_BLOBS", str(tmp_path / "blobs"))
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='mylib', version='0.1', "
        "py_modules=['shapes'])\n",
        "LICENSE": "MIT License\n",
    }
    repo, _, fix = shapes_repo(tmp_path / "mylib", files=files)
    spec, _ = load_harness("reference")
    caret = load_case(ROOT / "cases" / "demo-caret-zero" / "case.yaml")
    gold = spec.stub.apply(build_script(caret, load_snapshot(caret.snapshot), "gold"))
    registry = Registry.from_snapshot(load_snapshot(ROOT / "snapshots" / "demo"))
    said: list[str] = []
    with _StubServer() as model, serving(registry_app(registry)) as index:
        model.app = make_stub_app(StubConfig(script=gold))
        for words in quickstart_commands():
            if words[0] == "export":
                name, _, value = words[1].partition("=")
                monkeypatch.setenv(name, value)
                continue
            assert words[0] == "replay", words
            args = [w.replace("../mylib", str(repo)).replace("1a2b3c4", fix) for w in words[1:]]
            if args[0] == "run" and "--model" in args:
                args += ["--model-upstream", model.url]
            if args[0] == "compare":
                args = [
                    f"{a},model_upstream={model.url}" if a.startswith("name=") else a for a in args
                ]
            if args[:2] == ["case", "create"]:
                args += ["--index-url", f"{index}/simple/"]
            result = run_cli(capsys, *args)
            said.append(f"$ replay {' '.join(args)}\n{result.out}{result.err}")
            assert result.code == 0, "\n".join(said)
    out = "\n".join(said)
    # The case replayed with "your model" passed its three runs, and is listed.
    assert "3/3 healthy runs passed" in said[0], said[0]
    assert "demo-caret-zero" in said[1]
    # The viewer's pages were written, one per run among them.
    assert (work / "viewer" / "index.html").is_file()
    assert len(list((work / "viewer").rglob("*.html"))) >= 4, sorted((work / "viewer").rglob("*"))
    # The comparison ran both candidates and wrote its report.
    assert "calibrated" in said[3], said[3]
    assert (work / "compare.html").is_file()
    assert "now" in said[4] and "next" in said[4], said[4]
    assert re.search(r"^verdict: (ship|dont_ship|inconclusive)$", said[4], re.M), said[4]
    # The case made from "your repository" calibrated.
    made = work / "cases" / "mylib-area" / "case.yaml"
    assert made.is_file(), out
    assert load_case(made).hidden_tests.fail_to_pass == [
        "tests/test_shapes.py::test_area_multiplies"
    ]
    assert "calibrated" in said[6], said[6]
    assert os.environ["OPENAI_API_KEY"] == "sk-your-key"
