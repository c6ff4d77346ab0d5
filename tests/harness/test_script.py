"""Scripts as data, the stateless step rule, and the fault draws."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.errors import InputError
from replay.harness.stub import Fault, FaultInjector, Script, load_script, next_action

ASKS = """
name: asks
steps:
  - say: Let me ask.
    bash: post-question
  - wait_for: use UTC
    poll: {bash: read-thread}
    bash: apply-answer
  - say: Done.
"""


def test_a_script_loads_from_yaml_and_json(tmp_path: Path) -> None:
    (tmp_path / "asks.yaml").write_text(ASKS)
    script = load_script(tmp_path / "asks.yaml")
    assert [s.bash for s in script.steps] == ["post-question", "apply-answer", None]
    assert script.steps[1].poll.bash == "read-thread"
    (tmp_path / "s.json").write_text(script.model_dump_json())
    assert load_script(tmp_path / "s.json") == script


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("name: x\nsteps:\n  - {}\n", "steps[0]", "a step needs say, bash or tools"),
        ("name: x\nsteps: []\nbogus: 1\n", "bogus", "unknown field"),
        ("steps: []\n", "name", "required field is missing"),
        ("name: x\nsteps: []\ntext_action: run it\n", "(top level)", "{command}"),
    ],
)
def test_a_bad_script_names_the_file_and_field(
    tmp_path: Path, text: str, field: str, problem: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_script(path)
    assert err.value.field == field
    assert problem in str(err.value)
    assert str(path) in str(err.value)


def _script(text: str = ASKS) -> Script:
    import yaml

    return Script.model_validate(yaml.safe_load(text))


def test_the_step_follows_the_number_of_assistant_turns() -> None:
    script = _script("name: g\nsteps: [{bash: a}, {bash: b}, {say: c}]\n")
    assert next_action(script, ["task"]) == (script.steps[0], 1)
    assert next_action(script, ["task", "out a"]) == (script.steps[1], 2)
    assert next_action(script, ["task", "out a", "out b"]) == (script.steps[2], 3)
    action, cursor = next_action(script, ["task", "a", "b", "c"])
    assert (action.say, action.bash, cursor) == (script.final, None, 3)


def test_a_wait_step_polls_until_a_tool_result_contains_its_text() -> None:
    script = _script()
    assert next_action(script, ["task"])[0].bash == "post-question"
    # The question was posted; nobody answered yet: poll.
    assert next_action(script, ["task", "posted"])[0].bash == "read-thread"
    assert next_action(script, ["task", "posted", "no replies"])[0].bash == "read-thread"
    # The answer is in the latest tool result: take the step.
    history = ["task", "posted", "no replies", "reply: use UTC please"]
    assert next_action(script, history) == (script.steps[1], 2)
    # Earlier polls are replayed the same way, so the next request moves on.
    assert next_action(script, [*history, "applied"])[0].say == "Done."


def test_fault_specs_parse_and_reject_nonsense() -> None:
    assert Fault.parse("503=0.25") == Fault(kind="http_503", rate=0.25)
    assert Fault.parse("reset=every:3") == Fault(kind="reset", every=3)
    assert Fault.parse("reset=calls:1-3") == Fault(kind="reset", calls=(1, 3))
    assert Fault.parse("reset=calls:2") == Fault(kind="reset", calls=(2, 2))
    bad_specs = ("503", "teapot=0.1", "reset=2", "timeout=every:0", "reset=calls:3-1",
                 "reset=calls:0-2", "reset=calls:a-b")  # fmt: skip
    for bad in bad_specs:
        with pytest.raises(ValueError):
            Fault.parse(bad)


def test_a_call_range_fails_those_calls_then_recovers() -> None:
    injector = FaultInjector([Fault.parse("reset=calls:2-3")], seed=0)
    assert [injector.draw() for _ in range(5)] == [
        (1, None),
        (2, "reset"),
        (3, "reset"),
        (4, None),
        (5, None),
    ]
    with pytest.raises(ValueError, match="more than 1"):
        FaultInjector([Fault(kind="reset", rate=0.6), Fault(kind="timeout", rate=0.6)], 0)


def test_fault_draws_are_reproducible_and_near_their_rates() -> None:
    faults = [Fault(kind="http_503", rate=0.2), Fault(kind="reset", rate=0.1)]
    first = [FaultInjector(faults, seed=7).draw() for _ in range(1)]
    inj_a, inj_b = FaultInjector(faults, seed=7), FaultInjector(faults, seed=7)
    draws_a = [inj_a.draw()[1] for _ in range(2000)]
    assert draws_a == [inj_b.draw()[1] for _ in range(2000)]
    assert first[0][0] == 1
    assert 0.16 < draws_a.count("http_503") / 2000 < 0.24
    assert 0.07 < draws_a.count("reset") / 2000 < 0.13
    other = FaultInjector(faults, seed=8)
    assert [other.draw()[1] for _ in range(2000)] != draws_a


def test_every_nth_call_is_deterministic() -> None:
    inj = FaultInjector([Fault(kind="truncate", every=3)], seed=0)
    assert [inj.draw() for _ in range(6)] == [
        (1, None),
        (2, None),
        (3, "truncate"),
        (4, None),
        (5, None),
        (6, "truncate"),
    ]
