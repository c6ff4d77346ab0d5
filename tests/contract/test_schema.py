"""The strict schema checks find what githubkit's lenient models let through."""

from __future__ import annotations

from typing import Any

from githubkit_schemas.latest import models
from pydantic import BaseModel, ConfigDict, Field

from replay.contract.schema import check_github_body, check_graphql


def label(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": 1,
        "node_id": "LA_1",
        "url": "https://api.github.com/repos/o/r/labels/bug",
        "name": "bug",
        "description": None,
        "color": "d73a4a",
        "default": True,
        "archived_at": None,
        "archived_by": None,
    }
    body.update(extra)
    return body


def test_a_good_body_passes() -> None:
    assert check_github_body(models.Label, 200, label()) == []
    assert check_github_body(list[models.Label], 200, [label(), label(id=2)]) == []


def test_missing_unknown_and_wrong_types_are_found() -> None:
    body = label(colour="red")
    del body["name"]
    problems = check_github_body(models.Label, 200, body)
    assert "$.colour: not a field of Label" in problems
    assert "$.name: required by Label but missing" in problems
    # githubkit alone would coerce "1" to 1: the strict check does not.
    assert any(p.startswith("$.id:") for p in check_github_body(models.Label, 200, label(id="1")))
    listed = check_github_body(list[models.Label], 200, [label(), label(extra=1)])
    assert "$[1].extra: not a field of Label" in listed


def test_errors_are_checked_against_githubs_error_models() -> None:
    assert check_github_body(None, 404, {"message": "Not Found", "documentation_url": "d"}) == []
    assert check_github_body(None, 404, {"error": "Not Found"}) == [
        "$.error: not a field of BasicError"
    ]
    assert "$.message: required by ValidationError but missing" in check_github_body(
        None, 422, {"documentation_url": "d"}
    )


class Tag(BaseModel):
    name: str


class Rename(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class Labeled(BaseModel):
    id: int
    event: str
    label: Tag


class Renamed(BaseModel):
    id: int
    event: str
    rename: Rename


class Timeline(BaseModel):
    """An item that holds a union of its own, as githubkit's timeline models do."""

    id: int
    item: Labeled | Renamed


LABELED = {"id": 1, "event": "labeled", "label": {"name": "bug"}}
RENAMED = {"id": 2, "event": "renamed", "rename": {"from": "a", "to": "b"}}


def test_each_item_of_a_union_list_is_checked_against_its_closest_member() -> None:
    """An item of a list of a union (githubkit's issue events, timeline) is judged by the
    member it fits best, not by every member: a `labeled` event lacks no `rename`."""
    union = list[Labeled | Renamed]
    assert check_github_body(union, 200, [LABELED, RENAMED]) == []
    # An item no member fits: the problems of the one it comes closest to, and only those.
    stray = {**RENAMED, "state_reason": "completed"}
    assert check_github_body(union, 200, [LABELED, stray]) == [
        "$[1].state_reason: not a field of Renamed"
    ]
    # A body that is itself a union, and a union inside an object, are judged the same way.
    assert check_github_body(Labeled | Renamed, 200, RENAMED) == []
    assert check_github_body(Timeline, 200, {"id": 3, "item": RENAMED}) == []
    nested = check_github_body(Timeline, 200, {"id": 3, "item": {**LABELED, "x": 1}})
    assert nested == ["$.item.x: not a field of Labeled"]


def test_graphql_documents_are_validated_against_the_fakes_schemas() -> None:
    assert check_graphql("linear", "{ viewer { id name } }") == []
    assert check_graphql("linear", "{ viewer { nope } }") == [
        "Cannot query field 'nope' on type 'User'. Did you mean 'name'?"
    ]
    assert check_graphql("github", "{ viewer { login } }") == []
    assert check_graphql("github", "{ viewer { login ") != []
