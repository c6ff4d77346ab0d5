"""``replay gc``: remove what dead runs left behind (containers, networks, volumes, run dirs,
world processes)."""

from __future__ import annotations

from typing import Annotated

import typer

from replay.cli.common import out

app = typer.Typer(
    help="Remove what dead runs left behind: containers, networks, volumes, run directories, "
    "world processes.",
    no_args_is_help=False,
)


@app.callback(invoke_without_command=True)
def gc(
    ctx: typer.Context,
    everything: Annotated[
        bool, typer.Option("--all", help="Remove every run's resources, live runs' too.")
    ] = False,
    run: Annotated[
        list[str] | None, typer.Option("--run", help="Only these runs (repeatable).")
    ] = None,
    images: Annotated[
        bool,
        typer.Option(
            "--images",
            help="Also remove stale images: env images a rebuild replaced, harness images "
            "built on them.",
        ),
    ] = False,
    runtime: Annotated[str, typer.Option(help="Runtime provider.")] = "docker",
) -> None:
    """Remove the containers, networks, volumes and run directories of runs that are gone,
    and end the world processes of runners that are gone (a world whose runner still runs is
    never touched, even with --all; with --run, worlds are left alone: they name no run)."""
    from replay.runtime import get_runtime
    from replay.world.process import kill_worlds, orphan_worlds

    rt = get_runtime(runtime)
    try:
        report = rt.gc(everything=everything, runs=set(run) if run else None, images=images)
    finally:
        rt.close()
    abandoned: list[str] = []
    if not run:
        from replay.results import Store

        store = Store.open(ctx.obj.db if ctx.obj else None)
        try:
            abandoned = store.abandon_dead("its runner was gone (found by replay gc)")
        finally:
            store.close()
    worlds = [] if run else kill_worlds(orphan_worlds())
    out.print(f"ended {len(worlds)} world process(es) of dead runners")
    for pid in worlds:
        out.print(f"  pid {pid}")
    kinds = ["containers", "networks", "volumes", "run_dirs"] + (["images"] if images else [])
    for kind in kinds:
        names = getattr(report, kind)
        out.print(f"removed {len(names)} {kind.replace('_', ' ')}")
        for name in names:
            out.print(f"  {name}")
    if abandoned:
        out.print(f"marked {len(abandoned)} run(s) abandoned in the results store")
    if report.kept_images:
        out.print(f"kept {len(report.kept_images)} stale image(s) still in use by a container")
    if report.kept_runs:
        out.print(f"kept {len(report.kept_runs)} live run(s): {', '.join(report.kept_runs)}")
