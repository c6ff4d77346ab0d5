"""Splitting a fix into the hidden tests and the gold patch, and reading test names off it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/"
    r"|(^|/)test_[^/]*\.py$|_tests?\.(py|go|rs)$|\.(test|spec)\.[jt]sx?$|(^|/)conftest\.py$"
)
_DEF = re.compile(r"^\+\s*(?:async\s+)?def\s+(test\w*)\s*\(")


def is_test_path(path: str) -> bool:
    """Whether ``path`` holds tests (pytest, Go, Rust, JS conventions)."""
    return _TEST_PATH.search(path) is not None


@dataclass(frozen=True)
class FileDiff:
    path: str
    text: str
    """The file's whole section of the diff, ``diff --git`` line included."""

    @property
    def deleted(self) -> bool:
        """Whether the diff deletes the file (``deleted file mode`` in its header)."""
        header = self.text.split("\n@@", 1)[0]
        return re.search(r"^deleted file mode ", header, re.MULTILINE) is not None


def file_diffs(patch: str) -> list[FileDiff]:
    """The per-file sections of a ``git diff`` output, in order."""
    sections: list[FileDiff] = []
    current: list[str] = []
    path = ""
    # Lines end at LF only: a carriage return or form feed inside a line is file content.
    for line in re.split(r"(?<=\n)", patch):
        if not line:
            continue
        m = re.match(r"^diff --git a/(.+?) b/(.+)$", line.rstrip("\n"))
        if m:
            if current:
                sections.append(FileDiff(path, "".join(current)))
            current, path = [line], m.group(2)
        elif current:
            current.append(line)
    if current:
        sections.append(FileDiff(path, "".join(current)))
    return sections


def split_fix(patch: str) -> tuple[str, str]:
    """``(gold, tests)``: the fix without its test changes, and the test changes alone."""
    gold = [d.text for d in file_diffs(patch) if not is_test_path(d.path)]
    tests = [d.text for d in file_diffs(patch) if is_test_path(d.path)]
    return "".join(gold), "".join(tests)


def test_files(patch: str) -> list[str]:
    """The test files a patch adds or changes (what the test command should run); not those
    it deletes (python-rsa 2022, eighth held-out corpus: the fix removes
    ``tests/test_compat.py``, and pytest stopped on a path that is not there)."""
    return [
        d.path
        for d in file_diffs(patch)
        if is_test_path(d.path) and d.path.endswith(".py") and not d.deleted
    ]


_TEST_DIRS = frozenset({"tests", "test", "testing"})
_PYTEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")
"""A module pytest collects by its default ``python_files`` (or a ``conftest.py``)."""
_HUNK_IN_TEST = re.compile(
    r"^@@ [^@]* @@ (?:async\s+)?def\s+test\w*\s*\(|^@@ [^@]* @@ class\s+Test"
)
"""A hunk whose context line (git's function header) is a test function or class."""


def _test_module_by_content(d: FileDiff) -> bool:
    """A ``.py`` file under a test path that pytest's default ``python_files`` does not
    match but whose diff adds or changes test functions (voluptuous 2019, seventh held-out
    corpus: ``voluptuous/tests/tests.py``, collected by nose, whose ``testMatch`` takes
    ``tests``): pytest collects such a file when its path is given."""
    if not d.path.endswith(".py") or _PYTEST_MODULE.search(d.path):
        return False
    return any(_DEF.match(line) or _HUNK_IN_TEST.match(line) for line in d.text.splitlines())


def test_targets(patch: str, holds_tests: Callable[[str], bool] = lambda _: True) -> list[str]:
    """What the hidden tests' command runs: the test modules a patch adds or changes, and,
    when it changes data under a test directory, that whole directory: data-driven tests
    read such files from modules the patch need not touch (mistune 2019: the fix's new cases
    are lines of ``tests/fixtures/*.txt``, read by an unchanged ``tests/test_syntax.py``).

    Data includes a ``.py`` file pytest does not collect (pycodestyle's
    ``testing/data/python36.py``, a sample the checker reads: run as a test module it fails
    to import). When such a directory holds no test module itself (``holds_tests``, asked of
    the tree; pycodestyle's tests are in ``tests/``), the command names no path and pytest
    runs the project's whole suite, as its configuration says. A ``.py`` file whose diff adds
    or changes test functions is a test module whatever its name (:func:`_test_module_by_content`)
    and is named itself."""
    dirs: list[str] = []
    by_content = [
        d.path
        for d in file_diffs(patch)
        if is_test_path(d.path) and not d.deleted and _test_module_by_content(d)
    ]
    for d in file_diffs(patch):
        if not is_test_path(d.path) or _PYTEST_MODULE.search(d.path) or d.path in by_content:
            continue
        parts = d.path.split("/")
        top = next((i for i, part in enumerate(parts[:-1]) if part in _TEST_DIRS), None)
        if top is not None and "/".join(parts[: top + 1]) not in dirs:
            dirs.append("/".join(parts[: top + 1]))
    for f in test_files(patch):
        if f.rsplit("/", 1)[-1] != "conftest.py":
            continue
        # A conftest's fixtures and parameters reach every test below it, and it holds none
        # itself (rfc3986 2019: the fix adds IPv4 hosts to tests/conftest.py's parameters).
        where = f.rpartition("/")[0]
        if not where:
            return []
        if where not in dirs:
            dirs.append(where)
    if not all(holds_tests(d) for d in dirs):
        return []
    files = [
        f
        for f in test_files(patch)
        if (_PYTEST_MODULE.search(f) or f in by_content)
        and not any(f.startswith(f"{d}/") for d in dirs)
    ]
    return [*files, *dirs]


def suite_of(targets: list[str]) -> list[str]:
    """The test directories ``targets`` (files and directories of :func:`test_targets`) live
    in, each once: for a file, its path up to the first test directory (``tests``), else
    its own directory; what runs a fix's tests among the others, as the project's suite
    does. Empty when a file is at the top (the whole suite, as its configuration says)."""
    dirs: list[str] = []
    for target in targets:
        if not target.endswith(".py"):
            where = target
        else:
            parts = target.split("/")
            top = next((i for i, part in enumerate(parts[:-1]) if part in _TEST_DIRS), None)
            where = "/".join(parts[: top + 1] if top is not None else parts[:-1])
        if not where:
            return []
        if where not in dirs:
            dirs.append(where)
    return [d for d in dirs if not any(d.startswith(f"{o}/") for o in dirs)]


def holds_test_modules(paths: Iterable[str]) -> bool:
    """Whether any of ``paths`` is a module pytest collects by default."""
    return any(_PYTEST_MODULE.search(p) and not p.endswith("conftest.py") for p in paths)


def added_test_names(patch: str) -> list[str]:
    """Names of the test functions a patch adds (``def test_...`` on added lines)."""
    names = []
    for line in patch.splitlines():
        m = _DEF.match(line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names
