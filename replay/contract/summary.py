"""What ``replay contract run`` prints per service: the evidence first (real interactions
reproduced, conformance to the vendors' published schemas, each with its known gaps), then
the recordings, live ones (evidence) apart from self-recorded regression snapshots (never
called evidence)."""

from __future__ import annotations

from replay.contract.evidence import Report
from replay.contract.suite import Outcome


def service_lines(
    service: str, outcomes: list[Outcome], reports: list[Report], every: bool = False
) -> list[str]:
    """The block of one service: a headline per evidence report with its gaps and failures
    (with ``every``, also each check that held), the OpenAPI check of the scenarios' REST
    bodies, then the recordings by provenance."""
    mine = [o for o in outcomes if o.scenario.service == service]
    out = [f"== {service}"]
    if not any(r.service == service and r.family == "real interactions" for r in reports):
        out.append(
            f"{service} real interactions: none (no recording of the real service's traffic "
            "is published or committed; a live recording would count)"
        )
    for report in reports:
        if report.service == service:
            out += report.lines(every)
    ran = [o for o in mine if o.run is not None]
    if service == "github":
        bodies = sum(o.rest_checked for o in ran)
        bad = sum(1 for o in ran for d in o.schema if ".schema $" in d.where)
        out.append(
            f"github REST bodies against GitHub's OpenAPI description (githubkit's models): "
            f"{bodies} bodies from the scenarios, {bad} problems beyond known gaps"
        )
    for kind, label in (
        ("live", "live recordings (the vendor's API, evidence)"),
        ("self", "self recordings (the fake's regression snapshots, not evidence)"),
    ):
        group = [o for o in ran if o.recorded_against == kind]
        if group:
            same = sum(1 for o in group if not o.differences)
            out.append(f"{label}: {same}/{len(group)} scenarios reproduced")
    for o in mine:
        out += ["  " + line for line in o.lines()]
    return out
