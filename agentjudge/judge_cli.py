"""``agentjudge judge``: run the judge grid over a dataset and print the verdict table."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich import box
from rich.table import Table

from agentjudge.console import console
from judge_agent.loop import MODES, JudgeLimits, JudgeMode
from judge_agent.model import GenerateConfig
from judge_agent.runner import (
    LOGS_DIR,
    SUMMARY_FILE,
    VERDICTS_FILE,
    GridSpec,
    JudgeRecord,
    JudgeSummary,
    judge_dataset,
)

DEFAULT_OUTPUT = Path("runs/judge")
"""Verdicts go to ``runs/judge/<dataset folder name>/`` unless ``--output`` says."""


def _modes(text: str) -> tuple[JudgeMode, ...]:
    if text == "all":
        return MODES
    chosen: list[JudgeMode] = []
    for part in text.split(","):
        name = part.strip()
        if name not in MODES:
            raise typer.BadParameter(f"unknown mode {name!r}: use agent, llm, react or all")
        chosen.append(name)
    return tuple(chosen)


def _turns(text: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(
            f"--turns {text!r}: give whole numbers, e.g. 16 or 1,2,4,8,16"
        ) from None
    if any(budget < 1 for budget in budgets):
        raise typer.BadParameter("--turns: every budget must be at least 1")
    return budgets


def _progress(record: JudgeRecord) -> None:
    verdict = record.verdict
    extra = f" [{verdict.stop_reason}]" if verdict.stop_reason != "verdict" else ""
    console.print(
        f"  {record.trajectory_id} {record.mode} t{record.turns} r{record.run}: "
        f"{verdict.verdict}{extra} ({verdict.turns_used} calls, {len(verdict.tool_calls)} tools, "
        f"{verdict.wall_time_seconds:.1f} s)",
        markup=False,
    )


def print_summary(summary: JudgeSummary, records: list[JudgeRecord], scripted: bool) -> None:
    """Verdict counts per mode and turn budget, problems, and where the files are."""
    table = Table(title=f"Judge runs on {summary.dataset}", box=box.SIMPLE_HEAD)
    for column in ("mode", "turns", "runs", "PASS", "FAIL", "INVALID", "mean calls"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    groups: dict[tuple[str, int], list[JudgeRecord]] = {}
    for record in records:
        groups.setdefault((record.mode, record.turns), []).append(record)
    for (mode, turns), group in sorted(groups.items()):
        counts = {
            value: sum(r.verdict.verdict == value for r in group)
            for value in ("PASS", "FAIL", "INVALID")
        }
        calls = sum(r.verdict.turns_used for r in group) / len(group)
        table.add_row(
            mode,
            str(turns or "-"),
            str(len(group)),
            str(counts["PASS"]),
            str(counts["FAIL"]),
            str(counts["INVALID"]),
            f"{calls:.1f}",
        )
    console.print(table)
    if scripted:
        console.print(
            "NOTE: the model is the scripted mock provider; these verdicts are a dry run of the "
            "pipeline, not judge results.",
            markup=False,
        )
    for problem in summary.problems:
        console.print(problem, markup=False)
    cost = (
        "unknown (a model has no price)" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"
    )
    console.print(
        f"{summary.resumed} run(s) reused from an earlier invocation; {summary.seconds:.1f} s; "
        f"cost of new runs {cost}. Verdicts: {Path(summary.output) / VERDICTS_FILE}; logs: "
        f"{Path(summary.output) / LOGS_DIR}/; summary: {Path(summary.output) / SUMMARY_FILE}",
        markup=False,
    )


def judge(
    dataset: Annotated[Path, typer.Argument(help="The dataset folder to judge.")],
    model: Annotated[
        str | None, typer.Option(help="Judge model as provider/model (default: $JUDGE_MODEL).")
    ] = None,
    mode: Annotated[str, typer.Option(help="agent, llm, react, a comma list, or all.")] = "all",
    turns: Annotated[
        str, typer.Option(help="Turn budget(s): model calls that may use tools, e.g. 16 or 1,4,16.")
    ] = "16",
    runs: Annotated[int, typer.Option(min=1, help="Independent runs per configuration.")] = 1,
    jobs: Annotated[int, typer.Option(min=1, help="Concurrent judge runs.")] = 4,
    max_connections: Annotated[int, typer.Option(min=1, help="Concurrent model calls.")] = 8,
    tool_call_limit: Annotated[
        int | None, typer.Option(min=1, help="Tool calls per judge run (default: no limit).")
    ] = None,
    token_limit: Annotated[
        int | None, typer.Option(min=1, help="Tokens per judge run (default: no limit).")
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option(min=1, help="Seconds per judge run (default: no limit).")
    ] = None,
    on_turn_limit: Annotated[
        Literal["force", "invalid"],
        typer.Option(help="When turns run out: one last call for the verdict, or INVALID."),
    ] = "force",
    screenshots: Annotated[
        str, typer.Option(help="Screenshots in the prompt: last, all, none, or a number.")
    ] = "last",
    judge_access: Annotated[
        Literal["read-only", "writable"],
        typer.Option(
            help="writable: a private clone per judge, with the agent's whole tool surface; "
            "read-only: the shared read-only view and reading tools only."
        ),
    ] = "writable",
    backend: Annotated[
        Literal["local", "docker"], typer.Option(help="Sandbox backend for replayed states.")
    ] = "local",
    dsn: Annotated[str | None, typer.Option(help="External Postgres server.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Per-call answer token cap.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    reasoning_effort: Annotated[
        Literal["minimal", "low", "medium", "high"] | None,
        typer.Option(help="OpenAI reasoning models: reasoning effort."),
    ] = None,
    thinking_budget: Annotated[
        int | None, typer.Option(help="Anthropic extended thinking budget (tokens).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per model call attempt.")] = 120.0,
    retries: Annotated[int, typer.Option(min=0, help="Retries of a failed model call.")] = 5,
    cache: Annotated[
        bool, typer.Option(help="Reuse cached model answers (--no-cache to bypass).")
    ] = True,
    output: Annotated[
        Path | None, typer.Option(help="Output folder (default: runs/judge/DATASET).")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Ignore earlier verdicts and judge again.")] = False,
) -> None:
    """Judge every trajectory of a dataset in each mode and turn budget.

    `agent` judges inspect the replayed final state through MCP tools (filesystem or SQL, plus
    VIEW_TRAJECTORY_STEP); `react` does the same through a text protocol; `llm` judges read the
    trajectory only. Verdicts are appended to `verdicts.jsonl` as runs finish (rerunning
    resumes), full conversations go to `logs/`. Scoring is `agentjudge report`'s job.
    """
    from sandboxes.providers import BackendChoice

    grid = GridSpec(
        modes=_modes(mode),
        turns=_turns(turns),
        runs=runs,
        limits=JudgeLimits(
            tool_call_limit=tool_call_limit,
            token_limit=token_limit,
            time_limit=time_limit,
            on_turn_limit=on_turn_limit,
        ),
        generate=GenerateConfig(
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            thinking_budget=thinking_budget,
            timeout_seconds=timeout,
            max_retries=retries,
        ),
        screenshots=screenshots,
        judge_access=judge_access,
    )

    from judge_agent.cache import CachedModel
    from judge_agent.model import ModelAPI, ModelError, get_model

    try:
        made = get_model(model)  # fails early on a bad or missing model name or key
    except (ValueError, ImportError, ModelError) as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(2) from None
    judge_model: ModelAPI = (
        CachedModel(made) if cache and not made.name.startswith("mock/") else made
    )
    name = made.name
    folder = output or DEFAULT_OUTPUT / dataset.resolve().name
    console.print(f"Judging {dataset} with {name} -> {folder}", markup=False)
    summary = asyncio.run(
        judge_dataset(
            dataset,
            folder,
            model_factory=lambda: judge_model,
            grid=grid,
            jobs=jobs,
            max_connections=max_connections,
            fresh=fresh,
            backend_choice=BackendChoice.for_backend(backend, dsn),
            on_record=_progress,
        )
    )
    from judge_agent.runner import read_records

    records = list(read_records(folder / VERDICTS_FILE).values())
    print_summary(summary, records, name.startswith("mock/"))
    if summary.problems:
        raise typer.Exit(1)
