"""A repository's labels and its commit statuses written through githubkit: state kept
(reads show each change), an event for every write, and GitHub's 422s for a bad colour, a
name in use, an unknown state or commit."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from githubkit.exception import RequestFailed

from tests.fakes.github.conftest import REPO, TOKEN, Served, checked, client, events

OWNER, NAME = REPO.split("/")


def tip(served: Served) -> str:
    return served.backend.git.heads(REPO)["refs/heads/main"]


def refused(call: Any) -> tuple[int, dict[str, Any]]:
    """The status and body of a call GitHub refuses."""
    with pytest.raises(RequestFailed) as exc:
        call()
    return exc.value.response.status_code, exc.value.response.json()


def test_a_label_is_created_read_renamed_and_deleted(served: Served) -> None:
    with client(served) as gh:
        made = gh.rest.issues.create_label(
            OWNER, NAME, name="triage", color="fbca04", description="Needs a look"
        )
        assert made.status_code == 201
        assert made.headers["location"].endswith(f"/repos/{REPO}/labels/triage")
        label = checked(made)
        assert (label.name, label.color, label.description, label.default) == (
            "triage",
            "fbca04",
            "Needs a look",
            False,
        )
        assert checked(gh.rest.issues.get_label(OWNER, NAME, "TRIAGE")).id == label.id
        changed = checked(
            gh.rest.issues.update_label(OWNER, NAME, "triage", new_name="triaged", color="BADA55")
        )
        assert (changed.id, changed.name, changed.color) == (label.id, "triaged", "BADA55")
        assert changed.url.endswith("/labels/triaged")
        assert changed.description == "Needs a look"  # not named in the body: kept
        names = [lb.name for lb in checked(gh.rest.issues.list_labels_for_repo(OWNER, NAME))]
        assert "triaged" in names and "triage" not in names
        with pytest.raises(RequestFailed) as gone:
            gh.rest.issues.get_label(OWNER, NAME, "triage")
        assert gone.value.response.status_code == 404

        gh.rest.issues.add_labels(OWNER, NAME, 2, labels=["triaged"])
        deleted = gh.rest.issues.delete_label(OWNER, NAME, "triaged")
        assert deleted.status_code == 204
        assert "triaged" not in [
            lb.name for lb in checked(gh.rest.issues.get(OWNER, NAME, 2)).labels
        ]
        status, _ = refused(lambda: gh.rest.issues.get_label(OWNER, NAME, "triaged"))
        assert status == 404
        status, _ = refused(lambda: gh.rest.issues.delete_label(OWNER, NAME, "triaged"))
        assert status == 404

    [created] = events(served, "github.label.created")
    assert created["object"] == {"type": "label", "id": f"{REPO}:triage"}
    assert created["data"] == {
        "repo": REPO,
        "name": "triage",
        "color": "fbca04",
        "description": "Needs a look",
    }
    [updated] = events(served, "github.label.updated")
    assert updated["data"] == {
        "repo": REPO,
        "name": "triaged",
        "changes": {
            "name": {"from": "triage", "to": "triaged"},
            "color": {"from": "fbca04", "to": "BADA55"},
        },
    }
    [dropped] = events(served, "github.label.deleted")
    assert dropped["data"] == {"repo": REPO, "name": "triaged", "issues": [2]}


def test_label_validation_is_githubs(served: Served) -> None:
    with client(served) as gh:
        status, body = refused(
            lambda: gh.rest.issues.create_label(OWNER, NAME, name="foo", color="invalid")
        )
        assert status == 422
        assert body["message"] == "Validation Failed"
        assert body["errors"] == [{"resource": "Label", "code": "invalid", "field": "color"}]
        assert body["documentation_url"].endswith("#create-a-label")
        status, body = refused(
            lambda: gh.rest.issues.create_label(OWNER, NAME, name="foo", color="#ff0000")
        )
        assert (status, body["errors"][0]["code"]) == (422, "invalid")
        status, body = refused(
            lambda: gh.rest.issues.create_label(OWNER, NAME, name="DOCS", color="ff0000")
        )
        assert status == 422
        assert body["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
        gh.rest.issues.create_label(OWNER, NAME, name="foo", color="ff0000")
        status, body = refused(
            lambda: gh.rest.issues.update_label(OWNER, NAME, "foo", new_name="docs")
        )
        assert (status, body["errors"][0]["code"]) == (422, "already_exists")
        status, body = refused(lambda: gh.rest.issues.update_label(OWNER, NAME, "foo", color="red"))
        assert (status, body["errors"][0]["field"]) == (422, "color")
        status, _ = refused(
            lambda: gh.rest.issues.update_label(OWNER, NAME, "nope", color="fff000")
        )
        assert status == 404
    assert [e["data"]["name"] for e in events(served, "github.label.created")] == ["foo"]
    assert events(served, "github.label.updated") == []


def test_labels_are_paginated(served: Served) -> None:
    with client(served) as gh:
        first = gh.rest.issues.list_labels_for_repo(OWNER, NAME, per_page=1)
        assert len(checked(first)) == 1
        assert 'rel="next"' in first.headers["link"] and 'rel="last"' in first.headers["link"]
        every = list(
            gh.rest.paginate(
                gh.rest.issues.list_labels_for_repo, owner=OWNER, repo=NAME, per_page=1
            )
        )
        assert len(every) == len(checked(gh.rest.issues.list_labels_for_repo(OWNER, NAME)))


def test_statuses_are_created_listed_and_combined(served: Served) -> None:
    sha = tip(served)
    with client(served) as gh:
        assert checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha)).state == (
            "pending"
        )
        made = gh.rest.repos.create_commit_status(
            OWNER,
            NAME,
            sha,
            state="failure",
            context="ci/1",
            description="broken",
            target_url="https://ci.test/1",
        )
        assert made.status_code == 201
        assert made.headers["location"].endswith(f"/repos/{REPO}/statuses/{sha}")
        first = checked(made)
        assert (first.state, first.context, first.creator.login) == ("failure", "ci/1", "agent")
        gh.rest.repos.create_commit_status(OWNER, NAME, sha, state="success", context="ci/2")
        listed = checked(gh.rest.repos.list_commit_statuses_for_ref(OWNER, NAME, "main"))
        assert [(st.context, st.state) for st in listed] == [
            ("ci/2", "success"),
            ("ci/1", "failure"),
        ]
        combined = checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha))
        assert combined.state == "failure"
        assert [st.context for st in combined.statuses] == ["ci/1", "ci/2"]
        # A newer status for a context replaces it in the combined view.
        gh.rest.repos.create_commit_status(OWNER, NAME, sha, state="success", context="ci/1")
        combined = checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha))
        assert (combined.state, combined.total_count) == ("success", 2)
        gh.rest.repos.create_commit_status(OWNER, NAME, sha, state="pending")
        combined = checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha))
        assert (combined.state, combined.total_count) == ("pending", 3)
        assert "default" in [st.context for st in combined.statuses]
    data = [e["data"] for e in events(served, "github.status.created")]
    assert data[0] == {
        "repo": REPO,
        "sha": sha,
        "state": "failure",
        "context": "ci/1",
        "description": "broken",
        "target_url": "https://ci.test/1",
    }
    assert [d["state"] for d in data] == ["failure", "success", "success", "pending"]


def test_status_validation_is_githubs(served: Served) -> None:
    sha = tip(served)
    with client(served) as gh:
        # githubkit refuses the bad state itself, so it is sent as any other client would.
        bad = httpx.post(
            f"{served.url}/repos/{REPO}/statuses/{sha}",
            json={"state": "done"},
            headers={"Authorization": f"token {TOKEN}"},
        )
        status, body = bad.status_code, bad.json()
        assert status == 422
        assert body["errors"] == [
            {
                "resource": "Status",
                "code": "custom",
                "field": "state",
                "message": "state is not included in the list",
            }
        ]
        unknown = "1" * 40
        status, body = refused(
            lambda: gh.rest.repos.create_commit_status(OWNER, NAME, unknown, state="success")
        )
        assert (status, body["message"]) == (422, f"No commit found for SHA: {unknown}")
    assert events(served, "github.status.created") == []
