"""Each miner on small histories made here: a real git repository of a few commits, and the
pull requests, tickets and threads around them as records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from replay.base import gitrepo
from replay.mine.detect import (
    MineOptions,
    fix_that_broke,
    loop,
    mine,
    optimiser,
    plain,
    rescue,
    weakened,
)
from replay.mine.history import (
    Commit,
    FileChange,
    History,
    Post,
    Pull,
    SlackThread,
    closed_refs,
    read_commits,
)

DAY0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CODE = "def area(w, h):\n    return w + h\n"
TESTS = "from shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


class Repo:
    """A repository whose commits are made one day apart (unless told), by name."""

    def __init__(self, path: Path) -> None:
        self.path = gitrepo.init(path)
        self.day = 0
        self.shas: dict[str, str] = {}

    def commit(self, name: str, files: dict[str, str | None], message: str, days: int = 1) -> str:
        for rel, text in files.items():
            target = self.path / rel
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.day += days
        when = (DAY0 + timedelta(days=self.day)).isoformat()
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "Alice",
               "GIT_AUTHOR_EMAIL": "alice@example.test"}  # fmt: skip
        gitrepo.run(self.path, "add", "-A")
        gitrepo.run(self.path, "commit", "-q", "-m", message, env=env)
        self.shas[name] = gitrepo.run(self.path, "rev-parse", "HEAD")
        return self.shas[name]

    def history(self, pulls: list[Pull] | None = None, **kw: object) -> History:
        h = History("acme/shapes", self.path, "main", read_commits(self.path, "main"))
        h.pulls = pulls or []
        for key, value in kw.items():
            setattr(h, key, value)
        return h

    def at(self, name: str) -> datetime:
        found = next(c for c in read_commits(self.path, "main") if c.sha == self.shas[name])
        return found.date


def _pull(number: int, head: str, base: str, merged: datetime | None, **kw: object) -> Pull:
    data: dict[str, object] = {
        "number": number, "title": f"PR {number}", "body": "", "author": "alice",
        "agent": False, "created_at": DAY0, "closed_at": merged, "merged_at": merged,
        "head_sha": head, "base_sha": base, "merge_commit": head if merged else None,
        "closes": (),
    }  # fmt: skip
    data.update(kw)
    return Pull(**data)  # type: ignore[arg-type]


def _started(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit("init", {"shapes.py": CODE, "tests/test_shapes.py": "def test_x():\n    pass\n"},
                "Initial commit")  # fmt: skip
    return repo


def test_closed_refs() -> None:
    assert closed_refs("Fixes #12 and closes ENG-7; resolves: #3") == ("#12", "ENG-7", "#3")
    assert closed_refs("Refs #12, see ENG-7") == ()


def test_plain_needs_a_ticket_closed_and_tests_beside_the_code(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    repo.commit("fix", {"shapes.py": CODE.replace("+", "*"), "tests/test_shapes.py": TESTS},
                "Multiply in area\n\nFixes #1.")  # fmt: skip
    repo.commit("untested", {"shapes.py": CODE.replace("+", "*") + "\nX = 1\n"}, "Fixes #2")
    repo.commit("unclosed", {"shapes.py": CODE, "tests/test_shapes.py": TESTS + "\n"}, "Tidy")
    (found,) = plain(repo.history())
    assert (found.kind, found.ticket, found.fix) == ("plain", "#1", repo.shas["fix"])
    assert found.base == repo.shas["init"]
    assert "closes #1" in found.reason and "tests/test_shapes.py" in found.reason


def test_blame_names_the_commits_whose_lines_a_commit_takes_back(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    repo.commit("a", {"shapes.py": CODE + "\n\nLIMIT = 10\n"}, "Add LIMIT")
    repo.commit("b", {"shapes.py": CODE.replace("+", "*") + "\n\nLIMIT = 10\n"}, "Fix area")
    repo.commit("c", {"shapes.py": CODE.replace("+", "*") + "\n\nLIMIT = 20\n"}, "Raise LIMIT")
    commits = {c.sha: c for c in read_commits(repo.path, "main")}
    assert commits[repo.shas["b"]].rewrites == {repo.shas["init"]}
    assert commits[repo.shas["c"]].rewrites == {repo.shas["a"]}
    assert commits[repo.shas["a"]].rewrites == frozenset()  # it only adds lines


def test_fix_that_broke_a_later_fix_of_the_same_lines_within_days(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    repo.commit("fix", {"shapes.py": CODE.replace("w + h", "w * h"),
                        "tests/test_shapes.py": TESTS}, "Multiply in area, fixes #1")  # fmt: skip
    repo.commit("again", {"shapes.py": CODE.replace("w + h", "abs(w * h)")},
                "Fix negative areas, fixes #2", days=2)  # fmt: skip
    (found,) = fix_that_broke(repo.history(), days=14)
    assert (found.id, found.base, found.fix) == (
        f"broke-{repo.shas['fix'][:7]}", repo.shas["init"], repo.shas["again"],
    )  # fmt: skip
    assert found.later == (repo.shas["again"],) and "2 day(s) later" in found.reason
    # Too late to count as the same fix breaking.
    assert fix_that_broke(repo.history(), days=1) == []


def test_fix_that_broke_a_revert(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    fix = repo.commit("fix", {"shapes.py": CODE.replace("+", "*")}, "Multiply in area")
    repo.commit("revert", {"shapes.py": CODE},
                f'Revert "Multiply in area"\n\nThis reverts commit {fix}.')  # fmt: skip
    (found,) = fix_that_broke(repo.history())
    assert found.reverted_by == repo.shas["revert"] and found.fix == fix
    assert "was reverted by" in found.reason


def test_loop_needs_enough_pull_requests_closed_unmerged(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    fix = repo.commit("fix", {"shapes.py": CODE.replace("+", "*"),
                              "tests/test_shapes.py": TESTS}, "Fix area (#4)")  # fmt: skip
    day = DAY0 + timedelta(hours=1)
    tries = [
        _pull(n, f"{n:040x}", repo.shas["init"], None, closed_at=day, created_at=day,
              author="bot", agent=True, closes=("#1",))
        for n in (2, 3)
    ]  # fmt: skip
    landed = _pull(4, fix, repo.shas["init"], repo.at("fix"), created_at=day + timedelta(1),
                   closes=("#1",))  # fmt: skip
    (found,) = loop(repo.history([*tries, landed]))
    assert (found.id, found.attempts, found.pull) == ("loop-1", (2, 3), 4)
    assert "#2 (bot, the agent, closed unmerged" in found.reason
    assert loop(repo.history([tries[0], landed])) == []
    assert loop(repo.history([*tries, landed]), attempts=3) == []


def _rescue_repo(tmp_path: Path) -> Repo:
    repo = _started(tmp_path)
    repo.commit("first", {"shapes.py": CODE + "\n\nimport warnings\n"}, "Warn", days=0)
    repo.commit("second", {"shapes.py": CODE + "\n\nCALLBACK = None\n"}, "Callback", days=1)
    return repo


def _thread_post(at: datetime, agent: bool, name: str = "dana") -> Post:
    text = "On https://github.com/acme/shapes/pull/5: use a callback"
    return Post("slack", "#eng/1.000001", "U1", name, at, text, agent)


def test_rescue_a_human_reply_between_pushes_that_changed_course(tmp_path: Path) -> None:
    repo = _rescue_repo(tmp_path)
    pull = _pull(5, repo.shas["second"], repo.shas["init"], repo.at("second"),
                 author="bot", agent=True, closes=("#1",))  # fmt: skip
    between = repo.at("first") + timedelta(hours=2)
    thread = SlackThread("C1", "eng", "1.000001", (_thread_post(between, agent=False),))
    (found,) = rescue(repo.history([pull], threads=[thread]))
    assert (found.id, found.base, found.fix) == ("rescue-5", repo.shas["init"], repo.shas["second"])
    assert found.hints[0].name == "dana" and "took back lines of" in found.reason
    # The agent talking to itself is no rescue; nor is a reply after the last push.
    agent_only = SlackThread("C1", "eng", "1.000001", (_thread_post(between, agent=True),))
    assert rescue(repo.history([pull], threads=[agent_only])) == []
    late = SlackThread("C1", "eng", "1.000001",
                       (_thread_post(repo.at("second") + timedelta(hours=1), False),))  # fmt: skip
    assert rescue(repo.history([pull], threads=[late])) == []


def test_rescue_needs_the_next_push_to_change_course(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    repo.commit("first", {"shapes.py": CODE + "\n\nA = 1\n"}, "A", days=0)
    repo.commit("second", {"shapes.py": CODE + "\n\nA = 1\nB = 2\n"}, "B", days=1)  # adds only
    pull = _pull(5, repo.shas["second"], repo.shas["init"], repo.at("second"), closes=("#1",))
    post = _thread_post(repo.at("first") + timedelta(hours=2), agent=False)
    thread = SlackThread("C1", "eng", "1.000001", (post,))
    assert rescue(repo.history([pull], threads=[thread])) == []


def test_weakened_skips_and_removed_assertions() -> None:
    def commit(*changes: FileChange) -> Commit:
        return Commit("0" * 40, "a", DAY0, "s", changes=changes)

    skip = FileChange("tests/test_a.py", added=("@pytest.mark.skip(reason='flaky')",))
    assert weakened(commit(skip)) == (["@pytest.mark.skip(reason='flaky')"], [])
    gone = FileChange("tests/test_a.py", removed=("    assert f(1) == 2",))
    assert weakened(commit(gone)) == ([], ["assert f(1) == 2"])
    line = "assert f(1) == 2"
    moved = FileChange("tests/test_a.py", added=(line,), removed=(line,))
    assert weakened(commit(moved)) == ([], [])
    # Outside the tests, a removed assert is the product's business.
    assert weakened(commit(FileChange("lib.py", removed=("assert x",)))) == ([], [])


def test_test_optimiser_a_skip_and_its_restore(tmp_path: Path) -> None:
    repo = _started(tmp_path)
    repo.commit("fix", {"tests/test_shapes.py": "import pytest\n\n\n@pytest.mark.skip(reason='x')\n"
                        "def test_x():\n    pass\n", "shapes.py": CODE.replace("+", "-")},
                "Fix area, closes #1")  # fmt: skip
    repo.commit("restore", {"tests/test_shapes.py": "import pytest\n\n\ndef test_x():\n    pass\n",
                            "shapes.py": CODE.replace("+", "*")}, "Restore test_x")  # fmt: skip
    (found,) = optimiser(repo.history())
    assert (found.kind, found.base, found.fix) == ("test-optimiser", repo.shas["init"],
                                                   repo.shas["restore"])  # fmt: skip
    assert "@pytest.mark.skip(reason='x')" in found.reason
    # Mined together, the weakening fix is not also offered as a plain case or a fix that
    # broke: the most specific kind holds it.
    assert [c.kind for c in mine(repo.history())] == ["test-optimiser"]
    assert mine(repo.history(), MineOptions(kinds=("plain",))) == []
