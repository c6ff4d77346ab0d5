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
        why="unverified: GitHub's OpenAPI description has no `status` in ValidationError; "
        "the fake sends it in 422 bodies as in BasicError, as the API is remembered to now. "
        "The one vendored 422 (octokit's `errors/normalized-fixture.json`, recorded before "
        "the field came) has no `status`.",
    ),
    Gap(
        service="github",
        scenario="errors",
        where="rate limit.schema $.rate: not a field of RateLimitOverview",
        why="unverified: githubkit's RateLimitOverview omits the deprecated top-level `rate` "
        "that GET /rate_limit is remembered to still return on the real API; no vendored "
        "recording holds a /rate_limit answer.",
    ),
    *(
        Gap(
            service="github",
            scenario="issue_history",
            where=f"{step}.schema $?[{items}]*",
            why="unverified: githubkit's union for GET .../issues/{n}/events (GitHub's "
            "OpenAPI `issue-event-for-issue`) has no state-change member, yet the API is "
            "remembered to list `closed` and `reopened` events there (with `state_reason`, "
            "as the timeline's StateChangeIssueEvent describes them; no vendored recording "
            "lists an issue's events): items 0 and 1 of page 2, 2 and 3 of the full list. "
            "The labeled and renamed events are checked.",
        )
        for step, items in (("list events page 2", "01"), ("list all events", "23"))
    ),
    Gap(
        service="github",
        scenario="issue_history",
        where="list repository events.schema $*.state_reason: not a field of IssueEvent",
        why="unverified: GitHub's OpenAPI `issue-event` (githubkit's IssueEvent, a closed "
        "model) has no `state_reason`; the API is remembered to send it on `closed` and "
        "`reopened` events, as the timeline's StateChangeIssueEvent has it (no vendored "
        "recording lists a repository's events).",
    ),
]

LINEAR: list[Gap] = [
    Gap(
        service="linear",
        scenario="errors",
        where="bad key.*",
        why="unverified: Linear's answer to a bad key (an `authentication error`, as "
        "remembered; no vendored file describes Linear's error envelope). Deliberate: the "
        "fake takes any well-formed `lin_api_` key as the viewer (agents hold placeholder "
        "keys).",
    ),
]

SLACK: list[Gap] = [
    Gap(
        service="slack",
        scenario="errors",
        where="bad token.*",
        why="deliberate: the fake takes any well-formed xoxb-/xoxp- token as the agent's bot "
        "(agents hold placeholder tokens), where Slack answers `invalid_auth` (an error its "
        "spec, `web-api/slack_web_openapi_v2_without_examples.json`, lists for its methods); "
        "recorded against a stand-in the step agrees, against the real API it will not.",
    ),
]

GAPS: list[Gap] = [*GITHUB, *LINEAR, *SLACK]
"""Every service's gaps: what ``replay contract`` applies."""
