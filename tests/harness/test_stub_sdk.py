"""The stub model against the real OpenAI and Anthropic SDKs, over loopback HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from replay.gateway.modelcalls import ModelCallObserver
from replay.harness.stub import Fault, FaultKind, Script, StubConfig, StubModel, make_stub_app
from tests.harness.server import serving

GOLD = Script.model_validate(
    {
        "name": "gold",
        "steps": [
            {"say": "Reading the failing test.", "bash": "pytest -x tests/test_dates.py"},
            {"bash": "sed -i 's/<=/</' src/dates.py"},
            {"tools": [{"name": "bash", "arguments": {"command": "git diff --stat"}}]},
            {"say": "Fixed the off-by-one in dates.py."},
        ],
    }
)
COMMANDS = ["pytest -x tests/test_dates.py", "sed -i 's/<=/</' src/dates.py", "git diff --stat"]
ASKS = Script.model_validate(
    {
        "name": "asks",
        "steps": [
            {"bash": "post 'Which timezone?'"},
            {"wait_for": "use UTC", "poll": {"bash": "read-thread"}, "bash": "apply UTC"},
            {"say": "Done."},
        ],
    }
)
SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}
OA_TOOLS: Any = [{"type": "function", "function": {"name": "bash", "parameters": SCHEMA}}]
RESP_TOOLS: Any = [{"type": "function", "name": "bash", "parameters": SCHEMA}]
AN_TOOLS: Any = [{"name": "bash", "description": "Run a command", "input_schema": SCHEMA}]


@pytest.fixture(scope="module")
def gold_url() -> Iterator[str]:
    with serving(make_stub_app(StubConfig(script=GOLD))) as url:
        yield url


def _oa(url: str, **kw: Any) -> openai.OpenAI:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="placeholder", **{"max_retries": 0, **kw})
    _clients.append(client)
    return client


def _an(url: str, **kw: Any) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=url, api_key="placeholder", **{"max_retries": 0, **kw})
    _clients.append(client)
    return client


_clients: list[openai.OpenAI | anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close every SDK client a test made (an open pooled socket is a ResourceWarning)."""
    yield
    while _clients:
        _clients.pop().close()


Tool = Callable[[str], str]


def _ran(cmd: str) -> str:
    return f"ran {cmd}: ok"


# --------------------------------------------------------------- agent loops, one per API


def chat_loop(
    client: openai.OpenAI, stream: bool, tool: Tool = _ran
) -> tuple[list[str], str, list[Any]]:
    messages: list[Any] = [{"role": "user", "content": "Fix the date bug."}]
    commands: list[str] = []
    usages: list[Any] = []
    for _ in range(10):
        if stream:
            text, calls, usage = "", {}, None
            for chunk in client.chat.completions.create(
                model="gpt-test",
                messages=messages,
                tools=OA_TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            ):
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                        slot["id"] = tc.id or slot["id"]
                        if tc.function:
                            slot["name"] += tc.function.name or ""
                            slot["args"] += tc.function.arguments or ""
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["args"]},
                }
                for c in calls.values()
            ]
        else:
            done = client.chat.completions.create(
                model="gpt-test", messages=messages, tools=OA_TOOLS
            )
            message = done.choices[0].message
            text, usage = message.content or "", done.usage
            tool_calls = [tc.model_dump() for tc in message.tool_calls or []]
        usages.append(usage)
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                **({"tool_calls": tool_calls} if tool_calls else {}),
            }
        )
        if not tool_calls:
            return commands, text, usages
        for tc in tool_calls:
            cmd = json.loads(tc["function"]["arguments"])["command"]
            commands.append(cmd)
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": tool(cmd)})
    raise AssertionError("the script did not end")


def messages_loop(
    client: anthropic.Anthropic, stream: bool, tool: Tool = _ran
) -> tuple[list[str], str, list[Any]]:
    messages: list[Any] = [{"role": "user", "content": "Fix the date bug."}]
    commands: list[str] = []
    usages: list[Any] = []
    for _ in range(10):
        kw: Any = {
            "model": "claude-test",
            "max_tokens": 1024,
            "messages": messages,
            "tools": AN_TOOLS,
        }
        if stream:
            with client.messages.stream(**kw) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(**kw)
        usages.append(msg.usage)
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]}
        )
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            assert msg.stop_reason == "end_turn"
            return commands, "".join(b.text for b in msg.content if b.type == "text"), usages
        assert msg.stop_reason == "tool_use"
        results = []
        for use in uses:
            cmd = use.input["command"]  # type: ignore[index]
            commands.append(cmd)
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": tool(cmd)})
        messages.append({"role": "user", "content": results})
    raise AssertionError("the script did not end")


def responses_loop(
    client: openai.OpenAI, stream: bool, chain: bool = False
) -> tuple[list[str], str, list[Any]]:
    items: list[Any] = [{"role": "user", "content": "Fix the date bug."}]
    commands: list[str] = []
    usages: list[Any] = []
    previous: str | None = None
    for _ in range(10):
        kw: Any = {"model": "gpt-test", "input": items, "tools": RESP_TOOLS}
        if previous:
            kw["previous_response_id"] = previous
        if stream:
            with client.responses.stream(**kw) as s:
                resp = s.get_final_response()
        else:
            resp = client.responses.create(**kw)
        usages.append(resp.usage)
        calls = [o for o in resp.output if o.type == "function_call"]
        if chain:
            previous, items = resp.id, []
        else:
            items.extend(o.model_dump(exclude_none=True) for o in resp.output)
        if not calls:
            return commands, resp.output_text, usages
        for call in calls:
            cmd = json.loads(call.arguments)["command"]
            commands.append(cmd)
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": _ran(cmd)}
            )
    raise AssertionError("the script did not end")


# --------------------------------------------------------------- the scripted turns


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_openai_chat_plays_the_script_with_tool_calls_and_usage(
    gold_url: str, stream: bool
) -> None:
    commands, final, usages = chat_loop(_oa(gold_url), stream)
    assert commands == COMMANDS
    assert final == "Fixed the off-by-one in dates.py."
    assert len(usages) == 4
    prompts = [u.prompt_tokens for u in usages]
    assert prompts == sorted(prompts) and prompts[0] > 0  # the history grows
    assert all(
        u.completion_tokens > 0 and u.total_tokens == u.prompt_tokens + u.completion_tokens
        for u in usages
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_messages_plays_the_script_with_tool_use_and_usage(
    gold_url: str, stream: bool
) -> None:
    commands, final, usages = messages_loop(_an(gold_url), stream)
    assert commands == COMMANDS
    assert final == "Fixed the off-by-one in dates.py."
    inputs = [u.input_tokens for u in usages]
    assert inputs == sorted(inputs) and inputs[0] > 0
    assert all(u.output_tokens > 0 and u.cache_read_input_tokens == 0 for u in usages)


@pytest.mark.parametrize(
    ("stream", "chain"),
    [(False, False), (True, False), (False, True)],
    ids=["json", "sse", "chained"],
)
def test_openai_responses_plays_the_script(gold_url: str, stream: bool, chain: bool) -> None:
    commands, final, usages = responses_loop(_oa(gold_url), stream, chain)
    assert commands == COMMANDS
    assert final == "Fixed the off-by-one in dates.py."
    assert all(u is not None and u.output_tokens > 0 for u in usages)


def test_same_answer_and_usage_for_a_resent_request(gold_url: str) -> None:
    client = _oa(gold_url)
    messages: Any = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "a"},
        {"role": "tool", "tool_call_id": "c", "content": "o"},
    ]
    first = client.chat.completions.create(model="m", messages=messages, tools=OA_TOOLS)
    again = client.chat.completions.create(model="m", messages=messages, tools=OA_TOOLS)
    assert first.model_dump() == again.model_dump()
    assert first.choices[0].message.tool_calls[0].function.arguments == json.dumps(
        {"command": COMMANDS[1]}
    )  # type: ignore[index, union-attr]


def test_parallel_conversations_do_not_interfere(gold_url: str) -> None:
    results: dict[int, list[str]] = {}

    def run(i: int) -> None:
        results[i] = (
            chat_loop(_oa(gold_url), stream=bool(i % 2))[0]
            if i < 2
            else messages_loop(_an(gold_url), stream=bool(i % 2))[0]
        )

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {i: COMMANDS for i in range(4)}


def test_without_tools_a_bash_step_is_written_as_a_code_block(gold_url: str) -> None:
    done = _oa(gold_url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "go"}]
    )
    assert (
        done.choices[0].message.content
        == f"Reading the failing test.\n\n```bash\n{COMMANDS[0]}\n```"
    )
    assert done.choices[0].message.tool_calls is None
    assert done.choices[0].finish_reason == "stop"


def test_the_asks_script_polls_until_the_answer_arrives() -> None:
    replies = iter(["no replies", "no replies", "alice: use UTC"])

    def tool(cmd: str) -> str:
        return next(replies) if cmd == "read-thread" else f"ran {cmd}"

    with serving(make_stub_app(StubConfig(script=ASKS))) as url:
        commands, final, _ = messages_loop(_an(url), stream=True, tool=tool)
    assert commands == [
        "post 'Which timezone?'",
        "read-thread",
        "read-thread",
        "read-thread",
        "apply UTC",
    ]
    assert final == "Done."


def test_models_and_errors_in_each_providers_shape(gold_url: str) -> None:
    assert [m.id for m in _oa(gold_url).models.list()] == ["replay-stub"]
    assert [m.id for m in _an(gold_url).models.list()] == ["replay-stub"]
    with pytest.raises(openai.BadRequestError) as oa_err:
        _oa(gold_url).chat.completions.create(model="m", messages=[])
    assert oa_err.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(anthropic.NotFoundError) as an_err:
        _an(gold_url).post("/v1/nowhere", cast_to=object, body={})
    assert an_err.value.body == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "Invalid URL (POST /v1/nowhere)"},
    }


def test_a_model_the_account_may_not_use_is_refused_as_each_provider_refuses_it() -> None:
    """403 for a model the account may not use (the default list), 404 for one that does not
    exist, each in its provider's shape; the real SDKs raise what they raise for the real
    API's, and the gateway's observer classes the 403 a refusal of the account."""
    config = StubConfig(script=GOLD, unknown_models=["gpt-9"])
    assert config.forbidden_models == ["o1-pro", "claude-opus-4-1"]
    stub = make_stub_app(config)
    with serving(stub) as url:
        with pytest.raises(openai.PermissionDeniedError) as oa_403:
            _oa(url).chat.completions.create(model="o1-pro", messages=MSGS)
        with pytest.raises(openai.NotFoundError) as oa_404:
            _oa(url).responses.create(model="gpt-9", input="hi")
        with pytest.raises(anthropic.PermissionDeniedError) as an_403:
            _an(url).messages.create(model="claude-opus-4-1", max_tokens=9, messages=MSGS)
        with pytest.raises(anthropic.NotFoundError) as an_404:
            _an(url).messages.create(model="gpt-9", max_tokens=9, messages=MSGS, stream=True)
        # Any other model is served.
        assert _oa(url).chat.completions.create(model="gpt-4.1", messages=MSGS).choices
    assert oa_403.value.code == "model_not_found"
    assert oa_403.value.body == {
        "message": "Project `proj_replaystub` does not have access to model `o1-pro`",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }
    assert oa_404.value.code == "model_not_found"
    assert oa_404.value.message.endswith(
        "The model `gpt-9` does not exist or you do not have access to it."
    )
    assert an_403.value.body == {
        "type": "error",
        "error": {
            "type": "permission_error",
            "message": "Your API key does not have permission to use the specified resource.",
        },
        "request_id": an_403.value.request_id,
    }
    assert an_403.value.request_id and an_403.value.request_id.startswith("req_stub")
    assert an_404.value.body["error"] == {  # type: ignore[index]
        "type": "not_found_error",
        "message": "model: gpt-9",
    }
    assert [s.cursor_after for s in stub.served] == [None, None, None, None, 1]
    refusal = ModelCallObserver()
    refusal.begin("POST", "https://api.openai.com/v1/chat/completions", {}, b"{}", 0.0)
    refusal.headers(403, {"content-type": "application/json"}, 0.1)
    body = json.dumps({"error": oa_403.value.body}).encode()
    assert refusal.end(0.2, body).error_class == "auth"


# --------------------------------------------------------------- faults

MSGS: Any = [{"role": "user", "content": "go"}]


def _chat(url: str, **kw: Any) -> Any:
    return _oa(url, **kw).chat.completions.create(model="m", messages=MSGS, tools=OA_TOOLS)


def _chat_stream(url: str, **kw: Any) -> Any:
    stream = _oa(url, **kw).chat.completions.create(
        model="m",
        messages=MSGS,
        tools=OA_TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    return list(stream)


def _msg(url: str, **kw: Any) -> Any:
    return _an(url, **kw).messages.create(model="c", max_tokens=64, messages=MSGS, tools=AN_TOOLS)


def _msg_stream(url: str, **kw: Any) -> Any:
    with _an(url, **kw).messages.stream(
        model="c", max_tokens=64, messages=MSGS, tools=AN_TOOLS
    ) as s:
        return s.get_final_message()


PATHS = {
    "chat": "/v1/chat/completions",
    "chat-sse": "/v1/chat/completions",
    "messages": "/v1/messages",
    "messages-sse": "/v1/messages",
}

# How long a client waits before it gives up on a held call: long enough that a clean call on
# a loaded two-core machine never hits it.
GIVE_UP = 1.5

CALLS = {"chat": _chat, "chat-sse": _chat_stream, "messages": _msg, "messages-sse": _msg_stream}

# What the SDK raises (or returns) for each fault, with retries off.
EXPECTED: dict[FaultKind, dict[str, Any]] = {
    "timeout": dict.fromkeys(["chat", "chat-sse"], openai.APITimeoutError)
    | dict.fromkeys(["messages", "messages-sse"], anthropic.APITimeoutError),
    "reset": {
        "chat": openai.APIConnectionError,
        "chat-sse": openai.APIConnectionError,
        "messages": anthropic.APIConnectionError,
        # A stream cut after its headers: httpx's ReadError as the SDK met it before 2.x,
        # which wraps it in its own APIConnectionError (2.17 does).
        "messages-sse": (httpx2.ReadError, anthropic.APIConnectionError),
    },
    "http_500": {
        "chat": (openai.InternalServerError, 500),
        "chat-sse": (openai.InternalServerError, 500),
        "messages": (anthropic.InternalServerError, 500),
        "messages-sse": (anthropic.InternalServerError, 500),
    },
    "http_502": {
        "chat": (openai.InternalServerError, 502),
        "chat-sse": (openai.InternalServerError, 502),
        "messages": (anthropic.InternalServerError, 502),
        "messages-sse": (anthropic.InternalServerError, 502),
    },
    "http_503": {
        "chat": (openai.InternalServerError, 503),
        "chat-sse": (openai.InternalServerError, 503),
        "messages": (anthropic.ServiceUnavailableError, 503),
        "messages-sse": (anthropic.ServiceUnavailableError, 503),
    },
    "http_529": {
        "chat": (openai.InternalServerError, 529),
        "chat-sse": (openai.InternalServerError, 529),
        "messages": (anthropic.OverloadedError, 529),
        "messages-sse": (anthropic.OverloadedError, 529),
    },
    "http_429": {
        "chat": (openai.RateLimitError, 429),
        "chat-sse": (openai.RateLimitError, 429),
        "messages": (anthropic.RateLimitError, 429),
        "messages-sse": (anthropic.RateLimitError, 429),
    },
    "http_401": {
        "chat": (openai.AuthenticationError, 401),
        "chat-sse": (openai.AuthenticationError, 401),
        "messages": (anthropic.AuthenticationError, 401),
        "messages-sse": (anthropic.AuthenticationError, 401),
    },
    "http_403": {
        "chat": (openai.PermissionDeniedError, 403),
        "chat-sse": (openai.PermissionDeniedError, 403),
        "messages": (anthropic.PermissionDeniedError, 403),
        "messages-sse": (anthropic.PermissionDeniedError, 403),
    },
    "truncate": {
        "chat": openai.APIConnectionError,
        "chat-sse": "partial",
        "messages": anthropic.APIConnectionError,
        "messages-sse": "partial",
    },
    "bad_json": dict.fromkeys(CALLS, json.JSONDecodeError),
    "stream_error": {
        "chat": (openai.InternalServerError, 500),
        "chat-sse": openai.APIError,
        "messages": (anthropic.OverloadedError, 529),
        "messages-sse": anthropic.APIStatusError,
    },
}


@pytest.fixture(scope="module")
def fault_servers() -> Iterator[dict[FaultKind, tuple[str, StubModel]]]:
    """One stub per fault kind, striking every call."""
    servers: dict[FaultKind, tuple[str, StubModel]] = {}
    contexts = []
    for kind in EXPECTED:
        app = make_stub_app(
            StubConfig(
                script=GOLD, faults=[Fault(kind=kind, every=1)], hold_seconds=10, retry_after=0.01
            )
        )
        ctx = serving(app)
        servers[kind] = (ctx.__enter__(), app)
        contexts.append(ctx)
    yield servers
    for ctx in contexts:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_each_fault_reaches_the_sdk_as_expected(
    fault_servers: dict[FaultKind, tuple[str, StubModel]], kind: FaultKind, call: str
) -> None:
    url, app = fault_servers[kind]
    expected = EXPECTED[kind][call]
    before = len(app.served)
    if expected == "partial":
        result = CALLS[call](url, timeout=2.0)
        if call == "chat-sse":
            assert result and all(c.usage is None for c in result)
            assert not any(ch.finish_reason for c in result for ch in c.choices)
        else:
            assert result.stop_reason is None
    else:
        with_status = isinstance(expected, tuple) and isinstance(expected[1], int)
        exc_type, status = expected if with_status else (expected, None)
        with pytest.raises(exc_type) as err:
            CALLS[call](url, timeout=GIVE_UP if kind == "timeout" else 10.0)
        if status is not None:
            assert err.value.status_code == status
        if kind == "http_429":
            assert err.value.response.headers["retry-after"] == "0.01"
        if kind in ("http_401", "http_403"):
            # The provider's own words for a refused key or account, in its own shape.
            error = err.value.body if call.startswith("chat") else err.value.body["error"]
            assert error["type"] in {
                "invalid_request_error",
                "request_forbidden",
                "authentication_error",
                "permission_error",
            }
            if call.startswith("chat"):
                assert error["code"] in {"invalid_api_key", "unsupported_country_region_territory"}
    assert [s.fault for s in app.served[before:]] == [kind]
    with httpx2.Client() as control:
        log = control.get(f"{url}/_replay/stub/calls").json()
    assert log[before:] == [
        {
            "number": before + 1,
            "path": PATHS[call],
            "fault": kind,
            "stream": call.endswith("-sse"),
            "cursor_after": 1,
        }
    ]


# Faults the SDKs retry: with retries on, a fault on every other call is recovered.
RETRIED: list[FaultKind] = [
    "timeout",
    "reset",
    "http_500",
    "http_502",
    "http_503",
    "http_529",
    "http_429",
]


RETRY_CASES = [
    *[(kind, "chat") for kind in RETRIED],
    *[(kind, "messages-sse") for kind in RETRIED],
    ("reset", "messages"),
    ("reset", "chat-sse"),
]


@pytest.mark.parametrize(("kind", "call"), RETRY_CASES)
def test_with_retries_an_intermittent_fault_is_recovered(kind: FaultKind, call: str) -> None:
    config = StubConfig(
        script=GOLD, faults=[Fault(kind=kind, every=2)], hold_seconds=10, retry_after=0.01
    )
    app = make_stub_app(config)
    timeout = GIVE_UP if kind == "timeout" else 10.0
    with serving(app) as url:
        first = CALLS[call](url, timeout=timeout, max_retries=2)  # call 1: clean
        if kind == "reset" and call.endswith("-sse"):
            # The stream was cut after its headers: the SDKs do not retry that.
            cut = (openai.APIConnectionError, httpx2.ReadError, anthropic.APIConnectionError)
            with pytest.raises(cut):
                CALLS[call](url, timeout=timeout, max_retries=2)
            assert [s.fault for s in app.served] == [None, kind]
            return
        second = CALLS[call](url, timeout=timeout, max_retries=2)  # call 2 faulted, 3 clean
    assert [s.fault for s in app.served] == [None, kind, None]
    assert app.served[1].cursor_after == app.served[2].cursor_after == 1
    if call == "chat":
        assert first == second


def test_anthropic_count_tokens_counts_what_a_message_would_and_plays_no_turn() -> None:
    stub = make_stub_app(StubConfig(script=GOLD))
    with serving(stub) as url:
        client = _an(url)
        messages: Any = [{"role": "user", "content": "Fix the failing test."}]
        counted = client.messages.count_tokens(
            model="m", system="Be brief.", messages=messages, tools=AN_TOOLS
        )
        answered = client.messages.create(
            model="m", system="Be brief.", messages=messages, tools=AN_TOOLS, max_tokens=64
        )
        with pytest.raises(anthropic.BadRequestError, match="messages"):
            client.messages.count_tokens(model="m", messages=[])
    assert counted.input_tokens == answered.usage.input_tokens > 0
    # Only the message was a model turn: counting played nothing of the script.
    assert [s.path for s in stub.served] == ["/v1/messages"]
    assert answered.content[-1].type == "tool_use"
