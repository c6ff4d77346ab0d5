"""Regenerate ``schema.graphql``: GitHub's published schema, cut to what the fake implements.

Run ``python -m fakes.github.graphql.cut_schema GITHUB_SCHEMA [OUT]`` with GitHub's public
schema (``schema.graphql`` of octokit/graphql-schema, or ``schema.docs.graphql`` from GitHub's
docs). Type, field and argument names, types and nullability come from GitHub (they are
the interface clients are written against); GitHub's descriptions are dropped, since the
project ships none of GitHub's prose (deprecation reasons included). This file says only
*which* of them the fake answers. To implement a field: add it below, implement it in a view
(``render.py``), rerun, and the completeness test checks the pairing.

``KEEP`` maps a type to the fields kept, space-separated; ``field(a,b)`` keeps only those
arguments; ``None`` keeps the whole type. Input types list their accepted fields, so an
unknown input field fails validation as on GitHub. Enums are kept whole unless restricted.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from graphql import parse, print_ast
from graphql.language import ast

PAGE = "first,after,last,before"
ISSUES = f"issues({PAGE},orderBy,states,labels,filterBy)"
PULLS = f"pullRequests({PAGE},states,labels,headRefName,baseRefName,orderBy)"
COMMENT = (
    "author authorAssociation body bodyText createdAt createdViaEmail databaseId editor id "
    "includesCreatedEdit lastEditedAt publishedAt reactionGroups repository resourcePath "
    "updatedAt url viewerDidAuthor"
)
THREAD = (
    f"{COMMENT} activeLockReason assignees({PAGE}) closed closedAt comments({PAGE},orderBy) "
    f"fullDatabaseId labels({PAGE},orderBy) locked milestone number "
    f"projectCards({PAGE},archivedStates) state title titleHTML viewerCanClose viewerCanLabel "
    "viewerCanReact viewerCanReopen viewerCanSubscribe viewerCanUpdate viewerSubscription"
)

KEEP: dict[str, str | None] = {
    "Query": "viewer repository(owner,name,followRenames) node nodes "
    f"search(query,type,{PAGE}) user organization repositoryOwner",
    "Mutation": "addComment closeIssue closePullRequest createIssue createPullRequest "
    "reopenIssue reopenPullRequest updateIssue updatePullRequest mergePullRequest "
    "addPullRequestReview markPullRequestReadyForReview convertPullRequestToDraft "
    "addLabelsToLabelable removeLabelsFromLabelable createCommitOnBranch createRef updateRef "
    "deleteRef updateRefs",
    # interfaces
    "Node": "id",
    "Actor": "avatarUrl login resourcePath url",
    "RepositoryOwner": "avatarUrl id login repository(name,followRenames) resourcePath url",
    "UniformResourceLocatable": "resourcePath url",
    "Closable": "closed closedAt",
    "Labelable": f"labels({PAGE},orderBy)",
    "Assignable": f"assignees({PAGE})",
    "RepositoryNode": "repository",
    "Comment": "author authorAssociation body bodyText createdAt createdViaEmail editor id "
    "includesCreatedEdit lastEditedAt publishedAt updatedAt viewerDidAuthor",
    "Reactable": "databaseId id reactionGroups",
    "Minimizable": "isMinimized minimizedReason",
    "GitObject": "abbreviatedOid commitResourcePath commitUrl id oid repository",
    # actors
    "User": "avatarUrl bio company createdAt databaseId email id isSiteAdmin isViewer location "
    "login name repository(name,followRenames) resourcePath twitterUsername updatedAt url "
    "websiteUrl",
    "Bot": "avatarUrl createdAt databaseId id login resourcePath updatedAt url",
    "Organization": "avatarUrl createdAt databaseId description email id location login name "
    "repository(name,followRenames) resourcePath updatedAt url websiteUrl",
    "Team": "combinedSlug createdAt databaseId description id name organization resourcePath "
    "slug updatedAt url",
    # repositories
    "Repository": f"allowUpdateBranch archivedAt assignableUsers({PAGE},query) "
    "autoMergeAllowed createdAt databaseId defaultBranchRef deleteBranchOnMerge description "
    "forkCount forkingAllowed hasDiscussionsEnabled hasIssuesEnabled hasProjectsEnabled "
    "hasWikiEnabled homepageUrl id isArchived isBlankIssuesEnabled isDisabled isEmpty isFork "
    "isInOrganization isLocked isMirror isPrivate isSecurityPolicyEnabled isTemplate "
    f"isUserConfigurationRepository issue issueOrPullRequest {ISSUES} label "
    f"labels({PAGE},orderBy,query) mentionableUsers({PAGE},query) mergeCommitAllowed "
    f"milestone mirrorUrl name nameWithOwner owner parent pullRequest {PULLS} pushedAt "
    "rebaseMergeAllowed ref resourcePath securityPolicyUrl squashMergeAllowed sshUrl "
    "stargazerCount templateRepository updatedAt url usesCustomOpenGraphImage "
    "viewerCanAdminister viewerDefaultCommitEmail viewerDefaultMergeMethod viewerHasStarred "
    "viewerPermission viewerPossibleCommitEmails viewerSubscription visibility "
    f"watchers({PAGE}) webCommitSignoffRequired",
    "Label": "color createdAt description id isDefault name repository resourcePath updatedAt url",
    "Milestone": "closed closedAt createdAt description dueOn id number progressPercentage "
    "resourcePath state title updatedAt url",
    "Project": "body closed closedAt createdAt id name number resourcePath state updatedAt url",
    "ProjectCard": "column createdAt id isArchived note project resourcePath updatedAt url",
    "ProjectColumn": "createdAt id name resourcePath updatedAt url",
    # issues and pull requests
    "Issue": f"{THREAD} bodyResourcePath bodyUrl isPinned stateReason viewerCanDelete",
    "PullRequest": f"{THREAD} additions autoMergeRequest baseRef baseRefName baseRefOid "
    f"baseRepository changedFiles checksResourcePath checksUrl commits({PAGE}) deletions "
    f"files({PAGE}) headRef headRefName headRefOid headRepository headRepositoryOwner "
    f"isCrossRepository isDraft isInMergeQueue isMergeQueueEnabled latestReviews({PAGE}) "
    "maintainerCanModify mergeCommit mergeStateStatus mergeable merged mergedAt mergedBy "
    f"permalink potentialMergeCommit reviewDecision reviewRequests({PAGE}) "
    f"reviews({PAGE},states,author) statusCheckRollup totalCommentsCount",
    "IssueComment": f"{COMMENT} fullDatabaseId isMinimized issue minimizedReason pullRequest "
    "viewerCanDelete viewerCanMinimize viewerCanReact viewerCanUpdate",
    "PullRequestReview": f"{COMMENT} authorCanPushToRepository comments({PAGE}) commit "
    "fullDatabaseId isMinimized minimizedReason pullRequest state submittedAt viewerCanDelete "
    "viewerCanMinimize viewerCanReact viewerCanUpdate",
    "PullRequestReviewComment": f"{COMMENT} commit diffHunk isMinimized line minimizedReason "
    "path pullRequest pullRequestReview replyTo",
    "ReactionGroup": f"content createdAt users({PAGE}) viewerHasReacted",
    "ReviewRequest": "asCodeOwner databaseId id pullRequest requestedReviewer",
    "AutoMergeRequest": "authorEmail commitBody commitHeadline enabledAt enabledBy mergeMethod "
    "pullRequest",
    "PullRequestCommit": "commit id pullRequest resourcePath url",
    "PullRequestChangedFile": "additions changeType deletions path",
    # git
    "Ref": f"associatedPullRequests({PAGE},states,labels,headRefName,baseRefName,orderBy) "
    "branchProtectionRule id name prefix repository target",
    "Commit": f"abbreviatedOid author authoredDate authors({PAGE}) commitResourcePath commitUrl "
    f"committedDate committer id message messageBody messageHeadline oid parents({PAGE}) "
    "repository resourcePath statusCheckRollup url",
    "GitActor": "avatarUrl date email name user",
    "BranchProtectionRule": "allowsDeletions allowsForcePushes dismissesStaleReviews id "
    "isAdminEnforced pattern requiredApprovingReviewCount requiredStatusCheckContexts "
    "requiresApprovingReviews requiresCodeOwnerReviews requiresCommitSignatures "
    "requiresConversationResolution requiresLinearHistory requiresStatusChecks "
    "requiresStrictStatusChecks restrictsPushes restrictsReviewDismissals",
    # checks
    "StatusCheckRollup": f"commit contexts({PAGE}) id state",
    "CheckRun": "checkSuite completedAt conclusion databaseId detailsUrl externalId id "
    "isRequired(pullRequestId,pullRequestNumber) name permalink repository resourcePath "
    "startedAt status summary text title url",
    "CheckSuite": "id workflowRun",
    "WorkflowRun": "event id resourcePath url workflow",
    "Workflow": "id name resourcePath url",
    "StatusContext": "avatarUrl commit context createdAt creator description id "
    "isRequired(pullRequestId,pullRequestNumber) state targetUrl",
    "PageInfo": None,
    "CheckRunStateCount": None,
    "StatusContextStateCount": None,
    "SearchResultItemConnection": "edges issueCount nodes pageInfo",
    "SearchResultItemEdge": "cursor node",
    # mutations
    "AddCommentInput": None,
    "AddCommentPayload": "clientMutationId commentEdge subject",
    "CreateIssueInput": "assigneeIds body clientMutationId labelIds milestoneId projectIds "
    "repositoryId title",
    "CreateIssuePayload": None,
    "CreatePullRequestInput": "baseRefName body clientMutationId draft headRefName "
    "maintainerCanModify repositoryId title",
    "CreatePullRequestPayload": None,
    "CloseIssueInput": "clientMutationId issueId stateReason",
    "CloseIssuePayload": None,
    "ReopenIssueInput": None,
    "ReopenIssuePayload": None,
    "ClosePullRequestInput": "clientMutationId pullRequestId",
    "ClosePullRequestPayload": None,
    "ReopenPullRequestInput": None,
    "ReopenPullRequestPayload": None,
    "UpdateIssueInput": "assigneeIds body clientMutationId id labelIds milestoneId projectIds "
    "state title",
    "UpdateIssuePayload": "actor clientMutationId issue",
    "UpdatePullRequestInput": "assigneeIds baseRefName body clientMutationId labelIds "
    "maintainerCanModify milestoneId projectIds pullRequestId state title",
    "UpdatePullRequestPayload": "actor clientMutationId pullRequest",
    "MergePullRequestInput": "authorEmail clientMutationId commitBody commitHeadline "
    "expectedHeadOid mergeMethod pullRequestId",
    "MergePullRequestPayload": "actor clientMutationId pullRequest",
    "AddPullRequestReviewInput": "body clientMutationId commitOID event pullRequestId",
    "AddPullRequestReviewPayload": "clientMutationId pullRequestReview reviewEdge",
    "MarkPullRequestReadyForReviewInput": None,
    "MarkPullRequestReadyForReviewPayload": None,
    "ConvertPullRequestToDraftInput": None,
    "ConvertPullRequestToDraftPayload": None,
    "AddLabelsToLabelableInput": None,
    "AddLabelsToLabelablePayload": None,
    "RemoveLabelsFromLabelableInput": None,
    "RemoveLabelsFromLabelablePayload": None,
    "CreateCommitOnBranchInput": None,
    "CreateCommitOnBranchPayload": None,
    "CommittableBranch": None,
    "FileChanges": None,
    "FileAddition": None,
    "FileDeletion": None,
    "CommitMessage": None,
    "CreateRefInput": None,
    "CreateRefPayload": None,
    "UpdateRefInput": None,
    "UpdateRefPayload": None,
    "DeleteRefInput": None,
    "DeleteRefPayload": None,
    "UpdateRefsInput": None,
    "UpdateRefsPayload": None,
    "RefUpdate": None,
    # arguments
    "IssueFilters": "assignee createdBy labels mentioned since states",
    "IssueOrder": None,
    "IssueCommentOrder": None,
    "LabelOrder": None,
}
CONNECTIONS = [
    "User",
    "Issue",
    "PullRequest",
    "IssueComment",
    "Label",
    "ProjectCard",
    "ReactingUser",
    "PullRequestReview",
    "PullRequestReviewComment",
    "PullRequestCommit",
    "PullRequestChangedFile",
    "ReviewRequest",
    "StatusCheckRollupContext",
    "GitActor",
    "Commit",
]
for _name in CONNECTIONS:
    KEEP.setdefault(f"{_name}Connection", None)
    KEEP.setdefault(f"{_name}Edge", None)

UNIONS: dict[str, list[str] | None] = {
    "SearchResultItem": ["Issue", "PullRequest"],
    "IssueOrPullRequest": None,
    "RequestedReviewer": ["Bot", "Team", "User"],
    "StatusCheckRollupContext": None,
    "Assignee": ["Bot", "User"],
    "ProjectCardItem": None,
}
ENUMS: dict[str, list[str]] = {
    "SearchType": ["ISSUE"],
    "IssueClosedStateReason": ["COMPLETED", "NOT_PLANNED"],
    "PullRequestReviewEvent": ["APPROVE", "COMMENT", "REQUEST_CHANGES"],
}
# GitHub deprecates these although they implement a non-deprecated interface field, which
# graphql-core refuses; they lose their @deprecated (and only that).
UNDEPRECATE = {
    "Project": "id",
    "ProjectCard": "id",
    "ProjectColumn": "id",
    "PullRequest": "databaseId",
    "PullRequestReview": "databaseId",
    "PullRequestReviewComment": "databaseId",
}
DIRECTIVES = ("requiredCapabilities",)
BUILTIN = {"String", "Int", "Float", "Boolean", "ID"}

HEADER = """\
# The part of GitHub's GraphQL interface the fake implements: type, field and argument names,
# types and nullability as GitHub publishes them (its public schema; descriptions left out).
# A field or argument that is absent here is one the fake does not implement, so a query
# asking for it fails validation, as on GitHub.
# One departure: GitHub deprecates a few fields that implement a non-deprecated interface field
# (Project.id, PullRequest.databaseId...), which graphql-core rejects; those carry no @deprecated.
# Generated by fakes/github/graphql/cut_schema.py: change that, not this.
"""

Fielded = ast.ObjectTypeDefinitionNode | ast.InterfaceTypeDefinitionNode


def _named(type_node: Any) -> str:
    while not isinstance(type_node, ast.NamedTypeNode):
        type_node = type_node.type
    return str(type_node.name.value)


def _entries(spec: str) -> list[tuple[str, list[str] | None]]:
    out: list[tuple[str, list[str] | None]] = []
    for entry in spec.split():
        name, _, args = entry.partition("(")
        out.append((name, args.rstrip(")").split(",") if args else None))
    return out


def _cut_fields(name: str, node: Any, problems: list[str]) -> list[Any]:
    by_name = {f.name.value: f for f in node.fields}
    spec = KEEP[name]
    wanted = _entries(spec) if spec is not None else [(n, None) for n in by_name]
    fields = []
    for field_name, args in wanted:
        field = by_name.get(field_name)
        if field is None:
            problems.append(f"{name}.{field_name}: not in GitHub's schema")
            continue
        if args is not None:
            unknown = set(args) - {a.name.value for a in field.arguments}
            problems += [f"{name}.{field_name}({a}:): not in GitHub's schema" for a in unknown]
            field = ast.FieldDefinitionNode(
                description=field.description,
                name=field.name,
                arguments=tuple(a for a in field.arguments if a.name.value in args),
                type=field.type,
                directives=field.directives,
            )
        if UNDEPRECATE.get(name) == field_name:
            field = _without_deprecation(field)
        fields.append(field)
    return sorted(fields, key=lambda f: f.name.value)


def _without_deprecation(field: Any) -> Any:
    kept = tuple(d for d in field.directives or () if d.name.value != "deprecated")
    if isinstance(field, ast.FieldDefinitionNode):
        return ast.FieldDefinitionNode(
            description=field.description,
            name=field.name,
            arguments=field.arguments,
            type=field.type,
            directives=kept,
        )
    return field


def cut(github_sdl: str) -> str:
    """The fake's SDL from GitHub's; raises if KEEP names something GitHub does not have."""
    document = parse(github_sdl, no_location=True)
    definitions: dict[str, Any] = {}
    for d in document.definitions:
        name = getattr(d, "name", None)
        if name is not None and not isinstance(d, ast.DirectiveDefinitionNode):
            definitions.setdefault(name.value, d)
    directives = [
        d
        for d in document.definitions
        if isinstance(d, ast.DirectiveDefinitionNode) and d.name.value in DIRECTIVES
    ]
    problems: list[str] = []
    out: dict[str, Any] = {}
    queue = [*KEEP, *UNIONS, *ENUMS]
    while queue:
        name = queue.pop()
        if name in out or name in BUILTIN:
            continue
        node = definitions.get(name)
        if node is None:
            problems.append(f"{name}: not in GitHub's schema")
            continue
        if isinstance(node, ast.ObjectTypeDefinitionNode | ast.InterfaceTypeDefinitionNode):
            if name not in KEEP:
                problems.append(f"{name}: reached but not listed in KEEP")
                continue
            fields = _cut_fields(name, node, problems)
            for f in fields:
                queue.append(_named(f.type))
                queue += [_named(a.type) for a in f.arguments or ()]
            out[name] = type(node)(
                description=node.description,
                name=node.name,
                directives=node.directives,
                interfaces=node.interfaces if name != "Query" else (),
                fields=tuple(fields),
            )
        elif isinstance(node, ast.InputObjectTypeDefinitionNode):
            if name not in KEEP:
                problems.append(f"{name}: reached but not listed in KEEP")
                continue
            fields = _cut_fields(name, node, problems)
            queue += [_named(f.type) for f in fields]
            out[name] = ast.InputObjectTypeDefinitionNode(
                description=node.description,
                name=node.name,
                directives=node.directives,
                fields=tuple(fields),
            )
        elif isinstance(node, ast.UnionTypeDefinitionNode):
            members = UNIONS.get(name)
            types = tuple(t for t in node.types or () if members is None or t.name.value in members)
            queue += [t.name.value for t in types]
            out[name] = ast.UnionTypeDefinitionNode(
                description=node.description,
                name=node.name,
                directives=node.directives,
                types=types,
            )
        elif isinstance(node, ast.EnumTypeDefinitionNode):
            allowed = ENUMS.get(name)
            values = tuple(
                v for v in node.values or () if allowed is None or v.name.value in allowed
            )
            out[name] = ast.EnumTypeDefinitionNode(
                description=node.description,
                name=node.name,
                directives=node.directives,
                values=values,
            )
        else:
            out[name] = node
    for name, node in list(out.items()):
        if isinstance(node, Fielded) and node.interfaces:
            interfaces = tuple(i for i in node.interfaces if i.name.value in out)
            out[name] = type(node)(
                description=node.description,
                name=node.name,
                directives=node.directives,
                interfaces=interfaces,
                fields=node.fields,
            )
            have = {f.name.value for f in node.fields or ()}
            for i in interfaces:
                need = {f.name.value for f in out[i.name.value].fields or ()}
                problems += [f"{name}.{f}: required by {i.name.value}" for f in need - have]
    if problems:
        raise ValueError("cannot cut the schema:\n  " + "\n  ".join(sorted(problems)))
    parts = [print_ast(_undocumented(d)) for d in directives]
    parts += [print_ast(_undocumented(out[n])) for n in sorted(out)]
    return HEADER + "\n" + "\n\n".join(parts) + "\n"


def _undocumented(node: Any) -> Any:
    """A copy of ``node`` with every description below it removed."""
    if isinstance(node, ast.DirectiveNode) and node.name.value == "deprecated":
        # Keep the fact (introspection's isDeprecated), not GitHub's wording of the reason.
        reason = ast.ArgumentNode(
            name=ast.NameNode(value="reason"),
            value=ast.StringValueNode(value="Deprecated on GitHub."),
        )
        return ast.DirectiveNode(name=node.name, arguments=(reason,))
    if isinstance(node, ast.Node):
        values = {key: _undocumented(getattr(node, key, None)) for key in node.keys}
        if "description" in values:
            values["description"] = None
        return type(node)(**values)
    if isinstance(node, tuple):
        return tuple(_undocumented(item) for item in node)
    if isinstance(node, list):
        return [_undocumented(item) for item in node]
    return node


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    target = Path(args[1]) if len(args) > 1 else Path(__file__).with_name("schema.graphql")
    text = cut(Path(args[0]).read_text())
    target.write_text(re.sub(r"[ \t]+\n", "\n", text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
