"""The fakes' GraphQL held to the schemas the vendors publish: GitHub's public schema (as
octokit/graphql-schema ships it) and the Linear SDK's ``schema.graphql`` with the query
documents the official client really sends (``_generated_documents.graphql``), vendored under
``contract_tests/evidence/github-graphql-schema/`` and ``contract_tests/evidence/linear-sdk/``.

Three families of checks:

- **schema conformance** (GitHub, Linear): one check per field, argument-bearing field, input
  field and enum value the fake's SDL serves. Each must exist in the vendor's schema on the
  same type with the same type (named type, nullability and list wrappers); every argument
  the fake accepts must exist on the vendor's field with the same type, and a vendor argument
  (or input field) the fake lacks is a problem only when it is non-null without a default
  (a client would always send it). A field is deprecated (``@deprecated``, which introspection
  shows) exactly when the vendor's is. A type the fake declares to implement an interface, or
  a union member, must be so in the vendor's schema too.
- **response conformance** (GitHub, Linear): every GraphQL exchange of the contract scenarios,
  run afresh against the fake (the recordings' bodies are normalised, so their scalars are not
  the wire's): the document validates against the vendor's schema, and the response's
  ``data`` matches the document's selection set typed by the vendor's schema (nullability,
  the JSON type of each scalar, enum values, list-ness, ``__typename`` a possible type, no key
  missing or unasked), ``errors`` shaped as GraphQL errors.
- **SDK documents** (Linear): every operation of the SDK's generated documents that touches
  a type the fake serves (a root field the fake answers, or a root field whose named result
  type is an object type the fake serves), with the fragments it spreads pulled in
  transitively, validated against the fake's schema. Operations that touch no served type are
  not checks; they are counted apart, on the report's headline (:class:`DocumentsReport`).

GitHub's published schema defines two fields of ``EnterpriseOwnerInfo`` twice, which
graphql-core refuses; the first definition is kept (:func:`build_vendor_schema`). It also
deprecates fields that implement a non-deprecated interface field, which graphql-core's schema
validation refuses; the vendors' schemas are taken as valid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLAbstractType,
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    build_ast_schema,
    build_schema,
    get_named_type,
    parse,
    validate,
    value_from_ast,
)
from graphql.error import GraphQLSyntaxError
from graphql.language import ast
from graphql.pyutils import Undefined

from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    Source,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.schema import SDL
from replay.contract.targets import ContractSetupError, Wrap

GITHUB_DIR = EVIDENCE / "github-graphql-schema"
"""GitHub's public GraphQL schema, from octokit/graphql-schema."""
LINEAR_DIR = EVIDENCE / "linear-sdk"
"""The Linear SDK's schema and generated query documents, from linear/linear."""
VENDOR_SDL: dict[Service, Path] = {
    "github": GITHUB_DIR / "schema.graphql",
    "linear": LINEAR_DIR / "packages" / "sdk" / "src" / "schema.graphql",
}
SDK_DOCUMENTS = LINEAR_DIR / "packages" / "sdk" / "src" / "_generated_documents.graphql"
DIRS: dict[Service, Path] = {"github": GITHUB_DIR, "linear": LINEAR_DIR}

SCHEMA = "schema conformance"
RESPONSE = "response conformance"
DOCUMENTS = "SDK documents"

JSON_SCALARS = frozenset({"JSON", "JSONObject"})
"""Custom scalars whose value is any JSON (``JSONObject``: an object); every other custom
scalar of both vendors (dates, URIs, ids, ``BigInt``, ``HTML``...) is serialised as a string."""
DATE_SCALARS = frozenset({"DateTime", "PreciseDateTime", "GitTimestamp"})
"""Custom scalars whose string must be an ISO 8601 date-time."""


# ----------------------------------------------------------------------------- schemas


def build_vendor_schema(sdl: str) -> GraphQLSchema:
    """A vendor's schema from its SDL. A field defined twice on one type (GitHub's
    ``EnterpriseOwnerInfo.repositoryDeployKeySetting``) keeps its first definition."""
    doc = parse(sdl, no_location=True)
    defs: list[ast.DefinitionNode] = []
    for node in doc.definitions:
        fields = getattr(node, "fields", None)
        if fields:
            seen: set[str] = set()
            kept = []
            for f in fields:
                if f.name.value not in seen:
                    seen.add(f.name.value)
                    kept.append(f)
            if len(kept) != len(fields):
                node = node.__class__(
                    **{**{k: getattr(node, k) for k in node.keys}, "fields": tuple(kept)}
                )
        defs.append(node)
    # assume_valid: GitHub deprecates fields that implement non-deprecated interface fields
    # (``PullRequest.databaseId``), which graphql-core would refuse in every ``validate``.
    return build_ast_schema(ast.DocumentNode(definitions=tuple(defs)), assume_valid=True)


@cache
def vendor_schema(service: Service) -> GraphQLSchema:
    """The vendor's published schema for ``service`` (built once)."""
    path = VENDOR_SDL[service]
    try:
        return build_vendor_schema(path.read_text())
    except (OSError, GraphQLSyntaxError, TypeError) as exc:
        raise ContractSetupError(f"{path}: not a usable GraphQL schema: {exc}") from exc


@cache
def fake_schema(service: Service) -> GraphQLSchema:
    """The fake's SDL for ``service`` (``fakes/<service>/graphql/schema.graphql``)."""
    return build_schema(SDL[service].read_text())


# ----------------------------------------------------------------------------- schema conformance


def _arg_problems(
    where: str,
    ours: Mapping[str, GraphQLArgument] | Mapping[str, GraphQLInputField],
    theirs: Mapping[str, GraphQLArgument] | Mapping[str, GraphQLInputField],
    what: str,
) -> list[str]:
    problems: list[str] = []
    for name, arg in ours.items():
        vendor = theirs.get(name)
        if vendor is None:
            problems.append(f"{what} {name} of {where} is not in the vendor's schema")
        elif str(arg.type) != str(vendor.type):
            problems.append(f"{what} {name} of {where} is {arg.type}, the vendor's {vendor.type}")
    for name, vendor in theirs.items():
        if (
            name not in ours
            and isinstance(vendor.type, GraphQLNonNull)
            and (vendor.default_value is Undefined)
        ):
            problems.append(
                f"{what} {name} of {where} is required by the vendor ({vendor.type}) "
                "but the fake does not take it"
            )
    return problems


def schema_checks(fake: GraphQLSchema, vendor: GraphQLSchema) -> list[Check]:
    """One check per field, input field and enum value of ``fake`` (and one per type for its
    interfaces or union members), held to ``vendor``."""
    checks: list[Check] = []
    for name, ours in sorted(fake.type_map.items()):
        if name.startswith("__"):
            continue
        theirs = vendor.type_map.get(name)
        if theirs is None:
            checks.append(Check(name, (f"type {name} is not in the vendor's schema",)))
            continue
        if type(theirs) is not type(ours):
            kind = type(ours).__name__.removeprefix("GraphQL").removesuffix("Type")
            vkind = type(theirs).__name__.removeprefix("GraphQL").removesuffix("Type")
            checks.append(Check(name, (f"{name} is a {kind} here, a {vkind} for the vendor",)))
            continue
        if isinstance(ours, GraphQLObjectType | GraphQLInterfaceType):
            assert isinstance(theirs, GraphQLObjectType | GraphQLInterfaceType)
            extra = sorted({i.name for i in ours.interfaces} - {i.name for i in theirs.interfaces})
            if ours.interfaces:
                checks.append(
                    Check(
                        f"{name} implements",
                        tuple(f"{name} implements {i}, not so for the vendor" for i in extra),
                    )
                )
            for fname, field in ours.fields.items():
                checks.append(
                    Check(f"{name}.{fname}", tuple(_field_problems(name, fname, field, theirs)))
                )
        elif isinstance(ours, GraphQLInputObjectType):
            assert isinstance(theirs, GraphQLInputObjectType)
            for fname in ours.fields:
                problems = _arg_problems(
                    name,
                    {fname: ours.fields[fname]},
                    {k: v for k, v in theirs.fields.items() if k == fname},
                    "input field",
                )
                checks.append(Check(f"{name}.{fname}", tuple(problems)))
            required = [
                p
                for p in _arg_problems(name, {}, theirs.fields, "input field")
                if not any(p.startswith(f"input field {f} ") for f in ours.fields)
            ]
            checks.append(Check(f"{name} (required input fields)", tuple(required)))
        elif isinstance(ours, GraphQLEnumType):
            assert isinstance(theirs, GraphQLEnumType)
            for value in ours.values:
                missing = value not in theirs.values
                checks.append(
                    Check(
                        f"{name}.{value}",
                        (f"enum value {value} of {name} is not in the vendor's schema",)
                        if missing
                        else (),
                    )
                )
        elif isinstance(ours, GraphQLUnionType):
            assert isinstance(theirs, GraphQLUnionType)
            extra = sorted({t.name for t in ours.types} - {t.name for t in theirs.types})
            checks.append(
                Check(
                    f"{name} members",
                    tuple(f"{t} is not a member of {name} for the vendor" for t in extra),
                )
            )
        else:
            checks.append(Check(name, ()))  # a scalar: present in the vendor's schema
    return checks


def _field_problems(
    type_name: str,
    name: str,
    field: GraphQLField,
    vendor_type: GraphQLObjectType | GraphQLInterfaceType,
) -> list[str]:
    theirs = vendor_type.fields.get(name)
    if theirs is None:
        return [f"field {name} of {type_name} is not in the vendor's schema"]
    problems: list[str] = []
    if str(field.type) != str(theirs.type):
        problems.append(f"{type_name}.{name} is {field.type}, the vendor's {theirs.type}")
    if (field.deprecation_reason is None) != (theirs.deprecation_reason is None):
        problems.append(
            f"{type_name}.{name} is deprecated for the vendor, not here"
            if field.deprecation_reason is None
            else f"{type_name}.{name} is deprecated here, not for the vendor"
        )
    problems += _arg_problems(f"{type_name}.{name}", field.args, theirs.args, "argument")
    return problems


# ----------------------------------------------------------------------------- responses


@dataclass(frozen=True)
class _Fields:
    """The fields a selection set asks for on one runtime type: response key -> field nodes."""

    by_key: dict[str, list[FieldNode]]
    optional: frozenset[str]
    """Keys under a ``@skip``/``@include`` whose variable is not known: may be absent."""


class ResponseWalker:
    """Checks a response's ``data`` against a document typed by one schema: call
    :meth:`fields` with the root type, the operation's selection set and ``data``, then read
    :attr:`problems` (:func:`response_problems` does; so do the families that execute vendor
    documents, :mod:`.gh_documents` and :mod:`.linear_documents`)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: Mapping[str, Any] | None,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.problems: list[str] = []

    def _included(self, node: FieldNode | InlineFragmentNode | FragmentSpreadNode) -> bool | None:
        """Whether ``@skip``/``@include`` keep ``node``; None when a variable is unknown."""
        for directive in node.directives or ():
            if directive.name.value not in ("skip", "include"):
                continue
            arg = next((a for a in directive.arguments or () if a.name.value == "if"), None)
            if arg is None:
                continue
            value: Any
            if isinstance(arg.value, VariableNode):
                if self.variables is None or arg.value.name.value not in self.variables:
                    return None
                value = self.variables[arg.value.name.value]
            else:
                value = value_from_ast(arg.value, GraphQLBoolean)
            if bool(value) == (directive.name.value == "skip"):
                return False
        return True

    def _applies(self, condition: ast.NamedTypeNode | None, runtime: GraphQLObjectType) -> bool:
        if condition is None:
            return True
        target = self.schema.get_type(condition.name.value)
        if target is None:
            return False
        if target is runtime:
            return True
        return isinstance(target, GraphQLAbstractType) and self.schema.is_sub_type(target, runtime)

    def collect(self, runtime: GraphQLObjectType, selections: SelectionSetNode) -> _Fields:
        by_key: dict[str, list[FieldNode]] = {}
        sure: set[str] = set()
        self._collect(runtime, selections, by_key, sure, set(), False)
        return _Fields(by_key, frozenset(set(by_key) - sure))

    def _collect(
        self,
        runtime: GraphQLObjectType,
        selections: SelectionSetNode,
        by_key: dict[str, list[FieldNode]],
        sure: set[str],
        visited: set[str],
        maybe: bool,
    ) -> None:
        for sel in selections.selections:
            if not isinstance(sel, FieldNode | InlineFragmentNode | FragmentSpreadNode):
                continue
            included = self._included(sel)
            if included is False:
                continue
            unsure = maybe or included is None
            if isinstance(sel, FieldNode):
                key = sel.alias.value if sel.alias else sel.name.value
                by_key.setdefault(key, []).append(sel)
                if not unsure:
                    sure.add(key)
            elif isinstance(sel, InlineFragmentNode):
                if self._applies(sel.type_condition, runtime):
                    self._collect(runtime, sel.selection_set, by_key, sure, visited, unsure)
            else:
                name = sel.name.value
                frag = self.fragments.get(name)
                if frag is None or name in visited:
                    continue
                visited.add(name)
                if self._applies(frag.type_condition, runtime):
                    self._collect(runtime, frag.selection_set, by_key, sure, visited, unsure)

    def value(
        self, path: str, type_: GraphQLOutputType, nodes: Sequence[FieldNode], value: Any
    ) -> None:
        if isinstance(type_, GraphQLNonNull):
            if value is None:
                self.problems.append(f"{path}: null for the non-null {type_}")
                return
            type_ = type_.of_type
        if value is None:
            return
        if isinstance(type_, GraphQLList):
            if not isinstance(value, list):
                self.problems.append(
                    f"{path}: {_json_type(value)} where the vendor has a list {type_}"
                )
                return
            for i, item in enumerate(value):
                self.value(f"{path}[{i}]", type_.of_type, nodes, item)
            return
        if isinstance(type_, GraphQLScalarType):
            problem = _scalar_problem(type_, value)
            if problem:
                self.problems.append(f"{path}: {problem}")
            return
        if isinstance(type_, GraphQLEnumType):
            if not isinstance(value, str) or value not in type_.values:
                self.problems.append(
                    f"{path}: {value!r} is not a value of the vendor's enum {type_.name}"
                )
            return
        assert isinstance(type_, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType)
        if not isinstance(value, dict):
            self.problems.append(
                f"{path}: {_json_type(value)} where the vendor has an object {type_.name}"
            )
            return
        selections = [n.selection_set for n in nodes if n.selection_set]
        self.object(path, type_, selections, value)

    def object(
        self,
        path: str,
        type_: GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType,
        selections: Sequence[SelectionSetNode],
        value: dict[str, Any],
    ) -> None:
        candidates: list[GraphQLObjectType]
        if isinstance(type_, GraphQLObjectType):
            candidates = [type_]
        else:
            candidates = list(self.schema.get_possible_types(type_))
        typename = value.get("__typename")
        if typename is not None:
            named = [c for c in candidates if c.name == typename]
            if not named:
                self.problems.append(
                    f"{path}.__typename: {typename!r} is not a possible type of {type_.name}"
                )
                return
            candidates = named
        options: list[list[str]] = []
        for runtime in candidates:
            sub = ResponseWalker(self.schema, self.fragments, self.variables)
            sub.fields(path, runtime, selections, value)
            if not sub.problems:
                return
            options.append(sub.problems)
        if options:  # none fits: the problems of the closest
            best = options[0]
            for found in options[1:]:
                if len(found) < len(best):
                    best = found
            self.problems += best

    def fields(
        self,
        path: str,
        runtime: GraphQLObjectType,
        selections: Sequence[SelectionSetNode],
        value: dict[str, Any],
    ) -> None:
        by_key: dict[str, list[FieldNode]] = {}
        sure: set[str] = set()
        for sel in selections:
            got = self.collect(runtime, sel)
            for k, v in got.by_key.items():
                by_key.setdefault(k, []).extend(v)
            sure |= set(got.by_key) - got.optional
        optional = set(by_key) - sure
        for key in value:
            if key not in by_key:
                self.problems.append(f"{path}.{key}: not asked for on {runtime.name}")
        for key, nodes in by_key.items():
            where = f"{path}.{key}"
            if key not in value:
                if key not in optional:
                    self.problems.append(f"{where}: missing")
                continue
            name = nodes[0].name.value
            if name == "__typename":
                if value[key] != runtime.name:
                    self.problems.append(f"{where}: {value[key]!r} for a {runtime.name}")
                continue
            field = runtime.fields.get(name)
            if field is None:
                self.problems.append(f"{where}: {runtime.name} has no field {name} for the vendor")
                continue
            self.value(where, field.type, nodes, value[key])


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )


def _scalar_problem(scalar: GraphQLScalarType, value: Any) -> str | None:
    name = scalar.name
    if name == "Boolean":
        ok = isinstance(value, bool)
    elif name == "Int":
        ok = isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31
    elif name == "Float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif name == "JSONObject":
        ok = isinstance(value, dict)
    elif name in JSON_SCALARS:
        ok = True
    else:  # String, ID and every other custom scalar travel as strings
        ok = isinstance(value, str)
        if ok and name in DATE_SCALARS and not _iso_datetime(value):
            return f"{value!r} is not an ISO 8601 date-time ({name})"
    return None if ok else f"{_json_type(value)} {value!r} for the vendor's {name}"


def _iso_datetime(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _error_problems(errors: Any) -> list[str]:
    if not isinstance(errors, list) or not errors:
        return ["errors: not a non-empty list"]
    problems: list[str] = []
    for i, err in enumerate(errors):
        where = f"errors[{i}]"
        if not isinstance(err, dict):
            problems.append(f"{where}: not an object")
            continue
        if not isinstance(err.get("message"), str):
            problems.append(f"{where}.message: missing or not a string")
        locations = err.get("locations")
        if locations is not None and not (
            isinstance(locations, list)
            and all(
                isinstance(loc, dict)
                and set(loc) == {"line", "column"}
                and all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in loc.values()
                )
                for loc in locations
            )
        ):
            problems.append(f"{where}.locations: not a list of {{line, column}}")
        path = err.get("path")
        if path is not None and not (
            isinstance(path, list)
            and all(isinstance(p, str | int) and not isinstance(p, bool) for p in path)
        ):
            problems.append(f"{where}.path: not a list of field names and indices")
        if "extensions" in err and not isinstance(err["extensions"], dict):
            problems.append(f"{where}.extensions: not an object")
    return problems


def response_problems(
    schema: GraphQLSchema, query: str, body: Any, variables: Mapping[str, Any] | None = None
) -> list[str]:
    """Every way a GraphQL exchange (``query`` sent, ``body`` answered) departs from ``schema``:
    the document's validation errors, then the response's shape typed by the document."""
    try:
        doc = parse(query)
    except GraphQLSyntaxError as exc:
        return [f"document: {exc.message}"]
    invalid = [f"document: {e.message}" for e in validate(schema, doc)]
    if invalid:
        return invalid
    if not isinstance(body, dict):
        return [f"body: {_json_type(body)}, not a GraphQL response object"]
    problems = [
        f"body.{k}: not a key of a GraphQL response"
        for k in body
        if k not in ("data", "errors", "extensions")
    ]
    if "errors" in body:
        problems += _error_problems(body["errors"])
    if "data" not in body:
        if "errors" not in body:
            problems.append("body: neither data nor errors")
        return problems
    data = body["data"]
    if data is None:
        if "errors" not in body:
            problems.append("data: null without errors")
        return problems
    ops = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    if len(ops) != 1:
        return [*problems, "document: not exactly one operation; cannot tell which was run"]
    op = ops[0]
    root = schema.get_root_type(op.operation)
    if root is None:
        return [*problems, f"document: the vendor has no {op.operation.value} root"]
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    walker = ResponseWalker(schema, fragments, variables)
    if not isinstance(data, dict):
        return [*problems, f"data: {_json_type(data)}, not an object"]
    walker.fields("data", root, [op.selection_set], data)
    return problems + walker.problems


# ----------------------------------------------------------------------------- SDK documents


def _spreads(node: ast.Node) -> Iterator[str]:
    selection_set = getattr(node, "selection_set", None)
    if selection_set is None:
        return
    for sel in selection_set.selections:
        if isinstance(sel, FragmentSpreadNode):
            yield sel.name.value
        else:
            yield from _spreads(sel)


def _with_fragments(
    op: OperationDefinitionNode, fragments: Mapping[str, FragmentDefinitionNode]
) -> DocumentNode:
    """``op`` and every fragment it spreads, transitively (an unknown one is left out and
    validation names it)."""
    needed: dict[str, FragmentDefinitionNode] = {}
    todo = list(_spreads(op))
    while todo:
        name = todo.pop()
        if name in needed or name not in fragments:
            continue
        needed[name] = fragments[name]
        todo += _spreads(fragments[name])
    return ast.DocumentNode(definitions=(op, *needed.values()))


def served_types(fake: GraphQLSchema) -> frozenset[str]:
    """The object types the fake implements: the named results of its root fields (``Issue``,
    ``IssueConnection``, ``IssuePayload``...). Types that exist only as a placeholder for a
    feature the fake does not model (``Attachment`` with its ``id``) are not among them."""
    names: set[str] = set()
    for root in (fake.query_type, fake.mutation_type):
        for field in (root.fields if root else {}).values():
            names.add(get_named_type(field.type).name)
    return frozenset(names)


def touches_served(
    op: OperationDefinitionNode,
    fake: GraphQLSchema,
    vendor: GraphQLSchema,
    served: frozenset[str] | None = None,
) -> bool:
    """Whether an SDK operation asks the fake for something it serves: a root field the fake
    answers, or a root field (of the vendor's) whose result is a type the fake implements
    (:func:`served_types`: ``issueVcsBranchSearch`` returns an ``Issue``)."""
    ours = fake.get_root_type(op.operation)
    theirs = vendor.get_root_type(op.operation)
    served = served_types(fake) if served is None else served
    for sel in op.selection_set.selections:
        if not isinstance(sel, FieldNode):
            continue
        name = sel.name.value
        if ours is not None and name in ours.fields:
            return True
        vendor_field = theirs.fields.get(name) if theirs is not None else None
        if vendor_field is not None and get_named_type(vendor_field.type).name in served:
            return True
    return False


_CANNOT_QUERY = re.compile(r"Cannot query field '(\w+)' on type '(\w+)'\.")
_UNKNOWN_ARG = re.compile(r"Unknown argument '(\w+)' on field '(\w+)\.(\w+)'\.")
_UNKNOWN_TYPE = re.compile(r"Unknown type '(\w+)'\.")


def _reason(message: str) -> str:
    """A validation error worded as what the fake lacks."""
    if m := _CANNOT_QUERY.match(message):
        return f"field {m[1]} of {m[2]} not implemented by the fake"
    if m := _UNKNOWN_ARG.match(message):
        return f"argument {m[1]} of {m[2]}.{m[3]} not implemented by the fake"
    if m := _UNKNOWN_TYPE.match(message):
        return f"type {m[1]} not implemented by the fake"
    return message


@dataclass(frozen=True)
class DocumentResult:
    """The SDK documents held to the fake's schema."""

    checks: list[Check]
    """One per operation that touches a served type."""
    untouched: int
    """Operations that touch no type the fake serves (not checked)."""


def sdk_document_checks(
    documents: str, fake: GraphQLSchema, vendor: GraphQLSchema
) -> DocumentResult:
    """Every operation of the SDK's ``documents`` that touches a served type, validated
    (with its fragments) against ``fake``; problems worded by :func:`_reason`."""
    doc = parse(documents, no_location=True)
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    checks: list[Check] = []
    untouched = 0
    served = served_types(fake)
    for op in doc.definitions:
        if not isinstance(op, OperationDefinitionNode):
            continue
        if not touches_served(op, fake, vendor, served):
            untouched += 1
            continue
        subject = f"{op.operation.value} {op.name.value if op.name else '(anonymous)'}"
        errors = validate(fake, _with_fragments(op, fragments))
        problems = tuple(dict.fromkeys(_reason(e.message) for e in errors))
        checks.append(Check(subject, problems))
    return DocumentResult(checks, untouched)


# ----------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Exchange:
    """One GraphQL exchange of a scenario run against the fake, as the client saw it."""

    subject: str
    query: str
    body: Any
    stopped: str | None = None
    """Set instead of an exchange when the scenario stopped early: why."""


def scenario_exchanges(
    service: Service, only: Sequence[str] | None = None, wrap: Wrap | None = None
) -> list[Exchange]:
    """Every GraphQL exchange of ``service``'s contract scenarios (or of those named in
    ``only``), run on a fresh fake world whose apps ``wrap`` may break (tests do)."""
    return exchanges_by_service((service,), only, wrap)[service]


def exchanges_by_service(
    services: Sequence[Service], only: Sequence[str] | None = None, wrap: Wrap | None = None
) -> dict[Service, list[Exchange]]:
    """The GraphQL exchanges of each service's contract scenarios, on one fake world (reset
    before each scenario): the scenarios whose recording holds a GraphQL step (Linear's all,
    GitHub's ``graphql_issue``), or those of them named in ``only``."""
    from replay.contract.recording import load
    from replay.contract.runner import RECORDINGS, run_scenario
    from replay.contract.scenarios import all_scenarios
    from replay.contract.targets import fake_target, serve_world

    chosen = []
    for service in services:
        for scenario in all_scenarios(service):
            if only is not None and scenario.name not in only:
                continue
            recorded = load(RECORDINGS, service, scenario.name)
            if recorded is not None and any(e.query for e in recorded.exchanges):
                chosen.append(scenario)
    out: dict[Service, list[Exchange]] = {service: [] for service in services}
    with serve_world(wrap=wrap) as served:
        target = fake_target(served)
        for scenario in chosen:
            run = run_scenario(target, scenario)
            found = out[scenario.service]
            n = 0
            for exchange, raw, _model in run.recorder.raws:
                if exchange.query:
                    n += 1
                    subject = f"{scenario.name} #{n} {exchange.step}"
                    found.append(Exchange(subject, exchange.query, raw.body))
            if run.error:  # a response the client could not use: the rest never ran
                found.append(Exchange(f"{scenario.name} stopped", "", None, run.error))
    return out


def response_checks(schema: GraphQLSchema, exchanges: Iterable[Exchange]) -> list[Check]:
    """One check per exchange: :func:`response_problems` against ``schema``."""
    return [
        Check(e.subject, (f"the scenario stopped: {e.stopped}",))
        if e.stopped
        else Check(e.subject, tuple(response_problems(schema, e.query, e.body)))
        for e in exchanges
    ]


def _reports_for(
    service: Service, source: Source, gaps: list[KnownGap], families: dict[str, list[Check]]
) -> list[Report]:
    """One report per family, each given the gaps whose subject pattern names one of its
    checks; a gap that names none is stale and reported with the first family."""
    import fnmatch

    reports: list[Report] = []
    placed: set[int] = set()
    for family, checks in families.items():
        mine = []
        for i, gap in enumerate(gaps):
            if any(fnmatch.fnmatchcase(c.subject, gap.subject) for c in checks):
                mine.append(gap)
                placed.add(i)
        reports.append(apply_gaps(service, family, source, checks, mine))
    reports[0].unused_gaps += [g for i, g in enumerate(gaps) if i not in placed]
    return reports


@dataclass
class DocumentsReport(Report):
    """The SDK documents' report: its headline also says how many operations were not
    checked because they touch no type the fake serves."""

    untouched: int = 0

    def headline(self) -> str:
        return (
            f"{super().headline()}; {self.untouched} more operations touch no type the fake "
            "serves (not checked)"
        )


def service_reports(service: Service, exchanges: list[Exchange] | None = None) -> list[Report]:
    """The reports of one service: schema and response conformance (of ``exchanges``, else
    its scenarios' run afresh), and for Linear the SDK's documents."""
    directory = DIRS[service]
    source = load_source(directory)
    gaps = load_gaps(directory)
    fake = fake_schema(service)
    vendor = vendor_schema(service)
    families: dict[str, list[Check]] = {
        SCHEMA: schema_checks(fake, vendor),
        RESPONSE: response_checks(
            vendor, scenario_exchanges(service) if exchanges is None else exchanges
        ),
    }
    if service == "linear":
        result = sdk_document_checks(SDK_DOCUMENTS.read_text(), fake, vendor)
        families[DOCUMENTS] = result.checks
    out = _reports_for(service, source, gaps, families)
    if service == "linear":
        out[-1] = DocumentsReport(**vars(out[-1]), untouched=result.untouched)
    return out


def reports() -> list[Report]:
    """Every report of this family: GitHub's and Linear's GraphQL held to their vendors'
    published schemas (and Linear's to its SDK's documents)."""
    exchanges = exchanges_by_service(("github", "linear"))
    return [
        *service_reports("github", exchanges["github"]),
        *service_reports("linear", exchanges["linear"]),
    ]
