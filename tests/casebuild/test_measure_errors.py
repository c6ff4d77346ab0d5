"""Measuring a case's test lists says what went wrong (issue 16): a setup command that fails
is named with the end of its output, kept in the case's logs directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.casebuild.swebench import import_instances
from replay.casebuild.testlists import measure
from replay.runtime import get_runtime
from replay.runtime.base import SandboxError
from tests.casebuild.repos import REGISTRY, shapes_repo
from tests.casebuild.test_swebench import _instance


def test_a_failing_setup_command_is_named_with_its_output(tmp_path: Path) -> None:
    clones = tmp_path / "clones"
    clone, base, fix = shapes_repo(clones / "acme__shapes")
    file = tmp_path / "instances.jsonl"
    file.write_text(json.dumps(_instance(clone, base, fix)) + "\n")
    # More output than the message keeps: its start is only in the log.
    setup = (
        "echo replay-setup-$((40 + 2))-began; head -c 5000 /dev/zero | tr '\\0' x; echo;"
        " echo replay-measure-setup-said-this; exit 4"
    )
    (path,) = import_instances(
        file, clones, tmp_path / "cases", setup=[setup], registry_index=REGISTRY
    )
    runtime = get_runtime("docker")
    try:
        with pytest.raises(SandboxError) as exc:
            measure(path, runtime)
    finally:
        runtime.close()
    text = str(exc.value)
    assert f"environment setup {setup!r} exited 4" in text
    assert "replay-measure-setup-said-this" in text
    log = path.parent / "logs" / "setup-error.log"
    assert text.endswith(f"log: {log}")
    assert "replay-measure-setup-said-this" in log.read_text()
    assert "replay-setup-42-began" not in text and "replay-setup-42-began" in log.read_text()
