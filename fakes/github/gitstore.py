"""The fake's git repositories: one bare repository per snapshot repository, on local disk.

Each is created from the snapshot's bundle (so it holds only the base commit's history) in a
directory the backend owns, and re-created on reset. Reads and the commits the REST API makes
(contents updates, merges) go through git plumbing, so what ``git clone`` sees and what the
API says are the same objects.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from replay.base.gitrepo import clean_env

ZERO = "0" * 40
GIT_INT_MAX = 2**31 - 1
"""git parses counts such as ``--skip`` as a C int; larger ones are a fatal error."""


class GitFailed(Exception):
    """A git command failed; the message holds its stderr."""


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    date: datetime


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree: str
    parents: list[str]
    author: Person
    committer: Person
    message: str


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    """``blob``, ``tree`` or ``commit`` (a submodule)."""
    sha: str
    size: int
    path: str


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str
    """GitHub's words: ``added``, ``removed``, ``modified``, ``renamed``."""
    additions: int
    deletions: int
    blob_sha: str
    previous_path: str | None
    patch: str


def _stamp(when: datetime) -> str:
    # Git dates are whole seconds: round up, so a commit made during the run is after T.
    return f"{math.ceil(when.timestamp())} +0000"


class GitStore:
    """The bare repositories under ``root``, named ``owner/name.git``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, full_name: str) -> Path:
        return self.root / f"{full_name}.git"

    def git(
        self,
        full_name: str,
        *args: str,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
    ) -> bytes:
        done = subprocess.run(
            ["git", *args],
            cwd=self.path(full_name),
            env=clean_env(env),
            input=input,
            capture_output=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise GitFailed(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def text(self, full_name: str, *args: str, env: dict[str, str] | None = None) -> str:
        return self.git(full_name, *args, env=env).decode(errors="replace").strip()

    # ----------------------------------------------------------------- lifecycle

    def create(
        self,
        full_name: str,
        bundle: Path,
        commit: str,
        branch: str,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """A fresh bare repository holding ``commit``'s history as ``branch`` and the tags
        ``tags`` (``{name: object}``, a snapshot's: those on that history at T), nothing
        else."""
        dest = self.path(full_name)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        self.git(full_name, "init", "-q", "--bare", f"--initial-branch={branch}")
        self.git(
            full_name, "fetch", "-q", "--no-tags", str(bundle), f"{commit}:refs/heads/{branch}",
            *(f"{sha}:refs/tags/{name}" for name, sha in sorted((tags or {}).items())),
        )  # fmt: skip
        (dest / "FETCH_HEAD").unlink(missing_ok=True)
        self.git(full_name, "config", "http.receivepack", "true")
        self.git(full_name, "config", "uploadpack.allowAnySHA1InWant", "false")
        self.git(full_name, "config", "receive.denyDeleteCurrent", "true")
        # GitHub's refs/pull/N/head are read-only: advertised to fetches, refused to pushes.
        self.git(full_name, "config", "receive.hideRefs", "refs/pull")

    def exists(self, full_name: str) -> bool:
        return (self.path(full_name) / "HEAD").is_file()

    # ----------------------------------------------------------------- reads

    def heads(self, full_name: str) -> dict[str, str]:
        """Every ref under refs/heads and refs/tags, as ``{ref: sha}``."""
        out = self.text(
            full_name,
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
            "refs/tags",
        )
        refs: dict[str, str] = {}
        for line in out.splitlines():
            ref, _, sha = line.partition(" ")
            refs[ref] = sha
        return refs

    def resolve(self, full_name: str, rev: str) -> str | None:
        """The commit ``rev`` names (a branch, tag or SHA), or None."""
        if rev.startswith("-"):
            return None
        out = self.git(full_name, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
        sha = out.decode().strip()
        return sha or None

    def is_ancestor(self, full_name: str, older: str, newer: str) -> bool:
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", older, newer],
            cwd=self.path(full_name),
            env=clean_env(),
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    def entry(self, full_name: str, commit: str, path: str) -> TreeEntry | None:
        """The tree entry at ``path`` in ``commit`` (the root tree for ``""``)."""
        if not path:
            tree = self.text(full_name, "rev-parse", f"{commit}^{{tree}}")
            return TreeEntry("040000", "tree", tree, 0, "")
        out = self.text(full_name, "ls-tree", "-z", "-l", "--full-tree", commit, "--", path)
        entries = self._parse_tree(out)
        return entries[0] if entries and entries[0].path == path else None

    def list_dir(self, full_name: str, commit: str, path: str) -> list[TreeEntry]:
        spec = [f"{path}/"] if path else []
        out = self.text(full_name, "ls-tree", "-z", "-l", "--full-tree", commit, "--", *spec)
        return self._parse_tree(out)

    @staticmethod
    def _parse_tree(out: str) -> list[TreeEntry]:
        """``ls-tree -z`` output: NUL-terminated, so paths come unquoted (``café.md`` as is)."""
        entries = []
        for line in out.split("\0"):
            if not line:
                continue
            meta, _, path = line.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append(TreeEntry(mode, kind, sha, 0 if size == "-" else int(size), path))
        return entries

    def grep(self, full_name: str, commit: str, terms: list[str]) -> list[str]:
        """Paths in ``commit`` whose text holds every term (case-insensitive, fixed strings)."""
        args = ["grep", "-l", "-I", "-i", "-F", "--full-name"]
        for i, term in enumerate(terms):
            args += (["--and"] if i else []) + ["-e", term]
        done = subprocess.run(
            ["git", *args, commit, "--"],
            cwd=self.path(full_name),
            env=clean_env(),
            capture_output=True,
            check=False,
        )
        if done.returncode not in (0, 1):  # 1: nothing matched
            raise GitFailed(done.stderr.decode(errors="replace"))
        prefix = f"{commit}:"
        return [line.removeprefix(prefix) for line in done.stdout.decode().splitlines()]

    def blob(self, full_name: str, sha: str) -> bytes:
        return self.git(full_name, "cat-file", "blob", sha)

    def read_file(self, full_name: str, commit: str, path: str) -> bytes | None:
        e = self.entry(full_name, commit, path)
        return None if e is None or e.type != "blob" else self.blob(full_name, e.sha)

    def commit(self, full_name: str, sha: str) -> CommitInfo:
        fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%B"
        out = self.git(full_name, "show", "-s", f"--format={fmt}", sha, "--").decode(
            errors="replace"
        )
        parts = out.split("\x00", 9)
        return CommitInfo(
            sha=parts[0],
            tree=parts[1],
            parents=parts[2].split(),
            author=Person(parts[3], parts[4], datetime.fromtimestamp(int(parts[5]), UTC)),
            committer=Person(parts[6], parts[7], datetime.fromtimestamp(int(parts[8]), UTC)),
            message=parts[9].rstrip("\n"),
        )

    def log(
        self, full_name: str, rev: str, *, skip: int = 0, limit: int = 30, path: str | None = None
    ) -> list[str]:
        if skip > GIT_INT_MAX or limit > GIT_INT_MAX:
            return []  # past any history git can count: an empty page, as GitHub answers
        args = ["rev-list", f"--skip={skip}", f"--max-count={limit}", rev]
        if path:
            args += ["--", path]
        return self.text(full_name, *args).split()

    def commits_between(self, full_name: str, base: str, head: str) -> list[str]:
        """Commits on ``head`` not on ``base``, oldest first (a pull request's commits)."""
        return self.text(full_name, "rev-list", "--reverse", head, f"^{base}").split()

    def merge_base(self, full_name: str, a: str, b: str) -> str | None:
        out = self.git(full_name, "merge-base", a, b, check=False).decode().strip()
        return out or None

    def diff(self, full_name: str, base: str, head: str) -> str:
        """The three-dot diff GitHub shows for a pull request."""
        mb = self.merge_base(full_name, base, head) or base
        return self.git(full_name, "diff", "--full-index", "-M", mb, head).decode(errors="replace")

    def patch(self, full_name: str, base: str, head: str) -> str:
        """``git format-patch`` output for the commits of a pull request."""
        return self.git(full_name, "format-patch", "--stdout", "-M", f"{base}..{head}").decode(
            errors="replace"
        )

    def changes(self, full_name: str, base: str, head: str) -> list[FileChange]:
        """Per-file changes of the three-dot diff, in GitHub's ``files`` terms."""
        mb = self.merge_base(full_name, base, head) or base
        raw = self.text(full_name, "diff", "--raw", "--numstat", "-z", "-M", mb, head)
        return self._parse_changes(full_name, raw, mb, head)

    def _parse_changes(self, full_name: str, raw: str, base: str, head: str) -> list[FileChange]:
        tokens = raw.split("\x00")
        records: list[tuple[str, str, str | None]] = []  # (status letter, path, old path)
        blobs: dict[str, str] = {}
        i = 0
        while i < len(tokens) and tokens[i].startswith(":"):
            meta = tokens[i].split()
            status = meta[4][0]
            if status in "RC":
                src, dst = tokens[i + 1], tokens[i + 2]
                records.append((status, dst, src))
                i += 3
            else:
                records.append((status, tokens[i + 1], None))
                i += 2
            blobs[records[-1][1]] = meta[3]
        stats: dict[str, tuple[int, int]] = {}
        while i < len(tokens):
            tok = tokens[i]
            if not tok:
                i += 1
                continue
            plus, minus, name = tok.split("\t", 2)
            if name == "":  # a rename: the two paths follow
                name = tokens[i + 2]
                i += 3
            else:
                i += 1
            stats[name] = (int(plus) if plus != "-" else 0, int(minus) if minus != "-" else 0)
        words = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied"}
        out = []
        for status, changed, old in records:
            spec = [old, changed] if old is not None else [changed]
            patch = self.git(full_name, "diff", "-M", base, head, "--", *spec).decode(
                errors="replace"
            )
            hunk_at = patch.find("\n@@")
            add, dele = stats.get(changed, (0, 0))
            out.append(
                FileChange(
                    path=changed,
                    status=words.get(status, "modified"),
                    additions=add,
                    deletions=dele,
                    blob_sha=blobs[changed],
                    previous_path=old,
                    patch=patch[hunk_at + 1 :] if hunk_at >= 0 else "",
                )
            )
        return out

    # ----------------------------------------------------------------- writes

    def put_file(
        self,
        full_name: str,
        branch: str,
        parent: str | None,
        path: str,
        content: bytes,
        message: str,
        author: Person,
    ) -> tuple[str, str]:
        """Commit ``content`` at ``path`` on ``branch``; returns (commit sha, blob sha)."""
        blob = self.write_blob(full_name, content)
        # The contents API commits as the token's user: committer and author alike
        # (octokit's recordings of api.github.com); web-flow's "GitHub" commits merges.
        sha = self.commit_files(
            full_name, branch, parent, {path: blob}, [], message, author, committer=author
        )
        return sha, blob

    def commit_files(
        self,
        full_name: str,
        branch: str,
        parent: str | None,
        added: dict[str, str],
        deleted: list[str],
        message: str,
        author: Person,
        committer: Person | None = None,
    ) -> str:
        """Commit on ``branch`` (at ``parent``) the blobs ``added`` (path: blob sha, already
        written) and the removal of ``deleted``, and move the branch; returns the commit.
        The caller holds the push lock (the index file is per branch)."""
        index = self.path(full_name) / f"replay-index-{branch.replace('/', '_')}"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            if parent:
                self.git(full_name, "read-tree", parent, env=env)
            else:
                self.git(full_name, "read-tree", "--empty", env=env)
            # --index-info needs no work tree (a bare repository has none); mode 0 removes a
            # path; -z takes any path as it is.
            entries = [f"0 {ZERO}\t{path}" for path in deleted]
            entries += [f"100644 {blob}\t{path}" for path, blob in added.items()]
            if entries:
                info = "".join(e + "\0" for e in entries).encode()
                self.git(full_name, "update-index", "-z", "--index-info", input=info, env=env)
            tree = self.text(full_name, "write-tree", env=env)
        finally:
            index.unlink(missing_ok=True)
        parents = [parent] if parent else []
        sha = self.commit_tree(full_name, tree, parents, message, author, committer=committer)
        self.update_ref(full_name, f"refs/heads/{branch}", sha, parent)
        return sha

    def write_blob(self, full_name: str, content: bytes) -> str:
        """Store ``content`` as a blob; returns its sha."""
        return self.git(full_name, "hash-object", "-w", "--stdin", input=content).decode().strip()

    def commit_tree(
        self,
        full_name: str,
        tree: str,
        parents: list[str],
        message: str,
        author: Person,
        committer: Person | None = None,
    ) -> str:
        """A commit of ``tree``; committed by ``committer``, or by GitHub (web-flow)."""
        env = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_AUTHOR_DATE": _stamp(author.date),
            "GIT_COMMITTER_NAME": committer.name if committer else "GitHub",
            "GIT_COMMITTER_EMAIL": committer.email if committer else "noreply@github.com",
            "GIT_COMMITTER_DATE": _stamp(author.date),
        }
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        return self.git(full_name, *args, input=message.encode(), env=env).decode().strip()

    def update_ref(self, full_name: str, ref: str, new: str, old: str | None) -> None:
        self.git(full_name, "update-ref", ref, new, old or ZERO)

    def set_ref(self, full_name: str, ref: str, new: str) -> None:
        """Point ``ref`` at ``new`` whatever it pointed at before."""
        self.git(full_name, "update-ref", ref, new)

    def merge_tree(self, full_name: str, base: str, head: str) -> str | None:
        """The tree of merging ``head`` into ``base``, or None on a conflict."""
        done = subprocess.run(
            ["git", "merge-tree", "--write-tree", base, head],
            cwd=self.path(full_name),
            env=clean_env(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            return None
        return done.stdout.decode().split("\n", 1)[0].strip()

    def pick_tree(self, full_name: str, onto: str, commit: str) -> str | None:
        """The tree of replaying ``commit`` onto ``onto`` (a rebase step), None on conflict."""
        info = self.commit(full_name, commit)
        if not info.parents:
            return info.tree
        done = subprocess.run(
            ["git", "merge-tree", "--write-tree", f"--merge-base={info.parents[0]}", onto, commit],
            cwd=self.path(full_name),
            env=clean_env(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            return None
        return done.stdout.decode().split("\n", 1)[0].strip()
