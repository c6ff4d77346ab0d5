"""Property-based fuzzing (hypothesis) of every reader the grader points at what the agent's
code wrote: the test report, the plugin's pipe, the tree's listings, the tar streams out of the
grading container, and the test files honeypots are cloned from. Whatever bytes come in, each
reader returns (or raises its own declared error), never anything else; and judging what they
read never raises either. Derandomised, no example database, no deadline (a busy machine).
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.grade.hidden_tests import parse_manifest, parse_tree, read_tar
from replay.grade.honeypots import plant
from replay.grade.junit import GuardRecord, JUnitError, judge, reported_addresses, reported_statuses

FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

text = st.text(alphabet=st.characters(codec="utf-8"), max_size=30) | st.text(max_size=30)
junk = st.binary(max_size=300)

# JUnit-like documents: real structure with hostile names, attributes and children.
testcase = st.builds(
    lambda cls, name, child, attrs: (
        f'<testcase classname="{cls}" name="{name}" {attrs}>{child}</testcase>'
    ),
    st.text(alphabet="abc.<&\"'é ", max_size=10),
    st.text(alphabet="abc[]-<&\"' ", max_size=10),
    st.sampled_from(["", "<failure/>", "<error>x</error>", "<skipped/>", "<failure><skipped/>"]),
    st.sampled_from(["", 'file="a/b.py"', 'file=""', 'file="x.py" time="nan"']),
)
junit_docs = (
    st.builds(
        lambda root, cases: f"<{root}>{''.join(cases)}</{root}>".encode(),
        st.sampled_from(["testsuites", "testsuite", "html", "testsuites><testsuite"]),
        st.lists(testcase, max_size=6),
    )
    | junk
)

# The plugin's pipe: its records, records with the wrong types, and anything at all.
record = st.one_of(
    st.fixed_dictionaries({"k": st.just("hello")}),
    st.fixed_dictionaries(
        {"k": st.just("collected"), "items": st.lists(st.lists(text | st.integers(), max_size=3))}
    ),
    st.fixed_dictionaries(
        {
            "k": st.just("report"),
            "id": text | st.integers(),
            "address": st.lists(text, max_size=3) | st.none(),
            "when": text,
            "outcome": st.sampled_from(["passed", "failed", "skipped", "weird"]) | st.integers(),
            "raised": st.booleans() | st.none(),
            "xfail": st.booleans() | text,
        }
    ),
    st.fixed_dictionaries({"k": st.just("machinery"), "changed": st.lists(text) | text}),
    st.fixed_dictionaries({"k": st.just("end"), "exitstatus": st.integers() | text | st.none()}),
    st.dictionaries(text, text | st.integers(), max_size=3),
)
pipe = st.lists(
    record.map(lambda r: json.dumps(r).encode()) | junk.filter(lambda b: b"\n" not in b),
    max_size=12,
).map(lambda lines: b"\n".join([b'{"k":"hello"}', *lines]))


def tar_of(entries: list[tuple[str, bytes, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.linkname = "/etc/passwd"
                tar.addfile(info)
    return out.getvalue()


tars = st.lists(
    st.tuples(
        st.sampled_from(["a", "../up", "/abs", "d/e", ".", "x\udcff", "junit.xml", "a/../../b"]),
        st.sampled_from([tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE]),
        junk,
    ),
    max_size=5,
).map(tar_of)


@FUZZ
@given(junit_docs, st.integers(-5, 300), pipe)
def test_reading_and_judging_any_report_and_any_pipe_never_raises(
    report: bytes, code: int, records: bytes
) -> None:
    for reader in (reported_statuses, reported_addresses):
        with contextlib.suppress(JUnitError):
            reader(report)
    guard = GuardRecord.parse(records)
    assert guard is not None and guard.sessions >= 1
    verdict = judge([report, None], [code, code], ["a.py::t"], ["b.py::u"], [guard, None])
    assert verdict.spoofed or not verdict.resolved or guard.malformed == 0


@FUZZ
@given(junk, junk, junk, junk)
def test_listings_of_any_bytes_are_read(
    files: bytes, links: bytes, other: bytes, tree: bytes
) -> None:
    entries = parse_manifest(files, links, other)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items())
    assert all(isinstance(k, str) for k in parse_tree(tree))


@FUZZ
@given(tars | junk, st.booleans())
def test_tar_streams_never_climb_out_nor_follow_links(data: bytes, nested: bool) -> None:
    found = read_tar(data, nested=nested)
    for name, content in found.items():
        assert not name.startswith(("/", "../")) and name not in (".", "..")
        assert nested or "/" not in name
        assert content is None or isinstance(content, bytes)


python_like = st.lists(
    st.sampled_from(
        [
            "def test_a():\n    assert f(1) == 'x'\n",
            "class TestK:\n    def test_b(self):\n        assert g() == [1, 2]\n",
            "@pytest.mark.parametrize('v', [1])\ndef test_c(v):\n    assert v\n",
            "def test_d():\n    with pytest.raises(E):\n        f()\n",
            "x = 'é\\udcff'\n",
            "def test_e():\n    assert f(b'\\x00') == b'\\xff'\n",
            "\r\n",
            "def test_f(\n",
            "    assert 1\n",
        ]
    ),
    max_size=6,
).map("".join)


@FUZZ
@given(python_like | text, st.lists(text, max_size=4), text)
def test_honeypots_from_any_file_are_valid_python_or_not_planted(
    source: str, extra: list[str], command: str
) -> None:
    listed = [
        "tests/test_x.py::test_a",
        "tests/test_x.py::TestK::test_b",
        "tests/test_x.py::test_c[1]",
        "tests/test_x.py::test_d",
        "tests/test_x.py::test_e",
        *extra,
    ]
    data = source.encode("utf-8", "surrogateescape")
    planting = plant({"tests/test_x.py": data}, listed, command)
    for path, out in planting.files.items():
        compile(out, path, "exec")
    assert {p.path for p in planting.honeypots} <= set(planting.files)
