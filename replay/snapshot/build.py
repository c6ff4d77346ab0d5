"""Generating a snapshot from sources kept in a repository (the demo world, test worlds).

The sources describe the whole timeline, including what happened after T: the merged fix,
later comments, tickets moved to Done. Building cuts that timeline at T, so the cut is real
and can be audited. The same sources give byte-identical snapshots.

Sources layout::

    world.yaml           at, repository {name, default_branch, history | bundle | objects,
                         base, tags, submodules}, github, linear, slack
    history/*.patch      the repository's commits, as ``git format-patch`` output, in order
    *.bundle             or: the repository's history as a git bundle (merges and SHAs kept)
                         or (``objects``): the base commit's history in the shared git store

The snapshot carries the repository cut at its base as a bundle of its own, or (with
``shared_git``) as a reference to the shared store under the blob store root, which then holds
each object once for every snapshot of that repository (see :mod:`replay.base.sharedgit`).
    registry/index.json  optional: package files recorded with their upload times
    docs/index.json      optional: documentation pages recorded with their fetch times
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, Field, model_validator

from replay import __version__
from replay.base import gitrepo
from replay.base import sharedgit as shared
from replay.base.errors import InputError, SourcesError
from replay.base.formats import (
    M,
    Strict,
    dump_json,
    load_model,
    parse_yaml,
    read_text,
    validate_data,
)
from replay.base.manifest import MANIFEST, DocsIndex, Manifest, RegistryIndex, Submodule
from replay.base.snapshot import list_files, sha256_file
from replay.base.worldstate import SERVICE_MODELS

COMMITTER = {"GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com"}


class RepositorySource(Strict):
    name: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    default_branch: str = "main"
    history: str = "history"
    """Directory of ``git format-patch`` files, relative to world.yaml (replayed: new SHAs)."""
    bundle: str | None = None
    """Or a git bundle, relative to world.yaml, whose ``default_branch`` holds the history:
    the commits are kept as they are (SHAs, merges), as a real repository's are."""
    objects: str | None = Field(default=None, pattern=r"^git/[\w.-]+/[\w.-]+\.git$")
    """Or the shared git store (``git/<owner>/<name>.git``, under the blob store root) that
    holds ``base``'s history; ``base`` is then required and is the branch's tip."""
    base: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    """The base commit; default: the newest commit on the branch dated at or before T."""
    tags: dict[str, str] = Field(default_factory=dict)
    """With ``objects``: the repository's tags on the base's history, ``{name: the object the
    tag names}``, held by the store. The cut keeps those with no tag object dated after T
    (:func:`replay.base.gitrepo.tags_at`)."""
    submodules: list[Submodule] = Field(default_factory=list)
    """The submodules ``base`` pins, each in a shared git store (under the blob store root)."""

    @model_validator(mode="after")
    def _one_history(self) -> RepositorySource:
        if self.bundle is not None and self.objects is not None:
            raise ValueError("give bundle or objects, not both")
        if self.tags and self.objects is None:
            raise ValueError("tags need objects: the shared git store holds them")
        if self.submodules and self.base is None:
            raise ValueError("submodules need base: the commit that pins them")
        if self.objects is not None and self.base is None:
            raise ValueError("objects needs base: the commit whose history the store holds")
        if self.objects is not None and {".", ".."} & set(self.objects.split("/")):
            raise ValueError(f"objects: {self.objects!r} must stay inside the blob store")
        return self


class WorldSource(Strict):
    """``world.yaml``: the timeline a snapshot is cut from."""

    at: AwareDatetime
    repository: RepositorySource
    github: dict[str, Any]
    linear: dict[str, Any]
    slack: dict[str, Any]


def build_snapshot(
    sources: Path,
    out: Path,
    at: datetime | None = None,
    *,
    shared_git: bool = False,
    blobs: Path | None = None,
) -> Manifest:
    """Cut the timeline in ``sources`` at T (``at``, default world.yaml's) into ``out``.

    With ``shared_git`` the repository goes into the shared git store under the blob store
    root ``blobs`` (default ``$REPLAY_BLOBS`` or snapshots/blobs) instead of a bundle of the
    snapshot's own; sources whose repository is ``objects`` are read from there too.
    Writes into a temporary directory first; ``out`` is replaced only when everything
    validated, so a failed build leaves what was there untouched.
    """
    # git runs in other directories: relative paths would point at the wrong place.
    sources, out = sources.resolve(), out.resolve()
    world_file = sources / "world.yaml"
    world = _load_world(world_file)
    cut_at = at or world.at
    if cut_at.tzinfo is None:
        raise SourcesError(world_file, "T has no timezone", "at")
    out.parent.mkdir(parents=True, exist_ok=True)
    root = shared.blob_root(blobs)
    with tempfile.TemporaryDirectory(prefix="replay-build-") as tmp:
        work = Path(tmp)
        if world.repository.bundle is not None:
            repo = _from_bundle(sources / world.repository.bundle, work / "full", world)
        elif world.repository.objects is not None:
            repo = _from_store(root, work / "full", world, world_file)
        else:
            repo = _replay_history(sources / world.repository.history, work / "full", world)
        base = _base_commit(repo, world.repository, cut_at, world_file)
        _check_submodules(repo, base, cut_at, world, world_file, root)
        shas = _subjects(repo, world.repository.default_branch)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
        try:
            git = root if shared_git else None
            manifest = _write(stage, world, world_file, repo, base, shas, cut_at, sources, git)
            if out.exists():
                shutil.rmtree(out)
            stage.replace(out)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    return manifest


def _load_world(path: Path) -> WorldSource:
    try:
        return validate_data(path, parse_yaml(path, read_text(path)), WorldSource)
    except InputError as exc:
        raise SourcesError(exc.path, exc.problem, exc.field) from exc


def _replay_history(history: Path, dest: Path, world: WorldSource) -> Path:
    patches = sorted(history.glob("*.patch"))
    if not patches:
        raise SourcesError(history, "no *.patch files: the repository has no history")
    gitrepo.init(dest, branch=world.repository.default_branch)
    try:
        gitrepo.run(
            dest,
            "am",
            "-q",
            "--committer-date-is-author-date",
            *[str(p) for p in patches],
            env=COMMITTER,
        )
    except Exception as exc:
        raise SourcesError(history, f"the patches do not apply in order: {exc}") from exc
    return dest


def _from_bundle(bundle: Path, dest: Path, world: WorldSource) -> Path:
    branch = world.repository.default_branch
    if not bundle.is_file():
        raise SourcesError(bundle, "no such bundle", "repository.bundle")
    gitrepo.init(dest, branch=branch)
    try:
        gitrepo.run(
            dest, "fetch", "-q", "--no-tags", "--update-head-ok", str(bundle),
            f"refs/heads/{branch}:refs/heads/{branch}",
        )  # fmt: skip
    except Exception as exc:
        raise SourcesError(
            bundle, f"not a bundle holding refs/heads/{branch}: {exc}", "repository.bundle"
        ) from exc
    return dest


def _from_store(root: Path, dest: Path, world: WorldSource, where: Path) -> Path:
    source = world.repository
    assert source.objects is not None and source.base is not None
    store = root / source.objects
    if not gitrepo.store_has(store, source.base):
        raise SourcesError(
            where,
            f"the shared git store {store} does not hold {source.base} (is this the blob "
            "store the sources were written with? --blobs, $REPLAY_BLOBS)",
            "repository.objects",
        )
    branch = source.default_branch
    gitrepo.init(dest, branch=branch)
    gitrepo.run(
        dest, "fetch", "-q", "--no-tags", "--update-head-ok", str(store),
        f"{source.base}:refs/heads/{branch}",
    )  # fmt: skip
    missing = set(source.tags.values()) - set(gitrepo.object_types(store, source.tags.values()))
    if missing:
        raise SourcesError(
            where,
            f"the shared git store {store} does not hold the tag object(s) "
            f"{', '.join(sorted(missing))} (is this the blob store the sources were written "
            "with? --blobs, $REPLAY_BLOBS)",
            "repository.tags",
        )
    gitrepo.add_tags(dest, store, source.tags)
    return dest


def _base_commit(repo: Path, source: RepositorySource, at: datetime, where: Path) -> str:
    """The given base, or the newest commit on the branch committed at or before T."""
    dates = gitrepo.commit_dates(repo, source.default_branch)
    if source.base is not None:
        if source.base not in {sha for sha, _ in dates}:
            raise SourcesError(
                where, f"{source.base} is not on {source.default_branch}", "repository.base"
            )
        late = [(sha, when) for sha, when in gitrepo.commit_dates(repo, source.base) if when > at]
        if late:
            sha, when = late[0]
            raise SourcesError(
                where, f"the base's history has {sha[:12]} committed {when}, after T ({at})", "at"
            )
        return source.base
    for sha, when in dates:
        if when <= at:
            return sha
    raise SourcesError(
        where, f"no commit on {source.default_branch} is dated at or before T ({at})", "at"
    )


def _check_submodules(
    repo: Path, base: str, at: datetime, world: WorldSource, where: Path, root: Path
) -> None:
    """Each submodule of the sources is a gitlink of the base at that commit, and its store
    under the blob store root ``root`` holds the commit's history, committed by T."""
    links = gitrepo.gitlinks(repo, base) if world.repository.submodules else {}
    for sub in world.repository.submodules:
        if links.get(sub.path) != sub.commit:
            raise SourcesError(
                where, f"{sub.path} is not a submodule pinned at {sub.commit} by the base "
                f"(the base pins {links.get(sub.path) or 'nothing there'})",
                "repository.submodules",
            )  # fmt: skip
        store = root / sub.objects
        if not gitrepo.store_has(store, sub.commit):
            raise SourcesError(
                where, f"submodule {sub.path}: the shared git store {store} does not hold "
                f"{sub.commit} (--blobs, $REPLAY_BLOBS)", "repository.submodules",
            )  # fmt: skip
        late = [(sha, when) for sha, when in gitrepo.commit_dates(store, sub.commit) if when > at]
        if late:
            sha, when = late[0]
            raise SourcesError(
                where, f"submodule {sub.path}: its history has {sha[:12]} committed {when}, "
                f"after T ({at})", "at",
            )  # fmt: skip


def _subjects(repo: Path, branch: str) -> dict[str, str]:
    out = gitrepo.run(repo, "log", "--format=%H %s", branch)
    shas: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, subject = line.partition(" ")
        shas.setdefault(subject, sha)
    return shas


def _write(
    stage: Path,
    world: WorldSource,
    world_file: Path,
    repo: Path,
    base: str,
    shas: dict[str, str],
    at: datetime,
    sources: Path,
    git_store: Path | None,
) -> Manifest:
    """Write the snapshot into ``stage``; the repository into ``git_store`` (a blob store
    root) when given, else as a bundle in the snapshot."""
    owner, name = world.repository.name.split("/")
    tags = gitrepo.tags_at(repo, base, at, world.repository.tags)
    if git_store is not None:
        objects, _ = shared.share(git_store, repo, base, world.repository.name, tags)
        history: dict[str, Any] = {"objects": objects}
    else:
        bundle = f"repos/{owner}/{name}.bundle"
        gitrepo.bundle_create(
            repo, stage / bundle, base, world.repository.default_branch, tags=tags
        )
        history = {"bundle": bundle}
    if tags:
        history["tags"] = tags
    if world.repository.submodules:
        history["submodules"] = [sub.model_dump() for sub in world.repository.submodules]
    services: dict[str, str] = {}
    for svc in ("github", "linear", "slack"):
        raw = _resolve_commits(getattr(world, svc), shas, world_file, svc)
        try:
            model = validate_data(world_file, CUTTERS[svc](raw, at), SERVICE_MODELS[svc])
        except InputError as exc:
            field = svc if exc.field in (None, "(top level)") else f"{svc}.{exc.field}"
            raise SourcesError(world_file, f"at T: {exc.problem}", field) from exc
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            # The cut reads created_at, history and ts before the models can check them.
            detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise SourcesError(world_file, f"cannot cut the timeline at T: {detail}", svc) from exc
        services[svc] = f"{svc}.json"
        (stage / services[svc]).write_text(
            dump_json(model.model_dump(mode="json", by_alias=True, exclude_none=False))
        )
    # The caches' indexes, when the sources have them, are cut at T like everything else.
    registry = _cache_index(sources / "registry" / "index.json", RegistryIndex)
    registry = registry.model_copy(
        update={
            "python": [f for f in registry.python if f.upload_time <= at],
            "npm": [v for v in registry.npm if v.publish_time <= at],
        }
    )
    docs = _cache_index(sources / "docs" / "index.json", DocsIndex)
    docs = docs.model_copy(update={"pages": [p for p in docs.pages if p.fetched_at <= at]})
    for name, index in (("registry/index.json", registry), ("docs/index.json", docs)):
        (stage / name).parent.mkdir()
        (stage / name).write_text(dump_json(index.model_dump(mode="json", by_alias=True)))
    manifest = Manifest.model_validate(
        {
            "schema": 1,
            "at": at,
            "source": {
                "kind": "generated",
                "origin": sources.name,
                "tool": f"replay {__version__}",
            },
            "repositories": [
                {
                    "name": world.repository.name,
                    **history,
                    "base_commit": base,
                    "default_branch": world.repository.default_branch,
                }
            ],
            "services": services,
            "registry": "registry/index.json",
            "docs": "docs/index.json",
            "parts": {p: sha256_file(stage / p) for p in list_files(stage)},
        }
    )
    (stage / MANIFEST).write_text(dump_json(manifest.model_dump(mode="json", by_alias=True)))
    return manifest


def _cache_index(path: Path, model: type[M]) -> M:
    if not path.exists():
        return model.model_validate({"schema": 1})
    try:
        return load_model(path, model)
    except InputError as exc:
        raise SourcesError(exc.path, exc.problem, exc.field) from exc


def _resolve_commits(value: Any, shas: dict[str, str], where: Path, field: str) -> Any:
    """Replace every ``@commit:<subject>`` string with that commit's SHA."""
    if isinstance(value, dict):
        return {k: _resolve_commits(v, shas, where, f"{field}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_commits(v, shas, where, f"{field}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str) and value.startswith("@commit:"):
        subject = value.removeprefix("@commit:")
        if subject not in shas:
            raise SourcesError(where, f"no commit with subject {subject!r}", field)
        return shas[subject]
    return value


# ----------------------------------------------------------------------------- the cut


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    parsed = datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no timezone")
    return parsed


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _kept(items: list[dict[str, Any]] | None, at: datetime, key: str = "created_at") -> list[Any]:
    return [dict(i) for i in items or [] if _time(i[key]) <= at]


def _apply_history(obj: dict[str, Any], at: datetime, service: str) -> list[datetime]:
    """Apply the ``history`` entries dated at or before T; record each as the service would.

    GitHub lists a thread's changes as issue events, Linear an issue's as ``IssueHistory``
    nodes; both are derived here from what each entry changed, so the fakes serve the same
    history a real service would have recorded for this timeline.
    """
    applied = []
    key = "events" if service == "github" else "history"
    record: list[dict[str, Any]] = []
    for entry in obj.pop("history", None) or []:
        when = _time(entry["at"])
        if when > at:
            continue
        before = dict(obj)
        obj.update(entry["set"])
        applied.append(when)
        if service == "github":
            record += _issue_events(before, obj, entry, len(record))
        else:
            record += _linear_history(before, obj, entry, len(record))
    if record:
        obj[key] = [*(obj.get(key) or []), *record]
    return applied


def _issue_events(
    before: dict[str, Any], after: dict[str, Any], entry: dict[str, Any], seq: int
) -> list[dict[str, Any]]:
    actor = entry.get("by") or after["author"]
    at = entry["at"]
    out: list[dict[str, Any]] = []

    def add(event: str, **extra: Any) -> None:
        who = extra.pop("actor", actor)
        out.append(
            {"id": int(after["id"]) * 1000 + seq + len(out) + 1, "event": event,
             "actor": who, "created_at": at, **extra}
        )  # fmt: skip

    if after.get("merged_at") and not before.get("merged_at"):
        add("merged", actor=after.get("merged_by") or actor,
            commit_id=after.get("merge_commit_sha"))  # fmt: skip
    if before.get("state") != after.get("state"):
        if after["state"] == "closed":
            reason = after.get("state_reason")
            add("closed", actor=after.get("merged_by") or actor,
                **({"state_reason": reason} if reason else {}))  # fmt: skip
        else:
            add("reopened")
    if before.get("title") != after.get("title"):
        add("renamed", rename_from=before.get("title"), rename_to=after.get("title"))
    old, new = before.get("labels") or [], after.get("labels") or []
    for name in [n for n in new if n not in old]:
        add("labeled", label=name)
    for name in [n for n in old if n not in new]:
        add("unlabeled", label=name)
    old, new = before.get("assignees") or [], after.get("assignees") or []
    for login in [n for n in new if n not in old]:
        add("assigned", assignee=login)
    for login in [n for n in old if n not in new]:
        add("unassigned", assignee=login)
    if bool(before.get("draft")) != bool(after.get("draft")):
        add("convert_to_draft" if after.get("draft") else "ready_for_review")
    return out


def _linear_history(
    before: dict[str, Any], after: dict[str, Any], entry: dict[str, Any], seq: int
) -> list[dict[str, Any]]:
    node: dict[str, Any] = {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"linear-history:{after['id']}:{seq}")),
        "actor": entry.get("by") or after["creator"],
        "created_at": entry["at"],
    }
    for key in ("state", "assignee", "title", "priority", "estimate", "parent"):
        if before.get(key) != after.get(key):
            node[f"from_{key}"], node[f"to_{key}"] = before.get(key), after.get(key)
    if before.get("description") != after.get("description"):
        node["updated_description"] = True
    old, new = before.get("labels") or [], after.get("labels") or []
    if old != new:
        node["added_labels"] = [n for n in new if n not in old]
        node["removed_labels"] = [n for n in old if n not in new]
    return [node] if len(node) > 3 else []


def _touch(obj: dict[str, Any], times: list[datetime]) -> None:
    if "updated_at" not in obj:
        obj["updated_at"] = _iso(max([_time(obj["created_at"]), *times]))


def _cut_thread(
    obj: dict[str, Any], at: datetime, children: tuple[str, ...], service: str
) -> dict[str, Any]:
    times = _apply_history(obj, at, service)
    for key in children:
        if key not in obj:
            continue
        stamp = "submitted_at" if key == "reviews" else "created_at"
        obj[key] = _kept(obj[key], at, stamp)
        for child in obj[key]:
            if stamp == "created_at":
                _touch(child, [])
            times.append(_time(child[stamp]))
    _touch(obj, times)
    return obj


def _cut_github(raw: dict[str, Any], at: datetime) -> dict[str, Any]:
    state = dict(raw)
    state["users"] = _kept(raw.get("users"), at)
    state["repos"] = _kept(raw.get("repos"), at)
    for repo in state["repos"]:
        if repo.get("pushed_at") and _time(repo["pushed_at"]) > at:
            repo["pushed_at"] = None
    for key in ("issues", "pulls"):
        state[key] = [
            _cut_thread(t, at, ("comments", "reviews"), "github") for t in _kept(raw.get(key), at)
        ]
    return state


def _cut_linear(raw: dict[str, Any], at: datetime) -> dict[str, Any]:
    state = dict(raw)
    state["users"] = _kept(raw.get("users"), at)
    state["teams"] = _kept(raw.get("teams"), at)
    state["issues"] = [
        _cut_thread(i, at, ("comments",), "linear") for i in _kept(raw.get("issues"), at)
    ]
    return state


def _slack_time(ts: str) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)


def _cut_slack(raw: dict[str, Any], at: datetime) -> dict[str, Any]:
    state = dict(raw)
    channels = []
    for ch in raw.get("channels") or []:
        if datetime.fromtimestamp(int(ch["created"]), tz=UTC) > at:
            continue
        ch = dict(ch)
        messages = []
        for msg in ch.get("messages") or []:
            if _slack_time(msg["ts"]) > at:
                continue
            msg = dict(msg)
            reactions = []
            for r in msg.get("reactions") or []:
                r = dict(r)
                when = r.pop("at", None)
                if when is None or _time(when) <= at:
                    reactions.append(r)
            msg["reactions"] = reactions
            messages.append(msg)
        ch["messages"] = messages
        channels.append(ch)
    state["channels"] = channels
    return state


CUTTERS = {"github": _cut_github, "linear": _cut_linear, "slack": _cut_slack}
