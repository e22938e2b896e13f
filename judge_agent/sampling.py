"""Answering a tool server's sampling requests with the judge's own model.

Owns ``ModelSampler``: the MCP client callback for ``sampling/createMessage`` that a judge's
``Toolbox`` installs when given the judge's model. A server asks for it to have something
written by the model doing the judging (the browser server's page summaries); the sampler turns
the request into one model call without tools and keeps the tokens it used (``usage``, ``calls``)
so they can be counted with the judge's own. Failures come back to the server as MCP errors; the
server then shows what it had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp import types

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelUsage,
)


@dataclass
class ModelSampler:
    """The sampling callback of a judge's MCP clients, backed by the judge's model."""

    model: ModelAPI
    """The judge's model."""
    usage: ModelUsage = field(default_factory=ModelUsage)
    """Tokens the sampled messages used, summed."""
    calls: int = 0
    """How many messages were sampled."""

    async def __call__(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        messages: list[ChatMessage] = []
        if params.system_prompt:
            messages.append(ChatMessageSystem(content=params.system_prompt))
        for message in params.messages:
            blocks = message.content if isinstance(message.content, list) else [message.content]
            text = "\n".join(block.text for block in blocks if isinstance(block, types.TextContent))
            if message.role == "assistant":
                messages.append(ChatMessageAssistant(content=text))
            else:
                messages.append(ChatMessageUser(content=text))
        config = GenerateConfig(max_tokens=params.max_tokens, temperature=params.temperature)
        try:
            output = await self.model.generate(messages, [], config)
        except Exception as error:
            return types.ErrorData(code=-32603, message=f"the judge's model failed: {error}")
        self.calls += 1
        self.usage = self.usage + output.usage
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=output.message.content),
            model=output.model,
            stop_reason="maxTokens" if output.stop_reason == "max_tokens" else "endTurn",
        )
