"""``replay case import-swebench``: SWE-bench instances become cases over local clones.

Each instance's ticket becomes GitHub issue #N in a generated snapshot (N from the instance
id's trailing number), its ``patch`` the gold and its ``test_patch`` the hidden tests; its
FAIL_TO_PASS and PASS_TO_PASS are kept as given. T is the issue's ``created_at``, moved
later if the base commit's history is newer (a generated snapshot holds nothing after T).
The repository's default branch is the clone's (:func:`replay.casebuild.casedir.default_branch`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from replay.base import gitrepo
from replay.base.errors import InputError
from replay.base.formats import Strict, parse_json, read_text, validate_data
from replay.casebuild.casedir import DEFAULT_COMMAND, CaseSpec, TicketSpec, write_case_dir
from replay.casebuild.patches import test_files


class Instance(Strict):
    """One SWE-bench instance (fields of the published datasets; unknown ones ignored)."""

    instance_id: str = Field(min_length=1)
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    base_commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    patch: str = Field(min_length=1)
    test_patch: str = Field(min_length=1)
    problem_statement: str
    created_at: datetime
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    version: str | None = None
    environment_setup_commit: str | None = None
    hints_text: str | None = None

    model_config = Strict.model_config | {"extra": "ignore"}

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_lists(cls, value: Any) -> Any:
        # The published datasets store both lists as JSON text.
        return json.loads(value) if isinstance(value, str) else value

    @field_validator("created_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return value if value.tzinfo else value.replace(tzinfo=UTC)


def load_instances(path: Path) -> list[Instance]:
    """A JSON list, or JSON lines, of instances."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        raw = parse_json(path, text)
    else:
        raw = [parse_json(path, line) for line in text.splitlines() if line.strip()]
    if not isinstance(raw, list):
        raise InputError(path, "expected a list of instances, or one instance per line")
    return [validate_data(path, item, Instance) for item in raw]


def case_id(instance_id: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", instance_id.lower()).strip("-.")[:100]


def _issue_number(instance_id: str) -> int:
    m = re.search(r"(\d+)$", instance_id)
    return int(m.group(1)) if m else 1


def spec_of(
    inst: Instance,
    clone: Path,
    *,
    setup: list[str],
    command: str | None = None,
    registry_index: Path | None = None,
    docs_index: Path | None = None,
) -> CaseSpec:
    base = gitrepo.run(clone, "rev-parse", "--verify", f"{inst.base_commit}^{{commit}}")
    title, _, body = inst.problem_statement.strip().partition("\n")
    return CaseSpec(
        id=case_id(inst.instance_id),
        repo=clone,
        repo_name=inst.repo,
        base=base,
        gold=inst.patch,
        tests=inst.test_patch,
        ticket=TicketSpec(
            _issue_number(inst.instance_id),
            title.strip() or inst.instance_id,
            body.strip(),
            "reporter",
            inst.created_at,
        ),
        setup=setup,
        command=command or f"{DEFAULT_COMMAND} {' '.join(test_files(inst.test_patch))}".strip(),
        fail_to_pass=inst.FAIL_TO_PASS,
        pass_to_pass=[t for t in inst.PASS_TO_PASS if t not in inst.FAIL_TO_PASS],
        registry_index=registry_index,
        docs_index=docs_index,
        tags=["swebench"],
    )


def import_instances(
    path: Path,
    clones: Path,
    out: Path,
    *,
    setup: list[str] | None = None,
    command: str | None = None,
    registry_index: Path | None = None,
    docs_index: Path | None = None,
) -> list[Path]:
    """Write one case directory per instance under ``out``; ``clones/<owner>__<name>`` (or
    ``clones/<name>``) is the local clone of each instance's repository."""
    written = []
    for inst in load_instances(path):
        owner, name = inst.repo.split("/")
        clone = next((c for c in (clones / f"{owner}__{name}", clones / name) if c.is_dir()), None)
        if clone is None:
            raise InputError(path, f"{inst.instance_id}: no clone of {inst.repo} in {clones}")
        spec = spec_of(
            inst,
            clone.resolve(),
            setup=list(setup or []),
            command=command,
            registry_index=registry_index,
            docs_index=docs_index,
        )
        case_path, _ = write_case_dir(spec, out / spec.id)
        written.append(case_path)
    return written
