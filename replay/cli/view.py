"""``replay view``: the run viewer, served on this machine or exported as a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from replay.cli.common import out


def view(
    ctx: typer.Context,
    cases: Annotated[
        list[Path] | None,
        typer.Option(
            "--cases",
            help="Case files or directories the gold patches and comparisons' cases come "
            "from (default: ./cases). Repeat for more.",
            show_default=False,
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write the pages into this folder (opened from disk, no server) instead of "
            "serving them.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to serve on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on.")] = 8765,
) -> None:
    """Browse the results store: the runs, one run (verdict, hidden tests, side effects with
    their events, transcript, diff beside gold, model calls, cost) and the comparisons."""
    from replay.cli.results import _case_files
    from replay.view import Source, export_site, make_app
    from replay.view.export import check_target

    if export is not None:
        check_target(export)
    files, _shown = _case_files(cases)
    source = Source.open(ctx.obj.db, files)
    try:
        if export is not None:
            done = export_site(source, export)
            out.print(
                f"wrote {done.runs} run page(s) and {done.comparisons} comparison page(s): "
                f"open {done.index}",
                markup=False,
            )
            return
        import uvicorn

        out.print(f"serving http://{host}:{port}/ (Ctrl-C stops)", markup=False)
        uvicorn.run(make_app(source), host=host, port=port, log_level="warning")
    finally:
        source.close()
