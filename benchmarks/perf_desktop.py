"""``make perf-desktop``: desktop latencies and memory, printed as figures with their targets.

Measures, per desktop backend (``local`` and ``docker``; ``--backend`` picks some):
- desktop ready with a document open (Writer, Calc and Impress): from the start request until
  the control server answers, the document's window is up and the document shows in the
  accessibility tree (target: 3 s local, 5 s docker); the first desktop of the run is printed
  apart (it installs nothing, but warms the page cache);
- a PNG screenshot of the 1920x1080 screen (target 150 ms);
- the linearised accessibility tree (fetched as XML, then linearised and trimmed to the budget)
  of a Writer page (target 1 s) and of a Calc sheet (target 2 s);
- one replayed action (a click, typed text), without the pause a replay adds (target 0.5 s);
- 4 desktops started at once, all ready, and each one's peak memory (its cgroup's peak);
- GUI replay of recorded runs of ``datasets/gui`` (``--replay-runs``): the time of one replayed
  step (target 0.8 s) with where it went (the action, the wait for a settled screen, the tree,
  the comparison), and a run's time to ready for a judge (desktop start plus every step; target
  10 s for a 9-step run), each run's verdict printed;
- a GUI judge grid with more runs than jobs (``--judge-runs`` recorded runs, ``--jobs auto``)
  judged by a scripted model (``mock/...``, each answer after ``--judge-delay`` seconds, as a
  model's latency; ``--judge-turns`` answers a run: an ``OBSERVE`` of the desktop each, then a
  verdict): each judge run's wait for its desktop, from the moment its job is free to its first
  model call (target: a median under 2 s), with the environments made ahead of need
  (``GridWork.ahead``) and, for comparison, without (``--judge-compare``).

The machine is shared: each figure is a median and a 95th percentile over several runs, and,
for backends whose processes are visible from here (``local``; ``docker`` through the
container's cgroup), the CPU time the desktop's own processes spent on it (a figure the other
jobs on the machine cannot inflate). The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import io
import os
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path, PurePosixPath
from typing import Protocol

import docx
import openpyxl
import pptx
import psutil

from dataset.actions import Computer13Action
from judge_agent.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ToolInfo
from sandboxes.base import SandboxError
from sandboxes.desktop.observations import find_nodes, linearize_tree
from sandboxes.desktop.sandbox import DesktopProvider, DesktopSandbox, DocumentFile

TARGETS_MS = {
    "replay step": 800.0,
    "run ready": 10_000.0,
    "ready local": 3000.0,
    "ready docker": 5000.0,
    "screenshot": 150.0,
    "tree writer": 1000.0,
    "tree calc": 2000.0,
    "action": 500.0,
    "judge wait": 2000.0,
}
"""The issue's targets, in milliseconds."""


@asynccontextmanager
async def _local() -> AsyncIterator[DesktopProvider]:
    from sandboxes.desktop.local import LocalDesktopProvider

    async with LocalDesktopProvider() as provider:
        yield provider


@asynccontextmanager
async def _docker() -> AsyncIterator[DesktopProvider]:
    from sandboxes.desktop.docker import DockerDesktopProvider
    from sandboxes.desktop.image import ensure_desktop_image_async

    async with DockerDesktopProvider(await ensure_desktop_image_async()) as provider:
        yield provider


BACKENDS: dict[str, Callable[[], AbstractAsyncContextManager[DesktopProvider]]] = {
    "local": _local,
    "docker": _docker,
}
"""The desktop backends measured, by name."""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figure(
    name: str, seconds: list[float], target_ms: float | None = None, cpu: list[float] | None = None
) -> None:
    milliseconds = [value * 1000 for value in seconds]
    median = statistics.median(milliseconds)
    verdict = ""
    if target_ms is not None:
        verdict = f"   target {target_ms:5.0f} ms {'met' if median <= target_ms else 'MISSED'}"
    spent = f"   cpu {statistics.median(cpu) * 1000:7.1f} ms" if cpu else ""
    print(
        f"{name:<50} median {median:8.1f} ms   p95 {percentile(milliseconds, 0.95):8.1f} ms"
        f"   (n={len(milliseconds)}){spent}{verdict}"
    )


def box_cpu_seconds(desktop: DesktopSandbox) -> float | None:
    """CPU seconds (user + system) the desktop's processes have used so far, when they are
    processes of this machine (the local backend's box); None otherwise."""
    container_cpu = getattr(desktop.handle, "cpu_seconds", None)
    if container_cpu is not None:  # a container: its cgroup's accounting
        seconds: float | None = container_cpu()
        return seconds
    process = getattr(desktop.handle, "process", None)
    if process is None:
        return None
    total = 0.0
    try:
        box = psutil.Process(process.pid)
        for member in [box, *box.children(recursive=True)]:
            with_children = member.cpu_times()
            total += with_children.user + with_children.system
            total += with_children.children_user + with_children.children_system
    except psutil.Error:
        return None
    return total


async def timed(action: Awaitable[object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = await action
    return time.perf_counter() - started, result


async def timed_on(
    desktop: DesktopSandbox, action: Awaitable[object], cpu: list[float]
) -> tuple[float, object]:
    """``timed``, adding the desktop's CPU seconds for the action to ``cpu`` when known."""
    before = box_cpu_seconds(desktop)
    seconds, result = await timed(action)
    after = box_cpu_seconds(desktop)
    if before is not None and after is not None:
        cpu.append(after - before)
    return seconds, result


class _Savable(Protocol):
    def save(self, file: io.BytesIO) -> None: ...


def _save(document: _Savable) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def writer_page() -> bytes:
    """A .docx whose first page is full of text."""
    document = docx.Document()
    document.add_heading("Quarterly operations report", level=1)
    for n in range(40):
        document.add_paragraph(
            f"Paragraph {n + 1}: the team reviewed the figures of the region and agreed on the "
            "next steps for the coming weeks, with owners and dates for each item."
        )
    return _save(document)


def calc_sheet() -> bytes:
    """An .xlsx whose visible area is full: 60 rows by 30 columns of numbers and labels."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in range(1, 61):
        for column in range(1, 31):
            sheet.cell(row, column, f"r{row}" if column == 1 else row * column)
    return _save(book)


def impress_deck() -> bytes:
    """A .pptx with three title-and-content slides."""
    deck = pptx.Presentation()
    for n in range(3):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = f"Slide {n + 1}"
        slide.placeholders[1].text = "Revenue, costs and the plan for next quarter"
    return _save(deck)


DOCUMENTS: dict[str, Callable[[], bytes]] = {
    "report.docx": writer_page,
    "figures.xlsx": calc_sheet,
    "deck.pptx": impress_deck,
}


async def start(provider: DesktopProvider, name: str, data: bytes) -> DesktopSandbox:
    return await provider.start_desktop(DocumentFile(PurePosixPath(name), data))


async def tree_seconds(desktop: DesktopSandbox, runs: int, cpu: list[float]) -> list[float]:
    seconds: list[float] = []
    for _ in range(runs):
        before = box_cpu_seconds(desktop)
        started = time.perf_counter()
        linearize_tree(await desktop.client.accessibility_tree())
        seconds.append(time.perf_counter() - started)
        after = box_cpu_seconds(desktop)
        if before is not None and after is not None:
            cpu.append(after - before)
    return seconds


async def measure(backend: str, runs: int) -> None:
    print(f"-- desktop backend: {backend}")
    documents = {name: make() for name, make in DOCUMENTS.items()}
    ready_target = TARGETS_MS.get(f"ready {backend}")
    async with BACKENDS[backend]() as provider:
        seconds, first = await timed(start(provider, "report.docx", documents["report.docx"]))
        assert isinstance(first, DesktopSandbox)
        await first.destroy()
        figure(f"[{backend}] first desktop of the run (Writer)", [seconds])
        for name, data in documents.items():
            ready: list[float] = []
            ready_cpu: list[float] = []
            failures: list[str] = []
            for _ in range(runs):
                try:
                    seconds, desktop = await timed(start(provider, name, data))
                except SandboxError as error:
                    failures.append(str(error).splitlines()[0][:200])
                    continue
                ready.append(seconds)
                assert isinstance(desktop, DesktopSandbox)
                spent = box_cpu_seconds(desktop)
                if spent is not None:
                    ready_cpu.append(spent)
                await desktop.destroy()
            if ready:
                figure(f"[{backend}] ready with {name} open", ready, ready_target, ready_cpu)
            for failure in failures:
                print(f"[{backend}] {name}: a desktop failed to start: {failure}")

        await writer_figures(backend, provider, documents["report.docx"], runs)
        await calc_figures(backend, provider, documents["figures.xlsx"], runs)
        await together_figures(backend, provider, documents["report.docx"])


async def writer_figures(backend: str, provider: DesktopProvider, data: bytes, runs: int) -> None:
    writer = await start(provider, "report.docx", data)
    shots: list[float] = []
    shots_cpu: list[float] = []
    for _ in range(runs * 4):
        shots.append((await timed_on(writer, writer.client.screenshot(), shots_cpu))[0])
    figure(f"[{backend}] screenshot (PNG, 1920x1080)", shots, TARGETS_MS["screenshot"], shots_cpu)
    lines = linearize_tree(await writer.client.accessibility_tree()).count("\n")
    tree_cpu: list[float] = []
    figure(
        f"[{backend}] linearised tree, Writer page ({lines} lines)",
        await tree_seconds(writer, runs * 2, tree_cpu),
        TARGETS_MS["tree writer"],
        tree_cpu,
    )
    paragraph = find_nodes(await writer.client.accessibility_tree(), tag="paragraph")[1]
    clicks: list[float] = []
    typing: list[float] = []
    clicks_cpu: list[float] = []
    typing_cpu: list[float] = []
    for _ in range(runs * 2):
        click = Computer13Action(
            action_type="CLICK", parameters={"x": paragraph.center[0], "y": paragraph.center[1]}
        )
        clicks.append((await timed_on(writer, writer.perform(click), clicks_cpu))[0])
        text = Computer13Action(action_type="TYPING", parameters={"text": "abc <def>"})
        typing.append((await timed_on(writer, writer.perform(text), typing_cpu))[0])
    figure(f"[{backend}] one replayed action: CLICK", clicks, TARGETS_MS["action"], clicks_cpu)
    figure(
        f"[{backend}] one replayed action: TYPING 9 chars",
        typing,
        TARGETS_MS["action"],
        typing_cpu,
    )
    await writer.destroy()


async def calc_figures(backend: str, provider: DesktopProvider, data: bytes, runs: int) -> None:
    calc = await start(provider, "figures.xlsx", data)
    xml = await calc.client.accessibility_tree()
    cells = len(find_nodes(xml, tag="table-cell"))
    calc_cpu: list[float] = []
    figure(
        f"[{backend}] linearised tree, Calc sheet ({cells} visible cells)",
        await tree_seconds(calc, runs * 2, calc_cpu),
        TARGETS_MS["tree calc"],
        calc_cpu,
    )
    await calc.destroy()


async def together_figures(backend: str, provider: DesktopProvider, data: bytes) -> None:
    started = time.perf_counter()
    desktops = await asyncio.gather(*(start(provider, f"d{n}.docx", data) for n in range(4)))
    together = time.perf_counter() - started
    print(f"[{backend}] 4 desktops at once: all ready in {together:.2f} s")
    for desktop in desktops:  # some work on each, so the peak is a working desktop's
        await desktop.client.accessibility_tree()
        await desktop.client.screenshot()
    peaks = [desktop.handle.peak_memory_bytes() for desktop in desktops]
    for desktop in desktops:
        await desktop.destroy()
    if all(peak is not None for peak in peaks):
        mib = [peak / 2**20 for peak in peaks if peak is not None]
        print(
            f"[{backend}] peak memory per desktop (cgroup): median {statistics.median(mib):.0f}"
            f" MiB, max {max(mib):.0f} MiB"
        )
    else:
        print(f"[{backend}] peak memory per desktop: not measurable (no memory cgroup)")


GUI_DATASET = Path(__file__).resolve().parent.parent / "datasets" / "gui"
"""The GUI suite whose recorded runs the replay figures replay."""
REPLAY_RUNS = (
    "gui-calc-fill-line-totals--typed",
    "gui-writer-underline-warning--careful",
    "gui-impress-retitle-first--careful",
    "gui-calc-fix-price--escaped",
    "gui-writer-bold-title--careful",
)
"""Recorded runs replayed for the replay figures: the three applications, 7 to 9 steps."""


async def replay_figures(backend: str, provider: DesktopProvider, names: list[str]) -> None:
    """Replay recorded GUI runs step by step as ``agentjudge replay`` does (the desktop kind's
    ``replay_step``), timing each step and each run from its desktop's start."""
    from dataset.store import TRAJECTORIES_DIR, load_dataset
    from environments.desktop.kind import KIND
    from environments.steps import RecordedStep

    dataset = load_dataset(GUI_DATASET, partial=True)
    steps: list[float] = []
    parts: dict[str, list[float]] = {}
    for name in names:
        trajectory = dataset.trajectories.get(name)
        if trajectory is None:
            print(f"[{backend}] no run {name} in {GUI_DATASET}")
            continue
        task = dataset.tasks[trajectory.task_id]
        started = time.perf_counter()
        desktop = await provider.create(task, dataset.task_dir(task.id))
        up = time.perf_counter() - started
        statuses: list[str] = []
        ready = 0.0
        try:
            for step in trajectory.steps:
                recorded = RecordedStep(
                    step,
                    f"{TRAJECTORIES_DIR}/{name}.json",
                    trajectory,
                    GUI_DATASET / TRAJECTORIES_DIR,
                )
                fidelity = await KIND.replay_step(desktop, recorded)
                statuses.append(fidelity.status)
                steps.append(fidelity.seconds or 0.0)
                for part, seconds in (fidelity.timings or {}).items():
                    parts.setdefault(part, []).append(seconds)
            ready = time.perf_counter() - started  # a judge would take the desktop now
        finally:
            await desktop.destroy()
        verdict = "faithful" if set(statuses) <= {"match", "unrecorded"} else "NOT faithful"
        target = "met" if len(statuses) > 9 or ready <= TARGETS_MS["run ready"] / 1000 else "MISSED"
        print(
            f"[{backend}] replayed {name} ({len(statuses)} steps): desktop up {up:.1f} s, ready "
            f"for a judge {ready:.1f} s ({target} for <= 9 steps), {verdict} {statuses}"
        )
    if steps:
        figure(
            f"[{backend}] one replayed GUI step (settle, compare)", steps, TARGETS_MS["replay step"]
        )
        for part, spent in sorted(parts.items()):
            total = sum(spent) / len(steps)
            print(f"[{backend}]   of which {part}: {total * 1000:.0f} ms a step on average")


JUDGE_RUNS = (
    "gui-calc-fill-line-totals--typed",
    "gui-writer-bold-title--careful",
    "gui-impress-retitle-first--careful",
    "gui-calc-fix-price--escaped",
    "gui-writer-underline-warning--careful",
    "gui-impress-retitle-first--appended",
    "gui-calc-percent-shares--careful",
    "gui-writer-edit-status--owner-line",
    "gui-impress-move-callout--careful",
)
"""Recorded runs judged in the judge-wait grid (6 to 9 steps, the three applications): nine
runs, so with the three jobs of a 2-core machine six of them start after a job frees up (the
first three wait for desktops nobody could make before the grid started)."""

_RUN_STARTED: contextvars.ContextVar[tuple[str, float] | None] = contextvars.ContextVar(
    "run_started", default=None
)
"""The judge run the current task makes, and when its job took it (set by ``_WaitExecutor``)."""


class _WaitWatch:
    """Each judge run's wait: from its job's start to its first model call."""

    def __init__(self) -> None:
        self.waits: dict[str, float] = {}
        self.started: dict[str, float] = {}
        self.replays: dict[str, str] = {}

    def started_run(self, key: str) -> None:
        self.started[key] = time.monotonic()
        _RUN_STARTED.set((key, self.started[key]))

    def first_call(self) -> None:
        run = _RUN_STARTED.get()
        if run is not None and run[0] not in self.waits:
            self.waits[run[0]] = time.monotonic() - run[1]


def _scripted_judge(watch: _WaitWatch, turns: int, delay: float) -> Callable[[], ModelAPI]:
    """A model factory: a scripted judge that observes the desktop ``turns - 1`` times, then
    answers a verdict, each answer after ``delay`` seconds (a model's latency)."""
    from judge_agent.model import ChatMessageTool
    from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        looked = sum(isinstance(message, ChatMessageTool) for message in messages)
        if looked < turns - 1 and any(tool.name == "OBSERVE" for tool in tools):
            return reply("Scripted: looking at the desktop.", tool_call("OBSERVE"))
        return "Scripted answer, not a judgement.\nRESULT: PASS\nCONFIDENCE: Low"

    class Watched(ScriptedModel):
        async def generate(
            self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
        ) -> ModelOutput:
            watch.first_call()
            return await super().generate(messages, tools, config)

    return lambda: Watched("wait-probe", respond=respond, delay_seconds=delay)


def _wait_executor(watch: _WaitWatch) -> object:
    """``LocalExecutor`` whose runs note when their job took them (for ``_WaitWatch``)."""
    from bench.grid_runner import GridWorker, LocalExecutor
    from dataset.store import load_dataset

    class WaitExecutor(LocalExecutor):
        worker: GridWorker | None = None

        async def run(self, work, models, jobs, results_file, *, on_result=None):  # type: ignore[no-untyped-def]
            dataset = load_dataset(work.root, partial=True)
            connections = asyncio.Semaphore(max(1, work.max_connections))
            worker = GridWorker(work, dataset, models, connections, logs_root=work.output)
            self.worker = worker
            worker.expect([job.item for job in jobs])

            async def judged(planned):  # type: ignore[no-untyped-def]
                watch.started_run(planned.key)
                return await worker.judge(planned)

            try:
                return await results_file.run(
                    jobs, judged, concurrency=work.jobs, on_result=on_result
                )
            finally:
                replays = worker._replays
                if replays is not None:  # each run's replay: time, attempts, verdict
                    for trajectory_id, frozen in sorted(replays._replays.items()):
                        report = frozen.report
                        watch.replays[trajectory_id] = (
                            f"{report.seconds:.0f} s, {report.verdict}"
                            + (
                                f" after a {report.first_verdict} first"
                                if report.attempts > 1
                                else ""
                            )
                        )
                await worker.aclose()

    return WaitExecutor()


async def judge_wait_figures(
    backend: str, names: list[str], *, turns: int, delay: float, ahead: int | None
) -> list[float]:
    """Judge ``names`` in a GUI grid (agent mode, ``--jobs auto``) with the scripted judge and
    print each run's wait for its desktop; returns the waits in seconds."""
    import tempfile

    from bench.grid_runner import GridSpec, judge_dataset
    from environments.backends import BackendChoice
    from environments.capacity import auto_ahead, auto_jobs
    from environments.registry import environment_kind

    kind = environment_kind("desktop")
    jobs = auto_jobs([kind.worker_resources])
    made_ahead = auto_ahead([kind.worker_resources], jobs=jobs) if ahead is None else ahead
    watch = _WaitWatch()
    executor = _wait_executor(watch)
    grid = GridSpec(modes=("agent",), turns=(turns,))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="perf-judge-wait-") as output:
        summary = await judge_dataset(
            GUI_DATASET,
            Path(output),
            model_factory=_scripted_judge(watch, turns, delay),
            grid=grid,
            jobs=jobs,
            backend_choice=BackendChoice.for_backend(backend),  # type: ignore[arg-type]
            only=set(names),
            executor=executor,  # type: ignore[arg-type]
            ahead=ahead,
        )
    took = time.monotonic() - started
    waits = [watch.waits[key] for key in sorted(watch.waits)]
    label = f"{made_ahead} made ahead" if made_ahead else "none made ahead"
    print(
        f"[{backend}] judge grid: {len(names)} runs, {jobs} jobs, {label}, {turns} answers a run "
        f"{delay:g} s apart: {took:.0f} s, verdicts {summary.by_verdict}"
    )
    first = min(watch.started.values(), default=0.0)
    print(
        f"[{backend}]   runs in the order their jobs took them: job free at / waited (s): "
        + ", ".join(
            f"{watch.started[key] - first:.0f}/{watch.waits[key]:.1f}"
            for key in sorted(watch.waits, key=lambda key: watch.started[key])
        )
    )
    print(
        f"[{backend}]   replays (start and steps): "
        + "; ".join(f"{name}: {text}" for name, text in watch.replays.items())
    )
    if waits:
        figure(f"[{backend}] judge wait for its desktop ({label})", waits, TARGETS_MS["judge wait"])
        later = sorted(waits)[: max(0, len(waits) - jobs)]
        if later:
            print(
                f"[{backend}]   the {len(later)} runs after the first {jobs} (a job freed up): "
                f"median {statistics.median(later):.2f} s"
            )
    for problem in summary.problems:
        print(f"[{backend}]   problem: {problem}")
    return waits


async def main(
    backends: list[str],
    runs: int,
    replay_runs: list[str],
    only_replay: bool,
    *,
    judge_runs: list[str],
    judge_turns: int,
    judge_delay: float,
    judge_compare: bool,
    only_judge: bool,
) -> None:
    print("load average before: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    for backend in backends:
        if not only_replay and not only_judge:
            await measure(backend, runs)
        if not only_judge:
            print(f"-- GUI replay, desktop backend: {backend}")
            async with BACKENDS[backend]() as provider:
                await replay_figures(backend, provider, replay_runs)
        if judge_runs:
            print(f"-- GUI judge grid, desktop backend: {backend}")
            print("load average: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
            await judge_wait_figures(
                backend, judge_runs, turns=judge_turns, delay=judge_delay, ahead=None
            )
            if judge_compare:
                await judge_wait_figures(
                    backend, judge_runs, turns=judge_turns, delay=judge_delay, ahead=0
                )
    print("load average after: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", action="append", choices=sorted(BACKENDS), help="default: every backend"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (some take more)")
    parser.add_argument(
        "--replay-run",
        action="append",
        help="a recorded run of datasets/gui to replay (default: five of 7-9 steps)",
    )
    parser.add_argument("--only-replay", action="store_true", help="only the GUI replay figures")
    parser.add_argument(
        "--judge-run",
        action="append",
        help="a recorded run of datasets/gui for the judge-wait grid (default: nine of 6-9 steps)",
    )
    parser.add_argument("--judge-turns", type=int, default=4, help="scripted answers a judge run")
    parser.add_argument(
        "--judge-delay", type=float, default=3.0, help="seconds before each scripted answer"
    )
    parser.add_argument(
        "--judge-compare", action="store_true", help="also judge with nothing made ahead"
    )
    parser.add_argument("--no-judge", action="store_true", help="no judge-wait grid")
    parser.add_argument("--only-judge", action="store_true", help="only the judge-wait grid")
    options = parser.parse_args()
    asyncio.run(
        main(
            options.backend or list(BACKENDS),
            options.runs,
            options.replay_run or list(REPLAY_RUNS),
            options.only_replay,
            judge_runs=[] if options.no_judge else options.judge_run or list(JUDGE_RUNS),
            judge_turns=options.judge_turns,
            judge_delay=options.judge_delay,
            judge_compare=options.judge_compare,
            only_judge=options.only_judge,
        )
    )
