"""``case validate`` warns on what a case allows but most likely does not mean (issue 35): a
plain YAML value cut short by ``#`` (a demo case's rule read "... whose body references"),
and a ticket with no text."""

from __future__ import annotations

from pathlib import Path

import yaml

from replay.validate import cut_by_comments

ROOT = Path(__file__).resolve().parents[1]


def test_a_value_cut_by_a_hash_before_a_word_is_named(tmp_path: Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(
        "side_effects:\n"
        "  - id: pr\n"
        "    description: A pull request whose body references #7 (e.g. Fixes #7).\n"
        "  - id: thread\n"
        "    description: The thread in #eng gets a reply.\n"
        "  - id: quoted\n"
        "    description: 'A pull request whose body references #7.'\n"
        "  - id: commented\n"
        "    description: A plain value  # a comment meant as one\n"
        "title: |\n"
        "  A block #7 is text\n"
    )
    data = yaml.safe_load(case.read_text())
    assert data["side_effects"][0]["description"] == "A pull request whose body references"
    warnings = cut_by_comments(case)
    assert [w.split(": ", 2)[0] for w in warnings] == [f"{case}:3", f"{case}:5"]
    assert "ends at 'A pull request whose body references'" in warnings[0]
    assert "quote the whole value" in warnings[1]


def test_no_shipped_case_has_a_value_cut_by_a_comment() -> None:
    cases = sorted(ROOT.glob("cases/**/case.yaml"))
    assert len(cases) > 40
    assert [w for case in cases for w in cut_by_comments(case)] == []


def test_a_ticket_without_text_is_warned_of_and_a_demo_case_validates_clean() -> None:
    from replay.validate import validate_case

    bare = validate_case(ROOT / "cases" / "real" / "boltons-2023-4815fc8" / "case.yaml")
    assert bare.warnings == [
        "ticket mahmoud/boltons#1 has no description: the agent is given its title alone and "
        '"(no description)" (case create takes the text from --body, or the fix\'s message)'
    ]
    assert validate_case(ROOT / "cases" / "demo-caret-zero" / "case.yaml").warnings == []
