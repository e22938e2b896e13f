"""``anthropic/<model>`` through the real ``anthropic`` SDK against a loopback Messages server."""

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
from judge_agent.providers.anthropic import AnthropicModel, to_wire_messages
from judge_agent.providers.registry import get_model
from tests.judge_agent.providers.wire import (
    Reply,
    WireServer,
    anthropic_error,
    anthropic_message,
)

PATH = "/v1/messages"
PNG = "iVBORw0KGgo="
FAST = GenerateConfig(retry_base_seconds=0.001, max_retries=2, timeout_seconds=5)

RUN_SQL = ToolInfo(
    name="run_sql",
    description="Run a read-only SQL query.",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
)


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def sent_key(headers: dict[str, str]) -> str | None:
    """The API key a request carried (``x-api-key``, or a bearer token in recent SDKs)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token if scheme == "Bearer" else None


def model_for(wire: WireServer) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=wire.url)


async def test_a_text_answer_with_system_prompt_usage_and_defaults(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            anthropic_message(
                text("RESULT:"),
                text("PASS"),
                model="claude-test-20250101",
                usage={
                    "input_tokens": 50,
                    "output_tokens": 12,
                    "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 200,
                },
            )
        ),
    )
    model = model_for(wire)
    try:
        output = await model.generate(
            [
                ChatMessageSystem(content="You are a judge."),
                ChatMessageSystem(content="Be strict."),
                ChatMessageUser(content="Verdict?"),
            ],
            [],
            GenerateConfig(temperature=0.0),
        )
    finally:
        await model.aclose()
    assert output.message.content == "RESULT:\nPASS"
    assert output.stop_reason == "stop"
    assert output.model == "claude-test-20250101"
    assert output.usage.input_tokens == 1250
    assert output.usage.output_tokens == 12
    assert output.usage.cache_read_tokens == 1000
    assert output.message.reasoning is None
    assert output.message.provider_data is None
    [body] = wire.bodies(PATH)
    assert body["model"] == "claude-test"
    assert body["system"] == "You are a judge.\n\nBe strict."
    assert body["messages"] == [{"role": "user", "content": [text("Verdict?")]}]
    assert body["max_tokens"] == 4096
    assert body["temperature"] == 0.0
    assert "thinking" not in body
    assert "tools" not in body


def test_anthropic_without_a_key_or_server_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK accepts a missing key and fails at the first request; the provider says so when
    it is built, so a judge grid stops before it starts."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelError, match="no API key; set ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-x")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token")
    assert get_model("anthropic/claude-x").name == "anthropic/claude-x"


async def test_anthropic_base_url_alone_reaches_the_server(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.url)
    wire.script(PATH, Reply(anthropic_message(text("hi"))))
    model = get_model("anthropic/claude-local")
    try:
        assert model.name == "anthropic/claude-local"
        output = await model.generate([ChatMessageUser(content="hello")], [], FAST)
    finally:
        await model.aclose()
    assert output.message.content == "hi"
    [request] = wire.requests
    assert sent_key(request.headers) == "not-needed"
    assert "anthropic-version" in request.headers


async def test_a_configured_key_is_sent(wire: WireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    wire.script(PATH, Reply(anthropic_message(text("hi"))))
    model = model_for(wire)
    try:
        await model.generate([ChatMessageUser(content="hello")], [], FAST)
    finally:
        await model.aclose()
    assert sent_key(wire.requests[0].headers) == "sk-ant-test"


async def test_tool_use_round_trip_merges_results_and_carries_images(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            anthropic_message(
                text("Let me look."),
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "run_sql",
                    "input": {"query": "select 1"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "run_sql", "input": {}},
                stop_reason="tool_use",
            )
        ),
        Reply(anthropic_message(text("RESULT: FAIL"))),
    )
    model = model_for(wire)
    conversation: list[ChatMessage] = [
        ChatMessageSystem(content="Judge."),
        ChatMessageUser(
            content=[ContentText(text="Task:"), ContentImage(data=PNG, mime_type="image/png")]
        ),
    ]
    config = GenerateConfig(tool_choice="required", retry_base_seconds=0.001)
    try:
        first = await model.generate(conversation, [RUN_SQL], config)
        assert first.stop_reason == "tool_calls"
        assert first.message.content == "Let me look."
        assert first.message.tool_calls == [
            ToolCall(id="toolu_1", name="run_sql", arguments={"query": "select 1"}),
            ToolCall(id="toolu_2", name="run_sql", arguments={}),
        ]
        conversation += [
            first.message,
            ChatMessageTool(tool_call_id="toolu_1", name="run_sql", content="1"),
            ChatMessageTool(
                tool_call_id="toolu_2",
                name="run_sql",
                content=[
                    ContentText(text="chart"),
                    ContentImage(data="/9j/4AAQ", mime_type="image/jpeg"),
                ],
                is_error=True,
            ),
            ChatMessageUser(content="You have 1 turn left."),
        ]
        second = await model.generate(conversation, [RUN_SQL], config)
    finally:
        await model.aclose()
    assert second.message.content == "RESULT: FAIL"

    first_body, second_body = wire.bodies(PATH)
    assert first_body["tools"] == [
        {
            "name": "run_sql",
            "description": "Run a read-only SQL query.",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
        }
    ]
    assert first_body["tool_choice"] == {"type": "any"}
    assert first_body["system"] == "Judge."
    assert first_body["messages"] == [
        {
            "role": "user",
            "content": [
                text("Task:"),
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
            ],
        }
    ]

    messages = second_body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        text("Let me look."),
        {"type": "tool_use", "id": "toolu_1", "name": "run_sql", "input": {"query": "select 1"}},
        {"type": "tool_use", "id": "toolu_2", "name": "run_sql", "input": {}},
    ]
    # Both results and the harness's note travel in one user message, results first.
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [
                text("chart"),
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
                },
            ],
            "is_error": True,
        },
        text("You have 1 turn left."),
    ]


@pytest.mark.parametrize(
    ("choice", "wire_choice"),
    [("auto", {"type": "auto"}), ("none", {"type": "none"}), ("required", {"type": "any"})],
)
def test_tool_choice_mapping(choice: str, wire_choice: dict[str, str]) -> None:
    model = AnthropicModel("claude-test", api_key="k")
    config = GenerateConfig.model_validate({"tool_choice": choice})
    request = model._request([ChatMessageUser(content="q")], [RUN_SQL], config)
    assert request["tool_choice"] == wire_choice


async def test_extended_thinking_is_returned_and_sent_back_verbatim(wire: WireServer) -> None:
    thinking_block = {
        "type": "thinking",
        "thinking": "The file is missing, so the task failed.",
        "signature": "sig-abc123",
    }
    redacted_block = {"type": "redacted_thinking", "data": "opaque-bytes"}
    wire.script(
        PATH,
        Reply(
            anthropic_message(
                thinking_block,
                redacted_block,
                {"type": "tool_use", "id": "toolu_9", "name": "run_sql", "input": {"query": "q"}},
                stop_reason="tool_use",
            )
        ),
        Reply(anthropic_message(text("RESULT: FAIL"))),
    )
    model = model_for(wire)
    config = GenerateConfig(
        thinking_budget=8000, temperature=0.5, tool_choice="required", retry_base_seconds=0.001
    )
    conversation: list[ChatMessage] = [ChatMessageUser(content="Judge this.")]
    try:
        first = await model.generate(conversation, [RUN_SQL], config)
        assert first.message.reasoning == "The file is missing, so the task failed."
        assert first.message.provider_data == {
            "anthropic_thinking": [thinking_block, redacted_block]
        }
        # What the loop stores must survive a JSON round trip (run logs, response cache).
        stored = ChatMessageAssistant.model_validate_json(first.message.model_dump_json())
        conversation += [
            stored,
            ChatMessageTool(tool_call_id="toolu_9", name="run_sql", content="0 rows"),
        ]
        await model.generate(conversation, [RUN_SQL], config)
    finally:
        await model.aclose()
    first_body, second_body = wire.bodies(PATH)
    assert first_body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert first_body["max_tokens"] > 8000
    assert "temperature" not in first_body
    # Forced tool use is not allowed with thinking; the provider falls back to "auto".
    assert first_body["tool_choice"] == {"type": "auto"}
    assistant = second_body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        thinking_block,
        redacted_block,
        {"type": "tool_use", "id": "toolu_9", "name": "run_sql", "input": {"query": "q"}},
    ]


@pytest.mark.parametrize(
    ("stop_reason", "mapped"),
    [
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop"),
        ("refusal", "content_filter"),
        ("pause_turn", "unknown"),
    ],
)
async def test_stop_reasons_are_mapped(wire: WireServer, stop_reason: str, mapped: str) -> None:
    wire.script(PATH, Reply(anthropic_message(text("x"), stop_reason=stop_reason)))
    model = model_for(wire)
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert output.stop_reason == mapped


async def test_overloaded_529_is_retried(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(anthropic_error("Overloaded", "overloaded_error"), status=529),
        Reply(anthropic_message(text("PASS"))),
    )
    model = model_for(wire)
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert output.message.content == "PASS"
    assert output.retries == 1
    assert len(wire.requests) == 2


async def test_a_rate_limit_honours_retry_after(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(
            anthropic_error("Number of requests exceeded", "rate_limit_error"),
            status=429,
            headers={"retry-after": "0.3"},
        ),
        Reply(anthropic_message(text("PASS"))),
    )
    model = model_for(wire)
    started = time.monotonic()
    try:
        output = await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert output.retries == 1
    assert time.monotonic() - started >= 0.3


async def test_server_errors_exhaust_the_retries(wire: WireServer) -> None:
    wire.script(PATH, *[Reply(anthropic_error("Internal error"), status=500) for _ in range(3)])
    model = model_for(wire)
    try:
        with pytest.raises(ModelError) as raised:
            await model.generate([ChatMessageUser(content="q")], [], FAST)
    finally:
        await model.aclose()
    assert len(wire.requests) == 3
    assert raised.value.status == 500
    assert raised.value.retryable is True
    assert "anthropic/claude-test" in str(raised.value)
    assert "gave up after 3 attempts" in str(raised.value)


async def test_a_hung_response_times_out_and_the_retry_succeeds(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(anthropic_message(text("too late")), delay=5.0),
        Reply(anthropic_message(text("on time"))),
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
    assert time.monotonic() - started < 3.0


async def test_timeouts_on_every_attempt_end_in_a_model_error(wire: WireServer) -> None:
    wire.script(PATH, *[Reply(anthropic_message(text("late")), delay=5.0) for _ in range(2)])
    model = model_for(wire)
    config = GenerateConfig(timeout_seconds=0.2, max_retries=1, retry_base_seconds=0.001)
    try:
        with pytest.raises(ModelError, match="timed out") as raised:
            await model.generate([ChatMessageUser(content="q")], [], config)
    finally:
        await model.aclose()
    assert len(wire.requests) == 2
    assert raised.value.retryable is True


async def test_a_bad_request_is_not_retried(wire: WireServer) -> None:
    wire.script(
        PATH,
        Reply(anthropic_error("messages: roles must alternate", "invalid_request_error"), 400),
        Reply(anthropic_message(text("must not be reached"))),
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
    assert "roles must alternate" in str(raised.value)


def test_consecutive_tool_results_become_one_user_message() -> None:
    system, messages = to_wire_messages(
        [
            ChatMessageUser(content="q"),
            ChatMessageAssistant(
                tool_calls=[ToolCall(id="a", name="t"), ToolCall(id="b", name="t")]
            ),
            ChatMessageTool(tool_call_id="a", name="t", content="ra"),
            ChatMessageTool(tool_call_id="b", name="t", content="rb"),
            ChatMessageAssistant(content="done"),
        ]
    )
    assert system is None
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]
