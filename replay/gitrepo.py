"""The few git operations the project needs, with errors translated once.

Commands run as subprocesses with an environment we control entirely (a fixed identity, the
user's global and system configuration ignored, no prompts), so that the same inputs give the
same objects; history is read through GitPython's object model.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import git

from replay.errors import ToolError

IDENTITY = {
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@localhost",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@localhost",
}


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for git that ignores the user's configuration and never prompts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            # Single-threaded packing: delta search across threads makes packs differ from
            # run to run (see bundle_create for the one place this does not reach).
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "pack.threads",
            "GIT_CONFIG_VALUE_0": "1",
            **IDENTITY,
        }
    )
    env.update(extra or {})
    return env


def run(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run ``git args...`` in ``cwd`` and return its standard output (stripped)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=clean_env(env),
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise ToolError("git is not installed (the project needs git on PATH)") from exc
    if done.returncode != 0:
        stderr = " ".join(done.stderr.split())
        raise ToolError(f"git {' '.join(args)} failed in {cwd}: {stderr}")
    return done.stdout.strip()


def init(path: Path, *, bare: bool = False, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    run(path, "init", "-q", f"--initial-branch={branch}", *(["--bare"] if bare else []))
    return path


def bundle_create(repo: Path, out: Path, commit: str, ref: str) -> None:
    """Write a bundle holding exactly ``commit``'s history, under the single ref ``ref``.

    Packing is single-threaded (see :func:`clean_env`) so the same history gives the same bytes.
    """
    run(repo, "update-ref", f"refs/replay-bundle/{ref}", commit)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        # A fresh repository holding only commit's history, so nothing later can ride along.
        with _scratch_repo() as scratch:
            # Objects arrive loose (no unpack limit), so the bundle's pack is computed here,
            # single-threaded, rather than reusing the deltas of the pack upload-pack sent:
            # git drops GIT_CONFIG_* for the other repository's upload-pack, which therefore
            # packs with as many threads as there are cores, differently each time.
            run(
                scratch,
                "-c",
                "transfer.unpackLimit=2147483647",
                "fetch",
                "-q",
                "--no-tags",
                str(repo),
                f"{commit}:refs/heads/{ref}",
            )
            run(scratch, "bundle", "create", str(tmp), f"refs/heads/{ref}")
        tmp.replace(out)
    finally:
        run(repo, "update-ref", "-d", f"refs/replay-bundle/{ref}")


@contextmanager
def _scratch_repo() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="replay-git-") as tmp:
        yield init(Path(tmp) / "r", bare=True)


def bundle_heads(bundle: Path) -> dict[str, str]:
    """The refs a bundle carries, as ``{ref: sha}``; verifies the bundle is readable."""
    out = run(bundle.parent, "bundle", "list-heads", str(bundle))
    heads: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition(" ")
        heads[ref] = sha
    return heads


def checkout_from_bundle(bundle: Path, commit: str, dest: Path, branch: str) -> Path:
    """A fresh working repository at ``dest`` holding only ``commit``'s history.

    No remote, no tags, no reflog from elsewhere: the objects come from the bundle alone.
    """
    init(dest, branch=branch)
    # HEAD already names the unborn branch, hence --update-head-ok.
    run(
        dest,
        "fetch",
        "-q",
        "--no-tags",
        "--update-head-ok",
        str(bundle),
        f"{commit}:refs/heads/{branch}",
    )
    run(dest, "reset", "-q", "--hard", branch)
    # Neither names anything but the base commit here, but a cut repository holds no such
    # pointers at all (the audit checks for them).
    for name in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / name).unlink(missing_ok=True)
    return dest


def commit_count(repo: Path, rev: str = "HEAD") -> int:
    return int(run(repo, "rev-list", "--count", rev))


def commit_dates(repo: Path, rev: str = "HEAD") -> list[tuple[str, datetime]]:
    """``(sha, committer date)`` for every commit reachable from ``rev``, newest first."""
    return [(c.hexsha, c.committed_datetime) for c in git.Repo(repo).iter_commits(rev)]
