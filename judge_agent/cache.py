"""A content-addressed cache of model answers, so that reruns are deterministic and free.

The key is the SHA-256 of everything that decides an answer: the model's name, the whole
conversation (images included), the tools offered and the generation settings that shape the
answer (not timeouts or retries). The value is the ``ModelOutput``, one JSON file per key under
``$AGENTJUDGE_CACHE`` (default ``~/.cache/agentjudge/responses``), written atomically. A cached
answer is returned with its original usage, so a rerun reports the same tokens and cost as the
run that paid for them; the run log marks it as cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

from judge_agent.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ToolInfo
from settings import get_settings

_NOT_PART_OF_THE_KEY = {"timeout_seconds", "max_retries", "retry_base_seconds"}


def default_cache_dir() -> Path:
    """``$AGENTJUDGE_CACHE``, else ``~/.cache/agentjudge/responses``."""
    configured = get_settings().cache
    return configured or Path.home() / ".cache" / "agentjudge" / "responses"


def cache_key(
    model: str, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> str:
    """The hex digest identifying one model call."""
    payload = {
        "model": model,
        "messages": [message.model_dump(mode="json") for message in messages],
        "tools": [tool.model_dump(mode="json") for tool in tools],
        "config": config.model_dump(mode="json", exclude=_NOT_PART_OF_THE_KEY),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class CachedModel:
    """A ``ModelAPI`` that answers from the cache when it can and fills it when it cannot."""

    def __init__(self, model: ModelAPI, directory: Path | None = None) -> None:
        self.inner = model
        self.name = model.name
        self.directory = directory or default_cache_dir()
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        key = cache_key(self.name, messages, tools, config)
        path = self._path(key)
        try:
            output = ModelOutput.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            output = None
        if output is not None:
            self.hits += 1
            return output.model_copy(update={"cached": True})
        self.misses += 1
        output = await self.inner.generate(messages, tools, config)
        self._store(path, output)
        return output

    def _store(self, path: Path, output: ModelOutput) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(output.model_dump_json())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()
