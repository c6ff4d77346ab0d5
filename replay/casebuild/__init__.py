"""Building cases from real history: from a fix commit, or from SWE-bench instances."""

from __future__ import annotations

from replay.casebuild.create import FixSource, create_case, spec_from_fix
from replay.casebuild.frompr import fix_source_from_pr
from replay.casebuild.swebench import Instance, import_instances, load_instances
from replay.casebuild.testlists import TestLists, classify, measure

__all__ = [
    "FixSource",
    "Instance",
    "TestLists",
    "classify",
    "create_case",
    "fix_source_from_pr",
    "import_instances",
    "load_instances",
    "measure",
    "spec_from_fix",
]
