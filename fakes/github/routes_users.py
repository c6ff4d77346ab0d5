"""The API's root document, the rate limit, the authenticated user and users by login."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.github import render
from fakes.github import schemas as w
from fakes.github.errors import NotFound
from fakes.github.models import Repo
from fakes.github.routes_common import Auth, GitHubJSON, wire

router = APIRouter()


def root_document(base: str) -> dict[str, str]:
    return {
        "current_user_url": f"{base}/user",
        "current_user_authorizations_html_url": "https://github.com/settings/connections/applications{/client_id}",
        "code_search_url": f"{base}/search/code?q={{query}}{{&page,per_page,sort,order}}",
        "commit_search_url": f"{base}/search/commits?q={{query}}{{&page,per_page,sort,order}}",
        "emails_url": f"{base}/user/emails",
        "emojis_url": f"{base}/emojis",
        "events_url": f"{base}/events",
        "feeds_url": f"{base}/feeds",
        "followers_url": f"{base}/user/followers",
        "following_url": f"{base}/user/following{{/target}}",
        "gists_url": f"{base}/gists{{/gist_id}}",
        "issue_search_url": f"{base}/search/issues?q={{query}}{{&page,per_page,sort,order}}",
        "issues_url": f"{base}/issues",
        "keys_url": f"{base}/user/keys",
        "label_search_url": (
            f"{base}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}"
        ),
        "notifications_url": f"{base}/notifications",
        "organization_url": f"{base}/orgs/{{org}}",
        "organization_repositories_url": f"{base}/orgs/{{org}}/repos{{?type,page,per_page,sort}}",
        "organization_teams_url": f"{base}/orgs/{{org}}/teams",
        "public_gists_url": f"{base}/gists/public",
        "rate_limit_url": f"{base}/rate_limit",
        "repository_url": f"{base}/repos/{{owner}}/{{repo}}",
        "repository_search_url": (
            f"{base}/search/repositories?q={{query}}{{&page,per_page,sort,order}}"
        ),
        "current_user_repositories_url": f"{base}/user/repos{{?type,page,per_page,sort}}",
        "starred_url": f"{base}/user/starred{{/owner}}{{/repo}}",
        "starred_gists_url": f"{base}/gists/starred",
        "topic_search_url": f"{base}/search/topics?q={{query}}{{&page,per_page}}",
        "user_url": f"{base}/users/{{user}}",
        "user_organizations_url": f"{base}/user/orgs",
        "user_repositories_url": f"{base}/users/{{user}}/repos{{?type,page,per_page,sort}}",
        "user_search_url": f"{base}/search/users?q={{query}}{{&page,per_page,sort,order}}",
    }


@router.get("/")
def root(request: Request, ctx: Auth) -> Response:
    base = "https://api.github.com"
    if request.url.path.startswith("/api/v3"):
        base = f"{request.url.scheme}://{request.url.netloc}/api/v3"
    return GitHubJSON(root_document(base))


@router.get("/rate_limit")
def rate_limit(ctx: Auth) -> Response:
    core = {"limit": 5000, "used": 0, "remaining": 5000, "reset": int(time.time()) + 3600}
    search = {"limit": 30, "used": 0, "remaining": 30, "reset": int(time.time()) + 60}
    return GitHubJSON(
        {"resources": {"core": core, "search": search, "graphql": core}, "rate": core}
    )


@router.get("/user")
def get_user(ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        u = ctx.backend.repos.user(s, ctx.login)
        owned = list(s.scalars(select(Repo).where(Repo.owner_id == u.id)))
        private = sum(1 for r in owned if r.private)
        return render.private_user(u, len(owned) - private, private)

    return wire(ctx.run(go))


@router.get("/users/{login}")
def get_user_by_login(login: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        u = ctx.backend.repos.user(s, login)
        q = select(Repo).where(Repo.owner_id == u.id, Repo.private.is_(False))
        return render.public_user(u, len(list(s.scalars(q))))

    return wire(ctx.run(go))


@router.get("/orgs/{org}")
def get_organization(org: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        u = ctx.backend.repos.user(s, org)
        if u.type != "Organization":
            raise NotFound()
        q = select(Repo).where(Repo.owner_id == u.id, Repo.private.is_(False))
        return render.organization(u, len(list(s.scalars(q))))

    return wire(ctx.run(go))
