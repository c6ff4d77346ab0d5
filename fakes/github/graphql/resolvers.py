"""The roots (``Query``, ``Mutation``), global IDs, and the binding of views to the schema.

Every field resolves to the attribute of its parent view named in snake case; a method gets
the field's arguments. A field the view lacks raises, so nothing ever answers a silent null.
"""

from __future__ import annotations

import base64
import binascii
from functools import cache
from pathlib import Path
from typing import Any

from ariadne import SchemaBindable, convert_camel_case_to_snake, make_executable_schema
from graphql import GraphQLObjectType, GraphQLResolveInfo, GraphQLSchema

from fakes.github.errors import GitHubError
from fakes.github.gitstore import ZERO
from fakes.github.graphql import connections
from fakes.github.graphql.context import Context
from fakes.github.graphql.faults import Fault, not_found
from fakes.github.graphql.render import (
    ActorView,
    CommentView,
    CommitView,
    IssueView,
    LabelView,
    OwnerView,
    PullRequestView,
    RefView,
    RepositoryView,
    ReviewCommentView,
    ReviewView,
    View,
    find_repository,
    owner_by_login,
    search,
    thread,
)
from fakes.github.graphql.scalars import scalars
from fakes.github.models import (
    Branch,
    Comment,
    Issue,
    Label,
    Repo,
    Review,
    ReviewComment,
    User,
    parse_node_id,
)

SCHEMA_PATH = Path(__file__).with_name("schema.graphql")


class MissingResolver(Exception):
    """The schema names a field no view implements: a bug in the fake, said out loud."""


# ---------------------------------------------------------------------------- global IDs


def node(ctx: Context, global_id: str) -> View:
    """The object a global ID names; NOT_FOUND (GitHub's words) when it names nothing."""
    missing = not_found(f"a node with the global id of '{global_id}'")
    try:
        type_name, db_id = parse_node_id(global_id)
    except ValueError:
        raise missing from None
    s = ctx.session
    view: View | None = None
    if type_name in ("Issue", "PullRequest"):
        row = s.get(Issue, db_id)
        if row is not None and row.is_pull == (type_name == "PullRequest"):
            view = thread(ctx, row)
    elif type_name == "IssueComment":
        comment = s.get(Comment, db_id)
        view = None if comment is None else CommentView(ctx, comment)
    elif type_name == "PullRequestReview":
        # Another's pending review (and what it drafts) is theirs alone, as on GitHub.
        review = s.get(Review, db_id)
        hidden = ctx.backend.pulls.others_pending(ctx.viewer.login).where(Review.id == db_id)
        view = None if review is None or s.scalar(hidden) else ReviewView(ctx, review)
    elif type_name == "PullRequestReviewComment":
        rc = s.get(ReviewComment, db_id)
        shown = rc is not None and ctx.backend.pulls.review_comment_visible(rc, ctx.viewer.login)
        view = ReviewCommentView(ctx, rc) if rc is not None and shown else None
    elif type_name == "Repository":
        repo = s.get(Repo, db_id)
        view = None if repo is None else RepositoryView(ctx, repo)
    elif type_name in ("User", "Bot", "Organization"):
        user = s.get(User, db_id)
        if user is not None and ActorView(ctx, user).typename == type_name:
            view = ActorView(ctx, user)
    elif type_name == "Label":
        label = s.get(Label, db_id)
        view = None if label is None else LabelView(ctx, label)
    elif type_name == "Ref":
        branch = s.get(Branch, db_id)
        view = None if branch is None else RefView(ctx, branch.repo, branch)
    if view is None:
        raise missing
    return view


def thread_by_id(ctx: Context, global_id: str) -> IssueView | PullRequestView:
    view = node(ctx, global_id)
    if not isinstance(view, IssueView | PullRequestView):
        raise Fault(
            "NOT_FOUND", f"Could not resolve to a node with the global id of '{global_id}'."
        )
    return view


# ---------------------------------------------------------------------------- roots


class QueryRoot(View):
    typename = "Query"

    @property
    def viewer(self) -> ActorView:
        return ActorView(self.ctx, self.ctx.viewer)

    def repository(self, owner: str, name: str, follow_renames: bool = True) -> RepositoryView:
        repo = find_repository(self.ctx, owner, name)
        if repo is None:
            raise not_found(f"a Repository with the name '{owner}/{name}'")
        return repo

    def node(self, id: str) -> View:
        return node(self.ctx, id)

    def nodes(self, ids: list[str]) -> list[View]:
        return [node(self.ctx, i) for i in ids]

    def user(self, login: str) -> ActorView:
        found = owner_by_login(self.ctx, login)
        if not isinstance(found, ActorView) or found.typename == "Organization":
            raise not_found(f"a User with the login of '{login}'")
        return found

    def organization(self, login: str) -> ActorView | OwnerView:
        found = owner_by_login(self.ctx, login)
        if found is None or found.typename != "Organization":
            raise not_found(f"an Organization with the login of '{login}'")
        return found

    def repository_owner(self, login: str) -> ActorView | OwnerView | None:
        return owner_by_login(self.ctx, login)

    def search(self, query: str, type: str, **page: Any) -> Any:
        return search(self.ctx, query, type, **page)


class Payload(View):
    def __init__(self, ctx: Context, typename: str, mutation_id: str | None, **fields: Any):
        super().__init__(ctx)
        self.typename = typename
        self.client_mutation_id = mutation_id
        for key, value in fields.items():
            setattr(self, key, value)


class MutationRoot(View):
    """Each mutation is one backend operation, so it lands in the same event log as REST's."""

    typename = "Mutation"

    @property
    def _login(self) -> str:
        return self.ctx.viewer.login

    def add_comment(self, input: dict[str, Any]) -> Payload:
        subject = thread_by_id(self.ctx, input["subjectId"])
        row = subject.row
        try:
            comment = self.ctx.backend.issues.add_comment(
                self.ctx.session, self._login, row.repo, row.number, input["body"]
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        index = row.comment_count - 1  # the new comment is the thread's last
        edge = connections.edge("IssueCommentEdge", index, CommentView(self.ctx, comment))
        return Payload(
            self.ctx,
            "AddCommentPayload",
            input.get("clientMutationId"),
            comment_edge=edge,
            subject=thread(self.ctx, row),
        )

    def _repo(self, global_id: str) -> Repo:
        view = node(self.ctx, global_id)
        if not isinstance(view, RepositoryView):
            raise not_found(f"a node with the global id of '{global_id}'")
        return view.row

    def create_pull_request(self, input: dict[str, Any]) -> Payload:
        repo = self._repo(input["repositoryId"])
        try:
            row = self.ctx.backend.pulls.create(
                self.ctx.session,
                self._login,
                repo,
                input["title"],
                input.get("body"),
                input["headRefName"],
                input["baseRefName"],
                draft=bool(input.get("draft")),
                maintainer_can_modify=bool(input.get("maintainerCanModify")),
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return Payload(
            self.ctx,
            "CreatePullRequestPayload",
            input.get("clientMutationId"),
            pull_request=PullRequestView(self.ctx, row),
        )

    def _names(self, ids: list[str] | None, kind: type[LabelView] | type[ActorView]) -> list[str]:
        out = []
        for global_id in ids or []:
            view = node(self.ctx, global_id)
            if not isinstance(view, kind):
                raise not_found(f"a node with the global id of '{global_id}'")
            out.append(view.row.name if isinstance(view, LabelView) else view.row.login)
        return out

    def _no_nodes(self, input: dict[str, Any], *keys: str) -> None:
        """Milestones and classic projects do not exist in the world: any id names nothing."""
        for key in keys:
            value = input.get(key)
            for global_id in [value] if isinstance(value, str) else value or []:
                node(self.ctx, global_id)

    def create_issue(self, input: dict[str, Any]) -> Payload:
        repo = self._repo(input["repositoryId"])
        labels = self._names(input.get("labelIds"), LabelView)
        assignees = self._names(input.get("assigneeIds"), ActorView)
        self._no_nodes(input, "milestoneId", "projectIds")
        try:
            row = self.ctx.backend.issues.create(
                self.ctx.session,
                self._login,
                repo,
                input["title"],
                input.get("body"),
                labels=labels,
                assignees=assignees,
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return Payload(
            self.ctx,
            "CreateIssuePayload",
            input.get("clientMutationId"),
            issue=thread(self.ctx, row),
        )

    def _thread(self, global_id: str, want_pull: bool) -> IssueView | PullRequestView:
        view = thread_by_id(self.ctx, global_id)
        if isinstance(view, PullRequestView) != want_pull:
            kind = "PullRequest" if want_pull else "Issue"
            raise Fault(
                "NOT_FOUND",
                f"Could not resolve to {kind} node with the global id of '{global_id}'.",
            )
        return view

    def _update(self, view: IssueView | PullRequestView, **changes: Any) -> Issue:
        row: Issue = view.row
        if not changes:
            return row
        try:
            if isinstance(view, PullRequestView):
                self.ctx.backend.pulls.update(
                    self.ctx.session, self._login, row.repo, row.number, **changes
                )
            else:
                self.ctx.backend.issues.update(
                    self.ctx.session, self._login, row.repo, row.number, **changes
                )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return row

    def _edits(self, input: dict[str, Any]) -> dict[str, Any]:
        """The fields of an update input, in the backend's words (only those given)."""
        self._no_nodes(input, "milestoneId", "projectIds")
        changes: dict[str, Any] = {}
        for key in ("title", "body"):
            if input.get(key) is not None:
                changes[key] = input[key]
        if input.get("state") is not None:
            changes["state"] = str(input["state"]).lower()
        if input.get("labelIds") is not None:
            changes["labels"] = self._names(input["labelIds"], LabelView)
        if input.get("assigneeIds") is not None:
            changes["assignees"] = self._names(input["assigneeIds"], ActorView)
        return changes

    def close_issue(self, input: dict[str, Any]) -> Payload:
        view = self._thread(input["issueId"], False)
        changes: dict[str, Any] = {"state": "closed"}
        if input.get("stateReason"):
            changes["state_reason"] = str(input["stateReason"]).lower()
        row = self._update(view, **changes)
        return Payload(
            self.ctx,
            "CloseIssuePayload",
            input.get("clientMutationId"),
            issue=thread(self.ctx, row),
        )

    def reopen_issue(self, input: dict[str, Any]) -> Payload:
        row = self._update(self._thread(input["issueId"], False), state="open")
        return Payload(
            self.ctx,
            "ReopenIssuePayload",
            input.get("clientMutationId"),
            issue=thread(self.ctx, row),
        )

    def close_pull_request(self, input: dict[str, Any]) -> Payload:
        row = self._update(self._thread(input["pullRequestId"], True), state="closed")
        return self._pull_payload("ClosePullRequestPayload", input, row)

    def reopen_pull_request(self, input: dict[str, Any]) -> Payload:
        row = self._update(self._thread(input["pullRequestId"], True), state="open")
        return self._pull_payload("ReopenPullRequestPayload", input, row)

    def _pull_payload(self, typename: str, input: dict[str, Any], row: Issue) -> Payload:
        return Payload(
            self.ctx,
            typename,
            input.get("clientMutationId"),
            pull_request=thread(self.ctx, row),
            actor=ActorView(self.ctx, self.ctx.viewer),
        )

    def update_issue(self, input: dict[str, Any]) -> Payload:
        view = self._thread(input["id"], False)
        row = self._update(view, **self._edits(input))
        return Payload(
            self.ctx,
            "UpdateIssuePayload",
            input.get("clientMutationId"),
            issue=thread(self.ctx, row),
            actor=ActorView(self.ctx, self.ctx.viewer),
        )

    def update_pull_request(self, input: dict[str, Any]) -> Payload:
        view = self._thread(input["pullRequestId"], True)
        changes = self._edits(input)
        if input.get("baseRefName") is not None:
            changes["base"] = input["baseRefName"]
        if input.get("maintainerCanModify") is not None:
            changes["maintainer_can_modify"] = bool(input["maintainerCanModify"])
        row = self._update(view, **changes)
        return self._pull_payload("UpdatePullRequestPayload", input, row)

    def mark_pull_request_ready_for_review(self, input: dict[str, Any]) -> Payload:
        row = self._update(self._thread(input["pullRequestId"], True), draft=False)
        return self._pull_payload("MarkPullRequestReadyForReviewPayload", input, row)

    def convert_pull_request_to_draft(self, input: dict[str, Any]) -> Payload:
        row = self._update(self._thread(input["pullRequestId"], True), draft=True)
        return self._pull_payload("ConvertPullRequestToDraftPayload", input, row)

    def merge_pull_request(self, input: dict[str, Any]) -> Payload:
        view = self._thread(input["pullRequestId"], True)
        row: Issue = view.row
        try:
            self.ctx.backend.pulls.merge(
                self.ctx.session,
                self._login,
                row.repo,
                row.number,
                method=str(input.get("mergeMethod") or "MERGE").lower(),
                commit_title=input.get("commitHeadline"),
                commit_message=input.get("commitBody"),
                sha=input.get("expectedHeadOid"),
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return self._pull_payload("MergePullRequestPayload", input, row)

    def add_pull_request_review(self, input: dict[str, Any]) -> Payload:
        view = self._thread(input["pullRequestId"], True)
        row: Issue = view.row
        try:
            review = self.ctx.backend.pulls.submit_review(
                self.ctx.session,
                self._login,
                row.repo,
                row.number,
                input.get("event"),
                input.get("body"),
                commit_id=input.get("commitOID"),
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        index = self.ctx.backend.pulls.review_index(self.ctx.session, review, self._login)
        edge = connections.edge("PullRequestReviewEdge", index, ReviewView(self.ctx, review))
        return Payload(
            self.ctx,
            "AddPullRequestReviewPayload",
            input.get("clientMutationId"),
            pull_request_review=ReviewView(self.ctx, review),
            review_edge=edge,
        )

    # ------------------------------------------------------------------ refs and commits
    # Each moves a branch through the same backend operations as REST and git do, so each
    # records the same github.branch.moved event (fakes/github/backend_refs.py).

    def _ref(self, global_id: str) -> RefView:
        view = node(self.ctx, global_id)
        if not isinstance(view, RefView):
            raise not_found(f"a node with the global id of '{global_id}'")
        return view

    def _committable(self, branch: dict[str, Any]) -> tuple[Repo, str]:
        """The repository and branch name a ``CommittableBranch`` names: by the Ref's id,
        or by ``repositoryNameWithOwner`` and ``branchName`` (``refs/heads/`` optional)."""
        if branch.get("id"):
            ref = self._ref(branch["id"])
            return ref.repo, ref.branch.name
        full, name = branch.get("repositoryNameWithOwner"), branch.get("branchName")
        if not full or not name:
            raise Fault(
                "UNPROCESSABLE",
                "Either a branch id or both repositoryNameWithOwner and branchName must be given.",
            )
        owner, _, repo_name = str(full).partition("/")
        repo = find_repository(self.ctx, owner, repo_name)
        if repo is None:
            raise not_found(f"a Repository with the name '{full}'")
        return repo.row, str(name).removeprefix("refs/heads/")

    def create_commit_on_branch(self, input: dict[str, Any]) -> Payload:
        repo, name = self._committable(input["branch"])
        changes = input.get("fileChanges") or {}
        added: dict[str, bytes] = {}
        for addition in changes.get("additions") or []:
            try:
                added[addition["path"]] = base64.b64decode(addition["contents"], validate=True)
            except (binascii.Error, ValueError):
                raise Fault(
                    "UNPROCESSABLE", f"The contents of {addition['path']} are not base64."
                ) from None
        deleted = [d["path"] for d in changes.get("deletions") or []]
        message = input["message"]
        try:
            sha = self.ctx.backend.refs.commit_on_branch(
                self.ctx.session,
                self._login,
                repo,
                name,
                input["expectedHeadOid"],
                added,
                deleted,
                message["headline"],
                message.get("body"),
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return Payload(
            self.ctx,
            "CreateCommitOnBranchPayload",
            input.get("clientMutationId"),
            commit=CommitView(self.ctx, repo, sha),
            ref=self._ref_view(repo, name),
        )

    def _ref_view(self, repo: Repo, name: str) -> RefView | None:
        branch = self.ctx.backend.repos.branch(self.ctx.session, repo, name)
        return None if branch is None else RefView(self.ctx, repo, branch)

    def _write_ref(
        self, repo: Repo, ref: str, sha: str | None, *, create: bool = False, force: bool = False
    ) -> None:
        try:
            self.ctx.backend.refs.write(
                self.ctx.session, self._login, repo, ref, sha, create=create, force=force
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc

    def create_ref(self, input: dict[str, Any]) -> Payload:
        repo = self._repo(input["repositoryId"])
        name = str(input["name"])
        self._write_ref(repo, name, input["oid"], create=True)
        # The world's Ref objects are its branches: a tag made here exists in git, unnamed.
        branch = name.removeprefix("refs/heads/") if name.startswith("refs/heads/") else None
        ref = self._ref_view(repo, branch) if branch else None
        return Payload(self.ctx, "CreateRefPayload", input.get("clientMutationId"), ref=ref)

    def update_ref(self, input: dict[str, Any]) -> Payload:
        view = self._ref(input["refId"])
        repo, name = view.repo, view.branch.name
        self._write_ref(repo, f"refs/heads/{name}", input["oid"], force=bool(input.get("force")))
        return Payload(
            self.ctx,
            "UpdateRefPayload",
            input.get("clientMutationId"),
            ref=self._ref_view(repo, name),
        )

    def delete_ref(self, input: dict[str, Any]) -> Payload:
        view = self._ref(input["refId"])
        self._write_ref(view.repo, f"refs/heads/{view.branch.name}", None)
        return Payload(self.ctx, "DeleteRefPayload", input.get("clientMutationId"))

    def update_refs(self, input: dict[str, Any]) -> Payload:
        """Every update checked first (``beforeOid``, zeros for "must not exist"), then made:
        one refused leaves every ref as it was."""
        repo = self._repo(input["repositoryId"])
        git = self.ctx.backend.git
        planned: list[tuple[str, str | None, bool, bool]] = []
        with self.ctx.backend.push_lock:
            heads = git.heads(repo.full_name)
        for update in input["refUpdates"]:
            name, after = str(update["name"]), str(update["afterOid"])
            current = heads.get(name)
            before = update.get("beforeOid")
            if before is not None and before != (current or ZERO):
                raise Fault(
                    "STALE_DATA",
                    f"Expected {name} to point to {before} but it points to {current or ZERO}.",
                )
            if after == ZERO and current is None:
                raise Fault("UNPROCESSABLE", f"Reference {name} does not exist.")
            if after != ZERO and git.resolve(repo.full_name, after) != after:
                raise Fault("UNPROCESSABLE", "Object does not exist")
            forward = (
                current is None or after == ZERO or git.is_ancestor(repo.full_name, current, after)
            )
            if not forward and not update.get("force"):
                raise Fault("UNPROCESSABLE", f"Update of {name} is not a fast forward")
            planned.append(
                (name, None if after == ZERO else after, current is None, bool(update.get("force")))
            )
        for name, sha, create, force in planned:
            self._write_ref(repo, name, sha, create=create, force=force)
        return Payload(self.ctx, "UpdateRefsPayload", input.get("clientMutationId"))

    def _labelable(self, input: dict[str, Any]) -> tuple[IssueView | PullRequestView, list[str]]:
        view = thread_by_id(self.ctx, input["labelableId"])
        return view, self._names(input["labelIds"], LabelView)

    def add_labels_to_labelable(self, input: dict[str, Any]) -> Payload:
        view, names = self._labelable(input)
        try:
            self.ctx.backend.issues.add_labels(
                self.ctx.session, self._login, view.row.repo, view.row.number, names
            )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return Payload(
            self.ctx,
            "AddLabelsToLabelablePayload",
            input.get("clientMutationId"),
            labelable=thread(self.ctx, view.row),
        )

    def remove_labels_from_labelable(self, input: dict[str, Any]) -> Payload:
        view, names = self._labelable(input)
        current = {lb.name.lower() for lb in view.row.labels}
        try:
            for name in names:
                if name.lower() in current:
                    self.ctx.backend.issues.remove_label(
                        self.ctx.session, self._login, view.row.repo, view.row.number, name
                    )
        except GitHubError as exc:
            raise Fault.from_backend(exc) from exc
        return Payload(
            self.ctx,
            "RemoveLabelsFromLabelablePayload",
            input.get("clientMutationId"),
            labelable=thread(self.ctx, view.row),
        )


# ---------------------------------------------------------------------------- binding


@cache
def _snake(name: str) -> str:
    return convert_camel_case_to_snake(name)


def resolve_field(parent: Any, info: GraphQLResolveInfo[Any], **args: Any) -> Any:
    """The one resolver: the parent view's attribute named after the field."""
    name = _snake(info.field_name)
    try:
        value = getattr(parent, name)
    except AttributeError:
        raise MissingResolver(
            f"{info.parent_type.name}.{info.field_name} is in the schema but not implemented"
        ) from None
    if callable(value):
        return value(**{_snake(k): v for k, v in args.items()})
    return value


def resolve_type(obj: Any, info: GraphQLResolveInfo[Any], abstract_type: Any) -> str:
    typename = getattr(obj, "typename", None)
    if not typename:
        raise MissingResolver(f"no GraphQL type for {type(obj).__name__}")
    return str(typename)


class ViewBinding(SchemaBindable):
    """Bind every object field to :func:`resolve_field` and every abstract type to its view."""

    def bind_to_schema(self, schema: GraphQLSchema) -> None:
        for gtype in schema.type_map.values():
            if gtype.name.startswith("__"):
                continue
            if isinstance(gtype, GraphQLObjectType):
                for field in gtype.fields.values():
                    field.resolve = resolve_field
            elif hasattr(gtype, "resolve_type"):
                gtype.resolve_type = resolve_type


@cache
def schema() -> GraphQLSchema:
    """The executable schema (built once per process; it holds no state)."""
    return make_executable_schema(SCHEMA_PATH.read_text(), ViewBinding(), *scalars())


def roots(ctx: Context) -> dict[str, View]:
    return {"query": QueryRoot(ctx), "mutation": MutationRoot(ctx)}
