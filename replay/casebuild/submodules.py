"""The submodules a case's base commit pins: found, kept in shared git stores, or named.

A repository with submodules holds only their commits' ids (gitlinks); their files come from
other repositories. A workspace without them fails where the tests read them (a collection
error that does not name the cause). For each gitlink of the base, the pinned commit's
history is looked for where git keeps it locally (the repository's ``.git/modules/<name>``,
an older checkout's own ``<path>/.git``) and in the shared git store named after its URL; it
is added to that store, and the snapshot lists the submodule
(:class:`replay.base.manifest.Submodule`) so that every restore checks it out. When none
holds it, case creation stops naming each submodule, its URL and what to run.
"""

from __future__ import annotations

import re
from pathlib import Path

from replay.base import gitrepo
from replay.base.errors import InputError, ToolError
from replay.base.manifest import Submodule
from replay.base.sharedgit import share, store_name


def submodules_of(repo: Path, base: str, blobs: Path, repo_name: str) -> list[Submodule]:
    """The submodules ``base`` pins in the local repository ``repo`` (of ``repo_name``), each
    added to its shared git store under the blob store root ``blobs``. Raises
    :class:`InputError` naming every one whose pinned commit nothing here holds."""
    links = gitrepo.gitlinks(repo, base)
    if not links:
        return []
    by_path = {
        module["path"]: (name, module.get("url", ""))
        for name, module in gitrepo.gitmodules(repo, base).items()
        if "path" in module
    }
    found: list[Submodule] = []
    missing: list[str] = []
    broken: list[str] = []
    for path, commit in sorted(links.items()):
        name, url = by_path.get(path, (path, ""))
        owner_name = repo_of(url, repo_name)
        objects = store_name(owner_name)
        source = _holder(repo, name, path, commit, blobs / objects)
        if source is None:
            missing.append(f"{path} ({url or 'no URL in .gitmodules'} at {commit[:12]})")
            continue
        try:
            share(blobs, source, commit, owner_name)
        except ToolError as exc:
            lost = _MISSING_OBJECT.search(str(exc))
            broken.append(
                f"{path} ({url or 'no URL in .gitmodules'} at {commit[:12]}): {source} holds "
                "the commit but not all of its files"
                + (f" (object {lost[1][:12]} is missing)" if lost else f" ({exc})")
            )
            continue
        found.append(Submodule(path=path, name=name, url=url, objects=objects, commit=commit))
    if missing:
        raise InputError(
            repo,
            f"writing the repository's history: the base commit {base[:12]} pins submodules "
            f"whose commits no repository here holds: {'; '.join(missing)}. Without them the "
            "workspace lacks their files; run `git submodule update --init` in the clone "
            f"({repo}; git keeps them in its .git/modules, where they are read from) and create "
            "the case again from it (--repo)",
            "submodules",
        )
    if broken:
        raise InputError(
            repo,
            f"writing the repository's history: the base commit {base[:12]} pins submodules "
            f"that cannot be read whole here: {'; '.join(broken)}. Fetch each again into the "
            f"clone ({repo}: `git submodule update --init --force`, or clone the submodule's "
            "repository afresh; `git fsck` in its directory names what is missing) and create "
            "the case again",
            "submodules",
        )
    return found


_MISSING_OBJECT = gitrepo.MISSING_OBJECT


def _holder(repo: Path, name: str, path: str, commit: str, store: Path) -> Path | None:
    """Where ``commit`` is: the repository's own submodule git directory, a checkout of the
    submodule in its working tree, or the shared store; None when nowhere."""
    common = Path(gitrepo.run(repo, "rev-parse", "--git-common-dir"))
    candidates = [(repo / common if not common.is_absolute() else common) / "modules" / name]
    if (repo / path / ".git").exists():
        candidates.append(repo / path)
    candidates.append(store)
    for candidate in candidates:
        if candidate.is_dir() and _holds(candidate, commit):
            return candidate
    return None


def _holds(repo: Path, commit: str) -> bool:
    try:
        gitrepo.run(repo, "cat-file", "-e", f"{commit}^{{commit}}")
    except ToolError:
        return False
    return True


def repo_of(url: str, repo_name: str) -> str:
    """``owner/name`` of a submodule's repository, from its URL (``https://host/o/n.git``,
    ``git@host:o/n.git``); a relative URL (``../n.git``) or another form is named after its
    last part, under the owner of ``repo_name``."""
    owner = repo_name.split("/")[0]
    if not url.startswith((".", "/")):
        match = re.search(r"[:/]([^/:]+)/([^/:]+?)(?:\.git)?/*$", url)
        if match:
            owner = match[1]
            url = match[2]
    last = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    name = re.sub(r"[^\w.-]", "-", last).strip(".") or "submodule"
    owner = re.sub(r"[^\w.-]", "-", owner).strip(".") or "submodules"
    return f"{owner}/{name}"


__all__ = ["repo_of", "submodules_of"]
