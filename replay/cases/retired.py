"""Retired cases: recorded beside the cases, in ``retired.yaml``, never in the case file.

A case is retired (``replay case retire``) when it no longer says anything about a
candidate: its world cannot be rebuilt, its fakes no longer serve what it needs, or a person
judged it so. The record lives in a registry file in the directory that holds the case
directories (``cases/retired.yaml`` for ``cases/<id>/case.yaml``), keyed by case id, so that
retiring a case does not change its digest (:func:`replay.base.case.case_digest`) and
un-retiring it (deleting its entry) brings back its calibrations and runs as they were.

``replay run``, ``replay compare`` and ``replay batch`` skip a retired case and say why,
unless asked to include it; ``replay results report`` lists it as left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import AwareDatetime, Field

from replay.base.case import Identifier, LoadedCase
from replay.base.errors import InputError
from replay.base.formats import Strict, load_model, parse_yaml, read_text

REGISTRY = "retired.yaml"
"""The registry's file name, in the directory holding the case directories."""


class Retirement(Strict):
    """Why and when a case was retired."""

    reason: str = Field(min_length=1)
    """Why the case no longer counts, in one line (a person's, or the staleness rule's)."""
    at: AwareDatetime
    """When it was retired."""


class RetiredRegistry(Strict):
    """``retired.yaml``: the retired cases of one directory of cases (``schema: 1``)."""

    schema_: Literal[1] = Field(default=1, alias="schema")
    """The format's version."""
    cases: dict[Identifier, Retirement] = Field(default_factory=dict)
    """Case id -> its retirement."""

    model_config = Strict.model_config | {"populate_by_name": True}


def registry_path(case_file: Path) -> Path:
    """The registry that records the retirement of the case in ``case_file``: beside its
    case directory."""
    return Path(case_file).resolve().parent.parent / REGISTRY


def case_id_of(case_file: Path) -> str:
    """The ``id`` a case file gives, read without validating the rest of it (a stale case
    may no longer load, and must still be retirable)."""
    data = parse_yaml(case_file, read_text(case_file))
    case_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(case_id, str) or not case_id:
        raise InputError(case_file, "no case id", "id")
    return case_id


def read_registry(path: Path) -> RetiredRegistry:
    """The registry at ``path``; an empty one when there is no file (a bad file is an
    :class:`~replay.base.errors.InputError` naming it)."""
    if not path.is_file():
        return RetiredRegistry()
    return load_model(path, RetiredRegistry)


def retirement_of(loaded: LoadedCase) -> Retirement | None:
    """The case's retirement, or None when it is not retired."""
    return read_registry(registry_path(loaded.path)).cases.get(loaded.id)


def retire(case_file: Path, reason: str, at: datetime | None = None) -> tuple[str, Path]:
    """Record the case in ``case_file`` as retired for ``reason`` (a second retirement
    replaces the first); returns its id and the registry's path."""
    if not reason.strip():
        raise InputError(Path("--reason"), "say why the case is retired")
    case_id = case_id_of(case_file)
    path = registry_path(case_file)
    registry = read_registry(path)
    entry = Retirement(reason=" ".join(reason.split()), at=at or datetime.now(UTC))
    cases = {**registry.cases, case_id: entry}
    data = {
        "schema": 1,
        "cases": {
            case_id: {"reason": r.reason, "at": r.at.astimezone(UTC).isoformat()}
            for case_id, r in sorted(cases.items())
        },
    }
    text = (
        "# Retired cases (replay case retire): skipped by replay run, compare and batch unless"
        "\n# --include-retired; listed as left out by replay results report.\n"
    )
    path.write_text(text + yaml.safe_dump(data, sort_keys=False, width=100))
    return case_id, path


def partition_retired(
    cases: Sequence[LoadedCase],
) -> tuple[list[LoadedCase], list[tuple[LoadedCase, Retirement]]]:
    """``(active, retired)``: the cases in their order, the retired ones with their record."""
    active: list[LoadedCase] = []
    retired: list[tuple[LoadedCase, Retirement]] = []
    for loaded in cases:
        found = retirement_of(loaded)
        if found is None:
            active.append(loaded)
        else:
            retired.append((loaded, found))
    return active, retired


def skip_line(case_id: str, retirement: Retirement) -> str:
    """What a command prints for a retired case it skips."""
    return (
        f"skipping {case_id}: retired {retirement.at:%Y-%m-%d}: {retirement.reason} "
        "(--include-retired runs it)"
    )


def active_cases(
    cases: Sequence[LoadedCase], *, include_retired: bool, notice: Callable[[str], None]
) -> list[LoadedCase]:
    """The cases a command runs: all of them with ``include_retired``, else the ones not
    retired, each retired one named through ``notice`` with its reason."""
    if include_retired:
        return list(cases)
    active, retired = partition_retired(cases)
    for loaded, retirement in retired:
        notice(skip_line(loaded.id, retirement))
    return active


def active_case_files(
    paths: Sequence[Path], *, include_retired: bool, notice: Callable[[str], None]
) -> list[Path]:
    """:func:`active_cases` for case files. Only each file's id is read here: a retired case
    that no longer loads (a stale one) is skipped, not an error."""
    if include_retired:
        return list(paths)
    kept: list[Path] = []
    for path in paths:
        case_id = case_id_of(path)
        found = read_registry(registry_path(path)).cases.get(case_id)
        if found is None:
            kept.append(path)
        else:
            notice(skip_line(case_id, found))
    return kept
