"""The GraphQL documents Linear's TypeScript SDK (``@linear/sdk``) sends, with their fragments.

Written out from the SDK's published operations (``LinearClient.viewer``, ``.issue(id)``,
``.issues()``, ``.searchIssues(term)``, ``.workflowStates()``, ``.teams()``,
``issue.comments()``, ``issue.history()``, ``.updateIssue(id, input)``, ``.createIssue(input)``,
``.createComment(input)``): each call POSTs its operation plus every
fragment it spreads, as JSON ``{query, variables}``, with the key in ``Authorization``.
"""

from __future__ import annotations

PAGE_INFO = """
fragment PageInfo on PageInfo {
  __typename
  startCursor
  endCursor
  hasPreviousPage
  hasNextPage
}
"""

USER = """
fragment User on User {
  __typename
  description
  avatarUrl
  createdIssueCount
  avatarBackgroundColor
  statusUntilAt
  statusEmoji
  initials
  updatedAt
  lastSeen
  timezone
  disableReason
  statusLabel
  archivedAt
  createdAt
  id
  gitHubUserId
  displayName
  email
  name
  title
  url
  active
  isAssignable
  guest
  admin
  owner
  app
  isMentionable
  isMe
  supportsAgentSessions
  canAccessAnyPublicTeam
  calendarHash
  inviteHash
}
"""

REACTION = """
fragment Reaction on Reaction {
  __typename
  comment { id }
  externalUser { id }
  initiativeUpdate { id }
  issue { id }
  updatedAt
  emoji
  projectUpdate { id }
  archivedAt
  createdAt
  id
  user { id }
}
"""

SHARED_ACCESS = """
fragment IssueSharedAccess on IssueSharedAccess {
  __typename
  disallowedIssueFields
  sharedWithCount
  sharedWithUsers { ...User }
  viewerHasOnlySharedAccess
  isShared
}
"""

ACTOR_BOT = """
fragment ActorBot on ActorBot {
  __typename
  avatarUrl
  subType
  id
  name
  userDisplayName
  type
}
"""

EXTERNAL_ENTITY = """
fragment ExternalEntityInfo on ExternalEntityInfo {
  __typename
  metadata {
    ... on ExternalEntityInfoGithubMetadata { ...ExternalEntityInfoGithubMetadata }
    ... on ExternalEntityInfoJiraMetadata { ...ExternalEntityInfoJiraMetadata }
    ... on ExternalEntitySlackMetadata { ...ExternalEntitySlackMetadata }
  }
  service
  id
}
fragment ExternalEntityInfoGithubMetadata on ExternalEntityInfoGithubMetadata {
  __typename
  number
  owner
  repo
}
fragment ExternalEntityInfoJiraMetadata on ExternalEntityInfoJiraMetadata {
  __typename
  issueTypeId
  projectId
  issueKey
}
fragment ExternalEntitySlackMetadata on ExternalEntitySlackMetadata {
  __typename
  messageUrl
  channelId
  channelName
  isFromSlack
}
"""

_ISSUE_FIELDS = """
  trashed
  reactionData
  labelIds
  integrationSourceType
  url
  identifier
  priorityLabel
  previousIdentifiers
  reactions { ...Reaction }
  customerTicketCount
  sharedAccess { ...IssueSharedAccess }
  branchName
  delegate { id }
  botActor { ...ActorBot }
  sourceComment { id }
  cycle { id }
  dueDate
  estimate
  syncedWith { ...ExternalEntityInfo }
  externalUserCreator { id }
  asksExternalUserRequester { id }
  asksRequester { id }
  description
  title
  number
  lastAppliedTemplate { id }
  updatedAt
  boardOrder
  sortOrder
  prioritySortOrder
  subIssueSortOrder
  parent { id }
  priority
  projectMilestone { id }
  project { id }
  recurringIssueTemplate { id }
  team { id }
  archivedAt
  createdAt
  startedTriageAt
  triagedAt
  addedToCycleAt
  addedToProjectAt
  addedToTeamAt
  autoArchivedAt
  autoClosedAt
  canceledAt
  completedAt
  startedAt
  slaStartedAt
  slaBreachesAt
  slaHighRiskAt
  slaMediumRiskAt
  snoozedUntilAt
  slaType
  id
  assignee { id }
  creator { id }
  snoozedBy { id }
  favorite { id }
  state { id }
  inheritsSharedAccess
"""

_ISSUE_DEPS = REACTION + SHARED_ACCESS + USER + ACTOR_BOT + EXTERNAL_ENTITY

ISSUE = "fragment Issue on Issue {\n  __typename" + _ISSUE_FIELDS + "}\n" + _ISSUE_DEPS

ISSUE_SEARCH_RESULT = (
    "fragment IssueSearchResult on IssueSearchResult {\n  __typename"
    + _ISSUE_FIELDS.replace("  priorityLabel\n", "  priorityLabel\n  metadata\n")
    + "}\n"
    + _ISSUE_DEPS
)

WORKFLOW_STATE = """
fragment WorkflowState on WorkflowState {
  __typename
  description
  updatedAt
  inheritedFrom { id }
  position
  color
  name
  team { id }
  archivedAt
  createdAt
  type
  id
}
"""

VIEWER = "query viewer {\n  viewer { ...User }\n}\n" + USER

ISSUE_QUERY = "query issue($id: String!) {\n  issue(id: $id) { ...Issue }\n}\n" + ISSUE

ISSUES = (
    """
query issues(
  $after: String
  $before: String
  $filter: IssueFilter
  $first: Int
  $includeArchived: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
  $sort: [IssueSortInput!]
) {
  issues(
    after: $after
    before: $before
    filter: $filter
    first: $first
    includeArchived: $includeArchived
    last: $last
    orderBy: $orderBy
    sort: $sort
  ) {
    ...IssueConnection
  }
}
fragment IssueConnection on IssueConnection {
  __typename
  nodes { ...Issue }
  pageInfo { ...PageInfo }
}
"""
    + ISSUE
    + PAGE_INFO
)

SEARCH_ISSUES = (
    """
query searchIssues(
  $after: String
  $before: String
  $filter: IssueFilter
  $first: Int
  $includeArchived: Boolean
  $includeComments: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
  $teamId: String
  $term: String!
) {
  searchIssues(
    after: $after
    before: $before
    filter: $filter
    first: $first
    includeArchived: $includeArchived
    includeComments: $includeComments
    last: $last
    orderBy: $orderBy
    teamId: $teamId
    term: $term
  ) {
    ...IssueSearchPayload
  }
}
fragment IssueSearchPayload on IssueSearchPayload {
  __typename
  archivePayload { ...ArchiveResponse }
  totalCount
  nodes { ...IssueSearchResult }
  pageInfo { ...PageInfo }
}
fragment ArchiveResponse on ArchiveResponse {
  __typename
  archive
  totalCount
  databaseVersion
  includesDependencies
}
"""
    + ISSUE_SEARCH_RESULT
    + PAGE_INFO
)

WORKFLOW_STATES = (
    """
query workflowStates(
  $after: String
  $before: String
  $filter: WorkflowStateFilter
  $first: Int
  $includeArchived: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
) {
  workflowStates(
    after: $after
    before: $before
    filter: $filter
    first: $first
    includeArchived: $includeArchived
    last: $last
    orderBy: $orderBy
  ) {
    ...WorkflowStateConnection
  }
}
fragment WorkflowStateConnection on WorkflowStateConnection {
  __typename
  nodes { ...WorkflowState }
  pageInfo { ...PageInfo }
}
"""
    + WORKFLOW_STATE
    + PAGE_INFO
)

ISSUE_PAYLOAD = """
fragment IssuePayload on IssuePayload {
  __typename
  lastSyncId
  issue { id }
  success
}
"""

UPDATE_ISSUE = (
    """
mutation updateIssue($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    ...IssuePayload
  }
}
"""
    + ISSUE_PAYLOAD
)

CREATE_ISSUE = (
    """
mutation createIssue($input: IssueCreateInput!) {
  issueCreate(input: $input) {
    ...IssuePayload
  }
}
"""
    + ISSUE_PAYLOAD
)

CREATE_COMMENT = """
mutation createComment($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    ...CommentPayload
  }
}
fragment CommentPayload on CommentPayload {
  __typename
  comment { id }
  lastSyncId
  success
}
"""

TEAM = """
fragment Team on Team {
  __typename
  cycleIssueAutoAssignCompleted
  cycleLockToActive
  cycleIssueAutoAssignStarted
  cycleCalenderUrl
  upcomingCycleCount
  autoArchivePeriod
  autoClosePeriod
  securitySettings
  integrationsSettings { id }
  activeCycle { id }
  triageResponsibility { id }
  scimGroupName
  autoCloseStateId
  cycleCooldownTime
  cycleStartDay
  defaultTemplateForMembers { id }
  defaultTemplateForNonMembers { id }
  defaultProjectTemplate { id }
  defaultIssueState { id }
  cycleDuration
  icon
  defaultTemplateForMembersId
  defaultTemplateForNonMembersId
  issueEstimationType
  updatedAt
  displayName
  ledInitiativeCount
  color
  description
  name
  parent { id }
  key
  archivedAt
  createdAt
  retiredAt
  timezone
  issueCount
  id
  visibility
  mergeWorkflowState { id }
  draftWorkflowState { id }
  startWorkflowState { id }
  mergeableWorkflowState { id }
  reviewWorkflowState { id }
  triageIssueState { id }
  defaultIssueEstimate
  setIssueSortOrderOnStateChange
  allMembersCanJoin
  requirePriorityToLeaveTriage
  autoCloseChildIssues
  autoCloseParentIssues
  scimManaged
  private
  inheritIssueEstimation
  inheritWorkflowStatuses
  cyclesEnabled
  issueEstimationExtended
  issueEstimationAllowZero
  aiDiscussionSummariesEnabled
  aiThreadSummariesEnabled
  groupIssueHistory
  slackIssueComments
  slackNewIssue
  slackIssueStatuses
  triageEnabled
  markedAsDuplicateWorkflowState { id }
  inviteHash
  issueOrderingNoPriorityFirst
  issueSortOrderDefaultToBottom
}
"""

TEAMS = (
    """
query teams(
  $after: String
  $before: String
  $filter: TeamFilter
  $first: Int
  $includeArchived: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
) {
  teams(
    after: $after
    before: $before
    filter: $filter
    first: $first
    includeArchived: $includeArchived
    last: $last
    orderBy: $orderBy
  ) {
    ...TeamConnection
  }
}
fragment TeamConnection on TeamConnection {
  __typename
  nodes { ...Team }
  pageInfo { ...PageInfo }
}
"""
    + TEAM
    + PAGE_INFO
)

COMMENT = """
fragment Comment on Comment {
  __typename
  agentSession { id }
  url
  reactionData
  reactions { ...Reaction }
  resolvingCommentId
  documentContentId
  initiativeId
  initiativeUpdateId
  issueId
  parentId
  projectId
  projectUpdateId
  botActor { ...ActorBot }
  resolvingComment { id }
  body
  documentContent { ...DocumentContent }
  syncedWith { ...ExternalEntityInfo }
  externalThread { ...SyncedExternalThread }
  externalUser { id }
  initiative { id }
  initiativeUpdate { id }
  issue { id }
  updatedAt
  parent { id }
  project { id }
  projectUpdate { id }
  quotedText
  archivedAt
  createdAt
  editedAt
  resolvedAt
  id
  resolvingUser { id }
  user { id }
}
fragment DocumentContent on DocumentContent {
  __typename
  aiPromptRules { ...AiPromptRules }
  content
  contentState
  document { id }
  initiative { id }
  issue { id }
  updatedAt
  projectMilestone { id }
  project { id }
  restoredAt
  archivedAt
  createdAt
  id
  welcomeMessage { ...WelcomeMessage }
}
fragment AiPromptRules on AiPromptRules {
  __typename
  updatedAt
  archivedAt
  createdAt
  id
  updatedBy { id }
}
fragment WelcomeMessage on WelcomeMessage {
  __typename
  updatedAt
  archivedAt
  createdAt
  title
  id
  updatedBy { id }
  enabled
}
fragment SyncedExternalThread on SyncedExternalThread {
  __typename
  url
  name
  displayName
  type
  subType
  id
  isPersonalIntegrationRequired
  isPersonalIntegrationConnected
  isConnected
}
"""

ISSUE_COMMENTS = (
    """
query issue_comments(
  $id: String!
  $after: String
  $before: String
  $filter: CommentFilter
  $first: Int
  $includeArchived: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
) {
  issue(id: $id) {
    comments(
      after: $after
      before: $before
      filter: $filter
      first: $first
      includeArchived: $includeArchived
      last: $last
      orderBy: $orderBy
    ) {
      ...CommentConnection
    }
  }
}
fragment CommentConnection on CommentConnection {
  __typename
  nodes { ...Comment }
  pageInfo { ...PageInfo }
}
"""
    + COMMENT
    + REACTION
    + ACTOR_BOT
    + EXTERNAL_ENTITY
    + PAGE_INFO
)

ISSUE_LABEL = """
fragment IssueLabel on IssueLabel {
  __typename
  lastAppliedAt
  color
  description
  name
  updatedAt
  inheritedFrom { id }
  parent { id }
  team { id }
  archivedAt
  createdAt
  id
  creator { id }
  retiredBy { id }
  isGroup
}
"""

ISSUE_IMPORT = """
fragment IssueImport on IssueImport {
  __typename
  progress
  errorMetadata
  csvFileUrl
  creatorId
  serviceMetadata
  status
  mapping
  displayName
  service
  updatedAt
  teamName
  archivedAt
  createdAt
  id
  error
}
"""

ISSUE_HISTORY_FRAGMENT = """
fragment IssueHistory on IssueHistory {
  __typename
  triageResponsibilityAutoAssigned
  relationChanges { ...IssueRelationHistoryPayload }
  addedLabelIds
  removedLabelIds
  addedToReleaseIds
  removedFromReleaseIds
  attachmentId
  toCycleId
  toParentId
  toProjectId
  toConvertedProjectId
  toStateId
  fromCycleId
  fromParentId
  fromProjectId
  fromStateId
  fromTeamId
  toTeamId
  fromAssigneeId
  toAssigneeId
  actorId
  toSlaBreachesAt
  fromSlaBreachesAt
  actor { id }
  descriptionUpdatedBy { ...User }
  actors { ...User }
  fromDelegate { id }
  toDelegate { id }
  botActor { ...ActorBot }
  fromCycle { id }
  toCycle { id }
  issueImport { ...IssueImport }
  issue { id }
  addedLabels { ...IssueLabel }
  removedLabels { ...IssueLabel }
  updatedAt
  attachment { id }
  toConvertedProject { id }
  fromParent { id }
  toParent { id }
  fromProjectMilestone { id }
  toProjectMilestone { id }
  fromProject { id }
  toProject { id }
  fromState { id }
  toState { id }
  fromTeam { id }
  toTeam { id }
  triageResponsibilityTeam { id }
  archivedAt
  createdAt
  toSlaStartedAt
  fromSlaStartedAt
  toSlaType
  fromSlaType
  id
  toAssignee { id }
  fromAssignee { id }
  triageResponsibilityNotifiedUsers { ...User }
  fromDueDate
  toDueDate
  fromEstimate
  toEstimate
  fromPriority
  toPriority
  fromTitle
  toTitle
  fromSlaBreached
  toSlaBreached
  archived
  autoArchived
  autoClosed
  trashed
  updatedDescription
  customerNeedId
}
fragment IssueRelationHistoryPayload on IssueRelationHistoryPayload {
  __typename
  identifier
  type
}
"""

ISSUE_HISTORY = (
    """
query issue_history(
  $id: String!
  $after: String
  $before: String
  $first: Int
  $includeArchived: Boolean
  $last: Int
  $orderBy: PaginationOrderBy
) {
  issue(id: $id) {
    history(
      after: $after
      before: $before
      first: $first
      includeArchived: $includeArchived
      last: $last
      orderBy: $orderBy
    ) {
      ...IssueHistoryConnection
    }
  }
}
fragment IssueHistoryConnection on IssueHistoryConnection {
  __typename
  nodes { ...IssueHistory }
  pageInfo { ...PageInfo }
}
"""
    + ISSUE_HISTORY_FRAGMENT
    + ISSUE_LABEL
    + ISSUE_IMPORT
    + USER
    + ACTOR_BOT
    + PAGE_INFO
)
