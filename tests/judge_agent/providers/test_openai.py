"""``openai/<model>`` through the real ``openai`` SDK against a loopback Chat Completions server."""

from __future__ import annotations

import time

import pytest

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelError,
    ToolCall,
    ToolInfo,
)
from judge_agent.providers.openai import OpenAIModel, parse_arguments
from judge_agent.providers.registry import get_model
from tests.judge_agent.providers.wire import Reply, WireServer, openai_completion, openai_error

PATH = "/v1/chat/completions"
PNG = "iVBORw0KGgo="
FAST = GenerateConfig(retry_base_seconds=0.001, max_retries=2, timeout_seconds=5)

READ_FILE = ToolInfo(
    name="read_file",
    description="Read a file of the sandbox.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)
SCREENSHOT = ToolInfo(
    name="screenshot", description="Capture the screen.", input_schema={"type": "object"}
)


def model_for(wire: WireServer, **options: object) -> OpenAIModel:
    return OpenAIModel("gpt-test", base_url=f"{wire.url}/v1", **options)  # type: ignore[arg-type]


async def test_a_text_answer_with_its_usage_stop_reason_and_request(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            openai_completion(
                "PASS",
                model="gpt-test-2025",
                usage={
                    "prompt_tokens": 120,
                    "completion_tokens": 40,
                    "total_tokens": 160,
                    "completion_tokens_details": {"reasoning_tokens": 25},
                    "prompt_tokens_details": {"cached_tokens": 100},
                },
            )
        ),
    )
    model = model_for(wire)
    try:
        output = await model.generate(
            [ChatMessageSystem(content="Be a judge."), ChatMessageUser(content="Verdict?")],
            [],
            GenerateConfig(max_tokens=256, temperature=0.2),
        )
    finally:
        await model.aclose()
    assert output.message.content == "PASS"
    assert output.message.tool_calls == []
    assert output.stop_reason == "stop"
    assert output.model == "gpt-test-2025"
    assert output.retries == 0
    assert output.usage.input_tokens == 120
    assert output.usage.output_tokens == 40
    assert output.usage.reasoning_tokens == 25
    assert output.usage.cache_read_tokens == 100
    [body] = wire.bodies(PATH)
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "Be a judge."},
        {"role": "user", "content": "Verdict?"},
    ]
    # A custom server gets the field every compatible server knows.
    assert body["max_tokens"] == 256
    assert "max_completion_tokens" not in body
    assert body["temperature"] == 0.2
    assert "tools" not in body
    assert "tool_choice" not in body
    assert "reasoning_effort" not in body


async def test_openai_base_url_alone_reaches_a_keyless_server(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    wire.script(PATH, Reply(openai_completion("hi")))
    model = get_model("openai/local-model")
    try:
        assert model.name == "openai/local-model"
        output = await model.generate([ChatMessageUser(content="hello")], [], FAST)
    finally:
        await model.aclose()
    assert output.message.content == "hi"
    [request] = wire.requests
    assert request.headers["authorization"] == "Bearer not-needed"
    assert request.body["model"] == "local-model"


async def test_a_configured_key_is_sent(wire: WireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    wire.script(PATH, Reply(openai_completion("hi")))
    model = model_for(wire)
    try:
        await model.generate([ChatMessageUser(content="hello")], [], FAST)
    finally:
        await model.aclose()
    assert wire.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_no_key_and_no_server_is_refused_up_front() -> None:
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-test")


async def test_reasoning_effort_and_max_completion_tokens_for_reasoning_models(
    wire: WireServer,
) -> None:
    wire.script(
        PATH,
        Reply(openai_completion("x", extra_message={"reasoning_content": "thought about it"})),
    )
    model = model_for(wire, max_tokens_field="max_completion_tokens", seed=7)
    try:
        output = await model.generate(
            [ChatMessageUser(content="q")],
            [],
            GenerateConfig(max_tokens=1000, reasoning_effort="high"),
        )
    finally:
        await model.aclose()
    [body] = wire.bodies(PATH)
    assert body["reasoning_effort"] == "high"
    assert body["max_completion_tokens"] == 1000
    assert "max_tokens" not in body
    assert body["seed"] == 7  # constructor options travel as extra request fields
    assert output.message.reasoning == "thought about it"


def test_official_endpoint_defaults_to_max_completion_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAIModel("o4-mini").max_tokens_field == "max_completion_tokens"


async def test_tool_calls_round_trip_with_images_in_tool_results(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            openai_completion(
                None,
                tool_calls=[
                    ("call_a", "read_file", '{"path": "/etc/hosts"}'),
                    ("call_b", "screenshot", "{}"),
                    ("call_c", "read_file", '{"path": '),
                ],
                finish_reason="tool_calls",
            )
        ),
        Reply(openai_completion("RESULT: PASS")),
    )
    model = model_for(wire)
    conversation: list[ChatMessage] = [
        ChatMessageSystem(content="Judge."),
        ChatMessageUser(
            content=[
                ContentText(text="The task, with a screenshot:"),
                ContentImage(data=PNG, mime_type="image/png"),
            ]
        ),
    ]
    config = GenerateConfig(tool_choice="required", retry_base_seconds=0.001)
    try:
        first = await model.generate(conversation, [READ_FILE, SCREENSHOT], config)
        assert first.stop_reason == "tool_calls"
        assert first.message.content == ""
        good, shot, broken = first.message.tool_calls
        assert good == ToolCall(id="call_a", name="read_file", arguments={"path": "/etc/hosts"})
        assert shot.arguments == {}
        assert shot.parse_error is None
        assert broken.id == "call_c"
        assert broken.arguments == {}
        assert broken.parse_error is not None
        assert "not valid JSON" in broken.parse_error

        conversation += [
            first.message,
            ChatMessageTool(tool_call_id="call_a", name="read_file", content="127.0.0.1 localhost"),
            ChatMessageTool(
                tool_call_id="call_b",
                name="screenshot",
                content=[
                    ContentText(text="the screen"),
                    ContentImage(data="R0lGOD", mime_type="image/gif"),
                ],
            ),
            ChatMessageTool(
                tool_call_id="call_c", name="read_file", content="bad arguments", is_error=True
            ),
        ]
        second = await model.generate(conversation, [READ_FILE, SCREENSHOT], config)
    finally:
        await model.aclose()
    assert second.message.content == "RESULT: PASS"

    first_body, second_body = wire.bodies(PATH)
    assert first_body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file of the sandbox.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "screenshot",
                "description": "Capture the screen.",
                "parameters": {"type": "object"},
            },
        },
    ]
    assert first_body["tool_choice"] == "required"
    assert first_body["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The task, with a screenshot:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        ],
    }

    messages = second_body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "user",
    ]
    assistant = messages[2]
    assert assistant["content"] == ""  # null is refused by some compatible servers (llama.cpp)
    assert [
        (c["id"], c["type"], c["function"]["name"], c["function"]["arguments"])
        for c in assistant["tool_calls"]
    ] == [
        ("call_a", "function", "read_file", '{"path": "/etc/hosts"}'),
        ("call_b", "function", "screenshot", "{}"),
        # The unparseable arguments go back exactly as the model wrote them.
        ("call_c", "function", "read_file", '{"path": '),
    ]
    tool_a, tool_b, tool_c = messages[3:6]
    assert tool_a == {"role": "tool", "tool_call_id": "call_a", "content": "127.0.0.1 localhost"}
    assert tool_b["tool_call_id"] == "call_b"
    assert tool_b["content"].startswith("the screen\n")
    assert "next user message" in tool_b["content"]
    assert tool_c == {"role": "tool", "tool_call_id": "call_c", "content": "Error: bad arguments"}
    images = messages[6]["content"]
    assert images[0]["type"] == "text"
    assert "call_b" in images[0]["text"]
    assert images[1] == {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGOD"}}


@pytest.mark.parametrize(
    ("raw", "arguments", "error"),
    [
        ('{"a": 1, "b": [true, null]}', {"a": 1, "b": [True, None]}, None),
        ("", {}, None),
        ("[1, 2]", {}, "not an object"),
        ("{'a': 1}", {}, "not valid JSON"),
        ("null", {}, "not an object"),
    ],
)
def test_argument_parsing_never_raises(raw: str, arguments: object, error: str | None) -> None:
    parsed, why = parse_arguments(raw)
    assert parsed == arguments
    if error is None:
        assert why is None
    else:
        assert why is not None
        assert error in why


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("length", "max_tokens"),
        ("content_filter", "content_filter"),
        ("tool_calls", "tool_calls"),
        ("eos", "unknown"),
    ],
)
async def test_finish_reasons_are_mapped(
    wire: WireServer, finish_reason: str, stop_reason: str
) -> None:
    wire.script(PATH, Reply(openai_completion("partial", finish_reason=finish_reason)))
    model = model_for(wire)
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert output.stop_reason == stop_reason


async def test_a_rate_limit_is_waited_out_then_retried(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            openai_error("Rate limit reached", "rate_limit_exceeded"),
            status=429,
            headers={"retry-after-ms": "300"},
        ),
        Reply(openai_completion("after the wait")),
    )
    model = model_for(wire)
    started = time.monotonic()
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    elapsed = time.monotonic() - started
    assert output.message.content == "after the wait"
    assert output.retries == 1
    assert len(wire.requests) == 2
    # The backoff base is 1 ms, so only the server's Retry-After explains the wait.
    assert elapsed >= 0.3


async def test_server_errors_exhaust_the_retries(wire: WireServer) -> None:
    wire.script(PATH, *[Reply(openai_error("upstream exploded"), status=500) for _ in range(3)])
    model = model_for(wire)
    try:
        with pytest.raises(ModelError) as raised:
            await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert len(wire.requests) == FAST.max_retries + 1
    error = raised.value
    assert error.status == 500
    assert error.retryable is True
    assert "openai/gpt-test" in str(error)
    assert "upstream exploded" in str(error)
    assert "gave up after 3 attempts" in str(error)


async def test_a_hung_response_times_out_and_the_retry_succeeds(wire: WireServer) -> None:
    wire.script(
        PATH, Reply(openai_completion("too late"), delay=5.0), Reply(openai_completion("on time"))
    )
    model = model_for(wire)
    config = GenerateConfig(timeout_seconds=0.3, retry_base_seconds=0.001)
    started = time.monotonic()
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], config)
    finally:
        await model.aclose()
    assert output.message.content == "on time"
    assert output.retries == 1
    assert len(wire.requests) == 2
    assert time.monotonic() - started < 3.0


async def test_a_dropped_connection_is_retried(wire: WireServer) -> None:
    wire.script(PATH, Reply(drop=True), Reply(openai_completion("reconnected")))
    model = model_for(wire)
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert output.message.content == "reconnected"
    assert output.retries == 1


async def test_a_bad_request_is_not_retried(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(openai_error("Invalid schema for function", "invalid_request_error"), status=400),
        Reply(openai_completion("must not be reached")),
    )
    model = model_for(wire)
    try:
        with pytest.raises(ModelError) as raised:
            await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert len(wire.requests) == 1
    assert raised.value.status == 400
    assert raised.value.retryable is False
    assert "Invalid schema for function" in str(raised.value)


async def test_an_answer_without_choices_is_a_model_error(wire: WireServer) -> None:
    body = openai_completion("x")
    body["choices"] = []
    body["error"] = {"message": "upstream provider unavailable"}
    wire.script(PATH, Reply(body))
    model = model_for(wire)
    try:
        with pytest.raises(ModelError, match=r"no choices.*upstream provider unavailable"):
            await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()


def test_an_assistant_message_without_text_or_calls_is_sent_as_empty_text() -> None:
    from judge_agent.providers.openai import to_wire_messages

    assert to_wire_messages([ChatMessageAssistant()]) == [{"role": "assistant", "content": ""}]
