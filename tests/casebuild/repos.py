"""Test repositories with a real bug and the fix that shipped (tests included)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from replay.base import gitrepo
from replay.casebuild.create import FixSource

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "snapshots" / "sources" / "demo" / "registry" / "index.json"
"""The demo's recorded index: pytest 8.3.5 and its dependencies, as of the demo's T."""
SETUP = ["python -m pip install pytest==8.3.5"]

BUGGY = '''\
def area(width, height):
    """The area of a width x height rectangle."""
    return width + height


def perimeter(width, height):
    return 2 * (width + height)
'''
FIXED = BUGGY.replace("return width + height", "return width * height")
TESTS = """\
from shapes import perimeter


def test_perimeter():
    assert perimeter(2, 3) == 10
"""
MORE_TESTS = (
    TESTS.replace("import perimeter", "import area, perimeter")
    + """

def test_area_multiplies():
    assert area(2, 3) == 6
    assert area(1, 7) == 7
"""
)


def shapes_source(repo: Path, fix: str) -> FixSource:
    """The fix of :func:`shapes_repo` as ``case create`` is given it: the ticket filed on 11
    March at 09:00, the demo's registry and a setup that installs pytest from it."""
    return FixSource(
        repo=repo,
        fix=fix,
        repo_name="acme/shapes",
        ticket_title="area() adds the sides",
        ticket_body="area(2, 3) returns 5, it should be 6.",
        issue_number=1,
        ticket_created=datetime.fromisoformat("2026-03-11T09:00:00Z"),
        setup=SETUP,
        registry_index=REGISTRY,
    )


def _env(when: str, committed: str | None = None) -> dict[str, str]:
    return {
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": committed or when,
        "GIT_AUTHOR_NAME": "Alice",
        "GIT_AUTHOR_EMAIL": "alice@example.test",
    }


def commit(
    repo: Path, when: str, subject: str, files: dict[str, str], committed: str | None = None
) -> str:
    """Commit ``files`` authored ``when`` and committed then too, or ``committed``."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    gitrepo.run(repo, "add", "-A")
    gitrepo.run(repo, "commit", "-q", "-m", subject, env=_env(when, committed))
    return gitrepo.run(repo, "rev-parse", "HEAD")


def merge(repo: Path, when: str, branch: str, subject: str) -> str:
    """Merge ``branch`` into the current branch with a merge commit, as GitHub's merge button."""
    gitrepo.run(repo, "merge", "-q", "--no-ff", "-m", subject, branch, env=_env(when))
    return gitrepo.run(repo, "rev-parse", "HEAD")


def shapes_repo(
    path: Path, branch: str = "main", files: dict[str, str] | None = None
) -> tuple[Path, str, str]:
    """``(repo, base, fix)``: area() adds instead of multiplying; the fix adds its test.

    The history has merge commits, as most real ones do: a docs branch merged before the base,
    and the fix itself is the merge commit of pull request #2 (``fix^`` is the base). The
    default branch is ``branch``; ``files`` are added by the first commit, and so is what a
    repository already at ``path`` has staged.
    """
    if not (path / ".git").exists():
        gitrepo.init(path, branch=branch)
    commit(
        path, "2026-03-01T10:00:00Z", "Initial commit", {"README.md": "# shapes\n", **(files or {})}
    )
    gitrepo.run(path, "checkout", "-q", "-b", "docs")
    commit(path, "2026-03-01T12:00:00Z", "Document the package", {"docs/index.md": "shapes\n"})
    gitrepo.run(path, "checkout", "-q", branch)
    commit(
        path,
        "2026-03-02T10:00:00Z",
        "Add area and perimeter",
        {"shapes.py": BUGGY, "tests/test_shapes.py": TESTS},
    )
    base = merge(path, "2026-03-02T11:00:00Z", "docs", "Merge pull request #1 from acme/docs")
    gitrepo.run(path, "checkout", "-q", "-b", "fix-area")
    commit(
        path,
        "2026-03-11T10:00:00Z",
        "Fix area: multiply the sides",
        {"shapes.py": FIXED, "tests/test_shapes.py": MORE_TESTS},
    )
    gitrepo.run(path, "checkout", "-q", branch)
    fix = merge(
        path,
        "2026-03-11T15:00:00Z",
        "fix-area",
        "Merge pull request #2 from acme/fix-area\n\nFix area: multiply the sides",
    )
    gitrepo.run(path, "branch", "-q", "-D", "fix-area", "docs")
    # Work after the fix, which no case may see.
    commit(path, "2026-03-12T10:00:00Z", "Release 0.2.0", {"CHANGES": "0.2.0: area fixed\n"})
    return path, base, fix


def rebased_repo(path: Path) -> tuple[Path, str, str]:
    """``(repo, base, fix)``: the fix was written on 3 March and rebased on 6 March onto a
    base that had moved on (a docs commit of 5 March): its author date is before the base's
    history ends, its committer date after."""
    gitrepo.init(path)
    commit(path, "2026-03-01T10:00:00Z", "Initial commit", {"README.md": "# shapes\n"})
    commit(
        path,
        "2026-03-02T10:00:00Z",
        "Add area and perimeter",
        {"shapes.py": BUGGY, "tests/test_shapes.py": TESTS},
    )
    base = commit(path, "2026-03-05T10:00:00Z", "Document the package", {"docs/i.md": "s\n"})
    fix = commit(
        path,
        "2026-03-03T10:00:00Z",
        "Fix area: multiply the sides",
        {"shapes.py": FIXED, "tests/test_shapes.py": MORE_TESTS},
        committed="2026-03-06T10:00:00Z",
    )
    return path, base, fix


def tag(repo: Path, name: str, rev: str, when: str | None = None) -> str:
    """Tag ``rev``: a tag object dated ``when`` (its tagger date), else a lightweight tag.
    Returns the object the tag names."""
    if when is None:
        gitrepo.run(repo, "tag", name, rev)
    else:
        gitrepo.run(repo, "tag", "-a", "-m", f"Release {name}", name, rev, env=_env(when))
    return gitrepo.run(repo, "rev-parse", f"refs/tags/{name}")


def tagged_repo(path: Path) -> tuple[Path, str, str, dict[str, str]]:
    """``(repo, base, fix, tags)``: :func:`shapes_repo` with its releases tagged, for a T of 11
    March 09:00 (the ticket's creation). ``v0.1`` (lightweight, on the first commit) and
    ``v0.2`` (annotated on 2 March) are on the base's history before T; ``v0.3`` tags the
    base itself but was made after T (12 March); ``v0.4`` tags the fix, after the base."""
    repo, base, fix = shapes_repo(path)
    first = gitrepo.run(repo, "rev-list", "--max-parents=0", base)
    tags = {
        "v0.1": tag(repo, "v0.1", first),
        "v0.2": tag(repo, "v0.2", f"{base}^", "2026-03-02T10:30:00Z"),
        "v0.3": tag(repo, "v0.3", base, "2026-03-12T09:00:00Z"),
        "v0.4": tag(repo, "v0.4", fix, "2026-03-11T16:00:00Z"),
    }
    return repo, base, fix, tags


def with_submodule(path: Path, url: str) -> tuple[Path, str, str, str]:
    """``(repo, base, fix, pinned)``: :func:`shapes_repo` whose first commit also adds the
    submodule ``vendor`` (a repository of its own, made beside it, whose ``.gitmodules`` URL
    is ``url``) pinned at ``pinned``; git keeps it in ``.git/modules/vendor``."""
    vendor = gitrepo.init(path.parent / f"{path.name}-vendor")
    pinned = commit(vendor, "2026-02-20T10:00:00Z", "Vendor data", {"data.txt": "42\n"})
    gitrepo.init(path)
    gitrepo.run(
        path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(vendor), "vendor"
    )
    gitrepo.run(path, "config", "-f", ".gitmodules", "submodule.vendor.url", url)
    gitrepo.run(path, "submodule", "sync", "-q")
    repo, base, fix = shapes_repo(path)
    return repo, base, fix, pinned
