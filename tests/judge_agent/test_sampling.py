"""A judge's toolbox answers a server's sampling request with the judge's own model, and keeps
the tokens it used."""

from __future__ import annotations

from mcp import types

from judge_agent.model import ChatMessageSystem, ChatMessageUser, ModelUsage
from judge_agent.providers.mock import ScriptedModel
from judge_agent.sampling import ModelSampler
from judge_agent.toolbox import Toolbox
from mcp_servers.results import ToolArguments, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer, current_request


class _Nothing(ToolArguments):
    """No arguments."""


async def _ask_the_model(context: None, arguments: _Nothing) -> ToolResult:
    request = current_request()
    result = await request.session.create_message(
        [
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text="condense this page")
            )
        ],
        max_tokens=50,
        system_prompt="be brief",
    )
    return ToolResult(text=f"{result.model}: {result.content.text}")


SERVER = ToolServer(
    "asker",
    {
        "ask": ToolSpec(
            name="ask", arguments=_Nothing, handler=_ask_the_model, writes=False, description="ask"
        )
    },
    None,
)


async def test_the_judges_model_answers_and_its_tokens_are_kept() -> None:
    model = ScriptedModel(
        replies=["a short page"], usage=ModelUsage(input_tokens=7, output_tokens=3)
    )
    sampler = ModelSampler(model)
    toolbox = await Toolbox.open([SERVER], sampler=sampler)
    try:
        outcome = await toolbox.call("ask", {})
    finally:
        await toolbox.aclose()
    assert not outcome.is_error
    assert outcome.text == "mock/scripted: a short page"
    assert sampler.calls == 1
    assert sampler.usage == ModelUsage(input_tokens=7, output_tokens=3)
    sent = model.calls[0].messages
    assert sent == [
        ChatMessageSystem(content="be brief"),
        ChatMessageUser(content="condense this page"),
    ]
    assert model.calls[0].config.max_tokens == 50
    assert model.calls[0].tools == []


async def test_without_a_sampler_the_server_is_refused() -> None:
    toolbox = await Toolbox.open([SERVER])
    try:
        outcome = await toolbox.call("ask", {})
    finally:
        await toolbox.aclose()
    assert outcome.is_error
