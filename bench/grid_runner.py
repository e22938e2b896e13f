"""Judging a whole dataset: the grid of judge runs, their environments, concurrency and resume.

A *judge run* is one (trajectory, mode, turn budget, model, repetition). For ``agent`` and
``react`` runs on a domain with a replay (filesystem, Postgres), the trajectory is replayed once
and frozen (``replay.frozen.FrozenReplays``); every judge of it gets a private clone of the
final state (or, with ``judge_access="read-only"``, the snapshot's shared read-only view), served
in-process by the matching MCP server, plus the trajectory server (``VIEW_TRAJECTORY_STEP``).
Where a kind's provider ``prepares_ahead`` (slow to start), the environments of the next runs are
made while the current ones judge (``GridWork.ahead``, ``FrozenReplays.expect``), so a run's
environment is ready when its job frees up. Other domains get the trajectory server only.
``llm`` runs get no tools and ignore the turn budget.

Each finished run is appended to ``verdicts.jsonl`` (flushed and synced) with its key, and its
full conversation goes to ``logs/<key>.jsonl``; running again skips keys already judged (``fresh``
starts over), so an interrupted grid loses only the runs in flight. A run the harness could not
make (its environment failed) is recorded ``INVALID`` with a ``harness:`` error rather than
retried on every invocation; ``retry_invalid`` makes every ``INVALID`` run again. Several
``JudgeArm`` (model and grid) pairs, from an ablation grid file, share one results file, one set of
frozen replays and the limits: ``jobs`` bounds concurrent judge runs, ``max_connections``
concurrent model calls. The results file, resume and concurrency are ``storage.jobs``'s, and so is
the output folder's lock: a second process judging into the same folder stops with
``storage.locks.FolderBusyError`` before any work (or waits, ``wait=True``).

Where the runs are made is an executor's (``bench.executors``): ``LocalExecutor`` here makes them
in this process with a ``GridWorker`` (models behind the connection limit, frozen replays); a
remote executor runs ``GridWorker``s elsewhere and hands the records back, and this module alone
records them.

It sits in ``bench`` because it wires the layers below together: ``replay`` (frozen replays),
``sandboxes`` (providers), ``mcp_servers`` and ``judge_agent`` (the judge loop); ``judge_agent``
itself is handed its tool servers and never starts an environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bench.model_watch import ModelProblem, ModelUnusableError, ModelWatch
from dataset.items import focus_on_item
from dataset.models import LabelSource, Task, Trajectory
from dataset.store import TRAJECTORIES_DIR, Dataset, check_dataset_folder, load_dataset
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import (
    STOPPING_FAILURES,
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ToolInfo,
)
from judge_agent.modes import ModeName, check_method_options, judge_mode, method_options_for
from judge_agent.pricing import add_costs, cost_usd, total_cost
from judge_agent.providers.registry import is_scripted
from judge_agent.records import RunLog
from judge_agent.retry import CALL_WATCHER
from judge_agent.sampling import ModelSampler
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import Verdict
from mcp_servers.serving import ToolServer
from storage.files import write_json_atomic
from storage.jobs import Job, JobResults, ResumableJobs
from storage.jsonl import read_jsonl

if TYPE_CHECKING:  # loaded when a grid needs environments (see ``_frozen_replays``)
    from bench.executors import GridExecutor
    from environments.backends import BackendChoice
    from replay.frozen import FrozenReplays, UpcomingRun

VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"
LOGS_DIR = "logs"
HARNESS_ERROR_PREFIX = "harness: "
"""Starts the error of an ``INVALID`` record whose run could not be made (the environment or the
harness failed, not the judge)."""

JudgeAccess = Literal["read-only", "writable"]
Modality = Literal["screenshot", "a11y_tree", "screenshot_a11y_tree"]
"""What a judge sees of a screen: the screenshot, the accessibility tree, or both."""
MODALITIES: tuple[Modality, ...] = ("screenshot", "a11y_tree", "screenshot_a11y_tree")

ItemJudging = Literal["each", "together"]
"""How a trajectory's single-item claims are judged: ``each`` claim in a run of its own (as
AJ-Bench does), or all ``together`` in one run that gives a verdict per claim."""


class JudgeRecord(BaseModel):
    """One line of ``verdicts.jsonl``: a judge run's key, its verdict and the label to score."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    key: str
    """Identifies the run: trajectory, mode, turn budget, model and repetition."""
    trajectory_id: str
    """The trajectory judged."""
    task_id: str
    """Its task."""
    domain: str
    """The task's domain."""
    subdomain: str
    """The task's subdomain."""
    mode: ModeName
    """The judge mode."""
    turns: int
    """The turn budget (0 for ``llm`` runs, which have none)."""
    model: str
    """``provider/model``."""
    run: int
    """The repetition, from 1."""
    item_id: str | None = None
    """The single claim this run judged alone (``items="each"``); None for a run on the whole
    trajectory."""
    variant: str = ""
    """Non-default ablation axes of the run (e.g. ``effort=high``); empty when all are default."""
    agent: str | None = None
    """The agent that produced the trajectory (for ranking fidelity)."""
    label: Literal["PASS", "FAIL"] | None
    """The ground truth of what was judged (the trajectory, or the claim ``item_id``), for
    scoring (never shown to the judge)."""
    label_source: LabelSource | None = None
    """Who decided that ground truth (``dataset.models.LabelSource``); None in records written
    before it was kept."""
    item_labels: dict[str, Literal["PASS", "FAIL"]] = Field(default_factory=dict)
    """The labelled claims' ground truth by item id, when the claims were judged together (their
    verdicts are ``verdict.items``)."""
    scripted: bool
    """True when the model is the scripted ``mock`` provider: not a judge result."""
    environment: str
    """What the judge could inspect: ``filesystem``, ``postgres`` or ``trajectory-only``."""
    verdict: Verdict
    """The verdict with its tool calls, usage, cost and stop reason."""


class GridSpec(BaseModel):
    """Which judge runs to make."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    modes: tuple[ModeName, ...] = ("agent", "llm")
    """Judge modes."""
    turns: tuple[int, ...] = (16,)
    """Turn budgets (agent and react modes)."""
    runs: int = 1
    """Repetitions of each configuration."""
    limits: JudgeLimits = Field(default_factory=JudgeLimits)
    """Limits besides the turn budget (which ``turns`` sets per run)."""
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    """Model call settings."""
    screenshots: str = "last"
    """Screenshots in the prompt."""
    method_options: dict[str, str] = Field(default_factory=dict)
    """Switches of the judge method modes (``screenshots=24``, ``ui=on``); each mode gets those
    it takes (``judge_agent.modes.method_options_for``)."""
    trees: str = "all"
    """Recorded accessibility trees in the prompt (``all``, ``last``, ``none`` or a count)."""
    judge_access: JudgeAccess = "writable"
    """``writable``: each judge gets a private clone and the agent's whole tool surface (writes
    included; the frozen state and other judges never see them). ``read-only``: judges share the
    snapshot's read-only view and get only the reading tools."""
    modality: Modality | None = None
    """The observation modality (``screenshot``, ``a11y_tree``, ``screenshot_a11y_tree``): what
    the GUI tools of ``agent`` and ``react`` judges answer with, and what an ``llm`` judge's
    rendered trajectory holds (``screenshots`` and ``trees`` then say how many of each; the
    other kind is left out). None: tools answer with both, and ``screenshots``/``trees`` alone
    decide the rendering."""
    items: ItemJudging = "each"
    """Trajectories with single-item claims: ``each`` claim judged in a run of its own, or all
    ``together`` in one run with a verdict per claim. Trajectories without claims are judged
    whole either way, and so is a labelled trajectory whose claims carry no labels."""

    @model_validator(mode="after")
    def _switches_fit_modes(self) -> GridSpec:
        check_method_options(self.modes, self.method_options)
        return self

    @property
    def variant(self) -> str:
        """The ablation axes set away from their defaults, e.g. ``effort=high screenshots=none``
        (part of each run's key, so variants of one model never overwrite each other)."""
        parts = []
        if self.generate.reasoning_effort is not None:
            parts.append(f"effort={self.generate.reasoning_effort}")
        if self.generate.thinking_budget is not None:
            parts.append(f"thinking={self.generate.thinking_budget}")
        if self.screenshots != "last":
            parts.append(f"screenshots={self.screenshots}")
        if self.trees != "all":
            parts.append(f"trees={self.trees}")
        if self.judge_access != "writable":
            parts.append(f"access={self.judge_access}")
        if self.method_options:
            switches = ",".join(f"{k}={v}" for k, v in sorted(self.method_options.items()))
            parts.append(f"options={switches}")
        if self.items != "each":
            parts.append(f"items={self.items}")
        if self.modality is not None:
            parts.append(f"modality={self.modality}")
        return " ".join(parts)

    def rendered(self) -> tuple[str, str]:
        """The screenshot and tree policies of the rendered trajectory under ``modality``: the
        modality's kinds keep their policy (``last`` screenshots and ``all`` trees when it was
        ``none``), the other kind is ``none``."""
        screenshots, trees = self.screenshots, self.trees
        if self.modality is None:
            return screenshots, trees
        shown_screenshots = screenshots if screenshots != "none" else "last"
        shown_trees = trees if trees != "none" else "all"
        return (
            "none" if self.modality == "a11y_tree" else shown_screenshots,
            "none" if self.modality == "screenshot" else shown_trees,
        )


@dataclass(frozen=True)
class JudgeArm:
    """One model with one grid: the unit ``judge_dataset`` runs (a grid file may give several)."""

    model_factory: Callable[[], ModelAPI]
    grid: GridSpec


class JudgeSummary(BaseModel):
    """What ``agentjudge judge`` prints and writes to ``summary.json``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dataset: str
    output: str
    runs: int = 0
    """Judge runs with a verdict record."""
    resumed: int = 0
    """Of those, how many came from an earlier invocation."""
    by_verdict: dict[str, int] = Field(default_factory=dict)
    """Count of PASS, FAIL and INVALID."""
    problems: list[str] = Field(default_factory=list)
    """Dataset problems and crashed runs, each naming its file or run."""
    cost_usd: float | None = 0.0
    """Total cost of the runs made now (None when a model has no price)."""
    seconds: float = 0.0
    """Wall time of this invocation."""


def run_key(
    trajectory_id: str,
    mode: str,
    turns: int,
    model: str,
    run: int,
    variant: str = "",
    item_id: str | None = None,
) -> str:
    """A stable, file-name-safe key for one judge run (of one claim, when ``item_id``)."""
    subject = trajectory_id if item_id is None else f"{trajectory_id}--item-{item_id}"
    readable = f"{subject}--{mode}--t{turns}--{model}--r{run}"
    if variant:
        readable += f"--{variant}"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", readable)
    if len(safe) > 180:
        safe = safe[:160] + "-" + hashlib.sha256(readable.encode()).hexdigest()[:16]
    return safe


@dataclass(frozen=True)
class PlannedRun:
    """One judge run to make."""

    trajectory: Trajectory
    task: Task
    mode: str
    turns: int
    run: int
    key: str
    arm: int = 0
    item_id: str | None = None

    @property
    def judged(self) -> Trajectory:
        """What the judge sees: the trajectory, or its copy about the claim ``item_id`` alone."""
        if self.item_id is None:
            return self.trajectory
        return focus_on_item(self.trajectory, self.item_id)


def _judged_per_claim(trajectory: Trajectory) -> bool:
    """Whether ``items="each"`` splits the trajectory into one run per claim: it has claims, and
    they can be scored (some claim is labelled) or nothing can (no trajectory label either). A
    labelled trajectory whose claims carry no labels is judged whole, claims listed together, so
    its verdict can still be scored against its label."""
    if not trajectory.items:
        return False
    return trajectory.label is None or any(item.label is not None for item in trajectory.items)


def plan_runs(dataset: Dataset, grid: GridSpec, model: str, arm: int = 0) -> list[PlannedRun]:
    """Every run of the grid over the dataset, in a stable order (with ``items="each"``, one
    run per claim of a trajectory that has claims)."""
    planned: list[PlannedRun] = []
    for trajectory_id, trajectory in sorted(dataset.trajectories.items()):
        task = dataset.tasks[trajectory.task_id]
        subjects: list[str | None] = [None]
        if grid.items == "each" and _judged_per_claim(trajectory):
            subjects = [item.id for item in trajectory.items]
        for mode in grid.modes:
            budgets = grid.turns if judge_mode(mode).turn_budget else (0,)
            for turns in budgets:
                for repetition in range(1, grid.runs + 1):
                    for item_id in subjects:
                        key = run_key(
                            trajectory_id, mode, turns, model, repetition, grid.variant, item_id
                        )
                        planned.append(
                            PlannedRun(trajectory, task, mode, turns, repetition, key, arm, item_id)
                        )
    return planned


def environment_notes(task: Task) -> str | None:
    """The prompt template with notes on the task's environment, from its environment kind (None
    for a task no kind serves)."""
    from environments.registry import kind_for_task

    kind = kind_for_task(task)
    return kind.prompt_notes(task) if kind is not None else None


def read_records(path: Path) -> dict[str, JudgeRecord]:
    """Records already in ``verdicts.jsonl`` by key; lines torn by a kill are rejudged."""
    return {record.key: record for record in read_jsonl(path, JudgeRecord)}


class ConnectionLimitedModel:
    """A model whose concurrent calls are bounded by a shared limit (``--max-connections``): an
    ``asyncio.Semaphore`` in one process, or a cluster-wide slot (``bench.ray_executor``)."""

    def __init__(
        self, model: ModelAPI, semaphore: contextlib.AbstractAsyncContextManager[Any]
    ) -> None:
        self.inner = model
        self.name = model.name
        self.semaphore = semaphore

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        async with self.semaphore:
            return await self.inner.generate(messages, tools, config)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Environments:
    """Tool servers for each judge run, over frozen replays made on first need."""

    def __init__(self, dataset: Dataset, replays: FrozenReplays | None, grid: GridSpec) -> None:
        self.dataset = dataset
        self.replays = replays
        self.access = grid.judge_access
        self.modality = grid.modality

    @contextlib.asynccontextmanager
    async def servers(
        self, planned: PlannedRun
    ) -> AsyncIterator[tuple[list[ToolServer[Any]], str]]:
        from environments.kind import JudgeServerOptions
        from environments.registry import kind_for_task
        from mcp_servers.trajectory.server import trajectory_server

        trajectories = trajectory_server(
            planned.trajectory, task=planned.task, base_dir=self.dataset.root / TRAJECTORIES_DIR
        )
        writable = self.access == "writable"
        async with contextlib.AsyncExitStack() as stack:
            sandbox = None
            if self.replays is not None:
                sandbox = await stack.enter_async_context(
                    self.replays.lease(planned.trajectory.id, writable=writable, ticket=planned.key)
                )
            kind = kind_for_task(planned.task) if sandbox is not None else None
            if sandbox is None or kind is None:
                yield [trajectories], "trajectory-only"
            else:
                options = JudgeServerOptions(writable=writable, observation=self.modality)
                async with kind.judge_servers(sandbox, options) as servers:
                    yield [*servers, trajectories], kind.name


@dataclass
class _Arm:
    """A model (behind the shared connection limit) with its grid."""

    model: ConnectionLimitedModel
    grid: GridSpec


@dataclass
class _Grid:
    """One invocation's judge runs: makes each one into a record."""

    root: Path
    output: Path
    dataset: Dataset
    arms: list[_Arm]

    async def judge(self, planned: PlannedRun, environments: _Environments) -> JudgeRecord:
        arm = self.arms[planned.arm]
        kind = "none"
        judged = planned.judged
        together = planned.item_id is None and bool(judged.items)
        settings = JudgeSettings(
            mode=planned.mode,
            limits=arm.grid.limits.model_copy(update={"turn_limit": max(planned.turns, 1)}),
            generate=arm.grid.generate,
            screenshots=arm.grid.rendered()[0],
            trees=arm.grid.rendered()[1],
            notes_template=environment_notes(planned.task),
            method_options=method_options_for(planned.mode, arm.grid.method_options),
        )
        log = RunLog(self.output / LOGS_DIR / f"{planned.key}.jsonl", within=self.output)
        started = time.monotonic()
        try:
            verdict, kind = await self._run(planned, arm.model, settings, environments, log)
        except Exception as error:
            # The run could not be made (sandbox, server, harness): recorded as INVALID so it
            # is counted, not silently retried; ``retry_invalid`` makes it again.
            verdict = Verdict(
                trajectory_id=planned.trajectory.id,
                verdict="INVALID",
                items={item.id: "INVALID" for item in judged.items} if together else {},
                stop_reason="error",
                error=f"{HARNESS_ERROR_PREFIX}{type(error).__name__}: {error}",
                model=arm.model.name,
                mode=planned.mode,
                wall_time_seconds=time.monotonic() - started,
                finished_at=datetime.now(UTC),
            )
        finally:
            log.close()
        label = judged.label
        return JudgeRecord(
            key=planned.key,
            trajectory_id=planned.trajectory.id,
            task_id=planned.task.id,
            domain=planned.task.domain,
            subdomain=planned.task.subdomain,
            mode=planned.mode,
            turns=planned.turns,
            model=arm.model.name,
            run=planned.run,
            item_id=planned.item_id,
            variant=arm.grid.variant,
            agent=planned.trajectory.agent,
            label=label.value if label is not None else None,
            label_source=label.source if label is not None else None,
            item_labels={item.id: item.label for item in judged.items if item.label is not None}
            if together
            else {},
            scripted=is_scripted(arm.model),
            environment=kind,
            verdict=verdict,
        )

    async def _run(
        self,
        planned: PlannedRun,
        model: ModelAPI,
        settings: JudgeSettings,
        environments: _Environments,
        log: RunLog,
    ) -> tuple[Verdict, str]:
        async def judge(toolbox: Toolbox | None) -> Verdict:
            return await judge_trajectory(
                planned.task,
                planned.judged,
                model=model,
                settings=settings,
                base_dir=self.root / TRAJECTORIES_DIR,
                toolbox=toolbox,
                log=log,
            )

        if not judge_mode(planned.mode).uses_tools:
            return await judge(None), "none"
        async with environments.servers(planned) as (servers, kind):
            # Servers that sample (e.g. page summaries) have the judge's own model write text.
            sampler = ModelSampler(model) if any(server.samples for server in servers) else None
            options = {} if sampler is None else {"sampler": sampler}
            toolbox = await Toolbox.open(servers, **options)
            try:
                verdict = await judge(toolbox)
            finally:
                await toolbox.aclose()
        if sampler is not None and sampler.calls:
            verdict = _with_sampling(verdict, sampler, model.name)
        return verdict, kind


def _with_sampling(verdict: Verdict, sampler: ModelSampler, model: str) -> Verdict:
    """The verdict with the tokens (and cost) of the messages servers had the model write."""
    usage = sampler.usage
    extra = cost_usd(model, usage)
    return verdict.model_copy(
        update={
            "tokens_in": verdict.tokens_in + usage.input_tokens,
            "tokens_out": verdict.tokens_out + usage.output_tokens,
            "cost_usd": add_costs(verdict.cost_usd, extra),
        }
    )


async def judge_dataset(
    root: Path,
    output: Path,
    *,
    model_factory: Callable[[], ModelAPI] | None = None,
    grid: GridSpec | None = None,
    arms: Sequence[JudgeArm] = (),
    jobs: int = 4,
    max_connections: int = 8,
    fresh: bool = False,
    retry_invalid: bool = False,
    backend_choice: BackendChoice | None = None,
    on_planned: Callable[[int, int], None] | None = None,
    on_record: Callable[[JudgeRecord], None] | None = None,
    on_problem: Callable[[ModelProblem], None] | None = None,
    only: set[str] | None = None,
    wait: bool = False,
    executor: GridExecutor | None = None,
    ahead: int | None = None,
) -> JudgeSummary:
    """Make every judge run of ``grid`` with ``model_factory``'s model (and of every extra arm in
    ``arms``) over the dataset at ``root``, or over the trajectories in ``only``; return the
    summary.

    Runs already recorded in ``output`` are skipped (``INVALID`` ones are made again with
    ``retry_invalid``). ``on_planned(new, reused)`` is called once the runs are planned,
    ``on_record`` after each run lands, ``on_problem`` the first time each distinct model
    failure happens (``bench.model_watch``). ``executor`` makes the runs (default: this process,
    ``LocalExecutor``; ``bench.executors`` has the others); the records land here either way.
    ``ahead`` bounds the environments made ahead of need (``GridWork.ahead``; None: from the
    machine).
    Runs recorded ``INVALID`` because the model could not be reached or refused the credentials
    are made again on the next invocation: they say nothing about the judge.

    Raises ``DatasetNotFoundError`` for a missing or unreadable ``root`` and ``FolderBusyError``
    when another process writes ``output`` (unless ``wait``), before any work;
    ``ModelUnusableError`` when the grid stopped because its model cannot be used (a few
    connection or authentication failures in a row; the runs in flight are cancelled, the
    records made stay).
    """
    all_arms = list(arms)
    if model_factory is not None:
        all_arms.insert(0, JudgeArm(model_factory, grid or GridSpec()))
    if not all_arms:
        raise ValueError("judge_dataset needs a model_factory or at least one arm")
    check_dataset_folder(root)
    with ResumableJobs(
        output / VERDICTS_FILE, JudgeRecord, lambda record: record.key, fresh=fresh, wait=wait
    ) as results_file:
        return await _judge_into(
            results_file,
            root,
            output,
            all_arms,
            jobs=jobs,
            max_connections=max_connections,
            retry_invalid=retry_invalid,
            backend_choice=backend_choice,
            on_planned=on_planned,
            on_record=on_record,
            on_problem=on_problem,
            only=only,
            executor=executor,
            ahead=ahead,
        )


async def _judge_into(
    results_file: ResumableJobs[JudgeRecord],
    root: Path,
    output: Path,
    all_arms: list[JudgeArm],
    *,
    jobs: int,
    max_connections: int,
    retry_invalid: bool,
    backend_choice: BackendChoice | None,
    on_planned: Callable[[int, int], None] | None,
    on_record: Callable[[JudgeRecord], None] | None,
    on_problem: Callable[[ModelProblem], None] | None,
    only: set[str] | None,
    executor: GridExecutor | None,
    ahead: int | None = None,
) -> JudgeSummary:
    """``judge_dataset`` once its output folder is this process's."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    dataset = load_dataset(root, partial=True)
    problems = [str(problem) for problem in dataset.problems if problem.severity == "error"]

    def kept(record: JudgeRecord) -> bool:
        """An earlier record stands, unless it is INVALID and ``retry_invalid`` asks again, or
        its model could not be used (unreachable, credentials refused)."""
        if record.verdict.model_failure in STOPPING_FAILURES:
            return False
        return not (retry_invalid and record.verdict.verdict == "INVALID")

    records = {key: record for key, record in results_file.earlier.items() if kept(record)}
    resumed = len(records)
    models = [arm.model_factory() for arm in all_arms]
    planned = [
        run
        for index, (arm, model) in enumerate(zip(all_arms, models, strict=True))
        for run in plan_runs(dataset, arm.grid, model.name, index)
        if only is None or run.trajectory.id in only
    ]
    plan = results_file.plan(
        (Job(run.key, run, name=f"judge run {run.key}") for run in planned),
        is_current=lambda _job, record: kept(record),
    )
    if on_planned is not None:
        on_planned(len(plan.pending), resumed)
    work = GridWork(
        root=root,
        output=output,
        arms=tuple(all_arms),
        jobs=jobs,
        max_connections=max_connections,
        backend_choice=backend_choice,
        ahead=ahead,
    )
    watch = ModelWatch(on_problem)
    landed = 0

    def recorded(record: JudgeRecord) -> None:
        nonlocal landed
        landed += 1
        watch.run_finished(record.verdict)
        if on_record is not None:
            on_record(record)

    try:
        results = await _watched(
            watch,
            (executor or LocalExecutor()).run(
                work, models, plan.pending, results_file, on_result=recorded
            ),
        )
    except ModelUnusableError as stop:
        stop.saved = len(plan.reused) + landed
        raise
    finally:
        for model in models:
            await model.aclose()
    records.update(results.made)
    problems.extend(results.problems)
    for record in records.values():
        error = record.verdict.error
        if error is not None and error.startswith(HARNESS_ERROR_PREFIX):
            problems.append(f"judge run {record.key}: {error.removeprefix(HARNESS_ERROR_PREFIX)}")
    by_verdict: dict[str, int] = {}
    for record in records.values():
        by_verdict[record.verdict.verdict] = by_verdict.get(record.verdict.verdict, 0) + 1
    cost = total_cost([record.verdict.cost_usd for record in results.made.values()])
    summary = JudgeSummary(
        dataset=str(root),
        output=str(output),
        runs=len(records),
        resumed=resumed,
        by_verdict=by_verdict,
        problems=problems,
        cost_usd=None if cost is None else round(cost, 6),
        seconds=loop.time() - started,
    )
    write_json_atomic(output / SUMMARY_FILE, summary.model_dump(mode="json"))
    return summary


async def _watched(
    watch: ModelWatch, running: Coroutine[Any, Any, JobResults[PlannedRun, JudgeRecord]]
) -> JobResults[PlannedRun, JudgeRecord]:
    """Run the grid with ``watch`` hearing of every model call (``CALL_WATCHER``, inherited by
    every task the run starts); when the watch trips, cancel the runs in flight and raise its
    ``ModelUnusableError``. Cancelled itself, it cancels the grid and waits for it to end."""
    token = CALL_WATCHER.set(watch)
    try:
        grid = asyncio.ensure_future(running)
    finally:
        CALL_WATCHER.reset(token)
    stopper = asyncio.ensure_future(watch.tripped())
    try:
        await asyncio.wait({grid, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (grid, stopper):
            if not task.done():
                task.cancel()
        await asyncio.gather(grid, stopper, return_exceptions=True)
    if grid.done() and not grid.cancelled() and grid.exception() is None:
        return grid.result()  # every run made, even if the watch tripped on the last ones
    if watch.stop is not None:
        raise watch.stop
    return grid.result()  # raises what the grid raised


@dataclass(frozen=True)
class GridWork:
    """What making a grid's runs needs besides the runs themselves: the same for every executor,
    and picklable (with picklable model factories) so remote workers can receive it."""

    root: Path
    """The dataset folder (a remote worker needs it at the same path)."""
    output: Path
    """The results folder on the driver (``logs/`` go there)."""
    arms: tuple[JudgeArm, ...]
    """The grid's arms, in the order ``PlannedRun.arm`` indexes."""
    jobs: int = 4
    """Judge runs made at once, across all workers."""
    max_connections: int = 8
    """Model calls made at once, across all workers."""
    backend_choice: BackendChoice | None = None
    """Sandbox backends for the replayed states (None: each kind's default)."""
    ahead: int | None = None
    """Environments made ahead of need at once, for kinds whose providers prepare ahead
    (slow to start): the next runs' replayed states are made while the current runs judge. None:
    as many as the machine holds beside ``jobs`` (``environments.capacity.auto_ahead``)."""


class GridWorker:
    """Makes judge runs of one grid in this process: the models behind a connection limit, and
    the frozen replays (started, after collecting dead runs' leftovers, on the first run that
    uses tools), closed by ``aclose``. ``LocalExecutor`` uses one; so does each Ray worker."""

    def __init__(
        self,
        work: GridWork,
        dataset: Dataset,
        models: Sequence[ModelAPI],
        connections: contextlib.AbstractAsyncContextManager[Any],
        *,
        logs_root: Path,
        collected: bool = False,
    ) -> None:
        """``collected``: the caller has just collected dead runs' leftovers (the frozen
        replays' start then does not again)."""
        self.work = work
        self.dataset = dataset
        self._collected = collected
        arms = [
            _Arm(ConnectionLimitedModel(model, connections), arm.grid)
            for model, arm in zip(models, work.arms, strict=True)
        ]
        self._grid = _Grid(work.root, logs_root, dataset, arms)
        self._stack = contextlib.AsyncExitStack()
        self._replays: FrozenReplays | None = None
        self._starting = asyncio.Lock()
        self._upcoming: list[PlannedRun] = []

    def expect(self, runs: Sequence[PlannedRun]) -> None:
        """The runs this worker will make, in the order they start: the environments of the
        next ones are made ahead while the current ones judge (``GridWork.ahead``)."""
        self._upcoming = list(runs)
        if self._replays is not None:
            self._replays.expect(self._tickets())

    def _tickets(self) -> list[UpcomingRun]:
        from replay.frozen import UpcomingRun

        writable = {
            index: arm.grid.judge_access == "writable" for index, arm in enumerate(self.work.arms)
        }
        return [
            UpcomingRun(run.key, run.trajectory.id, writable[run.arm])
            for run in self._upcoming
            if judge_mode(run.mode).uses_tools
        ]

    def _ahead(self) -> int:
        """Environments to make ahead at once (``GridWork.ahead``, else from the machine)."""
        if self.work.ahead is not None:
            return self.work.ahead
        from environments.capacity import auto_ahead
        from environments.registry import kind_for_task

        kinds = {
            kind.name: kind for kind in map(kind_for_task, self.dataset.tasks.values()) if kind
        }
        return auto_ahead((kind.worker_resources for kind in kinds.values()), jobs=self.work.jobs)

    async def _frozen(self) -> FrozenReplays:
        async with self._starting:
            if self._replays is None:
                self._replays = await _frozen_replays(
                    self._stack,
                    self.dataset,
                    self.work.backend_choice,
                    collect=not self._collected,
                    ahead=self._ahead(),
                )
                if self._upcoming:
                    self._replays.expect(self._tickets())
            return self._replays

    async def prepare(self) -> None:
        """Do now what the first run would: import the judge's servers and, when a mode of the
        grid uses tools, start the sandbox providers (a remote worker's one-time start)."""
        import mcp_servers.trajectory.server  # noqa: F401 - loaded now, not in the first run

        if any(judge_mode(mode).uses_tools for arm in self.work.arms for mode in arm.grid.modes):
            await self._frozen()

    async def judge(self, planned: PlannedRun) -> JudgeRecord:
        """One run's record; its log goes to ``<logs_root>/logs/<key>.jsonl``."""
        replays = await self._frozen() if judge_mode(planned.mode).uses_tools else None
        grid = self._grid.arms[planned.arm].grid
        return await self._grid.judge(planned, _Environments(self.dataset, replays, grid))

    async def aclose(self) -> None:
        """Close the frozen replays and their providers (the models are the caller's)."""
        await self._stack.aclose()


class LocalExecutor:
    """The default executor: every run in this process, ``work.jobs`` at once."""

    name = "local"

    async def run(
        self,
        work: GridWork,
        models: Sequence[ModelAPI],
        jobs: Sequence[Job[PlannedRun]],
        results_file: ResumableJobs[JudgeRecord],
        *,
        on_result: Callable[[JudgeRecord], None] | None = None,
    ) -> JobResults[PlannedRun, JudgeRecord]:
        dataset = load_dataset(work.root, partial=True)
        connections = asyncio.Semaphore(max(1, work.max_connections))
        worker = GridWorker(work, dataset, models, connections, logs_root=work.output)
        worker.expect([job.item for job in jobs])
        try:
            return await results_file.run(
                jobs, worker.judge, concurrency=work.jobs, on_result=on_result
            )
        finally:
            await worker.aclose()


async def _frozen_replays(
    stack: contextlib.AsyncExitStack,
    dataset: Dataset,
    backend_choice: BackendChoice | None,
    *,
    collect: bool = True,
    ahead: int = 0,
) -> FrozenReplays:
    """Sandbox providers and frozen replays for the run (making up to ``ahead`` environments
    ahead of need), closed with ``stack``; first the leftovers of dead runs are collected,
    unless ``collect`` is False (the caller just did)."""
    from environments.backends import BackendChoice, ProviderSet
    from environments.leftovers import collect_all_leftovers
    from replay.frozen import FrozenReplays

    choice = backend_choice or BackendChoice()
    if collect:
        await collect_all_leftovers(choice.endpoints)
    providers = await stack.enter_async_context(ProviderSet(choice))
    return await stack.enter_async_context(
        FrozenReplays(dataset, providers, verify=False, ahead=ahead)
    )
