"""Building the GUI suite: task folders with generated documents, recorded runs, verifier labels.

For every task: write ``task.json``, the starting document (deterministic bytes) and
``verify.py`` (the task's check on the saved document). For every scripted run: start a fresh
desktop on the document, record the run through the desktop kind's action executor (screens and
trees per step), then replay the recording on another fresh desktop, require every step to
match, run ``verify.py`` on the document the replayed desktop saved and take its verdict as the
label. A run whose replay is not faithful, or whose label differs from what its script intended,
does not ship: the build reports it and exits 1.

``only`` rebuilds some tasks inside an existing suite (their folders and runs replaced, the
others kept); the README is always written from everything the suite then holds.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dataset.models import Trajectory, VerifierRef
from dataset.store import (
    TRAJECTORIES_DIR,
    Manifest,
    load_dataset,
    write_manifest,
    write_task,
    write_trajectory,
)
from environments.backends import BackendChoice, ProviderSet
from environments.desktop.kind import KIND as DESKTOP
from suites.ds.statistics import suite_statistics
from suites.ds.verify_script import verify_script
from suites.gui.checks import main as verify_main
from suites.gui.recorder import record_policy
from suites.gui.spec import GuiPolicy, GuiTask
from suites.labels import BuildError, verifier_label

SUITE_NAME = "gui-suite"
VERIFY_TIMEOUT = 60


@dataclass
class BuildReport:
    """What the build made."""

    trajectories: list[Trajectory] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def run_start(sequence: int) -> datetime:
    """The synthetic start time of the ``sequence``-th run of the suite."""
    return datetime(2026, 5, 4, 9, 0, tzinfo=UTC) + timedelta(minutes=7 * sequence)


def task_record(gui_task: GuiTask) -> GuiTask:
    """``gui_task`` with its verifier reference set."""
    task = gui_task.task.model_copy(
        update={"verifier": VerifierRef(timeout_seconds=VERIFY_TIMEOUT)}
    )
    return GuiTask(task, gui_task.document, gui_task.check, gui_task.checks, gui_task.policies)


def write_task_folder(output: Path, gui_task: GuiTask) -> Path:
    """``task.json``, the starting document and ``verify.py``."""
    task = task_record(gui_task).task
    folder = write_task(output, task)
    document = task.initial_state
    assert document.kind == "document"
    (folder / document.path).write_bytes(gui_task.document())
    script = verify_script(task.id, gui_task.check, verify_main)
    (folder / "verify.py").write_text(script, encoding="utf-8")
    return folder


async def record_run(
    gui_task: GuiTask, policy: GuiPolicy, output: Path, providers: ProviderSet, sequence: int
) -> Trajectory:
    """Record one scripted run on a fresh desktop; unlabelled."""
    task = task_record(gui_task).task
    kind = DESKTOP
    provider = await providers.get(kind.name)
    trajectory_id = f"{task.id}--{policy.name}"
    media = output / TRAJECTORIES_DIR / trajectory_id
    if media.exists():
        shutil.rmtree(media)
    started = run_start(sequence)
    sandbox = await provider.create(task, output / "tasks" / task.id)
    async with sandbox:
        recording = await record_policy(kind, sandbox, policy, media, trajectory_id, started)
    return Trajectory(
        id=trajectory_id,
        task_id=task.id,
        agent=policy.agent,
        model=None,
        steps=recording.steps,
        final_response=policy.final_response,
        stop_reason="completed",
        turn_count=len(recording.steps),
        started_at=started,
        ended_at=recording.ended_at,
        metadata={
            "scripted_policy": policy.name,
            "intended": policy.intent,
            "failure_kind": policy.failure,
            "messy": policy.messy,
            "action_space": policy.space,
            "note": policy.note,
            "source_benchmark": "agentjudge-gui-suite",
        },
    )


async def label_run(
    trajectory: Trajectory, gui_task: GuiTask, output: Path, providers: ProviderSet
) -> Trajectory:
    """Replay the run on another desktop, require every step to match, label it with the
    verifier's verdict on the replayed desktop's saved document."""
    task = task_record(gui_task).task
    return await verifier_label(trajectory, task, output / "tasks" / task.id, providers)


ATTEMPTS = 2
"""Times a run is recorded and replayed before its failure is reported: a desktop that does not
come up in time on a crowded machine, or a replay that diverges because a busy LibreOffice drew
late, gets a second chance; a label that differs from the intent never does."""


async def _build_run(
    gui_task: GuiTask, policy: GuiPolicy, output: Path, providers: ProviderSet, sequence: int
) -> Trajectory:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            recorded = await record_run(gui_task, policy, output, providers, sequence)
            labelled = await label_run(recorded, gui_task, output, providers)
            break
        except Exception:
            if attempt == ATTEMPTS:
                raise
    assert labelled.label is not None
    if labelled.label.value != policy.intent:
        raise BuildError(
            f"{TRAJECTORIES_DIR}/{labelled.id}.json: written to {policy.intent} ({policy.note})"
            f" but the verifier says {labelled.label.value}: {labelled.label.verifier_output}"
        )
    write_trajectory(output, labelled)
    return labelled


def _clear_task(output: Path, task_id: str) -> None:
    shutil.rmtree(output / "tasks" / task_id, ignore_errors=True)
    for path in (output / TRAJECTORIES_DIR).glob(f"{task_id}--*"):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


async def build_suite(
    output: Path,
    tasks: list[GuiTask],
    *,
    description: str,
    only: set[str] | None = None,
    jobs: int = 2,
) -> BuildReport:
    """Write the suite to ``output`` (replacing it, or only the tasks in ``only``); ``jobs``
    runs are recorded and replayed at once."""
    if only is None and output.exists():
        shutil.rmtree(output)
    write_manifest(
        output, Manifest(name=SUITE_NAME, description=description, generator="suites.gui")
    )
    (output / TRAJECTORIES_DIR).mkdir(exist_ok=True)
    chosen = [t for t in tasks if only is None or t.task.id in only]
    report = BuildReport()
    work: list[tuple[GuiTask, GuiPolicy, int]] = []
    sequence = 0
    for gui_task in tasks:
        for policy in gui_task.policies:
            sequence += 1
            if gui_task in chosen:
                work.append((gui_task, policy, sequence))
    for gui_task in chosen:
        _clear_task(output, gui_task.task.id)
        write_task_folder(output, gui_task)
    slots = asyncio.Semaphore(max(1, jobs))
    async with ProviderSet(BackendChoice()) as providers:

        async def one(gui_task: GuiTask, policy: GuiPolicy, number: int) -> Trajectory:
            async with slots:
                return await _build_run(gui_task, policy, output, providers, number)

        outcomes = await asyncio.gather(*(one(*item) for item in work), return_exceptions=True)
    for (gui_task, policy, _), outcome in zip(work, outcomes, strict=True):
        if isinstance(outcome, Exception):
            report.problems.append(f"{gui_task.task.id}--{policy.name}: {outcome}")
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            report.trajectories.append(outcome)
    loaded = load_dataset(output, partial=True)
    report.problems.extend(str(problem) for problem in loaded.errors)
    write_readme(output, tasks, list(loaded.trajectories.values()))
    return report


def folder_size(root: Path) -> int:
    """Bytes of every file below ``root``."""
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


README_HEADER = """# GUI judging suite

Built by `python -m suites.gui --output datasets/gui` (`make suite-gui`; see `suites/gui/`):
every starting document is generated with python-docx, openpyxl or python-pptx (the same bytes on
every build); every run is a scripted agent recorded on a real LibreOffice desktop through the
desktop kind's action executor, in `computer_13` or `pyautogui` actions, with a screenshot (a
64-colour PNG) and the accessibility tree after each step and the agent's reasoning; every label
is the task verifier's verdict on the document a separate replay saved, and the replay had to
match the recording at every step. Do not edit by hand: change `suites/gui/tasks/` and rebuild.
The one exception is a step's accepted screenshot variants (`screenshot_variants`, see
docs/kinds/desktop.md), which a person adds after reviewing a replay's screen; a rebuild drops
them with the screenshots they belong to.

"""


def readme_text(tasks: list[GuiTask], trajectories: list[Trajectory], sizes: dict[str, int]) -> str:
    """The suite's README: tasks, failure kinds, PASS rates, leakage statistics, size."""
    by_task: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        by_task.setdefault(trajectory.task_id, []).append(trajectory)
    lines = [
        "| task | application | kind | what the verifier checks | runs | PASS | failure kinds |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    failures: dict[str, int] = {}
    messy = 0
    spaces: dict[str, int] = {}
    for gui_task in tasks:
        task = gui_task.task
        runs = sorted(by_task.get(task.id, []), key=lambda t: t.id)
        passed = sum(t.label is not None and t.label.value == "PASS" for t in runs)
        kinds = sorted(
            {str(t.metadata.get("failure_kind")) for t in runs if t.metadata.get("failure_kind")}
        )
        for run in runs:
            kind = run.metadata.get("failure_kind")
            if kind:
                failures[str(kind)] = failures.get(str(kind), 0) + 1
            messy += bool(run.metadata.get("messy"))
            space = str(run.metadata.get("action_space"))
            spaces[space] = spaces.get(space, 0) + 1
        application = getattr(task.initial_state, "application", "")
        lines.append(
            f"| `{task.id}` | {application} | {task.metadata.get('task_kind', '')}"
            f" | {gui_task.checks} | {len(runs)} | {passed} | {', '.join(kinds)} |"
        )
    text = README_HEADER + "\n".join(lines) + "\n"
    labelled = [t for t in trajectories if t.label is not None]
    if len(labelled) >= 2:
        stats = suite_statistics(labelled, {t.task.id: t.task for t in tasks})
        apps = {"word": "Writer", "excel": "Calc", "ppt": "Impress"}
        text += "\n## Labels and leakage\n\n| figure | value |\n| --- | --- |\n"
        passed_runs = round(stats.pass_rate * stats.runs)
        text += f"| runs | {stats.runs} ({passed_runs} PASS) |\n"
        text += f"| PASS rate | {stats.pass_rate:.2f} |\n"
        for subdomain, rate in stats.pass_rate_by_subdomain.items():
            text += f"| PASS rate, {apps.get(subdomain, subdomain)} | {rate:.2f} |\n"
        text += f"| point-biserial r, step count vs label | {stats.steps_r:+.3f} |\n"
        text += (
            f"| point-biserial r, final message claims success vs label | {stats.claims_r:+.3f} |\n"
        )
        text += (
            "| failure kinds (runs) | "
            + ", ".join(f"{k} {v}" for k, v in sorted(failures.items()))
            + " |\n"
        )
        text += f"| successes with detours or undo | {messy} |\n"
        text += (
            "| action spaces (runs) | "
            + ", ".join(f"{k} {v}" for k, v in sorted(spaces.items()))
            + " |\n"
        )
    if len(labelled) >= 2:
        parts = ", ".join(f"{name} {value / 1e6:.1f} MB" for name, value in sizes.items())
        text += f"| size on disk | {sum(sizes.values()) / 1e6:.1f} MB ({parts}) |\n"
    return text


def write_readme(output: Path, tasks: list[GuiTask], trajectories: Iterable[Trajectory]) -> None:
    """Write the suite's README.md (its size figures count everything but the README)."""
    readme = output / "README.md"
    readme.unlink(missing_ok=True)
    media = output / TRAJECTORIES_DIR
    screenshots = sum(p.stat().st_size for p in media.rglob("*.png"))
    sizes = {
        "screenshots": screenshots,
        "trajectory files with their trees": folder_size(media) - screenshots,
        "tasks": folder_size(output / "tasks"),
    }
    readme.write_text(readme_text(tasks, list(trajectories), sizes), encoding="utf-8")
