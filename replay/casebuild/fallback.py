"""A fix to a project's pure-Python fallback, measured on the fallback.

Projects with C accelerators keep a pure-Python twin of the same code (msgpack's
``fallback.py``, simplejson's, pyrsistent's) and import the compiled one when it is there. A
fix to the twin alone is invisible to tests run beside the compiled extension: both
before and after the gold patch they exercise the C code, which never had the bug (msgpack
2019 and 2026 in the second held-out corpus: "the fix's tests pass before it too"). The
projects test the twin by running their tests again without the extension (msgpack's
Makefile: ``MSGPACK_PUREPYTHON=1 pytest``), each with its own switch; removing the built
extension modules from the tree is the switch every such project shares, since the import
of the compiled module then fails and the fallback is taken.

So when the measure finds no test that fails before the gold patch and passes after it, the
case rebuilds its extensions before the tests, and the gold patch changes no compiled source,
``case create`` measures once more with the hidden tests' command taking the fallback
(:func:`fallback_command`); the case keeps that command only when it shows the fix.
"""

from __future__ import annotations

from pathlib import Path

from replay.base.case import Case
from replay.casebuild.environment import EXTENSION_SOURCES, REBUILD

COMPILED_SOURCES = (*EXTENSION_SOURCES, ".pxd", ".pxi", ".h", ".hpp")
"""What a fix to the compiled code changes (Cython's declarations and C headers too)."""
DROP_EXTENSIONS = "find . -name '*.so' -not -path './.git/*' -delete"
"""Removes the extension modules built in the tree (the editable install's and the rebuild's)."""


def changed_files(patch: Path) -> list[str]:
    """The paths a unified git diff changes (its ``+++ b/`` and ``--- a/`` lines)."""
    found: list[str] = []
    for line in patch.read_text(errors="replace").splitlines():
        for head in ("+++ b/", "--- a/"):
            if line.startswith(head) and line[len(head) :] not in found:
                found.append(line[len(head) :])
    return found


def fallback_command(case: Case) -> str | None:
    """The hidden tests' command run on the pure-Python fallback: without the in-place
    rebuild (and the Cython runs before it), with the built extension modules removed. None
    when the command does not rebuild extensions or the gold patch changes compiled code."""
    command = case.hidden_tests.command
    marker = f"{REBUILD} && "
    if marker not in command:
        return None
    if any(Path(f).suffix in COMPILED_SOURCES for f in changed_files(case.gold.patch)):
        return None
    return f"{DROP_EXTENSIONS} && {command.split(marker, 1)[1]}"
