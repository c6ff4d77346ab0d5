"""``replay case``: cases, one shipped ticket each (create, import, validate, calibrate)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from replay.base.errors import InputError
from replay.base.outcomes import Outcome
from replay.cli.common import LOOSE, clients_missing, needs_clients, out

app = typer.Typer(help="Cases: one shipped ticket each.", no_args_is_help=True)


def _env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise InputError(Path(name), f"set {name} to a token for this service")
    return value


def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise InputError(Path(name), f"--{name} needs a timezone (e.g. ...Z)", name)
    return value


def _note(line: str) -> None:
    out.print(f"note: {line}", markup=False)


def create(
    ctx: typer.Context,
    case_id: Annotated[
        str | None,
        typer.Argument(help="The new case's id (lower-case, - and .); not with --from."),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="A list of fixes (YAML: schema, defaults, fixes; or case mine --json's output "
            "with --repo and --name), built in parallel; writes OUT/yield.md and yield.json.",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(min=1, help="With --from: fixes built at once (default: from the machine)."),
    ] = None,
    calibration_runs: Annotated[
        int,
        typer.Option(min=0, help="With --from: gold and idle runs each (0: do not calibrate)."),
    ] = 1,
    strength: Annotated[
        bool,
        typer.Option(
            help="With --from: measure each calibrated case's strength and record it beside "
            "the case (replay case strength --record).",
        ),
    ] = True,
    repo: Annotated[Path | None, typer.Option(help="Local clone holding the fix.")] = None,
    fix: Annotated[
        str | None, typer.Option(help="The fix commit (the PR's merge or squash commit).")
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="owner/name of the repository on the fake GitHub.")
    ] = None,
    title: Annotated[str, typer.Option(help="The ticket's title.")] = "",
    pr: Annotated[
        str | None,
        typer.Option(help="A merged PR, owner/name#N, read from GitHub (GITHUB_TOKEN)."),
    ] = None,
    github_api: Annotated[str, typer.Option(help="GitHub REST base URL.")] = (
        "https://api.github.com"
    ),
    github_git: Annotated[str, typer.Option(help="Git base URL.")] = "https://github.com",
    linear_issue: Annotated[
        str | None,
        typer.Option(help="With --pr: the Linear ticket (ENG-12), captured at T (LINEAR_API_KEY)."),
    ] = None,
    linear_url: Annotated[str, typer.Option(help="Linear GraphQL URL.")] = (
        "https://api.linear.app/graphql"
    ),
    slack_thread: Annotated[
        str | None,
        typer.Option(
            help="With --pr: CHANNEL/TS of the Slack thread, captured at T (SLACK_TOKEN)."
        ),
    ] = None,
    slack_url: Annotated[str, typer.Option(help="Slack Web API base URL.")] = (
        "https://slack.com/api/"
    ),
    body: Annotated[str, typer.Option(help="The ticket's body.")] = "",
    issue: Annotated[int, typer.Option(help="The ticket's issue number.")] = 1,
    ticket_created: Annotated[
        datetime | None, typer.Option(help="When the ticket was filed (default: the fix's start).")
    ] = None,
    base: Annotated[str | None, typer.Option(help="Base commit (default: fix^).")] = None,
    at: Annotated[
        datetime | None,
        typer.Option(
            help="T (default: the ticket's creation or the first commit, the earlier; never "
            "before the base's history ends)."
        ),
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
    requires: Annotated[
        list[str] | None,
        typer.Option(
            help="A test requirement (repeatable; 'pytest', or '-r tests/requirements.txt'): the "
            "interpreter, registry and setup are then derived as of T (pytest, which runs the "
            "hidden tests, is added as of T when none of them names it)."
        ),
    ] = None,
    extra: Annotated[
        list[str] | None,
        typer.Option(help="One of the project's extras to install, e.g. tests (repeatable)."),
    ] = None,
    python: Annotated[
        str | None,
        typer.Option(help="The interpreter (3.9, 3.11, 3.13); default: as of T, requires-python."),
    ] = None,
    index_url: Annotated[
        str | None,
        typer.Option(help="Index to record the registry from; default: pip's (PIP_INDEX_URL)."),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            help="The public repository's URL: the case records its provenance and ships its "
            "license file (which must be a recognised permissive license, or --license)."
        ),
    ] = None,
    license_id: Annotated[
        str | None,
        typer.Option("--license", help="The repository's SPDX license id (with --upstream)."),
    ] = None,
    ticket_source: Annotated[
        str,
        typer.Option(help="Where the ticket's text comes from (recorded with --upstream)."),
    ] = "the issue the fix closed",
    extra_tests: Annotated[
        Path | None,
        typer.Option(
            metavar="PATCH",
            help="Tests the team wrote so the case rejects wrong fixes its own tests let "
            "through (a weak case's survivors): a patch against the fix commit changing test "
            "files only, added to the hidden tests and named in the case file.",
            show_default=False,
        ),
    ] = None,
    repeats: Annotated[int, typer.Option(help="Test runs before and after the gold (>= 3).")] = 3,
    runtime: Annotated[str, typer.Option(help="Container runtime.")] = "docker",
    output: Annotated[Path, typer.Option("--out", help="Where the case directory goes.")] = Path(
        "cases"
    ),
) -> None:
    """A case from a fix commit: hidden tests = its test changes (and any --extra-tests),
    gold = the rest, test lists measured before and after the gold in the environment
    image."""
    import dataclasses
    import tempfile

    from replay.capture.github import GitHubReader
    from replay.casebuild.create import FixSource, create_case
    from replay.casebuild.environment import Wanted
    from replay.casebuild.frompr import LinearTicket, SlackThread, fix_source_from_pr
    from replay.cli.progress import PhaseDisplay
    from replay.runtime import get_runtime

    if from_file is not None:
        if case_id is not None or fix is not None or pr is not None or extra_tests is not None:
            raise InputError(
                from_file,
                "--from takes the fixes from the file: no CASE_ID, --fix, --pr or --extra-tests"
                " (a fix's extra_tests is a field of its entry)",
            )
        _create_many(
            ctx, from_file, repo, name, output, runtime, repeats, calibration_runs, jobs, strength
        )
        return
    if case_id is None:
        raise InputError(Path("CASE_ID"), "give the new case's id, or --from FILE")
    if pr is None and (repo is None or fix is None or name is None or not title):
        raise InputError(Path(case_id), "give --pr, or --repo, --fix, --name and --title")
    if pr is None and (linear_issue or slack_thread):
        raise InputError(Path(case_id), "--linear-issue and --slack-thread need --pr")
    linear = slack = None
    if linear_issue:
        linear = LinearTicket(linear_issue, _env("LINEAR_API_KEY"), linear_url)
    if slack_thread:
        channel, _, ts = slack_thread.partition("/")
        if not channel or not re.fullmatch(r"\d+\.\d+", ts):
            raise InputError(Path(slack_thread), "--slack-thread is CHANNEL/TS", "slack-thread")
        slack = SlackThread(channel, ts, _env("SLACK_TOKEN"), slack_url)
    src = FixSource(
        repo=repo or Path("."),
        fix=fix or "HEAD",
        repo_name=name or "",
        ticket_title=title,
        ticket_body=body,
        issue_number=issue,
        ticket_created=_aware(ticket_created, "ticket-created"),
        base=base,
        at=_aware(at, "at"),
        setup=list(setup or []),
        command=command,
        registry_index=registry_index,
        wanted=Wanted(tuple(requires or ()), tuple(extra or ()), python, index_url),
        upstream=upstream,
        license=license_id,
        ticket_source=ticket_source,
        extra_tests=extra_tests,
    )
    rt = get_runtime(runtime)
    with tempfile.TemporaryDirectory(prefix="replay-pr-") as tmp:
        try:
            if pr is not None:
                repo_name, _, number = pr.partition("#")
                token = os.environ.get("GITHUB_TOKEN", "")
                reader = GitHubReader(github_api, token)
                try:
                    found = fix_source_from_pr(
                        reader,
                        github_git,
                        token,
                        repo_name,
                        int(number),
                        Path(tmp) / "clone",
                        at=src.at,
                        linear=linear,
                        slack=slack,
                    )
                finally:
                    reader.close()
                src = dataclasses.replace(
                    found,
                    setup=src.setup,
                    command=src.command,
                    registry_index=src.registry_index,
                    wanted=src.wanted,
                    upstream=src.upstream,
                    license=src.license,
                    ticket_source=src.ticket_source,
                    extra_tests=src.extra_tests,
                )
            with PhaseDisplay(out) as display:
                path, lists = create_case(
                    case_id,
                    src,
                    output / case_id,
                    rt,
                    repeats,
                    say=_note,
                    progress=lambda what: display(case_id, None, what),
                )
        finally:
            rt.close()
    out.print(
        f"wrote {path}: {len(lists.fail_to_pass)} FAIL_TO_PASS, {len(lists.pass_to_pass)} "
        f"PASS_TO_PASS, {len(lists.flaky)} flaky dropped"
    )
    for effect in src.effects:
        out.print(f"proposed side effect {effect.id}: {effect.description}")


def _create_many(
    ctx: typer.Context,
    path: Path,
    repo: Path | None,
    name: str | None,
    output: Path,
    runtime: str,
    repeats: int,
    calibration_runs: int,
    jobs: int | None,
    strength: bool = True,
) -> None:
    from replay.casebuild.many import Settings, build_many, default_jobs, read_fix_list, summary

    fixes = read_fix_list(path, repo, name)
    db = ctx.obj.db if ctx.obj else None
    settings = Settings(output, runtime, repeats, calibration_runs, db, strength=strength)
    outcomes = build_many(
        fixes, settings, jobs or default_jobs(), say=lambda s: out.print(s, markup=False)
    )
    s = summary(outcomes)
    out.print(
        f"{s['calibrated']} of {s['fixes']} calibrated, {s['made']} made uncalibrated, "
        f"{s['stopped']} stopped; median {s['median_seconds']} s per fix: {output / 'yield.md'}"
    )
    if s["stopped"]:
        raise typer.Exit(1)


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


# Building cases drives the services' real clients, an extra that an environment such as the
# gateway's cannot have (see pyproject): there these are stand-ins that say so.
if (_missing := clients_missing()) is None:
    from replay.cli.case_mine import mine

    app.command("create")(create)
    app.command("import-swebench")(import_swebench)
    app.command("mine")(mine)
else:
    app.command("create", context_settings=LOOSE)(needs_clients(_missing))
    app.command("import-swebench", context_settings=LOOSE)(needs_clients(_missing))
    app.command("mine", context_settings=LOOSE)(needs_clients(_missing))


@app.command("validate")
def case_validate(
    paths: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
) -> None:
    """Check a case: its format, its snapshot, its gold patch and its hidden tests."""
    from replay.validate import validate_case

    for path in paths:
        result = validate_case(path)
        out.print(f"[bold]{result.case.id}[/] ({path})")
        for check in result.checks:
            out.print(f"  ok  {check}")
        for warning in result.warnings:
            out.print(f"  warn  {warning}", markup=False)


@app.command("calibrate")
def case_calibrate(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    runs: Annotated[int, typer.Option(min=1, help="Runs of gold and of idle (K).")] = 3,
) -> None:
    """Gold must pass and idle must fail, K times each; a case that does not is left out."""
    import time

    from replay.base.case import load_case
    from replay.cli.progress import PhaseDisplay
    from replay.run.calibrate import calibrate
    from replay.run.runner import RunOptions

    bad = []
    rows = []
    for n, case in enumerate(cases, 1):
        started = time.monotonic()
        with PhaseDisplay(out) as display:
            options = RunOptions(db=ctx.obj.db, progress=display)
            result = calibrate(case, options, runs=runs)
        seconds = time.monotonic() - started
        gold = sum(r.outcome == Outcome.PASS for r in result.gold)
        idle = sum(r.outcome == Outcome.MODEL_FAIL for r in result.idle)
        verdict = "calibrated" if result.calibrated else "NOT CALIBRATED (left out of results)"
        counter = f"[{n}/{len(cases)}] " if len(cases) > 1 else ""
        out.print(
            f"{counter}{result.case_id}: gold passed {gold}/{runs}, idle failed {idle}/{runs}: "
            f"{verdict} ({seconds:.0f} s)",
            markup=False,
        )
        loaded = load_case(case)
        origin = loaded.provenance
        rows.append(
            (
                result.case_id,
                origin.repository.removeprefix("https://github.com/") if origin else "",
                loaded.at.date().isoformat(),
                f"{gold}/{runs}",
                f"{idle}/{runs}",
                "calibrated" if result.calibrated else "not calibrated",
                f"{seconds:.0f}",
            )
        )
        if not result.calibrated:
            bad.append(result.case_id)
            for line in result.explain():
                out.print(f"  {line}", markup=False)
    if len(cases) > 1:
        out.print(calibration_table(rows), markup=False)
    if bad:
        raise typer.Exit(1)


def calibration_table(rows: Sequence[tuple[str, ...]]) -> str:
    """The yield of a calibration over many cases, as a Markdown table and a summary line."""
    head = ("case", "repository", "T", "gold passed", "idle failed", "verdict", "seconds")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    good = sum(row[5] == "calibrated" for row in rows)
    repos = len({row[1] for row in rows if row[1]})
    lines.append(
        f"\n{good} of {len(rows)} calibrated ({repos} repositories); "
        f"{sum(float(row[6]) for row in rows):.0f} s in all"
    )
    return "\n".join(lines)


@app.command("audit")
def case_audit(
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    images: Annotated[
        bool,
        typer.Option(
            help="Also search the case's environment image and the harness images built on it."
        ),
    ] = True,
    fresh: Annotated[
        bool, typer.Option(help="Ignore the snapshot audit's cached verdict.")
    ] = False,
    runtime: Annotated[str, typer.Option(help="Container runtime.")] = "docker",
) -> None:
    """Search each case's snapshot and images for its answer; any leak fails.

    The images are the case's environment image and the harness images built on it, when
    built here. A hit the case's audit.accepted declares is listed with its reason, not
    failed. On a leak the base image also carries, the other base images built here are
    searched and one without it is proposed.
    """
    from replay.base.case import load_case, read_patch
    from replay.images.audit import (
        audit_images,
        case_project_names,
        fix_contexts,
        propose_base_image,
    )
    from replay.snapshot import load_snapshot
    from replay.snapshot.audit import audit, audit_cached

    failed = False
    rt = None
    try:
        for path in cases:
            case = load_case(path)
            out.print(f"[bold]{case.id}[/] ({path})")
            found = (
                audit(load_snapshot(case.snapshot), case)
                if fresh
                else audit_cached(case.snapshot, case)
            )
            for f in found:
                out.print(f"  LEAK  snapshot {f.location}: {f.problem}", markup=False)
            if not found:
                out.print(f"  clean: snapshot {case.snapshot}", markup=False)
            failed = failed or bool(found)
            if not images:
                out.print("  images: not searched (--no-images)")
                continue
            if rt is None:
                from replay.runtime import get_runtime

                rt = get_runtime(runtime)
            result = audit_images(case, rt)
            for hit in result.hits:
                if hit.leak:
                    out.print(f"  LEAK  {hit}", markup=False)
                else:
                    out.print(f"  accepted  {hit} ({hit.accepted})", markup=False)
            for note in result.notes:
                out.print(f"  note: {note}", markup=False)
            if result.images and not result.leaks:
                out.print(f"  clean: images {', '.join(result.images)}", markup=False)
            base = case.environment.base_image
            if result.leaks:
                failed = True
                proposal = propose_base_image(
                    rt,
                    [h.marker for h in result.leaks],
                    base,
                    audit=case.audit,
                    contexts=fix_contexts(read_patch(case.gold.patch)),
                    names=case_project_names(case),
                )
                if base in proposal.scans and not any(h.leak for h in proposal.scans[base]):
                    out.print(
                        f"  {base} itself is clean: the leak comes from the setup or a harness"
                    )
                elif proposal.proposed:
                    out.print(f"  proposed base image without it: {proposal.proposed}")
                else:
                    searched = ", ".join(proposal.scans) or "none"
                    missing = ", ".join(proposal.missing) or "none"
                    out.print(
                        f"  no base image here is free of it (searched {searched}; "
                        f"not built here: {missing})"
                    )
    finally:
        if rt is not None:
            rt.close()
    if failed:
        raise typer.Exit(1)


# ----------------------------------------------------------------------------- the set alive


@app.command("retire")
def case_retire(
    case: Annotated[Path, typer.Argument(help="The case file (case.yaml).")],
    reason: Annotated[str, typer.Option(help="Why the case no longer counts (required).")],
) -> None:
    """Retire a case: run, compare and batch skip it (saying why), reports list it as left
    out. Recorded in retired.yaml beside the case directories, not in the case file (its
    digest, calibrations and runs stay as they were)."""
    from replay.cases.retired import retire

    case_id, registry = retire(case, reason)
    out.print(
        f"retired {case_id}: {' '.join(reason.split())} (recorded in {registry})", markup=False
    )


@app.command("stale")
def case_stale(
    cases: Annotated[
        list[Path] | None,
        typer.Argument(help="Case files (default: cases/*/case.yaml).", show_default=False),
    ] = None,
    retire_them: Annotated[
        bool, typer.Option("--retire", help="Retire each stale case, its reasons as the reason.")
    ] = False,
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root (default: $REPLAY_BLOBS or snapshots/blobs)."),
    ] = None,
) -> None:
    """The staleness rule: is each case's base image still buildable, is every file its
    snapshot froze still in the blob store, does the event log still record every kind its
    rules name? Prints the stale cases with their reasons; exit 1 if one is left unretired.
    Says too whether each case's strength was measured at its current version (not a reason
    to retire it)."""
    from replay.base.case import read_case
    from replay.cases.retired import retire
    from replay.cases.stale import check_case
    from replay.strength.record import strength_line

    files = cases or sorted(Path("cases").glob("*/case.yaml"))
    if not files:
        raise InputError(Path("cases"), "no case files given and none under ./cases")
    left = 0
    for path in files:
        found = check_case(path, blobs)
        # Strength is said, not counted: a case never measured is not broken, only unknown.
        strength = [strength_line(read_case(path))] if found.loadable else []
        if not found.stale:
            out.print(f"ok     {found.case_id} ({path})", markup=False)
            for line in strength:
                out.print(f"  {line}", markup=False)
            continue
        out.print(f"STALE  {found.case_id} ({path})", markup=False)
        for reason in [*found.reasons, *strength]:
            out.print(f"  {reason}", markup=False)
        if retire_them:
            _, registry = retire(path, "stale: " + "; ".join(found.reasons))
            out.print(f"  retired (recorded in {registry})", markup=False)
        else:
            left += 1
    if left:
        raise typer.Exit(1)


# ----------------------------------------------------------------------------- strength


@app.command("strength")
def case_strength(
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    max_mutants: Annotated[
        int, typer.Option(min=1, help="At most this many mutants graded per case.")
    ] = 20,
    seed: Annotated[int, typer.Option(help="The seed mutants are drawn with.")] = 0,
    threshold: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="A strong case rejects at least this fraction."),
    ] = 0.9,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=1.0,
            help="Seconds each wrong fix's hidden tests may take (default: 10 times the gold "
            "grading's, at least 120).",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the measurements here, as JSON.")
    ] = None,
    runtime: Annotated[str, typer.Option(help="Container runtime.")] = "docker",
    record: Annotated[
        bool,
        typer.Option(
            help="Keep each measurement beside its case file (strength.json, with the case "
            "digest), where case stale reads it.",
        ),
    ] = False,
    accept: Annotated[
        str | None,
        typer.Option(
            metavar="REASON",
            help="Measure nothing: keep each weak case as it is, with this reason, in the "
            "strength recorded at its current version (compare --min-strength then keeps it "
            "and says why).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """How many plausible wrong fixes each case's hidden tests reject: mutants of the gold
    patch's lines, partial fixes, overfits to the ticket's examples, each graded exactly as
    a run's diff is. Prints the strength, every wrong fix's verdict and each survivor's
    change from the gold patch; a weak case says how to strengthen or accept it."""
    import json

    from replay.base.case import read_case
    from replay.cli.progress import PhaseDisplay
    from replay.strength import StrengthOptions, measure_strength, report_lines
    from replay.strength.record import accept_strength, record_strength, strengthen_hint

    loaded = [read_case(path) for path in cases]  # every file checked before any grading
    if accept is not None:
        for case in loaded:  # each case checked before any is changed
            accept_strength(case, accept, dry_run=True)
        for case in loaded:
            accepted = accept_strength(case, accept)
            out.print(f"{case.id}: {accepted.label()}: {accept}", markup=False)
        return
    if json_out is not None and not json_out.parent.is_dir():
        raise InputError(json_out, "its directory does not exist", "--json")
    measured = []
    for n, case in enumerate(loaded, 1):
        with PhaseDisplay(out) as display:

            def progress(case_id: str, step: int, total: int, what: str) -> None:
                display.counter = (step, total)
                display(case_id, None, what)

            options = StrengthOptions(
                max_mutants=max_mutants,
                seed=seed,
                threshold=threshold,
                runtime=runtime,
                timeout=timeout,
                progress=progress,
            )
            result = measure_strength(case, options)
        measured.append(result)
        counter = f"[{n}/{len(loaded)}] " if len(loaded) > 1 else ""
        for line in report_lines(result, counter):
            out.print(line, markup=False)
        if not result.strong:
            out.print(f"  {strengthen_hint(case)}", markup=False)
        if record:
            out.print(f"recorded: {record_strength(case, result)}", markup=False)
    if json_out is not None:
        json_out.write_text(json.dumps([m.dump() for m in measured], indent=2) + "\n")
        out.print(f"written: {json_out}", markup=False)
