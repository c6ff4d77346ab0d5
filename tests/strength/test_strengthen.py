"""A weak case strengthened with the team's own tests (issue 37, point 2): ``case create
--extra-tests PATCH`` adds tests written against the fix commit to the hidden tests, names
them in the case file, and the new version is measured again.

The history, made here: the fix repairs two functions (``area`` added the sides,
``perimeter`` forgot to double them) but its test checks only ``area``, as a fix whose tests
cover half of it. Created as it shipped, the case accepts the partial fix that leaves
``perimeter`` broken (weak); created again with a test of ``perimeter``, it rejects it and the
mutants of the perimeter line (strong). Against the real Docker engine; the refusals of a bad
patch need none."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.case import load_case, read_case
from replay.base.errors import InputError
from replay.casebuild.create import FixSource, create_case, spec_from_fix
from replay.runtime import get_runtime
from replay.strength import StrengthOptions, measure_strength
from tests.casebuild.repos import REGISTRY, SETUP, commit
from tests.cli_helpers import run_cli

BUGGY = '''\
def area(width, height):
    return width + height


def describe(width, height):
    """A line about the rectangle, for the command line."""
    kind = "square" if width == height else "rectangle"
    return f"{kind} of {width} by {height}"


def perimeter(width, height):
    return width + height
'''
FIXED = BUGGY.replace(
    "def area(width, height):\n    return width + height",
    "def area(width, height):\n    return width * height",
).replace(
    "def perimeter(width, height):\n    return width + height",
    "def perimeter(width, height):\n    return 2 * (width + height)",
)
AREA_TEST = """\
from shapes import area


def test_area_multiplies():
    assert area(2, 3) == 6
    assert area(1, 7) == 7
"""
PERIMETER_TEST = """\
from shapes import perimeter


def test_perimeter_doubles():
    assert perimeter(2, 3) == 10
    assert perimeter(1, 1) == 4
"""


def two_bugs(path: Path) -> tuple[Path, str]:
    """``(repo, fix)``: the fix repairs both functions; its test checks area alone."""
    gitrepo.init(path)
    commit(path, "2026-03-01T10:00:00Z", "Initial commit", {"README.md": "# shapes\n"})
    commit(
        path,
        "2026-03-02T10:00:00Z",
        "Add area and perimeter",
        {"shapes.py": BUGGY},
    )
    fix = commit(
        path,
        "2026-03-11T10:00:00Z",
        "Fix area and perimeter",
        {"shapes.py": FIXED, "tests/test_area.py": AREA_TEST},
    )
    return path, fix


def source(repo: Path, fix: str, extra: Path | None = None) -> FixSource:
    return FixSource(
        repo=repo,
        fix=fix,
        repo_name="acme/shapes",
        ticket_title="area() and perimeter() are wrong",
        ticket_body="area(2, 3) returns 5, it should be 6; perimeter(2, 3) returns 5, not 10.",
        ticket_created=datetime.fromisoformat("2026-03-11T09:00:00Z"),
        setup=SETUP,
        registry_index=REGISTRY,
        extra_tests=extra,
    )


def extra_patch(repo: Path, fix: str, dest: Path, files: dict[str, str]) -> Path:
    """What a team member writes: ``files`` added in a checkout of the fix, as git diff."""
    work = dest.parent / "checkout"
    gitrepo.run(repo, "worktree", "add", "-q", "--detach", str(work), fix)
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    gitrepo.run(work, "add", "-A")
    dest.write_text(gitrepo.run_exact(work, "diff", "--cached"))
    gitrepo.run(repo, "worktree", "remove", "--force", str(work))
    return dest


def test_extra_tests_join_the_hidden_tests_and_are_named(tmp_path: Path) -> None:
    repo, fix = two_bugs(tmp_path / "shapes")
    patch = extra_patch(
        repo, fix, tmp_path / "extra.patch", {"tests/test_perimeter.py": PERIMETER_TEST}
    )
    spec = spec_from_fix("shapes-two", source(repo, fix, patch))
    assert "test_area_multiplies" in spec.tests and "test_perimeter_doubles" in spec.tests
    assert "shapes.py b/shapes.py" not in spec.tests  # the gold patch stays the fix's
    assert spec.gold == spec_from_fix("shapes-two", source(repo, fix)).gold
    assert spec.tests_added == ["tests/test_perimeter.py"]
    assert spec.command.endswith("tests/test_area.py tests/test_perimeter.py")
    assert any("extra tests too: tests/test_perimeter.py" in note for note in spec.notes)


def test_a_fix_list_gives_each_fix_its_extra_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``case create --from``: an entry's ``extra_tests`` (relative to the list) is the same
    patch ``--extra-tests`` takes; a missing one is named with its entry before any build."""
    import yaml

    from replay.casebuild.many import read_fix_list

    repo, fix = two_bugs(tmp_path / "shapes")
    extra_patch(repo, fix, tmp_path / "extra.patch", {"tests/test_perimeter.py": PERIMETER_TEST})
    entry = {"id": "shapes-two", "repo": str(repo), "fix": fix, "name": "acme/shapes",
             "title": "area() and perimeter() are wrong", "setup": SETUP,
             "registry_index": str(REGISTRY), "extra_tests": "extra.patch"}  # fmt: skip
    listed = tmp_path / "fixes.yaml"
    listed.write_text(yaml.safe_dump({"schema": 1, "fixes": [entry]}))
    (got,) = read_fix_list(listed)
    assert got.source.extra_tests == tmp_path / "extra.patch"
    spec = spec_from_fix(got.id, got.source)
    assert spec.tests_added == ["tests/test_perimeter.py"]
    assert spec.command.endswith("tests/test_area.py tests/test_perimeter.py")
    listed.write_text(
        yaml.safe_dump({"schema": 1, "fixes": [{**entry, "extra_tests": "nope.patch"}]})
    )
    result = run_cli(capsys, "case", "create", "--from", str(listed), "--out", str(tmp_path / "o"))
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert f"fixes[0]: extra_tests: {tmp_path / 'nope.patch'} is not a file" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"shapes.py": FIXED + "\n# tweak\n"}, "changes files that are not tests (shapes.py)"),
        ({}, "holds no file diff"),
    ],
)
def test_extra_tests_that_are_no_tests_are_refused(
    tmp_path: Path, files: dict[str, str], problem: str
) -> None:
    repo, fix = two_bugs(tmp_path / "shapes")
    patch = extra_patch(repo, fix, tmp_path / "extra.patch", files)
    with pytest.raises(InputError) as exc:
        spec_from_fix("shapes-two", source(repo, fix, patch))
    assert exc.value.field == "--extra-tests" and problem in exc.value.problem


def test_extra_tests_written_against_another_commit_are_refused(tmp_path: Path) -> None:
    repo, fix = two_bugs(tmp_path / "shapes")
    # Against the base, where the fix's test file does not exist yet: it adds it again.
    patch = extra_patch(
        repo, fix + "^", tmp_path / "extra.patch", {"tests/test_area.py": AREA_TEST}
    )
    with pytest.raises(InputError) as exc:
        spec_from_fix("shapes-two", source(repo, fix, patch))
    assert f"does not apply at the fix commit {fix[:12]}" in exc.value.problem


def test_a_missing_extra_tests_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, fix = two_bugs(tmp_path / "shapes")
    missing = tmp_path / "nope.patch"
    result = run_cli(
        capsys, "case", "create", "shapes-two", "--repo", str(repo), "--fix", fix,
        "--name", "acme/shapes", "--title", "t", "--setup", SETUP[0],
        "--registry-index", str(REGISTRY), "--extra-tests", str(missing),
        "--out", str(tmp_path / "cases"),
    )  # fmt: skip
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    said = "no such file (a patch of tests against the fix commit)"
    assert line == f"error: {missing}: --extra-tests: {said}"
    assert not (tmp_path / "cases").exists()


def test_a_weak_case_is_strengthened_with_the_teams_tests(tmp_path: Path) -> None:
    repo, fix = two_bugs(tmp_path / "shapes")
    patch = extra_patch(
        repo, fix, tmp_path / "extra.patch", {"tests/test_perimeter.py": PERIMETER_TEST}
    )
    runtime = get_runtime("docker")
    try:
        weak_path, _ = create_case("shapes-two", source(repo, fix), tmp_path / "weak", runtime)
        strong_path, lists = create_case(
            "shapes-two", source(repo, fix, patch), tmp_path / "strong", runtime
        )
    finally:
        runtime.close()
    options = StrengthOptions(max_mutants=12, seed=0)
    weak = measure_strength(read_case(weak_path), options)
    assert not weak.strong
    partials = {r.path: r for r in weak.results if r.kind == "partial"}
    assert any(r.verdict == "survived" for r in partials.values()), weak.results
    assert any("accept the partial fix" in why for why in weak.weak_because)
    case = load_case(strong_path)
    assert case.hidden_tests.added == ["tests/test_perimeter.py"]
    assert "tests/test_perimeter.py::test_perimeter_doubles" in lists.fail_to_pass
    assert "tests/test_perimeter.py::test_perimeter_doubles" in case.hidden_tests.fail_to_pass
    strong = measure_strength(read_case(strong_path), options)
    assert strong.strong, (strong.weak_because, [(r.name, r.verdict) for r in strong.results])
    assert [r.name for r in strong.results if r.kind == "partial" and r.verdict == "survived"] == []
