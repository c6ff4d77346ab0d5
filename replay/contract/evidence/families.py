"""Every family of evidence checks, in the order ``replay contract run`` prints them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from replay.contract.evidence import (
    Report,
    concurrency,
    errors,
    gh_documents,
    graphql_schemas,
    linear_documents,
    octokit,
    pagination,
    slack_samples,
    slack_spec,
    writes,
)

FAMILIES: tuple[Callable[[], list[Report]], ...] = (
    octokit.reports,
    graphql_schemas.reports,
    slack_spec.reports,
    slack_samples.reports,
    pagination.reports,
    writes.reports,
    errors.reports,
    concurrency.reports,
    gh_documents.reports,
    linear_documents.reports,
)
"""Each family's ``reports``."""


def collect(services: Iterable[str]) -> list[Report]:
    """The reports of every family for ``services``."""
    wanted = set(services)
    return [r for family in FAMILIES for r in family() if r.service in wanted]
