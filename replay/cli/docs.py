"""``replay docs record``: the documentation cache of a snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from replay.cli.common import out

app = typer.Typer(help="The documentation cache of a snapshot.", no_args_is_help=True)


@app.command("record")
def docs_record(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory to add the pages to.")],
    urls: Annotated[list[str], typer.Argument(help="Pages to record (GET).")],
    archive: Annotated[
        str | None,
        typer.Option(
            help="Fetch through a web archive as of T: a template with {stamp} and {url}, "
            "e.g. https://web.archive.org/web/{stamp}id_/{url}"
        ),
    ] = None,
) -> None:
    """Record documentation pages into the snapshot; they are served read-only as of T."""
    from replay.docs import record_pages

    for page in record_pages(snapshot, urls, archive=archive):
        out.print(f"{page.status}  {page.sha256[:12]}  {page.fetched_at.isoformat()}  {page.url}")
