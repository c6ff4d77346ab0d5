"""The hidden tests run as the user the agent ran as, not as root (third held-out corpus:
python-dotenv 2022's tests make a file unreadable and expect ``PermissionError``, which root
never gets, so its gold fix failed them). Run in the demo case's real grading container."""

from __future__ import annotations

import shlex
import uuid

from replay.base.case import load_case, read_patch
from replay.grade.hidden_tests import GRADE_DIR, TEST_HOME, GradingBox
from replay.runtime.base import Runtime
from tests.run.conftest import CARET, caret_env

__all__ = ["caret_env"]

# What a developer's account gets and root does not: a file without read permission cannot be
# opened. The check runs before the case's own command, in the same shell.
PERMISSION_CHECK = """\
import os, sys
path = os.path.join(os.environ["HOME"], "unreadable")
open(path, "w").close()
os.chmod(path, 0)
try:
    open(path).close()
except PermissionError:
    sys.exit(0)
sys.exit("opened a file without read permission: the tests run as root")
"""


def graded(runtime: Runtime, image: str, prefix: str, diff: str | None = None) -> object:
    case = load_case(CARET)
    hidden = case.hidden_tests
    command = f"{prefix} && {hidden.command}"
    case = case.model_copy(update={"hidden_tests": hidden.model_copy(update={"command": command})})
    diff = read_patch(case.gold.patch) if diff is None else diff
    with GradingBox(runtime, image, case, f"user-{uuid.uuid4().hex[:8]}") as box:
        return box.prepare().grade(diff)


def test_a_suite_that_expects_permission_errors_passes_with_the_gold_fix(
    caret_env: tuple[Runtime, str],
) -> None:
    runtime, image = caret_env
    check = f"python3 -c {shlex.quote(PERMISSION_CHECK)}"
    home = f'[ "$HOME" = {TEST_HOME} ] && [ -w "$HOME" ] && [ "$(id -u)" = 1000 ]'
    grading = graded(runtime, image, f"{check} && {home}")
    assert grading.verdict.resolved, grading.outputs[0][-2000:]  # type: ignore[attr-defined]


def test_product_code_in_the_test_process_cannot_write_the_graders_files(
    caret_env: tuple[Runtime, str],
) -> None:
    """As root, product code imported by the tests could rewrite the grader's plugin or the
    hidden patch in the grading container; as the agent's user it gets ``PermissionError``."""
    runtime, image = caret_env
    probe = (
        "import glob, sys\n"
        f"targets = glob.glob('{GRADE_DIR}/guard/*.py') + ['{GRADE_DIR}/hidden.patch']\n"
        "assert targets\n"
        "for t in targets:\n"
        "    try:\n"
        "        open(t, 'a').close()\n"
        "    except PermissionError:\n"
        "        continue\n"
        "    sys.exit('wrote ' + t)\n"
    )
    grading = graded(runtime, image, f"python3 -c {shlex.quote(probe)}")
    assert grading.verdict.resolved, grading.outputs[0][-2000:]  # type: ignore[attr-defined]
