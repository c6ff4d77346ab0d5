"""Draw issue 34's held-out corpus from the mirrors, by the rule in README.md (sections 2, 3).

    python cases/corpus/draw.py [--mirrors /work/.mirror] [--out cases/corpus/issue34.yaml]

Standard library and git only, so it can be rerun anywhere the mirrors are
(``/work/.mirror/<owner>+<name>/repo``, bare or not). It prints one line per repository (the
mirror's commit and how many candidates it found each year) and writes the list
``replay case create --from`` reads. The draw date is fixed: rerun on the same mirrors, it
writes the same list.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

DRAWN = "2026-12-03"
WINDOW = (
    datetime(2019, 1, 1, tzinfo=UTC),
    datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC),
)
PER_REPOSITORY = 3
MAX_FILES = 10

REPOSITORIES = (
    "pallets/itsdangerous",
    "simplejson/simplejson",
    "ifduyue/python-xxhash",
    "horejsek/python-fastjsonschema",
    "tobgu/pyrsistent",
    "GrahamDumpleton/wrapt",
    "astanin/python-tabulate",
    "jd/tenacity",
    "dateutil/dateutil",
    "marshmallow-code/marshmallow",
    "mahmoud/boltons",
    "pytoolz/toolz",
    "tartley/colorama",
    "arrow-py/arrow",
    "jaraco/inflect",
    "hynek/structlog",
    "Suor/funcy",
    "agronholm/typeguard",
)
"""README.md's table, in its order (reserves would be appended in theirs)."""

SECOND = (
    "jazzband/prettytable",
    "un33k/python-slugify",
    "pyparsing/pyparsing",
    "python-jsonschema/jsonschema",
    "grantjenks/python-sortedcontainers",
    "Pylons/webob",  # the first reserve, in ultrajson/ultrajson's place (README 9.3)
    "python-rapidjson/python-rapidjson",
    "stefankoegl/python-json-patch",
    "more-itertools/more-itertools",
    "tkem/cachetools",
    "jpadilla/pyjwt",
    "python-semver/python-semver",
    "jmespath/jmespath.py",
    "carpedm20/emoji",
    "msgpack/msgpack-python",
    "python-hyper/h11",
    "scrapy/w3lib",
    "mozilla/bleach",
    "stefankoegl/python-json-pointer",  # reserves added until 15 give fixes (README 9.3)
    "cdgriffith/Box",
    "python-jsonschema/referencing",
)
"""Section 9.1's table, in its order: the second held-out corpus."""
SECOND_DRAWN = "2026-12-04"
THIRD = (
    "andialbrecht/sqlparse",
    "python-poetry/tomlkit",
    "aio-libs/multidict",
    "aio-libs/yarl",
    "python-websockets/websockets",
    "tox-dev/platformdirs",
    "lark-parser/lark",
    "Delgan/loguru",
    "theskumar/python-dotenv",
    "Python-Markdown/markdown",
    "lepture/mistune",
    "jsonpickle/jsonpickle",
    "scrapy/parsel",
    "keleshev/schema",
    "dbader/schedule",
    "pyeve/cerberus",
    "python-hyper/wsproto",
    "python-hyper/hyperframe",
)
"""Section 10.1's table, in its order: the third held-out corpus (reserves are added here, in
their order, only under section 10.1's rule)."""
THIRD_DRAWN = "2026-12-04"

FOURTH = (
    "Textualize/rich",
    "pygments/pygments",
    "PyCQA/pyflakes",
    "PyCQA/pycodestyle",
    "benjaminp/six",
    "dgilland/pydash",
    "jawah/charset_normalizer",
    "Kozea/tinycss2",
    "html5lib/html5lib-python",
    "yaml/pyyaml",
    "eliben/pycparser",
    "python-validators/validators",
    "jazzband/tablib",
    "aio-libs/frozenlist",
    "ionelmc/python-lazy-object-proxy",
    "benoitc/gunicorn",
    "encode/starlette",
    "agronholm/anyio",
)
"""Section 11.1's table, in its order: the fourth held-out corpus (reserves are added here, in
their order, only under section 11.1's rule)."""
FOURTH_DRAWN = "2026-12-04"
FIFTH = (
    "r1chardj0n3s/parse",
    "cloudpipe/cloudpickle",
    "joblib/joblib",  # the second reserve, in jaraco/zipp's place (README 12.3)
    "python-trio/outcome",  # the third reserve, in python/importlib_metadata's place
    "wbond/asn1crypto",
    "sqlalchemy/mako",
    "scrapy/cssselect",
    "python-hyper/h2",
    "mahmoud/glom",
    "spulec/freezegun",
    "getsentry/responses",
    "pexpect/ptyprocess",
    "pyasn1/pyasn1",
    "Kludex/python-multipart",
    "MagicStack/httptools",
    # agronholm/apscheduler cannot be fetched whole here; sloria/environs takes its place (12.3)
    "python-hyper/rfc3986",
    "pyca/service-identity",
    "marshmallow-code/webargs",  # added until 15 repositories give 40 fixes (README 12.3)
    "sloria/environs",
)
"""Section 12.1's table, in its order, with section 12.3's replacements: the fifth held-out
corpus."""
FIFTH_DRAWN = "2026-12-04"
SIXTH = (
    "python-attrs/cattrs",
    "MagicStack/immutables",
    "agronholm/cbor2",
    "davidhalter/jedi",
    "davidhalter/parso",
    "miyuchina/mistletoe",
    "seperman/deepdiff",
    "hgrecco/pint",
    "prompt-toolkit/python-prompt-toolkit",
    "python-cmd2/cmd2",
    "lepture/authlib",
    "pytransitions/transitions",
    "marshmallow-code/apispec",
    "wtforms/wtforms",
    "scrapinghub/dateparser",
    "google/python-fire",
    "miguelgrinberg/python-socketio",
    "matthewwithanm/python-markdownify",
)
"""Section 13.1's table, in its order: the sixth held-out corpus (reserves are added here, in
their order, only under section 13.1's rule)."""
SIXTH_DRAWN = "2026-12-04"
SEVENTH = (
    "asottile/pyupgrade",
    "executablebooks/markdown-it-py",
    "falconry/falcon",
    "fonttools/fonttools",
    "jmcnamara/XlsxWriter",
    "pdfminer/pdfminer.six",
    "python-openxml/python-docx",
    "PyCQA/flake8",
    "google/yapf",
    "python-lsp/python-lsp-server",
    "jendrikseipp/vulture",
    "hhatto/autopep8",
    "alecthomas/voluptuous",
    "msiemens/tinydb",
    "uiri/toml",
    "regebro/tzlocal",
    "pytest-dev/pyfakefs",
    "python-lz4/python-lz4",
)
"""Section 14.1's table, in its order: the seventh held-out corpus (reserves are added here,
in their order, only under section 14.1's rule)."""
SEVENTH_DRAWN = "2026-12-05"
EIGHTH = (
    "PyCQA/isort",
    "lidatong/dataclasses-json",
    "PyFilesystem/pyfilesystem2",
    "martinblech/xmltodict",
    "trentm/python-markdown2",
    "SethMMorton/natsort",
    "sybrenstuvel/python-rsa",
    "kurtmckee/feedparser",
    "rspeer/python-ftfy",
    "django/asgiref",
    "python-trio/trio",
    "ipython/traitlets",
    "jupyter/nbformat",
    "wireservice/agate",
    "hynek/argon2-cffi",
    "giampaolo/psutil",
    "tornadoweb/tornado",
    "coleifer/peewee",
)
"""Section 15.1's table, in its order: the eighth held-out corpus (reserves are added here,
in their order, only under section 15.1's rule)."""
EIGHTH_DRAWN = "2026-12-05"

HELD_OUT = {
    "second": (SECOND, SECOND_DRAWN, 9),
    "third": (THIRD, THIRD_DRAWN, 10),
    "fourth": (FOURTH, FOURTH_DRAWN, 11),
    "fifth": (FIFTH, FIFTH_DRAWN, 12),
    "sixth": (SIXTH, SIXTH_DRAWN, 13),
    "seventh": (SEVENTH, SEVENTH_DRAWN, 14),
    "eighth": (EIGHTH, EIGHTH_DRAWN, 15),
}
"""Each held-out corpus after the first: its repositories, the day it was drawn and the
README.md section that pre-registers it. Each is drawn under rule 2 (section 9.2)."""

CHORE_OR_INTERPRETER = re.compile(
    r"\b(typos?|spelling|lint|linting|linter|flake8|pylint|black|ruff|pyupgrade|isort|mypy"
    r"|pyright|pre-commit|formatting|docstrings?|docs|documentation|ci|flaky|warnings?"
    r"|deprecations?|pypy|jython|py2|py27|python ?2|python ?3\.[0-8])\b",
    re.IGNORECASE,
)
"""Rule 2.10: a title naming a chore or an interpreter this machine does not have."""
COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*|#)")

FIX_WORDS = re.compile(
    r"\b(fix|fixes|fixed|fixing|bugfix|bugfixes|hotfix|bug|bugs|correct|corrects|corrected"
    r"|correcting|correction|correctly|incorrect|incorrectly|regression|regressions)\b",
    re.IGNORECASE,
)
# The same test paths as replay.casebuild.patches.is_test_path (copied: standard library only).
TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/"
    r"|(^|/)test_[^/]*\.py$|_tests?\.(py|go|rs)$|\.(test|spec)\.[jt]sx?$|(^|/)conftest\.py$"
)
SOURCE_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd", ".c", ".h", ".cpp")
NOT_SOURCE_NAMES = ("setup.py", "noxfile.py", "fabfile.py")
NOT_SOURCE_DIRS = ("docs", "doc", "examples", "benchmarks", "bench", ".github")
REVERTS = re.compile(r"This reverts commit ([0-9a-f]{40})")

TEST_NAMES = ("tests", "test", "testing")
DEV_NAMES = ("dev",)
PURPOSES = TEST_NAMES + DEV_NAMES
PYTEST = re.compile(r"^\s*pytest(?![\w.-])", re.IGNORECASE)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {repo}: {done.stderr.strip()}")
    return done.stdout


def git_dir(mirrors: Path, name: str) -> Path:
    repo = mirrors / name.replace("/", "+") / "repo"
    return repo / ".git" if (repo / ".git").is_dir() else repo


# ---------------------------------------------------------------- the fix rule (section 2)


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    landed: datetime
    message: str

    @property
    def title(self) -> str | None:
        """The subject, or a ``Merge pull request`` merge's PR title; ``None`` for a merge of
        a branch (``Merge branch ...``, ``Merge remote-tracking branch ...``)."""
        subject, _, body = self.message.partition("\n")
        if len(self.parents) < 2:
            return subject.strip()
        if subject.startswith("Merge pull request"):
            return next((line.strip() for line in body.splitlines() if line.strip()), "")
        if subject.startswith("Merge "):
            return None
        return subject.strip()  # a PR merged with its title as the message: "Title (#374)"


def first_parent_history(repo: Path) -> list[Commit]:
    out = git(repo, "log", "--first-parent", "--format=%H%x00%P%x00%ct%x00%B%x1e", "HEAD")
    commits = []
    for record in out.split("\x1e"):
        record = record.lstrip("\n")
        if not record:
            continue
        sha, parents, ct, message = record.split("\x00", 3)
        landed = datetime.fromtimestamp(int(ct), tz=UTC)
        commits.append(Commit(sha, tuple(parents.split()), landed, message))
    return commits


def reverted(repo: Path) -> set[str]:
    """Commits some commit of the default branch's whole history says it reverts."""
    return set(REVERTS.findall(git(repo, "log", "--format=%B", "HEAD")))


def is_test_file(path: str) -> bool:
    return path.endswith(".py") and TEST_PATH.search(path) is not None


def is_source_file(path: str) -> bool:
    p = PurePosixPath(path)
    if TEST_PATH.search(path) or not path.endswith(SOURCE_SUFFIXES):
        return False
    if p.name in NOT_SOURCE_NAMES and len(p.parts) == 1:
        return False
    return not any(part in NOT_SOURCE_DIRS for part in p.parts[:-1])


def changed_files(repo: Path, c: Commit) -> list[str]:
    out = git(repo, "diff", "--no-renames", "--name-only", c.parents[0], c.sha, "--")
    return [line for line in out.splitlines() if line]


def is_candidate(repo: Path, c: Commit, taken_back: set[str]) -> bool:
    title = c.title
    if not title or not c.parents or not FIX_WORDS.search(title):
        return False
    if title.startswith("Revert") or c.sha in taken_back:
        return False
    if not WINDOW[0] <= c.landed <= WINDOW[1]:
        return False
    files = changed_files(repo, c)
    return (
        len(files) <= MAX_FILES
        and any(is_test_file(f) for f in files)
        and any(is_source_file(f) for f in files)
    )


def _syntax(text: str | None) -> str | None:
    """A module's syntax tree with its docstrings left out (``None``: absent or no parse)."""
    if text is None:
        return None
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(module)


def _show(repo: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", f"--git-dir={repo}", "show", f"{rev}:{path}"], capture_output=True, check=False
    )
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def changes_code(repo: Path, c: Commit, path: str) -> bool:
    """Rule 2.8 for one source file."""
    if path.endswith((".py", ".pyi")):
        before, after = _show(repo, c.parents[0], path), _show(repo, c.sha, path)
        if before is None or after is None:
            return True  # added or deleted
        tree_before, tree_after = _syntax(before), _syntax(after)
        return tree_before is None or tree_after is None or tree_before != tree_after
    out = git(
        repo,
        "diff",
        "--no-renames",
        "-w",
        "--ignore-blank-lines",
        "-U0",
        c.parents[0],
        c.sha,
        "--",
        path,
    )
    return any(
        line[:1] in "+-"
        and not line.startswith(("+++", "---"))
        and line[1:].strip()
        and not COMMENT_LINE.match(line[1:])
        for line in out.splitlines()
    )


def tests_grow(repo: Path, c: Commit, tests: list[str]) -> bool:
    """Rule 2.9: the changed test files add a line that is neither blank nor a comment."""
    out = git(repo, "diff", "--no-renames", "-U0", c.parents[0], c.sha, "--", *tests)
    return any(
        line.startswith("+")
        and not line.startswith("+++")
        and line[1:].strip()
        and not line[1:].lstrip().startswith("#")
        for line in out.splitlines()
    )


def second_rule(repo: Path, c: Commit) -> str | None:
    """Which of rules 2.8-2.10 a section-2 candidate fails (``None``: it is a candidate)."""
    if CHORE_OR_INTERPRETER.search(c.title or ""):
        return "2.10"
    files = changed_files(repo, c)
    if not any(changes_code(repo, c, f) for f in files if is_source_file(f)):
        return "2.8"
    if not tests_grow(repo, c, [f for f in files if is_test_file(f)]):
        return "2.9"
    return None


def spread(candidates: list[Commit], per_repository: int = PER_REPOSITORY) -> list[Commit]:
    """Up to ``per_repository``, the newest of evenly spaced years, then the newest left."""
    by_year: dict[int, list[Commit]] = {}
    for c in candidates:  # newest first, as git log gives them
        by_year.setdefault(c.landed.year, []).append(c)
    years = sorted(by_year)
    n = len(years)
    k = min(per_repository, n)
    if k == 0:
        return []
    if k == 1:
        picked_years = years[-1:]
    else:  # evenly spaced, rounded half up
        picked_years = [years[int(i * (n - 1) / (k - 1) + 0.5)] for i in range(k)]
    chosen = [by_year[y][0] for y in picked_years]
    for c in candidates:
        if len(chosen) >= per_repository:
            break
        if c not in chosen:
            chosen.append(c)
    return sorted(chosen, key=lambda c: c.landed)


# ------------------------------------------------- what the tests need (section 3)


@dataclass
class Declared:
    requires: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    source: str = ""
    names_pytest: bool = False

    def finished(self) -> Declared:
        if not self.names_pytest:
            self.requires.append("pytest")
        return self


class Tree:
    """The files of one commit, read lazily."""

    def __init__(self, repo: Path, rev: str) -> None:
        self.repo, self.rev = repo, rev
        out = git(repo, "ls-tree", "-r", "--name-only", "-z", rev)
        self.paths = [p for p in out.split("\x00") if p]
        self.set = set(self.paths)

    def read(self, path: str) -> str | None:
        return _show(self.repo, self.rev, path) if path in self.set else None


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements_file(tree: Tree) -> str | None:
    ranked = []
    for path in tree.paths:
        p = PurePosixPath(path)
        if p.suffix not in (".txt", ".in"):
            continue
        dirs = p.parts[:-1]
        stem = p.stem.lower()
        purpose = None
        if any(d in ("tests", "test") or d.startswith("requirements") for d in dirs):
            if stem in PURPOSES:
                purpose = stem
            elif stem == "requirements" and any(d in ("tests", "test") for d in dirs):
                purpose = "tests"
        elif not dirs and p.suffix == ".txt":
            m = re.fullmatch(r"requirements[-_](\w+)|(\w+)[-_]requirements", stem)
            word = m and (m.group(1) or m.group(2))
            if word in PURPOSES:
                purpose = word
        if purpose:
            rank = (purpose in DEV_NAMES, p.suffix == ".in", path)
            ranked.append(rank)
    return min(ranked)[2] if ranked else None


def _names_pytest_in_file(tree: Tree, path: str, seen: set[str]) -> bool:
    if path in seen:
        return False
    seen.add(path)
    text = tree.read(path) or ""
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if PYTEST.match(line):
            return True
        m = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)", line)
        if m:
            inner = str(PurePosixPath(path).parent / m.group(1))
            if _names_pytest_in_file(tree, inner.removeprefix("./"), seen):
                return True
    return False


def _setup_py_extras(text: str) -> dict[str, list[str] | None]:
    try:
        module = ast.parse(text)
    except SyntaxError:
        return {}
    dicts: dict[str, ast.Dict] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    dicts[target.id] = node.value
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg != "extras_require":
                continue
            value = kw.value
            if isinstance(value, ast.Name):
                value = dicts.get(value.id, value)
            if not isinstance(value, ast.Dict):
                continue
            extras: dict[str, list[str] | None] = {}
            for k, v in zip(value.keys, value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    try:
                        items = ast.literal_eval(v)
                    except ValueError:
                        items = None
                    ok = isinstance(items, (list, tuple)) and all(isinstance(i, str) for i in items)
                    extras[k.value] = list(items) if ok else None
            return extras
    return {}


def _extras(tree: Tree) -> dict[str, list[str] | None]:
    """The project's extras, each with its requirements (``None``: not readable)."""
    text = tree.read("pyproject.toml")
    if text:
        try:
            table = tomllib.loads(text).get("project", {}).get("optional-dependencies", {})
        except tomllib.TOMLDecodeError:
            table = {}
        if table:
            return {k: list(v) for k, v in table.items()}
    text = tree.read("setup.cfg")
    if text:
        cfg = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            cfg.read_string(text)
        except configparser.Error:
            cfg = configparser.ConfigParser()
        if cfg.has_section("options.extras_require"):
            section = cfg["options.extras_require"]
            return {k: [v for v in section[k].splitlines() if v.strip()] for k in section}
    text = tree.read("setup.py")
    return _setup_py_extras(text) if text else {}


def _groups(tree: Tree) -> dict[str, list[str]]:
    text = tree.read("pyproject.toml")
    if not text:
        return {}
    try:
        table = tomllib.loads(text).get("dependency-groups", {})
    except tomllib.TOMLDecodeError:
        return {}

    def expand(name: str, seen: frozenset[str]) -> list[str]:
        out: list[str] = []
        for item in table.get(name, []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and item.get("include-group") not in seen:
                out += expand(item["include-group"], seen | {name})
        return out

    return {k: expand(k, frozenset()) for k in table}


def _tox(tree: Tree) -> tuple[list[str], list[str]] | None:
    text = tree.read("tox.ini")
    if not text:
        return None
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cfg.read_string(text)
    except configparser.Error:
        return None
    if not cfg.has_section("testenv"):
        return None
    deps: list[str] = []
    extras: list[str] = []
    for raw in cfg["testenv"].get("deps", "").splitlines():
        line = raw.split("#", 1)[0].strip().replace("{toxinidir}/", "")
        if not line or re.match(r"^[\w.,!{}-]+:\s", line):
            continue
        project = re.match(r"^(?:-e\s*)?\.(?:\[([^\]]*)\])?$", line)
        if project:  # the project itself, installed anyway: only its extras are wanted
            extras += [e.strip() for e in (project.group(1) or "").split(",") if e.strip()]
            continue
        m = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)$", line)
        line = f"-r {m.group(1)}" if m else line
        if "{" not in line:
            deps.append(line)
    extras += [
        e.strip() for e in re.split(r"[,\s]+", cfg["testenv"].get("extras", "")) if e.strip()
    ]
    return deps, extras


def declared(repo: Path, rev: str) -> Declared:
    """What the repository declares for its tests at ``rev`` (README section 3)."""
    tree = Tree(repo, rev)
    path = _requirements_file(tree)
    if path:
        return Declared(
            [f"-r {path}"], [], path, _names_pytest_in_file(tree, path, set())
        ).finished()
    extras = _extras(tree)
    by_norm = {_norm(k): k for k in extras}
    for want in PURPOSES:
        if want in by_norm:
            name = by_norm[want]
            listed = extras[name] or []
            names = any(PYTEST.match(r) for r in listed)
            return Declared([], [name], f"extra {name}", names).finished()
    groups = _groups(tree)
    by_norm = {_norm(k): k for k in groups}
    for want in PURPOSES:
        if want in by_norm:
            name = by_norm[want]
            listed = groups[name]
            names = any(PYTEST.match(r) for r in listed)
            return Declared(list(listed), [], f"group {name}", names).finished()
    tox = _tox(tree)
    if tox and (tox[0] or tox[1]):
        deps, tox_extras = tox
        names = any(PYTEST.match(d) for d in deps) or any(
            _names_pytest_in_file(tree, d[3:], set()) for d in deps if d.startswith("-r ")
        )
        for e in tox_extras:
            names = names or any(PYTEST.match(r) for r in (extras.get(e) or []))
        return Declared(deps, tox_extras, "tox.ini [testenv]", names).finished()
    return Declared(["pytest"], [], "nothing declared", True)


# ---------------------------------------------------------------- the list


def case_id(name: str, c: Commit) -> str:
    short = re.sub(r"[^a-z0-9.]+", "-", name.split("/")[1].lower()).strip("-")
    return f"{short}-{c.landed.year}-{c.sha[:7]}"


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def entry_yaml(name: str, c: Commit, d: Declared) -> str:
    owner_name = name.replace("/", "+")
    lines = [
        f"  - id: {case_id(name, c)}",
        f"    repo: clones/{owner_name}",
        f"    fix: {c.sha}",
        f"    name: {name}",
        f"    title: {_q(c.title or '')}",
        f"    upstream: https://github.com/{name}",
    ]
    if d.requires:
        lines.append(f"    requires: [{', '.join(_q(r) for r in d.requires)}]")
    if d.extra:
        lines.append(f"    extra: [{', '.join(_q(e) for e in d.extra)}]")
    lines.append(f"    # landed {c.landed:%Y-%m-%d}; tests declared by: {d.source}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "issue34.yaml")
    ap.add_argument(
        "--per-repository", type=int, default=PER_REPOSITORY, help="fixes per repository"
    )
    ap.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        help="a list whose fixes are no candidates (the real set leaves out the corpus's)",
    )
    for name, (_, _, section) in HELD_OUT.items():
        ap.add_argument(
            f"--{name}",
            action="store_true",
            help=f"the {name} held-out corpus: section {section}'s repositories and rule 2"
            f" ({name}.yaml)",
        )
    args = ap.parse_args(argv)
    held_out = next((name for name in HELD_OUT if getattr(args, name)), None)
    if held_out:
        args.second = True  # rule 2, the same narrowing
    if held_out and args.out == ap.get_default("out"):
        args.out = Path(__file__).parent / f"{held_out}.yaml"
    repositories = HELD_OUT[held_out][0] if held_out else REPOSITORIES
    excluded = {
        line.split(":", 1)[1].strip()
        for path in args.exclude
        for line in path.read_text().splitlines()
        if line.strip().startswith("fix:")
    }
    header = [
        f"# Issue 34's held-out corpus, drawn {DRAWN} by draw.py (README.md's rule); not edited",
        "# by hand. Clones: git clone /work/.mirror/<owner>+<name>/repo clones/<owner>+<name>",
        "schema: 1",
        "fixes:",
    ]
    if held_out:
        _, drawn, section = HELD_OUT[held_out]
        header[0:2] = [
            f"# Issue 34's {held_out} held-out corpus, drawn {drawn} by draw.py --{held_out}"
            f" (README.md section {section}); not",
            "# edited by hand. Clones as the first corpus's: cases/corpus/README.md section 5.",
        ]
    elif args.exclude or args.per_repository != PER_REPOSITORY:
        header[0:2] = [
            f"# Drawn by draw.py --per-repository {args.per_repository}"
            + "".join(f" --exclude {p}" for p in args.exclude)
            + f" --out {args.out.name} (the corpus's rule, README.md);",
            "# not edited by hand. Clones as the corpus's: cases/corpus/README.md section 5.",
        ]
    body: list[str] = []
    total = 0
    removed_all: dict[str, int] = {}
    for name in repositories:
        repo = git_dir(args.mirrors, name)
        if not repo.exists():
            raise SystemExit(f"{name}: no mirror at {repo} (fetch github:{name})")
        head = git(repo, "rev-parse", "HEAD").strip()
        taken_back = reverted(repo)
        history = first_parent_history(repo)
        candidates = [
            c for c in history if c.sha not in excluded and is_candidate(repo, c, taken_back)
        ]
        removed: dict[str, int] = {}
        if args.second:
            kept = []
            for c in candidates:
                failed = second_rule(repo, c)
                if failed:
                    removed[failed] = removed.get(failed, 0) + 1
                    removed_all[failed] = removed_all.get(failed, 0) + 1
                else:
                    kept.append(c)
            candidates = kept
        years: dict[int, int] = {}
        for c in candidates:
            years[c.landed.year] = years.get(c.landed.year, 0) + 1
        chosen = spread(candidates, args.per_repository)
        total += len(chosen)
        per_year = " ".join(f"{y}:{years[y]}" for y in sorted(years))
        picked = " ".join(str(c.landed.year) for c in chosen)
        narrowed = (
            " removed " + " ".join(f"{k}:{removed[k]}" for k in sorted(removed))
            if removed
            else (" removed none" if args.second else "")
        )
        print(f"{name} {head[:12]} candidates {per_year or '-'}{narrowed} -> {picked or 'none'}")
        for c in chosen:
            body.append(entry_yaml(name, c, declared(repo, c.parents[0])))
    args.out.write_text("\n".join(header + body) + "\n")
    if args.second:
        print(
            "removed by rule 2: "
            + (" ".join(f"{k}:{removed_all[k]}" for k in sorted(removed_all)) or "none")
        )
    print(f"{total} fixes from {len(repositories)} repositories -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
