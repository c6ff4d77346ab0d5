"""Per-run directories on the host: the gateway bridge's socket and files a container mounts.

Each lives at ``<root>/<run id>/`` with ``owner.json`` naming the owning process, so that
garbage collection removes the directories of dead runs exactly as it removes their containers.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection, Iterator
from pathlib import Path

from replay.runtime.base import Owner, run_root

OWNER_FILE = "owner.json"


def root() -> Path:
    """Where run directories live (:func:`replay.runtime.base.run_root`)."""
    return run_root()


def create(run_id: str, owner: Owner | None = None) -> Path:
    """Make the run's directory, readable by any user inside a container."""
    owner = owner or Owner.current()
    path = root() / run_id
    path.mkdir(parents=True, exist_ok=False, mode=0o755)
    path.chmod(0o755)
    data = {"pid": owner.pid, "host": owner.host, "start": owner.start}
    (path / OWNER_FILE).write_text(json.dumps(data) + "\n")
    return path


def remove(run_id: str) -> None:
    shutil.rmtree(root() / run_id, ignore_errors=True)


def stale(
    everything: bool = False,
    runs: Collection[str] | None = None,
    owners: Collection[str] | None = None,
) -> Iterator[tuple[str, Path]]:
    """Run directories whose owner is gone (all of them with ``everything``), among ``runs``
    and among those of ``owners`` (``pid@host``)."""
    base = root()
    if not base.is_dir():
        return
    for path in sorted(base.iterdir()):
        if not path.is_dir() or (runs is not None and path.name not in runs):
            continue
        if everything and owners is None:
            yield path.name, path
            continue
        try:
            data = json.loads((path / OWNER_FILE).read_text())
            owner = Owner(int(data["pid"]), str(data["host"]), str(data["start"]))
        except (OSError, ValueError, KeyError, TypeError):
            if owners is None:
                yield path.name, path  # half-made: its creator died before writing the owner
            continue
        if owners is not None and f"{owner.pid}@{owner.host}" not in owners:
            continue
        if everything or not owner.alive():
            yield path.name, path
