"""The Linear SDK's own GraphQL documents, executed: every operation of
``_generated_documents.graphql`` whose root fields the Linear fake serves, run against the fake
with realistic variables and held to the SDK's schema.

**The evidence** (``contract_tests/evidence/linear-sdk/``, see its ``SOURCE.json``): the
documents the official client (``@linear/sdk``) sends, as generated from Linear's schema, and
that schema (``schema.graphql``). The SDK documents family of :mod:`.graphql_schemas` only
*validates* them against the fake's SDL; here they are *sent*, as the SDK sends them: the
operation and every fragment it spreads (:func:`graphql.utilities.separate_operations`),
``{"query", "variables"}`` with the client's ``Authorization`` key.

**Which documents** (:func:`documents`): each operation whose root fields are all root fields
of the fake's schema (``fakes/linear/graphql/schema.graphql``, the SDL the fake executes), in
the SDK's order: one check each, subject ``<query|mutation> <operation>`` as the SDK documents
family names it. The SDK's other operations (for root fields the fake does not serve) are not
checks; the headline counts them.

**Variables** are bound to state made first through the fake's public API on a fresh world of
the demo snapshot (:func:`make_state`): an issue of the demo's team with labels, an assignee,
an estimate, three sub-issues, a history (a move to a started state, a new title), a comment
with three replies and one more comment. ``$id`` is the id of the object the root field reads
(:data:`ID_OF_ROOT`: the issue by its identifier, ``ENG-16``, as agents name issues; the team,
the assignee, the sub-issues' workflow state, the ``Bug`` label, the comment with replies by
id); ``$term`` and ``$query`` a word of the issues' titles; every optional variable that is not
bound is left out, as the SDK leaves it out when its caller does. A mutation's variables are
made by its :data:`WRITES` entry, on issues of its own. Everything runs on one world, in the
SDK's order (its queries come first, then its mutations). A required variable nothing binds makes
the document a failing check (never a silent skip), to be bound or listed in :data:`GAPS`.

**Each request** must be answered HTTP 200 without ``errors``, its variables must coerce under
the SDK's schema, and ``data`` must be valid by the document's selection set typed by the SDK's
schema (:class:`.graphql_schemas.ResponseWalker`: nullability, root fields included, scalar
types, enum values, lists, ``__typename``); every ``pageInfo`` with ``hasNextPage`` must have
an ``endCursor``.

**Connections**: a document whose operation passes ``$first`` to a connection (``issues``,
``issue_comments``, ``team_states``...) is sent once with ``first: 250`` (the fake's maximum,
:data:`.pagination.LINEAR_MAX`), which must hold the whole list and say so (and, where the
document asks for it, a ``totalCount`` of its length), then walked as the
SDK's ``fetchNext`` walks it: ``first: 2``, then ``after: pageInfo.endCursor`` until
``hasNextPage`` is false. Each page: no more nodes than ``first`` asked, no node of an earlier
page, ``hasNextPage`` true exactly when items of the whole list were left out, an
``endCursor`` when there is a next page; the pages together: the whole list, in its order.

**Mutations** (:data:`WRITES`) are sent with the inputs agents send and read back through the
SDK's own query documents: ``createIssue`` then ``issue`` shows every field it set;
``updateIssue`` (``stateId``, ``title``, ``priority``) then ``issue``; ``createComment`` then
``comment`` and ``issue_comments``; ``issueAddLabel`` and ``issueRemoveLabel`` then
``issue_labels``; ``updateIssueBatch`` then ``issue`` of each. The payload must say
``success``. A read back that differs is a problem of the mutation's check.

**Known gaps**: this family's own (:data:`GAPS`, stale when they match nothing), and the
entries of ``linear-sdk/gaps.json`` that match one of its checks: a document that asks for
fields the fake does not implement (``issue_attachments``, ``team_cycles``, ``organization``'s
workspace settings...) fails validation in the fake and is refused with HTTP 400, for the
reason that file already gives for the SDK documents family.
"""

from __future__ import annotations

import fnmatch
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    NonNullTypeNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    parse,
    print_ast,
    validate,
)
from graphql.execution.values import get_variable_values
from graphql.utilities import separate_operations

from replay.contract.evidence import (
    Check,
    KnownGap,
    Report,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.evidence.graphql_schemas import (
    LINEAR_DIR,
    SDK_DOCUMENTS,
    ResponseWalker,
    fake_schema,
    vendor_schema,
)
from replay.contract.evidence.pagination import LINEAR_MAX
from replay.contract.evidence.writes import Failed, Probe
from replay.contract.targets import ContractSetupError, Wrap, serve_world

FAMILY = "linear-sdk documents"
DIRECTORY = LINEAR_DIR
"""The SDK's ``SOURCE.json``, ``LICENSE``, documents, schema and ``gaps.json``."""
PAGE = 2
"""The page size of a walk: small, so that most lists take several pages."""
PAGES = 40
"""A walk that has not ended after this many pages is reported and stopped."""
WORD = "Tokenizer"
"""A word of the titles of the issues made for the checks: what ``searchIssues`` looks for."""


# ----------------------------------------------------------------------------- the documents


@dataclass(frozen=True)
class Document:
    """One SDK operation, with the fragments it spreads, as the SDK sends it."""

    kind: str
    """``query`` or ``mutation``."""
    name: str
    """The operation's name (``issue_comments``, ``createIssue``)."""
    roots: tuple[str, ...]
    """Its root fields (``issue``, ``issueCreate``)."""
    text: str
    """The operation and every fragment it spreads, transitively."""

    @property
    def subject(self) -> str:
        """As the SDK documents family names it: ``query issue_comments``."""
        return f"{self.kind} {self.name}"

    @property
    def rows(self) -> tuple[str, ...]:
        """Its root fields as ``replay contract coverage`` names them (``graphql query
        issue``)."""
        return tuple(f"graphql {self.kind} {r}" for r in self.roots)

    @property
    def ast(self) -> DocumentNode:
        return _parsed(self.text)


@cache
def _parsed(text: str) -> DocumentNode:
    return parse(text)


def operation(doc: DocumentNode) -> OperationDefinitionNode:
    [op] = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    return op


def served_roots() -> dict[str, frozenset[str]]:
    """``query``/``mutation`` -> the root fields of the fake's schema."""
    fake = fake_schema("linear")
    return {
        "query": frozenset(fake.query_type.fields if fake.query_type else ()),
        "mutation": frozenset(fake.mutation_type.fields if fake.mutation_type else ()),
    }


@cache
def sdk_operations() -> tuple[Document, ...]:
    """Every operation of the SDK's documents, in the SDK's order."""
    try:
        whole = parse(SDK_DOCUMENTS.read_text())
    except OSError as exc:
        raise ContractSetupError(f"{SDK_DOCUMENTS}: {exc}") from exc
    apart = separate_operations(whole)
    out = []
    for op in whole.definitions:
        if not isinstance(op, OperationDefinitionNode) or op.name is None:
            continue
        roots = tuple(s.name.value for s in op.selection_set.selections if isinstance(s, FieldNode))
        # As the SDK's generated document nodes hold it: the operation, then its fragments.
        fragments = [d for d in apart[op.name.value].definitions if d is not op]
        text = "\n\n".join(print_ast(d) for d in (op, *fragments))
        out.append(Document(op.operation.value, op.name.value, roots, text))
    return tuple(out)


def documents() -> tuple[Document, ...]:
    """The SDK operations whose root fields the fake serves, all of them (the checks)."""
    served = served_roots()
    return tuple(
        d
        for d in sdk_operations()
        if d.roots and all(r in served.get(d.kind, frozenset()) for r in d.roots)
    )


def sdk(name: str) -> Document:
    """The SDK's operation ``name`` (a read back must be one the fake serves)."""
    for d in documents():
        if d.name == name:
            return d
    raise ContractSetupError(f"the SDK has no operation {name} the fake serves")


# ----------------------------------------------------------------------------- state

Values = dict[str, Any]

ISSUE_UPDATE = (
    "mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) "
    "{ success } }"
)
COMMENT_CREATE = (
    "mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success "
    "comment { id } } }"
)


def _comment(p: Probe, issue: str, body: str, parent: str | None = None) -> str:
    input = {"issueId": issue, "body": body, **({"parentId": parent} if parent else {})}
    return str(p.linear(COMMENT_CREATE, input=input)["commentCreate"]["comment"]["id"])


def make_state(p: Probe) -> Values:
    """The state the queries read, made through the fake's public API (the client's own
    GraphQL): its ids by name."""
    team = p.team
    states: dict[str, str] = {}
    for s in team["states"]["nodes"]:
        states.setdefault(str(s["type"]), str(s["id"]))
    labels = p.label_ids()
    users = p.user_ids()
    issue = p.linear_issue(
        title=f"{WORD} drops the caret of a range",
        description="`^1.2` is read as `1.2`: the caret is lost.",
        priority=2,
        estimate=2,
        assigneeId=users[1],
        labelIds=[labels["Bug"], labels["Feature"]],
    )
    children = [
        p.linear_issue(title=f"{WORD}: {case}", parentId=issue["id"])
        for case in ("caret with a prerelease", "caret with build metadata", "caret of 0.x")
    ]
    p.linear(ISSUE_UPDATE, id=issue["id"], input={"stateId": states["started"]})
    p.linear(ISSUE_UPDATE, id=issue["id"], input={"title": f"{WORD} drops the caret of ranges"})
    first = _comment(p, issue["id"], "Reproduced on main.")
    for body in ("Same on 2.4.", "And on 2.3.", "Not on 2.2."):
        _comment(p, issue["id"], body, first)
    _comment(p, issue["id"], "Bisecting now.")
    child_state = p.read_issue(children[0]["id"])["state"]["id"]
    return {
        "team.id": team["id"],
        "state.started": states["started"],
        "state.completed": states["completed"],
        "state.id": child_state,
        "label.bug": labels["Bug"],
        "label.feature": labels["Feature"],
        "label.id": labels["Bug"],
        "user.id": users[1],
        "issue.id": issue["id"],
        "issue.identifier": issue["identifier"],
        "comment.id": first,
        "term": WORD,
    }


ID_OF_ROOT = {
    "issue": "issue.identifier",
    "team": "team.id",
    "user": "user.id",
    "workflowState": "state.id",
    "issueLabel": "label.id",
    "comment": "comment.id",
}
"""A query's root field -> the state value its ``$id`` is bound to."""
SEARCH_VARIABLES = ("term", "query")
"""``searchIssues(term:)`` and the deprecated ``issueSearch(query:)``: :data:`WORD`."""


def query_variables(doc: Document, values: Values) -> tuple[dict[str, Any], list[str]]:
    """A query's variables bound to the state, and its required variables nothing binds
    (``$name: Type!``). ``first``/``after`` are the walk's."""
    out: dict[str, Any] = {}
    unbound: list[str] = []
    for d in operation(doc.ast).variable_definitions or ():
        name = d.variable.name.value
        key = ID_OF_ROOT.get(doc.roots[0]) if name == "id" else None
        if key is None and name in SEARCH_VARIABLES:
            key = "term"
        if key is not None and key in values:
            out[name] = values[key]
        elif isinstance(d.type, NonNullTypeNode) and d.default_value is None:
            unbound.append(f"${name}: {print_ast(d.type)}")
    return out, unbound


# ----------------------------------------------------------------------------- the answer


@cache
def _vendor_invalid(text: str) -> tuple[str, ...]:
    return tuple(e.message for e in validate(vendor_schema("linear"), _parsed(text)))


def variable_problems(doc: DocumentNode, variables: Mapping[str, Any]) -> list[str]:
    """The variables coerced under the SDK's schema by the operation's definitions."""
    definitions = operation(doc).variable_definitions or ()
    got = get_variable_values(vendor_schema("linear"), definitions, dict(variables))
    return [f"variables: {e.message}" for e in got] if isinstance(got, list) else []


def _errors(errors: Any) -> str:
    items = errors if isinstance(errors, list) else [errors]
    texts = [str(e.get("message") if isinstance(e, dict) else e) for e in items]
    more = f" (and {len(texts) - 3} more)" if len(texts) > 3 else ""
    return f"errors: {'; '.join(texts[:3])}{more}"


def _cursor_problems(path: str, value: Any) -> list[str]:
    """Every ``pageInfo`` that says there is a next page must give its ``endCursor``."""
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _cursor_problems(f"{path}[{i}]", v)]
    if not isinstance(value, dict):
        return []
    problems: list[str] = []
    info = value.get("pageInfo")
    if isinstance(info, dict) and info.get("hasNextPage") is True and not info.get("endCursor"):
        problems.append(f"{path}.pageInfo: hasNextPage without an endCursor")
    for key, sub in value.items():
        problems += _cursor_problems(f"{path}.{key}", sub)
    return problems


def answer_problems(
    doc: Document, variables: Mapping[str, Any], status: int, body: Any
) -> list[str]:
    """Every way one answer to an SDK document departs from the SDK's schema."""
    invalid = [f"document: {m}" for m in _vendor_invalid(doc.text)]
    if invalid:
        return invalid
    problems = variable_problems(doc.ast, variables)
    if status != 200:
        problems.append(f"HTTP {status}, not 200")
    if not isinstance(body, dict):
        return [*problems, "body: not a JSON object"]
    problems += [
        f"body.{k}: not a key of a GraphQL response"
        for k in body
        if k not in ("data", "errors", "extensions")
    ]
    if body.get("errors"):
        problems.append(_errors(body["errors"]))
    data = body.get("data")
    if not isinstance(data, dict):
        return [*problems, "data: missing or not an object"]
    schema = vendor_schema("linear")
    op = operation(doc.ast)
    root = schema.get_root_type(op.operation)
    if root is None:
        return [*problems, f"document: the SDK's schema has no {op.operation.value} root"]
    fragments = {
        d.name.value: d for d in doc.ast.definitions if isinstance(d, FragmentDefinitionNode)
    }
    walker = ResponseWalker(schema, fragments, variables)
    walker.fields("data", root, [op.selection_set], data)
    problems += walker.problems
    problems += _cursor_problems("data", data)
    return list(dict.fromkeys(problems))


# ----------------------------------------------------------------------------- executing


class Runner:
    """The SDK's documents sent to one served world, and the state made there."""

    def __init__(self, probe: Probe, values: Values) -> None:
        self.probe = probe
        self.values = values
        self.requests = 0

    def send(self, doc: Document, variables: Mapping[str, Any]) -> tuple[int, Any]:
        self.requests += 1
        r = self.probe.client.post(
            self.probe.target.linear_url,
            json={"query": doc.text, "variables": dict(variables)},
            headers={"Authorization": self.probe.target.linear_key},
        )
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, None

    def run(
        self, doc: Document, variables: Mapping[str, Any], where: str = ""
    ) -> tuple[list[str], dict[str, Any]]:
        """Send ``doc``; its problems (each after ``where: ``) and its ``data`` (``{}`` when
        there is none)."""
        status, body = self.send(doc, variables)
        prefix = f"{where}: " if where else ""
        problems = [prefix + p for p in answer_problems(doc, variables, status, body)]
        data = body.get("data") if isinstance(body, dict) else None
        return problems, data if isinstance(data, dict) else {}


def at(value: Any, *keys: str) -> Any:
    """``value[k1][k2]...``, or None where a step is missing."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _asked(selections: SelectionSetNode, doc: DocumentNode) -> set[str]:
    """The field names a selection set asks for itself, through its fragments too."""
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    names: set[str] = set()
    for node in selections.selections:
        if isinstance(node, FieldNode):
            names.add(node.name.value)
        elif isinstance(node, InlineFragmentNode):
            names |= _asked(node.selection_set, doc)
        elif isinstance(node, FragmentSpreadNode) and node.name.value in fragments:
            names |= _asked(fragments[node.name.value].selection_set, doc)
    return names


def connection_path(doc: DocumentNode) -> tuple[str, ...] | None:
    """The response path of the connection the operation passes ``$first`` to, when the
    document asks for its ``nodes`` and ``pageInfo`` (``searchIssues_archivePayload`` passes
    ``$first`` but asks for neither: it is sent once, not walked)."""

    def find(selections: SelectionSetNode, path: tuple[str, ...]) -> tuple[str, ...] | None:
        for node in selections.selections:
            if not isinstance(node, FieldNode) or node.selection_set is None:
                continue
            key = (*path, node.alias.value if node.alias else node.name.value)
            paged = any(
                a.name.value == "first"
                and isinstance(a.value, VariableNode)
                and a.value.name.value == "first"
                for a in node.arguments or ()
            )
            if paged:
                asked = _asked(node.selection_set, doc)
                return key if {"nodes", "pageInfo"} <= asked else None
            found = find(node.selection_set, key)
            if found:
                return found
        return None

    return find(operation(doc).selection_set, ())


def _ids(nodes: list[Any]) -> list[str]:
    return [str(n.get("id")) if isinstance(n, dict) else repr(n) for n in nodes]


def walk(
    r: Runner, doc: Document, path: tuple[str, ...], variables: Mapping[str, Any]
) -> list[str]:
    """One page of :data:`LINEAR_MAX` (the whole list), then the list walked at
    :data:`PAGE` by ``after: endCursor``, each answer and each page's promises checked."""
    where = f"data.{'.'.join(path)}"
    problems, data = r.run(doc, {**variables, "first": LINEAR_MAX}, f"first {LINEAR_MAX}")
    whole = at(data, *path)
    if not isinstance(whole, dict) or not isinstance(whole.get("nodes"), list):
        # refused, or no connection: nothing to walk (the answer's problems say why)
        return problems or [f"first {LINEAR_MAX}: {where}: no nodes to walk"]
    everything = _ids(whole["nodes"])
    total = whole.get("totalCount")
    if isinstance(total, int | float) and not isinstance(total, bool) and total != len(everything):
        problems.append(
            f"first {LINEAR_MAX}: {where}.totalCount: {total:g} for a whole list of "
            f"{len(everything)}"
        )
    if at(whole, "pageInfo", "hasNextPage") is not False:
        problems.append(
            f"first {LINEAR_MAX}: {where}.pageInfo.hasNextPage: "
            f"{at(whole, 'pageInfo', 'hasNextPage')!r} on a page that holds the whole list"
        )
    seen: list[str] = []
    after: str | None = None
    for n in range(1, PAGES + 1):
        label = f"page {n} (first {PAGE})"
        page_vars = {**variables, "first": PAGE, **({"after": after} if after else {})}
        found, data = r.run(doc, page_vars, label)
        problems += found
        conn = at(data, *path)
        nodes = at(conn, "nodes")
        info = at(conn, "pageInfo")
        if not isinstance(nodes, list) or not isinstance(info, dict):
            problems.append(f"{label}: {where}: no nodes and pageInfo to walk")
            break
        got = _ids(nodes)
        if len(got) > PAGE:
            problems.append(f"{label}: {where}: {len(got)} nodes for first {PAGE}")
        again = [i for i in got if i in seen]
        if again:
            problems.append(f"{label}: {where}: {len(again)} nodes of an earlier page again")
        seen += got
        more = info.get("hasNextPage")
        if isinstance(more, bool):
            left = len(set(everything) - set(seen))
            if more != (left > 0):
                problems.append(
                    f"{label}: {where}.pageInfo.hasNextPage: {more} with {left} of "
                    f"{len(everything)} items left out"
                )
        if more is not True:
            break
        cursor = info.get("endCursor")
        if not isinstance(cursor, str) or not cursor:
            break  # answer_problems names it
        after = cursor
    else:
        problems.append(f"{where}: the walk did not end after {PAGES} pages of {PAGE}")
    if seen != everything:
        if sorted(seen) == sorted(everything):
            problems.append(f"{where}: the pages give the items in another order than one page")
        else:
            problems.append(
                f"{where}: the pages of {PAGE} give {len(seen)} items, one page of "
                f"{LINEAR_MAX} {len(everything)}"
            )
    return problems


def run_query(r: Runner, doc: Document) -> list[str]:
    variables, unbound = query_variables(doc, r.values)
    if unbound:
        return [f"variables: no realistic value bound to {', '.join(unbound)}"]
    path = connection_path(doc.ast)
    if path is None:
        return r.run(doc, variables)[0]
    return walk(r, doc, path, variables)


# ----------------------------------------------------------------------------- mutations


def differ(where: str, got: Any, want: Any) -> list[str]:
    return [] if got == want else [f"{where}: {got!r}, the mutation set {want!r}"]


def _success(payload: Any, name: str) -> list[str]:
    ok = at(payload, "success")
    return [] if ok is True else [f"data.{name}.success: {ok!r}, not true"]


def read_issue(r: Runner, id: str) -> tuple[list[str], dict[str, Any]]:
    """The issue read back through the SDK's ``issue`` document."""
    problems, data = r.run(sdk("issue"), {"id": id}, "read back by query issue")
    issue = data.get("issue")
    return problems, issue if isinstance(issue, dict) else {}


def read_labels(r: Runner, id: str) -> tuple[list[str], list[str]]:
    """The issue's labels read back through the SDK's ``issue_labels`` document."""
    problems, data = r.run(
        sdk("issue_labels"), {"id": id, "first": 50}, "read back by query issue_labels"
    )
    nodes = at(data, "issue", "labels", "nodes")
    return problems, sorted(_ids(nodes)) if isinstance(nodes, list) else []


def _issue_fields(got: dict[str, Any], want: Mapping[str, Any]) -> list[str]:
    """``want``'s fields (``state.id``, ``labelIds``...) of an issue read back."""
    problems: list[str] = []
    for path, value in want.items():
        found = at(got, *path.split("."))
        if path == "labelIds" and isinstance(found, list):
            found = sorted(found)
        problems += differ(f"read back by query issue: {path}", found, value)
    return problems


def create_issue(r: Runner, doc: Document) -> list[str]:
    v = r.values
    input = {
        "teamId": v["team.id"],
        "title": "Range intersection drops prerelease tags",
        "description": "`>=1.0.0-rc.1 <2` intersected with `^1` loses `-rc.1`.",
        "priority": 3,
        "estimate": 2,
        "stateId": v["state.started"],
        "assigneeId": v["user.id"],
        "labelIds": [v["label.bug"]],
    }
    problems, data = r.run(doc, {"input": input})
    payload = data.get("issueCreate")
    problems += _success(payload, "issueCreate")
    made = at(payload, "issue", "id")
    if not isinstance(made, str):
        return [*problems, "data.issueCreate.issue.id: no issue to read back"]
    more, got = read_issue(r, made)
    return (
        problems
        + more
        + _issue_fields(
            got,
            {
                "id": made,
                "title": input["title"],
                "description": input["description"],
                "priority": 3,
                "estimate": 2,
                "team.id": v["team.id"],
                "state.id": v["state.started"],
                "assignee.id": v["user.id"],
                "labelIds": [v["label.bug"]],
            },
        )
    )


def update_issue(r: Runner, doc: Document) -> list[str]:
    made = r.probe.linear_issue(title="Parse `~1.2.3` as a tilde range")
    before = r.probe.read_issue(made["id"])["state"]["id"]
    state = r.values["state.started"]
    if state == before:
        state = r.values["state.completed"]
    input = {
        "stateId": state,
        "title": "Parse `~1.2.3` as a tilde range (patch only)",
        "priority": 1,
    }
    problems, data = r.run(doc, {"id": made["identifier"], "input": input})
    payload = data.get("issueUpdate")
    problems += _success(payload, "issueUpdate")
    problems += differ("data.issueUpdate.issue.id", at(payload, "issue", "id"), made["id"])
    more, got = read_issue(r, made["id"])
    return (
        problems
        + more
        + _issue_fields(got, {"state.id": state, "title": input["title"], "priority": 1})
    )


def create_comment(r: Runner, doc: Document) -> list[str]:
    issue = r.probe.linear_issue(title="Document the coercion rules")
    body = "Started a draft: see the `coerce()` section."
    problems, data = r.run(doc, {"input": {"issueId": issue["identifier"], "body": body}})
    payload = data.get("commentCreate")
    problems += _success(payload, "commentCreate")
    made = at(payload, "comment", "id")
    if not isinstance(made, str):
        return [*problems, "data.commentCreate.comment.id: no comment to read back"]
    more, read = r.run(sdk("comment"), {"id": made}, "read back by query comment")
    problems += more
    problems += differ("read back by query comment: body", at(read, "comment", "body"), body)
    problems += differ(
        "read back by query comment: issueId", at(read, "comment", "issueId"), issue["id"]
    )
    more, listed = r.run(
        sdk("issue_comments"), {"id": issue["id"], "first": 50}, "read back by query issue_comments"
    )
    problems += more
    nodes = at(listed, "issue", "comments", "nodes")
    problems += differ(
        "read back by query issue_comments: ids",
        _ids(nodes) if isinstance(nodes, list) else None,
        [made],
    )
    return problems


def _label_change(add: bool, r: Runner, doc: Document) -> list[str]:
    v = r.values
    made = r.probe.linear_issue(
        title="Reject `1.2.3.4`",
        labelIds=[v["label.bug"]] if add else [v["label.bug"], v["label.feature"]],
    )
    variables = {"id": made["identifier"], "labelId": v["label.feature" if add else "label.bug"]}
    problems, data = r.run(doc, variables)
    name = "issueAddLabel" if add else "issueRemoveLabel"
    problems += _success(data.get(name), name)
    more, labels = read_labels(r, made["id"])
    want = sorted([v["label.bug"], v["label.feature"]] if add else [v["label.feature"]])
    return problems + more + differ("read back by query issue_labels: ids", labels, want)


def update_issues(r: Runner, doc: Document) -> list[str]:
    made = [r.probe.linear_issue(title=f"Release note for 2.5 ({n})")["id"] for n in (1, 2)]
    state = r.values["state.completed"]
    problems, data = r.run(doc, {"ids": made, "input": {"stateId": state}})
    payload = data.get("issueBatchUpdate")
    problems += _success(payload, "issueBatchUpdate")
    issues = at(payload, "issues")
    problems += differ(
        "data.issueBatchUpdate.issues ids",
        sorted(_ids(issues)) if isinstance(issues, list) else None,
        sorted(made),
    )
    for id in made:
        more, got = read_issue(r, id)
        problems += more + _issue_fields(got, {"state.id": state})
    return problems


Write = Callable[[Runner, Document], list[str]]

WRITES: dict[str, Write] = {
    "createIssue": create_issue,
    "updateIssue": update_issue,
    "createComment": create_comment,
    "issueAddLabel": lambda r, doc: _label_change(True, r, doc),
    "issueRemoveLabel": lambda r, doc: _label_change(False, r, doc),
    "updateIssueBatch": update_issues,
}
"""A mutation document -> how it is sent (its variables, on state of its own) and read back."""


def run_mutation(r: Runner, doc: Document) -> list[str]:
    write = WRITES.get(doc.name)
    if write is None:
        required = [
            f"${d.variable.name.value}: {print_ast(d.type)}"
            for d in operation(doc.ast).variable_definitions or ()
            if isinstance(d.type, NonNullTypeNode) and d.default_value is None
        ]
        return [f"variables: no realistic value bound to {', '.join(required) or 'it'}"]
    return write(r, doc)


# ----------------------------------------------------------------------------- the checks


@dataclass(frozen=True)
class Result:
    """One SDK document executed, and what it found."""

    document: Document
    check: Check
    requests: int
    """How many requests it took (a walk's pages, the read backs)."""


def run_document(r: Runner, doc: Document) -> Result:
    began = r.requests
    try:
        problems = (run_mutation if doc.kind == "mutation" else run_query)(r, doc)
    except Failed as exc:
        problems = [f"state for it: {exc}"]
    except (httpx.HTTPError, AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
        problems = [f"an answer the check could not use: {type(exc).__name__}: {exc}"]
    check = Check(doc.subject, tuple(dict.fromkeys(problems)))
    return Result(doc, check, r.requests - began)


def execute(wrap: Wrap | None = None, only: Iterable[str] | None = None) -> list[Result]:
    """Every document of :func:`documents` (or those whose operation name ``only`` names)
    executed, in the SDK's order, on one fresh world of the demo snapshot whose apps ``wrap``
    may break, as tests do."""
    names = None if only is None else set(only)
    chosen = [d for d in documents() if names is None or d.name in names]
    results: list[Result] = []
    with (
        serve_world(wrap=wrap) as served,
        tempfile.TemporaryDirectory(prefix="linear-sdk-") as tmp,
    ):
        probe = Probe(served, Path(tmp))
        try:
            try:
                values = make_state(probe)
            except Failed as exc:
                failed = (f"setup: {exc}",)
                return [Result(d, Check(d.subject, failed), 0) for d in chosen]
            runner = Runner(probe, values)
            results = [run_document(runner, d) for d in chosen]
        finally:
            probe.close()
    return results


GAPS: dict[str, KnownGap] = {}
"""This family's own known gaps, by the subject of the check they accept: not in
``gaps.json``, which the families reading it whole would report stale."""


def _matching(gaps: Iterable[KnownGap], checks: list[Check]) -> list[KnownGap]:
    """The gaps that match one of these checks' problems (subject and problem)."""
    return [
        g
        for g in gaps
        if any(
            fnmatch.fnmatchcase(c.subject, g.subject) and fnmatch.fnmatchcase(p, g.problem)
            for c in checks
            for p in c.problems
        )
    ]


@dataclass
class ExecutedReport(Report):
    """The family's report: its headline also says how many requests the documents took and
    how many SDK operations were not executed (their root fields are not served)."""

    requests: int = 0
    unserved: int = 0

    def headline(self) -> str:
        return (
            f"{super().headline()}; {self.requests} requests; {self.unserved} more SDK "
            "operations ask for root fields the fake does not serve (not executed)"
        )


def report_of(results: list[Result]) -> Report:
    """The report of ``results``: this family's gaps (stale when unused) and the matching
    ones of ``linear-sdk/gaps.json`` (never stale here)."""
    checks = [r.check for r in results]
    borrowed = _matching(load_gaps(DIRECTORY), checks)
    own = list(GAPS.values())
    report = apply_gaps("linear", FAMILY, load_source(DIRECTORY), checks, own + borrowed)
    report.unused_gaps = [g for g in report.unused_gaps if g not in borrowed]
    return ExecutedReport(
        **vars(report),
        requests=sum(r.requests for r in results),
        unserved=len(sdk_operations()) - len(documents()),
    )


def reports(wrap: Wrap | None = None) -> list[Report]:
    """One report: each SDK document the Linear fake serves, executed and checked."""
    return [report_of(execute(wrap))]
