"""``replay snapshot``: the world as it stood at T (capture, build, inspect, audit)."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from replay.base.errors import InputError
from replay.cli.common import LOOSE, clients_missing, needs_clients, out

app = typer.Typer(help="Snapshots: the world as it stood at T.", no_args_is_help=True)


def _token(env: str) -> str:
    value = os.environ.get(env, "")
    if not value:
        raise InputError(Path(env), f"set {env} to a token for this service")
    return value


def capture(
    output: Annotated[Path, typer.Argument(help="The snapshot directory to write.")],
    at: Annotated[datetime, typer.Option(help="T, ISO 8601 with a timezone.")],
    repo: Annotated[str, typer.Option(help="owner/name of the GitHub repository.")],
    base: Annotated[
        str | None, typer.Option(help="Base commit (default: the last one at or before T).")
    ] = None,
    exclude: Annotated[
        list[int] | None, typer.Option(help="Issue/PR number to leave out (the fix PR).")
    ] = None,
    github_api: Annotated[str, typer.Option(help="GitHub REST base URL.")] = (
        "https://api.github.com"
    ),
    github_git: Annotated[str, typer.Option(help="Git base URL.")] = "https://github.com",
    linear_team: Annotated[str | None, typer.Option(help="Linear team key, e.g. ENG.")] = None,
    linear_url: Annotated[str, typer.Option(help="Linear GraphQL URL.")] = (
        "https://api.linear.app/graphql"
    ),
    linear_exclude: Annotated[
        list[str] | None, typer.Option(help="Linear identifier to leave out.")
    ] = None,
    slack_url: Annotated[str | None, typer.Option(help="Slack Web API base URL.")] = None,
    slack_channel: Annotated[
        list[str] | None, typer.Option(help="Slack channel (name or id) to capture; all if none.")
    ] = None,
    requirement: Annotated[
        list[str] | None, typer.Option(help="Python requirement to record in the registry at T.")
    ] = None,
    index_url: Annotated[
        str | None,
        typer.Option(
            help="Simple index to record requirements from (replay registry record's "
            "--upstream); default: pip's (PIP_INDEX_URL, pip config)."
        ),
    ] = None,
    docs: Annotated[
        list[str] | None, typer.Option(help="Docs URL to record as of T (needs --docs-archive).")
    ] = None,
    docs_archive: Annotated[
        str | None,
        typer.Option(
            help="Web archive URL template with {stamp} and {url}, e.g. "
            "https://web.archive.org/web/{stamp}id_/{url}."
        ),
    ] = None,
    blobs: Annotated[
        Path | None,
        typer.Option(
            help="Blob store root for packages, pages and the shared git store; default "
            "$REPLAY_BLOBS or snapshots/blobs."
        ),
    ] = None,
    shared_git: Annotated[
        bool,
        typer.Option(
            "--shared-git/--no-shared-git",
            help="Keep the repository's history in the blob store's shared git store (each "
            "object once for every snapshot), or as a bundle in the snapshot.",
        ),
    ] = True,
) -> None:
    """Capture GitHub (GITHUB_TOKEN), and Linear (LINEAR_API_KEY) and Slack (SLACK_TOKEN) when
    asked, as of T; what could not be rolled back is listed in the snapshot's capture.json."""
    from replay.base.blobs import BlobStore
    from replay.capture.snapshot import (
        CaptureConfig,
        GitHubSource,
        LinearSource,
        SlackSource,
        capture_snapshot,
    )

    if at.tzinfo is None:
        raise InputError(Path("--at"), "T needs a timezone (e.g. ...Z)", "at")
    if docs and not docs_archive:
        raise InputError(
            Path("--docs-archive"),
            "--docs needs a web archive to read the pages as of T (a page fetched now is dated "
            "after T and the snapshot would fail its audit), e.g. "
            "--docs-archive 'https://web.archive.org/web/{stamp}id_/{url}'",
        )
    config = CaptureConfig(
        at=at,
        github=GitHubSource(
            repo,
            _token("GITHUB_TOKEN"),
            api_url=github_api,
            git_url=github_git,
            base=base,
            exclude=frozenset(exclude or []),
        ),
        linear=LinearSource(
            linear_team, _token("LINEAR_API_KEY"), linear_url, frozenset(linear_exclude or [])
        )
        if linear_team
        else None,
        slack=SlackSource(
            _token("SLACK_TOKEN"),
            slack_url or "https://slack.com/api/",
            frozenset(slack_channel) if slack_channel else None,
        )
        if slack_url or slack_channel
        else None,
        requirements=list(requirement or []),
        registry_upstream=index_url,
        docs=list(docs or []),
        docs_archive=docs_archive,
        blobs=BlobStore(blobs) if blobs is not None else None,
        shared_git=shared_git,
    )
    manifest, report = capture_snapshot(config, output)
    base_commit = manifest.repositories[0].base_commit
    out.print(
        f"captured {output} at {manifest.at.isoformat()}: base {base_commit[:12]}, "
        f"dropped {sum(report.dropped.values())}, rolled back {len(report.rolled_back)}, "
        f"{len(report.flags)} flags (see capture.json)"
    )
    if requirement or docs:
        from replay.snapshot import load_snapshot

        store = config.blobs or BlobStore()
        snap = load_snapshot(output, store.root)
        out.print(
            f"recorded {len(snap.registry.python)} registry files and "
            f"{len(snap.docs.pages)} docs pages as of T into {store.root}"
        )
    for flag in report.flags:
        out.print(f"FLAG  {flag.service} {flag.item}: {flag.problem}")


# Capturing drives the services' real clients, an extra that an environment such as the
# gateway's cannot have (see pyproject): there it is a stand-in that says so.
if (_missing := clients_missing()) is None:
    app.command("capture")(capture)
else:
    app.command("capture", context_settings=LOOSE)(needs_clients(_missing))


@app.command("inspect")
def snapshot_inspect(path: Annotated[Path, typer.Argument(help="Snapshot directory.")]) -> None:
    """Show T, the repository, and how much of each service the snapshot holds."""
    from replay.snapshot import load_snapshot
    from replay.snapshot.inspect import summarize

    summary = summarize(load_snapshot(path))
    out.print(f"snapshot  {summary.path}")
    out.print(f"T         {summary.at.isoformat()}")
    out.print(f"source    {summary.source}")
    for r in summary.repositories:
        out.print(
            f"repo      {r.name} @ {r.base_commit} ({r.default_branch}): {r.commits} commits, "
            f"newest {r.newest_commit_at.isoformat()}"
        )
    table = Table("what", "count", box=None, pad_edge=False)
    for what, count in summary.counts.items():
        table.add_row(what, str(count))
    out.print(table)


@app.command("build")
def snapshot_build(
    sources: Annotated[Path, typer.Argument(help="Sources directory (world.yaml, history/).")],
    dest: Annotated[Path, typer.Argument(help="Snapshot directory to write (replaced).")],
    at: Annotated[
        datetime | None,
        typer.Option(help="Cut at this T instead of world.yaml's (ISO 8601 with a timezone)."),
    ] = None,
    shared_git: Annotated[
        bool,
        typer.Option(
            "--shared-git",
            help="Keep the repository's history in the shared git store under the blob store "
            "(each object once for every snapshot) instead of a bundle in the snapshot.",
        ),
    ] = False,
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root; default $REPLAY_BLOBS or snapshots/blobs."),
    ] = None,
) -> None:
    """Generate a snapshot from sources, cutting their timeline at T."""
    from replay.snapshot import build_snapshot

    if at is not None and at.tzinfo is None:
        raise InputError(sources / "world.yaml", "--at needs a timezone (e.g. ...Z)", "at")
    manifest = build_snapshot(sources, dest, at, shared_git=shared_git, blobs=blobs)
    out.print(f"wrote {dest} (T {manifest.at.isoformat()}, {len(manifest.parts)} parts)")
    for name, digest in sorted(manifest.parts.items()):
        out.print(f"  {digest}  {name}")
    for repo in manifest.repositories:
        if repo.objects is not None:
            out.print(f"  {repo.name} @ {repo.base_commit} in the shared store {repo.objects}")


@app.command("prune-cache")
def snapshot_prune_cache(
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root; default $REPLAY_BLOBS or snapshots/blobs."),
    ] = None,
    older_than: Annotated[
        float, typer.Option(help="Keep bundles written within this many hours.", min=0)
    ] = 1.0,
) -> None:
    """Remove the bundles cut from the shared git stores; they are made again on use."""
    from replay.base.sharedgit import blob_root, prune_bundles

    root = blob_root(blobs)
    removed = prune_bundles(root, older_than * 3600)
    out.print(f"removed {len(removed)} cached bundle(s) under {root}")


@app.command("audit")
def snapshot_audit(
    path: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    case: Annotated[
        Path | None, typer.Option(help="Case file: also search for its answer.")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Ignore the cached verdict.")] = False,
) -> None:
    """Search every part of the snapshot for what came after T and, with --case, the answer."""
    from replay.base.case import load_case
    from replay.snapshot import load_snapshot
    from replay.snapshot.audit import audit, audit_cached

    findings = (
        audit(load_snapshot(path), load_case(case) if case else None)
        if fresh
        else audit_cached(path, case)
    )
    for f in findings:
        out.print(f"LEAK  {f.location}: {f.problem}", markup=False)
    if findings:
        raise typer.Exit(1)
    answer = f" the answer of {case}" if case else ""
    out.print(f"clean: nothing in {path} leaks{answer} (nothing dated after T)")
