"""Ablation grids from a YAML file: which judge configurations ``agentjudge judge`` runs.

A grid file lists values per axis; the runs are their product. Example (``--grid FILE``)::

    models: [openai/gpt-4.1, anthropic/claude-sonnet-4-5]
    modes: [agent, llm]
    turns: [1, 2, 4, 8, 16, 32]
    reasoning_efforts: [null, high]   # null: the provider's default
    observations: [last, none]        # screenshots in the prompt (see --screenshots), or
                                      # modalities: [screenshot, a11y_tree, screenshot_a11y_tree]
    runs: 3
    limits: {tool_call_limit: 64, time_limit: 600}

Axes left out of the file take the command line's values. Every (model, reasoning effort,
thinking budget, observation) combination is one ``JudgeArm``; modes, turn budgets and runs vary
inside it. Non-default axes become the run's ``variant`` so they never share a key.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from bench.grid_runner import MODALITIES, GridSpec, ItemJudging, JudgeAccess
from judge_agent.conversation import JudgeLimits
from judge_agent.modes import ModeName, check_method_options

__all__ = ["GridError", "GridFile", "expand_grid", "load_grid"]

Effort = Literal["minimal", "low", "medium", "high"]


def _not_set() -> list[Any]:
    return [None]


class GridError(ValueError):
    """A grid file that cannot be used; the message names the file and the field."""


def _no_switches() -> list[dict[str, str | int | bool]]:
    return [{}]


def _each_alone() -> list[ItemJudging]:
    return ["each"]


class GridFile(BaseModel):
    """The axes of an ablation grid."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    models: list[str] = Field(default_factory=list)
    """Judge models as ``provider/model`` (empty: ``--model`` or ``$JUDGE_MODEL``)."""
    modes: list[ModeName] = Field(default_factory=lambda: list(GridSpec().modes), min_length=1)
    """Judge modes."""
    turns: list[PositiveInt] = Field(default_factory=lambda: [16], min_length=1)
    """Turn budgets for ``agent`` and ``react`` runs."""
    reasoning_efforts: list[Effort | None] = Field(default_factory=_not_set, min_length=1)
    """OpenAI reasoning efforts (``null``: not set)."""
    thinking_budgets: list[PositiveInt | None] = Field(default_factory=_not_set, min_length=1)
    """Anthropic extended-thinking budgets in tokens (``null``: off)."""
    observations: list[str] = Field(default_factory=lambda: ["last"], min_length=1)
    """Observation axis: which screenshots go into the prompt (``last``, ``all``, ``none`` or a
    count), or an observation modality (``screenshot``, ``a11y_tree``,
    ``screenshot_a11y_tree``: what GUI tools answer with and what an ``llm`` judge's rendered
    trajectory holds; ``GridSpec.modality``). The two kinds of value may be mixed."""
    method_options: list[dict[str, str | int | bool]] = Field(
        default_factory=_no_switches, min_length=1
    )
    """Switch sets of the judge method modes (e.g. ``[{screenshots: 3}, {screenshots: 48, ui:
    on}]``), one arm each; a switch goes to the modes that take it."""
    trees: list[str] = Field(default_factory=lambda: ["all"], min_length=1)
    """Which recorded accessibility trees go into the prompt (``all``, ``last``, ``none`` or a
    count); with ``observations`` it gives screenshots, trees or both."""
    runs: PositiveInt = 1
    """Independent repetitions of every configuration."""
    limits: JudgeLimits | None = None
    """Limits besides the turn budget (``turn_limit`` is ignored: ``turns`` sets it)."""
    judge_access: JudgeAccess | None = None
    """``writable`` (private clones) or ``read-only`` (shared view, reading tools)."""
    items: list[ItemJudging] = Field(default_factory=_each_alone, min_length=1)
    """How search answers' claims are judged: ``each`` in a run of its own, or ``together`` in
    one run with a verdict per claim; both is an ablation axis."""


def load_grid(path: Path) -> GridFile:
    """Read and check a grid file; every problem is named with its field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise GridError(f"{path}: cannot read: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise GridError(f"{path}: not valid YAML: {error}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GridError(f"{path}: expected a mapping of axes, got {type(data).__name__}")
    try:
        return GridFile.model_validate(data)
    except ValidationError as error:
        lines = [
            f"{path}: {'.'.join(str(part) for part in item['loc']) or '(top)'}: {item['msg']}"
            for item in error.errors()
        ]
        raise GridError("\n".join(lines)) from None


def _switch(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def expand_grid(grid: GridFile, base: GridSpec, models: list[str]) -> list[tuple[str, GridSpec]]:
    """One ``(model, GridSpec)`` per arm: the file's axes over ``base`` (the command line's
    settings). Axes the file does not set keep ``base``'s values; ``models`` is used when the
    file names none."""
    given = grid.model_fields_set
    modes = tuple(grid.modes) if "modes" in given else base.modes
    turns = tuple(grid.turns) if "turns" in given else base.turns
    runs = grid.runs if "runs" in given else base.runs
    limits = grid.limits or base.limits
    access = grid.judge_access or base.judge_access
    efforts = grid.reasoning_efforts if "reasoning_efforts" in given else [None]
    budgets = grid.thinking_budgets if "thinking_budgets" in given else [None]
    observations = grid.observations if "observations" in given else [base.screenshots]
    switch_sets = (
        [
            {key: _switch(value) for key, value in switches.items()}
            for switches in grid.method_options
        ]
        if "method_options" in given
        else [base.method_options]
    )
    item_judging = grid.items if "items" in given else [base.items]
    tree_policies = grid.trees if "trees" in given else [base.trees]
    arms: list[tuple[str, GridSpec]] = []
    for model in grid.models or models:
        for effort, budget, observation, trees, switches, items in itertools.product(
            efforts, budgets, observations, tree_policies, switch_sets, item_judging
        ):
            try:
                check_method_options(modes, switches)
            except ValueError as error:
                raise GridError(f"method_options: {error}") from None
            generate = base.generate.model_copy(
                update={
                    "reasoning_effort": effort or base.generate.reasoning_effort,
                    "thinking_budget": budget or base.generate.thinking_budget,
                }
            )
            update = {
                "modes": modes,
                "turns": turns,
                "runs": runs,
                "limits": limits,
                "judge_access": access,
                "generate": generate,
                "screenshots": base.screenshots if observation in MODALITIES else observation,
                "modality": observation if observation in MODALITIES else base.modality,
                "trees": trees,
                "method_options": switches,
                "items": items,
            }
            arms.append((model, base.model_copy(update=update)))
    return arms
