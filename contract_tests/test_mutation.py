"""Mutation testing of the fakes (issue 36, point 3): each kind of planted fault is caught
by evidence from outside the project (but for :data:`NOT_CAUGHT`), and the figure counts
nothing else.

One run of every mutant is shared by the module (the families on the unmodified fakes run
once, whole, and are handed in, as ``replay contract run`` does); each test then reads its
kind. A mutant counts as caught only through a check that fails with it and not without, so
each test would fail if the check that catches its mutants were taken away.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from fakes.core.server import FAKES, ASGIApp
from replay.contract import suite
from replay.contract.evidence.families import FAMILIES
from replay.contract.mutation import (
    KINDS,
    MUTANTS,
    SERVICES,
    Answer,
    FamilyRun,
    Kind,
    Mutant,
    MutantResult,
    MutationReport,
    family_name,
    planted,
    rewriting,
    run_family,
    run_mutants,
)
from replay.contract.scenarios import all_scenarios
from replay.contract.targets import fake_target, serve_world


@pytest.fixture(scope="module")
def unmodified() -> list[FamilyRun]:
    return [run_family(family) for family in FAMILIES]


@pytest.fixture(scope="module")
def report(unmodified: list[FamilyRun]) -> MutationReport:
    return run_mutants(SERVICES, unmodified=unmodified)


NOT_CAUGHT = {
    ("linear", "errors-without-type"): "no vendored evidence describes Linear's error "
    "envelope: the errors family says so (its `linear_envelope` check) and holds Linear's "
    "errors to message, locations and path only",
}
"""Mutants the evidence from outside does not catch, and why. ``replay contract run`` prints
each; one that becomes caught (evidence added) fails here, so the list cannot go stale."""


def caught(report: MutationReport, kind: Kind) -> list[MutantResult]:
    """The results of ``kind``'s mutants, each asserted caught by a check of an outside
    evidence family that held on the unmodified fake (those of :data:`NOT_CAUGHT` asserted
    not caught)."""
    mine = [r for r in report.results if r.mutant.kind == kind]
    assert mine, f"no mutant of kind {kind!r}"
    names = {family_name(f) for f in FAMILIES}
    for result in mine:
        if (result.mutant.service, result.mutant.name) in NOT_CAUGHT:
            assert not result.caught, f"{result.line()}: take it out of NOT_CAUGHT"
            continue
        assert result.caught, result.line()
        for catch in result.caught_by:
            assert catch.family in names
            assert catch.failures and not catch.stopped, catch.describe()
    return [r for r in mine if r.caught]


def test_the_mutants_cover_every_kind_and_service() -> None:
    assert len(MUTANTS) >= 14
    assert {m.kind for m in MUTANTS} == set(KINDS) and len(KINDS) >= 8
    assert {m.service for m in MUTANTS} == set(SERVICES)
    assert len({(m.service, m.name) for m in MUTANTS}) == len(MUTANTS)


def test_an_ignored_argument_is_caught(report: MutationReport) -> None:
    found = caught(report, "argument ignored")
    assert {r.mutant.service for r in found} == set(SERVICES)


def test_pagination_that_ends_early_is_caught(report: MutationReport) -> None:
    found = caught(report, "pagination ends early")
    assert {r.mutant.service for r in found} == set(SERVICES)


def test_pagination_that_never_ends_is_caught(report: MutationReport) -> None:
    found = caught(report, "pagination never ends")
    assert {r.mutant.service for r in found} == set(SERVICES)


def test_a_wrong_error_status_is_caught(report: MutationReport) -> None:
    caught(report, "wrong error status")


def test_a_wrong_error_envelope_is_caught(report: MutationReport) -> None:
    found = caught(report, "wrong error envelope")
    assert {r.mutant.service for r in found} == {"github", "slack"}


def test_a_write_that_does_not_show_in_a_read_is_caught(report: MutationReport) -> None:
    caught(report, "write not read")


def test_a_swapped_success_status_is_caught(report: MutationReport) -> None:
    caught(report, "status swapped")


def test_a_dropped_field_is_caught(report: MutationReport) -> None:
    caught(report, "field dropped")


def test_a_wrong_value_is_caught(report: MutationReport) -> None:
    caught(report, "wrong value")


def test_the_figure(report: MutationReport) -> None:
    def count(service: str) -> str:
        mine = [m for m in MUTANTS if m.service == service]
        missed = [m for m in mine if (service, m.name) in NOT_CAUGHT]
        return f"{service} {len(mine) - len(missed)}/{len(mine)}"

    total = len(MUTANTS)
    assert report.figure() == (
        f"mutants caught by evidence from outside: {total - len(NOT_CAUGHT)}/{total} "
        f"({count('github')}, {count('linear')}, {count('slack')})"
    )
    uncaught = report.lines()[1:]
    assert len(uncaught) == len(NOT_CAUGHT)
    for (service, name), line in zip(sorted(NOT_CAUGHT), uncaught, strict=True):
        assert line.startswith(f"  {service} {name} (") and "NOT caught" in line


def _enterprise(a: Answer) -> None:
    if a.path.endswith("/auth.test") and isinstance(a.body, dict):
        a.body["is_enterprise_install"] = True


ENTERPRISE = Mutant(
    "says-enterprise",
    "wrong value",
    "slack",
    "auth.test says the workspace is an Enterprise Grid install",
    rewriting(_enterprise),
)
"""A fault only the fake's own recordings see: ``is_enterprise_install`` is a boolean either
way, which is all Slack's spec says of it."""


def test_only_outside_evidence_counts(
    unmodified: list[FamilyRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault the fake's own recordings catch and no outside evidence does is reported
    uncaught, by name, with the comparison with the recordings made unusable: the figure never
    consults them."""
    with planted(ENTERPRISE), serve_world() as served:
        target = fake_target(served)
        seen = [suite.check(target, s, gaps=[]) for s in all_scenarios("slack")]
    assert any("is_enterprise_install" in d.where for o in seen for d in o.differences)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the mutation figure consulted the fake's own recordings")

    monkeypatch.setattr(suite, "check", refuse)
    monkeypatch.setattr(suite, "compare", refuse)
    alone = run_mutants(["slack"], [ENTERPRISE], every_family=True, unmodified=unmodified)
    assert alone.figure() == "mutants caught by evidence from outside: 0/1 (slack 0/1)"
    [line] = alone.lines()[1:]
    assert "slack says-enterprise" in line and "NOT caught" in line
    slack = {
        family_name(run.family) for run in unmodified for r in run.reports if r.service == "slack"
    }
    assert set(alone.results[0].tried) == slack


def test_a_mutant_leaves_the_fake_as_it_was() -> None:
    module: Any = importlib.import_module(FAKES["github"])
    before = module.install
    with planted(MUTANTS[0]):
        assert module.install is not before
    assert module.install is before

    boom = Mutant("boom", "status swapped", "github", "planting fails", _fails)
    with pytest.raises(RuntimeError), planted(boom), serve_world():
        pass
    assert module.install is before


def _fails(backend: Any, app: ASGIApp) -> ASGIApp:
    raise RuntimeError("planted")
