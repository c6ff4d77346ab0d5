"""What the three provider dialects share: a parsed request, a rendered answer, token counts."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from replay.harness.stub.script import Action, Script, next_action

Dialect = Literal["openai_chat", "openai_responses", "anthropic_messages"]


class BadRequest(Exception):
    """The request cannot be answered; rendered as the provider's 400."""


@dataclass(frozen=True)
class Conversation:
    """What the stub needs from a request, whatever its dialect."""

    feedback: list[str]
    """Text the model received before each of its turns, then after its latest one."""
    tools: dict[str, dict[str, Any]]
    """Tools the request offers: name -> JSON schema of the arguments."""
    stream: bool
    """Whether an SSE stream was asked for."""
    include_usage: bool
    """OpenAI chat ``stream_options.include_usage``."""
    input_text: str
    """The request's prompt, canonically serialised: input tokens are counted from it."""
    cursor: int = 0
    """Script position the history starts at (a chained Responses call)."""


@dataclass(frozen=True)
class Call:
    """A rendered tool call."""

    id: str
    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Answer:
    """One assistant turn, rendered for a request, with its token counts."""

    text: str
    calls: list[Call]
    input_tokens: int
    output_tokens: int
    key: str
    """Deterministic id stem: the same request gets the same ids."""
    cursor_after: int
    model: str
    extra: dict[str, Any] = field(default_factory=dict)


def tokens(text: str) -> int:
    """Deterministic token count: a quarter of the characters, at least one."""
    return max(1, math.ceil(len(text) / 4))


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts with text in them."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if key in content:
                return text_of(content[key])
    return ""


def _bash_target(script: Script, tools: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
    """(tool, argument) a bash step calls, or None to write it in the text."""
    if not tools:
        return None
    if script.bash_tool in tools:
        name = script.bash_tool
    elif len(tools) == 1:
        name = next(iter(tools))
    else:
        return script.bash_tool, script.bash_argument
    schema = tools[name]
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or script.bash_argument in props or not props:
        return name, script.bash_argument
    required = schema.get("required")
    if isinstance(required, list) and required:
        return name, str(required[0])
    return name, str(next(iter(props)))


def answer(script: Script, conv: Conversation, model: str | None) -> Answer:
    """Play the script for a parsed request."""
    action, cursor_after = next_action(script, conv.feedback, conv.cursor)
    key = hashlib.sha256(
        f"{script.name}\n{len(conv.feedback)}\n{conv.input_text}".encode()
    ).hexdigest()[:20]
    return render(script, action, conv, key, cursor_after, model or script.model)


def render(
    script: Script, action: Action, conv: Conversation, key: str, cursor_after: int, model: str
) -> Answer:
    text = action.say or ""
    calls: list[Call] = []
    if action.bash is not None:
        target = _bash_target(script, conv.tools)
        if target is None:
            block = script.text_action.format(command=action.bash)
            text = f"{text}\n\n{block}" if text else block
        else:
            arguments = {**script.bash_extra, target[1]: action.bash}
            calls.append(Call(f"{key}{len(calls)}", target[0], arguments))
    for tool in action.tools:
        calls.append(Call(f"{key}{len(calls)}", tool.name, dict(tool.arguments)))
    out = text + "".join(c.name + c.arguments_json for c in calls)
    return Answer(
        text=text,
        calls=calls,
        input_tokens=tokens(conv.input_text),
        output_tokens=tokens(out),
        key=key,
        cursor_after=cursor_after,
        model=model,
    )


def canonical(*parts: Any) -> str:
    return json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
