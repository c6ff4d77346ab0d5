"""``replay snapshot capture``: a snapshot from real services as they stood at T.

The GitHub repository is cut at the base commit exactly as generated snapshots are: only the
base commit's history, no tags, no other refs, added to the shared git store under the blob
store root (:mod:`replay.base.sharedgit`: each object once for every snapshot of the
repository; restores get exactly the base's history from it), or with ``shared_git=False`` a
fresh bundle in the snapshot (:func:`replay.base.gitrepo.bundle_create`). The state of each
service is cut at T by its module; what no API let us roll back is listed in the snapshot's
``capture.json``. Registry and docs caches are recorded at T with the existing recorders when
requirements or URLs are given: packages from ``registry_upstream`` as it stood at T, pages
through ``docs_archive`` as it held them at T, their files into the blob store. The snapshot is
assembled in a staging directory and only replaces ``out`` once everything, caches included,
is in place and verifies.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from replay import __version__
from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.formats import dump_json, validate_data
from replay.base.manifest import MANIFEST, DocsIndex, Manifest, RegistryIndex
from replay.base.sharedgit import share
from replay.base.snapshot import list_files, load_snapshot, sha256_file
from replay.base.worldstate import SERVICE_MODELS
from replay.capture.common import CaptureError, Ledger
from replay.capture.github import GitHubReader, capture_github
from replay.capture.linear import LinearReader, capture_linear
from replay.capture.report import CAPTURE_REPORT, CaptureReport
from replay.capture.slack import capture_slack


@dataclass(frozen=True)
class GitHubSource:
    repo: str
    token: str
    api_url: str = "https://api.github.com"
    git_url: str = "https://github.com"
    """Where ``<git_url>/<owner>/<name>.git`` is cloned from."""
    base: str | None = None
    """The base commit; default: the newest commit on the default branch dated at or before T."""
    exclude: frozenset[int] = frozenset()
    """Issue and pull request numbers to leave out whatever their date (the fix PR)."""


@dataclass(frozen=True)
class LinearSource:
    team: str
    key: str
    url: str = "https://api.linear.app/graphql"
    exclude: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SlackSource:
    token: str
    url: str = "https://slack.com/api/"
    channels: frozenset[str] | None = None


@dataclass(frozen=True)
class CaptureConfig:
    at: datetime
    github: GitHubSource
    linear: LinearSource | None = None
    slack: SlackSource | None = None
    requirements: list[str] = field(default_factory=list)
    """Python requirements to record in the registry cache as of T."""
    registry_upstream: str | None = None
    """The simple index (PEP 691 JSON) to record from; default: pip's configured index
    (``PIP_INDEX_URL``, ``pip config``, else PyPI; see
    :func:`replay.registry.record.default_index_url`)."""
    docs: list[str] = field(default_factory=list)
    """Documentation URLs to record as of T; needs ``docs_archive``."""
    docs_archive: str | None = None
    """A web archive URL template with ``{stamp}`` and ``{url}``, e.g.
    ``https://web.archive.org/web/{stamp}id_/{url}``: pages are recorded as it held them at T."""
    blobs: BlobStore | None = None
    """Where package files, pages and the repository's history (its shared git store) go;
    default: ``$REPLAY_BLOBS`` or ``snapshots/blobs``."""
    shared_git: bool = True
    """Keep the history in the blob store's shared git store; False: a bundle in the snapshot."""


EMPTY_LINEAR = {
    "viewer": "u-agent",
    "organization": {"id": "org-0", "name": "none", "url_key": "none"},
    "teams": [],
    "users": [
        {
            "id": "u-agent",
            "name": "Agent",
            "display_name": "agent",
            "email": "agent@replay.invalid",
            "created_at": "2000-01-01T00:00:00Z",
        }
    ],
    "workflow_states": [],
}
EMPTY_SLACK = {
    "team": {"id": "T0NONE", "name": "none", "domain": "none"},
    "bot_user": "U0AGENT",
    "users": [{"id": "U0AGENT", "name": "agent", "real_name": "Agent", "is_bot": True}],
    "channels": [],
}


def _cut_repository(
    src: GitHubSource, at: datetime, branch: str, stage: Path, git_store: Path | None
) -> dict[str, str]:
    """Clone, pick the base commit, keep only its history: in the shared store under the blob
    root ``git_store`` if given, else as a bundle in ``stage``. The manifest's repository."""
    with tempfile.TemporaryDirectory(prefix="replay-capture-") as tmp:
        clone = Path(tmp) / "clone"
        url = f"{src.git_url.rstrip('/')}/{src.repo}.git"
        basic = base64.b64encode(f"x-access-token:{src.token}".encode()).decode()
        header = f"http.extraHeader=Authorization: Basic {basic}"
        gitrepo.run(
            Path(tmp), "-c", header, "clone", "-q", "--bare", "--no-tags", "--single-branch",
            "--branch", branch, url, str(clone),
        )  # fmt: skip
        if src.base is not None:
            base = gitrepo.run(clone, "rev-parse", "--verify", f"{src.base}^{{commit}}")
        else:
            base = next(
                (sha for sha, date in gitrepo.commit_dates(clone, branch) if date <= at), ""
            )
            if not base:
                raise CaptureError(f"{src.repo}: no commit on {branch} is dated at or before T")
        if git_store is not None:
            objects, base = share(git_store, clone, base, src.repo)
            history = {"objects": objects}
        else:
            owner, name = src.repo.split("/")
            part = f"repos/{owner}/{name}.bundle"
            gitrepo.bundle_create(clone, stage / part, base, branch)
            history = {"bundle": part}
    return {"name": src.repo, **history, "base_commit": base, "default_branch": branch}


def capture_snapshot(config: CaptureConfig, out: Path) -> tuple[Manifest, CaptureReport]:
    """Capture the world at ``config.at`` into the snapshot directory ``out``.

    ``out`` (and a snapshot already there) is replaced only when everything succeeded; on any
    error it is left as it was. Docs without ``docs_archive`` are refused before any request.
    """
    at = config.at
    if at.tzinfo is None:
        raise CaptureError("T needs a timezone")
    _check_caches(config)
    led = Ledger()
    origins = {"github": config.github.api_url}
    reader = GitHubReader(config.github.api_url, config.github.token)
    try:
        states = {}
        gh_state, branch = capture_github(
            reader, config.github.repo, at, set(config.github.exclude), led
        )
        states["github"] = gh_state
    finally:
        reader.close()
    states["linear"] = EMPTY_LINEAR
    if config.linear is not None:
        lr = LinearReader(config.linear.url, config.linear.key)
        try:
            states["linear"] = capture_linear(
                lr, config.linear.team, at, set(config.linear.exclude), led
            )
        finally:
            lr.close()
        origins["linear"] = config.linear.url
    states["slack"] = EMPTY_SLACK
    if config.slack is not None:
        from slack_sdk import WebClient

        client = WebClient(token=config.slack.token, base_url=config.slack.url)
        states["slack"] = capture_slack(client, at, config.slack.channels, led)
        origins["slack"] = config.slack.url
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    root = (config.blobs or BlobStore()).root.resolve()
    try:
        repository = _cut_repository(
            config.github, at, branch, stage, root if config.shared_git else None
        )
        services: dict[str, str] = {}
        for svc, raw in states.items():
            where = stage / f"{svc}.json"
            model = validate_data(where, raw, SERVICE_MODELS[svc])
            where.write_text(dump_json(model.model_dump(mode="json", by_alias=True)))
            services[svc] = where.name
        for name, index in (
            ("registry/index.json", RegistryIndex(schema=1)),
            ("docs/index.json", DocsIndex(schema=1)),
        ):
            (stage / name).parent.mkdir()
            (stage / name).write_text(dump_json(index.model_dump(mode="json", by_alias=True)))
        report = CaptureReport(
            schema=1,
            at=at,
            origins=origins,
            dropped=dict(sorted(led.dropped.items())),
            rolled_back=led.rolled_back,
            flags=led.flags,
        )
        (stage / CAPTURE_REPORT).write_text(
            dump_json(report.model_dump(mode="json", by_alias=True))
        )
        manifest = Manifest.model_validate(
            {
                "schema": 1,
                "at": at,
                "source": {
                    "kind": "captured",
                    "origin": " ".join(f"{k}={v}" for k, v in sorted(origins.items())),
                    "tool": f"replay {__version__}",
                },
                # A shared store's repository is added last: the recorders below load the
                # staged snapshot with the default blob store, which may not be config.blobs.
                "repositories": [repository] if "bundle" in repository else [],
                "services": services,
                "registry": "registry/index.json",
                "docs": "docs/index.json",
                "parts": {p: sha256_file(stage / p) for p in list_files(stage)},
            }
        )
        (stage / MANIFEST).write_text(dump_json(manifest.model_dump(mode="json", by_alias=True)))
        _record_caches(config, stage)
        if "objects" in repository:
            data = json.loads((stage / MANIFEST).read_text())
            shared = Manifest.model_validate({**data, "repositories": [repository]})
            (stage / MANIFEST).write_text(dump_json(shared.model_dump(mode="json", by_alias=True)))
        # Verifies (the recorders re-hashed parts; the store holds the base commit).
        manifest = load_snapshot(stage, root).manifest
        if out.exists():
            shutil.rmtree(out)
        stage.replace(out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return manifest, report


def _check_caches(config: CaptureConfig) -> None:
    """Refuse, before anything is read or written, caches that could not be dated at T."""
    if not config.docs:
        return
    if not config.docs_archive:
        # A page fetched today is stamped today, after T: the audit's dated_after would
        # flag it and every run would refuse the snapshot.
        raise CaptureError(
            "docs: recording pages as of T needs a web archive: set docs_archive "
            "(--docs-archive), e.g. https://web.archive.org/web/{stamp}id_/{url}"
        )
    from replay.docs.cache import DocsError, archive_source

    try:
        archive_source(config.docs_archive, config.at, config.docs[0])
    except DocsError as exc:
        raise CaptureError(f"docs_archive (--docs-archive): {exc}") from exc


def _record_caches(config: CaptureConfig, stage: Path) -> None:
    """Record the registry and docs caches at T into the staged snapshot."""
    blobs = config.blobs or BlobStore()
    if config.requirements:
        from replay.registry.record import default_index_url, merge_python, record_python
        from replay.registry.slot import write_index

        upstream = config.registry_upstream or default_index_url()
        files = record_python(config.requirements, config.at, upstream, blobs)
        old = load_snapshot(stage).registry
        write_index(stage, old.model_copy(update={"python": merge_python(old.python, files)}))
    if config.docs:
        from replay.docs.cache import record_pages

        record_pages(stage, config.docs, blobs=blobs, archive=config.docs_archive)


__all__ = [
    "CaptureConfig",
    "GitHubSource",
    "LinearSource",
    "SlackSource",
    "capture_snapshot",
]
