"""Issue 16's leak, in Debian's own images: tomli's 2021 fix (a bare CR in a multi-line basic
string) sits, as later code, in bookworm's standard library (``tomllib``, Python 3.11) and in
the tomli that bookworm's pip and setuptools vendor. The image audit finds it there, and
proposes bullseye, whose Python 3.9 and pip 20.3 predate it: the base the shipped case uses."""

from __future__ import annotations

from pathlib import Path

from replay.base.case import load_case
from replay.images.audit import case_markers, propose_base_image
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
