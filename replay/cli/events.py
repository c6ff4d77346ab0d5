"""``replay events``: export a run's event log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from replay.base.errors import InputError
from replay.cli.common import out


def events(
    ctx: typer.Context,
    run: Annotated[
        str,
        typer.Argument(
            help="A run directory (its events.db), an event-log SQLite file, or a run's id "
            "or its first characters (as results list shows it)."
        ),
    ],
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line.")] = False,
    kind: Annotated[str | None, typer.Option(help="Only events of this kind (wildcards).")] = None,
) -> None:
    """Export a run's event log: fake mutations, denied requests, model calls."""
    import fnmatch

    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    from fakes.core.events import EventLog

    path = Path(run)
    if not path.exists() and re.fullmatch(r"[0-9a-f-]{4,36}", run):
        from replay.results import Store

        store = Store.open(ctx.obj.db)
        try:
            row = store.find_run(run)
        finally:
            store.close()
        if not row.run_dir:
            raise InputError(run, "the run has no directory recorded (it did not start)")
        path = Path(row.run_dir)
    db = path / "events.db" if path.is_dir() else path
    if not db.is_file():
        raise InputError(db, "no event log here (expected a run directory or a SQLite file)")
    engine = create_engine(f"sqlite:///{db.resolve()}")
    try:
        with Session(engine) as session:
            found = EventLog.read(session)
    except SQLAlchemyError as exc:
        raise InputError(db, f"not an event log: {str(exc).splitlines()[0]}") from exc
    finally:
        engine.dispose()
    for event in found:
        if kind and not fnmatch.fnmatchcase(event.kind, kind):
            continue
        if jsonl:
            out.print(event.model_dump_json(by_alias=True), markup=False, highlight=False)
        else:
            out.print(
                f"{event.seq:>5} {event.at.isoformat()} {event.kind:<34} {event.object.id}",
                markup=False,
            )
