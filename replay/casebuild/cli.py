"""``replay case create`` and ``replay case import-swebench`` (mounted on the ``case`` app)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.errors import InputError

app = typer.Typer(help="Building cases from real history.", no_args_is_help=True)
out = Console(highlight=False, soft_wrap=True)


def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise InputError(Path(name), f"--{name} needs a timezone (e.g. ...Z)", name)
    return value


@app.command("create")
def create(
    case_id: Annotated[str, typer.Argument(help="The new case's id (lower-case, - and .).")],
    repo: Annotated[Path, typer.Option(help="Local clone holding the fix.")],
    fix: Annotated[str, typer.Option(help="The fix commit (the PR's merge or squash commit).")],
    name: Annotated[str, typer.Option(help="owner/name of the repository on the fake GitHub.")],
    title: Annotated[str, typer.Option(help="The ticket's title.")],
    body: Annotated[str, typer.Option(help="The ticket's body.")] = "",
    issue: Annotated[int, typer.Option(help="The ticket's issue number.")] = 1,
    ticket_created: Annotated[
        datetime | None, typer.Option(help="When the ticket was filed (default: the fix's start).")
    ] = None,
    base: Annotated[str | None, typer.Option(help="Base commit (default: fix^).")] = None,
    at: Annotated[
        datetime | None,
        typer.Option(help="T (default: the ticket's creation or the first commit, the earlier)."),
    ] = None,
    setup: Annotated[
        list[str] | None, typer.Option(help="Environment setup command (repeatable).")
    ] = None,
    command: Annotated[
        str | None, typer.Option(help="Test command with {junit} (default: pytest on the tests).")
    ] = None,
    registry_index: Annotated[
        Path | None, typer.Option(help="A recorded registry index for the environment at T.")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Test runs before and after the gold (>= 3).")] = 3,
    runtime: Annotated[str, typer.Option(help="Container runtime.")] = "docker",
    output: Annotated[Path, typer.Option("--out", help="Where the case directory goes.")] = Path(
        "cases"
    ),
) -> None:
    """A case from a fix commit: hidden tests = its test changes, gold = the rest, test lists
    measured before and after the gold in the environment image."""
    from replay.casebuild.create import FixSource, create_case
    from replay.runtime.base import get_runtime

    src = FixSource(
        repo=repo,
        fix=fix,
        repo_name=name,
        ticket_title=title,
        ticket_body=body,
        issue_number=issue,
        ticket_created=_aware(ticket_created, "ticket-created"),
        base=base,
        at=_aware(at, "at"),
        setup=list(setup or []),
        command=command,
        registry_index=registry_index,
    )
    rt = get_runtime(runtime)
    try:
        path, lists = create_case(case_id, src, output / case_id, rt, repeats)
    finally:
        rt.close()
    out.print(
        f"wrote {path}: {len(lists.fail_to_pass)} FAIL_TO_PASS, {len(lists.pass_to_pass)} "
        f"PASS_TO_PASS, {len(lists.flaky)} flaky dropped"
    )


@app.command("import-swebench")
def import_swebench(
    file: Annotated[Path, typer.Argument(help="Instances: a JSON list or JSON lines.")],
    clones: Annotated[
        Path, typer.Option(help="Directory of local clones, <owner>__<name> or <name>.")
    ],
    setup: Annotated[
        list[str] | None, typer.Option(help="Environment setup command (repeatable).")
    ] = None,
    command: Annotated[str | None, typer.Option(help="Test command with {junit}.")] = None,
    registry_index: Annotated[
        Path | None, typer.Option(help="A recorded registry index for the environment at T.")
    ] = None,
    output: Annotated[Path, typer.Option("--out", help="Where the cases go.")] = Path("cases"),
) -> None:
    """SWE-bench instances become cases; each ticket becomes a GitHub issue in the snapshot."""
    from replay.casebuild.swebench import import_instances

    for path in import_instances(
        file,
        clones,
        output,
        setup=list(setup or []),
        command=command,
        registry_index=registry_index,
    ):
        out.print(f"wrote {path}")
