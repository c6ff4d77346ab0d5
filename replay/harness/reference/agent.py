#!/usr/bin/env python3
"""replay's reference harness: a small bash-tool agent loop over OpenAI chat completions.

Standard library only, so it runs on any python3 inside the sandbox without touching the
registry frozen at T. It reads the task, offers the model one tool (``bash``), runs each call
in the working directory, and stops at a final answer or the step limit. Every request,
answer and command goes to the transcript (JSON lines).

Like the official SDKs it retries 408, 409, 429, 5xx and connection errors (twice by default)
and marks retries with ``x-stainless-retry-count``, so the gateway can group them.

Exit status: 0 final answer, 3 step limit, 4 the model API failed (transport), 5 the model's
answer could not be understood (protocol). The runner learns 4 and 5 from this harness's spec
(``exit_codes`` in ``replay/harness/builtin/reference.yaml``), not from here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

SYSTEM = (
    "You are a software engineer working in a git repository. Use the bash tool to inspect "
    "and change files, run tests, and use git, gh and curl as a teammate would. When the "
    "task is done, answer without calling a tool."
)
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the repository and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command."}},
            "required": ["command"],
        },
    },
}
RETRYABLE = {408, 409, 429}
OUTPUT_LIMIT = 20_000


class TransportError(Exception):
    pass


class ProtocolError(Exception):
    pass


class Transcript:
    def __init__(self, path: str) -> None:
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run

    def write(self, kind: str, **data: Any) -> None:
        self.fh.write(json.dumps({"t": time.time(), "kind": kind, **data}) + "\n")
        self.fh.flush()


def call_model(
    base: str, key: str, body: dict[str, Any], retries: int, timeout: float, log: Transcript
) -> dict[str, Any]:
    data = json.dumps(body).encode()
    for attempt in range(retries + 1):
        request = urllib.request.Request(
            base.rstrip("/") + "/chat/completions",
            data=data,
            method="POST",
            headers={
                "content-type": "application/json",
                "authorization": f"Bearer {key}",
                "x-stainless-retry-count": str(attempt),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            detail = exc.read()[:500].decode("utf-8", "replace")
            log.write("model_error", attempt=attempt, status=status, detail=detail)
            if status in RETRYABLE or status >= 500:
                if attempt < retries:
                    time.sleep(min(0.5 * 2**attempt, 8))
                    continue
                raise TransportError(f"HTTP {status} after {attempt + 1} attempts") from exc
            raise ProtocolError(f"HTTP {status}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            log.write("model_error", attempt=attempt, error=repr(exc))
            if attempt < retries:
                time.sleep(min(0.5 * 2**attempt, 8))
                continue
            raise TransportError(f"{exc!r} after {attempt + 1} attempts") from exc
        try:
            parsed = json.loads(raw)
            message = parsed["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            log.write("protocol_error", body=raw[:500].decode("utf-8", "replace"))
            raise ProtocolError(f"unreadable answer: {exc!r}") from exc
        if not isinstance(parsed, dict) or not isinstance(message, dict):
            raise ProtocolError("the answer's message is not an object")
        return parsed
    raise AssertionError("unreachable")


def run_bash(command: str, workdir: str, timeout: float) -> str:
    # The command goes to bash as a script file, not as an argument: Linux refuses any single
    # argument over 128 KiB (MAX_ARG_STRLEN), and a heredoc writing a large patch is longer.
    with tempfile.TemporaryDirectory(prefix="replay-bash-") as tmp:
        script = os.path.join(tmp, "command.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(command)
        try:
            done = subprocess.run(
                ["bash", "-l", script],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"(command timed out after {timeout:.0f}s)"
    out = (done.stdout + done.stderr)[-OUTPUT_LIMIT:]
    return f"{out}\n(exit status {done.returncode})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, help="File holding the task.")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--transcript", required=True)
    parser.add_argument("--model", default=os.environ.get("REPLAY_MODEL", "gpt-4.1"))
    parser.add_argument(
        "--max-steps", type=int, default=int(os.environ.get("REPLAY_MAX_STEPS", "50"))
    )
    parser.add_argument(
        "--retries", type=int, default=int(os.environ.get("REPLAY_MODEL_RETRIES", "2"))
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="Seconds per model call.")
    parser.add_argument("--command-timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    key = os.environ.get("OPENAI_API_KEY", "")
    with open(args.task, encoding="utf-8") as fh:
        task = fh.read()
    log = Transcript(args.transcript)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": task},
    ]
    log.write("start", model=args.model, base=base, task=task)
    for step in range(args.max_steps):
        body = {"model": args.model, "messages": messages, "tools": [BASH_TOOL]}
        try:
            answer = call_model(base, key, body, args.retries, args.timeout, log)
        except TransportError as exc:
            log.write("stop", reason="transport", detail=str(exc), step=step)
            return 4
        except ProtocolError as exc:
            log.write("stop", reason="protocol", detail=str(exc), step=step)
            return 5
        message = answer["choices"][0]["message"]
        log.write("assistant", step=step, message=message, usage=answer.get("usage"))
        calls = message.get("tool_calls") or []
        messages.append(
            {
                "role": "assistant",
                "content": message.get("content"),
                **({"tool_calls": calls} if calls else {}),
            }
        )
        if not calls:
            log.write("stop", reason="final", step=step, answer=message.get("content"))
            return 0
        for call in calls:
            try:
                command = json.loads(call["function"]["arguments"])["command"]
            except (KeyError, TypeError, ValueError):
                log.write("stop", reason="protocol", detail=f"bad tool call {call!r}", step=step)
                return 5
            output = run_bash(command, args.workdir, args.command_timeout)
            log.write("tool", step=step, command=command, output=output)
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": output})
    log.write("stop", reason="max_steps", step=args.max_steps)
    return 3


if __name__ == "__main__":
    sys.exit(main())
