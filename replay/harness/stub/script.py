"""Scripted trajectories: what the stub model answers, turn by turn.

A script is data (YAML or JSON)::

    name: gold
    steps:
      - say: "Let me look at the failing test."
        bash: "pytest -x tests/test_dates.py"
      - bash: "sed -i 's/<=/</' src/dates.py"
      - say: "I asked in the ticket's thread; waiting for an answer."
        bash: "curl -s -X POST https://slack.com/api/chat.postMessage ..."
      - wait_for: "use UTC"            # taken only once a tool result contains this
        poll: {bash: "sleep 2; curl -s https://slack.com/api/conversations.replies ..."}
        bash: "git commit -am 'Use UTC'"
      - say: "Fixed."                   # no tool call: the harness sees a final answer

The stub keeps no state per conversation: the answer is derived from the request's history
(the number of assistant turns already in it, and the tool results before each), so a retry of
the same request gets the same answer and parallel conversations do not interfere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from replay.base.formats import Strict, load_model


class ToolCall(Strict):
    """A call of a tool the harness offers, with its arguments."""

    name: str
    """The tool's name as the harness declares it."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The arguments, as a JSON object."""


class Action(Strict):
    """One assistant turn: some text and/or tool calls."""

    say: str | None = None
    """Text of the turn."""
    bash: str | None = None
    """A shell command for the harness's bash tool (see :attr:`Script.bash_tool`)."""
    tools: list[ToolCall] = Field(default_factory=list)
    """Other tool calls, after the bash one."""

    @property
    def empty(self) -> bool:
        return self.say is None and self.bash is None and not self.tools


class Step(Action):
    """A turn of the trajectory, optionally gated on a tool result."""

    wait_for: str | None = None
    """Take this step only once the tool results the model got since its last turn contain
    this text; until then answer with :attr:`poll`."""
    poll: Action = Field(default_factory=lambda: Action(bash="sleep 1"))
    """The turn played while waiting (default: ``sleep 1``)."""

    @model_validator(mode="after")
    def _not_empty(self) -> Step:
        if self.empty:
            raise ValueError("a step needs say, bash or tools")
        return self


class Script(Strict):
    """A trajectory the stub plays, one step per model request (format version 1)."""

    schema_version: int = 1
    """Version of the script format."""
    name: str
    """Name of the trajectory (``gold``, ``cheat``, ``idle`` ...)."""
    model: str = "replay-stub"
    """Model id the stub reports."""
    bash_tool: str = "bash"
    """Name of the tool a ``bash`` step calls, when the request offers it. If the request
    offers a single other tool, that one is called instead."""
    bash_argument: str = "command"
    """Argument of the bash tool that carries the command."""
    bash_extra: dict[str, Any] = Field(default_factory=dict)
    """Other arguments every bash call carries (a harness whose shell tool requires more than
    the command, e.g. OpenHands' ``security_risk``)."""
    text_action: str = "```bash\n{command}\n```"
    """How a ``bash`` step is written into the text when the request offers no tools
    (harnesses that parse commands from the answer's text)."""
    steps: list[Step]
    """The turns, in order."""
    final: str = "I have finished the task."
    """The answer (text only) once the steps have run out."""
    one_answer: bool = False
    """Answer every request with the first step, whatever the history (a trajectory merged
    into one answer for a harness that asks once per task: see ``StubHints.one_answer``)."""

    @model_validator(mode="after")
    def _template(self) -> Script:
        if "{command}" not in self.text_action:
            raise ValueError("text_action must contain {command}")
        return self


def load_script(path: Path) -> Script:
    """Read a script file (YAML, or JSON when it ends in ``.json``)."""
    return load_model(path, Script)


# Characters str.splitlines() breaks a line at, besides the backslash and quote printf
# needs escaped inside single quotes.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def one_line(command: str) -> str:
    """``command`` as a single line with the same effect (``bash -c`` of its text).

    For harnesses that run each line of a command block as a separate command (aider). The
    text goes through ``printf '%b'`` inside single quotes: backslashes, quotes and every
    character that breaks a line are written as octal escapes of their UTF-8 bytes.
    """
    if not any(c in _LINE_BREAKS for c in command):
        return command
    out = []
    for c in command:
        if c in _LINE_BREAKS or c in "\\'":
            out.append("".join(f"\\0{b:03o}" for b in c.encode()))
        else:
            out.append(c)
    return f"bash -c \"$(printf '%b' '{''.join(out)}')\""


def next_action(script: Script, feedback: list[str], cursor: int = 0) -> tuple[Action, int]:
    """The answer to a request, and the script position after it.

    ``feedback[i]`` is the text the model received before its ``i``-th turn (tool results,
    user messages); the last entry is what came after its latest turn. ``cursor`` is where the
    script stood before ``feedback[0]`` (0 unless a stateful API chained a previous answer).
    """
    if script.one_answer:
        return (script.steps[0], 1) if script.steps else (Action(say=script.final), 0)
    if not feedback:
        feedback = [""]
    for i, text in enumerate(feedback):
        step = script.steps[cursor] if cursor < len(script.steps) else None
        waiting = step is not None and step.wait_for is not None and step.wait_for not in text
        if i == len(feedback) - 1:
            if step is None:
                return Action(say=script.final), cursor
            if waiting:
                return step.poll, cursor
            return step, cursor + 1
        if not waiting:
            cursor = min(cursor + 1, len(script.steps))
    raise AssertionError("unreachable")
