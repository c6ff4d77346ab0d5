"""Running the hidden tests outside the agent's workspace, with the case's test infrastructure.

A fresh container from the case's environment image, with no network at all, made for one
run (:class:`GradingBox`; a runner has it made and readied while the harness runs, and the
agent's diff is the only thing of the agent's that ever enters it): the repository
is reset to the base commit, the agent's diff applied (``git apply``, then ``--3way``, then
``patch --fuzz``, resetting between attempts), and then everything that decides how the tests
run, rather than what the product does, is put back as the case defines it (see
:func:`plan_restore`): the test files and directories of the hidden test set, every
``conftest.py``, the pytest configuration files (``pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``, ... restored whole), interpreter start-up hooks
(``sitecustomize``/``usercustomize``), ``.pth`` files, bytecode, pytest's cache, package
metadata (a ``pytest11`` entry point is a plugin) and new top-level modules that would shadow
an installed or standard module (``pytest.py``, ``_pytest/``, ``pluggy/``...). The hidden
tests are applied on top and the test command run ``repeat`` times, with the grader's own
pytest plugin loaded first (``replay/grade/guard.py``, a second witness against product
code that patches pytest from inside); each repeat's JUnit XML, exit status and the plugin's
record go to the verdict. Every path put back is named in the result (the agent may have had
a reason; the run is graded with the case's version).

The interpreter is not run with ``-P``/``PYTHONSAFEPATH``: suites that import the project
from the working directory (``python -m pytest`` puts it on ``sys.path``) would break. What
``-P`` would prevent, a new module there shadowing the runner or the standard library, is
removed instead.

What changed is measured, not read from the diff: the tree is listed (type, content hash or
link target) before and after the diff goes in, so a diff whose text hides a path still has
it found.
"""

from __future__ import annotations

import io
import posixpath
import re
import secrets
import shlex
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from replay.base.case import Case, read_patch
from replay.base.errors import ReplayError
from replay.grade.honeypots import Honeypot, candidate_files, plant
from replay.grade.junit import GuardRecord, TestVerdict, judge
from replay.grade.model import Restored
from replay.runtime.base import (
    Container,
    ContainerSpec,
    ExecResult,
    Limits,
    Runtime,
    SandboxError,
)
from replay.runtime.sandbox import AGENT_GID, AGENT_HOME, AGENT_UID

GRADE_DIR = "/tmp/replay-grade"
# Lists every entry of the work tree but .git: regular files with their sha256, symbolic
# links with their target, anything else by path alone (NUL-separated, so any name survives).
MANIFEST = """\
manifest() {{
  find . -path ./.git -prune -o -type f -print0 | xargs -0 -r sha256sum -z -- > {grade}/$1.files
  find . -path ./.git -prune -o -type l -printf '%p\\0%l\\0' > {grade}/$1.links
  find . -path ./.git -prune -o ! -type d ! -type f ! -type l -printf '%p\\0' > {grade}/$1.other
}}
"""
# Run before the agent's diff exists (while the harness runs): the base commit, checked out
# clean, listed, and its tree.
RESET = "reset() {{ git reset -q --hard {base} && git clean -fdq; }}\n"
PREPARE = (
    """\
set -u
cd {workdir}
{manifest}"""
    + RESET
    + """\
reset || exit 1
manifest before || exit 1
git ls-tree -r -t -z --full-tree {base} > {grade}/base.tree || exit 1
"""
)
# Run on the tree PREPARE left: the agent's diff in (from standard input), the tree listed
# again. Its standard output is a tar of the listings (PREPARE's and its own, and how the diff
# went in): the only thing it writes there; what the steps print goes to standard error.
APPLY = (
    """\
set -u
exec 3>&1 1>&2
cat > {diff} || exit 1
cd {workdir}
{manifest}"""
    + RESET
    + """\
if [ -s {diff} ]; then
  how=none
  if git apply --binary {diff} 2>/dev/null; then how=apply
  else
    reset; if git apply --binary --3way {diff} 2>/dev/null; then how=3way
    else
      # patch(1) writes any path it is given, .git/config included (whose core.fsmonitor
      # or hooks would then run in here): it runs with the repository's .git moved aside.
      reset; mv .git {grade}/dotgit || exit 1
      patch -p1 --batch --fuzz=3 --no-backup-if-mismatch < {diff} >/dev/null 2>&1
      patched=$?
      rm -rf .git && mv {grade}/dotgit .git || exit 1
      if [ $patched = 0 ]; then how=fuzz; else reset; fi
    fi
  fi
else
  how=empty
fi
manifest after || exit 1
echo "$how" > {grade}/applied || exit 1
tar -c -C {grade} . >&3
"""
)
# Names an interpreter can import from outside the repository: the standard library, builtins,
# and every site directory (and the directories their .pth files add). Run with -I -S from /,
# so nothing in the repository (no .pth, no sitecustomize, no cwd) runs.
IMPORTABLE = """\
import os, pkgutil, site, sys
work = os.path.realpath(sys.argv[1]) + os.sep
dirs = [p for p in [*sys.path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)] if p]
# -S skips site.venv(): a virtual environment's own site-packages are found by hand.
exe = os.path.dirname(os.path.abspath(sys.executable))
if any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in (exe, os.path.dirname(exe))):
    site.PREFIXES[:0] = [os.path.dirname(exe)]
sites = [*site.getsitepackages(), site.getusersitepackages()]
for d in sites:
    dirs.append(d)
    try:
        pths = [n for n in os.listdir(d) if n.endswith(".pth")]
    except OSError:
        continue
    for n in pths:
        try:
            with open(os.path.join(d, n), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\\n")
        except OSError:
            continue
        keep = [x.strip() for x in lines if x.strip() and not x.startswith(("#", "import"))]
        dirs += [os.path.join(d, x) for x in keep]
names = set(sys.builtin_module_names) | set(getattr(sys, "stdlib_module_names", ()))
for d in dirs:
    if (os.path.realpath(d) + os.sep).startswith(work) or not os.path.isdir(d):
        continue
    names.update(m.name for m in pkgutil.iter_modules([d]))
    names.update(n for n in os.listdir(d) if n.isidentifier() and os.path.isdir(os.path.join(d, n)))
print("\\n".join(sorted(names)))
"""
# Its standard input is a tar of remove.lst, checkout.lst and honey.lst, unpacked into {grade}.
RESTORE = """\
set -u
exec 3>&1 1>&2
tar -x -f - -C {grade} || exit 1
cd {workdir}
top=$(pwd -P)
# Only ever delete inside the repository: a parent that leads elsewhere is left alone.
while IFS= read -r -d '' f; do
  parent=$(realpath -m -- "$(dirname -- "$f")")
  case "$parent/" in "$top"/*) rm -rf -- "$f" ;; esac
done < {grade}/remove.lst
if [ -s {grade}/checkout.lst ]; then
  git --literal-pathspecs checkout -q {base} --pathspec-from-file={grade}/checkout.lst \\
    --pathspec-file-nul || exit 1
fi
git apply --binary {hidden} || exit 1
# The restored test files honeypots are cloned from (the case's own now), as a tar on stdout.
if [ -s {grade}/honey.lst ]; then
  while IFS= read -r -d '' f; do [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\\0' "$f"; done \\
    < {grade}/honey.lst | tar -c --null -T - -f - >&3
fi
"""
# The grader's own pytest plugin (replay/grade/guard.py), loaded before the repository's
# code by every pytest the test command starts, under a name drawn for each grading (no file
# of the diff can be named after it): a witness of what ran and what failed, writing out of
# the tests' process as it happens.
RESTORE_LIMIT = "putting the test set back on the agent's tree hit"
GUARD_PREFIX = "_replay_guard_"
LISTED = f"{GRADE_DIR}/listed"
"""Where PREPARE and APPLY write the tree's listings, the base tree and the interpreter's
module names: APPLY hands them all out on its standard output, after the diff went in."""
OUT = f"{GRADE_DIR}/out"
"""Repeat ``n`` leaves its JUnit report and the guard's record in ``OUT/n``: one copy-out."""
# The interpreter's own modules, listed while nothing of the agent's is in the tree.
LIST_IMPORTABLE = """\
py=$(command -v {python} || command -v python3) || exit 0
cd / && "$py" -I -S -c {script} {workdir} > {grade}/importable || exit 3
"""
# One repeat of the test command. The exec's standard output is the guard's pipe (descriptor
# 3, which the guard takes and hides); what the command prints goes to standard error. As root
# first: with honeypots, the first repeat's standard input is a tar of the test files that hold
# them, written over the restored ones; a previous repeat's report is removed; the working tree
# and an empty home are handed to the test user (``chown -hR`` changes a symbolic link itself,
# never what it points to). Then the command runs as that user (:data:`SWITCH_USER`), in a
# shell of its own (an ``exit`` in the case's command ends only that), and root moves the
# report it wrote out of the tree.
TEST_RUN = """\
exec 3>&1 1>&2
if [ {plant} = 1 ]; then tar -x -f - -C {workdir} || exit 1; fi
rm -rf -- {dir} {junit} {home} && mkdir -p -- {dir} {home} || exit 1
chown -hR {owner} -- {workdir} {home} && chmod a+x {grade} && chmod -R a+rX {grade}/guard \\
  || exit 1
export HOME={home} USER={name} LOGNAME={name} \\
  PYTHONPATH={grade}/guard"${{PYTHONPATH:+:$PYTHONPATH}}" \\
  PYTEST_ADDOPTS="-p {guard} --maxfail={no_limit} ${{PYTEST_ADDOPTS:-}}" REPLAY_GUARD_FD=3
{switch} bash -c {command} </dev/null
code=$?
exec 3>&-
if [ -e {junit} ] || [ -L {junit} ]; then mv -fT -- {junit} {dir}/junit.xml; fi
exit $code
"""
TEST_UID, TEST_GID = AGENT_UID, AGENT_GID
"""Who the hidden tests run as: the unprivileged user the agent's harness runs as (uid 1000,
no capability), not root. A suite written for a developer's account expects what such an
account gets: python-dotenv's tests (third corpus, 2022) make a file unreadable and expect
``PermissionError``, which root never gets, so the gold fix failed them. The agent ran the same
tests as that user in its sandbox, so the grade now sees what the agent saw. It also keeps
the product code, which runs inside the test process, from writing to anything root owns in
the grading container: the grader's plugin, the hidden patch, the interpreter's packages."""
SWITCH_USER = f"setpriv --reuid={TEST_UID} --regid={TEST_GID} --clear-groups --inh-caps=-all --"
"""How TEST_RUN becomes the test user: ``setpriv``, from util-linux, which is essential in
every Debian release; changing from root to another user drops every capability."""
TEST_NAME = posixpath.basename(AGENT_HOME)
"""The user's name (``$USER``, ``$LOGNAME``), as the base images' ``/etc/passwd`` has it."""
TEST_HOME = f"{GRADE_DIR}/home"
"""``$HOME`` for the hidden tests: made empty for each repeat and owned by the test user."""
NO_FAILURE_LIMIT = 2**31 - 1
"""``--maxfail`` for the hidden tests: pytest reads ``PYTEST_ADDOPTS`` after the project's
own ``addopts``, so a configuration that stops at the first failures (``-x``,
``--maxfail=2``) no longer leaves listed tests unrun. Cerberus 2020 (third corpus) has
``--maxfail=2`` in its configuration: the honeypots' planned failures stopped the run, and the
gold patch was graded "missing" on the tests after them. A command line that stops early
still does (no honeypots are planted then: :data:`replay.grade.honeypots.UNSAFE_OPTIONS`)."""
TEST_CONFIG = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg"}
    | {"pyproject.toml"}
)
STARTUP_HOOKS = frozenset({"sitecustomize", "usercustomize"})
MODULE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".so", ".pyd")


@dataclass(frozen=True)
class Grading:
    """What running the hidden tests under the agent's diff gave."""

    verdict: TestVerdict
    applied: str
    """How the agent's diff went in: apply, 3way, fuzz, empty, or none (it did not apply)."""
    outputs: list[str]
    reports: list[bytes | None]
    restored: list[Restored]
    """Paths the agent's diff changed that were put back as the case has them."""
    stopped: str | None = None
    """Why the hidden tests could not run to the end under the agent's code (a limit they hit,
    or the hidden tests not going in on top of the agent's diff): the tests count as failed.
    The case's calibration shows the gold fix runs them within the same limits."""
    unreported: str | None = None
    """When the test command wrote no JUnit report in any repeat (it crashed before running a
    test): the command, its exit statuses and the last lines of its output, in one line.
    The full outputs are :attr:`outputs` (a run keeps them as ``tests/output-N.txt``)."""
    records: list[bytes] = field(default_factory=list)
    """Each repeat's records from the grader's pytest plugin, as read from its pipe."""
    honeypots: list[Honeypot] = field(default_factory=list)
    """The tests planted for this grading that must fail on any code."""
    honeypot_note: str | None = None
    """Why fewer honeypots (or none) were planted, when that is so."""
    limited: bool = False
    """:attr:`stopped` is a limit (memory, processes, time) a grading step hit on the agent's
    diff, not the hidden tests refusing to go on it."""


class GradingError(ReplayError):
    """The grading sandbox itself failed (not the agent's work): an infrastructure failure.

    ``outputs`` are the test command's full outputs when it ran (the run directory keeps them)."""

    def __init__(self, message: str, outputs: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.outputs = list(outputs)


def last_lines(text: str, n: int = 3) -> str:
    """The last ``n`` non-empty lines of ``text``, on one line (`` | `` between them)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-n:]) or "(no output)"


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


# ----------------------------------------------------------------------------- what to restore


Manifest = Mapping[str, str]
"""Path (relative, ``/``-separated) to what is there: ``f:<sha256>``, ``l:<target>``, ``o``."""


def parse_manifest(files: bytes, links: bytes, other: bytes) -> dict[str, str]:
    """Read the three NUL-separated listings :data:`MANIFEST` writes."""
    entries: dict[str, str] = {}
    for record in files.split(b"\0"):
        if record:
            digest, _, path = record.partition(b"  ")
            entries[_rel(path)] = "f:" + digest.decode("ascii", "replace")
    fields = links.split(b"\0")
    for path, target in zip(fields[0::2], fields[1::2], strict=False):
        if path:
            entries[_rel(path)] = "l:" + target.decode(errors="surrogateescape")
    for path in other.split(b"\0"):
        if path:
            entries[_rel(path)] = "o"
    return entries


def _rel(path: bytes) -> str:
    text = path.decode(errors="surrogateescape")
    return text[2:] if text.startswith("./") else text


def parse_tree(listing: bytes) -> dict[str, str]:
    """``git ls-tree -r -t -z`` output: path to its object type (blob, tree, commit)."""
    entries: dict[str, str] = {}
    for record in listing.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        fields = meta.split(b" ")
        if tab and len(fields) >= 2:  # anything else is not a line git wrote: left out
            kind = fields[1].decode("ascii", "replace")
            entries[path.decode(errors="surrogateescape")] = kind
    return entries


def hidden_test_dirs(
    hidden_files: Iterable[str], command: str, base: Mapping[str, str]
) -> list[str]:
    """Directories the hidden tests live in or are run from (never the repository's root).

    The parent directory of every file the hidden patch touches, and every argument of the
    test command that names a directory of the base commit (``pytest ... tests``).
    """
    found = {posixpath.dirname(f) for f in hidden_files}
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        path = posixpath.normpath(word.split("::")[0]).strip("/")
        if base.get(path) == "tree":
            found.add(path)
    found.discard("")
    found.discard(".")
    return sorted(d for d in found if not any(d.startswith(o + "/") for o in found))


def _within(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r + "/") for r in roots)


def _shadowed(
    path: str, after: Manifest, present: frozenset[str], importable: frozenset[str]
) -> str:
    """The installed module a new top-level module at ``path`` would hide, or ''."""
    parts = path.split("/")
    for i, name in enumerate(parts):
        parent = "/".join(parts[:i])
        if i and f"{parent}/__init__.py" in after:
            continue  # inside a package: a submodule, not a top-level name
        entry = "/".join(parts[: i + 1])
        if i == len(parts) - 1:
            if not name.endswith(MODULE_SUFFIXES):
                return ""
            name = name.split(".")[0]
        if name in importable and entry not in present:
            return name
    return ""


def _with_ancestors(paths: Iterable[str]) -> frozenset[str]:
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")
        found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(found)


def _reason(
    path: str,
    *,
    hidden: frozenset[str],
    dirs: list[str],
    anchors: frozenset[str],
    shadow: str,
    listed: frozenset[str] = frozenset(),
) -> str:
    parts = path.split("/")
    name = parts[-1]
    if path in hidden:
        return "hidden test file"
    if path in listed:
        return "file of a listed test"
    if _within(path, dirs):
        return "in a directory of the hidden tests"
    if path in anchors:
        return "a directory above the hidden tests"
    if name == "conftest.py":
        return "pytest conftest"
    if name in TEST_CONFIG:
        return "test configuration (restored whole)"
    if any(p.split(".")[0] in STARTUP_HOOKS for p in parts):
        return "interpreter start-up hook"
    if name.endswith(".pth"):
        return "path configuration file (.pth)"
    if "__pycache__" in parts or name.endswith((".pyc", ".pyo")):
        return "bytecode"
    if ".pytest_cache" in parts:
        return "pytest cache (--lf, --ff, --sw read it)"
    if any(p.endswith((".dist-info", ".egg-info")) for p in parts) or name.endswith(".egg-link"):
        return "package metadata (entry points load plugins)"
    if ".git" in parts:
        return "git metadata"
    if shadow:
        return f"shadows the module {shadow!r} of the interpreter"
    return ""


def plan_restore(
    before: Manifest,
    after: Manifest,
    base: Mapping[str, str],
    hidden_files: Iterable[str],
    command: str,
    importable: frozenset[str] = frozenset(),
    listed: Iterable[str] = (),
) -> list[Restored]:
    """What of the diff's changes (``before`` → ``after``) the grading puts back, and why.

    ``listed`` are the case's FAIL_TO_PASS and PASS_TO_PASS tests: the files that hold them are
    put back too, wherever they are (a fix whose hidden tests are data files leaves the test
    function that reads them in a file the hidden patch does not touch).

    ``base`` is the base commit's tree (:func:`parse_tree`): a path there is restored from
    it, any other is removed. A path the diff deleted that the base commit does not hold (a
    file the environment's setup made) cannot be restored and is left out.
    """
    hidden = frozenset(hidden_files)
    test_files = frozenset(t.split("::")[0] for t in listed)
    dirs = hidden_test_dirs(hidden, command, base)
    anchors = frozenset(
        "/".join(p.split("/")[:i]) for p in [*hidden, *dirs] for i in range(1, p.count("/") + 1)
    )
    present = _with_ancestors(before)
    plan: list[Restored] = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        in_base = base.get(path) in ("blob", "tree")
        if not in_base and path not in after:
            continue
        shadow = _shadowed(path, after, present, importable) if path in after else ""
        reason = _reason(
            path, hidden=hidden, dirs=dirs, anchors=anchors, shadow=shadow, listed=test_files
        )
        if reason:
            action = "restored" if in_base else "removed"
            plan.append(Restored(path=path, action=action, reason=reason))
    return plan


# ----------------------------------------------------------------------------- the grading


def grade_hidden_tests(
    runtime: Runtime, image: str, case: Case, diff: str, run_id: str, *, timeout: float = 1800
) -> Grading:
    """Run the hidden tests under ``diff`` in a grading container made for it alone."""
    with GradingBox(runtime, image, case, run_id, timeout=timeout) as box:
        return box.prepare().grade(diff)


class GradingBox:
    """One run's grading container: a fresh container of the environment image, no network,
    no mount, nothing of the agent's but the diff it is handed.

    Everything that does not depend on the diff (making the container, the grader's files,
    the base commit checked out clean and listed, the interpreter's own modules listed) is
    done by :meth:`prepare`, which a runner calls in the background while the harness runs
    (:meth:`prepare_in_background`): the agent cannot reach this container (no network, no
    shared mount or process), and nothing of the agent's is in it before :meth:`grade`.
    Then :meth:`grade` applies the diff and lists the tree (one exec: the diff in on its
    standard input, the listings out on its standard output), puts the case's test
    infrastructure back (one exec, the paths on its standard input) and runs each repeat (one
    exec, one copy-out of its report and the guard's record).

    The grading's time limit (``timeout`` for a repeat, ``timeout + 300`` in all) counts from
    :meth:`grade`, not from the container's creation.
    """

    def __init__(
        self, runtime: Runtime, image: str, case: Case, run_id: str, *, timeout: float = 1800
    ) -> None:
        self.runtime, self.image, self.case, self.run_id = runtime, image, case, run_id
        self.timeout = timeout
        self.container: Container | None = None
        self._prepared = False
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._remover: threading.Thread | None = None
        self._deadline: float | None = None
        self.guard = GUARD_PREFIX + secrets.token_hex(6)
        """The grader's pytest plugin's module name in this grading (fresh each time)."""

    def __enter__(self) -> GradingBox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ before the diff

    def prepare_in_background(self) -> GradingBox:
        """:meth:`prepare` in a thread; :meth:`grade` waits for it (and raises its error)."""
        self._thread = threading.Thread(target=self._prepare_quietly, daemon=True)
        self._thread.start()
        return self

    def _prepare_quietly(self) -> None:
        try:
            self.prepare()
        except BaseException as exc:
            self._failure = exc

    def prepare(self) -> GradingBox:
        """Make the container and ready everything the diff does not change."""
        case = self.case
        spec = ContainerSpec(
            image=self.image,
            command=["sleep", "infinity"],
            workdir=case.environment.workdir,
            # No wall time on the container: it may wait through the harness's run. The
            # grading's own limit is kept by _exec, from the moment grade() starts.
            limits=Limits(cpus=2.0, memory=4 * 1024**3, pids=2048, wall_time=None),
            labels={"replay.role": "grade", "replay.base.case": case.id},
        )
        self.container = container = self.runtime.create(spec, self.run_id)
        with tempfile.TemporaryDirectory(prefix="replay-grade-") as tmp:
            stage = Path(tmp) / posixpath.basename(GRADE_DIR)
            for sub in ("guard", "listed", "out"):
                (stage / sub).mkdir(parents=True)
            (stage / "hidden.patch").write_text(read_patch(case.hidden_tests.patch))
            shutil.copyfile(
                Path(__file__).with_name("guard.py"), stage / "guard" / f"{self.guard}.py"
            )
            container.copy_in(stage, posixpath.dirname(GRADE_DIR))
        words = case.hidden_tests.command.split()
        first = words[0] if words else ""
        python = first if posixpath.basename(first).startswith("python") else "python3"
        workdir = shlex.quote(case.environment.workdir)
        base = case.repository.base_commit
        manifest = MANIFEST.format(grade=LISTED)
        script = PREPARE.format(workdir=workdir, base=base, grade=LISTED, manifest=manifest)
        script += LIST_IMPORTABLE.format(
            python=shlex.quote(python),
            script=shlex.quote(IMPORTABLE),
            workdir=workdir,
            grade=LISTED,
        )
        done = container.exec(["bash", "-c", script], timeout=600)
        if done.exit_code == 3:
            raise GradingError(f"listing the interpreter's modules failed: {done.err[-500:]}")
        if not done.ok:
            raise GradingError(f"resetting the repository failed: {done.err[-500:]}")
        self._prepared = True
        return self

    # ------------------------------------------------------------------ the diff and the tests

    def grade(self, diff: str) -> Grading:
        """The hidden tests under ``diff``, as many times as the case repeats them."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._failure is not None:
            raise self._failure
        if not self._prepared or self.container is None:
            raise GradingError("the grading container was not prepared")
        self._deadline = time.monotonic() + self.timeout + 300
        try:
            return self._grade(self.container, diff)
        finally:
            self._release()

    def _grade(self, container: Container, diff: str) -> Grading:
        case = self.case
        hidden = read_patch(case.hidden_tests.patch)
        diff_in, hidden_in = f"{GRADE_DIR}/agent.diff", f"{GRADE_DIR}/hidden.patch"
        applied = self._exec(
            APPLY.format(
                workdir=shlex.quote(case.environment.workdir),
                base=case.repository.base_commit,
                diff=diff_in,
                grade=LISTED,
                manifest=MANIFEST.format(grade=LISTED),
            ),
            600,
            stdin=diff.encode(errors="surrogateescape"),
        )
        if applied.limit is not None or applied.exit_code is None:
            # Putting the agent's diff in, and nothing else, hit a limit (a diff of blobs that
            # inflate past the memory limit, say): the agent's doing, so its tests failed.
            # Voiding the run instead would let a diff cancel its own losing run.
            why = f"applying the agent's diff hit the {applied.limit or 'time'} limit"
            return self._stopped(why, "none", [], limited=True)
        if applied.ok and applied.stdout_cut:
            # The listings went past the cap of what is read back: the base commit's fit (its
            # gold run calibrated), so it is the tree the agent's diff left. Its tests fail;
            # voiding the run would let a diff of a million long names cancel a losing run.
            why = f"the tree the agent's diff left is too large to list ({applied.stdout_cut} "
            why += "bytes of listing past the cap)"
            return self._stopped(why, "none", [], limited=True)
        if not applied.ok:
            raise GradingError(f"applying the agent's diff failed: {applied.err[-500:]}")
        found = read_tar(applied.stdout)
        how = (found.get("applied") or b"").decode(errors="replace").strip() or "none"
        names = [f"{w}.{k}" for w in ("before", "after") for k in ("files", "links", "other")]
        listed = {n: data for n in [*names, "base.tree"] if (data := found.get(n)) is not None}
        missing = [n for n in [*names, "base.tree"] if n not in listed]
        if missing:
            raise GradingError(f"the grading sandbox did not write {LISTED}/{missing[0]}")
        hidden_files = files_of_patch(hidden)
        gold_files = set(files_of_patch(read_patch(case.gold.patch)))
        tests = [*case.hidden_tests.fail_to_pass, *case.hidden_tests.pass_to_pass]
        base_tree = parse_tree(listed["base.tree"])
        plan = plan_restore(
            parse_manifest(listed["before.files"], listed["before.links"], listed["before.other"]),
            parse_manifest(listed["after.files"], listed["after.links"], listed["after.other"]),
            base_tree,
            hidden_files,
            case.hidden_tests.command,
            frozenset((found.get("importable") or b"").decode(errors="replace").split()),
            # Files of listed tests, unless the fix itself changes them (tests living in the
            # product's modules): the fix is never put back.
            [t for t in tests if t.split("::")[0] not in gold_files],
        )
        # Every file of a listed test is as the case has it once restored: honeypots are cloned
        # from those alone.
        honey = candidate_files(tests, {t.split("::")[0] for t in tests} - gold_files)
        unapplied, restored_files = self._restore(container, plan, hidden_in, honey)
        if unapplied is not None:
            if how in ("empty", "none") or not self._applies_at_base(container, hidden_in):
                # The hidden tests do not go on the base commit itself: the case is broken,
                # which says nothing about the agent's work.
                raise GradingError(f"the hidden tests did not apply: {unapplied}")
            # The gold fix takes the hidden tests (case validate checks it); a diff that the
            # hidden tests cannot go on top of leaves them failed. Voiding the run instead
            # would let an agent cancel a losing run by shaping its diff.
            if unapplied.startswith(RESTORE_LIMIT):
                return self._stopped(unapplied, how, plan, limited=True)
            why = f"the hidden tests did not go in on top of the agent's diff: {unapplied}"
            return self._stopped(why, how, plan, [unapplied])
        junit = shlex.quote(case.hidden_tests.junit_xml)
        command = case.hidden_tests.command.replace("{junit}", junit)
        guarded = "pytest" in command
        planting = plant(restored_files, tests, command) if guarded else None
        pots = planting.honeypots if planting else []
        reports: list[bytes | None] = []
        guards: list[GuardRecord | None] = []
        records: list[bytes] = []
        codes: list[int] = []
        outputs: list[str] = []
        stopped: str | None = None
        for n in range(1, case.hidden_tests.repeat + 1):
            # A report left from before (or planted by the diff) must not count.
            seed = _tar_files(planting.files) if planting and planting.files and n == 1 else None
            result = self._exec(
                TEST_RUN.format(
                    dir=f"{OUT}/{n}",
                    junit=junit,
                    grade=GRADE_DIR,
                    guard=self.guard,
                    no_limit=NO_FAILURE_LIMIT,
                    command=shlex.quote(f"( {command}\n)"),
                    plant=int(seed is not None),
                    workdir=shlex.quote(case.environment.workdir),
                    home=TEST_HOME,
                    owner=f"{TEST_UID}:{TEST_GID}",
                    switch=SWITCH_USER,
                    name=TEST_NAME,
                ),
                self.timeout,
                stdin=seed,
            )
            if result.limit is not None or result.exit_code is None:
                # The agent's code under the hidden tests hit a limit (memory, processes, time):
                # this repeat failed, and the container is gone, so no repeat follows. It is
                # not the grader's failure: that would let a diff void its own run.
                stopped = f"the hidden tests hit the {result.limit or 'time'} limit"
                codes.append(result.exit_code if result.exit_code else 137)
                outputs.append(result.err + f"\n[replay: {stopped}]\n")
                reports.append(None)
                guards.append(None)
                records.append(result.stdout)
                break
            codes.append(result.exit_code)
            outputs.append(result.err)
            records.append(result.stdout)
            found = _read_dir(container, f"{OUT}/{n}")
            reports.append(found.get("junit.xml"))
            guards.append(GuardRecord.parse(result.stdout, cut=result.stdout_cut > 0))
        self._release()
        if (
            stopped is None
            and all(r is None for r in reports)
            and runner_missing(command, codes, outputs)
        ):
            _check_runner_at_base(self.runtime, self.image, case, command, self.run_id, outputs)
        verdict = judge(
            reports,
            codes,
            case.hidden_tests.fail_to_pass,
            case.hidden_tests.pass_to_pass,
            guards if guarded else None,
            pots,
        )
        unreported = None
        if stopped is None and reports and all(r is None for r in reports):
            unreported = (
                f"the test command `{case.hidden_tests.command}` wrote no JUnit report "
                f"(exit {', '.join(map(str, codes))}); its output ends: {last_lines(outputs[0])}"
            )
        return Grading(
            verdict,
            how,
            outputs,
            reports,
            plan,
            stopped,
            unreported,
            records=records,
            honeypots=pots,
            honeypot_note=planting.note if planting else "the test command is not pytest",
            limited=stopped is not None,
        )

    def _stopped(
        self,
        why: str,
        how: str,
        plan: list[Restored],
        outputs: list[str] | None = None,
        *,
        limited: bool = False,
    ) -> Grading:
        """The hidden tests counted as failed, all of them, because of ``why``."""
        hidden = self.case.hidden_tests
        nothing = judge([None], [1], hidden.fail_to_pass, hidden.pass_to_pass)
        out = outputs or [f"[replay: {why}]"]
        return Grading(nothing, how, out, [None], plan, why, limited=limited)

    def _exec(self, script: str, timeout: float, stdin: bytes | None = None) -> ExecResult:
        """``bash -c script`` within both ``timeout`` and what is left of the grading's time:
        a command stopped by the latter hit the ``wall_time`` limit."""
        assert self.container is not None and self._deadline is not None
        left = self._deadline - time.monotonic()
        if left <= 0:
            return ExecResult(None, b"", b"", 0.0, limit="wall_time")
        done = self.container.exec(["bash", "-c", script], timeout=min(timeout, left), stdin=stdin)
        if done.limit is None and done.timed_out and left < timeout:
            return replace(done, limit="wall_time")
        return done

    def _restore(
        self, container: Container, plan: list[Restored], hidden_in: str, honey: list[str]
    ) -> tuple[str | None, dict[str, bytes]]:
        """Put the planned paths back and apply the hidden tests: why that failed (or None),
        and the restored contents of the test files ``honey`` (honeypots are cloned from them).
        """
        # Ancestors first, so a symbolic link the diff put in place of a directory goes before
        # anything is checked out beneath it.
        remove = sorted((r.path for r in plan), key=lambda p: (p.count("/"), p))
        checkout = [r.path for r in plan if r.action == "restored"]
        done = self._exec(
            RESTORE.format(
                workdir=shlex.quote(self.case.environment.workdir),
                base=self.case.repository.base_commit,
                grade=GRADE_DIR,
                hidden=hidden_in,
            ),
            300,
            stdin=restore_lists(remove, checkout, honey),
        )
        if done.limit is not None or done.exit_code is None:
            # What the diff left made putting the test set back hit a limit. The same restore
            # on a clean copy of the base commit tells whose that is.
            if self._applies_at_base(container, hidden_in):
                return f"{RESTORE_LIMIT} the {done.limit or 'time'} limit", {}
            raise GradingError(f"restoring the test set hit the {done.limit or 'time'} limit")
        if not done.ok:
            return done.err[-1000:], {}
        files = {k: v for k, v in read_tar(done.stdout, nested=True).items() if v is not None}
        return None, files

    def _applies_at_base(self, container: Container, hidden_in: str) -> bool:
        """Whether the hidden tests go on a clean copy of the base commit (outside the tree)."""
        scratch = f"{GRADE_DIR}/base-check"
        done = self._exec(
            f"set -eu; rm -rf {scratch}; mkdir -p {scratch}; "
            f"git -C {shlex.quote(self.case.environment.workdir)} archive "
            f"{self.case.repository.base_commit} | tar -x -C {scratch}; cd {scratch}; "
            f"git apply --check --binary {hidden_in}",
            300,
        )
        if done.limit is not None or done.exit_code is None:
            raise GradingError(
                f"checking the hidden tests at base hit the {done.limit or 'time'} limit"
            )
        return done.ok

    # ------------------------------------------------------------------ the end

    def _release(self) -> None:
        """Remove the container in the background (nothing more is read from it)."""
        container, self.container = self.container, None
        if container is not None:
            self._remover = threading.Thread(target=container.remove, daemon=True)
            self._remover.start()

    def close(self) -> None:
        """Wait for a preparation under way, and remove the container; idempotent."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._release()
        if self._remover is not None:
            self._remover.join()
            self._remover = None


def runner_missing(command: str, codes: list[int], outputs: list[str]) -> bool:
    """Whether every repeat says the test command's runner is not there: the shell found no
    such command (127), or Python has no module for ``-m <runner>``."""
    module = re.search(r"(?:^|\s)-m\s+([\w.]+)", command)
    missing = (
        re.compile(rf"No module named ['\"]?{re.escape(module.group(1))}\b") if module else None
    )
    return bool(codes) and all(
        code == 127 or (missing is not None and missing.search(out) is not None)
        for code, out in zip(codes, outputs, strict=True)
    )


def _check_runner_at_base(
    runtime: Runtime, image: str, case: Case, command: str, run_id: str, outputs: list[str]
) -> None:
    """The runner was missing under the agent's diff: run the same command in a fresh
    container of the environment image, untouched (the base commit, no diff, no hidden tests).
    Missing there too, the environment lacks it and the run says nothing of the model: a
    :class:`GradingError` (infra_fail) that quotes the output. Present there, the agent's diff
    made it go (a sitecustomize that hides it, say): the hidden tests failed, as graded."""
    spec = ContainerSpec(
        image=image,
        command=["sleep", "infinity"],
        workdir=case.environment.workdir,
        limits=Limits(cpus=2.0, memory=4 * 1024**3, pids=2048, wall_time=900),
        labels={"replay.role": "grade", "replay.base.case": case.id},
    )
    probe = runtime.create(spec, f"{run_id}-runner")
    try:
        done = probe.exec(
            ["bash", "-c", command.replace("{junit}", "/tmp/replay-probe.xml")], timeout=600
        )
    finally:
        probe.remove()
    if done.exit_code is None or not runner_missing(
        command, [done.exit_code], [done.out + done.err]
    ):
        return
    tail = "\n".join((outputs[0] if outputs else "").rstrip().splitlines()[-10:])
    raise GradingError(
        f"the environment image has no test runner for `{command}` (missing at the base "
        f"commit too, before any diff): the environment's fault, not the model's\n{tail}",
        outputs,
    )


def _nul(path: str) -> bytes:
    return path.encode(errors="surrogateescape") + b"\0"


def restore_lists(
    remove: Iterable[str], checkout: Iterable[str], honey: Iterable[str] = ()
) -> bytes:
    """RESTORE's standard input: a tar of ``remove.lst``, ``checkout.lst`` and ``honey.lst``
    (NUL-separated paths, so any name survives)."""
    lists = io.BytesIO()
    with tarfile.open(fileobj=lists, mode="w") as tar:
        for name, paths in (
            ("remove.lst", remove),
            ("checkout.lst", checkout),
            ("honey.lst", honey),
        ):
            data = b"".join(_nul(p) for p in paths)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return lists.getvalue()


def _tar_files(files: Mapping[str, bytes]) -> bytes:
    """A tar of ``files`` (relative paths), regular files of mode 644."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def read_tar(data: bytes, *, nested: bool = False) -> dict[str, bytes | None]:
    """The regular files of a tar stream, by name (only those at its top unless ``nested``);
    any other entry (a link, a directory, a device) is listed as None, never followed, and a
    name that climbs out (``..``, absolute) is left out. A stream that is not a tar gives what
    was read before it broke."""
    found: dict[str, bytes | None] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar:
                name = posixpath.normpath(member.name)
                if name in (".", "..") or name.startswith(("../", "/")):
                    continue
                if "/" in name and not nested:
                    continue
                handle = tar.extractfile(member) if member.isreg() else None
                found[name] = None if handle is None else handle.read()
    except tarfile.TarError:
        pass
    return found


def _read_dir(container: Container, path: str) -> dict[str, bytes | None]:
    """The regular files directly in the container's directory ``path``, by name (one
    copy-out); a directory that cannot be copied gives none. Anything but a regular file (a
    link, a directory, a device the agent's code left there) is listed as None, never
    followed."""
    with tempfile.TemporaryDirectory(prefix="replay-grade-out-") as tmp:
        try:
            container.copy_out(path, Path(tmp))
        except SandboxError:
            return {}  # no report is part of the verdict (every test missing), not a crash
        found = Path(tmp) / posixpath.basename(path)
        if found.is_symlink() or not found.is_dir():
            return {}
        return {
            f.name: (f.read_bytes() if f.is_file() and not f.is_symlink() else None)
            for f in found.iterdir()
        }
