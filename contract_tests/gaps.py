"""The known gaps of the contract tests: differences from the recordings, or from the
published schemas, accepted on purpose, each with why (fnmatch patterns over difference
paths, as :class:`~replay.contract.recording.Gap` matches them).

Data only, importing nothing but ``Gap``: ``replay contract run``/``record`` read this file by
path (``replay.cli.contract.known_gaps``), without pytest or this directory on ``sys.path``;
each ``test_<service>.py`` passes its service's list to the checks and prints it.
"""

from __future__ import annotations

from replay.contract.recording import Gap

GITHUB: list[Gap] = [
    Gap(
        service="github",
        scenario="*",
        where="*.schema $.status: not a field of ValidationError",
        why="GitHub's OpenAPI description has no `status` in ValidationError; the real API "
        "sends it in 422 bodies (as in BasicError), so the fake does too.",
    ),
    Gap(
        service="github",
        scenario="errors",
        where="rate limit.schema $.rate: not a field of RateLimitOverview",
        why="githubkit's RateLimitOverview omits the deprecated top-level `rate` that GET "
        "/rate_limit still returns on the real API.",
    ),
    *(
        Gap(
            service="github",
            scenario="issue_history",
            where=f"{step}.schema $?[{items}]*",
            why="githubkit's union for GET .../issues/{n}/events (GitHub's OpenAPI "
            "`issue-event-for-issue`) has no state-change member, yet the API lists `closed` "
            "and `reopened` events there (with `state_reason`, as the timeline's "
            "StateChangeIssueEvent describes them): items 0 and 1 of page 2, 2 and 3 of the "
            "full list. The labeled and renamed events are checked.",
        )
        for step, items in (("list events page 2", "01"), ("list all events", "23"))
    ),
    Gap(
        service="github",
        scenario="issue_history",
        where="list repository events.schema $*.state_reason: not a field of IssueEvent",
        why="GitHub's OpenAPI `issue-event` (githubkit's IssueEvent, a closed model) has no "
        "`state_reason`; the API sends it on `closed` and `reopened` events, as the timeline's "
        "StateChangeIssueEvent has it.",
    ),
]

LINEAR: list[Gap] = [
    Gap(
        service="linear",
        scenario="errors",
        where="bad key.*",
        why="deliberate: the fake takes any well-formed `lin_api_` key as the viewer (agents "
        "hold placeholder keys), where Linear answers an `authentication error`.",
    ),
]

SLACK: list[Gap] = [
    Gap(
        service="slack",
        scenario="errors",
        where="bad token.*",
        why="deliberate: the fake takes any well-formed xoxb-/xoxp- token as the agent's bot "
        "(agents hold placeholder tokens), where Slack answers `invalid_auth`; recorded "
        "against a stand-in the step agrees, against the real API it will not.",
    ),
]

GAPS: list[Gap] = [*GITHUB, *LINEAR, *SLACK]
"""Every service's gaps: what ``replay contract`` applies."""
