"""Harness specs: how a candidate harness is installed and launched (YAML, ``schema: 1``).

A harness is from the present: it is installed as it is today, into its own prefix
(``/opt/harness``), never resolved against the registry frozen at T. Specs are found by
name among the built-in ones (``replay/harness/builtin/*.yaml``) or by path.
"""

from __future__ import annotations

import difflib
import re
import shlex
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from replay.base.errors import InputError, UsageError
from replay.base.formats import Strict, load_model
from replay.harness.stub.script import Script, Step, ToolCall, one_line

BUILTIN = Path(__file__).with_name("builtin")
PREFIX = "/opt/harness"
PLACEHOLDERS = ("{task}", "{workdir}", "{transcript}", "{model}")


class Install(Strict):
    """What goes into the harness's own prefix."""

    files: dict[str, Path] = Field(default_factory=dict)
    """Destination inside the image -> file relative to the spec (e.g. the reference agent)."""
    pip: list[str] = Field(default_factory=list)
    """Requirements installed from today's package index into ``/opt/harness/venv``."""
    python: str | None = Field(default=None, pattern=r"^[a-z]+$")
    """A Debian release (``trixie``) whose Python the harness brings into its own prefix
    (``/opt/harness/python``, with that release's C library), for a harness that does not run
    on the env image's Python; the venv is made from it. None: the env image's ``python3``."""
    build: list[str] = Field(default_factory=list)
    """Requirements of the harness that the index has only as source (pure Python): built
    into wheels on the host (``pip wheel``) and put in the wheelhouse with the others."""
    ignore_requires_python: bool = False
    """Install although a package's ``Requires-Python`` excludes the venv's Python (a harness
    pinned to a Python no Debian release ships); the spec says why."""


class StubHints(Strict):
    """How the stub model's trajectories are played to this harness (its conventions)."""

    finish_bash: str | None = None
    """The harness ends its run on this command rather than on a text-only answer (e.g.
    mini-swe-agent's ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``): played as the last turn."""
    text_action: str | None = None
    """How a bash step is written into the text when the harness offers no tools (must
    contain ``{command}``); the stub's default fenced block otherwise."""
    bash_tool: str | None = None
    """The name of the harness's own shell tool, which a bash step calls (e.g. Claude Code's
    ``Bash``); the stub's ``bash`` otherwise."""
    bash_argument: str | None = None
    """The argument of that tool that carries the command; the stub's ``command`` otherwise."""
    one_line: bool = False
    """The harness runs each line of a command block as a command of its own (aider): a
    bash step of several lines is written as one line with the same effect
    (:func:`~replay.harness.stub.script.one_line`)."""
    one_answer: bool = False
    """The harness asks the model once per task and acts on that one answer (aider's
    ``--message``): the whole trajectory is played as one answer, each step's text followed
    by its command as a ``text_action`` block, and every request gets that answer (aider's
    prompt opens with example exchanges, so its turns cannot be counted; it asks again only
    when it did not act on the answer). A step that waits for a result becomes a bounded
    loop of its poll command until the output holds the awaited text; steps that call other
    tools cannot be played so."""
    bash_extra: dict[str, str] | None = None
    """Other arguments the harness's shell tool requires with every call (OpenHands'
    ``security_risk``)."""
    finish_tool: ToolCall | None = None
    """The harness ends its run on this tool call rather than on a text-only answer (e.g.
    OpenHands' ``finish``): played as the last turn."""

    @model_validator(mode="after")
    def _one_finish(self) -> StubHints:
        if self.finish_bash is not None and self.finish_tool is not None:
            raise ValueError("finish_bash and finish_tool: a harness ends its run one way")
        return self

    def apply(self, script: Script) -> Script:
        """``script`` as this harness needs it played."""
        update: dict[str, object] = {}
        steps = list(script.steps)
        if self.finish_bash is not None:
            steps.append(Step(say="Submitting.", bash=self.finish_bash))
        if self.finish_tool is not None:
            steps.append(Step(tools=[self.finish_tool]))
        if self.one_answer:
            steps = [_unwait(s) for s in steps]
        if self.one_line:
            steps = [
                s if s.bash is None else s.model_copy(update={"bash": one_line(s.bash)})
                for s in steps
            ]
        if self.text_action is not None:
            update["text_action"] = self.text_action
        if self.bash_tool is not None:
            update["bash_tool"] = self.bash_tool
        if self.bash_argument is not None:
            update["bash_argument"] = self.bash_argument
        if self.bash_extra is not None:
            update["bash_extra"] = self.bash_extra
        if self.one_answer:
            template = self.text_action or script.text_action
            update["steps"] = [Step(say=_one_answer(steps, template))] if steps else []
            update["one_answer"] = True
        elif steps != script.steps:
            update["steps"] = steps
        return Script.model_validate({**script.model_dump(), **update}) if update else script


# How many times a waiting step's poll runs in one answer before the step goes on anyway
# (the stub's default poll sleeps a second).
POLLS = 600


def _unwait(step: Step) -> Step:
    """A step that waits for a result as one command: its poll, until the output holds the
    awaited text (at most :data:`POLLS` times), then its own command."""
    if step.wait_for is None:
        return step
    if step.poll.tools or step.poll.bash is None:
        raise ValueError("a step whose poll calls other tools cannot be played in one answer")
    until = shlex.quote(step.wait_for)
    loop = (
        f"for _ in $(seq {POLLS}); do {{\n{step.poll.bash}\n}} | grep -qF -- {until} && break; "
        f"done; {step.bash or 'true'}"
    )
    return Step(say=step.say, bash=loop, tools=step.tools)


def _one_answer(steps: list[Step], template: str) -> str:
    parts: list[str] = []
    for step in steps:
        if step.tools:
            raise ValueError("a step that calls other tools cannot be played in one answer")
        if step.say:
            parts.append(step.say)
        if step.bash is not None:
            parts.append(template.format(command=step.bash))
    return "\n\n".join(parts)


class HarnessExit(StrEnum):
    """What a harness says by its exit status, as far as the grader listens."""

    TRANSPORT = "transport"
    """It lost its path to the model: the API failed on the wire (refused, reset, timed out,
    kept answering 5xx past its retries). Only a claim: the gateway's log decides."""
    PROTOCOL = "protocol"
    """The model's answer could not be understood (malformed body, unusable tool call)."""


class ExitCodes(Strict):
    """The exit statuses by which a harness reports a failure that is not the model's work.

    A harness that declares none is graded on what it did whatever its status.
    """

    transport: int | None = Field(default=None, ge=1, le=255)
    """The status meaning :attr:`HarnessExit.TRANSPORT`."""
    protocol: int | None = Field(default=None, ge=1, le=255)
    """The status meaning :attr:`HarnessExit.PROTOCOL`."""

    @model_validator(mode="after")
    def _distinct(self) -> ExitCodes:
        if self.transport is not None and self.transport == self.protocol:
            raise ValueError(f"transport and protocol share the exit status {self.transport}")
        return self

    def meaning(self, status: int | None) -> HarnessExit | None:
        """What ``status`` says, if it is one of the declared codes."""
        if status is None:
            return None
        if status == self.transport:
            return HarnessExit.TRANSPORT
        if status == self.protocol:
            return HarnessExit.PROTOCOL
        return None


class OwnRequest(Strict):
    """A request the harness itself makes besides its model calls (its settings, feature
    flags, telemetry, MCP registry): refused by the gateway like any other and kept in the
    event log as denied egress, but not held against the agent by the case's side-effect
    rules, and listed apart in the grade (``harness_egress``)."""

    method: str = Field(pattern=r"^[A-Z]+$")
    """The HTTP method."""
    host: str = Field(pattern=r"^[a-z0-9.-]+$")
    """The host it is sent to."""
    path: str
    """A regular expression the request's path (without its query) matches in full."""
    why: str = Field(min_length=1)
    """What the request is for, from the harness's documentation or its own strings."""

    @field_validator("path")
    @classmethod
    def _regex(cls, path: str) -> str:
        try:
            re.compile(path)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return path

    def matches(self, data: dict[str, Any]) -> bool:
        """Whether an ``egress.denied`` event's data is this request."""
        bare = str(data.get("path", "")).split("?", 1)[0]
        return (
            data.get("method") == self.method
            and str(data.get("host", "")).lower().rstrip(".") == self.host
            and re.fullmatch(self.path, bare) is not None
        )


class HarnessSpec(Strict):
    """One candidate harness."""

    schema_: Literal[1] = Field(alias="schema")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = ""
    provider: Literal["openai", "anthropic"]
    """Which API the harness speaks; the gateway routes and logs it."""
    install: Install = Field(default_factory=Install)
    command: list[str] = Field(min_length=1)
    """argv; ``{task}``, ``{workdir}``, ``{transcript}`` and ``{model}`` are filled in."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables for the harness; ``{model}`` is filled in here too."""
    transcript: str = Field(default="transcript.jsonl", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """File name of the harness's transcript in the run's files (``{transcript}``); copied out
    into the run directory."""
    transcript_format: str | None = None
    """The format of that file (``claude-stream-json``...), converted after the run into the
    run directory's uniform ``transcript.jsonl`` (:mod:`replay.harness.transcript`); None: no
    conversion. Read by the runner, not installed, so not part of the image key."""
    own_egress: list[OwnRequest] = Field(default_factory=list)
    """Requests the harness makes on its own that the gateway refuses (see
    :class:`OwnRequest`); read by the grader, not installed, so not part of the image key."""
    stub: StubHints = Field(default_factory=StubHints)
    exit_codes: ExitCodes = Field(default_factory=ExitCodes)
    """The exit statuses that report the model's API failing the harness (see
    :class:`ExitCodes`); read by the runner, not installed, so not part of the image key."""

    model_config = Strict.model_config | {"populate_by_name": True}

    @field_validator("install")
    @classmethod
    def _inside_prefix(cls, install: Install) -> Install:
        for dest in install.files:
            if not dest.startswith(PREFIX + "/"):
                raise ValueError(f"{dest}: harness files go under {PREFIX}/")
        return install

    @model_validator(mode="after")
    def _transcripts_apart(self) -> HarnessSpec:
        if self.transcript_format is not None:
            from replay.harness.transcript import UNIFORM, known_formats

            if self.transcript == UNIFORM:
                raise ValueError(
                    f"transcript: {UNIFORM} is the uniform transcript written from it; "
                    "name the harness's own file otherwise"
                )
            if self.transcript_format not in known_formats():
                known = ", ".join(known_formats())
                raise ValueError(
                    f"transcript_format: unknown format {self.transcript_format!r}; known: {known}"
                )
        return self

    def argv(self, *, task: str, workdir: str, transcript: str, model: str) -> list[str]:
        values = {
            "{task}": task,
            "{workdir}": workdir,
            "{transcript}": transcript,
            "{model}": model,
        }
        out = []
        for arg in self.command:
            for key, value in values.items():
                arg = arg.replace(key, value)
            out.append(arg)
        return out

    def environment(self, model: str) -> dict[str, str]:
        return {k: v.replace("{model}", model) for k, v in self.env.items()}


class UnknownHarness(UsageError):
    pass


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN.glob("*.yaml"))


def unknown_harness(name: str) -> str:
    """Why ``name`` names no built-in harness, with the closest one and all of them."""
    names = builtin_names()
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"no harness named {name!r}{hint}; built in: {', '.join(names)}"


def check_harness(name_or_path: str) -> None:
    """Raise :class:`UnknownHarness` when ``name_or_path`` is a name (not a spec file's path)
    that no built-in harness has; a path is checked when the harness is loaded."""
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return
    if Path(name_or_path).is_file() or (BUILTIN / f"{name_or_path}.yaml").is_file():
        return
    raise UnknownHarness(unknown_harness(name_or_path))


def load_harness(name_or_path: str) -> tuple[HarnessSpec, Path]:
    """A spec and the directory its ``install.files`` are relative to."""
    path = Path(name_or_path)
    if not path.is_file():
        if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
            raise InputError(path, "file not found")
        path = BUILTIN / f"{name_or_path}.yaml"
        if not path.is_file():
            raise UnknownHarness(unknown_harness(name_or_path))
    spec = load_model(path, HarnessSpec)
    base = path.resolve().parent
    for dest, src in spec.install.files.items():
        if not (base / src).is_file():
            raise InputError(path, f"file not found: {base / src}", f"install.files.{dest}")
    return spec, base
