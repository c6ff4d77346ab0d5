"""OpenAI's two dialects: chat completions and responses (bodies, streams, errors)."""

from __future__ import annotations

import re
from typing import Any

from replay.harness.stub.common import (
    Answer,
    BadRequest,
    Conversation,
    canonical,
    sse,
    text_of,
)

CREATED = 1_700_000_000
PIECE = 12
_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "request_forbidden",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    404: ("invalid_request_error", None, "Invalid URL."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
    529: ("server_error", None, "The server is overloaded."),
}


def pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


PROJECT = "proj_replaystub"
"""The project the stub's account stands for, as OpenAI names it in a refusal."""


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An error in OpenAI's shape."""
    kind, code, default = _ERRORS.get(status, ("server_error", None, "Error."))
    return {"error": {"message": message or default, "type": kind, "param": None, "code": code}}


def refuse_model(model: str, forbidden: bool) -> tuple[int, dict[str, Any]]:
    """OpenAI's answer to a model the project may not use (403) or that does not exist (404):
    both ``model_not_found``, worded as the API words them."""
    if forbidden:
        status = 403
        message = f"Project `{PROJECT}` does not have access to model `{model}`"
    else:
        status = 404
        message = f"The model `{model}` does not exist or you do not have access to it."
    error = {"message": message, "type": "invalid_request_error", "param": None}
    return status, {"error": {**error, "code": "model_not_found"}}


def _tools(raw: Any, chat: bool) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for tool in raw if isinstance(raw, list) else []:
        if not isinstance(tool, dict) or tool.get("type") != "function":
            continue
        fn = tool.get("function") if chat else tool
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            tools[fn["name"]] = params if isinstance(params, dict) else {}
    return tools


# ----------------------------------------------------------------- chat completions


class OpenAIChat:
    """``POST /v1/chat/completions``."""

    name = "openai_chat"
    request_id_header = "x-request-id"

    def parse(self, body: dict[str, Any]) -> Conversation:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("'messages' is a required property and must be a non-empty array")
        feedback: list[str] = []
        buf: list[str] = []
        for msg in messages:
            if not isinstance(msg, dict):
                raise BadRequest("each message must be an object")
            if msg.get("role") == "assistant":
                feedback.append("\n".join(buf))
                buf = []
            else:
                buf.append(text_of(msg.get("content")))
        feedback.append("\n".join(buf))
        opts = body.get("stream_options")
        return Conversation(
            feedback=feedback,
            tools=_tools(body.get("tools"), chat=True),
            stream=body.get("stream") is True,
            include_usage=isinstance(opts, dict) and opts.get("include_usage") is True,
            input_text=canonical(messages, body.get("tools")),
        )

    def _usage(self, ans: Answer) -> dict[str, Any]:
        return {
            "prompt_tokens": ans.input_tokens,
            "completion_tokens": ans.output_tokens,
            "total_tokens": ans.input_tokens + ans.output_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _calls(self, ans: Answer) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{c.id}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in ans.calls
        ]

    def body(self, ans: Answer, conv: Conversation) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": ans.text or None,
            "refusal": None,
            "annotations": [],
        }
        if ans.calls:
            message["tool_calls"] = self._calls(ans)
        return {
            "id": f"chatcmpl-{ans.key}",
            "object": "chat.completion",
            "created": CREATED,
            "model": ans.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if ans.calls else "stop",
                }
            ],
            "usage": self._usage(ans),
            "service_tier": "default",
            "system_fingerprint": None,
        }

    def events(self, ans: Answer, conv: Conversation) -> tuple[list[bytes], int]:
        """The stream's events, and how many leading ones come before the terminal part."""

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data: dict[str, Any] = {
                "id": f"chatcmpl-{ans.key}",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": ans.model,
                "system_fingerprint": None,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if conv.include_usage:
                data["usage"] = None
            return sse(data)

        out = [chunk({"role": "assistant", "content": "", "refusal": None})]
        out += [chunk({"content": p}) for p in pieces(ans.text)]
        for j, call in enumerate(self._calls(ans)):
            head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
            out.append(chunk({"tool_calls": [{"index": j, **head}]}))
            for p in pieces(call["function"]["arguments"]):
                out.append(chunk({"tool_calls": [{"index": j, "function": {"arguments": p}}]}))
        body_events = len(out)
        out.append(chunk({}, "tool_calls" if ans.calls else "stop"))
        if conv.include_usage:
            out.append(
                sse(
                    {
                        "id": f"chatcmpl-{ans.key}",
                        "object": "chat.completion.chunk",
                        "created": CREATED,
                        "model": ans.model,
                        "system_fingerprint": None,
                        "choices": [],
                        "usage": self._usage(ans),
                    }
                )
            )
        out.append(sse("[DONE]"))
        return out, body_events

    def stream_error(self, sequence: int) -> bytes:
        return sse(error_body(500))

    def garbage_event(self) -> bytes:
        return b"data: <html><body>upstream hiccup</body>\n\n"

    def error_body(self, status: int, message: str | None = None) -> dict[str, Any]:
        return error_body(status, message)

    def refuse_model(
        self, model: str, forbidden: bool, request_id: str
    ) -> tuple[int, dict[str, Any]]:
        return refuse_model(model, forbidden)


# ----------------------------------------------------------------- responses


_CHAIN = re.compile(r"_c(\d+)$")
_ASSISTANT_ITEMS = {
    "function_call",
    "reasoning",
    "custom_tool_call",
    "local_shell_call",
    "computer_call",
}


class OpenAIResponses:
    """``POST /v1/responses`` (stateless: a chained call carries the script position in
    ``previous_response_id``)."""

    name = "openai_responses"
    request_id_header = "x-request-id"

    def parse(self, body: dict[str, Any]) -> Conversation:
        raw = body.get("input")
        if not isinstance(raw, str | list):
            raise BadRequest("'input' is required: a string or an array of items")
        feedback: list[str] = []
        buf: list[str] = []
        in_turn = False
        for item in [{"role": "user", "content": raw}] if isinstance(raw, str) else raw:
            if not isinstance(item, dict):
                raise BadRequest("each input item must be an object")
            mine = item.get("role") == "assistant" or item.get("type") in _ASSISTANT_ITEMS
            if mine and not in_turn:
                feedback.append("\n".join(buf))
                buf = []
            elif not mine:
                buf.append(text_of(item.get("output", item.get("content"))))
            in_turn = mine
        feedback.append("\n".join(buf))
        cursor = 0
        prev = body.get("previous_response_id")
        if isinstance(prev, str) and (match := _CHAIN.search(prev)):
            cursor = int(match.group(1))
        return Conversation(
            feedback=feedback,
            tools=_tools(body.get("tools"), chat=False),
            stream=body.get("stream") is True,
            include_usage=False,
            input_text=canonical(body.get("instructions"), raw, body.get("tools")),
            cursor=cursor,
        )

    def _items(self, ans: Answer, done: bool) -> list[dict[str, Any]]:
        status = "completed" if done else "in_progress"
        items: list[dict[str, Any]] = []
        if ans.text:
            part = {"type": "output_text", "text": ans.text, "annotations": [], "logprobs": []}
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{ans.key}",
                    "status": status,
                    "role": "assistant",
                    "content": [part] if done else [],
                }
            )
        for c in ans.calls:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{c.id}",
                    "call_id": f"call_{c.id}",
                    "name": c.name,
                    "arguments": c.arguments_json if done else "",
                    "status": status,
                }
            )
        return items

    def body(self, ans: Answer, conv: Conversation, done: bool = True) -> dict[str, Any]:
        return {
            "id": f"resp_{ans.key}_c{ans.cursor_after}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed" if done else "in_progress",
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "model": ans.model,
            "output": self._items(ans, True) if done else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "temperature": 1.0,
            "top_p": 1.0,
            "text": {"format": {"type": "text"}},
            "truncation": "disabled",
            "metadata": {},
            "usage": {
                "input_tokens": ans.input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": ans.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": ans.input_tokens + ans.output_tokens,
            }
            if done
            else None,
        }

    def events(self, ans: Answer, conv: Conversation) -> tuple[list[bytes], int]:
        out: list[bytes] = []

        def ev(kind: str, **data: Any) -> None:
            out.append(sse({"type": kind, "sequence_number": len(out), **data}, kind))

        ev("response.created", response=self.body(ans, conv, done=False))
        ev("response.in_progress", response=self.body(ans, conv, done=False))
        started, finished = self._items(ans, False), self._items(ans, True)
        for i, (item, full) in enumerate(zip(started, finished, strict=True)):
            ev("response.output_item.added", output_index=i, item=item)
            if item["type"] == "message":
                empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                ref = {"item_id": item["id"], "output_index": i, "content_index": 0}
                ev("response.content_part.added", **ref, part=empty)
                for p in pieces(ans.text):
                    ev("response.output_text.delta", **ref, delta=p, logprobs=[])
                ev("response.output_text.done", **ref, text=ans.text, logprobs=[])
                ev("response.content_part.done", **ref, part=full["content"][0])
            else:
                ref = {"item_id": item["id"], "output_index": i}
                for p in pieces(full["arguments"]):
                    ev("response.function_call_arguments.delta", **ref, delta=p)
                ev("response.function_call_arguments.done", **ref, arguments=full["arguments"])
            ev("response.output_item.done", output_index=i, item=full)
        body_events = len(out)
        ev("response.completed", response=self.body(ans, conv))
        return out, body_events

    def stream_error(self, sequence: int) -> bytes:
        return sse(
            {
                "type": "error",
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "param": None,
                "sequence_number": sequence,
            },
            "error",
        )

    def garbage_event(self) -> bytes:
        return b"event: response.created\ndata: <html><body>upstream hiccup</body>\n\n"

    def error_body(self, status: int, message: str | None = None) -> dict[str, Any]:
        return error_body(status, message)

    def refuse_model(
        self, model: str, forbidden: bool, request_id: str
    ) -> tuple[int, dict[str, Any]]:
        return refuse_model(model, forbidden)
