"""The long parts of a run's page: the transcript turn by turn, the agent's diff beside the
gold patch, and every model call on a timeline."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replay.gateway.modelcalls import ModelCall
from replay.view.page import e
from replay.view.rundir import ENTRY_TEXT, Capped, clip

SKIP_MARK = re.compile(
    r"pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail|importorskip)\(|"
    r"unittest\.(skip|expectedFailure)|@skip(If|Unless)?\b|__test__\s*=\s*False"
)
"""What, on a line the diff adds, keeps a test from running or from counting as failed."""


@dataclass(frozen=True)
class SkipMark:
    """A line the agent's diff added that skips or excuses tests."""

    path: str
    line: str


def skip_marks(diff: str) -> list[SkipMark]:
    """Every added line of ``diff`` that skips, xfails or hides tests, with its file."""
    found: list[SkipMark] = []
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/")
        elif line.startswith("+") and SKIP_MARK.search(line):
            found.append(SkipMark(path, line[1:]))
    return found


def _diff_line(line: str) -> str:
    if line.startswith(("diff --git", "+++ ", "--- ", "index ")):
        cls = "file"
    elif line.startswith("@@"):
        cls = "hunk"
    elif line.startswith("+"):
        cls = "add skipmark" if SKIP_MARK.search(line) else "add"
    elif line.startswith("-"):
        cls = "del"
    else:
        cls = "ctx"
    return f"<span class='{cls}'>{e(line) or ' '}</span>"


def render_patch(patch: Capped | None, ident: str, missing: str) -> str:
    """A patch with its added, removed and hunk lines marked (skip marks stand out)."""
    if patch is None:
        return f"<p class='note' id='{e(ident)}'>{e(missing)}</p>"
    if not patch.text.strip():
        return f"<p id='{e(ident)}'>(empty: no change)</p>"
    cut = f"<p class='note'>{patch.cut} more bytes not shown.</p>" if patch.cut else ""
    body = "".join(_diff_line(line) for line in patch.text.splitlines())
    return f"<pre class='diff' id='{e(ident)}'>{body}</pre>{cut}"


def diff_section(agent: Capped | None, gold: Capped | None, gold_note: str | None) -> str:
    """The agent's diff beside the case's gold patch."""
    note = f"<p class='note'>{e(gold_note)}</p>" if gold_note else ""
    return (
        "<section id='diff'><h2>The agent's diff beside the gold patch</h2>"
        "<p class='meta'>Added lines that skip or excuse tests are outlined.</p>"
        f"{note}<div class='diffs'>"
        "<div><h3>agent (diff.patch)</h3>"
        f"{render_patch(agent, 'agent-diff', 'no diff.patch in the run directory')}</div>"
        "<div><h3>gold (the case's fix)</h3>"
        f"{render_patch(gold, 'gold-diff', 'no gold patch to show')}</div>"
        "</div></section>"
    )


# ---------------------------------------------------------------------------- transcript


def _arguments(args: Any) -> str:
    """A tool call's arguments, each string as it reads (its newlines kept)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return f"<pre>{e(clip(args, ENTRY_TEXT))}</pre>"
    if isinstance(args, dict):
        if set(args) == {"command"} and isinstance(args["command"], str):
            return f"<pre class='command'>{e(clip(args['command'], ENTRY_TEXT))}</pre>"
        parts = []
        for key, value in args.items():
            shown = value if isinstance(value, str) else json.dumps(value, indent=2)
            parts.append(
                f"<div class='arg'><span class='meta'>{e(key)}</span>"
                f"<pre>{e(clip(shown, ENTRY_TEXT))}</pre></div>"
            )
        return "".join(parts)
    return f"<pre>{e(clip(json.dumps(args, indent=2), ENTRY_TEXT))}</pre>"


def _turn(entry: dict[str, Any]) -> str:
    role = str(entry["role"])
    calls = "".join(
        f"<div class='call'><span class='name'>{e(call.get('name', '?'))}</span>"
        f"{_arguments(call.get('arguments'))}</div>"
        for call in entry["tool_calls"]
        if isinstance(call, dict)
    )
    text = entry["text"]
    label = "tool output" if role == "tool" else role
    shown = f"<pre class='text'>{e(text)}</pre>" if text.strip() or not calls else ""
    return (
        f"<section class='turn role-{e(role)}' id='turn-{e(entry['index'])}'>"
        f"<div class='who'>#{e(entry['index'])} {e(label)}</div>{shown}{calls}</section>"
    )


def transcript_section(entries: Sequence[dict[str, Any]]) -> str:
    if not entries:
        body = "<p class='note'>No transcript to show.</p>"
    else:
        body = "".join(_turn(entry) for entry in entries)
    return (
        "<section id='transcript'><h2>Transcript</h2><p class='meta'>The uniform transcript "
        f"(transcript.jsonl), {len(entries)} entries: each turn's text, the tools it called "
        f"and their output.</p>{body}</section>"
    )


# ---------------------------------------------------------------------------- model calls


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _bar(call: ModelCall, start: float, span: float) -> str:
    left = (call.t_request_end - start) / span * 100
    width = max((call.total_ms or 0) / 1000 / span * 100, 0.5)
    cls = "" if call.verdict == "ok" else " class='fail'"
    return (
        f"<div class='bar'><span{cls} style='left:{min(left, 99.5):.2f}%;"
        f"width:{min(width, 100 - min(left, 99.5)):.2f}%'></span></div>"
    )


def calls_section(calls: Sequence[ModelCall]) -> str:
    """Every model call: status, time to first byte, total time, tokens, error; a timeline."""
    if not calls:
        return (
            "<section id='model-calls'><h2>Model calls</h2>"
            "<p class='note'>No model call recorded.</p></section>"
        )
    start = min(c.t_request_end for c in calls)
    end = max(c.t_request_end + (c.total_ms or 0) / 1000 for c in calls)
    span = max(end - start, 1e-3)
    rows = []
    for n, call in enumerate(calls, 1):
        usage = call.usage
        error = ": ".join(x for x in (call.error_class, call.error_detail) if x)
        cls = " class='offending'" if call.verdict not in ("ok", "abandoned") else ""
        rows.append(
            f"<tr{cls} id='call-{n}' data-request-id='{e(call.request_id)}'>"
            f"<td class='num'>{n}</td>"
            f"<td class='num'>+{call.t_request_end - start:.2f} s</td>"
            f"<td>{e(call.model or '-')}<br><small>{e(call.provider)}</small></td>"
            f"<td class='num'>{e(call.status if call.status is not None else 'none')}</td>"
            f"<td>{e(call.verdict)}</td>"
            f"<td class='num'>{_ms(call.ttfb_ms)}</td><td class='num'>{_ms(call.total_ms)}</td>"
            f"<td class='num'>{usage.input_tokens if usage else '-'}</td>"
            f"<td class='num'>{usage.output_tokens if usage else '-'}</td>"
            f"<td class='num'>{call.retry_count}</td><td>{e(error or '-')}</td>"
            f"<td>{_bar(call, start, span)}</td></tr>"
        )
    tokens_in = sum(c.usage.input_tokens for c in calls if c.usage)
    tokens_out = sum(c.usage.output_tokens for c in calls if c.usage)
    waited = sum(c.total_ms or 0 for c in calls)
    return (
        "<section id='model-calls'><h2>Model calls</h2>"
        f"<p class='meta'>{len(calls)} HTTP calls on the model route over {span:.2f} s "
        f"(model_calls.jsonl); {tokens_in} input and {tokens_out} output tokens; "
        f"{waited:.0f} ms waiting in all. Times are from the end of each request.</p>"
        "<table id='model-call-table'><thead><tr><th>#</th><th>sent</th><th>model</th>"
        "<th>status</th><th>verdict</th><th>time to first byte (ms)</th><th>total (ms)</th>"
        "<th>tokens in</th><th>tokens out</th><th>retry</th><th>error</th>"
        f"<th>timeline</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
