"""Claude Code, the CLI bundled in today's ``claude-agent-sdk`` wheel, unmodified, against the stub.

Against the real Docker engine, in the locked sandbox as the unprivileged agent user, on
demo-caret-zero: gold passes and idle fails; what the harness asked of Anthropic besides its
model calls is denied and listed (fewer requests with its spec's settings than without them,
and the run passes either way); its stream-json transcript is kept and the uniform
``transcript.jsonl`` derived from it; its home and config stay outside the workspace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import load_case
from replay.harness.install import HarnessImage, prefetch_builtin
from replay.harness.spec import HarnessSpec, builtin_names, load_harness
from replay.run.runner import RunOptions, RunResult, run_case
from replay.run.trajectories import build_script
from replay.runtime import ContainerSpec, Runtime
from replay.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
CLAUDE = "/opt/harness/venv/lib/python3.11/site-packages/claude_agent_sdk/_bundled/claude"
SETTINGS = (
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
)
# What it asks for whatever its settings say: the remote managed settings and policy limits.
ALWAYS = [
    ("GET", "api.anthropic.com", "/api/claude_code/settings"),
    ("GET", "api.anthropic.com", "/api/claude_code/policy_limits"),
]


@pytest.fixture(scope="module")
def spec() -> tuple[HarnessSpec, Path]:
    return load_harness("claude-code")


@pytest.fixture(scope="module")
def runs(harness: HarnessImage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    """gold with the spec as it is, gold with its traffic settings emptied, and idle."""
    tmp = tmp_path_factory.mktemp("claude-code")
    off = {name: "" for name in SETTINGS}
    out: dict[str, RunResult] = {}
    for label, stub, env in (
        ("gold", "gold", {}),
        ("settings-off", "gold", off),
        ("idle", "idle", {}),
    ):
        options = RunOptions(
            harness="claude-code",
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


def denied(run: RunResult) -> list[tuple[str, str, str]]:
    return [
        (e["data"]["method"], e["data"]["host"], e["data"]["path"].split("?")[0])
        for e in events(run)
        if e["kind"] == "egress.denied"
    ]


def stream(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "claude.stream.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# ----------------------------------------------------------------------------- the spec


def test_the_spec_pins_todays_wheel_and_turns_its_traffic_off(
    spec: tuple[HarnessSpec, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    s = spec[0]
    assert s.install.pip == ["claude-agent-sdk==0.2.189"]
    assert s.provider == "anthropic" and s.env["ANTHROPIC_BASE_URL"] == "https://api.anthropic.com"
    assert all(s.env[name] == "1" for name in SETTINGS)
    # Its config lives in the agent's $HOME, never in the workspace.
    assert s.env["CLAUDE_CONFIG_DIR"].startswith("/home/agent/")
    assert (s.stub.bash_tool, s.stub.bash_argument) == ("Bash", "command")
    assert (s.transcript, s.transcript_format) == ("claude.stream.jsonl", "claude-stream-json")
    # `make wheelhouse` fetches it with every other built-in harness's wheels.
    asked: list[list[str]] = []
    monkeypatch.setattr(
        "replay.harness.install.download_wheels",
        lambda reqs, root, *args, **kw: asked.append(reqs) or root,
    )
    monkeypatch.setattr("replay.harness.install.download_python", lambda release, root: root)
    prefetch_builtin(Path("unused"))
    assert ["claude-agent-sdk==0.2.189"] in asked


def test_as_root_it_refuses_to_skip_permissions(runtime: Runtime, harness: HarnessImage) -> None:
    # Why the sandbox's unprivileged user matters: the flag the spec runs it with.
    box = runtime.create(ContainerSpec(image=harness.id, command=["sleep", "60"]), "cc-root")
    try:
        done = box.exec([CLAUDE, "-p", "hi", "--dangerously-skip-permissions"])
        version = box.exec([CLAUDE, "--version"])
    finally:
        box.remove()
    assert done.exit_code == 1
    assert "cannot be used with root/sudo privileges" in done.out + done.err
    assert version.out.strip() == "2.1.332 (Claude Code)"


# ----------------------------------------------------------------------------- the runs


def test_gold_passes_and_idle_fails(runs: dict[str, RunResult]) -> None:
    gold, idle = runs["gold"], runs["idle"]
    assert gold.outcome == "pass", gold.reason
    assert gold.grade.harness == "claude-code" and gold.grade.harness_exit == 0
    assert gold.grade.wire.healthy and gold.grade.wire.protocol_failed == 0
    assert gold.grade.side_effects.ok
    assert idle.outcome == "model_fail", idle.reason
    assert idle.grade.tests is not None and not idle.grade.tests.resolved
    # Every model call was a streamed Anthropic message, one per turn of the trajectory.
    calls = [e["data"] for e in events(gold) if e["kind"] == "model.call"]
    assert {(c["method"], c["path"], c["provider"]) for c in calls} == {
        ("POST", "/v1/messages", "anthropic_messages")
    }
    script = build_script(load_case(CASE), load_snapshot(load_case(CASE).snapshot), "gold")
    assert len(calls) == len(script.steps) + 1  # the steps, then the final answer


def test_what_it_tried_besides_the_model_was_denied_and_listed(
    runs: dict[str, RunResult],
) -> None:
    gold, off = runs["gold"], runs["settings-off"]
    # With the spec's settings: only its managed settings and policy limits, each denied,
    # recorded, listed as the harness's own, and not held against the agent.
    assert sorted(set(denied(gold))) == sorted(ALWAYS)
    assert gold.grade.harness_egress == [f"{m} {h}{p}" for m, h, p in denied(gold)]
    reasons = {e["data"]["reason"] for e in events(gold) if e["kind"] == "egress.denied"}
    assert all("is not an inference endpoint" in r for r in reasons), reasons
    rule = next(r for r in gold.grade.side_effects.rules if r.rule == "no-denied-egress")
    assert rule.ok and rule.count == 0
    # With them emptied it also reaches for its telemetry, feature flags and the MCP
    # registry: all denied, and the run passes all the same.
    assert off.outcome == "pass", off.reason
    tried = set(denied(off))
    assert set(ALWAYS) < tried
    for path in (
        "/api/event_logging/v2/batch",
        "/api/directory/server-urls",
        "/api/claude_cli/bootstrap",
    ):
        assert any(p == path for _, _, p in tried), (path, tried)
    assert any(p.startswith("/api/eval/sdk-") for _, _, p in tried), tried
    assert {h for _, h, _ in tried} == {"api.anthropic.com"}
    assert len(off.grade.harness_egress) == len(denied(off))


def test_its_stream_json_is_kept_and_the_uniform_transcript_derived(
    runs: dict[str, RunResult],
) -> None:
    gold = runs["gold"]
    native = stream(gold)
    init = native[0]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["claude_code_version"] == "2.1.332"
    assert init["permissionMode"] == "bypassPermissions" and "Bash" in init["tools"]
    assert init["analytics_disabled"] is True
    assert native[-1]["type"] == "result" and native[-1]["subtype"] == "success"
    uniform = [
        json.loads(line) for line in (gold.run_dir / "transcript.jsonl").read_text().splitlines()
    ]
    assert [u["index"] for u in uniform] == list(range(len(uniform)))
    assert all(set(u) == {"index", "role", "text", "tool_calls"} for u in uniform)
    script = build_script(load_case(CASE), load_snapshot(load_case(CASE).snapshot), "gold")
    called = [c for u in uniform for c in u["tool_calls"]]
    assert called == [{"name": "Bash", "arguments": {"command": s.bash}} for s in script.steps]
    roles = [u["role"] for u in uniform]
    assert roles[0] == "system" and roles.count("tool") == len(script.steps)
    assert roles[-1] == "assistant" and uniform[-1]["tool_calls"] == []
    assert uniform[-1]["text"] == native[-1]["result"]


def test_its_home_and_config_stay_outside_the_workspace(runs: dict[str, RunResult]) -> None:
    for run in runs.values():
        init = stream(run)[0]
        workdir = load_case(CASE).environment.workdir
        assert init["cwd"] == workdir
        assert all(p.startswith("/home/agent/.claude/") for p in init["memory_paths"].values())
        patch = (run.run_dir / "diff.patch").read_text()
        touched = {
            line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff --git")
        }
        assert not any(".claude" in t or t.startswith("CLAUDE") for t in touched), touched
    gold_patch = (CASE.parent / "gold.patch").read_text()
    want = {
        line.split(" b/", 1)[1] for line in gold_patch.splitlines() if line.startswith("diff --git")
    }
    got = {
        line.split(" b/", 1)[1]
        for line in (runs["gold"].run_dir / "diff.patch").read_text().splitlines()
        if line.startswith("diff --git")
    }
    assert got == want
    assert (runs["idle"].run_dir / "diff.patch").read_text() == ""


# ----------------------------------------------------------------------------- the command


def test_harness_list_shows_each_built_in_harness_with_its_pinned_version() -> None:
    from typer.testing import CliRunner

    from replay.cli import app

    done = CliRunner().invoke(app, ["harness", "list"])
    assert done.exit_code == 0, done.output
    rows = {line.split()[0]: line for line in done.output.splitlines()[1:] if line.strip()}
    assert set(rows) == set(builtin_names()) >= {"claude-code", "mini-swe-agent", "reference"}
    assert "claude-agent-sdk==0.2.189" in rows["claude-code"] and "anthropic" in rows["claude-code"]
    assert "mini-swe-agent==2.4.6" in rows["mini-swe-agent"]
    assert "its own files" in rows["reference"]


def test_harness_check_and_matrix_print_what_was_reached_and_denied(
    runs: dict[str, RunResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from replay.cli import app

    asked: list[RunOptions] = []

    def replayed(case: Path, options: RunOptions) -> list[RunResult]:
        asked.append(options)
        return [runs["gold" if options.stub == "gold" else "idle"]]

    monkeypatch.setattr("replay.run.runner.run_case", replayed)
    db = ["--db", str(tmp_path / "r.db")]
    done = CliRunner().invoke(app, [*db, "harness", "check", "claude-code"])
    assert done.exit_code == 0, done.output
    assert (asked[0].harness, asked[0].stub, asked[0].wire_retries) == ("claude-code", "gold", 0)
    lines = done.output.splitlines()
    assert lines[0] == "harness claude-code on demo-caret-zero [stub:gold]: pass"
    assert "api.anthropic.com (model) x5" in done.output and "git.push x1" in done.output
    # Each of its own requests at least once (it repeats them on some runs: 2 or 4 seen).
    denied = [line for line in lines if line.startswith("  denied: ")]
    assert len(denied) == 1 and int(denied[0].split(": ")[1]) >= len(ALWAYS)
    for _, host, path in ALWAYS:
        assert f"    GET {host}{path}  [the harness's own (its spec declares it)]" in lines
    # A gold run that fails is a failed check.
    monkeypatch.setattr("replay.run.runner.run_case", lambda case, options: [runs["idle"]])
    assert CliRunner().invoke(app, [*db, "harness", "check", "claude-code"]).exit_code == 1
    # The matrix: one table, every harness asked for, gold and idle.
    monkeypatch.setattr("replay.run.runner.run_case", replayed)
    asked.clear()
    done = CliRunner().invoke(
        app, [*db, "harness", "matrix", str(CASE), "--harness", "claude-code"]
    )
    assert done.exit_code == 0, done.output
    assert [(o.harness, o.stub) for o in asked] == [
        ("claude-code", "gold"),
        ("claude-code", "idle"),
    ]
    rows = [line.split() for line in done.output.splitlines() if line.startswith("claude-code")]
    assert [(r[2], r[3], r[4]) for r in rows] == [
        ("demo-caret-zero", "gold", "pass"),
        ("demo-caret-zero", "idle", "model_fail"),
    ]
    monkeypatch.setattr("replay.run.runner.run_case", lambda case, options: [runs["gold"]])
    done = CliRunner().invoke(
        app, [*db, "harness", "matrix", str(CASE), "--harness", "claude-code"]
    )
    assert (
        done.exit_code == 1
        and "unexpected: claude-code demo-caret-zero [stub:idle]: pass" in done.output
    )
