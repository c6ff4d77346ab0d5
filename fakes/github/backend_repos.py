"""Users and repositories, and what hangs off a repository that is not a thread: branches,
labels, commit statuses, check runs, revisions and code search. Every other area finds its
rows through here."""

from __future__ import annotations

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from fakes.github.backend_state import GitHubState, split_query
from fakes.github.errors import GitHubError, NotFound, ValidationFailed
from fakes.github.gitstore import TreeEntry
from fakes.github.models import Branch, CheckRun, CommitStatus, Label, Repo, User

# Built once: every request looks these up, and only binds its values.
_USER = select(User).where(func.lower(User.login) == bindparam("login"))
_REPO = select(Repo).where(
    func.lower(Repo.owner) == bindparam("owner"), func.lower(Repo.name) == bindparam("name")
)


class Repos:
    """Lookups (404 when unknown) and the reads about repositories."""

    def __init__(self, state: GitHubState) -> None:
        self.state = state

    def user(self, s: Session, login: str) -> User:
        row = s.scalar(_USER, {"login": login.lower()})
        if row is None:
            raise NotFound()
        return row

    def actor(self, s: Session, actor: str) -> User:
        """The user a change is made as; a login the world does not know is a bad token."""
        try:
            return self.user(s, actor)
        except NotFound as exc:
            raise GitHubError("Bad credentials") from exc

    def get(self, s: Session, repo: Repo | str, name: str | None = None) -> Repo:
        """A repository by row, ``owner/name``, or (owner, name); 404 when unknown."""
        if isinstance(repo, Repo):
            return repo
        owner, _, rest = repo.partition("/")
        name = name if name is not None else rest
        row = s.scalar(_REPO, {"owner": owner.lower(), "name": name.lower()})
        if row is None:
            raise NotFound()
        return row

    def by_id(self, s: Session, repo_id: int) -> Repo:
        row = s.get(Repo, repo_id)
        if row is None:
            raise NotFound()
        return row

    def branches(self, s: Session, repo: Repo | str) -> list[Branch]:
        r = self.get(s, repo)
        return list(s.scalars(select(Branch).where(Branch.repo_id == r.id).order_by(Branch.name)))

    def branch(self, s: Session, repo: Repo | str, name: str) -> Branch | None:
        r = self.get(s, repo)
        return s.scalar(select(Branch).where(Branch.repo_id == r.id, Branch.name == name))

    def labels(self, s: Session, repo: Repo | str) -> list[Label]:
        return list(self.get(s, repo).labels)

    def label(self, s: Session, repo: Repo | str, name: str) -> Label:
        r = self.get(s, repo)
        row = s.scalar(
            select(Label).where(Label.repo_id == r.id, func.lower(Label.name) == name.lower())
        )
        if row is None:
            raise NotFound()
        return row

    def statuses(self, s: Session, repo: Repo | str, sha: str) -> list[CommitStatus]:
        r = self.get(s, repo)
        q = select(CommitStatus).where(CommitStatus.repo_id == r.id, CommitStatus.sha == sha)
        return list(s.scalars(q.order_by(CommitStatus.id.desc())))

    def check_runs(self, s: Session, repo: Repo | str, sha: str) -> list[CheckRun]:
        r = self.get(s, repo)
        q = select(CheckRun).where(CheckRun.repo_id == r.id, CheckRun.head_sha == sha)
        return list(s.scalars(q.order_by(CheckRun.id)))

    def resolve(self, s: Session, repo: Repo | str, rev: str | None) -> str:
        """The commit a branch name, tag or SHA names in the repository; 404 otherwise."""
        r = self.get(s, repo)
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        sha = self.state.git.resolve(r.full_name, rev or r.default_branch)
        if sha is None:
            raise NotFound(f"No commit found for the ref {rev}")
        return sha

    def search_code(self, s: Session, query: str) -> list[tuple[Repo, TreeEntry]]:
        """GitHub's code search over the default branches: ``repo:``, ``user:``/``org:``,
        ``path:``, ``filename:``, ``extension:`` and words that must all appear."""
        git = self.state.git
        terms: list[str] = []
        repos = select(Repo).where(Repo.has_git.is_(True))
        paths: list[str] = []
        names: list[str] = []
        extensions: list[str] = []
        for token in split_query(query):
            key, sep, value = token.partition(":")
            key, value = key.lower(), value.strip('"')
            if not sep:
                terms.append(token.strip('"'))
            elif key == "repo":
                owner, _, name = value.partition("/")
                repos = repos.where(
                    func.lower(Repo.owner) == owner.lower(), func.lower(Repo.name) == name.lower()
                )
            elif key in ("user", "org", "owner"):
                repos = repos.where(func.lower(Repo.owner) == value.lower())
            elif key == "path":
                paths.append(value.strip("/"))
            elif key == "filename":
                names.append(value)
            elif key == "extension":
                extensions.append(value.lstrip("."))
            elif key in ("in", "language", "lang", "size", "fork"):
                continue
            else:
                terms.append(token)
        if not terms:
            raise ValidationFailed("Search", "q", "invalid")
        found: list[tuple[Repo, TreeEntry]] = []
        for r in s.scalars(repos.order_by(Repo.id)):
            tip = git.resolve(r.full_name, r.default_branch)
            if tip is None:
                continue
            for path in git.grep(r.full_name, tip, terms):
                name = path.rsplit("/", 1)[-1]
                if paths and not any(path == p or path.startswith(p + "/") for p in paths):
                    continue
                if names and name not in names:
                    continue
                if extensions and name.rsplit(".", 1)[-1] not in extensions:
                    continue
                entry = git.entry(r.full_name, tip, path)
                if entry is not None:
                    found.append((r, entry))
        return found
