"""The fields of Linear's schema this fake serves without modelling them: each answers null for
every object (its row has no attribute of that name, so ariadne's default resolver finds
nothing), where Linear may answer a value.

They stay in the fake's SDL because the official SDK selects them: its generated fragments
(``Issue``, ``Team``, ``User``, ``Comment``, ``IssueLabel``, ``WorkflowState``,
``Organization``, ``IssueHistory`` in linear-sdk's ``src/_generated_documents.graphql``) select
every one, so dropping one would make ``LinearClient.issue(id)``, ``.teams()``, ``.viewer``...
fail validation. A field no SDK fragment selects is left out of the SDL instead, so that a query
for it fails as Linear fails one for an unknown field.

Listing them makes each null a known gap rather than a silent one:
``contract_tests/test_gap_sources.py`` checks that every field of the SDL that resolves to
nothing is listed here (and nothing else), that each answers null on the demo world, and that
each group's reason cites its source.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unmodelled:
    """Fields of one feature the fake does not model, and why they answer null."""

    fields: tuple[str, ...]
    """``Type.field`` names of the fake's SDL (``fakes/linear/graphql/schema.graphql``)."""
    why: str
    """What Linear answers there and why the fake cannot: cites linear-sdk's
    ``src/schema.graphql`` (the field's description) or a URL, or starts with "unverified"."""
    linear_agrees: bool = False
    """True when Linear answers null too for every object this fake can hold (so the null is
    right, not a gap)."""


def _fields(names: str) -> tuple[str, ...]:
    return tuple(names.split())


SNAPSHOT = "the snapshot format (replay/base/worldstate.py) records none"
SDL = "linear-sdk src/schema.graphql"

UNMODELLED: tuple[Unmodelled, ...] = (
    Unmodelled(
        _fields(
            "Issue.project Issue.projectMilestone Issue.addedToProjectAt "
            "IssueHistory.fromProject IssueHistory.toProject IssueHistory.fromProjectId "
            "IssueHistory.toProjectId IssueHistory.fromProjectMilestone "
            "IssueHistory.toProjectMilestone IssueHistory.toConvertedProject "
            "IssueHistory.toConvertedProjectId"
        ),
        f"Projects and milestones are not modelled: {SNAPSHOT}, so an issue Linear files under "
        f"a project answers null here ({SDL} Issue.project: 'Null if the issue is not part of "
        "any project').",
    ),
    Unmodelled(
        _fields(
            "Issue.cycle Issue.addedToCycleAt Team.activeCycle IssueHistory.fromCycle "
            "IssueHistory.toCycle IssueHistory.fromCycleId IssueHistory.toCycleId"
        ),
        f"Cycles are not modelled: {SNAPSHOT}, so an issue in a cycle answers null here ({SDL} "
        "Issue.cycle: 'Null if the issue is not part of any cycle').",
    ),
    Unmodelled(
        _fields("Issue.dueDate IssueHistory.fromDueDate IssueHistory.toDueDate"),
        f"Due dates are not modelled: {SNAPSHOT} ({SDL} Issue.dueDate: 'The date at which the "
        "issue is due').",
    ),
    Unmodelled(
        _fields("Issue.subIssueSortOrder"),
        f"{SDL} Issue.subIssueSortOrder: 'Only set if the issue has a parent'; {SNAPSHOT}, so "
        "a sub-issue answers null here.",
    ),
    Unmodelled(
        _fields(
            "Issue.addedToTeamAt IssueHistory.fromTeam IssueHistory.toTeam "
            "IssueHistory.fromTeamId IssueHistory.toTeamId"
        ),
        f"Moves between teams are not modelled (issueUpdate takes no teamId here) and {SNAPSHOT} "
        f"of an issue's earlier teams ({SDL} Issue.addedToTeamAt: 'The time at which the issue "
        "was added to a team').",
    ),
    Unmodelled(
        _fields(
            "Issue.startedTriageAt Issue.triagedAt Issue.snoozedBy Issue.snoozedUntilAt "
            "Team.triageResponsibility IssueHistory.triageResponsibilityAutoAssigned "
            "IssueHistory.triageResponsibilityNotifiedUsers "
            "IssueHistory.triageResponsibilityTeam"
        ),
        f"Triage times, snoozing and triage responsibility are not modelled: {SNAPSHOT}, though "
        f"a team may have a triage state here ({SDL} Issue.startedTriageAt: 'The time at which "
        "the issue entered triage').",
    ),
    Unmodelled(
        _fields(
            "Issue.slaType Issue.slaStartedAt Issue.slaBreachesAt Issue.slaHighRiskAt "
            "Issue.slaMediumRiskAt IssueHistory.fromSlaType IssueHistory.toSlaType "
            "IssueHistory.fromSlaStartedAt IssueHistory.toSlaStartedAt "
            "IssueHistory.fromSlaBreachesAt IssueHistory.toSlaBreachesAt "
            "IssueHistory.fromSlaBreached IssueHistory.toSlaBreached"
        ),
        f"SLAs are not modelled: {SNAPSHOT} ({SDL} Issue.slaType: 'The type of SLA set on the "
        "issue').",
    ),
    Unmodelled(
        _fields("Issue.delegate IssueHistory.fromDelegate IssueHistory.toDelegate"),
        f"Delegation to agents is not modelled: {SNAPSHOT} ({SDL} Issue.delegate: 'Null if no "
        "agent is working on the issue'); User.delegatedIssues answers empty accordingly.",
    ),
    Unmodelled(
        _fields(
            "Issue.integrationSourceType Issue.botActor Issue.externalUserCreator "
            "Issue.asksRequester Issue.asksExternalUserRequester Issue.sourceComment "
            "Comment.botActor Comment.externalUser Comment.externalThread Comment.agentSession "
            "IssueHistory.botActor IssueHistory.issueImport"
        ),
        f"Where an issue, comment or change came from (an integration, a bot, Asks, an external "
        f"user, a comment, an import, an agent session) is not modelled: {SNAPSHOT} ({SDL} "
        "Issue.externalUserCreator: 'Set when the issue was created via an integration').",
    ),
    Unmodelled(
        _fields(
            "Issue.lastAppliedTemplate Issue.recurringIssueTemplate "
            "Team.defaultTemplateForMembers Team.defaultTemplateForNonMembers "
            "Team.defaultProjectTemplate Team.defaultTemplateForMembersId "
            "Team.defaultTemplateForNonMembersId"
        ),
        f"Templates are not modelled: {SNAPSHOT} ({SDL} Issue.lastAppliedTemplate: 'The last "
        "template that was applied to this issue').",
    ),
    Unmodelled(
        _fields("Issue.favorite"),
        f"Favourites are not modelled: {SNAPSHOT} ({SDL} Issue.favorite: 'The users favorite "
        "associated with this issue').",
    ),
    Unmodelled(
        _fields(
            "Issue.trashed Issue.autoArchivedAt Issue.autoClosedAt IssueHistory.archived "
            "IssueHistory.trashed IssueHistory.autoArchived IssueHistory.autoClosed "
            "Team.autoCloseStateId Team.autoClosePeriod Team.autoCloseChildIssues "
            "Team.autoCloseParentIssues Team.markedAsDuplicateWorkflowState"
        ),
        f"Trash and Linear's automatic archiving and closing are not modelled: {SNAPSHOT}, so an "
        f"issue Linear closed by its pruning answers null here ({SDL} Issue.autoClosedAt: 'The "
        "time at which the issue was automatically closed by the auto pruning process').",
    ),
    Unmodelled(
        _fields(
            "IssueHistory.attachment IssueHistory.attachmentId IssueHistory.addedToReleaseIds "
            "IssueHistory.removedFromReleaseIds IssueHistory.relationChanges "
            "IssueHistory.customerNeedId"
        ),
        f"Attachments, releases, relations and customer needs are not modelled (see linear-sdk "
        f"gaps.json), so no change here touches them: {SNAPSHOT} ({SDL} "
        "IssueHistory.attachment: 'The linked attachment').",
    ),
    Unmodelled(
        _fields(
            "Team.draftWorkflowState Team.startWorkflowState Team.reviewWorkflowState "
            "Team.mergeableWorkflowState Team.mergeWorkflowState"
        ),
        f"Git automation is not modelled (the fake runs none): {SNAPSHOT} of the states a team "
        f"moves issues to on pull request events ({SDL} Team.mergeWorkflowState: 'The workflow "
        "state into which issues are moved when a PR has been merged').",
    ),
    Unmodelled(
        _fields(
            "Team.description Team.icon Team.color Team.parent Team.retiredAt "
            "Team.allMembersCanJoin Team.scimGroupName Team.integrationsSettings"
        ),
        f"A team's appearance, sub-team parent and membership settings are not modelled: the "
        f"snapshot keeps a team's id, key, name and creation time only ({SDL} Team.color: 'The "
        "team's color').",
    ),
    Unmodelled(
        _fields(
            "User.avatarUrl User.description User.title User.timezone User.statusEmoji "
            "User.statusLabel User.statusUntilAt User.gitHubUserId User.calendarHash "
            "User.lastSeen User.disableReason"
        ),
        f"A user's profile beyond name, display name, email, active and admin is not modelled: "
        f"{SNAPSHOT} ({SDL} User.disableReason: 'Null if the user is active', so a deactivated "
        "user of the snapshot answers null where Linear gives the reason).",
    ),
    Unmodelled(
        _fields(
            "IssueLabel.description IssueLabel.parent IssueLabel.inheritedFrom IssueLabel.creator "
            "IssueLabel.retiredBy IssueLabel.lastAppliedAt"
        ),
        f"Label groups, inheritance, retirement and a label's description, creator and last use "
        f"are not modelled: {SNAPSHOT} ({SDL} IssueLabel.lastAppliedAt: 'Null if the label has "
        "never been applied', yet the snapshot's labels are applied).",
    ),
    Unmodelled(
        _fields("WorkflowState.description WorkflowState.inheritedFrom"),
        f"A workflow state's description and inheritance from a parent team are not modelled: "
        f"{SNAPSHOT} ({SDL} WorkflowState.description: 'Description of the state').",
    ),
    Unmodelled(
        _fields(
            "Comment.quotedText Comment.editedAt Comment.resolvedAt Comment.resolvingComment "
            "Comment.resolvingCommentId Comment.resolvingUser"
        ),
        f"Comment edits and thread resolution are not modelled (commentUpdate and commentResolve "
        f"are not served): {SNAPSHOT} ({SDL} Comment.editedAt: 'Null if the comment has not been "
        "edited since creation').",
    ),
    Unmodelled(
        _fields("Organization.logoUrl Organization.gitBranchFormat"),
        f"The workspace's logo and branch name format are not modelled: {SNAPSHOT} ({SDL} "
        "Organization.gitBranchFormat: 'If null, the default formatting will be used', which "
        "is what Issue.branchName follows here).",
    ),
    Unmodelled(
        _fields(
            "Team.archivedAt User.archivedAt WorkflowState.archivedAt IssueLabel.archivedAt "
            "Comment.archivedAt Organization.archivedAt IssueHistory.archivedAt"
        ),
        f"Archiving is modelled for issues only: {SNAPSHOT} for other entities ({SDL} "
        "Team.archivedAt: 'Null if the entity has not been archived'), so null is Linear's "
        "answer for every live one and wrong only for an archived one a snapshot might hold.",
    ),
    Unmodelled(
        _fields(
            "Comment.documentContent Comment.documentContentId Comment.initiative "
            "Comment.initiativeId Comment.initiativeUpdate Comment.initiativeUpdateId "
            "Comment.project Comment.projectId Comment.projectUpdate Comment.projectUpdateId"
        ),
        f"Every comment here is an issue's comment, and Linear answers null for these on one "
        f"({SDL} Comment.project: 'Null if the comment belongs to a different parent entity "
        "type').",
        linear_agrees=True,
    ),
)
"""Every field of the fake's SDL that answers null without being modelled, by feature."""

MIRRORS: dict[str, str] = {"IssueSearchResult": "Issue"}
"""Types whose fields answer as another type's do (``render.py`` binds both alike)."""


def unmodelled_fields() -> dict[str, Unmodelled]:
    """``Type.field`` -> its group, the mirrored types' fields included."""
    out: dict[str, Unmodelled] = {}
    for group in UNMODELLED:
        for name in group.fields:
            out[name] = group
            type_name, _, field_name = name.partition(".")
            for mirror, of in MIRRORS.items():
                if of == type_name:
                    out[f"{mirror}.{field_name}"] = group
    return out
