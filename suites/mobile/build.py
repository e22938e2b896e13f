"""Building the mobile suite: task folders with web snapshots, recorded runs, verifier labels.

For every task: write ``task.json``, the web snapshot folder ``device/`` (each app's starting
data; the suite's four apps are one copy in the dataset's ``assets/``, shared by every task) and
``verify.py`` (the task's check on the phone's state). For every
scripted run: start a fresh phone from the snapshot in the Chromium backend, record the run
through the device MCP server, keep the phone's final app data (``final_state.json``), then
replay the recording into another fresh phone, require every step's element list to match, run
``verify.py`` on the replayed state and take its verdict as the label. A run whose label differs
from what its script intended, or whose replay drifts, stops the build with the reason.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mcp import Client

from dataset.assets import ASSETS_DIR, DATASET_PREFIX
from dataset.models import AppSnapshotState, Task, Trajectory, VerifierRef
from dataset.store import TRAJECTORIES_DIR, Manifest, write_manifest, write_task, write_trajectory
from environments.backends import BackendChoice, ProviderSet
from environments.registry import environment_kind
from sandboxes.android.sandbox import AndroidSandbox
from suites.ds.verify_script import verify_script
from suites.labels import verifier_label
from suites.mobile.checks import main as verify_main
from suites.mobile.recorder import record_moves
from suites.mobile.spec import MobilePolicy, MobileTask

SUITE_NAME = "mobile-suite"
APPS = Path(__file__).parent / "apps"
"""The suite's web apps (every task's phone has all of them)."""
APPS_ASSET = f"{ASSETS_DIR}/mobile-apps"
"""Where the dataset keeps its one copy of ``APPS``, relative to its root."""
SNAPSHOT_FOLDER = "device"
"""The web snapshot folder inside each task folder."""
FINAL_STATE_FILE = "final_state.json"
"""Each run's final app data, in its trajectory folder (what the label was computed from)."""


@dataclass
class BuildReport:
    """What the build made."""

    trajectories: list[Trajectory] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def run_start(sequence: int) -> datetime:
    """The synthetic start time of the ``sequence``-th recorded run."""
    return datetime(2026, 4, 6, 10, 0, tzinfo=UTC) + timedelta(minutes=11 * sequence)


def task_record(mobile_task: MobileTask) -> Task:
    """The task as the dataset holds it: its verifier set, its phone's apps the shared ones."""
    state = mobile_task.task.initial_state
    assert isinstance(state, AppSnapshotState)
    shared = state.model_copy(update={"apps": f"{DATASET_PREFIX}{APPS_ASSET}"})
    return mobile_task.task.model_copy(
        update={"verifier": VerifierRef(timeout_seconds=60), "initial_state": shared}
    )


def write_task_folder(output: Path, mobile_task: MobileTask) -> Path:
    """``task.json``, ``device/`` (``storage.json``) and ``verify.py``; the shared apps into
    the dataset's assets (once)."""
    task = task_record(mobile_task)
    folder = write_task(output, task)
    if not (output / APPS_ASSET).exists():
        shutil.copytree(APPS, output / APPS_ASSET)
    snapshot = folder / SNAPSHOT_FOLDER
    snapshot.mkdir()
    storage = {app: {"state": json.dumps(state)} for app, state in mobile_task.storage.items()}
    (snapshot / "storage.json").write_text(json.dumps(storage, indent=1) + "\n", encoding="utf-8")
    script = verify_script(task.id, mobile_task.check, verify_main)
    (folder / "verify.py").write_text(script, encoding="utf-8")
    return folder


async def record_run(
    mobile_task: MobileTask,
    policy: MobilePolicy,
    output: Path,
    providers: ProviderSet,
    sequence: int,
) -> Trajectory:
    """Record one scripted run on a fresh phone; unlabelled."""
    task = task_record(mobile_task)
    kind = environment_kind("android")
    provider = await providers.get(kind.name)
    folder = output / "tasks" / task.id
    trajectory_id = f"{task.id}--{policy.name}"
    media = output / TRAJECTORIES_DIR / trajectory_id
    started = run_start(sequence)
    sandbox = await provider.create(task, folder)
    async with sandbox:
        assert isinstance(sandbox, AndroidSandbox)
        server = kind.agent_server(sandbox)
        assert server is not None
        async with Client(server.server()) as client:
            recording = await record_moves(
                client, sandbox.device, policy.moves, media, trajectory_id, started
            )
        state = await sandbox.device.state()  # type: ignore[attr-defined]
        (media / "final_state.json").write_text(
            json.dumps({"storage": state.storage, "url": state.url}, indent=1, sort_keys=True)
            + "\n",
            encoding="utf-8",
        )
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
            "hard_case": policy.hard_case,
            "note": policy.note,
            "initial_screenshot": f"{trajectory_id}/step_0.png",
            "initial_ui_elements": recording.initial_listing,
            "ui_dumps": [f"{trajectory_id}/step_{n}.xml" for n in range(len(recording.steps) + 1)],
            "final_state": f"{trajectory_id}/{FINAL_STATE_FILE}",
            "source_benchmark": "agentjudge-mobile-suite",
        },
    )


async def label_run(
    trajectory: Trajectory, mobile_task: MobileTask, output: Path, providers: ProviderSet
) -> Trajectory:
    """Replay the run, require every step to match, label it with the verifier's verdict."""
    folder = output / "tasks" / mobile_task.task.id
    return await verifier_label(trajectory, task_record(mobile_task), folder, providers)


async def build_suite(output: Path, tasks: list[MobileTask], *, description: str) -> BuildReport:
    """Write the whole suite to ``output`` (replacing it); runs are recorded one at a time."""
    if output.exists():
        shutil.rmtree(output)
    write_manifest(
        output, Manifest(name=SUITE_NAME, description=description, generator="suites.mobile")
    )
    (output / TRAJECTORIES_DIR).mkdir()
    report = BuildReport()
    sequence = 0
    async with ProviderSet(BackendChoice(kinds={"android": "chromium"})) as providers:
        for mobile_task in tasks:
            write_task_folder(output, mobile_task)
            for policy in mobile_task.policies:
                sequence += 1
                try:
                    recorded = await record_run(mobile_task, policy, output, providers, sequence)
                    labelled = await label_run(recorded, mobile_task, output, providers)
                except Exception as error:
                    report.problems.append(f"{mobile_task.task.id}--{policy.name}: {error}")
                    continue
                assert labelled.label is not None
                if labelled.label.value != policy.intent:
                    report.problems.append(
                        f"{labelled.id}: written to {policy.intent} ({policy.note}) but the "
                        f"verifier says {labelled.label.value}: {labelled.label.verifier_output}"
                    )
                    continue
                write_trajectory(output, labelled)
                report.trajectories.append(labelled)
    return report
