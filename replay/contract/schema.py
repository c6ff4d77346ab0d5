"""Offline schema checks: GitHub REST bodies against githubkit's models (generated from
GitHub's published OpenAPI description), strictly; GraphQL documents against the fake's SDL.

githubkit's models ignore unknown fields and coerce lax types, so :func:`strict_problems`
adds what they let through: a required field missing, a field the schema does not have
(unless the model allows extra properties), and :func:`type_problems` validates in pydantic's
strict JSON mode (no ``"1"`` for an int).
"""

from __future__ import annotations

import json
import typing
from functools import cache
from pathlib import Path
from typing import Any

from githubkit.compat import ExtraGitHubModel
from graphql import GraphQLSchema, build_schema, parse, validate
from graphql.error import GraphQLSyntaxError
from pydantic import BaseModel, TypeAdapter, ValidationError

FAKES = Path(__file__).resolve().parents[2] / "fakes"
SDL = {
    "github": FAKES / "github" / "graphql" / "schema.graphql",
    "linear": FAKES / "linear" / "graphql" / "schema.graphql",
}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += _models_in(arg)
    return found


def strict_problems(model: type[BaseModel], data: Any, path: str = "$") -> list[str]:
    """Required fields present and no field the model does not know, at every level."""
    if not isinstance(data, dict):
        return [f"{path}: expected an object for {model.__name__}, got {type(data).__name__}"]
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    problems = [
        f"{path}.{key}: required by {model.__name__} but missing"
        for key, f in fields.items()
        if f.is_required() and key not in data
    ]
    open_model = issubclass(model, ExtraGitHubModel)
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            if not open_model:
                problems.append(f"{path}.{key}: not a field of {model.__name__}")
            continue
        subs = _models_in(field.annotation)
        if value is None or not subs:
            continue
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            where = f"{path}.{key}[{i}]" if isinstance(value, list) else f"{path}.{key}"
            if not isinstance(item, dict) and isinstance(value, list):
                continue  # a list of scalars beside a model in a union
            problems += closest_problems(subs, item, where)
    return problems


def closest_problems(members: list[type[BaseModel]], data: Any, path: str = "$") -> list[str]:
    """The strict problems of ``data`` against the member of a union it fits best: none when
    one member fits, else those of the member with the fewest (the first on a tie). A
    ``labeled`` event is judged as a ``LabeledIssueEvent``, not also as every other event."""
    options = [strict_problems(member, data, path) for member in members]
    if not options or not all(options):
        return []
    return min(options, key=len)


def type_problems(model: Any, data: Any) -> list[str]:
    """Validation in pydantic's strict JSON mode against ``model`` (a type or ``list[T]``)."""
    try:
        TypeAdapter(model).validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        return [f"$.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()]
    return []


def error_model(status: int) -> type[BaseModel]:
    """githubkit's model for a REST error body: 422 is ``ValidationError``, others
    ``BasicError`` (as githubkit's generated methods declare them)."""
    from githubkit_schemas.latest import models

    return models.ValidationError if status == 422 else models.BasicError


def check_github_body(model: Any, status: int, data: Any) -> list[str]:
    """Every problem of one GitHub REST body against its githubkit model."""
    if status >= 400:
        model = error_model(status)
    if model is None:
        return []
    problems = type_problems(model, data)
    inner = typing.get_args(model)
    if typing.get_origin(model) is list and inner:
        if not isinstance(data, list):
            return [*problems, "$: expected a list"]
        members = _models_in(inner[0])
        for i, item in enumerate(data):
            problems += closest_problems(members, item, f"$[{i}]")
    else:
        problems += closest_problems(_models_in(model), data)
    return problems


@cache
def graphql_schema(service: str) -> GraphQLSchema:
    return build_schema(SDL[service].read_text())


def check_graphql(service: str, query: str) -> list[str]:
    """A GraphQL document validated (graphql-core ``validate``) against the fake's SDL."""
    try:
        doc = parse(query)
    except GraphQLSyntaxError as exc:
        return [exc.message]
    return [e.message for e in validate(graphql_schema(service), doc)]
