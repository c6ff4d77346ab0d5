"""The runner's own git in the agent's repository: nothing the agent planted runs or bends it.

The agent owns its repository, so it can write ``.git/config``, hooks, ``.gitattributes`` and
``$HOME/.gitconfig``. Each plant is first shown to work (a plain ``git`` in the sandbox runs it:
the control), then the runner's final diff is taken and the plant must not have run at all,
as root or otherwise, while the agent's real change is in the diff.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from replay.run.runner import _copy_out, _final_diff
from replay.runtime import Runtime
from replay.runtime.sandbox import ROOT, Sandbox
from tests.runtime.conftest import SMALL, sandbox

MARK = "/tmp/planted-ran"
HOOK = f"#!/bin/sh\nid -u >> {MARK}\n"
PLANTS = f"""
set -e
cd /workspace
printf '{HOOK}' > /tmp/hook.sh && chmod +x /tmp/hook.sh
git config core.fsmonitor /tmp/hook.sh
mkdir -p .git/hooks && cp /tmp/hook.sh .git/hooks/post-index-change
git config diff.external /tmp/hook.sh
git config filter.evil.clean '/tmp/hook.sh; cat'
git config diff.evil.textconv '/tmp/hook.sh; cat'
git config --global core.fsmonitor /tmp/hook.sh
printf '*.py filter=evil diff=evil\\n' > .git/info/attributes
printf 'def answer():\\n    return 42\\n' > pkg/core.py
printf 'new file\\n' > pkg/added.txt
"""


def case(base: str) -> Any:
    return SimpleNamespace(
        environment=SimpleNamespace(workdir="/workspace"),
        repository=SimpleNamespace(base_commit=base),
    )


def marks(box: Sandbox) -> list[str]:
    return box.sh(f"cat {MARK} 2>/dev/null; rm -f {MARK}", user=ROOT).out.split()


def test_planted_git_config_runs_nothing_when_the_runner_takes_the_diff(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    image, base = workspace_image
    with sandbox(runtime, gateway, image, limits=SMALL) as box:
        planted = box.sh(PLANTS)
        assert planted.exit_code == 0, planted.err
        # The controls: the agent's own git runs the plants as the agent, and a runner that
        # ran plain git as root (trusting the directory) would have run them as root.
        assert box.sh("git status --short >/dev/null && git diff >/dev/null").exit_code == 0
        assert set(marks(box)) == {"1000"}
        naive = "git -c safe.directory='*' add -A && git -c safe.directory='*' diff HEAD"
        assert box.sh(naive, user=ROOT).exit_code == 0
        assert set(marks(box)) == {"0"}
        assert (
            box.sh(
                "git -c safe.directory='*' reset -q; chown -R 1000:1000 /workspace", user=ROOT
            ).exit_code
            == 0
        )
        marks(box)

        diff = _final_diff(box, case(base), tmp_path)
        assert marks(box) == []
        assert "-    return 41\n+    return 42\n" in diff
        assert "+new file\n" in diff and "pkg/added.txt" in diff
        assert not (tmp_path / "diff-error.txt").exists()


def test_the_agents_processes_are_gone_before_the_diff(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    image, base = workspace_image
    count = "grep -l '^Uid:.*1000' /proc/[0-9]*/status 2>/dev/null | wc -l"
    with sandbox(runtime, gateway, image, limits=SMALL) as box:
        # A process left behind that would rewrite the tree while the runner reads it.
        loop = "while :; do echo tampered > /workspace/late.txt; sleep 0.1; done"
        assert box.sh(f"sh -c '{loop}' >/dev/null 2>&1 & sleep 0.5").exit_code == 0
        assert int(box.sh(count, user=ROOT).out) >= 1
        _final_diff(box, case(base), tmp_path)
        assert int(box.sh(count, user=ROOT).out) == 0
        gone = box.sh("rm -f /workspace/late.txt; sleep 0.5; test ! -e /workspace/late.txt")
        assert gone.exit_code == 0
        # The runner's own processes (the gateway forwarder, root's) are still there.
        assert "forward.py" in box.sh("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").out


def test_a_broken_repository_gives_an_empty_diff_not_an_infra_failure(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    image, base = workspace_image
    with sandbox(runtime, gateway, image, limits=SMALL) as box:
        assert box.sh("rm -rf /workspace/.git").exit_code == 0
        assert _final_diff(box, case(base), tmp_path) == ""
        assert "failed" in (tmp_path / "diff-error.txt").read_text()


def test_a_diff_past_its_cap_is_no_diff_and_the_cut_is_counted(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    image, base = workspace_image
    with sandbox(runtime, gateway, image, limits=SMALL) as box:
        assert box.sh("seq 1 100000 > /workspace/pkg/big.txt").ok
        assert "big.txt" in _final_diff(box, case(base), tmp_path, cap=1_000_000)
        cuts: dict[str, int] = {}
        assert _final_diff(box, case(base), tmp_path, cuts=cuts, cap=100_000) == ""
        assert cuts["diff.patch"] > 400_000
        assert "the diff is larger than the cap" in (tmp_path / "diff-error.txt").read_text()


def test_a_transcript_that_links_out_is_not_followed(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    with sandbox(runtime, gateway, workspace_image[0], limits=SMALL) as box:
        made = box.sh("mkdir -p /tmp/run && ln -s /etc/passwd /tmp/run/transcript.jsonl")
        assert made.exit_code == 0, made.err
        assert _copy_out(box, "/tmp/run/transcript.jsonl", tmp_path) == 0
        out = tmp_path / "transcript.jsonl"
        assert not out.exists() and not out.is_symlink()
        why = (tmp_path / "transcript-error.txt").read_text()
        assert "/tmp/run/transcript.jsonl is a symlink in the sandbox" in why
        # The control: a regular file comes out.
        assert box.sh("rm /tmp/run/transcript.jsonl && echo '{}' > /tmp/run/t2.jsonl").ok
        _copy_out(box, "/tmp/run/t2.jsonl", tmp_path)
        assert (tmp_path / "t2.jsonl").read_text() == "{}\n"


def test_the_run_files_are_the_agents_and_dated_t(
    runtime: Runtime,
    gateway: dict[str, Any],
    workspace_image: tuple[str, str],
    run_root: Path,
    tmp_path: Path,
) -> None:
    """``_prepare`` and the harness files as a run gets them, with the clock at T."""
    from replay.base.case import load_case
    from replay.harness.spec import load_harness
    from replay.run.runner import RUN_FILES, _harness_files, _prepare
    from replay.snapshot import load_snapshot
    from tests.runtime.test_confinement import T

    root = Path(__file__).resolve().parents[2]
    case = load_case(root / "cases" / "demo-caret-zero" / "case.yaml")
    env = case.environment.model_copy(update={"workdir": "/workspace"})
    case = case.model_copy(update={"environment": env})
    spec, spec_dir = load_harness("reference")
    mounts = _harness_files(spec, spec_dir, tmp_path, T)
    with sandbox(
        runtime, gateway, workspace_image[0], limits=SMALL, clock_at=T, mounts=mounts
    ) as box:
        _prepare(box, case, load_snapshot(case.snapshot), tmp_path)
        files = f"{RUN_FILES}/task.md {RUN_FILES} /tmp $HOME $HOME/.gitconfig .git/config"
        seen = box.sh(f"stat -c '%u %Y %n' {files} /opt/harness $(find /opt/harness -type f)")
        assert seen.exit_code == 0, seen.err
        rows = [line.split() for line in seen.out.splitlines()]
        assert len(rows) >= 5
        for uid, mtime, name in rows:
            assert int(mtime) <= T.timestamp(), (name, mtime)
            roots = name == "/tmp" or name.startswith("/opt/harness")
            assert uid == ("0" if roots else "1000"), name
        assert box.sh("git config --global user.email").out.endswith("@users.noreply.github.com\n")
        assert box.sh("git remote get-url origin").out.startswith("https://github.com/")
        wrote = box.sh("touch /opt/harness/x")
        assert wrote.exit_code != 0 and "Read-only" in wrote.err, wrote.err
