"""GraphQL errors in GitHub's shape, which is graphql-ruby's rather than the spec's defaults.

- Execution errors carry a top-level ``type`` (``NOT_FOUND``...) and a ``path`` of response
  keys, so an aliased field is named by its alias: ``["repository", "issue"]``.
- Validation errors carry ``extensions.code`` (``undefinedField``, ``argumentNotAccepted``,
  ``missingRequiredArguments``...) and a ``path`` through the *document*:
  ``["query IssueByNumber", "repository", "issue", "... on Issue", "bogus"]``.
"""

from __future__ import annotations

import re
from typing import Any

from graphql import DocumentNode, GraphQLError, Node
from graphql.language import (
    ArgumentNode,
    FieldNode,
    FragmentDefinitionNode,
    InlineFragmentNode,
    ObjectFieldNode,
    OperationDefinitionNode,
    Visitor,
    print_ast,
    visit,
)

from fakes.core.graphql import locations
from fakes.github.graphql.faults import Fault

INTERNAL = (
    "Something went wrong while executing your query. This may be the result of a timeout, "
    "or it could be a GitHub bug."
)


def execution_error(error: GraphQLError) -> dict[str, Any]:
    """An error raised while resolving: GitHub's ``type``, ``path``, ``locations``, ``message``."""
    original = error.original_error
    out: dict[str, Any] = {}
    if isinstance(original, GraphQLError):
        message = original.message
    elif isinstance(original, Fault):
        out["type"] = original.type
        message = original.message
    elif original is None:
        message = error.message
    else:
        message = f"{INTERNAL} ({type(original).__name__}: {original})"
    if error.path is not None:
        out["path"] = list(error.path)
    out["locations"] = locations(error)
    out["message"] = message
    return out


class _PathFinder(Visitor):
    """Walk the document, keeping graphql-ruby's path, until the node at ``start``."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.start = start
        self.stack: list[str] = []
        self.found: list[str] | None = None

    def enter(self, node: Node, *_: Any) -> Any:
        label = _label(node)
        if label is not None:
            self.stack.append(label)
        here = node.loc is not None and node.loc.start == self.start
        named = label is not None or isinstance(node, FieldNode | ArgumentNode)
        if self.found is None and here and named:
            self.found = list(self.stack)
        return None

    def leave(self, node: Node, *_: Any) -> Any:
        if _label(node) is not None:
            self.stack.pop()
        return None


def _label(node: Node) -> str | None:
    if isinstance(node, OperationDefinitionNode):
        op = node.operation.value
        return f"{op} {node.name.value}" if node.name else op
    if isinstance(node, FragmentDefinitionNode):
        return f"fragment {node.name.value}"
    if isinstance(node, FieldNode):
        return (node.alias or node.name).value
    if isinstance(node, InlineFragmentNode):
        return f"... on {node.type_condition.name.value}" if node.type_condition else "..."
    if isinstance(node, ArgumentNode | ObjectFieldNode):
        return node.name.value
    return None


def document_path(document: DocumentNode, node: Node) -> list[str] | None:
    if node.loc is None:
        return None
    finder = _PathFinder(node.loc.start)
    visit(document, finder)
    return finder.found


# graphql-core's wording -> graphql-ruby's (GitHub's) wording and extensions.
_RULES: list[tuple[re.Pattern[str], Any]] = [
    (
        re.compile(r"^Cannot query field '(?P<field>\w+)' on type '(?P<type>\w+)'\."),
        lambda m: (
            f"Field '{m['field']}' doesn't exist on type '{m['type']}'",
            {"code": "undefinedField", "typeName": m["type"], "fieldName": m["field"]},
        ),
    ),
    (
        re.compile(r"^Unknown argument '(?P<arg>\w+)' on field '\w+\.(?P<field>\w+)'\."),
        lambda m: (
            f"Field '{m['field']}' doesn't accept argument '{m['arg']}'",
            {
                "code": "argumentNotAccepted",
                "name": m["field"],
                "typeName": "Field",
                "argumentName": m["arg"],
            },
        ),
    ),
    (
        re.compile(r"^Field '(?P<arg>\w+)' is not defined by type '(?P<type>\w+)'\."),
        lambda m: (
            f"InputObject '{m['type']}' doesn't accept argument '{m['arg']}'",
            {
                "code": "argumentNotAccepted",
                "name": m["type"],
                "typeName": "InputObject",
                "argumentName": m["arg"],
            },
        ),
    ),
    (
        re.compile(r"^Argument '\w+\.(?P<field>\w+)\((?P<arg>\w+):\)' of type .* is required"),
        lambda m: (
            f"Field '{m['field']}' is missing required arguments: {m['arg']}",
            {
                "code": "missingRequiredArguments",
                "className": "Field",
                "name": m["field"],
                "arguments": m["arg"],
            },
        ),
    ),
    (
        re.compile(r"^Field '(?P<field>\w+)' of type '(?P<type>[^']+)' must have a selection"),
        lambda m: (
            f"Field must have selections (field '{m['field']}' returns {m['type']} but has "
            f"no selections. Did you mean '{m['field']} {{ ... }}'?)",
            {"code": "selectionMismatch", "nodeName": f"field '{m['field']}'"},
        ),
    ),
    (
        re.compile(
            r"^Field '(?P<field>\w+)' must not have a selection since type '(?P<type>[^']+)'"
        ),
        lambda m: (
            f"Selections can't be made on scalars (field '{m['field']}' returns {m['type']} "
            "but has selections)",
            {"code": "selectionMismatch", "nodeName": f"field '{m['field']}'"},
        ),
    ),
    (
        re.compile(r"^Unknown type '(?P<type>\w+)'\."),
        lambda m: (
            f"No such type {m['type']}, so it can't be a fragment condition",
            {"code": "undefinedType", "typeName": m["type"]},
        ),
    ),
    (
        re.compile(
            r"^Fragment( '\w+')? cannot be spread here as objects of type '(?P<parent>\w+)' "
            r"can never be of type '(?P<frag>\w+)'\."
        ),
        lambda m: (
            f"Fragment on {m['frag']} can't be spread inside {m['parent']}",
            {"code": "cannotSpreadFragment", "typeName": m["frag"], "parentName": m["parent"]},
        ),
    ),
]


def validation_error(document: DocumentNode, error: GraphQLError) -> dict[str, Any]:
    """A validation error as GitHub words it (rules it does not know keep graphql-core's text)."""
    message, extensions = error.message, None
    for pattern, make in _RULES:
        m = pattern.match(error.message)
        if m:
            message, extensions = make(m)
            break
    out: dict[str, Any] = {}
    path = document_path(document, error.nodes[-1]) if error.nodes else None
    if path is not None:
        out["path"] = path
    if extensions is not None:
        out["extensions"] = extensions
    out["locations"] = locations(error)
    out["message"] = message
    return out


def syntax_error(error: GraphQLError) -> dict[str, Any]:
    """A parse error: graphql-ruby says ``Parse error on "x" (TOKEN) at [line, column]``."""
    loc = error.locations[0] if error.locations else None
    detail = error.message.removeprefix("Syntax Error: ")
    where = f" at [{loc.line}, {loc.column}]" if loc is not None else ""
    return {"message": f"Parse error on {detail}{where}", "locations": locations(error)}


_VARIABLE = re.compile(
    r"^Variable '\$(?P<name>\w+)' has invalid value(?: at (?P<at>\S+))?: (?P<why>.*)$", re.S
)
_UNKNOWN = re.compile(
    r"Expected value of type '(?P<type>\w+)' not to include unknown field '(?P<f>\w+)'"
)


def _declared_type(document: DocumentNode, name: str) -> str:
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            for var in definition.variable_definitions or ():
                if var.variable.name.value == name:
                    return print_ast(var.type)
    return "?"


def variable_error(
    document: DocumentNode, error: GraphQLError, variables: dict[str, Any]
) -> dict[str, Any] | None:
    """A bad variable, in graphql-ruby's words: ``Variable $x of type T! was provided invalid
    value`` with ``extensions.value`` and ``extensions.problems`` (graphql-core's reason)."""
    m = _VARIABLE.match(error.message)
    if m is None:
        return None
    name = m["name"]
    declared = _declared_type(document, name)
    path = [p for p in re.split(r"[.\[\]]+", m["at"] or "") if p]
    explanation = m["why"].rstrip(".")
    unknown = _UNKNOWN.match(explanation)
    if unknown is not None:
        path.append(unknown["f"])
        explanation = f"Field is not defined on {unknown['type']}"
    elif "non-null type" in explanation:
        explanation = "Expected value to not be null"
    message = f"Variable ${name} of type {declared} was provided invalid value"
    if path:
        message += f" for {'.'.join(path)} ({explanation})"
    return {
        "extensions": {
            "value": variables.get(name),
            "problems": [{"path": path, "explanation": explanation}],
        },
        "locations": locations(error),
        "message": message,
    }
