"""Aider, today's ``aider-chat`` wheel unmodified, against the stub in the locked sandbox.

Aider asks the model once per task (``--message-file``) and acts on that one answer: its
fenced shell blocks are run, line by line, after a question that stdin at EOF answers with
its default. The stub plays a trajectory that way (``StubHints.one_answer``/``one_line``).
Against the real Docker engine, as the unprivileged agent user, on demo-caret-zero: gold
passes with no request denied; idle fails, and with aider's analytics and update check
turned back on its PostHog requests are denied and listed; its chat history is kept and
the uniform ``transcript.jsonl`` derived from it; its files stay out of the diff.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import load_case
from replay.harness.install import VENV, HarnessImage, prefetch_builtin
from replay.harness.spec import HarnessSpec, StubHints, load_harness
from replay.harness.stub.script import Script, next_action, one_line
from replay.harness.transcript import known_formats, to_uniform
from replay.run.runner import RunOptions, RunResult, run_case
from replay.run.trajectories import build_script
from replay.runtime import ContainerSpec, Runtime
from replay.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
AIDER = f"{VENV}/bin/aider"
PRICES = f"{VENV}/lib/python3.11/site-packages/litellm/model_prices_and_context_window_backup.json"
# The spec's settings, each an option of aider's own --help ("[env var: AIDER_...]").
SETTINGS = {
    "AIDER_CHECK_UPDATE": "false",
    "AIDER_ANALYTICS": "false",
    "AIDER_SHOW_RELEASE_NOTES": "false",
    "AIDER_DETECT_URLS": "false",
    "AIDER_GITIGNORE": "false",
    "AIDER_SHOW_MODEL_WARNINGS": "false",
    "AIDER_FANCY_INPUT": "false",
    "AIDER_PRETTY": "false",
    "AIDER_INPUT_HISTORY_FILE": "/tmp/replay-run/aider.input.history",
}
# What aider reaches for when its analytics and update check are on.
TELEMETRY_ON = {"AIDER_ANALYTICS": "true", "AIDER_CHECK_UPDATE": "true"}
# The questions no setting avoids (aider 0.86.2's confirm_ask calls), answered with their
# default at EOF: yes. (The model warning's "Open documentation url for more info?", which
# AIDER_SHOW_MODEL_WARNINGS avoids, comes only for a model litellm does not know: not gpt-4.1.)
UNAVOIDABLE = (
    "Run shell command",
    "Add command output to the chat?",
    "Add file to the chat?",
    "Create new file?",
    "Allow edits to file that has not been added to the chat?",
    "Attempt to fix lint errors?",
)


@pytest.fixture(scope="module")
def spec() -> tuple[HarnessSpec, Path]:
    return load_harness("aider")


@pytest.fixture(scope="module")
def runs(harness: HarnessImage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    """gold with the spec as it is; idle with aider's analytics and update check on."""
    tmp = tmp_path_factory.mktemp("aider")
    out: dict[str, RunResult] = {}
    for stub, env in (("gold", {}), ("idle", TELEMETRY_ON)):
        options = RunOptions(
            harness="aider",
            stub=stub,
            harness_env=env,
            out=tmp / "runs",
            db=str(tmp / "r.db"),
            wire_retries=0,
        )
        (out[stub],) = run_case(CASE, options)
    return out


def events(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def denied(run: RunResult) -> list[str]:
    return [e["data"]["host"] for e in events(run) if e["kind"] == "egress.denied"]


def uniform(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "transcript.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# ----------------------------------------------------------------------------- the stub


@pytest.mark.parametrize(
    "command",
    [
        "printf '%s\\n' one",
        "cat <<'EOF'\nit's a \\n backslash, 100% `not run` $HOME\n<<<<<<< SEARCH\n```\nEOF",
        "printf 'a\\rb\\n' > /dev/null; echo 'two\nlines'",
        "echo 'ünïcode\u2028sep\x85nel\x0cff'",
    ],
)
def test_one_line_has_the_command_s_effect(command: str) -> None:
    line = one_line(command)
    assert len(f"a{line}b".splitlines()) == 1
    # aider runs each line through /bin/sh (subprocess with shell=True).
    original = subprocess.run(["bash", "-c", command], capture_output=True, check=True)
    again = subprocess.run(["sh", "-c", line], capture_output=True, check=True)
    assert again.stdout == original.stdout


def test_one_answer_plays_the_whole_trajectory_on_every_request() -> None:
    script = Script.model_validate(
        {
            "name": "gold",
            "steps": [
                {"say": "Branch.", "bash": "git checkout -b fix"},
                {"bash": "cat > f <<'EOF'\nx\nEOF"},
                {"say": "Pushed."},
            ],
            "final": "Done.",
        }
    )
    played = StubHints(one_answer=True, one_line=True).apply(script)
    (step,) = played.steps
    assert step.say == (
        "Branch.\n\n```bash\ngit checkout -b fix\n```\n\n"
        f"```bash\n{one_line(script.steps[1].bash or '')}\n```\n\nPushed."
    )
    # aider's prompt opens with example exchanges: whatever the history, the same answer.
    for feedback in ([], ["task"], ["ex", "ex", "ok", "ok", "task"], ["task", "reflection"]):
        assert next_action(played, feedback)[0] == step
    idle = StubHints(one_answer=True).apply(Script(name="idle", steps=[], final="No."))
    assert next_action(idle, ["a", "b"])[0].say == "No."
    tools = Script.model_validate(
        {"name": "x", "steps": [{"tools": [{"name": "read", "arguments": {}}]}], "final": "x"}
    )
    with pytest.raises(ValueError, match="calls other tools"):
        StubHints(one_answer=True).apply(tools)


def test_a_waiting_step_becomes_a_bounded_poll_in_the_answer(tmp_path: Path) -> None:
    # The poll reads a counter file and the third read shows the awaited answer.
    counter = tmp_path / "n"
    poll = f"n=$(($(cat {counter} 2>/dev/null || echo 0) + 1)); echo $n > {counter}; "
    poll += "[ $n -ge 3 ] && echo 'use UTC, thanks'"
    script = Script.model_validate(
        {
            "name": "asks",
            "steps": [
                {"say": "Asking.", "bash": "echo asked"},
                {"bash": "echo answered", "wait_for": "use UTC", "poll": {"bash": poll}},
            ],
        }
    )
    (step,) = StubHints(one_answer=True, one_line=True).apply(script).steps
    commands = [b.split("\n")[0] for b in (step.say or "").split("```bash\n")[1:]]
    assert commands[0] == "echo asked"
    done = subprocess.run(["sh", "-c", commands[1]], capture_output=True, text=True, check=True)
    assert done.stdout == "answered\n" and counter.read_text() == "3\n"


def test_the_demo_trajectories_play_as_one_answer() -> None:
    case = load_case(CASE)
    snapshot = load_snapshot(case.snapshot)
    gold = load_harness("aider")[0].stub.apply(build_script(case, snapshot, "gold"))
    (step,) = gold.steps
    assert step.bash is None and gold.one_answer
    blocks = step.say.split("```bash\n")[1:] if step.say else []
    assert [b.split("\n")[0][:16] for b in blocks] == [
        "git checkout -q ",
        'bash -c "$(print',  # git apply of the patch in a heredoc
        "git add -A && gi",
        'bash -c "$(print',  # gh pr create with a body of several lines
    ]


# ----------------------------------------------------------------------------- transcript

# Aider ends the lines it logs with two spaces (a markdown line break): "$" here.
HISTORY = """
# aider chat started at 2026-03-12 09:00:01

> /opt/harness/venv/bin/aider --model openai/gpt-4.1 --message-file /tmp/replay-run/task.md$
> Aider v0.86.2$

#### Fix the bug.$
####$
#### Thanks.$

I will edit the file, then run the tests.

src/app.py
```python
<<<<<<< SEARCH
    return a <= b
=======
    return a < b
>>>>>>> REPLACE
```

```bash
pytest -q
git push
```

> Tokens: 2.5k sent, 99 received.$
> Applied edit to src/app.py$
> pytest -q
git push$
> Run shell commands? (Y)es/(N)o/(S)kip all/(D)on't ask again [Yes]: y$
> Running pytest -q$
""".replace("$\n", "  \n")


def test_the_chat_history_becomes_uniform_entries(tmp_path: Path) -> None:
    path = tmp_path / "aider.chat.history.md"
    path.write_text(HISTORY)
    assert "aider-chat-history" in known_formats()
    entries = to_uniform("aider-chat-history", path)
    assert [(e["index"], e["role"]) for e in entries] == [
        (0, "system"),
        (1, "system"),
        (2, "user"),
        (3, "assistant"),
        (4, "tool"),
    ]
    assert entries[0]["text"] == "aider chat started at 2026-03-12 09:00:01"
    assert entries[2]["text"] == "Fix the bug.\n\nThanks."
    assert entries[3]["tool_calls"] == [
        {
            "name": "edit",
            "arguments": {
                "path": "src/app.py",
                "search": "    return a <= b",
                "replace": "    return a < b",
            },
        },
        {"name": "shell", "arguments": {"command": "pytest -q\ngit push"}},
    ]
    # The second line of a multi-line message aider printed carries no "> ": still aider's.
    assert entries[4]["text"].splitlines()[2:4] == ["pytest -q", "git push"]
    assert entries[4]["text"].endswith("Running pytest -q")


# ----------------------------------------------------------------------------- the spec


def test_the_spec_pins_todays_wheel_and_turns_its_traffic_off(
    spec: tuple[HarnessSpec, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    s = spec[0]
    assert s.install.pip == ["aider-chat==0.86.2"]
    assert s.provider == "openai" and s.env["OPENAI_BASE_URL"] == "https://api.openai.com/v1"
    assert {k: s.env[k] for k in SETTINGS} == SETTINGS
    assert s.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert (s.transcript, s.transcript_format) == ("aider.chat.history.md", "aider-chat-history")
    assert s.stub.one_answer and s.stub.one_line
    argv = s.argv(task="/r/task.md", workdir="/w", transcript="/r/h.md", model="gpt-4.1")
    assert argv[-3:] == ["gpt-4.1", "/r/task.md", "/r/h.md"]
    assert "--yes-always" not in argv[2] and "< /dev/null" in argv[2]
    asked: list[list[str]] = []
    monkeypatch.setattr(
        "replay.harness.install.download_wheels",
        lambda reqs, root, *args, **kw: asked.append(reqs) or root,
    )
    monkeypatch.setattr("replay.harness.install.download_python", lambda release, root: root)
    prefetch_builtin(Path("unused"))
    assert ["aider-chat==0.86.2"] in asked


def test_the_installed_aider_knows_every_setting_the_spec_uses(
    runtime: Runtime, harness: HarnessImage, spec: tuple[HarnessSpec, Path]
) -> None:
    box = runtime.create(ContainerSpec(image=harness.id, command=["sleep", "120"]), "aider-help")
    try:
        version = box.exec([AIDER, "--version"])
        helped = box.exec([AIDER, "--help"], env={"COLUMNS": "200"})
        bundled = box.exec(
            [f"{VENV}/bin/python", "-c", f"import json; print(len(json.load(open('{PRICES}'))))"]
        )
    finally:
        box.remove()
    assert version.out.strip() == "aider 0.86.2"
    assert helped.exit_code == 0, helped.err
    text = " ".join(helped.out.split())
    for name in SETTINGS:
        assert f"[env var: {name}]" in text, name
    for flag in ("--message-file", "--chat-history-file", "--model"):
        assert flag in text
    # The price map the command puts in aider's cache is the installed litellm's own copy.
    assert PRICES in spec[0].command[2]
    assert bundled.exit_code == 0 and int(bundled.out) > 100, bundled.err


# ----------------------------------------------------------------------------- the runs


def test_gold_passes_and_idle_fails(runs: dict[str, RunResult]) -> None:
    gold, idle = runs["gold"], runs["idle"]
    assert gold.outcome == "pass", gold.reason
    assert gold.grade.harness == "aider" and gold.grade.harness_exit == 0
    assert gold.grade.attempts.pushes == 1 and gold.grade.attempts.prs_opened == 1
    # One answer carried the whole trajectory: aider asked once.
    assert gold.grade.wire.healthy and gold.grade.wire.logical_calls == 1
    assert gold.grade.tokens.input > 0 and gold.grade.tokens.output > 0
    assert idle.outcome == "model_fail", idle.reason
    assert idle.grade.tests is not None and not idle.grade.tests.resolved
    assert idle.grade.attempts.prs_opened == 0


def test_with_its_settings_nothing_is_denied_and_without_them_posthog_is(
    runs: dict[str, RunResult],
) -> None:
    gold, idle = runs["gold"], runs["idle"]
    assert denied(gold) == []
    assert "Error checking pypi" not in (gold.run_dir / "stdout.txt").read_text()
    # Analytics on: its events go to PostHog, refused at CONNECT and logged, several times.
    hosts = denied(idle)
    assert set(hosts) == {"us.i.posthog.com"} and len(hosts) >= 2, hosts
    assert "no-denied-egress" in idle.grade.side_effects.violated
    # The update check went to pypi.org, which is the world's registry frozen at T: it has
    # no aider-chat, so aider reports it could not read the answer and carries on.
    assert "Error checking pypi for new version" in (idle.run_dir / "stdout.txt").read_text()


def test_its_transcripts_are_kept(runs: dict[str, RunResult]) -> None:
    gold = runs["gold"]
    native = (gold.run_dir / "aider.chat.history.md").read_text()
    assert "# aider chat started at" in native
    assert "#### You are " in native  # the task, as aider logs what the user sent
    assert "> Running git checkout -q -b fix/acme-semverkit-7" in native
    entries = uniform(gold)
    assert [e["index"] for e in entries] == list(range(len(entries)))
    (user,) = [e for e in entries if e["role"] == "user"]
    assert user["text"] == (gold.run_dir / "task.md").read_text().strip()
    (answer,) = [e for e in entries if e["role"] == "assistant"]
    commands = [c["arguments"]["command"] for c in answer["tool_calls"]]
    assert commands[0] == "git checkout -q -b fix/acme-semverkit-7"
    assert commands[2].startswith("git add -A && git commit")
    assert len(commands) == 4 and all(c["name"] == "shell" for c in answer["tool_calls"])
    ran = [e for e in entries if e["role"] == "tool" and "Running git add -A" in e["text"]]
    assert len(ran) == 1


def test_its_files_stay_out_of_the_diff(runs: dict[str, RunResult]) -> None:
    for run in runs.values():
        diff = (run.run_dir / "diff.patch").read_text()
        files = [
            line.split(" b/")[-1] for line in diff.splitlines() if line.startswith("diff --git")
        ]
        assert not [f for f in files if f.startswith(".aider") or f == ".gitignore"], files
    gold = (runs["gold"].run_dir / "diff.patch").read_text()
    assert [line for line in gold.splitlines() if line.startswith("diff --git")] == [
        "diff --git a/README.md b/README.md",
        "diff --git a/src/semverkit/ranges.py b/src/semverkit/ranges.py",
    ]
    assert (runs["idle"].run_dir / "diff.patch").read_text() == ""


def questions(run: RunResult) -> list[str]:
    """The questions aider asked, with the answers taken (its chat history quotes each)."""
    history = (run.run_dir / "aider.chat.history.md").read_text()
    return [line[2:].strip() for line in history.splitlines() if "(Y)es/(N)o" in line]


def test_it_asks_only_what_no_setting_avoids_and_takes_each_default(
    runs: dict[str, RunResult],
) -> None:
    asked = questions(runs["gold"])
    assert any(q.startswith("Run shell command") for q in asked), asked
    assert all(q.startswith(UNAVOIDABLE) and q.endswith("]: y") for q in asked), asked
    # The idle answer has no command. Its one question is the one AIDER_ANALYTICS=false spares
    # gold: with analytics turned on, aider first asks to collect them (and takes the yes).
    assert questions(runs["idle"]) == [
        "Allow collection of anonymous analytics to help improve aider? (Y)es/(N)o [Yes]: y"
    ]
