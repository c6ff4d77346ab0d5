"""The git helpers every other part runs git through."""

from __future__ import annotations

import hashlib
from pathlib import Path

from replay.base import gitrepo
from tests.casebuild.repos import commit


def _loose_in_17(repo: Path, count: int) -> None:
    """``count`` loose blobs whose ids start with 17: the one directory ``gc --auto`` counts
    to estimate the loose objects, so that with ``gc.auto=1`` any two of them trigger it."""
    found, i = 0, 0
    while found < count:
        data = f"blob {i}\n".encode()
        i += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            (repo / f"b{found}").write_bytes(data)
            gitrepo.run(repo, "hash-object", "-w", f"b{found}")
            (repo / f"b{found}").unlink()
            found += 1


def test_no_git_command_starts_an_automatic_gc(tmp_path: Path) -> None:
    """Issue 34 (cause 6): a scratch fetch left git's automatic gc running in the background
    while its temporary directory was removed ("Directory not empty"), and the gateway did not
    start. Here the fetch goes into a repository whose own configuration asks for a gc at the
    least excuse (``gc.auto=1``, two loose objects counted), run in the foreground
    (``gc.autoDetach=false``) so that a gc is seen, not raced: the fetch leaves no pack and no
    ``gc.pid``, the loose objects stay where they were."""
    source = gitrepo.init(tmp_path / "source")
    commit(source, "2026-03-01T10:00:00Z", "One", {"a.txt": "a\n"})
    scratch = gitrepo.init(tmp_path / "scratch", bare=True)
    gitrepo.run(scratch, "config", "gc.auto", "1")
    gitrepo.run(scratch, "config", "gc.autoDetach", "false")
    _loose_in_17(scratch, 3)
    gitrepo.run(scratch, "fetch", "-q", "--no-tags", str(source), "main:refs/heads/main")
    assert list((scratch / "objects" / "pack").iterdir()) == []
    assert not (scratch / "gc.pid").exists()
    assert len(list((scratch / "objects" / "17").iterdir())) == 3
    # A commit, which also runs the automatic maintenance, starts none either.
    commit(source, "2026-03-01T11:00:00Z", "Two", {"b.txt": "b\n"})
    gitrepo.run(source, "config", "gc.auto", "1")
    gitrepo.run(source, "config", "gc.autoDetach", "false")
    _loose_in_17(source, 3)
    commit(source, "2026-03-01T12:00:00Z", "Three", {"c.txt": "c\n"})
    assert list((source / ".git" / "objects" / "pack").iterdir()) == []


def test_a_clone_missing_an_object_is_named_as_such(tmp_path: Path) -> None:
    """Found by the fourth held-out corpus: a mirror without some large files' blobs stopped
    eight fixes with git's own words ("remote: fatal: unable to read ...", "possible
    repository corruption on the remote side"). The stop now says the clone is incomplete,
    names the object, and what to do."""
    import pytest

    from replay.base.errors import ToolError

    source = gitrepo.init(tmp_path / "source")
    commit(source, "2026-03-01T10:00:00Z", "One", {"big.bin": "a large file\n"})
    head = gitrepo.run(source, "rev-parse", "HEAD")
    blob = gitrepo.run(source, "rev-parse", "HEAD:big.bin")
    (source / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    store = gitrepo.init(tmp_path / "store", bare=True)
    with pytest.raises(ToolError) as caught:
        gitrepo.store_add(store, source, head)
    said = str(caught.value)
    assert f"the repository {source} lacks object {blob}" in said
    assert "incomplete clone or mirror" in said and "Fetch the repository again" in said
