"""``replay case mine``: candidate cases from a repository's history, and (``--build``) the
cases built, validated, audited and calibrated from them."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from replay.base.errors import InputError
from replay.cli.common import out

if TYPE_CHECKING:
    from replay.mine import Candidate


def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise InputError(Path(name), f"--{name} needs a timezone (e.g. ...Z)", name)
    return value


def mine(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(help="owner/name of the repository on GitHub.")],
    clone: Annotated[Path, typer.Option(help="A local clone of the repository.")] = Path("."),
    github_api: Annotated[str, typer.Option(help="GitHub REST base URL (GITHUB_TOKEN).")] = (
        "https://api.github.com"
    ),
    github_git: Annotated[str, typer.Option(help="Git base URL (with --build).")] = (
        "https://github.com"
    ),
    linear_url: Annotated[
        str | None, typer.Option(help="Linear GraphQL URL (LINEAR_API_KEY); with --linear-team.")
    ] = None,
    linear_team: Annotated[
        str | None, typer.Option(help="The Linear team whose tickets are read (ENG).")
    ] = None,
    slack_url: Annotated[
        str | None, typer.Option(help="Slack Web API base URL (SLACK_TOKEN); default: unread.")
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(help="An account that is the agent (repeatable; default: the token's user)."),
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(help="Read the history up to here (default: now).")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="Only fixes that landed at or after this time.")
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option(help="Only these kinds (repeatable): plain, fix-that-broke, loop, ...)."),
    ] = None,
    days: Annotated[
        int, typer.Option(min=1, help="fix-that-broke: a later fix within this many days.")
    ] = 14,
    attempts: Annotated[
        int, typer.Option(min=1, help="loop: pull requests closed unmerged before the fix.")
    ] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the candidates as JSON.")] = False,
    build: Annotated[
        Path | None,
        typer.Option(help="Build, validate, audit and calibrate each candidate into this dir."),
    ] = None,
    setup: Annotated[
        list[str] | None, typer.Option(help="With --build: environment setup (repeatable).")
    ] = None,
    command: Annotated[
        str | None, typer.Option(help="With --build: the test command with {junit}.")
    ] = None,
    registry_index: Annotated[
        Path | None, typer.Option(help="With --build: a recorded registry index.")
    ] = None,
    repeats: Annotated[
        int, typer.Option(min=3, help="With --build: test runs before and after the gold.")
    ] = 3,
    calibration_runs: Annotated[
        int, typer.Option(min=1, help="With --build: gold and idle runs each.")
    ] = 1,
    runtime: Annotated[str, typer.Option(help="Container runtime.")] = "docker",
    strength: Annotated[
        bool,
        typer.Option(
            help="With --build: measure each calibrated case's strength and record it beside "
            "the case (replay case strength --record).",
        ),
    ] = True,
) -> None:
    """Find the tickets that teach most in a repository's history, each with why it was picked;
    with --build, turn each into a calibrated case or set it aside with the reason."""
    from replay.mine import KINDS, MineOptions, Sources, mine, read_history

    kinds = tuple(kind or KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise InputError(
            Path(unknown[0]), f"no kind {unknown[0]!r}; known: {', '.join(KINDS)}", "kind"
        )
    if (linear_url is None) != (linear_team is None):
        raise InputError(Path(repo), "--linear-url and --linear-team go together", "linear-team")
    if not clone.is_dir():
        raise InputError(clone, "no such directory: --clone is a local clone", "clone")
    _aware(since, "since")
    token = os.environ.get("GITHUB_TOKEN", "")
    if not token:
        raise InputError(Path("GITHUB_TOKEN"), "set GITHUB_TOKEN to a token for GitHub")
    src = Sources(
        clone=clone,
        repo=repo,
        github_api=github_api,
        github_token=token,
        linear_url=linear_url,
        linear_key=os.environ.get("LINEAR_API_KEY", ""),
        linear_team=linear_team,
        slack_url=slack_url,
        slack_token=os.environ.get("SLACK_TOKEN", ""),
        agents=frozenset(agent or ()),
        until=_aware(until, "until"),
    )
    history = read_history(src)
    options = MineOptions(days, attempts, since, kinds)  # type: ignore[arg-type]
    candidates = mine(history, options)
    if as_json and build is None:
        out.print_json(json.dumps([c.as_dict() for c in candidates]))
        return
    _table(candidates)
    if build is None:
        return
    from replay.mine.build import BuildConfig, build_candidates

    config = BuildConfig(
        out=build,
        github_api=github_api,
        github_git=github_git,
        github_token=token,
        linear_url=linear_url,
        linear_key=src.linear_key,
        slack_url=slack_url,
        slack_token=src.slack_token,
        setup=list(setup or []),
        command=command,
        registry_index=registry_index,
        runtime=runtime,
        repeats=repeats,
        calibration_runs=calibration_runs,
        strength=strength,
        db=ctx.obj.db if ctx.obj is not None else None,
    )
    built, rejected = build_candidates(history, candidates, config)
    for b in built:
        out.print(f"calibrated  {b.candidate.id}: {b.case}", markup=False)
    for r in rejected:
        out.print(f"rejected    {r.candidate.id} ({r.step}): {r.reason}", markup=False)
    out.print(f"{len(built)} case(s) built, {len(rejected)} set aside: {build / 'mined.json'}")


def _table(candidates: list[Candidate]) -> None:
    from rich.table import Table

    table = Table("kind", "candidate", "fixed", "why", show_lines=True)
    for c in candidates:
        table.add_row(c.kind, c.id, c.fixed_at.strftime("%Y-%m-%d"), c.reason)
    out.print(table)
    out.print(f"{len(candidates)} candidate(s)")
