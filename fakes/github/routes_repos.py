"""Repository endpoints: the repository, readme, contents, branches, refs, commits, statuses
(read and created), check runs, labels (read and written) and raw files. Everything about
git reads the fake's own bare repository."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from fakes.core.paging import Paged
from fakes.github import render
from fakes.github import schemas as w
from fakes.github.errors import NotFound
from fakes.github.models import Repo, node_id
from fakes.github.routes_common import (
    Auth,
    Ctx,
    Id,
    decode_content,
    open_issue_count,
    users_by_email,
    wire,
)

README_NAMES = ("readme.md", "readme", "readme.rst", "readme.txt", "readme.markdown")

router = APIRouter()


@router.get("/repos/{owner}/{repo}")
def get_repo(owner: str, repo: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        return render.repository(r, open_issue_count(s, r), full=True)

    return wire(ctx.run(go))


@router.get("/repositories/{repo_id}")
def get_repo_by_id(repo_id: Id, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.by_id(s, repo_id)
        return render.repository(r, open_issue_count(s, r), full=True)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/readme")
def readme(owner: str, repo: str, ctx: Auth, ref: str | None = None) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        for e in ctx.backend.git.list_dir(r.full_name, sha, ""):
            if e.type == "blob" and e.path.lower() in README_NAMES:
                data = ctx.backend.git.blob(r.full_name, e.sha)
                return render.content_file(r, ref or r.default_branch, e, data)
        raise NotFound()

    return wire(ctx.run(go))


def raw_media_type(accept: str) -> str | None:
    """The media type of a file's raw bytes when ``Accept`` asks for them, as GitHub echoes
    it (``application/vnd.github.v3.raw`` stays ``v3``); None for the JSON object."""
    kinds = {part.split(";")[0].strip() for part in accept.split(",")}
    for kind in kinds:
        base = kind.removesuffix("+json")
        if base in ("application/vnd.github.raw", "application/vnd.github.v3.raw"):
            return base
    return None


def contents(
    owner: str, repo: str, path: str, ref: str | None, ctx: Ctx, accept: str = ""
) -> Response:
    raw_type = raw_media_type(accept)

    def go(s: Session) -> w.Wire | list[w.ContentItem] | bytes:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        name = ref or r.default_branch
        clean = path.strip("/")
        entry = ctx.backend.git.entry(r.full_name, sha, clean)
        if entry is None:
            raise NotFound()
        if entry.type == "tree":
            items = ctx.backend.git.list_dir(r.full_name, sha, clean)
            return [render.content_item(r, name, e) for e in items]
        if entry.type != "blob":
            return render.content_item(r, name, entry)
        data = ctx.backend.git.blob(r.full_name, entry.sha)
        if raw_type is not None:
            return data
        return render.content_file(r, name, entry, data)

    out = ctx.run(go)
    if isinstance(out, bytes):
        return Response(out, media_type=f"{raw_type}; charset=utf-8")
    return wire(out)


@router.get("/repos/{owner}/{repo}/contents")
def contents_root(
    request: Request, owner: str, repo: str, ctx: Auth, ref: str | None = None
) -> Response:
    return contents(owner, repo, "", ref, ctx, request.headers.get("accept", ""))


@router.get("/repos/{owner}/{repo}/contents/{path:path}")
def contents_path(
    request: Request, owner: str, repo: str, path: str, ctx: Auth, ref: str | None = None
) -> Response:
    return contents(owner, repo, path, ref, ctx, request.headers.get("accept", ""))


@router.put("/repos/{owner}/{repo}/contents/{path:path}")
def put_contents(owner: str, repo: str, path: str, body: w.ContentsPut, ctx: Auth) -> Response:
    data = decode_content(body.content)

    def go(s: Session) -> tuple[w.Wire, bool]:
        r = ctx.backend.repos.get(s, owner, repo)
        branch = body.branch or r.default_branch
        existed = False
        tip = ctx.backend.repos.branch(s, r, branch)
        if tip is not None and r.has_git:
            existed = ctx.backend.git.entry(r.full_name, tip.sha, path.strip("/")) is not None
        sha, _blob = ctx.backend.refs.put_contents(
            s, ctx.login, r, path, data, body.message, branch=body.branch, sha=body.sha
        )
        entry = ctx.backend.git.entry(r.full_name, sha, path.strip("/"))
        assert entry is not None
        out = w.FileCommit(
            content=render.content_item(r, branch, entry), commit=file_commit(ctx, s, r, sha)
        )
        return out, existed

    out, existed = ctx.run(go)
    return wire(out, status=200 if existed else 201)


@router.delete("/repos/{owner}/{repo}/contents/{path:path}")
def delete_contents(
    owner: str, repo: str, path: str, body: w.ContentsDelete, ctx: Auth
) -> Response:
    """Delete a file with a commit: ``{"content": null, "commit": ...}`` (GitHub's
    ``file-commit``, its content null)."""

    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.refs.delete_contents(
            s, ctx.login, r, path, body.message, body.sha, branch=body.branch
        )
        return w.FileCommit(content=None, commit=file_commit(ctx, s, r, sha))

    return wire(ctx.run(go))


def file_commit(ctx: Ctx, s: Session, r: Repo, sha: str) -> w.FileCommitCommit:
    """The ``commit`` of a contents write's answer."""
    c = render.commit(r, ctx.backend.git.commit(r.full_name, sha), users_by_email(s))
    return w.FileCommitCommit(
        sha=sha,
        node_id=c.node_id,
        url=c.commit.url,
        html_url=c.html_url,
        author=c.commit.author,
        committer=c.commit.committer,
        message=c.commit.message,
        tree=c.commit.tree,
        parents=c.parents,
    )


@router.get("/repos/{owner}/{repo}/branches")
def branches(owner: str, repo: str, ctx: Auth, paging: Paged) -> Response:
    def go(s: Session) -> list[w.ShortBranch]:
        r = ctx.backend.repos.get(s, owner, repo)
        return [
            w.ShortBranch(
                name=b.name,
                commit=w.BranchCommit(
                    sha=b.sha, url=f"{render.API}/repos/{r.full_name}/commits/{b.sha}"
                ),
            )
            for b in ctx.backend.repos.branches(s, r)
        ]

    items, headers = paging.slice(ctx.run(go))
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/branches/{branch:path}")
def get_branch(owner: str, repo: str, branch: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        b = ctx.backend.repos.branch(s, r, branch)
        if b is None:
            raise NotFound("Branch not found")
        info = ctx.backend.git.commit(r.full_name, b.sha)
        api = f"{render.API}/repos/{r.full_name}/branches/{b.name}"
        return w.Branch.model_validate(
            {
                "name": b.name,
                "commit": render.commit(r, info, users_by_email(s)),
                "_links": {"html": f"{render.WEB}/{r.full_name}/tree/{b.name}", "self": api},
                "protection_url": f"{api}/protection",
            }
        )

    return wire(ctx.run(go))


def ref_row(r: Repo, ref: str, sha: str) -> w.GitRef:
    return w.GitRef(
        ref=ref,
        node_id=node_id("Ref", abs(hash((r.id, ref))) % 10**9),
        url=f"{render.API}/repos/{r.full_name}/git/{ref}",
        object=w.GitRefObject(
            type="commit", sha=sha, url=f"{render.API}/repos/{r.full_name}/git/commits/{sha}"
        ),
    )


def refs(owner: str, repo: str, ctx: Ctx) -> tuple[Repo, dict[str, str]]:
    def go(s: Session) -> tuple[Repo, dict[str, str]]:
        r = ctx.backend.repos.get(s, owner, repo)
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        return r, ctx.backend.git.heads(r.full_name)

    return ctx.run(go)


@router.get("/repos/{owner}/{repo}/git/ref/{ref:path}")
def get_ref(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    r, heads = refs(owner, repo, ctx)
    full = f"refs/{ref}"
    if full not in heads:
        raise NotFound()
    return wire(ref_row(r, full, heads[full]))


@router.get("/repos/{owner}/{repo}/git/refs")
def list_refs(owner: str, repo: str, ctx: Auth) -> Response:
    r, heads = refs(owner, repo, ctx)
    return wire([ref_row(r, ref, sha) for ref, sha in sorted(heads.items())])


@router.get("/repos/{owner}/{repo}/git/refs/{ref:path}")
def refs_under(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    r, heads = refs(owner, repo, ctx)
    full = f"refs/{ref}"
    if full in heads:
        return wire(ref_row(r, full, heads[full]))
    matching = [ref_row(r, k, v) for k, v in sorted(heads.items()) if k.startswith(full)]
    if not matching:
        raise NotFound()
    return wire(matching)


@router.post("/repos/{owner}/{repo}/git/refs")
def create_ref(owner: str, repo: str, body: w.RefCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.GitRef:
        r = ctx.backend.repos.get(s, owner, repo)
        ctx.backend.refs.write(s, ctx.login, r, body.ref, body.sha, create=True)
        return ref_row(r, body.ref, body.sha)

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.patch("/repos/{owner}/{repo}/git/refs/{ref:path}")
def update_ref(owner: str, repo: str, ref: str, body: w.RefPatch, ctx: Auth) -> Response:
    def go(s: Session) -> w.GitRef:
        r = ctx.backend.repos.get(s, owner, repo)
        ctx.backend.refs.write(s, ctx.login, r, f"refs/{ref}", body.sha, force=body.force)
        return ref_row(r, f"refs/{ref}", body.sha)

    return wire(ctx.run(go))


@router.delete("/repos/{owner}/{repo}/git/refs/{ref:path}")
def delete_ref(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    ctx.run(lambda s: ctx.backend.refs.write(s, ctx.login, f"{owner}/{repo}", f"refs/{ref}", None))
    return Response(status_code=204)


@router.get("/repos/{owner}/{repo}/git/matching-refs/{ref:path}")
def matching_refs(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    r, heads = refs(owner, repo, ctx)
    full = f"refs/{ref}"
    return wire([ref_row(r, k, v) for k, v in sorted(heads.items()) if k.startswith(full)])


@router.get("/repos/{owner}/{repo}/commits")
def list_commits(
    owner: str,
    repo: str,
    ctx: Auth,
    paging: Paged,
    sha: str | None = None,
    path: str | None = None,
) -> Response:
    per = paging.per_page

    def go(s: Session) -> tuple[list[w.Commit], bool]:
        r = ctx.backend.repos.get(s, owner, repo)
        tip = ctx.backend.repos.resolve(s, r, sha)
        shas = ctx.backend.git.log(r.full_name, tip, skip=paging.offset, limit=per + 1, path=path)
        users = users_by_email(s)
        rows = [render.commit(r, ctx.backend.git.commit(r.full_name, c), users) for c in shas[:per]]
        return rows, len(shas) > per

    rows, more = ctx.run(go)
    # Counting every commit would cost a full walk, so the header has no ``last``.
    return wire(rows, headers=paging.links(more))


@router.get("/repos/{owner}/{repo}/commits/{ref:path}/status")
def combined_status(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        latest: dict[str, w.SimpleStatus] = {}
        for st in ctx.backend.repos.statuses(s, r, sha):  # newest first: keep the latest
            latest.setdefault(st.context, w.SimpleStatus(**dict(render.status(st, r))))
        # GitHub lists each context's latest status oldest first.
        latest = dict(sorted(latest.items(), key=lambda kv: kv[1].id))
        states = {st.state for st in latest.values()}
        state = "pending"
        if states and states <= {"success"}:
            state = "success"
        elif states & {"failure", "error"}:
            state = "failure"
        return w.CombinedStatus(
            state=state,
            statuses=list(latest.values()),
            sha=sha,
            total_count=len(latest),
            repository=render.repository(r, open_issue_count(s, r), simple=True),
            commit_url=f"{render.API}/repos/{r.full_name}/commits/{sha}",
            url=f"{render.API}/repos/{r.full_name}/commits/{sha}/status",
        )

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/commits/{ref:path}/statuses")
def commit_statuses(owner: str, repo: str, ref: str, ctx: Auth, paging: Paged) -> Response:
    def go(s: Session) -> list[w.Status]:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        return [render.status(st, r) for st in ctx.backend.repos.statuses(s, r, sha)]

    chunk, headers = paging.slice(ctx.run(go))
    return wire(chunk, headers=headers)


@router.get("/repos/{owner}/{repo}/commits/{ref:path}/check-runs")
def check_runs(owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        runs = [render.check_run(c, r) for c in ctx.backend.repos.check_runs(s, r, sha)]
        return w.CheckRuns(total_count=len(runs), check_runs=runs)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/commits/{ref:path}")
def get_commit(request: Request, owner: str, repo: str, ref: str, ctx: Auth) -> Response:
    def go(s: Session) -> tuple[w.Commit, str]:
        r = ctx.backend.repos.get(s, owner, repo)
        sha = ctx.backend.repos.resolve(s, r, ref)
        info = ctx.backend.git.commit(r.full_name, sha)
        parent = info.parents[0] if info.parents else None
        if parent is None:
            empty = ctx.backend.git.text(r.full_name, "hash-object", "-t", "tree", "/dev/null")
            files = ctx.backend.git.changes(r.full_name, empty, sha)
            diff = ctx.backend.git.text(r.full_name, "show", "--format=", sha)
        else:
            files = ctx.backend.git.changes(r.full_name, parent, sha)
            diff = ctx.backend.git.diff(r.full_name, parent, sha)
        return render.commit(r, info, users_by_email(s), files), diff

    out, diff = ctx.run(go)
    accept = request.headers.get("accept", "")
    if "diff" in accept or "patch" in accept:
        return Response(diff, media_type="application/vnd.github.v3.diff; charset=utf-8")
    return wire(out)


@router.get("/repos/{owner}/{repo}/statuses/{ref}")
def statuses_legacy(owner: str, repo: str, ref: str, ctx: Auth, paging: Paged) -> Response:
    return commit_statuses(owner, repo, ref, ctx, paging)


@router.post("/repos/{owner}/{repo}/statuses/{sha}")
def create_status(owner: str, repo: str, sha: str, body: w.StatusCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.Status:
        r = ctx.backend.repos.get(s, owner, repo)
        row = ctx.backend.labels.create_status(
            s,
            ctx.login,
            r,
            sha,
            body.state or "",
            context=body.context,
            description=body.description,
            target_url=body.target_url,
        )
        return render.status(row, r)

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.get("/raw/{owner}/{repo}/{rest:path}")
def raw(owner: str, repo: str, rest: str, ctx: Auth) -> Response:
    def go(s: Session) -> bytes:
        r = ctx.backend.repos.get(s, owner, repo)
        if not r.has_git:
            raise NotFound()
        # The ref may itself contain slashes: take the longest prefix that resolves.
        parts = rest.split("/")
        for cut in range(len(parts) - 1, 0, -1):
            ref, path = "/".join(parts[:cut]), "/".join(parts[cut:])
            sha = ctx.backend.git.resolve(r.full_name, ref)
            if sha is None:
                continue
            data = ctx.backend.git.read_file(r.full_name, sha, path)
            if data is not None:
                return data
        raise NotFound()

    return Response(ctx.run(go), media_type="text/plain; charset=utf-8")


@router.get("/repos/{owner}/{repo}/labels")
def list_labels(owner: str, repo: str, ctx: Auth, paging: Paged) -> Response:
    rows = ctx.run(
        lambda s: [render.label(lb) for lb in ctx.backend.repos.labels(s, f"{owner}/{repo}")]
    )
    chunk, headers = paging.slice(rows)
    return wire(chunk, headers=headers)


@router.post("/repos/{owner}/{repo}/labels")
def create_label(owner: str, repo: str, body: w.LabelCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.Label:
        return render.label(
            ctx.backend.labels.create(
                s,
                ctx.login,
                f"{owner}/{repo}",
                body.name or "",
                body.color,
                body.description,
            )
        )

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.get("/repos/{owner}/{repo}/labels/{name}")
def get_label(owner: str, repo: str, name: str, ctx: Auth) -> Response:
    return wire(
        ctx.run(lambda s: render.label(ctx.backend.repos.label(s, f"{owner}/{repo}", name)))
    )


@router.patch("/repos/{owner}/{repo}/labels/{name}")
def update_label(owner: str, repo: str, name: str, body: w.LabelUpdate, ctx: Auth) -> Response:
    def go(s: Session) -> w.Label:
        return render.label(
            ctx.backend.labels.update(
                s,
                ctx.login,
                f"{owner}/{repo}",
                name,
                new_name=body.new_name,
                color=body.color,
                description=body.description,
                set_description="description" in body.model_fields_set,
            )
        )

    return wire(ctx.run(go))


@router.delete("/repos/{owner}/{repo}/labels/{name}")
def delete_label(owner: str, repo: str, name: str, ctx: Auth) -> Response:
    ctx.run(lambda s: ctx.backend.labels.delete(s, ctx.login, f"{owner}/{repo}", name))
    return Response(status_code=204)
