"""``evaluate()``: the whole evaluation of a dataset as one call, like Inspect's ``eval()``.

In order: the dataset's replay (resumable; it also runs every task verifier on the replayed
state), the baseline judges (written to ``baselines.jsonl``), the judge grid when judge models
are configured (``bench.grid_runner``), and finally the report over everything in the output
folder. Without a model the first two and the report still run. Every judge model is built
before any work starts, so a bad name or a missing key costs nothing.

The results folder is this process's for the whole evaluation (``storage.locks``): a second
evaluation, judge grid or replay writing it stops at once with ``FolderBusyError`` naming the
holder, or waits with ``wait``; the replay folder is locked the same way while the replay runs.

``agentjudge judge`` is argument parsing, ``evaluate()`` and printing; a caller that prints
progress subscribes to the ``EvaluationEvent`` stream. Must not print or read the command line.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PositiveInt

from bench.agent_ranking import write_agent_ranking
from bench.baselines import baseline_predictions
from bench.executors import DEFAULT_EXECUTOR, GridExecutor, make_executor
from bench.grid import GridError, expand_grid, load_grid
from bench.grid_runner import SUMMARY_FILE as JUDGE_SUMMARY_FILE
from bench.grid_runner import (
    VERDICTS_FILE,
    GridSpec,
    JudgeArm,
    JudgeRecord,
    JudgeSummary,
    judge_dataset,
    read_records,
)
from bench.item_scoring import ItemScoring
from bench.report import ReportFiles, write_report
from bench.results import BASELINES_FILE, Prediction, read_predictions, with_label_sources
from bench.scores import BenchReport
from bench.scoring import build_report
from dataset.combine import combine_datasets, suite_folders
from dataset.corrections import CORRECTIONS_FILE, read_corrections
from dataset.problems import DatasetError
from dataset.selection import Selection, SelectionError, select_trajectories
from dataset.store import DatasetNotFoundError, check_dataset_folder, load_dataset
from environments.backends import BackendChoice
from environments.capacity import auto_jobs
from environments.kind import CommandLineBackend
from environments.registry import kind_for_task
from judge_agent.model import ModelAPI, ModelFailureKind
from judge_agent.providers.registry import no_model_hint
from replay.report import FidelityReport
from replay.runner import DEFAULT_OUTPUT as REPLAY_DEFAULT_OUTPUT
from replay.runner import REPORT_FILE, ReplaySummary, read_reports, replay_dataset
from storage.files import write_json_atomic, write_text_atomic
from storage.locks import lock_folder

__all__ = [
    "CORRECTIONS_NOTE_PREFIX",
    "DEFAULT_OUTPUT",
    "DEFAULT_REPLAY_OUTPUT",
    "EARLIER_RUNS_NOTE",
    "EvaluationError",
    "EvaluationEvent",
    "EvaluationOptions",
    "EvaluationResult",
    "JudgeRunFinished",
    "JudgeRunsPlanned",
    "JudgingFinished",
    "JudgingStarted",
    "ModelProblemSeen",
    "PhaseNote",
    "ReplayFinished",
    "ReplayPlanned",
    "ReplayStarted",
    "TrajectoryReplayed",
    "corrections_note",
    "evaluate",
    "evaluate_async",
    "no_model_note",
    "replay_and_verify",
    "replay_notes",
    "report_folder",
    "write_baselines",
]

DEFAULT_OUTPUT = Path("runs/judge")
COMBINED_DATASET = "combined-dataset"
"""The folder, inside the output folder, where a folder of suites is combined into one
dataset (``dataset.combine``)."""
"""Verdicts and the report go to ``runs/judge/<dataset folder name>/`` unless told otherwise."""

DEFAULT_REPLAY_OUTPUT = REPLAY_DEFAULT_OUTPUT
"""Replay reports go to ``runs/replay/<dataset folder name>-<backend>/`` unless told otherwise:
where ``agentjudge replay`` puts them, so its reports are reused."""


def no_model_note() -> str:
    """The report's note when no judge model was configured: how to configure one, from the
    provider registry."""
    return (
        "No judge model was configured, so this report holds the baselines only. "
        + no_model_hint("sentence")
    )


EARLIER_RUNS_NOTE = (
    "No judge model was configured for this invocation; the judge rows come from earlier runs "
    "recorded in this folder."
)


class EvaluationError(Exception):
    """The options cannot run: a missing or unreadable dataset folder, a bad model name, a model
    without its key, a bad grid file.

    Raised before any work; the message is the one the underlying error gave (naming the path,
    for a dataset folder)."""


class EvaluationOptions(BaseModel):
    """How to evaluate a dataset: judge models and grid, backends, limits and folders."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    models: tuple[str, ...] = ()
    """Judge models as ``provider/model``, each run with ``grid``. Empty (and no models in
    ``grid_file``): the judge grid does not run; replay, baselines and the report still do."""
    grid: GridSpec = Field(default_factory=GridSpec)
    """Modes, turn budgets, repetitions, limits and model-call settings of every judge run."""
    grid_file: Path | None = None
    """A YAML ablation grid (``bench.grid``); its axes replace the matching ``grid`` settings and
    its ``models``, when it lists any, replace ``models``."""
    output: Path | None = None
    """Results folder (default: ``runs/judge/<dataset folder name>``)."""
    replay_output: Path | None = None
    """Replay report folder (default: ``runs/replay/<dataset folder name>-<backend>``)."""
    backend: CommandLineBackend = "auto"
    """Sandbox backend for the replayed states (``auto``: each kind's choice on this machine)."""
    endpoints: dict[str, str] = Field(default_factory=dict)
    """Existing servers the kinds connect to instead of starting their own, by kind name
    (``--endpoint``: postgres, a DSN; desktop, OSWorld VMs' control-server URLs,
    comma-separated); each kind checks its own."""
    kind_options: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    """Settings of the kinds by kind name, then field (``--kind-option``, e.g. postgres's
    ``seed_timeout``); each kind's ``options_model`` validates its own."""
    environments: dict[str, Path] = Field(default_factory=dict)
    """Starting states supplied by task id, replacing the tasks' own (``--environment``)."""
    jobs: PositiveInt | None = None
    """Concurrent replays, and concurrent judge runs (None: as many as this machine's CPUs and
    memory hold of the dataset's kinds, ``environments.capacity.auto_jobs``)."""
    max_connections: PositiveInt = 8
    """Concurrent model calls across all judge runs."""
    cache: bool = True
    """Reuse cached model answers (scripted models are never cached)."""
    fresh: bool = False
    """Ignore earlier verdicts in the results folder and judge again."""
    retry_invalid: bool = False
    """Judge again the runs recorded ``INVALID`` (harness errors included)."""
    replicates: PositiveInt = 2000
    """Bootstrap replicates behind the report's confidence intervals."""
    item_scoring: ItemScoring = "trajectory"
    """How single-item claims (search answers) are scored: ``trajectory`` (aggregated into one
    result per trajectory, AJ-Bench's way) or ``item`` (each claim one prediction)."""
    wait: bool = False
    """When another process writes the results (or replay) folder: wait for it to finish
    instead of stopping with ``FolderBusyError``."""
    label_corrections: Path | None = None
    """A label-correction file (``dataset.corrections``, e.g. the viewer's
    ``label_corrections.jsonl``): the report scores against the corrected labels."""
    executor: str = DEFAULT_EXECUTOR
    """Where the judge runs are made (``bench.executors``): ``local`` (this process) or ``ray``
    (the workers of a Ray cluster; the records still land in ``output`` on this machine)."""
    address: str | None = None
    """The cluster the executor connects to (``ray``: ``HOST:PORT`` of the head, or ``auto``);
    None: the executor's default (``ray``: ``$RAY_ADDRESS``, else a cluster started here)."""
    folder_corrections: bool = True
    """Score against the results folder's own ``label_corrections.jsonl`` (the corrections made
    in ``agentjudge view``) when it has one and no ``label_corrections`` file is given."""
    selection: Selection = Field(default_factory=Selection)
    """The trajectories to evaluate (``--only``, ``--limit``; default: all): only these are
    replayed, judged and reported on (the baselines are computed on the whole dataset, and
    reported for these)."""


class ReplayStarted(BaseModel):
    """The replay of the dataset is about to start."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["replay-started"] = "replay-started"
    """The event's name."""
    dataset: Path
    """The dataset folder."""
    folder: Path
    """Where the replay reports go."""


class TrajectoryReplayed(BaseModel):
    """One trajectory was replayed now (reports reused from an earlier run send no event)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["trajectory-replayed"] = "trajectory-replayed"
    """The event's name."""
    report: FidelityReport
    """Its fidelity report, verifier result included."""


class ReplayPlanned(BaseModel):
    """The replays are planned: how many are to make and how many earlier reports are reused."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["replay-planned"] = "replay-planned"
    """The event's name."""
    new: int
    """Replays to make now."""
    reused: int
    """Reports kept from an earlier run."""


class PhaseNote(BaseModel):
    """A slow step that makes no report is starting (e.g. a sandbox backend building its
    Docker image)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["phase-note"] = "phase-note"
    """The event's name."""
    text: str
    """What is starting, in one line."""


class ReplayFinished(BaseModel):
    """The replay and verifier check are done."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["replay-finished"] = "replay-finished"
    """The event's name."""
    summary: ReplaySummary
    """The replay table and its problems."""
    folder: Path
    """Where the replay reports are."""


class JudgingStarted(BaseModel):
    """The judge grid is about to be planned and run."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["judging-started"] = "judging-started"
    """The event's name."""
    dataset: Path
    """The dataset folder."""
    models: list[str]
    """The judge models' names, sorted."""
    folder: Path
    """The results folder."""


class JudgeRunsPlanned(BaseModel):
    """The judge runs are planned: how many are new and how many earlier records are reused."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["judge-runs-planned"] = "judge-runs-planned"
    """The event's name."""
    new: int
    """Runs to make now."""
    reused: int
    """Records kept from earlier invocations."""


class JudgeRunFinished(BaseModel):
    """One judge run finished and its record was appended to ``verdicts.jsonl``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["judge-run-finished"] = "judge-run-finished"
    """The event's name."""
    record: JudgeRecord
    """The run's record."""


class ModelProblemSeen(BaseModel):
    """A model failure with a cause not seen before in this grid (each cause is reported once;
    ``bench.model_watch``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["model-problem"] = "model-problem"
    """The event's name."""
    failure: ModelFailureKind
    """What kind of failure (``connection``, ``authentication``, ``rate-limit`` ...)."""
    cause: str
    """The call and the reason."""
    retrying: bool
    """True when the failed attempt is retried; False when a run ended on it."""
    line: str
    """The problem in one line, for a terminal."""


class JudgingFinished(BaseModel):
    """The judge grid is done."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kind: Literal["judging-finished"] = "judging-finished"
    """The event's name."""
    summary: JudgeSummary
    """Counts, problems, cost and time of this invocation's grid."""
    records: list[JudgeRecord]
    """Every record in the results file (earlier invocations' included)."""


EvaluationEvent = (
    ReplayStarted
    | ReplayPlanned
    | PhaseNote
    | TrajectoryReplayed
    | ReplayFinished
    | JudgingStarted
    | JudgeRunsPlanned
    | JudgeRunFinished
    | ModelProblemSeen
    | JudgingFinished
)
"""What ``evaluate`` reports while it runs, in this order (the judge events only with a model)."""


class EvaluationResult(BaseModel):
    """What one evaluation did and where its files are."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dataset: Path
    """The dataset folder."""
    output: Path
    """The results folder: ``baselines.jsonl``, ``verdicts.jsonl``, ``logs/``, the report."""
    replay_output: Path
    """The replay report folder."""
    models: list[str]
    """The judge models that ran, sorted; empty when none was configured."""
    replay: ReplaySummary
    """The replay table, verifier agreement and replay problems."""
    baselines: int
    """Baseline predictions written to ``baselines.jsonl``."""
    judge: JudgeSummary | None
    """The judge grid's summary; None when no model was configured."""
    report: BenchReport
    """The scored report over everything in the results folder."""
    files: ReportFiles
    """Where the report was written."""
    problems: list[str]
    """Replay and judge problems, each naming its file or run; empty when all went well."""

    @property
    def verdicts_file(self) -> Path:
        """The judge records' file (absent when no judge ever ran here)."""
        return self.output / VERDICTS_FILE

    @property
    def baselines_file(self) -> Path:
        """The baselines' predictions."""
        return self.output / BASELINES_FILE


def evaluate(
    dataset: Path,
    options: EvaluationOptions | None = None,
    *,
    on_event: Callable[[EvaluationEvent], None] | None = None,
) -> EvaluationResult:
    """Replay ``dataset``, check its verifiers, run the baselines, the judge grid (when models
    are configured) and the report; return what was done.

    Raises ``EvaluationError`` before any work when a model cannot be built or the grid file is
    bad. ``on_event`` receives the progress events, in order. Runs its own event loop; from
    async code, await ``evaluate_async``.
    """
    return asyncio.run(evaluate_async(dataset, options, on_event=on_event))


async def evaluate_async(
    dataset: Path,
    options: EvaluationOptions | None = None,
    *,
    on_event: Callable[[EvaluationEvent], None] | None = None,
) -> EvaluationResult:
    """``evaluate`` for callers that already run an event loop."""
    options = options or EvaluationOptions()

    def emit(event: EvaluationEvent) -> None:
        if on_event is not None:
            on_event(event)

    try:
        check_dataset_folder(dataset)
    except DatasetNotFoundError as error:
        raise EvaluationError(str(error)) from error
    if options.label_corrections is not None:
        if not options.label_corrections.is_file():
            raise EvaluationError(f"{options.label_corrections}: no such label-correction file")
        try:
            read_corrections(options.label_corrections)
        except ValueError as error:
            raise EvaluationError(str(error)) from error
    remote = options.executor != DEFAULT_EXECUTOR
    arms = _make_arms(_planned_arms(options), options.cache, rebuilt=remote)
    try:
        executor = make_executor(
            options.executor, **({"address": options.address} if remote else {})
        )
    except (ValueError, ImportError) as error:
        raise EvaluationError(f"executor: {error}") from error
    if options.address is not None and not remote:
        raise EvaluationError("address: only a remote executor (e.g. ray) connects to a cluster")
    try:
        choice = BackendChoice.for_backend(
            options.backend,
            endpoints=options.endpoints,
            options=options.kind_options,
            environments=options.environments,
        )
    except ValueError as error:
        raise EvaluationError(str(error)) from error
    name = dataset.resolve().name
    folder = options.output or DEFAULT_OUTPUT / name
    own_corrections = folder / CORRECTIONS_FILE
    if options.label_corrections is None and options.folder_corrections:
        try:
            read_corrections(own_corrections)  # a broken file stops before any work
        except ValueError as error:
            raise EvaluationError(str(error)) from error
    replay_folder = options.replay_output or DEFAULT_REPLAY_OUTPUT / f"{name}-{options.backend}"
    with lock_folder(folder, wait=options.wait):
        suites = suite_folders(dataset)
        if suites:
            # A folder of suites (``datasets/``) is judged as one dataset: every domain in one
            # report. The combined folder is rebuilt (hard links) on every run.
            try:
                dataset = combine_datasets(suites, folder / COMBINED_DATASET)
            except DatasetError as error:
                raise EvaluationError(str(error)) from error
        return await _evaluate_into(
            dataset, options, arms, choice, folder, replay_folder, emit=emit, executor=executor
        )


async def _evaluate_into(
    dataset: Path,
    options: EvaluationOptions,
    arms: list[JudgeArm],
    choice: BackendChoice,
    folder: Path,
    replay_folder: Path,
    *,
    emit: Callable[[EvaluationEvent], None],
    executor: GridExecutor,
) -> EvaluationResult:
    """``evaluate_async`` once the results folder is this process's."""
    only: set[str] | None = None
    if not options.selection.everything:
        try:
            only = select_trajectories(
                load_dataset(dataset, partial=True).trajectories, options.selection
            )
        except SelectionError as error:
            raise EvaluationError(f"{dataset}: {error}") from error
    emit(ReplayStarted(dataset=dataset, folder=replay_folder))
    replay_summary, replay_reports = await replay_and_verify(
        dataset,
        replay_folder,
        choice,
        jobs=options.jobs,
        on_report=lambda report: emit(TrajectoryReplayed(report=report)),
        wait=options.wait,
        on_planned=lambda new, reused: emit(ReplayPlanned(new=new, reused=reused)),
        on_note=lambda text: emit(PhaseNote(text=text)),
        only=only,
    )
    emit(ReplayFinished(summary=replay_summary, folder=replay_folder))
    baselines = write_baselines(dataset, folder, replay_reports)

    problems = list(replay_summary.problems)
    models = sorted({arm.model_factory().name for arm in arms})
    judge_summary: JudgeSummary | None = None
    if arms:
        emit(JudgingStarted(dataset=dataset, models=models, folder=folder))
        judge_summary = await judge_dataset(
            dataset,
            folder,
            arms=arms,
            jobs=options.jobs or dataset_jobs(dataset),
            max_connections=options.max_connections,
            fresh=options.fresh,
            retry_invalid=options.retry_invalid,
            backend_choice=choice,
            on_planned=lambda new, reused: emit(JudgeRunsPlanned(new=new, reused=reused)),
            on_record=lambda record: emit(JudgeRunFinished(record=record)),
            on_problem=lambda problem: emit(
                ModelProblemSeen(
                    failure=problem.kind,
                    cause=problem.cause,
                    retrying=problem.retrying,
                    line=str(problem),
                )
            ),
            wait=options.wait,
            executor=executor,
            only=only,
        )
        records = list(read_records(folder / VERDICTS_FILE).values())
        emit(JudgingFinished(summary=judge_summary, records=records))
        problems.extend(judge_summary.problems)
    else:
        summary_path = folder / JUDGE_SUMMARY_FILE
        if not summary_path.exists():  # names the dataset for `agentjudge report`
            write_json_atomic(
                summary_path,
                JudgeSummary(dataset=str(dataset), output=str(folder)).model_dump(mode="json"),
            )
    report, files = report_folder(
        folder,
        notes=replay_notes(replay_summary),
        model_configured=bool(arms),
        replicates=options.replicates,
        item_scoring=options.item_scoring,
        label_corrections=options.label_corrections,
        folder_corrections=options.folder_corrections,
        trajectories=only,
        selection=options.selection,
    )
    return EvaluationResult(
        dataset=dataset,
        output=folder,
        replay_output=replay_folder,
        models=models,
        replay=replay_summary,
        baselines=len(baselines),
        judge=judge_summary,
        report=report,
        files=files,
        problems=problems,
    )


def _planned_arms(options: EvaluationOptions) -> list[tuple[str, GridSpec]]:
    """Each (model name, grid) pair to run: the grid file's product, or every model with
    ``options.grid``."""
    if options.grid_file is None:
        return [(model, options.grid) for model in options.models]
    try:
        return expand_grid(load_grid(options.grid_file), options.grid, list(options.models))
    except GridError as error:
        raise EvaluationError(str(error)) from error


def _make_arms(
    planned: list[tuple[str, GridSpec]], cache: bool, *, rebuilt: bool = False
) -> list[JudgeArm]:
    """Build each arm's model now, so a bad name or a missing key stops before any work.

    With ``rebuilt`` (a remote executor), each arm's factory builds its model again by name
    wherever it is called, so it can be sent to a worker; otherwise it returns the model built
    here."""
    from judge_agent.model import ModelError
    from judge_agent.providers.registry import get_model

    arms: list[JudgeArm] = []
    for name, spec in planned:
        try:
            made = get_model(name)
        except (ValueError, ImportError, ModelError) as error:
            raise EvaluationError(str(error)) from error
        model = _cached(made, cache)
        factory = (
            functools.partial(_built, name, cache) if rebuilt else functools.partial(_same, model)
        )
        arms.append(JudgeArm(factory, spec))
    return arms


def _cached(model: ModelAPI, cache: bool) -> ModelAPI:
    """``model`` behind the answer cache, unless caching is off or the model is scripted."""
    from judge_agent.cache import CachedModel
    from judge_agent.providers.registry import is_scripted

    return CachedModel(model) if cache and not is_scripted(model) else model


def _built(name: str, cache: bool) -> ModelAPI:
    """The model ``name`` built in the calling process (a remote worker's factory)."""
    from judge_agent.providers.registry import get_model

    return _cached(get_model(name), cache)


def dataset_jobs(root: Path) -> int:
    """Runs at once for the dataset at ``root``: as many as this machine holds of its tasks'
    kinds (``environments.capacity.auto_jobs``)."""
    tasks = load_dataset(root, partial=True).tasks.values()
    kinds = {kind.name: kind for kind in map(kind_for_task, tasks) if kind is not None}
    return auto_jobs(kind.worker_resources for kind in kinds.values())


def _same(model: ModelAPI) -> ModelAPI:
    return model


async def replay_and_verify(
    root: Path,
    folder: Path,
    choice: BackendChoice,
    *,
    jobs: int | None = None,
    on_report: Callable[[FidelityReport], None] | None = None,
    wait: bool = False,
    on_planned: Callable[[int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    only: set[str] | None = None,
) -> tuple[ReplaySummary, dict[str, FidelityReport]]:
    """Replay the dataset (or the trajectories in ``only``) into ``folder`` (resuming an earlier
    ``agentjudge replay`` there) and return the summary and each trajectory's report, verifier
    result included."""
    with lock_folder(folder, wait=wait):  # held until the reports are read back
        summary = await replay_dataset(
            root,
            folder,
            choice=choice,
            jobs=jobs,
            on_report=on_report,
            wait=wait,
            on_planned=on_planned,
            on_note=on_note,
            only=only,
        )
        return summary, read_reports(folder / REPORT_FILE)


def replay_notes(summary: ReplaySummary) -> list[str]:
    """What the replay could not do, said plainly for the report."""
    total = summary.total
    notes: list[str] = []
    if total.diverged or total.failed:
        notes.append(
            f"{total.diverged} replay(s) diverged and {total.failed} failed: tool-using judges of "
            "those trajectories saw a state that may differ from the one the agent left, and the "
            "verifier baseline is INVALID where no verifier ran (see the replay reports)."
        )
    if total.unsupported:
        notes.append(
            f"{total.unsupported} trajectory(ies) belong to domains without a replay yet: their "
            "judges had the trajectory only (no environment tools) and the verifier baseline is "
            "INVALID on them."
        )
    return notes


def write_baselines(
    root: Path, output: Path, replay_reports: dict[str, FidelityReport] | None
) -> list[Prediction]:
    """Compute every baseline on the dataset at ``root`` and (re)write ``baselines.jsonl``.

    Always over the whole dataset, also when a run judges a subset: some baselines are fitted
    on all the trajectories they see (the length threshold), so a subset's would differ from
    the same trajectories' in a whole run; the report keeps the subset's rows."""
    dataset = load_dataset(root, partial=True)
    predictions = baseline_predictions(dataset.trajectories, dataset.tasks, replay_reports)
    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(
        output / BASELINES_FILE,
        "".join(prediction.model_dump_json() + "\n" for prediction in predictions),
    )
    return predictions


def report_folder(
    folder: Path,
    *,
    output: Path | None = None,
    notes: Sequence[str] = (),
    model_configured: bool = True,
    replicates: int = 2000,
    item_scoring: ItemScoring = "trajectory",
    label_corrections: Path | None = None,
    label_sources: Collection[str] = (),
    folder_corrections: bool = True,
    trajectories: Collection[str] | None = None,
    selection: Selection | None = None,
) -> tuple[BenchReport, ReportFiles]:
    """Score everything in a judge output folder and write the report (into ``output``, by
    default the folder itself). ``model_configured=False`` says in the report that no judge
    could run now. ``label_corrections`` (a ``dataset.corrections`` file) replaces the labels
    it corrects; without it, the folder's own ``label_corrections.jsonl`` (the corrections made
    in ``agentjudge view``) is applied unless ``folder_corrections`` is False; the report says
    how many labels were corrected, and from which file. ``label_sources``
    (``dataset.models.LabelSource`` names) scores only the trajectories whose label came from
    one of them; ``trajectories`` (ids chosen by ``selection``), only those. Raises
    ``ValueError`` naming the file and line when a correction file does not parse."""
    corrections_file = label_corrections
    if corrections_file is None and folder_corrections:
        own = folder / CORRECTIONS_FILE
        corrections_file = own if own.is_file() else None
    predictions = read_predictions(folder, corrections_file)
    if trajectories is not None:
        kept = set(trajectories)
        predictions = [p for p in predictions if p.trajectory_id in kept]
    if label_sources:
        predictions = with_label_sources(predictions, label_sources)
    dataset = str(folder)
    summary_path = folder / JUDGE_SUMMARY_FILE
    if summary_path.is_file():
        dataset = json.loads(summary_path.read_text(encoding="utf-8")).get("dataset", dataset)
    all_notes = list(notes)
    if corrections_file is not None:
        all_notes.append(
            corrections_note(corrections_file, predictions, from_folder=label_corrections is None)
        )
    if trajectories is not None:
        chosen = selection.describe() if selection is not None else "a selection"
        all_notes.append(
            f"Scored only the {len(set(trajectories))} trajectory(ies) chosen by {chosen}."
        )
    if label_sources:
        all_notes.append(
            "Scored only against labels decided by: "
            + ", ".join(sorted(set(label_sources)))
            + f" ({len({p.subject for p in predictions})} labelled subject(s))."
        )
    judged = any(p.config.kind == "judge" for p in predictions)
    if not model_configured:
        all_notes.append(no_model_note() if not judged else EARLIER_RUNS_NOTE)
    elif not judged:
        all_notes.append("No judge verdicts in these results: the report holds baselines only.")
    report = build_report(
        predictions,
        dataset=dataset,
        title=f"Judge evaluation: {Path(dataset).name}",
        notes=all_notes,
        replicates=replicates,
        item_scoring=item_scoring,
    )
    files = write_report(report, output or folder)
    write_agent_ranking(output or folder, predictions, Path(dataset), replicates=replicates)
    return report, files


CORRECTIONS_NOTE_PREFIX = "Labels corrected by review:"
"""How the report's note on applied label corrections starts (the command line prints it)."""


def corrections_note(path: Path, predictions: Sequence[Prediction], *, from_folder: bool) -> str:
    """The report's note on the label corrections of ``path``: how many labels of these
    predictions they correct, how many name nothing here, and (for the results folder's own
    file, applied by default) how to score the dataset's labels instead."""
    corrections = read_corrections(path)
    subjects = {(p.trajectory_id, p.item_id) for p in predictions}
    applied = sum(key in subjects for key in corrections)
    note = f"{CORRECTIONS_NOTE_PREFIX} {applied} label(s) from {path} replace the dataset's"
    unused = len(corrections) - applied
    if unused:
        note += f"; {unused} correction(s) there name no trajectory in these results"
    if from_folder:
        note += (
            " (the corrections made in `agentjudge view`, applied by default; "
            "--no-folder-corrections scores the dataset's own labels)"
        )
    return note + "."
