"""A stand-in for a third-party package's plugin module, named by an entry point of the group
``agentjudge.providers`` without an attribute: importing it registers its provider."""

from __future__ import annotations

from typing import Any, ClassVar

from judge_agent.model import ChatMessage, GenerateConfig, ModelOutput, ToolInfo
from judge_agent.providers.registry import ModelSetup, model_provider


@model_provider("plugged", setup=[ModelSetup("plugged/small", "PLUGGED_TOKEN")])
class PluggedModel:
    """A provider registered by its own module."""

    scripted: ClassVar[bool] = False

    def __init__(self, model: str, **options: Any) -> None:
        self.name = f"plugged/{model}"

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None
