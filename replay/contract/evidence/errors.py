"""Errors: each error the fakes can be made to answer, provoked through their public APIs
and held to what the vendors publish about that error.

The shape families check the answers the scenarios happen to get; a fake whose refusals drift
(a 404 answered 200 with an empty body, a 422 answered 400, an error body without ``message``,
a GraphQL ``NOT_FOUND`` without its ``path``, a Slack ``ok: false`` sent with HTTP 404) mostly
passes them, as few scenario steps fail. Here each refusal is one check, in one report per
service:

- **GitHub REST** (one check per provocation, subject ``<METHOD> <GitHub's path template>
  (<what>) -> <status>``): no token, and a token GitHub never issued (401; the fake takes
  any token, a known gap); an unknown repository, issue, pull request, ref,
  label, file, branch, user, a label the issue does not have, a comment on no issue (404);
  a label with an invalid colour (octokit's recorded ``errors`` scenario: its message and
  ``errors`` must be as recorded) or a name in use, an issue without a title, a pull request
  with no commits between its branches, a ref that exists, a search without ``q``, an unknown
  ``merge_method`` (422); a merge whose ``sha`` is not the head (409) or of a merged pull
  request (405); a body that does not parse as JSON, with a JSON ``Content-Type`` and with the
  form type ``curl -d`` sends (400). Every answer must have the status expected, and that
  status must be one GitHub's OpenAPI description declares for the operation (githubkit's
  generated method, its ``error_models``); ``Content-Type`` as octokit recorded it on a real
  422; the ``X-RateLimit-*`` headers the recording carries, with integer values and the
  ``X-RateLimit-Resource`` octokit recorded for that kind of call (``core``; ``search`` for
  search); a JSON object with a non-empty ``message``, a ``documentation_url`` on
  docs.github.com and, where sent, ``status`` the HTTP status as a string (``BasicError``);
  and the body valid, strictly, against the model the description gives for that status
  (``BasicError``, ``ValidationError``, the merge's own 405 and 409 models), each 422
  ``errors[]`` item with a ``code`` from the codes GitHub's description enumerates and the
  ``resource``/``field`` expected.
- **GitHub GraphQL**: a field the type does not have, an argument the field does not take, an
  argument of the wrong type, a document that does not parse (each must also be refused by
  GitHub's vendored schema, or by the GraphQL parser, at the same place): HTTP 200, ``errors``
  with ``message`` and ``locations`` pointing there, no ``data``. An unknown repository, issue
  number, node id, and ``addComment`` on a subject that does not exist: HTTP 200, the error's
  ``type`` ``NOT_FOUND``, its ``path`` the field's response path and its ``locations`` the
  field's place, and ``data`` null exactly where the vendored schema's nullability puts the
  null (GraphQL's null propagation). Every error is also valid against githubkit's
  ``GraphQLError`` model.
- **Linear**: an unknown issue id and an ``issueCreate`` for a team that does not exist
  (``path``, ``locations``, ``data`` null as the SDK schema's ``Issue!`` and
  ``IssuePayload!`` make it), an ``issueCreate`` without the ``teamId`` the SDK schema
  requires, a field ``User`` does not have, a document that does not parse (refused by the
  vendored schema or the parser at the same place: ``errors``, no ``data``), and no key, a
  key not shaped as Linear's, a well-formed key Linear never issued (``errors``, no ``data``;
  the last a known gap, as the fake checks a key's shape only); no answer may be a 5xx.
  Linear's own
  envelope (``errors[].extensions``, the HTTP statuses it picks) is not held to anything: no
  vendored evidence describes it (a known gap).
- **Slack** (subject ``<method> <code>``, as the spec family's error codes): an unknown
  channel, thread or message for ``conversations.history``, ``conversations.replies``,
  ``chat.update``, ``chat.delete``, ``reactions.add``, ``chat.postMessage``; no token, a token
  not shaped as Slack's, a well-formed bot token Slack never issued (a known gap: the fake
  checks the shape only), a token without the method's scopes, and a rate limit. Each answer:
  HTTP 200 (429 with an integer ``Retry-After`` for ``ratelimited``, as slack_sdk's retry
  handler reads it), JSON, valid against the method's error schema in Slack's spec (``ok:
  false``, ``error``, ``needed``/``provided``, nothing else), the code expected, and that
  code one the spec lists for the method.

Each check cites the evidence it rests on (:class:`Cite`), and a cited text the evidence no
longer holds is a problem of the check: octokit's recording, Slack's spec, the vendored
GraphQL schemas, githubkit's models and generated methods and its GraphQL models, slack_sdk's
retry handler (the last three installed packages, not vendored files). Some expectations rest
on vendor documentation that is not vendored, as the pagination family's limits do: GitHub's
GraphQL ``type`` value ``NOT_FOUND`` (octokit/graphql.js's README shows it), HTTP 200 for
Slack's ``ok: false`` (Slack's Web API docs), GitHub reading a request body as JSON whatever
its ``Content-Type`` (the curl examples of GitHub's REST docs send ``-d`` without one).

Two steps are not made through the fakes' public APIs: Slack's scopes and rate limit are set
through the fake's control plane (``/_replay/slack/``) before the call that meets them.

Known gaps: a check's problem is accepted when it matches a gap of :data:`GAPS` (this family's
own, reported stale when they match nothing) or a gap of the evidence directory's
``gaps.json`` that matches it exactly (subject and problem: Slack's gaps for ``<method>
<code>`` are shared with the spec family's error codes). This family's own gaps are not in the
``gaps.json`` files because the families reading those files whole (octokit's, the GraphQL
schemas', Slack's spec) would report them as stale.

What the fakes do not model is named on the headline, not checked: for GitHub a 403 (nothing
is refused for want of permission), a 410 (issues are never disabled or deleted) and a spent
rate limit (the ``X-RateLimit-*`` headers count requests; none is refused); for Linear a rate
limit and a forbidden action.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any, Literal

import httpx
from graphql import (
    GraphQLError,
    GraphQLNonNull,
    GraphQLObjectType,
    get_named_type,
    parse,
    validate,
)
from graphql.language import FieldNode, OperationDefinitionNode
from pydantic import BaseModel

from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.targets import DEMO, Served, Wrap, fake_target, serve_world

FAMILY = "errors"
DIRS: dict[Service, Path] = {
    "github": EVIDENCE / "octokit-fixtures",
    "linear": EVIDENCE / "linear-sdk",
    "slack": EVIDENCE / "slack-api-specs",
}
"""The vendored evidence each service's report rests on (its ``SOURCE.json``; its
``gaps.json`` is read for gaps that match a check exactly)."""

OWNER, NAME = DEMO["repo"].split("/")
R = f"/repos/{OWNER}/{NAME}"
NO_NUMBER = 987654
"""An issue and pull request number the demo repository does not have."""
NO_SHA = "0" * 40


# ----------------------------------------------------------------------------- citations

Origin = Literal[
    "octokit-fixtures",
    "githubkit",
    "githubkit operation",
    "github-graphql-schema",
    "linear-sdk",
    "slack-api-specs",
    "installed source",
]


@dataclass(frozen=True)
class Cite:
    """Where the evidence states what a check expects."""

    origin: Origin
    where: str
    """As :class:`replay.contract.evidence.writes.Cite` has it for the origins they share; a
    githubkit operation id (``issues/get``) for ``githubkit operation``; ``module:Qualname`` of
    an installed package for ``installed source``."""
    says: str
    """Words of the text there (compared with whitespace collapsed)."""

    def __str__(self) -> str:
        return f"{self.origin} {self.where}"


def octo(where: str, says: str) -> Cite:
    return Cite("octokit-fixtures", where, says)


def kit(where: str, says: str) -> Cite:
    return Cite("githubkit", where, says)


def op(where: str, says: str) -> Cite:
    return Cite("githubkit operation", where, says)


def gql(where: str, says: str) -> Cite:
    return Cite("github-graphql-schema", where, says)


def lin(where: str, says: str) -> Cite:
    return Cite("linear-sdk", where, says)


def spec(where: str, says: str) -> Cite:
    return Cite("slack-api-specs", where, says)


def src(where: str, says: str) -> Cite:
    return Cite("installed source", where, says)


def _source_text(where: str) -> str | None:
    module_name, _, qualname = where.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return inspect.getsource(obj)
    except (ImportError, AttributeError, OSError, TypeError):
        return None


def cited_text(cite: Cite) -> str | None:
    """The text at a citation's place in the evidence (None: no such place)."""
    from replay.contract.evidence import writes

    if cite.origin == "githubkit operation":
        found = operation(cite.where)
        return found.text if found is not None else None
    if cite.origin == "installed source":
        return _source_text(cite.where)
    return writes.cited_text(writes.Cite(cite.origin, cite.where, cite.says))


def _words(text: str) -> str:
    return " ".join(text.split())


def cite_problem(cite: Cite) -> str | None:
    """Why the evidence does not hold a citation (None: it does)."""
    text = cited_text(cite)
    if text is None:
        return f"cited evidence not found: {cite}"
    if _words(cite.says) not in _words(text):
        return f"cited evidence no longer says {cite.says!r}: {cite}"
    return None


# ----------------------------------------------------------------------------- GitHub's description


@dataclass(frozen=True)
class Operation:
    """A REST operation of GitHub's OpenAPI description as githubkit generates it: the
    statuses it declares for errors and their models."""

    id: str
    method: str
    template: str
    errors: Mapping[int, str]
    """Status -> githubkit's model name (its generated method's ``error_models``)."""
    docs: str
    """The operation's page on docs.github.com (its docstring's "See also")."""

    @property
    def text(self) -> str:
        declared = ", ".join(f"{s}: {m}" for s, m in sorted(self.errors.items()))
        return f"{self.id} {self.method} {self.template} error_models {declared} {self.docs}"

    def model(self, status: int) -> type[BaseModel] | None:
        from githubkit_schemas.latest import models

        name = self.errors.get(status)
        found = getattr(models, name, None) if name else None
        return found if isinstance(found, type) and issubclass(found, BaseModel) else None


def _method_of(module: Any, name: str) -> Any:
    for cls in vars(module).values():
        if inspect.isclass(cls) and cls.__module__ == module.__name__:
            fn = vars(cls).get(name)
            if inspect.isfunction(fn):
                return fn
    return None


@cache
def operation(op_id: str) -> Operation | None:
    """An operation by its id (``issues/get``), from githubkit's generated REST client of the
    latest API version; None when there is no such operation."""
    import githubkit  # noqa: F401  (registers the versions)
    from githubkit.versions import LATEST_VERSION, VERSIONS

    group, _, name = op_id.partition("/")
    try:
        module = importlib.import_module(
            f"githubkit_schemas.{VERSIONS[LATEST_VERSION]}.rest.{group.replace('-', '_')}"
        )
    except ImportError:
        return None
    fn = _method_of(module, name.replace("-", "_"))
    if fn is None:
        return None
    doc = inspect.getdoc(fn) or ""
    line = re.search(r"^(GET|POST|PUT|PATCH|DELETE) (/\S*)$", doc, re.M)
    if doc.splitlines()[:1] != [op_id] or line is None:
        return None
    declared = re.search(r"error_models=\{(.*?)\}", inspect.getsource(fn), re.S)
    errors = {
        int(status): model
        for status, model in re.findall(
            r'"(\d{3})":\s*(\w+)', declared.group(1) if declared else ""
        )
    }
    docs = re.search(r"See also: (\S+)", doc)
    return Operation(op_id, line.group(1), line.group(2), errors, docs.group(1) if docs else "")


@cache
def validation_codes() -> tuple[str, ...]:
    """The ``errors[].code`` values GitHub's description enumerates ("following GitHub REST
    API conventions", on the one 422 schema that lists them)."""
    from githubkit_schemas.latest import models

    annotation = models.AgentsTasksGetResponse422PropErrorsItems.model_fields["code"].annotation
    return tuple(str(v) for v in typing.get_args(annotation))


@cache
def recorded_error() -> Any:
    """octokit's one recorded error: ``errors`` #0, a 422 for a label with an invalid colour."""
    from replay.contract.evidence.octokit import DIR, load_interactions

    return load_interactions(DIR, "errors")[0]


@cache
def recorded_resource(scenario: str) -> str:
    """The ``X-RateLimit-Resource`` octokit recorded on a scenario's first request."""
    from replay.contract.evidence.octokit import DIR, load_interactions

    headers = load_interactions(DIR, scenario)[0].headers
    return str({k.lower(): v for k, v in headers.items()}.get("x-ratelimit-resource"))


def _rate_headers() -> list[str]:
    return sorted(
        k.lower() for k in recorded_error().headers if k.lower().startswith("x-ratelimit-")
    )


# ----------------------------------------------------------------------------- the client


class Failed(Exception):
    """A step a check needs (making the branch a provocation needs) did not work."""


DEFAULT = "default"


class Client:
    """The fakes of one served world, as a client sees them."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.target = fake_target(served)
        self.http = httpx.Client(timeout=60)
        self.n = 0

    def close(self) -> None:
        self.http.close()

    def fresh(self, what: str) -> str:
        self.n += 1
        return f"err-{what}-{self.n}"

    # ------------------------------------------------------------------ GitHub REST

    def rest(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = DEFAULT,
        content: bytes | None = None,
        content_type: str | None = "application/json",
    ) -> httpx.Response:
        headers = {"Accept": "application/vnd.github+json"}
        if token is not None:
            headers["Authorization"] = (
                f"token {self.target.github_token if token == DEFAULT else token}"
            )
        if content_type is not None and (body is not None or content is not None):
            headers["Content-Type"] = content_type
        data = content
        if data is None and body is not None:
            data = json.dumps(body).encode()
        return self.http.request(
            method, self.target.github_url + path, content=data, headers=headers
        )

    def made(self, method: str, path: str, body: Any, want: int) -> Any:
        r = self.rest(method, path, body)
        if r.status_code != want:
            raise Failed(f"{method} {path} answered {r.status_code}: {r.text[:160]}")
        return r.json() if r.content else None

    def main_sha(self) -> str:
        return str(self.made("GET", f"{R}/git/ref/heads/main", None, 200)["object"]["sha"])

    def branch(self, file: bool) -> str:
        """A new branch from ``main`` (with one new file on it when ``file``)."""
        name = self.fresh("branch")
        self.made(
            "POST", f"{R}/git/refs", {"ref": f"refs/heads/{name}", "sha": self.main_sha()}, 201
        )
        if file:
            content = "eHl6Cg=="  # "xyz\n"
            body = {"message": f"Add {name}", "content": content, "branch": name}
            self.made("PUT", f"{R}/contents/{name}.txt", body, 201)
        return name

    def pull(self) -> dict[str, Any]:
        """A new open pull request into ``main`` with one commit."""
        head = self.branch(file=True)
        body = {"title": f"Change on {head}", "head": head, "base": "main"}
        made: dict[str, Any] = self.made("POST", f"{R}/pulls", body, 201)
        return made

    # ------------------------------------------------------------------ GraphQL

    def graphql(
        self, service: Literal["github", "linear"], query: str, **variables: Any
    ) -> httpx.Response:
        if service == "github":
            url = self.target.github_url + "/graphql"
            headers = {"Authorization": f"bearer {self.target.github_token}"}
        else:
            url = self.target.linear_url
            headers = {"Authorization": self.target.linear_key}
        return self.http.post(url, json={"query": query, "variables": variables}, headers=headers)

    def linear_as(self, key: str | None, query: str) -> httpx.Response:
        headers = {} if key is None else {"Authorization": key}
        return self.http.post(self.target.linear_url, json={"query": query}, headers=headers)

    # ------------------------------------------------------------------ Slack

    def slack(self, method: str, token: str | None = DEFAULT, **args: Any) -> httpx.Response:
        headers = {}
        if token is not None:
            headers["Authorization"] = (
                f"Bearer {self.target.slack_token if token == DEFAULT else token}"
            )
        data = {k: str(v) for k, v in args.items()}
        return self.http.post(self.target.slack_url + method, data=data, headers=headers)

    def control(self, verb: str, path: str, body: Any) -> None:
        """A switch of the Slack fake's control plane (``/_replay/slack/...``)."""
        url = self.served.urls["slack"] + "/_replay/slack" + path
        r = self.http.request(verb, url, json=body)
        if r.status_code != 200:
            raise Failed(f"control {verb} {path} answered {r.status_code}: {r.text[:160]}")


# ----------------------------------------------------------------------------- judging: REST


def recorded_type() -> str:
    """The ``Content-Type`` of octokit's recorded error (``application/json;
    charset=utf-8``)."""
    return str({k.lower(): v for k, v in recorded_error().headers.items()}["content-type"])


def _same_type(got: str | None, want: str) -> bool:
    return (got or "").replace(" ", "").lower() == want.replace(" ", "").lower()


def rate_limit_problems(r: httpx.Response, resource: str) -> list[str]:
    """The ``X-RateLimit-*`` headers octokit recorded on a real error answer, each present
    with an integer value, and the resource the call counts against."""
    problems: list[str] = []
    for name in _rate_headers():
        value = r.headers.get(name)
        if value is None:
            problems.append(f"header {name} missing")
        elif name != "x-ratelimit-resource" and not value.isdigit():
            problems.append(f"header {name} is {value!r}, not a count")
    got = r.headers.get("x-ratelimit-resource")
    if got is not None and got != resource:
        problems.append(f"X-RateLimit-Resource {got!r}, expected {resource!r}")
    return problems


def model_problems(model: type[BaseModel], data: Any) -> list[str]:
    """``data`` against githubkit's model, strictly (required keys, no unknown key, types)."""
    from replay.contract.schema import strict_problems, type_problems

    return [*type_problems(model, data), *strict_problems(model, data)]


@dataclass
class RestAnswer:
    """An answer judged as a GitHub REST error: its problems, and its body for the check's own
    expectations (None when it is not an error object)."""

    problems: list[str]
    body: dict[str, Any] | None


def rest_error(r: httpx.Response, op_id: str, want: int, resource: str | None = None) -> RestAnswer:
    """A REST answer that must be GitHub's error ``want`` for the operation ``op_id``, counted
    against the rate limit ``resource`` (by default the one of octokit's recorded error,
    ``core``)."""
    operation_ = operation(op_id)
    if operation_ is None:
        return RestAnswer([f"no operation {op_id} in GitHub's OpenAPI description"], None)
    problems: list[str] = []
    if want not in operation_.errors:
        problems.append(f"GitHub's OpenAPI description declares no {want} for {op_id}")
    got = r.status_code
    if got != want:
        problems.append(f"status {got}, expected {want}")
        if not 400 <= got < 500:
            return RestAnswer(problems, None)
    if not _same_type(r.headers.get("content-type"), recorded_type()):
        problems.append(
            f"Content-Type {r.headers.get('content-type')!r}, recorded {recorded_type()!r}"
        )
    problems += rate_limit_problems(r, resource or recorded_resource("errors"))
    try:
        body = r.json()
    except ValueError:
        return RestAnswer([*problems, f"body is not JSON: {r.text[:80]!r}"], None)
    if not isinstance(body, dict):
        return RestAnswer([*problems, f"body is not a JSON object: {r.text[:80]!r}"], None)
    message = body.get("message")
    if not isinstance(message, str) or not message.strip():
        problems.append(f"$.message is {message!r}, expected a message")
    docs = body.get("documentation_url")
    if not isinstance(docs, str) or not docs.startswith("https://docs.github.com/"):
        problems.append(f"$.documentation_url is {docs!r}, expected a docs.github.com page")
    if "status" in body and body["status"] != str(got):
        problems.append(f"$.status is {body['status']!r}, expected {str(got)!r}")
    model = operation_.model(got)
    if model is not None:
        problems += model_problems(model, body)
    errors = body.get("errors")
    if got == 422 and isinstance(errors, list):
        for i, item in enumerate(errors):
            code = item.get("code") if isinstance(item, dict) else None
            if isinstance(item, dict) and code not in validation_codes():
                problems.append(f"$.errors[{i}].code {code!r} is not one of {validation_codes()}")
    return RestAnswer(problems, body)


def error_items(body: dict[str, Any] | None, want: list[dict[str, Any]]) -> list[str]:
    """The 422's ``errors`` items, each with at least the keys and values of ``want``."""
    got = (body or {}).get("errors")
    if not isinstance(got, list) or len(got) != len(want):
        return [f"$.errors is {got!r}, expected {len(want)} items like {want}"]
    problems = []
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        for key, value in w.items():
            have = g.get(key) if isinstance(g, dict) else None
            if value is str:
                if not isinstance(have, str) or not have:
                    problems.append(f"$.errors[{i}].{key} is {have!r}, expected a text")
            elif have != value:
                problems.append(f"$.errors[{i}].{key} is {have!r}, expected {value!r}")
    return problems


# ----------------------------------------------------------------------------- judging: GraphQL


def _vendor_schema(service: Literal["github", "linear"]) -> Any:
    from replay.contract.evidence.graphql_schemas import vendor_schema

    return vendor_schema(service)


def refused_at(service: Literal["github", "linear"], query: str) -> tuple[dict[str, int], str]:
    """Where the vendor refuses a document, as its error's first location: the parser's for
    one that does not parse, else the first rule of validation against the vendored schema
    that fails. Raises :class:`Failed` when the vendor's schema accepts it."""
    try:
        document = parse(query)
    except GraphQLError as exc:
        errors = [exc]
    else:
        errors = list(validate(_vendor_schema(service), document))
    if not errors or not errors[0].locations:
        raise Failed(f"the vendored {service} schema accepts the document: {query}")
    loc = errors[0].locations[0]
    return {"line": loc.line, "column": loc.column}, errors[0].message


def _operation_of(query: str) -> OperationDefinitionNode:
    for definition in parse(query).definitions:
        if isinstance(definition, OperationDefinitionNode):
            return definition
    raise Failed(f"no operation in {query}")


def field_place(query: str, path: Sequence[str]) -> dict[str, int]:
    """The location of the field at a response path (no aliases, no fragments)."""
    selections = _operation_of(query).selection_set.selections
    found: FieldNode | None = None
    for key in path:
        found = next(
            (s for s in selections if isinstance(s, FieldNode) and s.name.value == key), None
        )
        if found is None or found.loc is None:
            raise Failed(f"no field {key} in {query}")
        selections = found.selection_set.selections if found.selection_set else ()
    assert found is not None and found.loc is not None
    source = found.loc.source
    line = source.body.count("\n", 0, found.loc.start) + 1
    column = found.loc.start - (source.body.rfind("\n", 0, found.loc.start) + 1) + 1
    return {"line": line, "column": column}


def null_data(service: Literal["github", "linear"], query: str, path: Sequence[str]) -> Any:
    """The ``data`` GraphQL answers when the field at ``path`` fails, by the vendored
    schema's nullability: null at the nearest nullable field from it upwards (all of ``data``
    when there is none). The documents select one field per level."""
    schema = _vendor_schema(service)
    operation_ = _operation_of(query)
    parent: Any = (
        schema.mutation_type if operation_.operation.value == "mutation" else schema.query_type
    )
    nullable: list[bool] = []
    for key in path:
        if not isinstance(parent, GraphQLObjectType) or key not in parent.fields:
            raise Failed(f"the vendored {service} schema has no field {key}")
        kind = parent.fields[key].type
        nullable.append(not isinstance(kind, GraphQLNonNull))
        parent = get_named_type(kind)
    for depth in range(len(path) - 1, -1, -1):
        if nullable[depth]:
            data: Any = None
            for key in reversed(path[: depth + 1]):
                data = {key: data}
            return data
    return None


def graphql_errors(
    service: Literal["github", "linear"], r: httpx.Response
) -> tuple[list[str], Any]:
    """The answer's status, ``Content-Type`` and ``errors`` list (each error with a ``message``, and
    ``locations``/``path`` well formed where present; for GitHub, valid against githubkit's
    ``GraphQLError``). Returns the problems and the body (None when it has no errors)."""
    problems: list[str] = []
    if service == "github" and r.status_code != 200:
        problems.append(f"status {r.status_code}, expected 200 (GraphQL errors travel in the body)")
    if r.status_code >= 500:
        problems.append(f"status {r.status_code}: a server failure, for the caller's mistake")
    if "json" not in r.headers.get("content-type", ""):
        problems.append(f"Content-Type {r.headers.get('content-type')!r}, expected JSON")
    try:
        body = r.json()
    except ValueError:
        return [*problems, f"body is not JSON: {r.text[:80]!r}"], None
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list) or not errors:
        return [*problems, f"no errors in the answer: {r.text[:120]!r}"], None
    for i, error in enumerate(errors):
        if not isinstance(error, dict) or not isinstance(error.get("message"), str):
            problems.append(f"$.errors[{i}] has no message: {error!r}")
            continue
        where = error.get("locations")
        if "locations" in error and not (
            isinstance(where, list)
            and all(isinstance(w, dict) and set(w) == {"line", "column"} for w in where)
        ):
            problems.append(f"$.errors[{i}].locations is {where!r}")
        if "path" in error and not isinstance(error["path"], list):
            problems.append(f"$.errors[{i}].path is {error['path']!r}")
        if service == "github":
            from githubkit.graphql.models import GraphQLError as KitError

            problems += [f"$.errors[{i}]{p[1:]}" for p in model_problems(KitError, error)]
    return problems, body


def refused(service: Literal["github", "linear"], r: httpx.Response, query: str) -> list[str]:
    """A document the vendor refuses before running it: ``errors`` locating the refusal where
    the vendor's schema (or the parser) does, and no ``data``."""
    where, why = refused_at(service, query)
    problems, body = graphql_errors(service, r)
    if body is None:
        return problems
    if body.get("data") is not None:
        problems.append(f"$.data is {body['data']!r}: a document that was refused ran")
    places = [
        loc for e in body["errors"] if isinstance(e, dict) for loc in e.get("locations") or []
    ]
    if where not in places:
        problems.append(f"no error located at {where} (the vendor's refusal: {why})")
    return problems


def failed_field(
    service: Literal["github", "linear"],
    r: httpx.Response,
    query: str,
    path: list[str],
    kind: str | None = None,
) -> list[str]:
    """A document that ran and whose field at ``path`` failed: one error with that ``path``,
    the field's place and (GitHub) ``type``; ``data`` null where the vendored schema puts it."""
    want_data = null_data(service, query, path)
    problems, body = graphql_errors(service, r)
    if body is None:
        return problems
    if "data" not in body or body["data"] != want_data:
        problems.append(f"$.data is {body.get('data', '(absent)')!r}, expected {want_data!r}")
    mine = [e for e in body["errors"] if isinstance(e, dict) and e.get("path") == path]
    if not mine:
        paths = [e.get("path") for e in body["errors"] if isinstance(e, dict)]
        return [*problems, f"no error with path {path} (paths: {paths})"]
    error = mine[0]
    place = field_place(query, path)
    if error.get("locations") != [place]:
        problems.append(f"$.errors[].locations is {error.get('locations')!r}, expected {[place]}")
    if kind is not None and error.get("type") != kind:
        problems.append(f"$.errors[].type is {error.get('type')!r}, expected {kind!r}")
    return problems


# ----------------------------------------------------------------------------- judging: Slack


def slack_error(r: httpx.Response, method: str, code: str, status: int = 200) -> list[str]:
    """An ``ok: false`` answer with ``code``: the status, JSON, the method's error schema in
    Slack's spec (its ``error`` enum checked apart, worded as the spec family words it)."""
    from replay.contract.evidence.slack_spec import load_spec

    problems: list[str] = []
    if r.status_code != status:
        problems.append(f"status {r.status_code}, expected {status}")
    if not (r.headers.get("content-type") or "").startswith("application/json"):
        problems.append(f"Content-Type {r.headers.get('content-type')!r}, expected JSON")
    try:
        body = r.json()
    except ValueError:
        return [*problems, f"body is not JSON: {r.text[:80]!r}"]
    operation_ = load_spec().operation(method)
    if operation_ is None:
        return [*problems, f"{method} is not a method of the spec"]
    schema = dict(operation_.error)
    props = dict(schema.get("properties", {}))
    if "error" in props:
        props["error"] = {"type": "string"}
    schema["properties"] = props
    if isinstance(body, dict) and body.get("ok") is True:
        return [*problems, f"answered ok: true, expected ok: false with {code!r}"]
    problems += load_spec().validate(schema, body)
    got = body.get("error") if isinstance(body, dict) else None
    if got != code:
        problems.append(f"error {got!r}, expected {code!r}")
    if operation_.errors is not None and got not in operation_.errors:
        problems.append(f"not an error the spec lists for {method}")
    return problems


# ----------------------------------------------------------------------------- the checks

Step = Callable[[Client], list[str]]


@dataclass(frozen=True)
class Provoke:
    """One error provoked, and the evidence for the answer it must get."""

    service: Service
    subject: str
    cites: tuple[Cite, ...]
    step: Step


CHECKS: list[Provoke] = []
"""Every check of this family, in the order it runs."""


def check(service: Service, subject: str, *cites: Cite) -> Callable[[Step], Step]:
    def register(step: Step) -> Step:
        CHECKS.append(Provoke(service, subject, cites, step))
        return step

    return register


RECORDED = octo("errors #0", '"message": "Validation Failed"')
"""octokit's recorded 422: an error object with ``message`` and ``documentation_url``."""
STATUS = kit("BasicError.status", "str")


def rest_check(subject: str, op_id: str, says: str, *more: Cite) -> Callable[[Step], Step]:
    """A GitHub REST check citing the operation's declared error (``says``: ``404:
    BasicError``), octokit's recorded error and ``BasicError.status``."""
    return check("github", subject, op(op_id, says), RECORDED, STATUS, *more)


# ------------------------------------------------------------------ GitHub REST: 401


@rest_check("GET /user (no token) -> 401", "users/get-authenticated", "401: BasicError")
def rest_no_token(c: Client) -> list[str]:
    return rest_error(c.rest("GET", "/user", token=None), "users/get-authenticated", 401).problems


@rest_check(
    "GET /user (a token GitHub never issued) -> 401", "users/get-authenticated", "401: BasicError"
)
def rest_bad_token(c: Client) -> list[str]:
    r = c.rest("GET", "/user", token="ghp_" + "x" * 36)
    return rest_error(r, "users/get-authenticated", 401).problems


# ------------------------------------------------------------------ GitHub REST: 404


def _not_found(
    subject: str,
    op_id: str,
    path: str | Callable[[Client], str],
    method: str = "GET",
    body: Any = None,
) -> None:
    def step(c: Client) -> list[str]:
        where = path(c) if callable(path) else path
        return rest_error(c.rest(method, where, body), op_id, 404).problems

    rest_check(subject, op_id, "404: BasicError")(step)


_not_found(
    "GET /repos/{owner}/{repo} (no such repository) -> 404",
    "repos/get",
    f"/repos/{OWNER}/no-such-repository",
)
_not_found(
    "GET /repos/{owner}/{repo}/issues/{issue_number} (no such number) -> 404",
    "issues/get",
    f"{R}/issues/{NO_NUMBER}",
)
_not_found(
    "GET /repos/{owner}/{repo}/pulls/{pull_number} (no such number) -> 404",
    "pulls/get",
    f"{R}/pulls/{NO_NUMBER}",
)
_not_found(
    "GET /repos/{owner}/{repo}/git/ref/{ref} (no such branch) -> 404",
    "git/get-ref",
    f"{R}/git/ref/heads/no-such-branch",
)
_not_found(
    "GET /repos/{owner}/{repo}/labels/{name} (no such label) -> 404",
    "issues/get-label",
    f"{R}/labels/no-such-label",
)
_not_found(
    "GET /repos/{owner}/{repo}/contents/{path} (no such file) -> 404",
    "repos/get-content",
    f"{R}/contents/no/such/file.txt",
)
_not_found(
    "GET /repos/{owner}/{repo}/branches/{branch} (no such branch) -> 404",
    "repos/get-branch",
    f"{R}/branches/no-such-branch",
)
_not_found(
    "GET /users/{username} (no such user) -> 404",
    "users/get-by-username",
    "/users/no-such-user-here",
)


def _unlabelled_issue_label(c: Client) -> str:
    """The path of the label ``bug`` on a new issue that has no labels."""
    made = c.made("POST", f"{R}/issues", {"title": c.fresh("issue")}, 201)
    return f"{R}/issues/{made['number']}/labels/bug"


_not_found(
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name} (not on the issue) -> 404",
    "issues/remove-label",
    _unlabelled_issue_label,
    method="DELETE",
)
_not_found(
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments (no such issue) -> 404",
    "issues/create-comment",
    f"{R}/issues/{NO_NUMBER}/comments",
    method="POST",
    body={"body": "Nobody will read this."},
)


# ------------------------------------------------------------------ GitHub REST: 422, 409, 405, 400


@rest_check(
    "POST /repos/{owner}/{repo}/labels (invalid color, as octokit recorded) -> 422",
    "issues/create-label",
    "422: ValidationError",
    octo("errors #0", '"errors": [{"resource": "Label", "code": "invalid", "field": "color"}]'),
)
def rest_recorded_422(c: Client) -> list[str]:
    it = recorded_error()
    r = c.rest("POST", f"{R}/labels", it.body)
    answer = rest_error(r, "issues/create-label", it.status)
    problems = answer.problems
    if answer.body is None:
        return problems
    if answer.body.get("message") != it.response["message"]:
        problems.append(
            f"$.message is {answer.body.get('message')!r}, recorded {it.response['message']!r}"
        )
    problems += error_items(answer.body, it.response["errors"])
    docs = answer.body.get("documentation_url")
    current = operation("issues/create-label")
    if docs not in (it.response["documentation_url"], current.docs if current else None):
        problems.append(
            f"$.documentation_url is {docs!r}, expected the operation's page "
            f"({it.response['documentation_url']!r} as recorded, or today's)"
        )
    return problems


@rest_check(
    "POST /repos/{owner}/{repo}/labels (a name in use) -> 422",
    "issues/create-label",
    "422: ValidationError",
    kit("AgentsTasksGetResponse422PropErrorsItems.code", "already_exists"),
)
def rest_label_taken(c: Client) -> list[str]:
    name = c.made("GET", f"{R}/labels", None, 200)[0]["name"]
    answer = rest_error(c.rest("POST", f"{R}/labels", {"name": name}), "issues/create-label", 422)
    if answer.body is None:
        return answer.problems
    want = [{"resource": "Label", "field": "name", "code": "already_exists"}]
    return answer.problems + error_items(answer.body, want)


@rest_check(
    "POST /repos/{owner}/{repo}/issues (no title) -> 422",
    "issues/create",
    "422: ValidationError",
    kit("ReposOwnerRepoIssuesPostBody.title", "The title of the issue."),
)
def rest_issue_untitled(c: Client) -> list[str]:
    return rest_error(
        c.rest("POST", f"{R}/issues", {"body": "No title."}), "issues/create", 422
    ).problems


@rest_check(
    "POST /repos/{owner}/{repo}/pulls (no commits between the branches) -> 422",
    "pulls/create",
    "422: ValidationError",
    kit("AgentsTasksGetResponse422PropErrorsItems.code", "custom"),
)
def rest_pull_without_commits(c: Client) -> list[str]:
    head = c.branch(file=False)
    body = {"title": "Nothing to merge", "head": head, "base": "main"}
    answer = rest_error(c.rest("POST", f"{R}/pulls", body), "pulls/create", 422)
    if answer.body is None:
        return answer.problems
    want = [{"resource": "PullRequest", "code": "custom", "message": str}]
    return answer.problems + error_items(answer.body, want)


@rest_check(
    "POST /repos/{owner}/{repo}/git/refs (a ref that exists) -> 422",
    "git/create-ref",
    "422: ValidationError",
)
def rest_ref_exists(c: Client) -> list[str]:
    body = {"ref": "refs/heads/main", "sha": c.main_sha()}
    return rest_error(c.rest("POST", f"{R}/git/refs", body), "git/create-ref", 422).problems


@rest_check(
    "GET /search/issues (no q) -> 422",
    "search/issues-and-pull-requests",
    "422: ValidationError",
)
def rest_search_without_q(c: Client) -> list[str]:
    resource = recorded_resource("search-issues")
    r = c.rest("GET", "/search/issues")
    return rest_error(r, "search/issues-and-pull-requests", 422, resource).problems


MERGE = "pulls/merge"


@rest_check(
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (sha not the head) -> 409",
    MERGE,
    "409: ReposOwnerRepoPullsPullNumberMergePutResponse409",
    kit("ReposOwnerRepoPullsPullNumberMergePutBody.sha", "SHA that pull request head must match"),
)
def rest_merge_stale(c: Client) -> list[str]:
    number = c.pull()["number"]
    r = c.rest("PUT", f"{R}/pulls/{number}/merge", {"sha": NO_SHA})
    return rest_error(r, MERGE, 409).problems


@rest_check(
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (already merged) -> 405",
    MERGE,
    "405: ReposOwnerRepoPullsPullNumberMergePutResponse405",
)
def rest_merge_twice(c: Client) -> list[str]:
    number = c.pull()["number"]
    c.made("PUT", f"{R}/pulls/{number}/merge", {}, 200)
    return rest_error(c.rest("PUT", f"{R}/pulls/{number}/merge", {}), MERGE, 405).problems


@rest_check(
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (unknown merge_method) -> 422",
    MERGE,
    "422: ValidationError",
    kit("ReposOwnerRepoPullsPullNumberMergePutBody.merge_method", "'merge', 'squash', 'rebase'"),
)
def rest_merge_method(c: Client) -> list[str]:
    number = c.pull()["number"]
    r = c.rest("PUT", f"{R}/pulls/{number}/merge", {"merge_method": "octopus"})
    return rest_error(r, MERGE, 422).problems


@rest_check(
    "POST /repos/{owner}/{repo}/issues (a body that is not JSON) -> 400",
    "issues/create",
    "400: BasicError",
)
def rest_bad_json(c: Client) -> list[str]:
    r = c.rest("POST", f"{R}/issues", content=b'{"title": "unfinished')
    return rest_error(r, "issues/create", 400).problems


@rest_check(
    "POST /repos/{owner}/{repo}/issues (not JSON, sent as curl -d sends it) -> 400",
    "issues/create",
    "400: BasicError",
)
def rest_bad_form_json(c: Client) -> list[str]:
    r = c.rest(
        "POST",
        f"{R}/issues",
        content=b'{"title": "unfinished',
        content_type="application/x-www-form-urlencoded",
    )
    return rest_error(r, "issues/create", 400).problems


# ------------------------------------------------------------------ GitHub GraphQL

GRAPHQL_ERROR = src("githubkit.graphql.models:GraphQLError", "path: list[int | str] | None = None")
GRAPHQL_TYPE = src("githubkit.graphql.models:GraphQLError", "type: str | None = None")
ERRORS_IN_BODY = src(
    "githubkit.graphql:GraphQLNamespace.parse_graphql_response", "if response_data.errors:"
)
REPO_ARGS = f'owner: "{OWNER}", name: "{NAME}"'


def _gh_refused(subject: str, query: str, *cites: Cite) -> None:
    def step(c: Client) -> list[str]:
        return refused("github", c.graphql("github", query), query)

    check("github", subject, ERRORS_IN_BODY, GRAPHQL_ERROR, *cites)(step)


_gh_refused(
    "GraphQL query: a field the type does not have (User.nope) -> errors, no data",
    "query { viewer { login nope } }",
    gql("Query.viewer", "The currently authenticated user."),
)
_gh_refused(
    "GraphQL query: an argument the field does not take (repository(bogus:)) -> errors, no data",
    f"query {{ repository({REPO_ARGS}, bogus: 1) {{ id }} }}",
    gql("Query.repository", "Lookup a given repository by the owner and repository name."),
)
_gh_refused(
    "GraphQL query: an argument of the wrong type (issue(number: String)) -> errors, no data",
    f'query {{ repository({REPO_ARGS}) {{ issue(number: "one") {{ id }} }} }}',
    gql("Repository.issue(number:)", "The number for the issue to be returned."),
)
_gh_refused(
    "GraphQL document that does not parse -> errors, no data",
    "query { viewer { login ",
)


def _gh_missing(subject: str, query: str, path: list[str], *cites: Cite) -> None:
    def step(c: Client) -> list[str]:
        return failed_field("github", c.graphql("github", query), query, path, "NOT_FOUND")

    check("github", subject, ERRORS_IN_BODY, GRAPHQL_ERROR, GRAPHQL_TYPE, *cites)(step)


_gh_missing(
    "GraphQL query repository (no such repository) -> NOT_FOUND, data.repository null",
    f'query {{ repository(owner: "{OWNER}", name: "no-such-repository") {{ id }} }}',
    ["repository"],
    gql("Query.repository", "Lookup a given repository by the owner and repository name."),
)
_gh_missing(
    "GraphQL query repository.issue (no such number) -> NOT_FOUND, data.repository.issue null",
    f"query {{ repository({REPO_ARGS}) {{ issue(number: {NO_NUMBER}) {{ id }} }} }}",
    ["repository", "issue"],
    gql("Repository.issue", "Returns a single issue from the current repository by number."),
)
_gh_missing(
    "GraphQL query node (an id that names nothing) -> NOT_FOUND, data.node null",
    'query { node(id: "MDU6SXNzdWU5ODc2NTQzMjE=") { id } }',
    ["node"],
    gql("Query.node", "Fetches an object given its ID."),
)
_gh_missing(
    "GraphQL mutation addComment (no such subject) -> NOT_FOUND, data.addComment null",
    'mutation { addComment(input: {subjectId: "MDU6SXNzdWU5ODc2NTQzMjE=", body: "x"}) '
    "{ clientMutationId } }",
    ["addComment"],
    gql("AddCommentInput.subjectId", "The Node ID of the subject to modify."),
)


# ------------------------------------------------------------------ Linear

NO_ID = "00000000-0000-4000-8000-000000000000"
"""A UUID that names nothing in any world."""


@check(
    "linear",
    "query issue (no such id) -> errors[].path [issue], data null",
    lin("Query.issue", "One specific issue, looked up by its unique identifier."),
)
def linear_no_issue(c: Client) -> list[str]:
    query = f'query {{ issue(id: "{NO_ID}") {{ id title }} }}'
    return failed_field("linear", c.graphql("linear", query), query, ["issue"])


@check(
    "linear",
    "mutation issueCreate (no such team) -> errors[].path [issueCreate], data null",
    lin("IssueCreateInput.teamId", "The identifier of the team associated with the issue."),
    lin("Mutation.issueCreate", "Creates a new issue."),
)
def linear_no_team(c: Client) -> list[str]:
    query = (
        f'mutation {{ issueCreate(input: {{teamId: "{NO_ID}", title: "Nowhere"}}) {{ success }} }}'
    )
    return failed_field("linear", c.graphql("linear", query), query, ["issueCreate"])


def _linear_refused(subject: str, query: str, *cites: Cite) -> None:
    def step(c: Client) -> list[str]:
        return refused("linear", c.graphql("linear", query), query)

    check("linear", subject, *cites)(step)


_linear_refused(
    "mutation issueCreate (no teamId) -> errors, no data",
    'mutation { issueCreate(input: {title: "Teamless"}) { success } }',
    lin("IssueCreateInput.teamId", "The identifier of the team associated with the issue."),
)
_linear_refused(
    "query: a field the type does not have (User.nope) -> errors, no data",
    "query { viewer { id nope } }",
    lin("Query.viewer", "The currently authenticated user making the API request."),
)
_linear_refused("document that does not parse -> errors, no data", "query { viewer { id ")


def _linear_unauthenticated(subject: str, key: str | None) -> None:
    def step(c: Client) -> list[str]:
        problems, body = graphql_errors("linear", c.linear_as(key, "query { viewer { id } }"))
        if body is not None and body.get("data") is not None:
            problems.append(f"$.data is {body['data']!r}: answered without authentication")
        return problems

    check(
        "linear",
        subject,
        lin("Query.viewer", "The currently authenticated user making the API request."),
    )(step)


_linear_unauthenticated("query viewer (no Authorization) -> errors, no data", None)
_linear_unauthenticated(
    "query viewer (a key that is not a Linear key) -> errors, no data", "not-a-linear-key"
)
_linear_unauthenticated(
    "query viewer (a well-formed key Linear never issued) -> errors, no data",
    "lin_api_" + "x" * 40,
)

LINEAR_ENVELOPE = "errors[].extensions and HTTP status (Linear's error envelope)"


@check("linear", LINEAR_ENVELOPE, lin("Query.issue", "One specific issue"))
def linear_envelope(c: Client) -> list[str]:
    query = f'query {{ issue(id: "{NO_ID}") {{ id }} }}'
    r = c.graphql("linear", query)
    problems, body = graphql_errors("linear", r)
    errors = (body or {}).get("errors") or []
    seen = sorted({k for e in errors if isinstance(e, dict) for k in e.get("extensions") or {}})
    return [
        *problems,
        "not checked: no vendored evidence describes Linear's error envelope "
        f"(HTTP {r.status_code}, extensions {seen})",
    ]


# ------------------------------------------------------------------ Slack

UNKNOWN_TS = "1000000000.000100"
"""A timestamp no message of the demo has."""


def _slack(
    method: str,
    code: str,
    args: Callable[[Client], dict[str, Any]],
    token: str | None = DEFAULT,
    what: str = "",
    cite: Cite | None = None,
) -> None:
    def step(c: Client) -> list[str]:
        return slack_error(c.slack(method, token, **args(c)), method, code)

    subject = f"{method} {code}" + (f" ({what})" if what else "")
    check("slack", subject, cite or spec(f"{method} errors", code))(step)


def _in_channel(**extra: str) -> Callable[[Client], dict[str, Any]]:
    return lambda c: {"channel": c.target.channel, **extra}


_slack("conversations.history", "channel_not_found", lambda c: {"channel": "C0NOSUCHCH"})
_slack("conversations.replies", "thread_not_found", _in_channel(ts=UNKNOWN_TS))
_slack("chat.update", "message_not_found", _in_channel(ts=UNKNOWN_TS, text="Edited."))
_slack("chat.delete", "message_not_found", _in_channel(ts=UNKNOWN_TS))
_slack("reactions.add", "message_not_found", _in_channel(timestamp=UNKNOWN_TS, name="eyes"))
_slack("chat.postMessage", "channel_not_found", lambda c: {"channel": "C0NOSUCHCH", "text": "Hi."})
_slack(
    "chat.postMessage",
    "thread_not_found",
    _in_channel(thread_ts=UNKNOWN_TS, text="Re."),
    cite=spec("chat.postMessage thread_ts", "Provide another message's `ts` value"),
)
_slack("conversations.history", "not_authed", _in_channel(), token=None)
_slack("conversations.history", "invalid_auth", _in_channel(), token="not-a-slack-token")
_slack(
    "conversations.history",
    "invalid_auth",
    _in_channel(),
    token="xoxb-" + "0" * 12 + "-never-issued",
    what="a well-formed bot token Slack never issued",
)


@check(
    "slack",
    "conversations.history missing_scope",
    spec("conversations.history errors", "missing_scope"),
)
def slack_missing_scope(c: Client) -> list[str]:
    token = "xoxb-errors-without-scopes"
    c.control("PUT", "/scopes", {"token": token, "scopes": ["chat:write"]})
    r = c.slack("conversations.history", token, channel=c.target.channel)
    problems = slack_error(r, "conversations.history", "missing_scope")
    body = r.json() if "json" in r.headers.get("content-type", "") else {}
    for key in ("needed", "provided"):
        if not isinstance(body, dict) or not isinstance(body.get(key), str):
            problems.append(f"$.{key} is {body.get(key) if isinstance(body, dict) else None!r}")
    if isinstance(body, dict) and not body.get("needed"):
        problems.append("$.needed names no scope")
    return problems


@check(
    "slack",
    "conversations.list ratelimited",
    src(
        "slack_sdk.http_retry.builtin_handlers:RateLimitErrorRetryHandler",
        "return response is not None and response.status_code == 429",
    ),
    src(
        "slack_sdk.http_retry.builtin_handlers:RateLimitErrorRetryHandler",
        'if k.lower() == "retry-after":',
    ),
)
def slack_rate_limited(c: Client) -> list[str]:
    c.control("POST", "/ratelimit", {"method": "conversations.list", "times": 1, "retry_after": 7})
    r = c.slack("conversations.list")
    problems = slack_error(r, "conversations.list", "ratelimited", status=429)
    after = r.headers.get("retry-after")
    if after is None or not after.isdigit():
        problems.append(f"Retry-After is {after!r}, expected whole seconds")
    return problems


# ----------------------------------------------------------------------------- known gaps

GAPS: dict[Service, tuple[KnownGap, ...]] = {
    "github": (
        KnownGap(
            subject="GET /user (a token GitHub never issued) -> 401",
            problem="status 200, expected 401*",
            why="GitHub refuses a token it never issued with 401 (its description declares 401 "
            "for GET /user: https://docs.github.com/rest/users/users#get-the-authenticated-user, "
            "githubkit's users/get-authenticated). The GitHub fake has one identity, the "
            "snapshot's viewer, and takes any non-empty token as theirs "
            "(fakes/github/backend.py GitHubBackend.authenticate: `token X`, `Bearer X` and Basic "
            "alike): it keeps no list of issued tokens to refuse one against. A request without "
            "a token is refused (401, checked).",
        ),
        KnownGap(
            subject="*",
            problem="$.status: not a field of *",
            why="GitHub sends `status` (the HTTP status as a string) in REST error bodies: a 422 "
            'body it sent in 2026 carries "status": "422" '
            "(https://github.com/r-lib/gh/issues/229). Its description "
            "(https://github.com/github/rest-api-description) lists `status` in BasicError but "
            "not yet in ValidationError (422) nor in pulls/merge's own 405 and 409 schemas (the "
            "same difference as octokit-fixtures/gaps.json's entry for `errors #0`); that GitHub "
            "sends it on those 405 and 409 answers too is unverified here.",
        ),
    ),
    "linear": (
        KnownGap(
            subject="query viewer (a well-formed key Linear never issued) -> errors, no data",
            problem="no errors in the answer: *",
            why="Linear refuses a key it never issued (its SDK turns such a refusal, typed "
            "`authentication error` or any 4xx status but 403 and 429 without a type, into "
            "AuthenticationLinearError: "
            "https://github.com/linear/linear/blob/0942ab72cbbd3abd9053161810de1d0065f570f0/"
            "packages/sdk/src/error.ts). The Linear fake checks a key's shape only "
            "(fakes/linear/backend.py LinearBackend.authenticate: a personal key `lin_api_...` "
            "bare, an OAuth token `lin_oauth_...` after Bearer) unless its world is given the "
            "keys it issued (`api_keys`), as the demo world is not. A key of the wrong shape, "
            "and no key, are refused (both checked).",
        ),
        KnownGap(
            subject=LINEAR_ENVELOPE,
            problem="not checked: no vendored evidence describes Linear's error envelope*",
            why="The vendored linear-sdk files (packages/sdk/src/schema.graphql and "
            "_generated_documents.graphql) describe types and operations, not how errors "
            "travel; the envelope the fake sends (fakes/linear/errors.py: extensions.type, "
            "code, statusCode, userError, userPresentableMessage; HTTP 400 for a refused "
            "document, 401 without a valid key, 200 for a failed field) follows the SDK's "
            "error.ts (https://github.com/linear/linear/blob/"
            "0942ab72cbbd3abd9053161810de1d0065f570f0/packages/sdk/src/error.ts: "
            "extensions.type, userError, userPresentableMessage, and the HTTP status when there "
            "is no type), which is not vendored; the statuses Linear picks are unverified. What "
            "the vendored schema and GraphQL's rules settle (message, path, locations, data) is "
            "checked.",
        ),
    ),
    "slack": (
        KnownGap(
            subject="conversations.history invalid_auth (a well-formed bot token *)",
            problem="answered ok: true, expected ok: false with 'invalid_auth'*",
            why="Slack answers invalid_auth to a token it never issued (web-api/"
            "slack_web_openapi_v2_without_examples.json lists it for conversations.history; "
            '"Either the provided token is invalid or...": '
            "https://docs.slack.dev/reference/methods/conversations.history). The Slack fake "
            "takes any token of a known shape as the world's bot (`xoxb-...`) or its user "
            "(`xoxp-...`) (fakes/slack/access.py Access.authenticate): it keeps no list of "
            "issued tokens. Any other token gets invalid_auth, and no token not_authed (both "
            "checked).",
        ),
    ),
}
"""This family's own known gaps (see the module docstring for why not in ``gaps.json``)."""


# ----------------------------------------------------------------------------- running


@dataclass
class ErrorsReport(Report):
    """A service's report: its headline also names the errors the fake does not model."""

    not_modelled: tuple[str, ...] = field(default_factory=tuple)

    def headline(self) -> str:
        if not self.not_modelled:
            return super().headline()
        return f"{super().headline()}; not modelled: {', '.join(self.not_modelled)}"


NOT_MODELLED: dict[Service, tuple[str, ...]] = {
    "github": (
        "403 (nothing is refused for want of permission)",
        "410 (issues are never disabled or deleted)",
        "a spent rate limit (X-RateLimit-* count requests, none is refused)",
    ),
    "linear": (
        "a rate limit (never answered)",
        "a forbidden action (nothing is refused for want of permission)",
    ),
}


SHARED = re.compile(r"not an error the spec lists for \S+")
"""A problem worded as Slack's spec family words it, so that its gaps (``<method> <code>``)
apply to it as they are: it names its evidence itself."""


def run_check(p: Provoke, client: Client) -> Check:
    """One check: its citations held to the evidence, then its provocation."""
    problems = [x for x in (cite_problem(c) for c in p.cites) if x]
    try:
        found = p.step(client)
    except Failed as exc:
        found = [str(exc)]
    except (httpx.HTTPError, AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
        found = [f"an answer the check could not use: {type(exc).__name__}: {exc}"]
    evidence = f" (evidence: {p.cites[0]})" if p.cites else ""
    problems += [x if SHARED.fullmatch(x) else f"{x}{evidence}" for x in found]
    return Check(p.subject, tuple(problems))


def _matching(gaps: Iterable[KnownGap], checks: list[Check]) -> list[KnownGap]:
    """The gaps that match one of these checks' problems (subject and problem). Of a shared
    ``gaps.json``: a difference another family already accepts, for the same reason."""
    return [
        g
        for g in gaps
        if any(
            fnmatchcase(c.subject, g.subject) and fnmatchcase(p, g.problem)
            for c in checks
            for p in c.problems
        )
    ]


SERVICES: tuple[Service, ...] = ("github", "linear", "slack")


def reports(wrap: Wrap | None = None, only: Sequence[str] | None = None) -> list[Report]:
    """The family's report per service: every check of :data:`CHECKS` (or those whose
    subject matches a pattern of ``only``) on one freshly served demo world, whose apps
    ``wrap`` may break, as tests do."""
    chosen = [p for p in CHECKS if only is None or any(fnmatchcase(p.subject, o) for o in only)]
    found: dict[Service, list[Check]] = {}
    with serve_world(wrap=wrap) as served:
        client = Client(served)
        try:
            for p in chosen:
                found.setdefault(p.service, []).append(run_check(p, client))
        finally:
            client.close()
    out: list[Report] = []
    for service in SERVICES:
        if service not in found:
            continue
        checks = found[service]
        directory = DIRS[service]
        # This family's own gaps are stale when they match nothing (on a run of some checks
        # only, those that match none of their problems are left out); borrowed ones never.
        own = list(GAPS[service])
        mine = _matching(own, checks) if only is not None else own
        borrowed = _matching(load_gaps(directory), checks)
        report = apply_gaps(service, FAMILY, load_source(directory), checks, mine + borrowed)
        report.unused_gaps = [g for g in report.unused_gaps if g not in borrowed]
        out.append(
            ErrorsReport(
                **vars(report),
                not_modelled=NOT_MODELLED.get(service, ()) if only is None else (),
            )
        )
    return out
