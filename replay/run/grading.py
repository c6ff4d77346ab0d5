"""Running the hidden tests outside the agent's workspace.

A fresh container from the case's environment image, with no network at all: the repository
is reset to the base commit, the agent's diff applied (``git apply``, then ``--3way``, then
``patch --fuzz``, resetting between attempts), every file the hidden tests touch restored to
the base commit so the agent cannot have shaped them, the hidden tests applied, and the test
command run ``repeat`` times. Each repeat's JUnit XML and exit status go to the verdict.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from replay.case import Case
from replay.grade import TestVerdict, judge
from replay.runtime.base import Container, ContainerSpec, Limits, Runtime, SandboxError

GRADE_DIR = "/tmp/replay-grade"
APPLY = """\
set -u
cd {workdir}
reset() {{ git reset -q --hard {base} && git clean -fdq; }}
reset
if [ -s {diff} ]; then
  git apply --binary {diff} 2>/dev/null && echo applied=apply && exit 0
  reset; git apply --binary --3way {diff} 2>/dev/null && echo applied=3way && exit 0
  reset; patch -p1 --batch --fuzz=3 --no-backup-if-mismatch < {diff} >/dev/null 2>&1 \\
    && echo applied=fuzz && exit 0
  reset; echo applied=none; exit 3
fi
echo applied=empty
"""
RESTORE = """\
set -eu
cd {workdir}
for f in {files}; do
  if git cat-file -e {base}:"$f" 2>/dev/null
  then git checkout -q {base} -- "$f"
  else rm -f "$f"
  fi
done
git apply --binary {hidden}
"""


@dataclass(frozen=True)
class Grading:
    verdict: TestVerdict
    applied: str
    """How the agent's diff went in: apply, 3way, fuzz, empty, or none (it did not apply)."""
    outputs: list[str]
    reports: list[bytes | None]


class GradingError(Exception):
    """The grading sandbox itself failed (not the agent's work): an infrastructure failure."""


def files_of_patch(patch: str) -> list[str]:
    """Paths a unified diff touches (both sides of a rename)."""
    found: list[str] = []
    for line in patch.splitlines():
        m = re.match(r"^diff --git a/(.+?) b/(.+)$", line)
        if m:
            for path in m.groups():
                if path not in found:
                    found.append(path)
    return found


def grade_hidden_tests(
    runtime: Runtime, image: str, case: Case, diff: str, run_id: str, *, timeout: float = 1800
) -> Grading:
    workdir = case.environment.workdir
    base = case.repository.base_commit
    hidden = case.hidden_tests.patch.read_text()
    spec = ContainerSpec(
        image=image,
        command=["sleep", "infinity"],
        workdir=workdir,
        limits=Limits(cpus=2.0, memory=4 * 1024**3, pids=2048, wall_time=timeout + 300),
        labels={"replay.role": "grade", "replay.case": case.id},
    )
    container = runtime.create(spec, run_id)
    try:
        with tempfile.TemporaryDirectory(prefix="replay-grade-") as tmp:
            stage = Path(tmp) / posixpath.basename(GRADE_DIR)
            stage.mkdir()
            (stage / "agent.diff").write_text(diff)
            (stage / "hidden.patch").write_text(hidden)
            container.copy_in(stage, posixpath.dirname(GRADE_DIR))
        diff_in, hidden_in = f"{GRADE_DIR}/agent.diff", f"{GRADE_DIR}/hidden.patch"
        applied = container.exec(
            ["bash", "-c", APPLY.format(workdir=shlex.quote(workdir), base=base, diff=diff_in)],
            timeout=300,
        )
        how = applied.out.strip().rpartition("applied=")[2] or "none"
        if applied.exit_code not in (0, 3):
            raise GradingError(f"resetting the repository failed: {applied.err[-500:]}")
        files = " ".join(shlex.quote(f) for f in files_of_patch(hidden))
        restored = container.exec(
            [
                "bash",
                "-c",
                RESTORE.format(
                    workdir=shlex.quote(workdir), base=base, files=files, hidden=hidden_in
                ),
            ],
            timeout=300,
        )
        if not restored.ok:
            raise GradingError(f"the hidden tests did not apply: {restored.err[-1000:]}")
        junit = case.hidden_tests.junit_xml
        command = case.hidden_tests.command.replace("{junit}", shlex.quote(junit))
        reports: list[bytes | None] = []
        codes: list[int] = []
        outputs: list[str] = []
        for _ in range(case.hidden_tests.repeat):
            # A report left from before (or planted by the diff) must not count.
            result = container.exec(
                ["bash", "-c", f"rm -f {shlex.quote(junit)}; {command}"], timeout=timeout
            )
            if result.limit is not None or result.exit_code is None:
                raise GradingError(f"the hidden tests hit the {result.limit or 'time'} limit")
            codes.append(result.exit_code)
            outputs.append(result.out + result.err)
            reports.append(_read(container, junit))
    finally:
        container.remove()
    verdict = judge(reports, codes, case.hidden_tests.fail_to_pass, case.hidden_tests.pass_to_pass)
    return Grading(verdict, how, outputs, reports)


def _read(container: Container, path: str) -> bytes | None:
    with tempfile.TemporaryDirectory(prefix="replay-junit-") as tmp:
        try:
            container.copy_out(path, Path(tmp))
        except SandboxError:
            return None  # no report is part of the verdict (every test missing), not a crash
        found = Path(tmp) / posixpath.basename(path)
        return found.read_bytes() if found.is_file() else None
