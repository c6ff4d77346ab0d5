"""``replay redteam``: the red-team corpus, listed or run end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from replay.cli.common import out

app = typer.Typer(help="The red-team corpus: attacks on the grader, as stub trajectories.")


@app.command("list")
def list_attacks() -> None:
    """Every attack of the corpus: name, family, what it must end as, what it does."""
    from replay.run.attacks import ATTACKS

    table = Table("attack", "family", "must end", "ci", "what the agent does")
    for a in ATTACKS.values():
        must = a.expect.value + (f" ({a.reason})" if a.reason else "")
        table.add_row(a.name, a.family, must, "yes" if a.ci else "", a.summary)
    Console(highlight=False, width=max(out.width, 160)).print(table)


@app.command("run")
def run(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    attack: Annotated[
        list[str] | None, typer.Option(help="Only this attack (repeatable); all by default.")
    ] = None,
    family: Annotated[
        list[str] | None, typer.Option(help="Only attacks of this family (repeatable).")
    ] = None,
    ci: Annotated[bool, typer.Option(help="Only the subset `make test` runs.")] = False,
    harness: Annotated[str, typer.Option(help="The harness that plays them.")] = "reference",
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
) -> None:
    """Run every attack on every case, one run each; exit 1 unless each ends as it must."""
    from replay.run.redteam import CorpusRow, run_corpus, select

    attacks = select(attack or (), family or (), ci)  # an unknown name: a one-line usage error

    def said(row: CorpusRow) -> None:
        mark = "ok " if row.held else "MISSED"
        found = "".join(f"; check: {p}" for p in row.problems)
        out.print(
            f"{mark} {row.attack.name} on {row.case_id}: {row.outcome.value}: {row.reason}"
            f"{found} ({row.seconds:.0f} s)",
            markup=False,
        )

    out.print(f"red team: {len(attacks)} attack(s) on {len(cases)} case(s)", markup=False)
    rows = run_corpus(cases, attacks, out=out_dir, db=ctx.obj.db, harness=harness, progress=said)
    table = Table("attack", "case", "outcome", "must end", "held", "reason", "checks", "s")
    for row in rows:
        a = row.attack
        must = a.expect.value + (f" ({a.reason})" if a.reason else "")
        checks = "; ".join(row.problems) or "ok"
        table.add_row(
            a.name,
            row.case_id,
            row.outcome.value,
            must,
            "yes" if row.held else "NO",
            row.reason,
            checks,
            f"{row.seconds:.0f}",
        )
    Console(highlight=False, width=max(out.width, 220)).print(table)
    missed = [r for r in rows if not r.held]
    if missed:
        out.print(
            f"{len(missed)} of {len(rows)} attack run(s) did not end as they must", markup=False
        )
        raise typer.Exit(1)
