"""Anthropic's messages dialect: bodies, the event stream, errors."""

from __future__ import annotations

import json
from typing import Any

from replay.harness.stub.common import (
    Answer,
    BadRequest,
    Conversation,
    canonical,
    sse,
    text_of,
    tokens,
)
from replay.harness.stub.openai import pieces

_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "Not found."),
    429: ("rate_limit_error", "Number of requests has exceeded your rate limit. Retry later."),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}


def error_body(status: int, message: str | None = None, request_id: str = "") -> dict[str, Any]:
    """An error in Anthropic's shape."""
    kind, default = _ERRORS.get(status, ("api_error", "Internal server error"))
    body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message or default}}
    if request_id:
        body["request_id"] = request_id
    return body


def refuse_model(model: str, forbidden: bool, request_id: str = "") -> tuple[int, dict[str, Any]]:
    """Anthropic's answer to a model the key may not use (403 ``permission_error``) or that
    does not exist (404 ``not_found_error``, naming the model)."""
    if forbidden:
        return 403, error_body(403, request_id=request_id)
    return 404, error_body(404, f"model: {model}", request_id)


class AnthropicMessages:
    """``POST /v1/messages``."""

    name = "anthropic_messages"
    request_id_header = "request-id"

    def parse(self, body: dict[str, Any]) -> Conversation:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages: Field required")
        if not isinstance(body.get("max_tokens"), int):
            raise BadRequest("max_tokens: Field required")
        feedback: list[str] = []
        buf: list[str] = [text_of(body.get("system"))]
        for msg in messages:
            if not isinstance(msg, dict):
                raise BadRequest("messages: each message must be an object")
            if msg.get("role") == "assistant":
                feedback.append("\n".join(buf))
                buf = []
            else:
                buf.append(text_of(msg.get("content")))
        feedback.append("\n".join(buf))
        tools: dict[str, dict[str, Any]] = {}
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                schema = tool.get("input_schema")
                tools[tool["name"]] = schema if isinstance(schema, dict) else {}
        return Conversation(
            feedback=feedback,
            tools=tools,
            stream=body.get("stream") is True,
            include_usage=False,
            input_text=canonical(body.get("system"), messages, body.get("tools")),
        )

    def count_tokens(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/messages/count_tokens``: what a messages call with this prompt would
        report as its input tokens (no turn is played)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages: Field required")
        if not isinstance(body.get("model"), str):
            raise BadRequest("model: Field required")
        return {"input_tokens": tokens(canonical(body.get("system"), messages, body.get("tools")))}

    def _usage(self, ans: Answer, output_tokens: int | None = None) -> dict[str, Any]:
        return {
            "input_tokens": ans.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": ans.output_tokens if output_tokens is None else output_tokens,
            "service_tier": "standard",
        }

    def _blocks(self, ans: Answer) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if ans.text:
            blocks.append({"type": "text", "text": ans.text})
        for c in ans.calls:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{c.id}", "name": c.name, "input": c.arguments}
            )
        return blocks

    def _message(self, ans: Answer, done: bool) -> dict[str, Any]:
        return {
            "id": f"msg_{ans.key}",
            "type": "message",
            "role": "assistant",
            "model": ans.model,
            "content": self._blocks(ans) if done else [],
            "stop_reason": ("tool_use" if ans.calls else "end_turn") if done else None,
            "stop_sequence": None,
            "usage": self._usage(ans, None if done else 1),
        }

    def body(self, ans: Answer, conv: Conversation) -> dict[str, Any]:
        return self._message(ans, done=True)

    def events(self, ans: Answer, conv: Conversation) -> tuple[list[bytes], int]:
        out: list[bytes] = []

        def ev(kind: str, **data: Any) -> None:
            out.append(sse({"type": kind, **data}, kind))

        ev("message_start", message=self._message(ans, done=False))
        ev("ping")
        for i, block in enumerate(self._blocks(ans)):
            if block["type"] == "text":
                ev("content_block_start", index=i, content_block={"type": "text", "text": ""})
                for p in pieces(ans.text):
                    ev("content_block_delta", index=i, delta={"type": "text_delta", "text": p})
            else:
                ev("content_block_start", index=i, content_block={**block, "input": {}})
                for p in pieces(json.dumps(block["input"], ensure_ascii=False)):
                    delta = {"type": "input_json_delta", "partial_json": p}
                    ev("content_block_delta", index=i, delta=delta)
            ev("content_block_stop", index=i)
        body_events = len(out)
        ev(
            "message_delta",
            delta={"stop_reason": "tool_use" if ans.calls else "end_turn", "stop_sequence": None},
            usage={"output_tokens": ans.output_tokens},
        )
        ev("message_stop")
        return out, body_events

    def stream_error(self, sequence: int) -> bytes:
        return sse(error_body(529), "error")

    def garbage_event(self) -> bytes:
        return b"event: message_start\ndata: <html><body>upstream hiccup</body>\n\n"

    def error_body(self, status: int, message: str | None = None) -> dict[str, Any]:
        return error_body(status, message)

    def refuse_model(
        self, model: str, forbidden: bool, request_id: str
    ) -> tuple[int, dict[str, Any]]:
        return refuse_model(model, forbidden, request_id)
