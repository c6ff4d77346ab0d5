"""The image audit finds a planted copy of the answer in an environment or harness image.

The images are derived from the real base image by committing a container in which a copy of
a gold line (indented, as in a vendored module), a hidden test's name and a wheel holding the
gold line were planted; nothing here builds through a world.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
import yaml

from replay.base.case import Case, load_case
from replay.base.errors import CaseError
from replay.images import audit as audit_module
from replay.images.audit import (
    Marker,
    Scan,
    audit_images,
    case_images,
    case_markers,
    common_markers,
    copies,
    fix_contexts,
    in_fix_context,
    is_copy_of,
    markers_from,
    out_of_context,
    owner,
    project_names,
    propose_base_image,
    reference_image,
    scan_image,
)
from replay.images.base import Release, parse_base_tag, release_named
from replay.images.env import ENV_REPOSITORY
from replay.runtime import ContainerSpec, Runtime
from replay.runtime.base import ENV_IMAGE_LABEL, IMAGE_KIND_LABEL
from replay.snapshot.audit import base_text
from tests import worlds
from tests.cli_helpers import run_cli

FIX_LINE = "TOTAL_FROM_FIX = add(20, 22)  # the fix's own line"
BASE_LINE = "from lib import add"  # test_lib.py has it at the base commit: no leak
TEST_NAME = "test_total_from_fix_is_forty_two"
GOLD = f"""\
diff --git a/api.py b/api.py
new file mode 100644
--- /dev/null
+++ b/api.py
@@ -0,0 +1,3 @@
+{BASE_LINE}
+
+{FIX_LINE}
"""
HIDDEN = f"""\
diff --git a/test_api.py b/test_api.py
new file mode 100644
--- /dev/null
+++ b/test_api.py
@@ -0,0 +1,5 @@
+from api import TOTAL_FROM_FIX
+
+
+def {TEST_NAME}():
+    assert TOTAL_FROM_FIX == 42
"""
SITE = "/usr/lib/python3/dist-packages/vendored_geom"
WHEEL = "/usr/share/python-wheels/vendored_geom-1.0-py3-none-any.whl"
HARNESS_FILE = "/opt/harness/lib/notes.py"
ALONE = "/usr/lib/python3/dist-packages/unrelated_mod.py"
INSTALLED = "/usr/local/lib/python3.11/dist-packages/tiny/later.py"
GENERIC = "except TypeError:"
"""A gold line of 17 characters that bookworm's standard library and vendored pip already hold
(94 files): issue 34's false positive."""


def _write_case(
    dest: Path, snapshot: Path, case_id: str, accepted: list[dict[str, str]], gold: str = GOLD
) -> Path:
    path = worlds.write_case(dest, snapshot, _base_commit(snapshot))
    data = yaml.safe_load(path.read_text())
    data["id"] = case_id
    data["hidden_tests"]["fail_to_pass"] = [f"test_api.py::{TEST_NAME}"]
    data["hidden_tests"]["pass_to_pass"] = []
    data["side_effects"] = data["side_effects"][:1]
    if accepted:
        data["audit"] = {"accepted": accepted}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (dest / "gold.patch").write_text(gold)
    (dest / "hidden.patch").write_text(HIDDEN)
    return path


def _base_commit(snapshot: Path) -> str:
    from replay.snapshot import load_snapshot

    return load_snapshot(snapshot).manifest.repositories[0].base_commit


def _derive(
    runtime: Runtime, image: str, files: Path, repository: str, tag: str, label: str
) -> str:
    """``image`` with the tree ``files`` copied over its root, committed as repository:tag."""
    box = runtime.create(ContainerSpec(image=image, command=["sleep", "300"]), "image-audit-test")
    try:
        for top in sorted(files.iterdir()):  # copy_in puts the directory itself in "/"
            box.copy_in(top, "/", owner=(0, 0))
        return box.commit(repository, tag, changes=[f"LABEL {label}"])
    finally:
        box.remove()


def _tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        dest = root / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    return root


@pytest.fixture(scope="module")
def planted(
    runtime: Runtime,
    base_image: str,
    tiny_snapshot_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, str, str]]:
    """(case file, its environment image, a harness image on it), each with planted copies."""
    root = tmp_path_factory.mktemp("image-audit")
    case_id = f"image-audit-{uuid.uuid4().hex[:10]}"
    case = _write_case(root / "case", tiny_snapshot_dir, case_id, [])
    wheel = root / "wheel.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("vendored_geom/sums.py", f"{BASE_LINE}\n\n{FIX_LINE}\n")
    env_files = _tree(
        root / "env-files",
        {
            # An indented copy, as a vendored module would hold it; and the base's own line.
            f"{SITE}/__init__.py": f"def _compute():\n    {FIX_LINE}\n    {BASE_LINE}\n",
            # The fix's line alone amid other code, none of its neighbours near: no copy.
            ALONE: f"def unrelated():\n    value = compute()\n    {FIX_LINE}\n    return value\n",
            # The case's working directory holds the repository: never searched.
            "/workspace/repo/notes.py": f"# {FIX_LINE}\n",
            # A later release of the project (acme/tiny) installed: even a line the base
            # image also holds is a leak there.
            INSTALLED: f"def later():\n    try:\n        pass\n    {GENERIC}\n        pass\n",
        },
    )
    (env_files / WHEEL.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wheel, env_files / WHEEL.lstrip("/"))
    env_id = _derive(
        runtime, base_image, env_files, ENV_REPOSITORY, case_id, f"{IMAGE_KIND_LABEL}=env"
    )
    harness_ref = f"replay-harness:{case_id}"
    harness_files = _tree(root / "harness-files", {HARNESS_FILE: f"# see {TEST_NAME}\n"})
    _derive(
        runtime,
        env_id,
        harness_files,
        "replay-harness",
        case_id,
        f"{IMAGE_KIND_LABEL}=harness {ENV_IMAGE_LABEL}={env_id}",
    )
    try:
        yield case, f"{ENV_REPOSITORY}:{case_id}", harness_ref
    finally:
        subprocess.run(["docker", "rmi", harness_ref, f"{ENV_REPOSITORY}:{case_id}"], check=False)


def _accepting(case: Path, accepted: list[dict[str, str]]) -> Case:
    data = yaml.safe_load(case.read_text())
    data["audit"] = {"accepted": accepted}
    other = case.parent / f"accepting-{uuid.uuid4().hex[:6]}.yaml"
    other.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_case(other)


# ----------------------------------------------------------------------------- markers


def test_markers_leave_out_what_the_base_already_holds(planted: tuple[Path, str, str]) -> None:
    case = load_case(planted[0])
    assert BASE_LINE in base_text(case)
    assert case_markers(case) == [Marker(FIX_LINE, "gold line"), Marker(TEST_NAME, "test name")]


def test_markers_from_texts() -> None:
    gold = (
        "+++ b/x.py\n+    short = 1\n+    value = compute_the_answer(1)\n+    kept_by_base_line()\n"
    )
    tests = "+def test_answer_is_right():\n+def test_x():\n+class TestAnswerSuite:\n"
    found = markers_from(gold, tests, "kept_by_base_line()\n")
    assert found == [
        Marker("value = compute_the_answer(1)", "gold line"),
        Marker("TestAnswerSuite", "test name"),
        Marker("test_answer_is_right", "test name"),
    ]


def test_a_comment_only_gold_line_makes_no_copy_and_counts_only_in_one() -> None:
    """python-dotenv 2019 (third held-out corpus): its type comments are in pip, two in one
    file, which made pip's file a copy of the fix and stopped the case at the image audit. A
    comment-only line makes no file a copy, and its hit counts only in a copy of the project
    (tomli's vendored copies still leak by a comment: tests/images/test_real_leak.py)."""
    from replay.images.audit import Scan, _uncommon, copies

    pip = "/usr/lib/python3/dist-packages/pip/_internal/utils/misc.py"
    hits = [(pip, "# type: () -> None"), (pip, "# type: (Text, Optional[Text]) -> bool")]
    assert copies(hits, {"dotenv"}) == set()
    vendored = "/usr/lib/python3/dist-packages/pip/_vendor/dotenv/main.py"
    scan = Scan("img", [*hits, (vendored, "# type: () -> None")], [], {})
    assert _uncommon(scan, {}, {"dotenv", "python_dotenv"}).hits == [
        (vendored, "# type: () -> None")
    ]


GOLD_WITH_GENERIC = f"""\
diff --git a/api.py b/api.py
new file mode 100644
--- /dev/null
+++ b/api.py
@@ -0,0 +1,7 @@
+{BASE_LINE}
+
+{FIX_LINE}
+try:
+    TOTAL_FROM_FIX += 0
+{GENERIC}
+    pass
"""
BOOKWORM = release_named("bookworm")  # released 2023-06-10


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_what_a_base_image_released_before_t_holds_is_common() -> None:
    hits = [
        ("/usr/lib/python3.11/argparse.py", GENERIC),
        ("/usr/lib/python3/dist-packages/pip/_internal/utils/misc.py", GENERIC),
        ("/usr/lib/python3.11/io.py", "# Pretend this exception was created here."),
    ]
    common = common_markers(hits, BOOKWORM, _at("2024-05-01"), {"tomli"})
    assert common == {
        GENERIC: [
            "/usr/lib/python3.11/argparse.py",
            "/usr/lib/python3/dist-packages/pip/_internal/utils/misc.py",
        ],
        "# Pretend this exception was created here.": ["/usr/lib/python3.11/io.py"],
    }


def test_a_base_image_released_after_t_holds_nothing_common() -> None:
    """Issue 16: bookworm's tomllib and vendored tomli are later copies of a 2021 tomli fix."""
    hits = [("/usr/lib/python3.11/tomllib/_parser.py", "ILLEGAL_MULTILINE_LITERAL_STR_CHARS = X")]
    hits.append(("/usr/lib/python3.11/argparse.py", GENERIC))
    assert common_markers(hits, BOOKWORM, _at("2021-07-30"), {"tomli"}) == {}
    assert common_markers(hits, BOOKWORM, _at("2023-06-09"), {"tomli"}) == {}


def test_a_marker_the_base_image_holds_in_a_copy_of_the_project_stays_searched() -> None:
    """A stable update may carry the fix into a vendored copy: the marker is no common text,
    even where an unrelated file also holds it."""
    marker = "if retries.is_exhausted():"
    hits = [
        ("/usr/share/python-wheels/urllib3-1.26.12-py2.py3-none-any.whl!urllib3/util.py", marker),
        ("/usr/lib/python3/dist-packages/pip/_vendor/urllib3/connectionpool.py", marker),
        ("/usr/lib/python3.11/http/client.py", marker),
    ]
    assert common_markers(hits, BOOKWORM, _at("2024-05-01"), {"urllib3"}) == {}
    assert common_markers(hits, BOOKWORM, _at("2024-05-01"), {"requests"}) != {}


BULLSEYE = release_named("bullseye")  # released 2021-08-14, the oldest base image
TRIXIE = release_named("trixie")  # released 2025-08-09
DATEUTIL_T = "2019-11-02"  # dateutil's fix of gettz's error message: before every base image
DATEUTIL = {"python_dateutil", "dateutil"}
PIP_WHEEL = "/usr/share/python-wheels/pip-20.3.4-py2.py3-none-any.whl"
SPREAD = [
    ("/usr/lib/python3.9/argparse.py", GENERIC),
    ("/usr/lib/python3.9/unittest/mock.py", GENERIC),
    ("/usr/lib/python3.9/unittest/case.py", GENERIC),
    ("/usr/lib/python3/dist-packages/pip/_internal/utils/misc.py", GENERIC),
    (f"{PIP_WHEEL}!pip/_internal/utils/misc.py", GENERIC),
]
"""A generic line in three unrelated packages (argparse, unittest, pip) of five files."""


@pytest.mark.parametrize(
    ("path", "package"),
    [
        ("/usr/lib/python3.9/argparse.py", "argparse"),
        ("/usr/lib/python3.11/unittest/mock.py", "unittest"),
        ("/usr/lib/python3/dist-packages/pip/_internal/utils/misc.py", "pip"),
        ("/usr/lib/python3/dist-packages/pip-20.3.4.dist-info/RECORD", "pip"),
        (f"{PIP_WHEEL}!pip/_internal/utils/misc.py", "pip"),
        ("/usr/local/lib/python3.11/dist-packages/tiny/later.py", "tiny"),
        ("/opt/venv/lib/python3.11/site-packages/six.py", "six"),
        # Vendored code belongs to what is vendored, wherever it is vendored.
        ("/usr/lib/python3/dist-packages/pip/_vendor/packaging/version.py", "packaging"),
        ("/usr/lib/python3/dist-packages/setuptools/_vendor/packaging/version.py", "packaging"),
        (f"{PIP_WHEEL}!pip/_vendor/packaging/version.py", "packaging"),
        ("/usr/lib/python3/dist-packages/pip/_vendor/six.py", "six"),
        ("/usr/lib/python3/dist-packages/pip/_vendor/vendor.txt", "pip"),
        ("/usr/lib/python3/dist-packages/pip/_vendor/__init__.py", "pip"),
        # Outside a Python library: one owner per tree.
        ("/usr/share/doc/python3-pip/changelog", "/usr/share"),
        ("/usr/share/perl5/Debian/Foo.pm", "/usr/share"),
        ("/opt/harness/lib/notes.py", "/opt/harness"),
        ("/etc/profile", "/etc"),
    ],
)
def test_the_owner_of_a_file_is_its_package(path: str, package: str) -> None:
    assert owner(path) == package


def test_a_base_image_released_after_t_discounts_text_spread_over_three_packages() -> None:
    """Issue 34: a 2019 dateutil fix is older than every base image; its generic line, in the
    standard library and pip of the oldest base image built here, is idiom older than any fix."""
    other = [("/usr/lib/python3.9/csv.py", "if isinstance(name, bytes):")]
    common = common_markers(SPREAD + other, BULLSEYE, _at(DATEUTIL_T), DATEUTIL)
    assert common == {GENERIC: sorted(path for path, _ in SPREAD)}


@pytest.mark.parametrize(
    "held",
    [
        ["/usr/lib/python3.9/csv.py"],
        # Three files, two packages (bookworm holds ``except TypeError as e:`` so).
        [
            "/usr/lib/python3.9/csv.py",
            "/usr/lib/python3.9/unittest/case.py",
            "/usr/lib/python3.9/unittest/mock.py",
        ],
        # One package vendored three times, and pip's wheel: one piece of code.
        [
            "/usr/lib/python3/dist-packages/pip/_vendor/packaging/version.py",
            "/usr/lib/python3/dist-packages/setuptools/_vendor/packaging/version.py",
            "/usr/lib/python3/dist-packages/pkg_resources/_vendor/packaging/version.py",
            f"{PIP_WHEEL}!pip/_vendor/packaging/version.py",
        ],
    ],
)
def test_a_base_image_released_after_t_discounts_nothing_held_in_one_or_two_packages(
    held: list[str],
) -> None:
    """A later release of the project may hold the fix's line in one place, or be vendored:
    what one or two packages hold may be a later copy (issue 16)."""
    hits = [(path, GENERIC) for path in held]
    assert common_markers(hits, BULLSEYE, _at(DATEUTIL_T), DATEUTIL) == {}
    # Released by T, the same image vouches for all it holds outside a copy (unchanged).
    assert common_markers(hits, BULLSEYE, _at("2022-01-01"), DATEUTIL) == {GENERIC: sorted(held)}


@pytest.mark.parametrize(
    "copy",
    [
        # A later dateutil installed, or a renamed copy holding two distinctive lines of it.
        [("/usr/lib/python3/dist-packages/dateutil/tz/tz.py", GENERIC)],
        [
            ("/usr/lib/python3.9/zoneinfo/_tzpath.py", GENERIC),
            ("/usr/lib/python3.9/zoneinfo/_tzpath.py", "gettz argument should be str"),
            ("/usr/lib/python3.9/zoneinfo/_tzpath.py", "tzpath must be a list or tuple"),
        ],
    ],
)
def test_a_base_image_released_after_t_discounts_nothing_a_copy_of_the_fix_holds(
    copy: list[tuple[str, str]],
) -> None:
    hits = SPREAD + copy
    assert GENERIC not in common_markers(hits, BULLSEYE, _at(DATEUTIL_T), DATEUTIL)
    # Released by T, only a copy named like the project is one (a file that release froze
    # before T is older text, whatever it holds): see the python-lz4 test below.
    named = all(is_copy_of(path, DATEUTIL) for path, _ in copy)
    released_by_t = common_markers(hits, BULLSEYE, _at("2022-01-01"), DATEUTIL)
    assert (GENERIC not in released_by_t) == named


def test_generic_lines_make_no_copy_of_an_unrelated_module() -> None:
    """Found by the held-out corpus (simplejson 2026): a fix adding ``import traceback``,
    ``except BaseException:`` and ``def __init__(self):`` made every standard-library module
    holding two of them a "copy" of the fix, so none of its lines could be discounted and the
    case stopped at the image audit. Lines spread over three unrelated packages are idiom and
    do not count towards a copy; a line held in one module still counts as that module's."""
    idiom = ["import traceback", "except BaseException:"]
    stdlib = ["asyncio/base_events.py", "_pyrepl/console.py", "code.py", "pdb.py"]
    hits = [(f"/usr/lib/python3.13/{m}", line) for m in stdlib for line in idiom]
    assert copies(hits, {"simplejson"}) == set()
    rare = ("/usr/lib/python3.13/_pyrepl/console.py", "self._asdict_parity = True")
    assert copies([*hits, rare], {"simplejson"}) == set()  # one distinctive line: no copy
    twice = ("/usr/lib/python3.13/_pyrepl/console.py", "for_json = getattr(o, 'for_json')")
    assert copies([*hits, rare, twice], {"simplejson"}) == {
        "/usr/lib/python3.13/_pyrepl/console.py"
    }
    common = common_markers([*hits, rare], TRIXIE, _at("2026-04-18"), {"simplejson"})
    assert set(common) == {*idiom, rare[1]}


def test_a_reference_released_by_t_discounts_as_before() -> None:
    """From a reference released by T, all text outside a copy is older, however few packages
    hold it; the generic rule is not applied."""
    hits = [*SPREAD, ("/usr/lib/python3.9/csv.py", "if isinstance(name, bytes):")]
    common = common_markers(hits, BULLSEYE, _at("2022-01-01"), DATEUTIL)
    assert common == {
        GENERIC: sorted(path for path, _ in SPREAD),
        "if isinstance(name, bytes):": ["/usr/lib/python3.9/csv.py"],
    }


class _Built:
    """A runtime that has exactly the images named built (the reference is chosen by name)."""

    def __init__(self, *images: str) -> None:
        self.images = set(images)

    def image_id(self, image: str) -> str | None:
        return f"sha256:{image}" if image in self.images else None


REAL_CASE = Path(__file__).resolve().parents[2] / "cases" / "tomli-multiline-cr" / "case.yaml"


def _reference(
    at: str, base: str, built: tuple[str, ...]
) -> tuple[Case, tuple[str, Release] | None]:
    """The real tomli case moved to ``at`` on ``base``, and its reference with ``built``."""
    case = load_case(REAL_CASE)
    environment = case.environment.model_copy(update={"base_image": base})
    case = case.model_copy(update={"at": _at(at), "environment": environment})
    return case, reference_image(case, cast(Runtime, _Built(*built)))


@pytest.mark.parametrize(
    ("at", "base", "built", "reference"),
    [
        # The case's own base, released before T.
        ("2026-03-12", "replay-base:bookworm", ("replay-base:bookworm",), "replay-base:bookworm"),
        # Its base came out after T: the newest base released by T, if built here.
        ("2022-05-01", "replay-base:bookworm", ("replay-base:bullseye",), "replay-base:bullseye"),
        (
            "2024-01-01",
            "replay-base:trixie",
            ("replay-base:bullseye", "replay-base:bookworm"),
            "replay-base:bookworm",
        ),
        # An image not of ours is never the reference; ours released by T may be.
        ("2024-01-01", "my/python:3.11", ("my/python:3.11",), None),
        ("2024-01-01", "my/python:3.11", ("replay-base:bookworm",), "replay-base:bookworm"),
    ],
)
def test_the_reference_is_a_base_image_released_by_t(
    at: str, base: str, built: tuple[str, ...], reference: str | None
) -> None:
    case, found = _reference(at, base, built)
    assert (found[0] if found else None) == reference
    if found:
        assert found[1].released <= case.at.date()


@pytest.mark.parametrize(
    ("at", "base", "built", "reference"),
    [
        # Before every release (tomli-multiline-cr's T, dateutil's): the oldest built.
        ("2021-07-30", "replay-base:bullseye", ("replay-base:bullseye",), "replay-base:bullseye"),
        (
            DATEUTIL_T,
            "replay-base:trixie",
            ("replay-base:trixie", "replay-base:bookworm"),
            "replay-base:bookworm",
        ),
        (
            DATEUTIL_T,
            "my/python:3.11",
            ("replay-base:trixie", "replay-base:bookworm", "replay-base:bullseye"),
            "replay-base:bullseye",
        ),
        # The case's own base (with a toolchain) before the plain image of its release.
        (
            DATEUTIL_T,
            "replay-base:bullseye-build",
            ("replay-base:bullseye", "replay-base:bullseye-build"),
            "replay-base:bullseye-build",
        ),
        # Released by T but not built here: the oldest built, though released after T.
        ("2022-05-01", "replay-base:bookworm", ("replay-base:bookworm",), "replay-base:bookworm"),
        # No base image of ours built: no reference.
        (DATEUTIL_T, "replay-base:bullseye", (), None),
        (DATEUTIL_T, "my/python:3.11", ("my/python:3.11",), None),
    ],
)
def test_with_no_base_image_released_by_t_built_the_reference_is_the_oldest_built(
    at: str, base: str, built: tuple[str, ...], reference: str | None
) -> None:
    case, found = _reference(at, base, built)
    assert (found[0] if found else None) == reference
    if found:
        parsed = parse_base_tag(found[0])
        assert parsed is not None and parsed[0] == found[1]
        assert found[1].released > case.at.date()


def test_the_notes_say_a_reference_released_after_t_discounts_only_generic_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dateutil case of issue 34, with only bookworm built: its generic line is discounted,
    the notes say by which rule, and a line held in one package still counts."""
    case = load_case(REAL_CASE)
    environment = case.environment.model_copy(update={"base_image": "replay-base:bullseye"})
    case = case.model_copy(update={"at": _at(DATEUTIL_T), "environment": environment})
    once = ("/usr/lib/python3.11/posixpath.py", "if isinstance(name, bytes):")
    hits = [(path.replace("python3.9", "python3.11"), text) for path, text in SPREAD]
    searched: list[str] = []

    def scan(runtime: Runtime, image: str, markers: object, **_: object) -> Scan:
        searched.append(image)
        return Scan(image, [*hits, once])

    monkeypatch.setattr(audit_module, "scan_image", scan)
    runtime = cast(Runtime, _Built("replay-base:trixie", "replay-base:bookworm"))
    markers = [Marker(GENERIC, "gold line"), Marker(once[1], "gold line")]
    common, notes = audit_module._common(case, runtime, markers, DATEUTIL)
    assert searched == ["replay-base:bookworm"]
    assert common == {GENERIC: sorted(path for path, _ in hits)}
    assert notes[0].startswith(
        "reference released after T: only text spread over 3 unrelated packages is discounted;"
        " replay-base:bookworm (Debian bookworm, released 2023-06-10) is the oldest base image"
    ), notes
    assert "`replay image base --release" not in notes[0]  # none was released by T
    assert len(notes) == 2 and GENERIC in notes[1] and "(argparse, pip, unittest)" in notes[1]


def test_a_file_holding_two_markers_is_a_copy_whatever_its_name() -> None:
    """The standard library's tomllib is tomli renamed: two of the fix's lines in one file."""
    hits = [
        ("/usr/lib/python3.11/tomllib/_parser.py", "ILLEGAL_A = X"),
        ("/usr/lib/python3.11/tomllib/_parser.py", "ILLEGAL_B = ILLEGAL_A"),
        ("/usr/lib/python3.11/tomllib/__init__.py", "# Pretend this exception was created here."),
        ("/usr/lib/python3/dist-packages/pip/_vendor/tomli/__init__.py", "# Pretend this"),
    ]
    assert copies(hits, {"tomli"}) == {
        "/usr/lib/python3.11/tomllib/_parser.py",
        "/usr/lib/python3/dist-packages/pip/_vendor/tomli/__init__.py",
    }
    # Released after T (tomli's 2021 fixes), bookworm's tomllib may be a later copy: nothing
    # it holds is common. Released by T, only the copy named tomli is one.
    assert common_markers(hits, BOOKWORM, _at("2022-01-01"), {"tomli"}) == {}
    assert common_markers(hits, BOOKWORM, _at("2024-05-01"), {"tomli"}) == {
        "ILLEGAL_A = X": ["/usr/lib/python3.11/tomllib/_parser.py"],
        "ILLEGAL_B = ILLEGAL_A": ["/usr/lib/python3.11/tomllib/_parser.py"],
        "# Pretend this exception was created here.": ["/usr/lib/python3.11/tomllib/__init__.py"],
    }


# Glom's 2020 fix (mahmoud/glom c2acc2b, BSD-3-Clause): a hunk of its glom/core.py, as its
# diff shows it. Its first added line is the signature of reprlib.Repr.repr1, which it
# overrides; reprlib.py and pydoc.py hold the same line (fifth corpus, section 12.4).
GLOM_2020 = """\
diff --git a/glom/core.py b/glom/core.py
--- a/glom/core.py
+++ b/glom/core.py
@@ -10,8 +10,8 @@ class _BBRepr(Repr):
         for name in ('maxtuple', 'maxlist', 'maxarray', 'maxdict', 'maxset'):
             setattr(self, name, 1024)

-    def repr1(self, x, maxlevel):
-        ret = Repr.repr1(self, x, maxlevel)
+    def repr1(self, x, level):
+        ret = Repr.repr1(self, x, level)
         if not ret.startswith('<'):
             return ret
         return _BUILTIN_ID_NAME_MAP.get(id(x), ret)
"""
REPR1 = "def repr1(self, x, level):"


def test_fix_contexts_are_the_lines_around_each_added_line_in_the_patched_file() -> None:
    contexts = fix_contexts(GLOM_2020)
    assert set(contexts) == {REPR1, "ret = Repr.repr1(self, x, level)"}
    assert contexts[REPR1] == {
        "for name in ('maxtuple', 'maxlist', 'maxarray', 'maxdict', 'maxset'):",
        "setattr(self, name, 1024)",
        "",
        "ret = Repr.repr1(self, x, level)",
        "if not ret.startswith('<'):",
        "return ret",
    }
    # Removed lines are not in the patched file; a second hunk starts afresh.
    two = GLOM_2020 + "@@ -90,3 +90,4 @@\n context_far_away = 1\n+added_far_away = 2\n"
    assert "def repr1(self, x, maxlevel):" not in fix_contexts(two)[REPR1]
    assert fix_contexts(two)["added_far_away = 2"] == {"context_far_away = 1"}
    assert "context_far_away = 1" not in fix_contexts(two)[REPR1]


def test_a_line_is_in_the_fix_context_by_one_telling_neighbour_or_two_shorter_ones() -> None:
    context = fix_contexts(GLOM_2020)[REPR1]
    # reprlib.py's own lines around its repr1: nothing of glom's.
    reprlib = {"return self.repr1(x, self.maxlevel)", "", "typename = type(x).__name__"}
    assert not in_fix_context(reprlib, context)
    # A copy of glom's code: its neighbours come with it.
    assert in_fix_context({"setattr(self, name, 1024)"}, context)
    # One short shared line is chance; two are not.
    assert not in_fix_context({"return ret", "x = 1"}, context)
    assert in_fix_context({"return ret", "if not ret.startswith('<'):"}, context)
    # Blank and short lines never count.
    assert not in_fix_context({"", "pass", "else:"}, context | {"pass", "else:"})


def test_a_gold_line_alone_in_other_code_is_no_leak_and_in_its_context_or_a_copy_it_is() -> None:
    contexts = fix_contexts(GLOM_2020)
    reprlib = "/usr/lib/python3.11/reprlib.py"
    copy = "/usr/lib/python3/dist-packages/vendored_bbrepr.py"
    renamed = "/usr/lib/python3/dist-packages/other/core.py"
    unknown = "/usr/share/big.py"
    hits = [(reprlib, REPR1), (copy, REPR1), (renamed, REPR1), (unknown, REPR1)]
    near = {
        (reprlib, REPR1): frozenset({"return self.repr1(x, self.maxlevel)", ""}),
        (copy, REPR1): frozenset({"setattr(self, name, 1024)", ""}),
        (renamed, REPR1): frozenset({"unrelated = 1"}),
    }
    scan = Scan("img", hits, [], {}, near)
    kept, notes = out_of_context(scan, contexts, {renamed})
    # The copy by context, the copy by copies(), and the hit whose surroundings are unknown.
    assert kept.hits == [(copy, REPR1), (renamed, REPR1), (unknown, REPR1)]
    assert kept.near == near
    assert notes == [
        f"img: no leak in {reprlib}: {REPR1!r} stands there alone, with none of the lines "
        "around it in the fix near it: other code that reads the same, not a copy"
    ]
    # A marker the fix does not add (a test name) is not judged by context.
    names = Scan("img", [(reprlib, "test_something_long")], [], {}, {})
    assert out_of_context(names, contexts, set())[0].hits == names.hits


def test_project_names_and_copies() -> None:
    gold = "diff --git a/src/humanize/filesize.py b/src/humanize/filesize.py\n"
    gold += "diff --git a/CHANGELOG.md b/CHANGELOG.md\n"
    tests = "diff --git a/tests/test_filesize.py b/tests/test_filesize.py\n"
    names = project_names("python-humanize/humanize", gold, tests)
    assert names == {"humanize"}
    assert project_names("dateutil/python-dateutil", "") == {"python_dateutil"}
    assert is_copy_of("/usr/lib/python3/dist-packages/humanize/filesize.py", names)
    assert is_copy_of("/opt/w/humanize-4.9.0-py3-none-any.whl!humanize/filesize.py", names)
    assert is_copy_of("/usr/lib/python3/dist-packages/Humanize-4.9.0.dist-info/RECORD", names)
    assert not is_copy_of("/usr/lib/python3.11/argparse.py", names)
    assert is_copy_of("/x/python_dateutil-2.8.2.dist-info/METADATA", {"python_dateutil"})


# ----------------------------------------------------------------------------- images


def test_planted_gold_line_in_site_packages_is_a_leak(
    runtime: Runtime, planted: tuple[Path, str, str]
) -> None:
    case_file, env, harness = planted
    case = load_case(case_file)
    assert case_images(case, runtime) == [env, harness]
    result = audit_images(case, runtime)
    assert result.images == [env, harness]
    found = {(h.image, h.path, h.marker.text, h.marker.kind) for h in result.leaks}
    assert found == {
        (env, f"{SITE}/__init__.py", FIX_LINE, "gold line"),
        (env, f"{WHEEL}!vendored_geom/sums.py", FIX_LINE, "gold line"),
        # The harness image is the env image plus its layer: it carries both copies too.
        (harness, f"{SITE}/__init__.py", FIX_LINE, "gold line"),
        (harness, f"{WHEEL}!vendored_geom/sums.py", FIX_LINE, "gold line"),
        (harness, HARNESS_FILE, TEST_NAME, "test name"),
    }
    assert result.accepted == []
    # The fix's line alone in other code is no leak, and the notes say why.
    assert all(h.path != ALONE for h in result.hits)
    alone = f"{env}: no leak in {ALONE}: {FIX_LINE!r} stands there alone"
    assert any(n.startswith(alone) for n in result.notes), result.notes
    # The base's own line was planted beside the fix's, and the workdir's copy is not searched.
    assert all(h.marker.text != BASE_LINE for h in result.hits)
    assert all(not h.path.startswith("/workspace/repo/") for h in result.hits)


def test_a_line_the_base_image_already_held_is_no_leak_and_a_later_copy_still_is(
    runtime: Runtime,
    planted: tuple[Path, str, str],
    tiny_snapshot_dir: Path,
    tmp_path: Path,
) -> None:
    """Issue 34, cause 5: the base image (bookworm, released before the case's T) holds the
    generic gold line in its standard library and vendored pip: no leak there. The planted
    later copies of the fix (site-packages, a wheel) are still leaks, and so is the generic
    line in a later release of the project itself installed into the image."""
    _, env, harness = planted
    path = _write_case(
        tmp_path / "case", tiny_snapshot_dir, "image-audit-generic", [], GOLD_WITH_GENERIC
    )
    case = load_case(path)
    assert case.environment.base_image == "replay-base:bookworm"
    assert Marker(GENERIC, "gold line") in case_markers(case)
    result = audit_images(case, runtime, images=[env, harness])
    assert {(h.image, h.path) for h in result.hits if h.marker.text == GENERIC} == {
        (env, INSTALLED),
        (harness, INSTALLED),
    }
    held = result.common[GENERIC]
    assert any(p.startswith("/usr/lib/python3.11/") for p in held), held
    assert any("/pip/" in p for p in held), held
    assert list(result.common) == [GENERIC]
    found = {(h.image, h.path, h.marker.text) for h in result.leaks}
    assert found == {
        (env, f"{SITE}/__init__.py", FIX_LINE),
        (env, f"{WHEEL}!vendored_geom/sums.py", FIX_LINE),
        (harness, f"{SITE}/__init__.py", FIX_LINE),
        (harness, f"{WHEEL}!vendored_geom/sums.py", FIX_LINE),
        (harness, HARNESS_FILE, TEST_NAME),
        (env, INSTALLED, GENERIC),
        (harness, INSTALLED, GENERIC),
    }
    said = f"no leak outside a copy of the project: {GENERIC!r}, which replay-base:bookworm ("
    assert any(n.startswith(said) for n in result.notes), result.notes


def test_accepted_hit_is_listed_with_its_reason_not_as_a_leak(
    runtime: Runtime, planted: tuple[Path, str, str]
) -> None:
    case_file, env, _ = planted
    reason = "the interpreter's vendored copy mirrors the fix"
    case = _accepting(
        case_file,
        [
            {"path_glob": "/usr/lib/python3/dist-packages/vendored_geom/*", "reason": reason},
            {"path_glob": "/usr/share/python-wheels/*", "pattern": "TOTAL_FROM", "reason": "r2"},
            {"pattern": TEST_NAME, "reason": "the harness notes name it"},
        ],
    )
    result = audit_images(case, runtime)
    assert result.leaks == []
    reasons = {(h.image, h.path): h.accepted for h in result.accepted}
    assert reasons[(env, f"{SITE}/__init__.py")] == reason
    assert reasons[(env, f"{WHEEL}!vendored_geom/sums.py")] == "r2"
    assert len(result.accepted) == 5


def test_an_entry_that_does_not_cover_the_hit_accepts_nothing(
    runtime: Runtime, planted: tuple[Path, str, str]
) -> None:
    case = _accepting(
        planted[0],
        [{"path_glob": f"{SITE}/*", "pattern": "not the marker", "reason": "wrong pattern"}],
    )
    result = audit_images(case, runtime, images=[planted[1]])
    assert {h.path for h in result.leaks} == {
        f"{SITE}/__init__.py",
        f"{WHEEL}!vendored_geom/sums.py",
    }


def test_clean_image_has_no_hit(
    runtime: Runtime, base_image: str, planted: tuple[Path, str, str]
) -> None:
    case = load_case(planted[0])
    result = audit_images(case, runtime, images=[base_image])
    assert result.images == [base_image]
    assert result.hits == []
    assert result.notes == []


def test_scan_finds_indented_copies_and_ignores_excluded_dirs(
    runtime: Runtime, planted: tuple[Path, str, str]
) -> None:
    env = planted[1]
    everything = scan_image(runtime, env, [FIX_LINE])
    assert ("/workspace/repo/notes.py", FIX_LINE) not in everything.hits  # not under SCANNED
    scan = scan_image(runtime, env, [FIX_LINE], scanned=["/workspace", "/usr"], exclude=["/usr"])
    assert scan.hits == [("/workspace/repo/notes.py", FIX_LINE)]
    # No directory to search is no hit (grep -r alone would search the working directory).
    assert scan_image(runtime, env, [FIX_LINE], scanned=["/no/such/dir"]).hits == []


def test_propose_base_image_picks_one_without_the_answer(
    runtime: Runtime, base_image: str, planted: tuple[Path, str, str]
) -> None:
    env = planted[1]
    markers = [Marker(FIX_LINE, "gold line")]
    proposal = propose_base_image(
        runtime, markers, env, candidates=[env, base_image, "replay-base:nope"]
    )
    assert proposal.proposed == base_image
    assert proposal.missing == ["replay-base:nope"]
    assert {h.path for h in proposal.scans[env]} == {
        f"{SITE}/__init__.py",
        f"{WHEEL}!vendored_geom/sums.py",
        ALONE,
    }
    # Given the fix's contexts, the line found alone is no leak there either.
    judged = propose_base_image(
        runtime, markers, env, candidates=[env], contexts=fix_contexts(GOLD), names={"tiny"}
    )
    assert {h.path for h in judged.scans[env]} == {
        f"{SITE}/__init__.py",
        f"{WHEEL}!vendored_geom/sums.py",
    }
    assert proposal.scans[base_image] == []
    kept = propose_base_image(runtime, markers, base_image, candidates=[env, base_image])
    assert kept.proposed == base_image  # the current one is clean: keep it


# ----------------------------------------------------------------------------- the command


def test_case_audit_command_fails_on_a_leak_and_passes_an_accepted_one(
    capsys: pytest.CaptureFixture[str], planted: tuple[Path, str, str]
) -> None:
    case_file, env, harness = planted
    result = run_cli(capsys, "case", "audit", str(case_file))
    assert result.code == 1, result.out + result.err
    assert f"LEAK  {env}:{SITE}/__init__.py: gold line {FIX_LINE!r}" in result.out
    assert f"LEAK  {harness}:{HARNESS_FILE}: test name {TEST_NAME!r}" in result.out
    assert "clean: snapshot" in result.out
    # The base image the case names carries none of it: the proposal keeps it.
    assert "replay-base:bookworm itself is clean" in result.out
    data = yaml.safe_load(case_file.read_text())
    data["audit"] = {
        "accepted": [
            {"pattern": FIX_LINE, "reason": "mirrors the interpreter"},
            {"pattern": TEST_NAME, "reason": "harness notes"},
        ]
    }
    other = case_file.parent / "accepted.yaml"
    other.write_text(yaml.safe_dump(data, sort_keys=False))
    result = run_cli(capsys, "case", "audit", str(other))
    assert result.code == 0, result.out + result.err
    assert "LEAK" not in result.out
    assert (
        f"accepted  {env}:{SITE}/__init__.py: gold line {FIX_LINE!r} (mirrors the interpreter)"
        in result.out
    )


def test_case_audit_command_says_when_no_image_is_built(
    capsys: pytest.CaptureFixture[str], tiny_snapshot_dir: Path, tmp_path: Path
) -> None:
    case = _write_case(
        tmp_path / "case", tiny_snapshot_dir, f"image-audit-none-{uuid.uuid4().hex[:8]}", []
    )
    result = run_cli(capsys, "case", "audit", str(case))
    assert result.code == 0, result.out + result.err
    assert "note: no image replay-env:image-audit-none-" in result.out


# ----------------------------------------------------------------------------- the field


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"path_glob": "/usr/*"}, "reason"),
        ({"path_glob": "/usr/*", "reason": "   "}, "reason must say why"),
        ({"reason": "no selector"}, "give path_glob, pattern or both"),
        ({"pattern": "", "reason": "empty"}, "pattern"),
    ],
)
def test_accepted_entries_are_validated(
    tiny_snapshot_dir: Path, tmp_path: Path, entry: dict[str, str], problem: str
) -> None:
    case = _write_case(tmp_path / "case", tiny_snapshot_dir, "image-audit-field", [entry])
    with pytest.raises(CaseError) as exc:
        load_case(case)
    assert "audit" in str(exc.value) and problem in str(exc.value)


# ------------------------------------------- what the case's registry installed at T


AT_T_SITE = "/usr/local/lib/python3.11/dist-packages"


def _installed(name: str, version: str, files: dict[str, str]) -> dict[str, str]:
    """An installed distribution as pip leaves it: its files and a RECORD listing them."""
    record = "".join(f"{path},,\n" for path in files)
    info = f"{name}-{version}.dist-info"
    tree = {f"{AT_T_SITE}/{path}": text for path, text in files.items()}
    tree[f"{AT_T_SITE}/{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    return tree


def test_registry_at_t_is_what_the_case_registry_recorded() -> None:
    case = load_case(Path(__file__).resolve().parents[2] / "cases/demo-caret-zero/case.yaml")
    recorded = audit_module.registry_at_t(case)
    assert ("pytest", "9.0.2") in recorded
    assert ("packaging", "26") in recorded  # canonical: 26.0 is 26


def test_a_hit_in_a_distribution_recorded_at_t_is_discounted_with_a_note() -> None:
    scan = Scan(
        "env",
        [("/site/atlib/core.py", FIX_LINE), ("/site/tiny/api.py", FIX_LINE), ("/x.py", FIX_LINE)],
        owners={"/site/atlib/core.py": ("atlib", "1.0.0"), "/site/tiny/api.py": ("tiny", "1.0")},
    )
    recorded = {("atlib", "1"), ("tiny", "1")}
    kept, notes = audit_module._on_index_at_t(scan, recorded, {"tiny"})
    # A release of the project itself still counts, and so does a file no RECORD lists.
    assert kept.hits == [("/site/tiny/api.py", FIX_LINE), ("/x.py", FIX_LINE)]
    assert notes == [
        "env: no leak in atlib 1.0.0 (1 hit(s), e.g. /site/atlib/core.py): the case's registry "
        "recorded it as on the index at T, so its text is older than the fix"
    ]
    # Another version than the one recorded is no text of T.
    kept, notes = audit_module._on_index_at_t(scan, {("atlib", "2")}, {"tiny"})
    assert len(kept.hits) == 3 and notes == []


def test_a_package_the_registry_installed_at_t_is_no_leak_and_an_unrecorded_one_is(
    runtime: Runtime,
    base_image: str,
    planted: tuple[Path, str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 34: the real set's image-audit stops. A gold line (or a generic one) held by a
    package pip installed from the case's own registry at T was counted as a leak, though
    every such file was on the index by T. The owner is read from the installed RECORD."""
    copy = f"{BASE_LINE}\n{FIX_LINE}\n"  # the fix's line with its neighbour: a copy
    files = _installed("atlib", "1.0", {"atlib/__init__.py": "", "atlib/core.py": copy})
    files |= _installed("laterlib", "3.0", {"laterlib/core.py": copy})
    image = _derive(
        runtime,
        base_image,
        _tree(tmp_path / "files", files),
        "replay-test-audit",
        uuid.uuid4().hex[:10],
        f"{IMAGE_KIND_LABEL}=env",
    )
    try:
        case = load_case(planted[0])
        scan = scan_image(runtime, image, [FIX_LINE])
        assert scan.owners == {
            f"{AT_T_SITE}/atlib/core.py": ("atlib", "1.0"),
            f"{AT_T_SITE}/laterlib/core.py": ("laterlib", "3.0"),
        }
        # The tiny case's registry records nothing: both are leaks.
        before = audit_images(case, runtime, images=[image])
        assert {h.path for h in before.leaks} == {
            f"{AT_T_SITE}/atlib/core.py",
            f"{AT_T_SITE}/laterlib/core.py",
        }
        monkeypatch.setattr(audit_module, "registry_at_t", lambda _case: {("atlib", "1")})
        after = audit_images(case, runtime, images=[image])
        assert {h.path for h in after.leaks} == {f"{AT_T_SITE}/laterlib/core.py"}
        assert any(n.startswith(f"{image}: no leak in atlib 1.0 (1 hit(s)") for n in after.notes)
    finally:
        subprocess.run(["docker", "rmi", image], check=False, capture_output=True)


def test_a_hit_in_a_cached_wheel_of_a_distribution_recorded_at_t_is_discounted() -> None:
    """Found by the fifth held-out corpus (glom 2019): pip's cache held the wheel it built from
    face 0.1.0's sdist, which the registry served as on the index at T, and the fix's lines
    copied from face were taken for a leak; no RECORD names an archive's members, so the
    archive's own file name says which distribution it is."""
    wheel = "/root/.cache/pip/wheels/d8/27/face-0.1.0-py3-none-any.whl!face/sinter.py"
    sdist = "/root/.cache/pip/face-0.1.0.tar.gz!face-0.1.0/face/sinter.py"
    assert audit_module.archive_distribution(wheel) == ("face", "0.1.0")
    assert audit_module.archive_distribution(sdist) == ("face", "0.1.0")
    assert audit_module.archive_distribution("/usr/lib/python3.9/functools.py") is None
    assert audit_module.archive_distribution("/x/notes.zip!a.py") is None
    scan = Scan("env", [(wheel, FIX_LINE), (sdist, FIX_LINE)], owners={})
    kept, notes = audit_module._on_index_at_t(scan, {("face", "0.1")}, {"glom"})
    assert kept.hits == [] and notes[0].startswith("env: no leak in face 0.1.0 (2 hit(s)")
    # The project's own wheel still counts.
    own = "/root/.cache/pip/wheels/glom-19.1.0-py3-none-any.whl!glom/cli.py"
    kept, _ = audit_module._on_index_at_t(
        Scan("env", [(own, FIX_LINE)]), {("glom", "19.1")}, {"glom"}
    )
    assert kept.hits == [(own, FIX_LINE)]


def test_a_file_of_another_name_in_a_base_image_released_by_t_is_no_copy() -> None:
    """python-lz4 2021 (seventh corpus): the fix takes gzip's buffer handling, and bullseye's
    ``gzip.py`` holds lines of it; bullseye came out before T, so the file is older text, not
    a renamed copy, and the environment built FROM bullseye holds the same file. A later lz4
    installed into the environment still leaks by every marker it holds."""
    from replay.images.audit import Scan, _uncommon

    gzip = "/usr/lib/python3.9/gzip.py"
    first, second = "if self.mode == READ:", "self._buffer.seek(0)"
    hits = [(gzip, first), (gzip, second)]
    common = common_markers(hits, BULLSEYE, _at("2021-11-20"), {"lz4"})
    assert common == {first: [gzip], second: [gzip]}
    installed = "/usr/local/lib/python3.9/dist-packages/lz4/frame/__init__.py"
    env = Scan("env", [*hits, (installed, first)], [], {})
    assert _uncommon(env, common, {"lz4"}).hits == [(installed, first)]
    # A renamed copy elsewhere in the environment (not the reference's file) still counts.
    moved = "/usr/local/lib/python3.9/dist-packages/other/_gz.py"
    env = Scan("env", [*hits, (moved, first), (moved, second)], [], {})
    assert _uncommon(env, common, {"lz4"}).hits == [(moved, first), (moved, second)]
    # Released after T, the file holding two markers may be a later renamed copy.
    assert common_markers(hits, BULLSEYE, _at("2021-01-01"), {"lz4"}) == {}
