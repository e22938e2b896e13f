"""``agentjudge judge``: options from the command line, ``bench.evaluate.evaluate()``, and printing.

The evaluation itself (replay, baselines, the judge grid, the report) is ``evaluate()``'s; this
module turns arguments into ``EvaluationOptions``, prints its progress events and the tables,
and sets the exit code (2: bad options, 1: problems with a model configured, else 0).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from agentjudge.console import PhaseProgress, console
from agentjudge.endpoints import (
    BackendOption,
    DesktopUrlOption,
    DsnOption,
    EndpointOption,
    KindOptionOption,
    SeedTimeoutOption,
    backend_choice,
    parse_kind_settings,
)
from agentjudge.interrupts import run_interruptibly
from agentjudge.paths import (
    SuppliedEnvironments,
    folder_error,
    require_dataset,
    supplied_environments,
)
from agentjudge.replay_cli import print_summary as print_replay_summary
from agentjudge.subset import LimitOption, OnlyOption, selected_ids, selection
from bench.grid_runner import (
    LOGS_DIR,
    SUMMARY_FILE,
    VERDICTS_FILE,
    GridSpec,
    JudgeRecord,
    JudgeSummary,
)
from dataset.screenshots import parse_screenshot_policy
from environments.capacity import parse_jobs
from judge_agent.conversation import JudgeLimits
from judge_agent.model import GenerateConfig
from judge_agent.modes import check_method_options, judge_mode, mode_names, select_modes
from judge_agent.pricing import add_costs
from storage.locks import ResultsFolderError

if TYPE_CHECKING:
    from bench.evaluate import EvaluationEvent, EvaluationOptions, EvaluationResult
    from bench.model_watch import ModelUnusableError
    from bench.scores import BenchReport

NO_MODEL_LEAD = (
    "No judge model is configured, so only the replay, the verifier check and the baselines ran."
)
"""Printed before the registry's hint on how to configure a model (``no_model_hint``)."""


def mode_help() -> str:
    """``--mode``'s help: the registered modes (with what each ungrouped one does) and groups."""
    own: list[str] = []
    groups: dict[str, list[str]] = {}
    for name in mode_names():
        group = judge_mode(name).group
        if group is None:
            own.append(name)
        else:
            groups.setdefault(group, []).append(name)
    described = "; ".join(f"{name}: {judge_mode(name).description}" for name in own)
    grouped = "; ".join(f"{group} ({', '.join(members)})" for group, members in groups.items())
    return (
        f"Judge modes: {described}. Groups: {grouped or 'none'}. Give a mode, a group, a comma "
        f"list, or all ({', '.join(own)})."
    )


def model_help() -> str:
    """``--model``'s help: the registered providers."""
    from judge_agent.providers.registry import provider_names

    return (
        "Judge model as provider/model, e.g. openai/gpt-4o-mini (default: $JUDGE_MODEL). "
        f"Providers: {', '.join(provider_names())}."
    )


def _jobs(value: str) -> int | None:
    try:
        return parse_jobs(value)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--jobs") from None


def _policy(option: str, value: str) -> str:
    """A screenshot or tree policy as given, after checking it (a bad one exits 2)."""
    try:
        parse_screenshot_policy(value)
    except ValueError as error:
        console.print(f"error: {option}: {error}", markup=False)
        raise typer.Exit(2) from None
    return value


def _modes(text: str) -> tuple[str, ...]:
    """The registered modes ``text`` names (a comma list of modes and groups, or ``all``)."""
    try:
        return select_modes(text)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


def _switches(given: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` texts as a mapping."""
    switches: dict[str, str] = {}
    for text in given:
        key, separator, value = text.partition("=")
        if not separator or not key.strip() or not value.strip():
            raise typer.BadParameter(f"{text!r}: expected KEY=VALUE", param_hint="--method-option")
        switches[key.strip()] = value.strip()
    return switches


def _dry_run(
    dataset: Path,
    output: Path,
    modes: tuple[str, ...],
    switches: dict[str, str],
    screenshots: str,
    subset: set[str] | None,
) -> None:
    from bench.dry_run import write_dry_run

    summary = write_dry_run(
        dataset,
        output,
        modes=modes,
        method_options=switches,
        screenshots=screenshots,
        trajectories=sorted(subset or ()),
    )
    for problem in summary.problems:
        console.print(problem, markup=False)
    console.print(
        f"dry run: {summary.requests} request(s) with {summary.images} image(s) for "
        f"{len(summary.folders)} trajectory x mode folder(s) under {output}; no model was called",
        markup=False,
    )


def _print_agent_ranking(folder: Path) -> None:
    """The agent-ranking and meta-correlation tables, when the report wrote them."""
    from bench.agent_ranking import MARKDOWN_FILE

    path = folder / MARKDOWN_FILE
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    head = text.split("\n## Per source benchmark", 1)[0]
    from rich.markdown import Markdown

    # Rendered, not printed as Markdown source: its tables become terminal tables.
    console.print(Markdown(head.rstrip()))
    console.print(
        f"Agent ranking tables: {path} (per benchmark, per agent, failures)", markup=False
    )


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


class JudgeProgress:
    """Runs done of planned (earlier invocations' counted as done), elapsed time, time left,
    verdicts so far, tokens and dollars (``PhaseProgress``)."""

    def __init__(self, new: int, reused: int) -> None:
        console.print(f"{new} judge run(s) to make, {reused} reused.", markup=False)
        self.bar = PhaseProgress("judging", new + reused, done=reused)
        self.counts = {"PASS": 0, "FAIL": 0, "INVALID": 0}
        self.tokens = 0
        self.dollars: float | None = 0.0

    def status(self) -> str:
        """Verdicts, tokens and dollars of this invocation so far."""
        verdicts = " ".join(f"{name} {count}" for name, count in self.counts.items())
        dollars = "$?" if self.dollars is None else f"${self.dollars:.4f}"
        return f"{verdicts}  {self.tokens:,} tokens {dollars}"

    def record(self, record: JudgeRecord) -> None:
        """Count one finished run."""
        verdict = record.verdict
        self.counts[verdict.verdict] += 1
        self.tokens += verdict.tokens_in + verdict.tokens_out
        self.dollars = add_costs(self.dollars, verdict.cost_usd)
        self.bar.advance(status=self.status())

    def stop(self) -> None:
        """End the display."""
        self.bar.stop()


def print_report(report: BenchReport) -> None:
    """The main table, compact: F1 per subdomain (or per domain, when there are many) and
    overall with its bootstrap interval, and balanced accuracy; then the Improvement rows. The
    written report has every group."""
    from bench.report import format_number

    subdomains = [g for g in report.groups if report.group_levels[g] == "subdomain"]
    domains = [g for g in report.groups if report.group_levels[g] == "domain"]
    # As many columns as fit a terminal: subdomains when there are few, else domains.
    columns = subdomains if len(subdomains) <= 4 else domains
    groups = [*(columns if len(columns) > 1 else []), "overall"]
    table = Table(title=f"F1 by judge: {report.dataset}", box=box.SIMPLE_HEAD)
    table.add_column("judge", no_wrap=True)
    for group in groups:
        table.add_column(f"F1 {group}", justify="right", no_wrap=True)
    table.add_column("overall 95% CI", justify="right", no_wrap=True)
    table.add_column("bal. acc.", justify="right", no_wrap=True)
    for scores in report.configs:
        overall = scores.group("overall")
        table.add_row(
            Text(scores.shown_label + (" (scripted)" if scores.scripted else "")),
            *(format_number(found.f1 if (found := scores.group(g)) else None) for g in groups),
            f"[{overall.f1_interval.low:.2f}, {overall.f1_interval.high:.2f}]"
            if overall and overall.f1_interval
            else "-",
            format_number(overall.balanced_accuracy if overall else None),
        )
    for row in report.improvements:
        deltas = [row.delta_f1.get(group) for group in groups]
        table.add_row(row.label, *("-" if d is None else f"{d:+.3f}" for d in deltas), "", "")
    console.print(table)
    for note in report.notes:
        console.print(f"NOTE: {note}", markup=False)


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


class _Printer:
    """Prints ``evaluate``'s progress events: a progress display per phase, each distinct model
    problem once, the tables when a phase ends; keeps what an interruption must say."""

    def __init__(self) -> None:
        self.replay: PhaseProgress | None = None
        self.progress: JudgeProgress | None = None
        self.replay_folder: Path | None = None
        self.judge_folder: Path | None = None

    def __call__(self, event: EvaluationEvent) -> None:
        from bench.evaluate import (
            JudgeRunFinished,
            JudgeRunsPlanned,
            JudgingFinished,
            JudgingStarted,
            ModelProblemSeen,
            PhaseNote,
            ReplayFinished,
            ReplayPlanned,
            ReplayStarted,
            TrajectoryReplayed,
        )

        match event:
            case ReplayStarted(dataset=dataset, folder=folder):
                self.replay_folder = folder
                console.print(
                    f"Replaying {dataset} and running every verifier -> {folder}", markup=False
                )
            case ReplayPlanned(new=new, reused=reused):
                self.replay = PhaseProgress("replaying", new + reused, done=reused)
            case PhaseNote(text=text):
                console.print(text, markup=False)
            case TrajectoryReplayed(report=report) if self.replay is not None:
                self.replay.advance(status=f"{report.trajectory_id}: {report.verdict}")
            case ReplayFinished(summary=summary, folder=folder):
                self.stop()
                print_replay_summary(summary, folder)
            case JudgingStarted(dataset=dataset, models=models, folder=folder):
                self.judge_folder = folder
                console.print(
                    f"Judging {dataset} with {', '.join(models)} -> {folder}", markup=False
                )
            case JudgeRunsPlanned(new=new, reused=reused):
                self.progress = JudgeProgress(new, reused)
            case JudgeRunFinished(record=record) if self.progress is not None:
                self.progress.record(record)
            case ModelProblemSeen(line=line):
                console.print(line, markup=False)
            case JudgingFinished(summary=summary, records=records):
                self.stop()
                print_summary(summary, records, any(r.scripted for r in records))

    def stop(self) -> None:
        """End the live displays, if any is running."""
        for display in (self.replay, self.progress):
            if display is not None:
                display.stop()
        self.replay = None
        self.progress = None


def _interrupted(printer: _Printer, folder: Path, replay_folder: Path) -> typer.Exit:
    """After Ctrl-C: one line saying what is saved and how to resume; exit code 130."""
    from bench.grid_runner import read_records
    from replay.runner import REPORT_FILE, read_reports

    printer.stop()
    judged = folder / VERDICTS_FILE
    replayed = replay_folder / REPORT_FILE
    parts = []
    if judged.is_file():
        parts.append(f"{len(read_records(judged))} judge run(s) in {judged}")
    if replayed.is_file():
        parts.append(f"{len(read_reports(replayed))} replay report(s) in {replayed}")
    saved = " and ".join(parts) if parts else "nothing yet"
    console.print(
        f"Interrupted: {saved} saved; run the same command again to resume.", markup=False
    )
    return typer.Exit(130)


def _model_unusable(error: ModelUnusableError, folder: Path) -> typer.Exit:
    """The grid stopped on a model that cannot be used: the cause, what is saved, exit code 1."""
    console.print(
        f"error: stopped the judge grid: the model cannot be used: {error}. "
        f"{error.saved} judge run(s) saved in {folder / VERDICTS_FILE}; fix the model's address "
        "or credentials and run the same command again to resume.",
        markup=False,
    )
    return typer.Exit(1)


def _evaluate(dataset: Path, options: EvaluationOptions) -> EvaluationResult:
    """``evaluate`` with its progress printed; every way it can stop early becomes one line and
    an exit code (Ctrl-C: what is saved, 130; a model that cannot be used: the cause, 1)."""
    from bench.evaluate import (
        DEFAULT_OUTPUT,
        DEFAULT_REPLAY_OUTPUT,
        EvaluationError,
        evaluate_async,
    )
    from bench.executors import ExecutorError
    from bench.model_watch import ModelUnusableError

    printer = _Printer()
    name = dataset.resolve().name
    folder = options.output or DEFAULT_OUTPUT / name
    try:
        return run_interruptibly(evaluate_async(dataset, options, on_event=printer))
    except KeyboardInterrupt:
        replays = (
            options.replay_output
            or printer.replay_folder
            or DEFAULT_REPLAY_OUTPUT / f"{name}-{options.backend}"
        )
        raise _interrupted(printer, printer.judge_folder or folder, replays) from None
    except ModelUnusableError as error:
        printer.stop()
        raise _model_unusable(error, printer.judge_folder or folder) from None
    except EvaluationError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(2) from None
    except ExecutorError as error:  # e.g. the cluster unreachable; landed records stay
        printer.stop()
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(1) from None
    except ResultsFolderError as error:
        printer.stop()
        raise folder_error(error) from None
    finally:
        printer.stop()


def judge(
    dataset: Annotated[Path, typer.Argument(help="The dataset folder to judge.")],
    model: Annotated[
        str | None,
        # The help lists the registered providers when rendered (``model_help``).
        typer.Option(help="Judge model as provider/model.", rich_help_panel="Model"),
    ] = None,
    mode: Annotated[
        str,
        # The help lists the registered modes when rendered (``mode_help``), not at import.
        typer.Option(help="Judge modes, a group, a comma list, or all.", rich_help_panel="Grid"),
    ] = "all",
    turns: Annotated[
        str,
        typer.Option(
            help="Turn budget(s): model calls that may use tools, e.g. 16 or 1,4,16.",
            rich_help_panel="Grid",
        ),
    ] = "16",
    runs: Annotated[
        int, typer.Option(min=1, help="Independent runs per configuration.", rich_help_panel="Grid")
    ] = 1,
    jobs: Annotated[
        str,
        typer.Option(
            help="Concurrent replays and judge runs: a number, or auto (as many as this "
            "machine's CPUs and memory hold of the dataset's kinds).",
            rich_help_panel="Limits",
        ),
    ] = "auto",
    max_connections: Annotated[
        int, typer.Option(min=1, help="Concurrent model calls.", rich_help_panel="Limits")
    ] = 8,
    tool_call_limit: Annotated[
        int | None,
        typer.Option(
            min=1, help="Tool calls per judge run (default: no limit).", rich_help_panel="Limits"
        ),
    ] = None,
    token_limit: Annotated[
        int | None,
        typer.Option(
            min=1, help="Tokens per judge run (default: no limit).", rich_help_panel="Limits"
        ),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            min=1, help="Seconds per judge run (default: no limit).", rich_help_panel="Limits"
        ),
    ] = None,
    on_turn_limit: Annotated[
        Literal["force", "invalid"],
        typer.Option(
            help="When turns run out: one last call for the verdict, or INVALID.",
            rich_help_panel="Limits",
        ),
    ] = "force",
    screenshots: Annotated[
        str,
        typer.Option(
            help="Screenshots in the prompt: last, all, none, or a number.", rich_help_panel="Grid"
        ),
    ] = "last",
    trees: Annotated[
        str,
        typer.Option(
            help="Recorded accessibility trees in the prompt: all, last, none, or a number "
            "(sampled, first and last included).",
            rich_help_panel="Grid",
        ),
    ] = "all",
    judge_access: Annotated[
        Literal["read-only", "writable"],
        typer.Option(
            help="writable: a private clone per judge, with the agent's whole tool surface; "
            "read-only: the shared read-only view and reading tools only.",
            rich_help_panel="Grid",
        ),
    ] = "writable",
    items: Annotated[
        Literal["each", "together"],
        typer.Option(
            help="Search answers' claims: each judged in a run of its own (AJ-Bench), or all "
            "together in one run with a verdict per claim.",
            rich_help_panel="Grid",
        ),
    ] = "each",
    backend: BackendOption = "auto",
    endpoint: EndpointOption = None,
    kind_option: KindOptionOption = None,
    environment: SuppliedEnvironments = None,
    only: OnlyOption = None,
    limit: LimitOption = None,
    item_scoring: Annotated[
        Literal["trajectory", "item"],
        typer.Option(
            help="Score claims aggregated per trajectory (PASS when all pass; AJ-Bench) or "
            "each claim as one prediction.",
            rich_help_panel="Output",
        ),
    ] = "trajectory",
    label_corrections: Annotated[
        Path | None,
        typer.Option(
            help="Score against reviewed labels: a label-correction file (JSON lines, as "
            "`agentjudge view` writes to label_corrections.jsonl); the dataset is not changed.",
            rich_help_panel="Output",
        ),
    ] = None,
    folder_corrections: Annotated[
        bool,
        typer.Option(
            help="Score against the label corrections made in `agentjudge view` "
            "(label_corrections.jsonl in the output folder) when there are any; "
            "--no-folder-corrections scores the dataset's own labels.",
            rich_help_panel="Output",
        ),
    ] = True,
    max_tokens: Annotated[
        int | None, typer.Option(help="Per-call answer token cap.", rich_help_panel="Model")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature.", rich_help_panel="Model")
    ] = None,
    reasoning_effort: Annotated[
        Literal["minimal", "low", "medium", "high"] | None,
        typer.Option(help="OpenAI reasoning models: reasoning effort.", rich_help_panel="Model"),
    ] = None,
    thinking_budget: Annotated[
        int | None,
        typer.Option(help="Anthropic extended thinking budget (tokens).", rich_help_panel="Model"),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds per model call attempt.", rich_help_panel="Model")
    ] = 120.0,
    retries: Annotated[
        int, typer.Option(min=0, help="Retries of a failed model call.", rich_help_panel="Model")
    ] = 5,
    cache: Annotated[
        bool,
        typer.Option(
            help="Reuse cached model answers (--no-cache to bypass).", rich_help_panel="Model"
        ),
    ] = True,
    grid_file: Annotated[
        Path | None,
        typer.Option(
            "--grid",
            help="YAML ablation grid (models, modes, turns, reasoning_efforts, observations, "
            "runs); its axes replace the matching options.",
            rich_help_panel="Grid",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(help="Output folder (default: runs/judge/DATASET).", rich_help_panel="Output"),
    ] = None,
    replay_output: Annotated[
        Path | None,
        typer.Option(
            help="Replay report folder (default: runs/replay/DATASET-BACKEND).",
            rich_help_panel="Output",
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(help="Ignore earlier verdicts and judge again.", rich_help_panel="Output"),
    ] = False,
    retry_invalid: Annotated[
        bool,
        typer.Option(
            help="Judge again the runs recorded INVALID (errors included).",
            rich_help_panel="Output",
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            help="When another process writes the output (or replay) folder, wait for it "
            "instead of stopping (exit code 2).",
            rich_help_panel="Output",
        ),
    ] = False,
    method_option: Annotated[
        list[str] | None,
        typer.Option(
            help="A judge method's switch as KEY=VALUE (mobile-baseline: screenshots=3..192, "
            "long_edge=PX, ui=on|off, reasoning=on|off; a3-essential: window, stride; "
            "androidarena: token_budget, fallback_screenshots; all: long_edge). Repeatable.",
            rich_help_panel="Grid",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="Where judge runs are made: local (this process) or ray (a Ray cluster's "
            "workers; install the ray extra). Records land in the output folder here either way.",
            rich_help_panel="Grid",
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: the cluster's head as HOST:PORT, or auto (default: "
            "$RAY_ADDRESS, else a one-machine cluster started for the run).",
            rich_help_panel="Grid",
        ),
    ] = None,
    dry_run: Annotated[
        Path | None,
        typer.Option(
            help="Write the exact requests (messages and images) each mode would send for every "
            "trajectory into this folder, then stop: no replay, no model.",
            rich_help_panel="Output",
        ),
    ] = None,
    dsn: DsnOption = None,
    desktop_url: DesktopUrlOption = None,
    seed_timeout: SeedTimeoutOption = None,
) -> None:
    """Replay, run the baselines, judge every trajectory in each configuration, and report.

    First the dataset is replayed (resuming `agentjudge replay`'s reports) and every verifier is
    run on the replayed state; then the baseline judges (always-PASS/FAIL, random, length
    threshold, self-report, verifier). With a model, the judge grid runs: `agent` judges inspect
    the replayed final state through MCP tools (filesystem or SQL, plus VIEW_TRAJECTORY_STEP),
    `react` does the same through a text protocol, `llm` judges read the trajectory only.
    Verdicts are appended to `verdicts.jsonl` as runs finish (rerunning resumes), conversations
    go to `logs/`. `--only` and `--limit` evaluate a subset (replay, baselines, judges and the
    report alike). The report (`report.md`, `report.html`, `report.json`) covers everything in
    the output folder. Without a model, everything but the judge grid runs and the exit code
    is 0. One process at a time writes an output folder: a second one stops with exit code 2 (or,
    with `--wait`, waits); a missing dataset folder is exit code 2 too.
    """
    require_dataset(dataset)  # before the evaluation's imports: a typo fails at once
    from bench.evaluate import EvaluationOptions
    from judge_agent.providers.registry import MODEL_ENV

    settings = parse_kind_settings(
        endpoint, kind_option, dsn=dsn, desktop_url=desktop_url, seed_timeout=seed_timeout
    )
    choice = backend_choice(backend, settings)  # the kinds check their settings before any work
    modes = _modes(mode)
    switches = _switches(method_option or [])
    try:
        check_method_options(modes, switches)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--method-option") from None
    chosen = selection(only, limit)
    if dry_run is not None:
        subset = selected_ids(dataset, chosen)
        _dry_run(dataset, dry_run, modes, switches, screenshots, subset)
        return
    grid = GridSpec(
        modes=modes,
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
        screenshots=_policy("--screenshots", screenshots),
        trees=_policy("--trees", trees),
        judge_access=judge_access,
        method_options=switches,
        items=items,
    )
    default_model = model or os.environ.get(MODEL_ENV) or None
    options = EvaluationOptions(
        models=(default_model,) if default_model else (),
        grid=grid,
        grid_file=grid_file,
        output=output,
        replay_output=replay_output,
        backend=backend,
        endpoints=choice.endpoints,
        kind_options=choice.options,
        environments=supplied_environments(environment),
        jobs=_jobs(jobs),
        max_connections=max_connections,
        cache=cache,
        fresh=fresh,
        retry_invalid=retry_invalid,
        item_scoring=item_scoring,
        label_corrections=label_corrections,
        folder_corrections=folder_corrections,
        selection=chosen,
        wait=wait,
        executor=executor,
        address=address,
    )
    result = _evaluate(dataset, options)
    print_report(result.report)
    files = result.files
    console.print(f"Report: {files.html} (also {files.markdown}, {files.json_file})", markup=False)
    _print_agent_ranking(files.markdown.parent)
    if not result.models:
        from judge_agent.providers.registry import no_model_hint

        console.print(f"{NO_MODEL_LEAD}\n{no_model_hint()}", markup=False)
        return
    if result.problems:
        raise typer.Exit(1)
