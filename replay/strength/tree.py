"""The repository at the base commit and with the gold patch, on the host: where wrong fixes are
written out and turned into diffs.

A wrong fix is the gold tree with some files replaced (:meth:`GoldTree.diff`); its diff is
taken the way a run takes an agent's final diff (everything staged, ``git diff --cached
--binary`` against the base commit), so that it goes through grading as an agent's would.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from replay.base import gitrepo
from replay.base.case import Case, read_patch
from replay.base.errors import ReplayError
from replay.base.snapshot import Snapshot
from replay.grade.hidden_tests import files_of_patch
from replay.strength.model import Kind, Verdict

TEST_DIRS = frozenset({"tests", "test", "testing"})
"""Directories whose files are tests, not product code (grading restores them anyway)."""


class StrengthError(ReplayError):
    """A case's strength cannot be measured: its gold patch does not apply or pass here."""


@dataclass(frozen=True)
class ChangedFile:
    """A file the gold patch adds, changes or removes."""

    path: str
    """Relative to the repository's root."""
    base: bytes | None
    """Its content at the base commit; None where the gold patch adds it."""
    gold: bytes | None
    """Its content with the gold patch; None where the gold patch removes it."""

    def text(self, which: bytes | None) -> str | None:
        """``which`` (:attr:`base` or :attr:`gold`) as text: '' for an absent file, None for one
        that is not UTF-8 (only whole-file changes are made to those)."""
        if which is None:
            return ""
        try:
            return which.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def blocks(self) -> list[Block]:
        """The places where the gold version differs from the base's, top to bottom (empty
        for a file that is not text)."""
        base, gold = self.text(self.base), self.text(self.gold)
        if base is None or gold is None:
            return []
        a, b = lines_of(base), lines_of(gold)
        # autojunk off: in files of over 200 lines it takes frequent lines (blank ones,
        # closing brackets) for junk and gives blocks no reader would draw.
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        return [
            Block(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
        ]

    def changed_lines(self) -> set[int]:
        """The lines (from 1) of the gold version that the gold patch adds or changes."""
        return {line + 1 for block in self.blocks() for line in range(block.j1, block.j2)}

    def without(self, block: Block) -> bytes:
        """The gold version with ``block`` as the base commit has it."""
        base, gold = self.text(self.base), self.text(self.gold)
        assert base is not None and gold is not None, "blocks are only made of text files"
        a, b = lines_of(base), lines_of(gold)
        return "".join([*b[: block.j1], *a[block.i1 : block.i2], *b[block.j2 :]]).encode()

    @property
    def python(self) -> bool:
        """A Python source file, both of whose versions are text."""
        return (
            self.path.endswith(".py")
            and self.text(self.base) is not None
            and self.text(self.gold) is not None
        )


@dataclass(frozen=True)
class Block:
    """Lines ``i1:i2`` of the base version became lines ``j1:j2`` of the gold version (0-based,
    end excluded), as :class:`difflib.SequenceMatcher` pairs them."""

    i1: int
    i2: int
    j1: int
    j2: int

    def lines(self) -> str:
        """Where the block is in the gold version, for a reader: ``lines 4-6``, ``line 4``,
        or ``after line 3`` where the gold patch only removes lines."""
        if self.j2 == self.j1:
            return f"after line {self.j1}"
        if self.j2 == self.j1 + 1:
            return f"line {self.j2}"
        return f"lines {self.j1 + 1}-{self.j2}"


@dataclass(frozen=True)
class WrongFix:
    """The gold patch with one file's gold version replaced: a plausible wrong fix."""

    kind: Kind
    """mutant, partial or overfit."""
    path: str
    """The file replaced."""
    line: int | None
    """Where in the gold version it differs; None for the whole file."""
    description: str
    """The change from the gold patch in a few words."""
    content: bytes | None
    """The file's content in the wrong fix (None: the file is absent)."""
    decided: tuple[Verdict, str] | None = None
    """A verdict reached without grading (equivalent or possibly equivalent) and why."""


def lines_of(text: str) -> list[str]:
    """``text``'s lines, each with its line feed: split at line feeds only, as Python numbers
    a module's lines (``str.splitlines`` would also split at form feeds and other breaks)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def is_test_file(path: str, hidden: frozenset[str]) -> bool:
    """Whether ``path`` is a test: a file of the hidden tests, a ``conftest.py``, a
    ``test_*.py``/``*_test.py``, or anything under a ``tests``/``test`` directory."""
    name = posixpath.basename(path)
    return (
        path in hidden
        or name == "conftest.py"
        or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
        or bool(TEST_DIRS & set(path.split("/")[:-1]))
    )


class GoldTree:
    """A working copy of the case's repository at the base commit, with the gold patch at
    hand: what the gold patch changes, and the diff of any variant of it."""

    def __init__(self, root: Path, case: Case, files: list[ChangedFile]) -> None:
        self.root, self.case = root, case
        self.files = files
        """The product files the gold patch changes (its test files left out), by path."""
        self.gold_diff = self.diff({})
        """The gold patch as a run of it would give it."""

    @classmethod
    def restore(cls, case: Case, snapshot: Snapshot, dest: Path) -> GoldTree:
        """Restore the repository into ``dest`` (as a workspace gets it) and read what the
        gold patch changes."""
        root = snapshot.restore(case.repository.name, dest)
        base = case.repository.base_commit
        _apply_gold(root, case)
        gitrepo.run(root, "add", "-A")
        names = gitrepo.run_exact(
            root, "diff", "--cached", "--no-renames", "--name-only", "-z", base
        ).split("\0")
        hidden = frozenset(files_of_patch(read_patch(case.hidden_tests.patch)))
        changed = [n for n in names if n and not is_test_file(n, hidden)]
        gold = {n: _read(root / n) for n in changed}
        _reset(root, base)
        files = [ChangedFile(n, _read(root / n), gold[n]) for n in changed]
        return cls(root, case, files)

    def diff(self, replaced: Mapping[str, bytes | None]) -> str:
        """The diff from the base commit to the gold tree with the files ``replaced`` (None:
        removed), taken as a run takes an agent's final diff."""
        base = self.case.repository.base_commit
        _apply_gold(self.root, self.case)
        try:
            for path, data in replaced.items():
                target = self.root / path
                if data is None:
                    target.unlink(missing_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            gitrepo.run(self.root, "add", "-A")
            return gitrepo.run_exact(
                self.root, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", base
            )
        finally:
            _reset(self.root, base)


def from_gold(changed: ChangedFile, wrong: bytes | None) -> str:
    """How ``wrong`` differs from the gold version of ``changed``: a unified diff, for a
    reader (not applied anywhere)."""
    gold, other = changed.text(changed.gold), changed.text(wrong)
    if gold is None or other is None:
        return f"(binary file {changed.path}: not shown)\n"
    lines = difflib.unified_diff(
        lines_of(gold),
        lines_of(other),
        f"gold/{changed.path}" if changed.gold is not None else "/dev/null",
        f"wrong/{changed.path}" if wrong is not None else "/dev/null",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _apply_gold(root: Path, case: Case) -> None:
    try:
        gitrepo.run(root, "apply", "--binary", str(case.gold.patch))
    except ReplayError as exc:
        raise StrengthError(
            f"{case.gold.patch}: the gold patch does not apply at the base commit: {exc}"
        ) from exc


def _reset(root: Path, base: str) -> None:
    gitrepo.run(root, "reset", "-q", "--hard", base)
    gitrepo.run(root, "clean", "-fdqx")


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None
