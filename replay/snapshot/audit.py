"""Checks that a snapshot holds nothing from after its T.

This is the part of the leak audit that needs no services: every timestamp in the world
state, every commit in every bundle, and the refs the bundles carry.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay import gitrepo
from replay.snapshot.load import Snapshot

_STAMP_KEYS = ("_at", "_time")


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key, item
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def _as_time(key: str, value: Any) -> datetime | None:
    if value is None:
        return None
    if key in ("ts", "thread_ts") and isinstance(value, str):
        return datetime.fromtimestamp(float(value), tz=UTC)
    if key == "created" and isinstance(value, int):
        return datetime.fromtimestamp(value, tz=UTC)
    if key.endswith(_STAMP_KEYS) and isinstance(value, str):
        return datetime.fromisoformat(value)
    return None


def dated_after(snapshot: Snapshot) -> list[str]:
    """Every place in the snapshot that is dated after T, as readable lines (empty: clean)."""
    at = snapshot.at
    found: list[str] = []
    for svc, name in sorted(snapshot.manifest.services.items()):
        state = getattr(snapshot, svc).model_dump(mode="json")
        for path, key, value in _walk(state, name):
            when = _as_time(key, value)
            if when is not None and when > at:
                found.append(f"{path}.{key} = {value} is after T")
    for f in snapshot.registry.python:
        if f.upload_time > at:
            found.append(f"registry: {f.filename} uploaded {f.upload_time} is after T")
    for page in snapshot.docs.pages:
        if page.fetched_at > at:
            found.append(f"docs: {page.url} was fetched {page.fetched_at}, after T")
    for v in snapshot.registry.npm:
        if v.publish_time > at:
            found.append(f"registry: {v.package}@{v.version} published after T")
    with tempfile.TemporaryDirectory(prefix="replay-audit-") as tmp:
        for repo in snapshot.manifest.repositories:
            bundle = snapshot.part(repo.bundle)
            heads = gitrepo.bundle_heads(bundle)
            wanted = {f"refs/heads/{repo.default_branch}": repo.base_commit}
            if heads != wanted:
                found.append(f"{repo.bundle}: carries refs {heads}, expected only {wanted}")
            dest = Path(tmp) / repo.name
            gitrepo.checkout_from_bundle(bundle, repo.base_commit, dest, repo.default_branch)
            for sha, when in gitrepo.commit_dates(dest, repo.default_branch):
                if when > at:
                    found.append(f"{repo.bundle}: commit {sha[:12]} dated {when} is after T")
    return found
