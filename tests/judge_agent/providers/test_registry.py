"""The provider registry: lookup by name, lazy built-ins, registration from outside the package,
the scripted flag, and the no-model hint."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bench.evaluate import no_model_note
from bench.grid_runner import (
    VERDICTS_FILE,
    ConnectionLimitedModel,
    GridSpec,
    JudgeArm,
    judge_dataset,
    read_records,
)
from judge_agent.cache import CachedModel
from judge_agent.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, ToolInfo
from judge_agent.providers import registry
from judge_agent.providers.mock import ScriptedModel, reply
from judge_agent.providers.registry import (
    ModelSetup,
    get_model,
    is_scripted,
    model_provider,
    no_model_hint,
    provider_names,
    register_provider,
)

REPO = Path(__file__).resolve().parents[3]
MINI = REPO / "datasets" / "examples" / "mini"
SEARCH = "search-python3-release-dates--pass"

BUILT_IN_HINT = """\
To run the judges, name a model as provider/model and give it credentials, for example:
  make judge TURNS=16 MODEL=openai/gpt-4.1                # with OPENAI_API_KEY set
  make judge TURNS=16 MODEL=anthropic/claude-sonnet-4-5   # with ANTHROPIC_API_KEY set
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 make judge TURNS=16 MODEL=openai/NAME
                                        # any OpenAI-compatible server (vLLM, Ollama, llama.cpp)
Set JUDGE_MODEL=provider/model to make it the default, or pass --model to agentjudge judge.
MODEL=mock/pass is the scripted model: a dry run of the pipeline, never a judge result."""


class FakeModel:
    """A provider class as a third party would write it: answers PASS to everything."""

    scripted: ClassVar[bool] = False
    provider: ClassVar[str] = "fake"

    def __init__(self, model: str, **options: Any) -> None:
        self.name = f"{self.provider}/{model}"
        self.options = options

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        return ModelOutput(
            message=reply("RESULT: PASS\nCONFIDENCE: High"),
            usage=ModelUsage(input_tokens=1, output_tokens=1),
            model=self.name,
        )

    async def aclose(self) -> None:
        return None


class ScriptedFakeModel(FakeModel):
    """The same, declared scripted."""

    scripted: ClassVar[bool] = True
    provider: ClassVar[str] = "fake-scripted"


@pytest.fixture
def fake_providers() -> Iterator[None]:
    """``fake`` (a real provider, with a hint line) and ``fake-scripted``, for one test."""
    model_provider("fake", setup=[ModelSetup("fake/large", "FAKE_API_KEY")])(FakeModel)
    register_provider(
        "fake-scripted",
        f"{__name__}:ScriptedFakeModel",
        note="MODEL=fake-scripted/x answers from a script.",
    )
    try:
        yield
    finally:
        for name in ("fake", "fake-scripted"):
            registry._REGISTRY.pop(name, None)


def test_built_in_providers_are_found_by_name() -> None:
    assert {"openai", "anthropic", "mock"} <= set(provider_names())
    model = get_model("mock/pass")
    assert isinstance(model, ScriptedModel)
    assert model.name == "mock/pass"


def test_built_in_sdks_are_imported_only_when_used() -> None:
    code = (
        "import sys\n"
        "from judge_agent.providers.registry import get_model, no_model_hint, provider_names\n"
        "provider_names(); no_model_hint(); get_model('mock/pass')\n"
        "print(sorted(name for name in ('openai', 'anthropic') if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]"


def test_unknown_providers_are_refused_with_the_known_names(fake_providers: None) -> None:
    with pytest.raises(ValueError, match=r"unknown provider 'nope' \(known: anthropic, fake, "):
        get_model("nope/x")
    with pytest.raises(ValueError, match="expected provider/model"):
        get_model("mock")
    with pytest.raises(ValueError, match="already registered"):
        register_provider("mock", FakeModel)
    with pytest.raises(ValueError, match="module:attr"):
        register_provider("other", "just.a.module")


def test_a_registered_provider_is_built_by_get_model(fake_providers: None) -> None:
    model = get_model("fake/large", temperature_floor=0.5)
    assert isinstance(model, FakeModel)
    assert model.name == "fake/large"
    assert model.options == {"temperature_floor": 0.5}
    assert not is_scripted(model)
    lazy = get_model("fake-scripted/x")
    assert isinstance(lazy, ScriptedFakeModel)
    assert is_scripted(lazy)


def test_is_scripted_sees_through_wrappers(tmp_path: Path) -> None:
    semaphore = asyncio.Semaphore(1)
    scripted = ScriptedModel("pass")
    assert is_scripted(scripted)
    assert is_scripted(CachedModel(scripted, tmp_path))
    assert is_scripted(ConnectionLimitedModel(CachedModel(scripted, tmp_path), semaphore))
    real = FakeModel("m")
    assert not is_scripted(ConnectionLimitedModel(CachedModel(real, tmp_path), semaphore))


@pytest.mark.parametrize(("provider", "scripted"), [("fake", False), ("fake-scripted", True)])
async def test_the_scripted_flag_reaches_the_record(
    fake_providers: None, tmp_path: Path, provider: str, scripted: bool
) -> None:
    # One run for the whole search trajectory (its claims judged together).
    arm = JudgeArm(lambda: get_model(f"{provider}/m"), GridSpec(modes=("llm",), items="together"))
    summary = await judge_dataset(MINI, tmp_path, arms=[arm], only={SEARCH})
    assert summary.problems == []
    [record] = read_records(tmp_path / VERDICTS_FILE).values()
    assert record.model == f"{provider}/m"
    assert record.verdict.verdict == "PASS"
    assert record.scripted is scripted


def test_entry_points_register_classes_and_plugin_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = registry.ENTRY_POINT_GROUP
    found = [
        EntryPoint(name="viaentry", value=f"{__name__}:FakeModel", group=group),
        EntryPoint(name="plugin", value="tests.judge_agent.providers.plugin", group=group),
        EntryPoint(name="broken", value="no_such_package_anywhere", group=group),
    ]

    def entry_points(*, group: str) -> list[EntryPoint]:
        assert group == registry.ENTRY_POINT_GROUP
        return found

    monkeypatch.setattr(registry, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry._read_entry_points.cache_clear()
    try:
        with pytest.warns(UserWarning, match="broken"):
            names = provider_names()
        assert {"viaentry", "plugged"} <= set(names)
        model = get_model("viaentry/m")
        assert isinstance(model, FakeModel)
        assert get_model("plugged/small").name == "plugged/small"
        assert "MODEL=plugged/small" in no_model_hint()
    finally:
        registry._read_entry_points.cache_clear()


def test_the_built_in_hint_keeps_its_wording() -> None:
    assert no_model_hint() == BUILT_IN_HINT
    assert no_model_hint("sentence") == (
        "Set JUDGE_MODEL (or pass --model) to provider/model, e.g. openai/gpt-4.1 with "
        "OPENAI_API_KEY, anthropic/claude-sonnet-4-5 with ANTHROPIC_API_KEY, or openai/NAME with "
        "OPENAI_BASE_URL for any OpenAI-compatible server (vLLM, Ollama, llama.cpp)."
    )


def test_a_registered_provider_joins_both_hints(fake_providers: None) -> None:
    lines = no_model_hint()
    assert "  make judge TURNS=16 MODEL=fake/large" in lines
    assert "# with FAKE_API_KEY set" in lines
    assert lines.endswith("MODEL=fake-scripted/x answers from a script.")
    # The report's note (bench) and the command line's hint both come from the registry.
    note = no_model_note()
    assert note.startswith("No judge model was configured, so this report holds the baselines")
    assert "fake/large with FAKE_API_KEY" in note
    assert no_model_hint("sentence") in note
