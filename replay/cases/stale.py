"""The staleness rule: a case whose world can no longer be rebuilt, or whose fakes no longer
record what it is judged by, says nothing about a candidate and should be retired.

Checked per case, from its files and this machine alone (no network):

- **its base image can still be built**: ``replay-base:<release>`` names a Debian release
  ``replay image base`` builds (:data:`replay.images.base.RELEASES`: bullseye, bookworm,
  trixie); an older release such as buster is not among them, so its image cannot be
  rebuilt here.
- **its dependencies are still there**: every package file and documentation page its
  snapshot froze at T (the registry's wheels and their PEP 658 metadata, npm tarballs, docs
  pages) is in the blob store, and the snapshot's parts and shared git history still verify.
- **the fakes still record what it needs**: every side-effect rule and gold effect names an
  event kind, service and field the event log still records (``replay/base/eventkinds.py``,
  the vocabulary the fakes' recorders are checked against in ``tests/test_eventkinds.py``),
  and every end-state rule an object type and field the end state still holds
  (``replay/base/endstate.py``). A case failing this cannot even be loaded: it is reported
  here, not raised.

Not checked: whether the fakes answer each API call as the real service does for this case
(that is the contract tests' job, ``replay contract``), or whether an image not built by
``replay image base`` can still be pulled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.base.blobs import BlobStore
from replay.base.case import BASE_REPOSITORY, read_case
from replay.base.endstate import object_field_problem, object_problem
from replay.base.errors import InputError
from replay.base.eventkinds import field_problem, kind_problem, kinds_matching, service_problem
from replay.base.formats import parse_yaml, read_text
from replay.base.snapshot import load_snapshot
from replay.images.base import RELEASES

SHOWN = 3
"""Missing files named per kind of file; the rest are counted."""


@dataclass(frozen=True)
class Staleness:
    """What the staleness rule found for one case file."""

    path: Path
    """The case file."""
    case_id: str
    reasons: list[str] = field(default_factory=list)
    """Why the case is stale, one line each; empty: it is not."""

    loadable: bool = True
    """False when the case cannot be loaded at all (its rules name unknown kinds)."""

    @property
    def stale(self) -> bool:
        return bool(self.reasons)


def check_case(path: Path, blobs: Path | None = None) -> Staleness:
    """The staleness rule on one case file; ``blobs`` is the blob store root (default
    ``$REPLAY_BLOBS`` or snapshots/blobs). A file that is no case at all (bad YAML, a missing
    field) is an :class:`InputError`, not a stale case."""
    path = Path(path)
    raw = parse_yaml(path, read_text(path))
    if not isinstance(raw, dict):
        raise InputError(path, "expected a mapping at the top level")
    case_id = str(raw.get("id", path.parent.name))
    vocabulary = _vocabulary_problems(raw)
    if vocabulary:
        # The case cannot be loaded: its rules name what the log no longer records.
        return Staleness(path, case_id, vocabulary, loadable=False)
    case = read_case(path).case
    reasons = _base_image_problems(case.environment.base_image)
    reasons += _snapshot_problems(case.snapshot, blobs)
    return Staleness(path, case.id, reasons)


def _vocabulary_problems(raw: dict[str, Any]) -> list[str]:
    found: list[str] = []
    rules = raw.get("side_effects") or []
    gold = raw.get("gold") or {}
    effects = gold.get("side_effects") or [] if isinstance(gold, dict) else []
    for where, items in (("side_effects", rules), ("gold.side_effects", effects)):
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get("at_end"), str):
                found += _end_state_problems(f"{where}[{i}]", item)
                continue
            if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
                continue
            kind, service = item["kind"], item.get("service")
            name = f"{where}[{i}]" + (f" ({item['id']})" if "id" in item else "")
            problem = kind_problem(kind)
            if problem is None and isinstance(service, str):
                problem = service_problem(kind, service)
            if problem is None:
                kinds = kinds_matching(kind, service if isinstance(service, str) else None)
                for j, cond in enumerate(item.get("where") or []):
                    if isinstance(cond, dict) and isinstance(cond.get("field"), str):
                        problem = field_problem(cond["field"], kinds)
                        if problem:
                            name += f" where[{j}]"
                            break
            if problem:
                found.append(f"{name}: the event log no longer records it: {problem}")
    return found


def _end_state_problems(name: str, item: dict[str, Any]) -> list[str]:
    """An end-state rule naming an object type or field the end state no longer holds."""
    if "id" in item:
        name += f" ({item['id']})"
    problem = object_problem(item["at_end"])
    if problem is None:
        for j, cond in enumerate(item.get("where") or []):
            if isinstance(cond, dict) and isinstance(cond.get("field"), str):
                problem = object_field_problem(item["at_end"], cond["field"])
                if problem:
                    name += f" where[{j}]"
                    break
    return [f"{name}: the end state no longer holds it: {problem}"] if problem else []


def _base_image_problems(reference: str) -> list[str]:
    repository, _, tag = reference.partition(":")
    if repository != BASE_REPOSITORY or not tag:
        return []  # built elsewhere: nothing here says whether it can be pulled
    release = tag.split("-")[0]
    known = [r.name for r in RELEASES]
    if release in known:
        return []
    return [
        f"base image {reference}: Debian {release} is not a release `replay image base` can "
        f"still build from the Debian mirror (it builds {', '.join(known)})"
    ]


def _snapshot_problems(snapshot_dir: Path, blobs: Path | None) -> list[str]:
    try:
        snapshot = load_snapshot(snapshot_dir, blobs)
    except InputError as exc:
        return [f"snapshot: {exc}"]
    store = BlobStore(blobs if blobs is not None else snapshot.blobs)
    wanted: list[tuple[str, str, str]] = []  # (what, name, sha256)
    for f in snapshot.registry.python:
        wanted.append(("registry file", f.filename, f.sha256))
        if f.metadata_sha256:
            wanted.append(("registry metadata", f"{f.filename}.metadata", f.metadata_sha256))
    for v in snapshot.registry.npm:
        wanted.append(("npm tarball", f"{v.package}@{v.version}", v.tarball_sha256))
    for page in snapshot.docs.pages:
        wanted.append(("docs page", page.url, page.sha256))
    missing: dict[str, list[str]] = {}
    for what, name, sha in wanted:
        if not store.has(sha):
            missing.setdefault(what, []).append(f"{name} (sha256 {sha[:12]})")
    reasons = []
    for what, names in missing.items():
        more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
        reasons.append(
            f"{what}s frozen at T missing from the blob store {store.root}: "
            f"{', '.join(names[:SHOWN])}{more}"
        )
    return reasons
