"""``replay registry``: record packages as they stood at T, and serve a snapshot's registry."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from replay.base.errors import InputError
from replay.cli.common import out

app = typer.Typer(help="The package registry frozen at T.", no_args_is_help=True)


@app.command("record")
def record(
    specs: Annotated[
        list[str] | None,
        typer.Argument(help="Requirements, e.g. pytest==8.3.5 or 'requests>=2'."),
    ] = None,
    requirement: Annotated[
        list[Path] | None,
        typer.Option(
            "-r",
            "--requirement",
            help="A pip requirements file (-r nesting, markers; index options ignored).",
        ),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option(
            help="A project checkout: record its build requirements and dependencies too."
        ),
    ] = None,
    extra: Annotated[
        list[str] | None,
        typer.Option(help="An extra of --project to record (repeatable), e.g. test."),
    ] = None,
    debian: Annotated[
        str | None,
        typer.Option(
            help="Target the python3 and glibc of this Debian release (bullseye, bookworm, "
            "trixie); default: Python 3.11, manylinux up to glibc 2.39."
        ),
    ] = None,
    at: Annotated[
        datetime | None,
        typer.Option(help="T (ISO 8601 with a timezone); default: the snapshot's T."),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(help="Snapshot whose registry/index.json to extend (manifest updated)."),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(help="Upstream simple index; default: pip's (PIP_INDEX_URL, pip config)."),
    ] = None,
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root; default $REPLAY_BLOBS or snapshots/blobs."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--out", help="Also write the resulting RegistryIndex JSON here."),
    ] = None,
    sdist: Annotated[
        bool, typer.Option("--sdist", help="Record each version's sdist beside its wheels.")
    ] = False,
    npm: Annotated[
        bool,
        typer.Option(
            "--npm", help="SPECs are npm packages (name@range); upstream is npm's registry."
        ),
    ] = False,
) -> None:
    """Record the files SPECs and their dependencies need at T into the blob store.

    Each version is the one pip would install at T on the target: no pre-release unless
    named, no yanked file unless pinned, no file whose requires-python excludes the
    target. Every sdist recorded brings its build requirements; --project brings the
    checkout's build requirements and runtime dependencies (and its --extra ones).
    """
    from replay.base.blobs import BlobStore
    from replay.base.manifest import RegistryIndex
    from replay.registry.record import (
        PythonRecorder,
        Target,
        default_index_url,
        merge_python,
        project_wants,
    )
    from replay.registry.requirements import read_project, read_requirements_file
    from replay.registry.slot import dump_index, read_index, write_index

    specs = list(specs or [])
    if not specs and not requirement and project is None:
        raise InputError("SPEC", "give requirements, -r FILE or --project")
    if npm and (requirement or project is not None or debian):
        raise InputError("--npm", "-r, --project and --debian are for Python packages")

    index = RegistryIndex(schema=1)
    if snapshot is not None:
        index = read_index(snapshot)
        if at is None:
            from replay.snapshot import load_snapshot

            at = load_snapshot(snapshot).at
    if at is None:
        raise InputError("--at", "give T with --at, or a snapshot with --snapshot")
    if at.tzinfo is None:
        raise InputError("--at", "T needs a timezone (e.g. 2026-03-12T09:00:00Z)")
    store = BlobStore(blobs)
    if npm:
        from replay.registry.record_npm import default_registry, merge_npm, record_npm

        source = upstream or default_registry()
        versions = record_npm(specs, at, source, store)
        index = index.model_copy(update={"npm": merge_npm(index.npm, versions)})
        for v in versions:
            out.print(f"  {v.publish_time.isoformat()}  {v.package}@{v.version}")
        count = f"{len(versions)} versions"
    else:
        source = upstream or default_index_url()
        target = Target.for_debian(debian) if debian else Target()
        for path in requirement or []:
            specs += read_requirements_file(path)
        meta = read_project(project) if project is not None else None
        recorder = PythonRecorder(
            source,
            at,
            store,
            target,
            include_sdist=sdist,
            provided=[meta.name] if meta and meta.name else [],
        )
        wants = project_wants(meta, target, extra or []) if meta is not None else []
        files = recorder.record(specs, wants)
        index = index.model_copy(update={"python": merge_python(index.python, files)})
        for f in files:
            out.print(f"  {f.upload_time.isoformat()}  {f.filename}  ({f.size} bytes)")
            if f.chosen_because:
                out.print(f"      because {f.chosen_because}", markup=False)
        count = f"{len(files)} files ({sum(f.size for f in files)} bytes)"
    out.print(f"recorded {count} from {source} at T {at.isoformat()}")
    if snapshot is not None:
        out.print(f"wrote {write_index(snapshot, index)}")
    if output is not None:
        output.write_text(dump_index(index))
        out.print(f"wrote {output}")
    if snapshot is None and output is None:
        out.print(dump_index(index), end="")


@app.command("fetch")
def fetch(
    cases: Annotated[
        list[Path], typer.Argument(help="Case files (case.yaml) or snapshot directories.")
    ],
    upstream: Annotated[
        str | None,
        typer.Option(help="The index they were recorded from; default: pip's (PIP_INDEX_URL)."),
    ] = None,
) -> None:
    """Bring into the blob store the registry files the cases list and it lacks, from the
    index they were recorded from, each checked against its recorded sha256."""
    from replay.base.blobs import BlobStore
    from replay.base.case import load_case
    from replay.base.manifest import RegistryIndex
    from replay.registry.fetch import fetch_missing
    from replay.registry.upstream import Upstream, default_index_url

    indexes = []
    for path in cases:
        snapshot = load_case(path).snapshot if path.is_file() else path
        index = snapshot / "registry" / "index.json"
        if not index.is_file():
            raise InputError(path, f"no registry index at {index}: give a case.yaml or a snapshot")
        indexes.append(RegistryIndex.model_validate_json(index.read_text()))
    done = fetch_missing(
        indexes, BlobStore(), Upstream(upstream or default_index_url()), say=out.print
    )
    out.print(
        f"{done.files} file(s) fetched ({done.bytes / 1e6:.1f} MB), {done.present} already here"
        + (f", {len(done.failed)} not fetched" if done.failed else "")
    )
    for line in done.failed:
        out.print(f"  NOT FETCHED {line}", markup=False)
    if done.failed:
        raise typer.Exit(1)


@app.command("serve")
def serve(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    port: Annotated[int, typer.Option(help="TCP port on --host.")] = 8081,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    blobs: Annotated[Path | None, typer.Option(help="Blob store root.")] = None,
) -> None:
    """Serve a snapshot's registry standalone (pip: --index-url http://HOST:PORT/simple/)."""
    import uvicorn

    from replay.base.blobs import BlobStore
    from replay.registry.serve import NPM_PREFIX, serve_snapshot

    app_ = serve_snapshot(snapshot, BlobStore(blobs))
    out.print(f"python: http://{host}:{port}/simple/   npm: http://{host}:{port}{NPM_PREFIX}/")
    uvicorn.run(app_, host=host, port=port, log_level="warning")


__all__ = ["app"]
