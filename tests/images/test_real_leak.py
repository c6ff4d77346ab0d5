"""Issue 16's leak, in Debian's own images: tomli's 2021 fix (a bare CR in a multi-line basic
string) sits, as later code, in bookworm's standard library (``tomllib``, Python 3.11) and in
the tomli that bookworm's pip and setuptools vendor. The image audit finds it there, and
proposes bullseye, whose Python 3.9 and pip 20.3 predate it: the base the shipped case uses."""

from __future__ import annotations

from pathlib import Path

from replay.base.case import Audit, load_case, read_patch
from replay.images.audit import (
    Scan,
    audit_images,
    case_markers,
    copies,
    fix_contexts,
    out_of_context,
    propose_base_image,
    scan_image,
)
from replay.images.base import ensure_base_image
from replay.runtime.base import Runtime

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "tomli-multiline-cr" / "case.yaml"


def test_bookworm_carries_tomlis_later_fix_and_bullseye_is_proposed(runtime: Runtime) -> None:
    case = load_case(CASE)
    ensure_base_image(runtime, "bookworm")
    ensure_base_image(runtime, "bullseye")
    markers = case_markers(case)
    assert markers, "the gold patch has lines worth searching for"
    proposal = propose_base_image(
        runtime,
        markers,
        "replay-base:bookworm",
        candidates=["replay-base:bookworm", "replay-base:bullseye"],
    )
    leaks = {hit.path for hit in proposal.scans["replay-base:bookworm"] if hit.leak}
    assert "/usr/lib/python3.11/tomllib/_parser.py" in leaks, sorted(leaks)
    assert any("_vendor/tomli" in path for path in leaks), sorted(leaks)
    assert proposal.scans["replay-base:bullseye"] == []
    assert proposal.proposed == "replay-base:bullseye"
    assert case.environment.base_image == "replay-base:bullseye"


ERROR_MODULE = ROOT / "cases" / "tomli-error-module" / "case.yaml"


def test_text_older_than_the_fix_is_left_out_and_bookworms_later_tomli_still_leaks(
    runtime: Runtime,
) -> None:
    """Issue 34, cause 5, on Debian's own images: tomli's October 2021 fix (``TOMLDecodeError``
    says it lives in ``tomli``) taken onto bookworm, released after its T. Bullseye, released
    before T, is the reference: its io.py already held the fix's comment (CPython's idiom), so
    that comment is no leak in bookworm's io.py, nor in its tomllib (where it is the only
    marker); in the tomli that bookworm's pip and setuptools vendor, a copy of the project, it
    still is."""
    ensure_base_image(runtime, "bookworm")
    ensure_base_image(runtime, "bullseye")
    case = load_case(ERROR_MODULE)
    environment = case.environment.model_copy(update={"base_image": "replay-base:bookworm"})
    case = case.model_copy(update={"environment": environment, "audit": Audit()})
    result = audit_images(case, runtime, images=["replay-base:bookworm"])
    comment = "# Pretend this exception was created here."
    assert result.common == {comment: ["/usr/lib/python3.9/io.py"]}
    leaks = {(hit.path, hit.marker.text) for hit in result.leaks}
    assert leaks == {
        ("/usr/lib/python3/dist-packages/pip/_vendor/tomli/__init__.py", comment),
        ("/usr/lib/python3/dist-packages/setuptools/_vendor/tomli/__init__.py", comment),
        (
            "/usr/share/python-wheels/pip-23.0.1-py3-none-any.whl!pip/_vendor/tomli/__init__.py",
            comment,
        ),
        (
            "/usr/share/python-wheels/setuptools-66.1.1-py3-none-any.whl"
            "!setuptools/_vendor/tomli/__init__.py",
            comment,
        ),
    }, sorted(leaks)


# Glom's 2020 fix (mahmoud/glom c2acc2b, BSD-3-Clause), one hunk of glom/core.py as its diff
# shows it: it overrides reprlib.Repr.repr1, so its first added line is the standard library's
# signature (fifth corpus, cases/corpus/README.md section 12.4).
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


def test_the_standard_librarys_own_line_is_no_leak_and_its_renamed_copy_of_a_fix_still_is(
    runtime: Runtime,
) -> None:
    """The fifth corpus's false positive, on Debian's own image: glom's fix adds the line
    ``def repr1(self, x, level):``, which bookworm's ``reprlib.py`` and ``pydoc.py`` hold amid
    their own code: no leak there. Bookworm's ``tomllib``, a renamed later copy of tomli, holds
    a line of tomli's 2021 fix with the fix's lines around it: judged on that line alone, as no
    copy by name or by count, it is still a leak."""
    ensure_base_image(runtime, "bookworm")
    line = "def repr1(self, x, level):"
    scan = scan_image(runtime, "replay-base:bookworm", [line])
    held = {path for path, _ in scan.hits}
    assert {"/usr/lib/python3.11/reprlib.py", "/usr/lib/python3.11/pydoc.py"} <= held, held
    kept, notes = out_of_context(scan, fix_contexts(GLOM_2020), copies(scan.hits, {"glom"}))
    assert kept.hits == [], kept.hits
    assert len(notes) == len(scan.hits)

    case = load_case(CASE)
    contexts = fix_contexts(read_patch(case.gold.patch))
    tomllib = "/usr/lib/python3.11/tomllib/_parser.py"
    found = scan_image(runtime, "replay-base:bookworm", [m.text for m in case_markers(case)])
    lines = sorted({m for p, m in found.hits if p == tomllib and m in contexts})
    assert lines, found.hits
    for marker in lines:
        alone = Scan(found.image, [(tomllib, marker)], [], {}, found.near)
        kept, notes = out_of_context(alone, contexts, copied=set())
        assert kept.hits == [(tomllib, marker)], (marker, found.near.get((tomllib, marker)))
        assert notes == []
