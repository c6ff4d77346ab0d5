"""``replay contract`` as a user runs it: the installed entry point, from the repository root,
with no ``PYTHONPATH`` (``contract_tests`` is a directory of the checkout, not a package)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from graphql import GraphQLObjectType

from replay.cli.contract import known_gaps
from replay.contract.runner import RECORDINGS
from replay.contract.schema import graphql_schema

ROOT = RECORDINGS.parents[1]
REPLAY = Path(sys.executable).with_name("replay")
"""The console script pip installed beside this interpreter (``.venv/bin/replay``)."""


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and "CONTRACT" not in k}
    return subprocess.run(
        [str(REPLAY), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_run_and_record_work_without_pythonpath(tmp_path: Path) -> None:
    assert REPLAY.is_file(), f"no console script at {REPLAY}: pip install -e ."
    ran = replay(
        "contract", "run", "--service", "all", "--target", "fake", "--list", "--no-mutants"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   github/issue_history" in ran.stdout and "ok   linear/errors" in ran.stdout
    from replay.contract.evidence.families import FAMILIES

    started = re.findall(rf"^family (\d+)/{len(FAMILIES)} [\w_]+\.\.\.$", ran.stderr, re.M)
    assert started == [str(i) for i in range(1, len(FAMILIES) + 1)], ran.stderr
    _holds_the_evidence_report(ran.stdout)
    recorded = replay(
        "contract", "record", "--stand-in", "--service", "slack", "--recordings", str(tmp_path)
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (tmp_path / "slack" / "errors.json").is_file()


def test_run_prints_the_mutation_figure() -> None:
    """Issue 36: with mutants on (the default), ``replay contract run`` plants faults in
    copies of the fakes and prints how many the outside evidence catches, after the
    per-service blocks, with one progress line per mutant on stderr. ``--mutant`` plants
    only the one named (every mutant is planted by contract_tests/test_mutation.py)."""
    from replay.contract.mutation import MUTANTS

    name = next(m.name for m in MUTANTS if m.service == "slack")
    ran = replay("contract", "run", "--service", "slack", "--mutant", name)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    figure = re.search(
        r"^mutants caught by evidence from outside: (\d+)/1 \(slack (\d+)/1\)$", ran.stdout, re.M
    )
    assert figure and figure.group(1) == figure.group(2) == "1", ran.stdout
    assert ran.stdout.index("== slack") < figure.start()
    progress = re.findall(r"^mutant \d+/1 slack ([\w-]+) \(.+\): ", ran.stderr, re.M)
    assert progress == [name], ran.stderr
    assert "== github" not in ran.stdout


def test_a_mutant_name_that_is_none_of_the_services_is_refused() -> None:
    ran = replay("contract", "run", "--service", "slack", "--mutant", "per-page-ignord")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    [line] = ran.stderr.splitlines()
    assert line.startswith("error: --mutant: no mutant 'per-page-ignord' of slack; one of: ")


def test_known_gaps_are_every_services_list() -> None:
    gaps = known_gaps()
    assert {g.service for g in gaps} == {"github", "linear", "slack"}
    assert all(g.why for g in gaps)


def _holds_the_evidence_report(out: str) -> None:
    """What issue 15 asks ``replay contract run`` to print: per service the evidence with
    N/M and its gaps, the regression snapshots apart; at least 12 octokit scenarios; every
    field the GitHub and Linear fakes serve, listed with its result (``--list``)."""
    headlines = [line for line in out.splitlines() if not line.startswith(" ")]
    for family in (
        "github real interactions: ",
        "github schema conformance: ",
        "github response conformance: ",
        "linear schema conformance: ",
        "linear response conformance: ",
        "linear SDK documents: ",
        "slack response conformance: ",
        "slack error codes: ",
        "github pagination: ",
        "linear pagination: ",
        "slack pagination: ",
        "github read your writes: ",
        "linear read your writes: ",
        "slack read your writes: ",
        "github errors: ",
        "linear errors: ",
        "slack errors: ",
        "github invariants under concurrency: ",
        "linear invariants under concurrency: ",
        "slack invariants under concurrency: ",
        "github gh documents: ",
    ):
        assert any(
            re.match(rf"{family}\d+/\d+ \(\d+ known gaps, 0 failures\)", h) for h in headlines
        ), family
    for service in ("github", "slack", "linear"):
        assert f"== {service}" in headlines
    provenance = [h for h in headlines if h.startswith("self recordings")]
    assert len(provenance) == 3 and all("not evidence" in h for h in provenance)
    checked = {m.group(2) for m in re.finditer(r"^  (ok  |gap |FAIL) (.+?)(?::|$)", out, re.M)}
    octokit = {s.split(" #")[0] for s in checked if re.match(r"^[a-z-]+ #\d+ [A-Z]+ /", s)}
    assert len(octokit) >= 12, octokit
    for service in ("github", "linear"):
        schema = graphql_schema(service)
        for name, kind in schema.type_map.items():
            if name.startswith("__") or not isinstance(kind, GraphQLObjectType):
                continue
            for field in kind.fields:
                assert f"{name}.{field}" in checked, (service, f"{name}.{field}")


def test_the_command_lines_defaults_are_the_contract_packages_paths() -> None:
    """``replay contract`` names its defaults without importing the contract package (which
    loads the fakes, FastAPI and the clients), so that ``replay --help`` stays fast: they
    must be the package's own."""
    from replay.cli import contract as cli
    from replay.contract.coverage import COVERAGE_FILE
    from replay.contract.runner import RECORDINGS
    from replay.contract.targets import DEFAULT_SNAPSHOT

    assert (cli.RECORDINGS, cli.COVERAGE_FILE, cli.DEFAULT_SNAPSHOT) == (
        RECORDINGS,
        COVERAGE_FILE,
        DEFAULT_SNAPSHOT,
    )


def test_help_does_not_load_what_the_commands_drive() -> None:
    """Issue 35: ``replay --help`` took 2 s (8 s under load): assembling the command line
    imported the contract package, case building and the formats' models. It now imports
    none of them (``make bench`` times it: the ``cli`` row)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from replay.cli import app\n"
        "heavy = ['fastapi', 'sqlalchemy', 'githubkit', 'replay.contract', 'replay.casebuild',\n"
        "         'replay.base.case', 'pydantic', 'docker', 'fakes']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
