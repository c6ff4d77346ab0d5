"""FAIL_TO_PASS and PASS_TO_PASS, measured: the hidden tests run before and after the gold
patch in the case's environment image, several times each; a test whose result flips is
dropped (SWE-bench ran once and let flaky tests in; later datasets repeat the gold)."""

from __future__ import annotations

import re
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from replay.base.case import load_case, read_patch
from replay.base.errors import ReplayError
from replay.grade.hidden_tests import Grading, GradingError, grade_hidden_tests
from replay.grade.junit import TestStatus, parse_junit
from replay.images.base import ensure_case_base_image
from replay.images.env import SetupError, build_env_image
from replay.runtime.base import Runtime, SandboxError
from replay.world import running_world

MIN_REPEATS = 3


class MeasureError(ReplayError):
    """The hidden tests measured no FAIL_TO_PASS test: the message is the runs' own account
    (the command, the exit statuses, the output's last lines, where the full logs are)."""


_FAILED = frozenset({"failed", "error"})
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments: (.+)")
"""pytest refusing an option its configuration's ``addopts`` names and no installed plugin
adds (``__main__.py: error: unrecognized arguments: --cov-append --cov tinydb``)."""

PLUGIN_OPTIONS: dict[str, str] = {
    "--cov": "pytest-cov",
    "--cov-report": "pytest-cov",
    "--cov-append": "pytest-cov",
    "--cov-branch": "pytest-cov",
    "--cov-config": "pytest-cov",
    "--cov-fail-under": "pytest-cov",
    "--no-cov": "pytest-cov",
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--timeout": "pytest-timeout",
    "--reruns": "pytest-rerunfailures",
    "--benchmark-skip": "pytest-benchmark",
    "--benchmark-disable": "pytest-benchmark",
    "--flake8": "pytest-flake8",
    "--mypy": "pytest-mypy",
    "--black": "pytest-black",
    "--isort": "pytest-isort",
    "--pep8": "pytest-pep8",
    "--mpl": "pytest-mpl",
    "--asyncio-mode": "pytest-asyncio",
    "--randomly-seed": "pytest-randomly",
}
"""Options of pytest plugins as their documentation names them, each with the plugin that adds
it: what a project's ``addopts`` asks for when it is run with that plugin installed."""


def plugins_for(options: list[str]) -> list[str]:
    """The plugins that add ``options`` (``--cov=x`` is ``--cov``), in order, once each; an
    option no known plugin adds is left out."""
    found = [PLUGIN_OPTIONS.get(o.split("=", 1)[0]) for o in options]
    return list(dict.fromkeys(p for p in found if p is not None))


_PIP_HINT = re.compile(r"^E\s+\$?\s*pip install ([A-Za-z0-9][\w.-]*)\s*$", re.MULTILINE)
"""An error the project raises in place of an ImportError, telling what to install, as pytest
shows it (starlette 2025's testclient: ``E       $ pip install httpx``)."""


@dataclass(frozen=True)
class TestLists:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    flaky: list[str]
    """Tests whose result changed between repeats of the same side: left out of both lists."""


def _statuses(reports: list[bytes | None]) -> list[dict[str, TestStatus]]:
    return [parse_junit(r) if r is not None else {} for r in reports]


def classify(before: list[dict[str, TestStatus]], after: list[dict[str, TestStatus]]) -> TestLists:
    """Sort every test seen into F2P, P2P or flaky; tests failing after the fix are neither."""
    names = sorted({n for run in [*before, *after] for n in run})
    f2p, p2p, flaky = [], [], []
    for name in names:
        b = {run.get(name, "missing") for run in before}
        a = {run.get(name, "missing") for run in after}
        if len(b) > 1 or len(a) > 1:
            flaky.append(name)
        elif a == {"passed"} and b == {"passed"}:
            p2p.append(name)
        elif a == {"passed"}:
            f2p.append(name)
    return TestLists(f2p, p2p, flaky)


@dataclass(frozen=True)
class Measurement:
    """The test lists and the two runs they were read from (their outputs say what happened
    when the lists come out empty)."""

    lists: TestLists
    before: Grading
    """The hidden tests without the gold patch."""
    after: Grading
    """The hidden tests with the gold patch."""

    def explain(self, command: str, logs: Path | None = None, tail: int = 30) -> str:
        """Why no test fails before the gold patch and passes after it, in the runs' own
        words: the test command, each side's exit statuses and counts, and the last lines of
        the run with the gold patch (and of the one without, when it differs)."""
        lines = [
            f"no test fails before the gold patch and passes after it: {self.diagnosis()}",
            f"  test command: {command}",
        ]
        for label, run in (("without the gold patch", self.before), ("with it", self.after)):
            seen = _statuses(run.reports)
            counts = ", ".join(
                f"{n} {status}"
                for status, n in sorted(Counter(s for one in seen for s in one.values()).items())
            )
            stopped = f"; stopped: {run.stopped}" if run.stopped else ""
            lines.append(
                f"  {label}: exit {run.verdict.exit_codes}, {counts or 'no test reported'}{stopped}"
            )
        for label, run in (("with the gold patch", self.after), ("without it", self.before)):
            if run is self.before and run.outputs[:1] == self.after.outputs[:1]:
                continue
            text = (run.outputs[0] if run.outputs else "").rstrip().splitlines()[-tail:]
            lines.append(f"  last lines of the first run {label}:")
            lines += [f"    | {line}" for line in text] or ["    | (no output)"]
        if logs is not None:
            lines.append(f"  full logs: {logs}")
        return "\n".join(lines)

    def diagnosis(self) -> str:
        """What the two sides' results say about the fix, in the project's terms, and what
        would change the outcome."""
        before = [s for one in _statuses(self.before.reports) for s in one.values()]
        after = [s for one in _statuses(self.after.reports) for s in one.values()]
        codes = {*self.before.verdict.exit_codes, *self.after.verdict.exit_codes}
        if not before and not after:
            if codes == {5}:
                return (
                    "pytest collected no test from the fix's test files on either side (exit "
                    "5): they hold no test it runs (a file for a type checker, a module the "
                    "tests import); there is nothing to grade with"
                )
            return self._missing_module() or (
                "the test command ran no test on either side: the environment cannot run the "
                "tests (the last lines say why; an interpreter or test runner the project at T "
                "does not work with, or a setup that missed a requirement)"
            )
        if not any(s in _FAILED for s in before):
            return (
                "the fix's tests pass before it too: it changes no behaviour they test here (a "
                "refactor, a typo or lint fix, a fix for another interpreter or platform, or a "
                "bug these tests do not reach); only a test that shows the bug would make a case"
            )
        missing = self._missing_module()
        if missing:
            return missing
        failing = [
            {name for one in _statuses(run.reports) for name, s in one.items() if s in _FAILED}
            for run in (self.before, self.after)
        ]
        if "failed" not in {*before, *after}:
            return (
                "pytest cannot run the fix's tests here: on both sides they only error, in "
                "collection or setup (a fixture pytest does not have, syntax of another Python: "
                "the last lines say which); the project runs them another way (its tox.ini, "
                "Makefile or CI says how): give that command (--command)"
            )
        if failing[0] == failing[1]:
            named = ", ".join(sorted(failing[0])[:3]) + (", ..." if len(failing[0]) > 3 else "")
            return (
                f"no test's result changes with the fix: the same {len(failing[0])} test(s) "
                f"fail on both sides ({named}) and the others pass on both: it changes no "
                "behaviour these tests reach here (a fix for another interpreter or platform, "
                "a refactor, or a bug they do not reach); only a test that shows the bug would "
                "make a case"
            )
        return (
            "the tests that fail before the fix still fail after it, here: the fix needs "
            "something the environment lacks (the last lines say what)"
        )

    def fails_with_gold(self) -> bool:
        """Whether a test still fails (or errors) with the gold patch."""
        return any(s in _FAILED for one in _statuses(self.after.reports) for s in one.values())

    def missing_modules(self) -> list[str]:
        """The modules (top-level names) the tests could not import with the gold patch (the
        first run's output), when that may be why no test shows the fix: no test ran on
        either side, or some failed before it. Empty when the fix's tests pass before it too:
        a missing module of an unrelated test file says nothing then."""
        before = [s for one in _statuses(self.before.reports) for s in one.values()]
        after = [s for one in _statuses(self.after.reports) for s in one.values()]
        if (before or after) and not any(s in _FAILED for s in before):
            return []
        output = "\n".join(self.after.outputs[:1])
        missing = [m.split(".")[0] for m in _NO_MODULE.findall(output)]
        return list(dict.fromkeys([*missing, *_PIP_HINT.findall(output)]))

    def unknown_options(self) -> list[str]:
        """The options pytest refused when no test ran at all (the first run with the gold
        patch): its configuration's ``addopts`` names a plugin the environment lacks."""
        before = [s for one in _statuses(self.before.reports) for s in one.values()]
        after = [s for one in _statuses(self.after.reports) for s in one.values()]
        if before or after:
            return []
        output = "\n".join(self.after.outputs[:1])
        words = [w for found in _UNRECOGNIZED.findall(output) for w in found.split()]
        return [w for w in words if w.startswith("-")]

    def _missing_module(self) -> str | None:
        """:meth:`missing_modules` told with what to give; None when none."""
        missing = self.missing_modules()
        if not missing:
            return None
        names = ", ".join(missing)
        return (
            f"the tests cannot import {names} (ModuleNotFoundError, or an error saying to "
            "pip install it), which the test "
            "requirements named do not install: name the requirement, requirements file or "
            "extra that does (--requires, --extra); the project's CI or tox.ini says which"
        )

    def write_logs(self, directory: Path) -> Path:
        """Every run's full output under ``directory`` (``before-1.log``, ``after-1.log``...)."""
        directory.mkdir(parents=True, exist_ok=True)
        for label, run in (("before", self.before), ("after", self.after)):
            for i, text in enumerate(run.outputs, 1):
                (directory / f"{label}-{i}.log").write_text(text)
        return directory


def measure(case_path: Path, runtime: Runtime, repeats: int = MIN_REPEATS) -> Measurement:
    """Run the case's hidden tests without and with the gold patch, ``repeats`` times each."""
    if repeats < MIN_REPEATS:
        raise ValueError(f"at least {MIN_REPEATS} repeats are needed to see flaky tests")
    case = load_case(case_path)
    case = case.model_copy(
        update={"hidden_tests": case.hidden_tests.model_copy(update={"repeat": repeats})}
    )
    ensure_case_base_image(runtime, case.environment)
    with (
        tempfile.TemporaryDirectory(prefix="replay-casebuild-") as tmp,
        running_world(case.snapshot, Path(tmp)) as gateway,
    ):
        try:
            env = build_env_image(case, runtime, gateway)
        except SandboxError as exc:
            # A setup command failed: the error names it and its output's end; all of its
            # output is kept beside the case with the measurements' logs.
            log = case_path.parent / "logs" / "setup-error.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            full = exc.output if isinstance(exc, SetupError) else ""
            log.write_text(
                f"{exc}\n" + (f"\n--- the command's whole output ---\n{full}" if full else "")
            )
            raise SandboxError(f"{exc}\n  log: {log}") from exc
    run_id = f"casebuild-{uuid.uuid4().hex[:12]}"
    try:
        before = grade_hidden_tests(runtime, env.id, case, "", f"{run_id}-before")
        after = grade_hidden_tests(runtime, env.id, case, read_patch(case.gold.patch), run_id)
    except GradingError as exc:
        if not exc.outputs:
            raise
        # The test command ran and the environment failed it (no runner): its full output
        # stays beside the case, as a measurement's does.
        logs = case_path.parent / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(exc.outputs, 1):
            (logs / f"tests-{i}.log").write_text(text)
        raise GradingError(f"{exc}\n  full logs: {logs}", exc.outputs) from exc
    lists = classify(_statuses(before.reports), _statuses(after.reports))
    return Measurement(lists, before, after)


def write_lists(case_path: Path, lists: TestLists) -> None:
    """Put the measured lists into the case file (the rest of it is left as it was)."""
    data = yaml.safe_load(case_path.read_text())
    data["hidden_tests"]["fail_to_pass"] = lists.fail_to_pass
    data["hidden_tests"]["pass_to_pass"] = lists.pass_to_pass
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    load_case(case_path)


def write_command(case_path: Path, command: str) -> None:
    """Put ``command`` into the case file as the hidden tests' command (the rest as it was)."""
    data = yaml.safe_load(case_path.read_text())
    data["hidden_tests"]["command"] = command
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    load_case(case_path)
