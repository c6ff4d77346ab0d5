"""OpenHands, installed unmodified from today's PyPI on its own Python, against the stub.

Against the real Docker engine, on demo-caret-zero: the harness layer (the CLI and its
wheels, Debian trixie's Python 3.13 with its C library under /opt/harness/python) is built
once; gold passes and idle fails; what it asks for besides the model is shown; its JSON event
stream is kept and the uniform transcript derived; its home stays outside the workspace.

The converter's own tests read ``data/openhands-events``: the persistence directory of a real
headless run against the stub (one ``terminal`` call, then ``finish``), the system prompt cut
to its first paragraph.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import load_case
from replay.harness.install import (
    PYTHON_HOME,
    VENV,
    HarnessImage,
    prefetch_builtin,
)
from replay.harness.spec import HarnessSpec, StubHints, load_harness
from replay.harness.stub.script import Script, ToolCall
from replay.harness.transcript.openhands_events import to_uniform
from replay.run.runner import RunOptions, RunResult, run_case
from replay.run.trajectories import build_script
from replay.runtime import ContainerSpec, Runtime
from replay.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
FINISH = {"name": "finish", "arguments": {"message": "I have finished the task."}}
SKILLS = ("Git command failed: git clone --depth 1", "https://github.com/OpenHands/extensions")
NO_CLONE = "'/nonexistent/openhands-extensions' does not appear to be a git repository"
COST_MAP = "raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"
EVENTS = Path(__file__).with_name("data") / "openhands-events"
COMMAND = "pwd; echo hello > made_by_agent.txt; cat made_by_agent.txt"


def _stream(tmp_path: Path) -> Path:
    """The same events as ``--json`` prints them: one a line, among lines that are not JSON."""
    lines = ["Initializing agent...", "Agent initialized with model: openai/replay-stub"]
    for f in sorted(EVENTS.glob("event-*.json")):
        lines.append(json.dumps(json.loads(f.read_text())))
        lines.append("Agent is working")
    lines += ["Agent finished", '{"not": "an event"}', "[1, 2]", '{"truncated": ']
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_event_directory_becomes_the_uniform_turns() -> None:
    entries = list(to_uniform(EVENTS))
    assert [e["role"] for e in entries] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert entries[0]["text"].startswith("You are OpenHands agent")
    assert entries[1]["text"] == "Create a file."
    assert entries[2] == {
        "role": "assistant",
        "text": "Looking around.",
        "tool_calls": [
            {"name": "terminal", "arguments": {"command": COMMAND, "security_risk": "LOW"}}
        ],
    }
    assert "/workspace/proj\nhello\n" in entries[3]["text"]
    assert entries[4]["tool_calls"] == [{"name": "finish", "arguments": {"message": "Done."}}]
    assert entries[4]["text"] == ""
    assert entries[5]["text"] == "Done."


def test_the_json_stream_reads_the_same_skipping_what_is_not_an_event(tmp_path: Path) -> None:
    assert list(to_uniform(_stream(tmp_path))) == list(to_uniform(EVENTS))


def test_refused_calls_and_unreadable_arguments_are_kept(tmp_path: Path) -> None:
    events = [
        {
            "kind": "ActionEvent",
            "thought": [{"type": "text", "text": "Run it."}],
            "tool_call": {"name": "terminal", "arguments": "{not json"},
        },
        {
            "kind": "AgentErrorEvent",
            "error": "Error validating tool 'terminal': Failed to provide security_risk field",
        },
        {"kind": "ConversationStateUpdateEvent", "key": "execution_status", "value": "finished"},
        {"kind": "UserRejectObservation", "rejection_reason": "not allowed"},
        {"kind": "MessageEvent", "llm_message": {"role": "assistant", "content": "Plain."}},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert list(to_uniform(path)) == [
        {
            "role": "assistant",
            "text": "Run it.",
            "tool_calls": [{"name": "terminal", "arguments": {"_raw": "{not json"}}],
        },
        {
            "role": "tool",
            "text": "Error validating tool 'terminal': Failed to provide security_risk field",
            "tool_calls": [],
        },
        {"role": "tool", "text": "not allowed", "tool_calls": []},
        {"role": "assistant", "text": "Plain.", "tool_calls": []},
    ]


# ----------------------------------------------------------------------------- the spec


def test_the_stub_plays_its_shell_tool_and_ends_on_its_finish_tool() -> None:
    script = Script.model_validate({"name": "gold", "steps": [{"bash": "true"}], "final": "ok"})
    hints = StubHints(
        bash_tool="terminal",
        bash_extra={"security_risk": "LOW"},
        finish_tool=ToolCall.model_validate(FINISH),
    )
    played = hints.apply(script)
    assert (played.bash_tool, played.bash_extra) == ("terminal", {"security_risk": "LOW"})
    assert [s.bash for s in played.steps] == ["true", None]
    assert [t.model_dump() for t in played.steps[-1].tools] == [FINISH]
    with pytest.raises(ValueError, match="one way"):
        StubHints(finish_bash="exit", finish_tool=ToolCall.model_validate(FINISH))


def test_the_spec_pins_todays_cli_on_its_own_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s, _ = load_harness("openhands")
    assert s.install.pip == ["openhands==1.16.0"]
    assert (s.install.python, s.install.ignore_requires_python) == ("trixie", True)
    assert s.install.build == ["func-timeout==4.3.5"]
    assert s.environment("m")["LLM_MODEL"] == "openai/m"
    assert s.env["LLM_BASE_URL"] == "https://api.openai.com/v1"
    assert s.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    # Git's insteadOf, the one setting that stops its clone of the public skills.
    assert (s.env["GIT_CONFIG_COUNT"], s.env["GIT_CONFIG_VALUE_0"]) == (
        "1",
        "https://github.com/OpenHands/extensions",
    )
    assert s.env["GIT_CONFIG_KEY_0"] == "url./nonexistent/openhands-extensions.insteadOf"
    assert (s.transcript, s.transcript_format) == ("openhands.events.jsonl", "openhands-events")
    # `make wheelhouse` fetches its wheels (for Python 3.13) and its Python with the others.
    wheels: list[tuple[list[str], str]] = []
    pythons: list[str] = []
    monkeypatch.setattr(
        "replay.harness.install.download_wheels",
        lambda reqs, root, version="3.11", **kw: wheels.append((reqs, version)) or root,
    )
    monkeypatch.setattr(
        "replay.harness.install.download_python",
        lambda release, root: pythons.append(release.name) or root,
    )
    prefetch_builtin(Path("unused"))
    # pip for its venv, which Debian's interpreter makes without one, in a wheelhouse of its own.
    assert (["openhands==1.16.0"], "3.13") in wheels and (["pip"], "3.13") in wheels
    # Then bookworm's, the Python 3.11 the other pip harnesses bring on an older env image.
    assert pythons == ["trixie", "bookworm"]
    assert (["pip"], "3.11") in wheels


# ----------------------------------------------------------------------------- the runs


@pytest.fixture(scope="module")
def spec() -> tuple[HarnessSpec, Path]:
    return load_harness("openhands")


@pytest.fixture(scope="module")
def runs(harness: HarnessImage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    """gold with the spec as it is, gold with litellm's price map fetched, and idle."""
    tmp = tmp_path_factory.mktemp("openhands")
    out: dict[str, RunResult] = {}
    for label, stub, env in (
        ("gold", "gold", {}),
        ("settings-off", "gold", {"LITELLM_LOCAL_MODEL_COST_MAP": "", "GIT_CONFIG_COUNT": "0"}),
        ("idle", "idle", {}),
    ):
        options = RunOptions(
            harness="openhands",
            stub=stub,
            harness_env=env,
            out=tmp / "runs",
            db=str(tmp / "r.db"),
            wire_retries=0,
        )
        (out[label],) = run_case(CASE, options)
    return out


def events(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def stream(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "openhands.events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def said(run: RunResult, text: str) -> bool:
    """Whether the harness's stderr has ``text`` (its log wraps lines: spacing ignored)."""
    return "".join(text.split()) in "".join((run.run_dir / "stderr.txt").read_text().split())


def test_its_python_is_its_own_and_the_system_s_is_untouched(
    runtime: Runtime, harness: HarnessImage
) -> None:
    box = runtime.create(ContainerSpec(image=harness.id, command=["sleep", "120"]), "oh-python")
    try:
        mine = box.exec([f"{VENV}/bin/python", "-c", "import sys, ssl; print(sys.base_prefix)"])
        system = box.exec(["python3", "-c", "import sys; print(sys.version_info[:2])"])
        version = box.exec(
            [
                f"{VENV}/bin/python",
                "-c",
                "import importlib.metadata as m; print(m.version('openhands'))",
            ]
        )
    finally:
        box.remove()
    assert mine.exit_code == 0 and mine.out.strip() == f"{PYTHON_HOME}/usr", mine.out + mine.err
    assert system.out.strip() == "(3, 11)"
    assert version.out.strip() == "1.16.0"


def test_gold_passes_and_idle_fails(runs: dict[str, RunResult]) -> None:
    gold, idle = runs["gold"], runs["idle"]
    assert gold.outcome == "pass", gold.reason
    assert gold.grade.harness == "openhands" and gold.grade.harness_exit == 0
    assert gold.grade.wire.healthy and gold.grade.wire.protocol_failed == 0
    assert gold.grade.side_effects.ok
    assert idle.outcome == "model_fail", idle.reason
    assert idle.grade.tests is not None and not idle.grade.tests.resolved
    calls = [e["data"] for e in events(gold) if e["kind"] == "model.call"]
    assert {(c["method"], c["path"], c["provider"]) for c in calls} == {
        ("POST", "/v1/chat/completions", "openai_chat")
    }
    script = build_script(load_case(CASE), load_snapshot(load_case(CASE).snapshot), "gold")
    assert len(calls) == len(script.steps) + 1  # the steps, then its finish call


def test_what_it_asked_for_besides_the_model(runs: dict[str, RunResult]) -> None:
    # Nothing it asks for is outside the world: no denied egress, with its settings or not.
    for run in runs.values():
        assert [e for e in events(run) if e["kind"] == "egress.denied"] == []
        assert run.grade.harness_egress == []
    # It clones its public skills from GitHub on every start (the CLI asks for them whatever
    # its settings). With the spec's git setting the URL is a local path that does not exist:
    # the clone fails with no request; without it the clone reaches the world's GitHub, which
    # has no such repository. It runs on without them either way.
    gold, off = runs["gold"], runs["settings-off"]
    assert all(said(gold, text) for text in SKILLS)
    assert said(gold, NO_CLONE) and not said(gold, "Repository not found.")
    assert all(said(off, text) for text in SKILLS) and said(off, "Repository not found.")
    assert not said(off, NO_CLONE)
    # litellm's price map comes from GitHub unless LITELLM_LOCAL_MODEL_COST_MAP says
    # otherwise; the world's raw.githubusercontent.com refuses it and litellm falls back.
    assert not said(gold, COST_MAP)
    assert said(off, f"Failed to fetch remote model cost map from https://{COST_MAP}")
    assert off.outcome == "pass", off.reason


def test_its_event_stream_is_kept_and_the_uniform_transcript_derived(
    runs: dict[str, RunResult],
) -> None:
    gold = runs["gold"]
    native = stream(gold)
    assert native[0]["kind"] == "MessageEvent" and native[0]["source"] == "user"
    assert native[-1]["kind"] == "ObservationEvent" and native[-1]["tool_name"] == "finish"
    uniform = [
        json.loads(line) for line in (gold.run_dir / "transcript.jsonl").read_text().splitlines()
    ]
    assert [u["index"] for u in uniform] == list(range(len(uniform)))
    script = build_script(load_case(CASE), load_snapshot(load_case(CASE).snapshot), "gold")
    called = [c for u in uniform for c in u["tool_calls"]]
    assert called == [
        {"name": "terminal", "arguments": {"security_risk": "LOW", "command": s.bash}}
        for s in script.steps
    ] + [FINISH]
    roles = [u["role"] for u in uniform]
    assert roles[0] == "user" and roles.count("tool") == len(script.steps) + 1
    assert "acme/semverkit#7" in uniform[0]["text"]


def test_its_home_stays_outside_the_workspace(runs: dict[str, RunResult]) -> None:
    workdir = load_case(CASE).environment.workdir
    gold = runs["gold"]
    observed = [
        e["observation"]
        for e in stream(gold)
        if e.get("tool_name") == "terminal" and "observation" in e
    ]
    assert observed and all(o["metadata"]["working_dir"] == workdir for o in observed)
    assert all(o["metadata"]["username"] == "agent" for o in observed)
    # Its conversations are kept in the agent's $HOME.
    saved = {o["full_output_save_dir"] for o in observed}
    assert all(d.startswith("/home/agent/.openhands/conversations/") for d in saved), saved
    for run in runs.values():
        patch = (run.run_dir / "diff.patch").read_text()
        touched = {
            line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff --git")
        }
        assert not any(".openhands" in t or "AGENTS.md" in t for t in touched), touched
    gold_patch = (CASE.parent / "gold.patch").read_text()
    want = {
        line.split(" b/", 1)[1] for line in gold_patch.splitlines() if line.startswith("diff --git")
    }
    got = {
        line.split(" b/", 1)[1]
        for line in (gold.run_dir / "diff.patch").read_text().splitlines()
        if line.startswith("diff --git")
    }
    assert got == want
    assert (runs["idle"].run_dir / "diff.patch").read_text() == ""
