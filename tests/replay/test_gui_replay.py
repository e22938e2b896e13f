"""GUI replay on real local desktops: a trajectory recorded on one desktop replays faithfully on
another, a drifted one is reported where it drifted, and the saved document reaches the verifier.

The trajectory is recorded here: a Writer document generated with python-docx is opened on a
fresh desktop, mouse-and-keyboard actions (``computer_13``) and ``pyautogui`` code are performed
on it, and after each one the screenshot and the accessibility tree are kept, as an OSWorld run
keeps them. The task's ``verify.py`` reads the document the desktop saved (``DESKTOP_DOCUMENT``)
with python-docx. Expected texts are the ones typed by the recorded actions.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path

import docx
import pytest

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.models import DocumentState, Label, Observation, Step, Task, Trajectory, VerifierRef
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory
from environments.backends import BackendChoice, ProviderSet
from environments.desktop.kind import KIND
from environments.desktop.replay import CATCH_UP_SECONDS, compare_trees
from replay.engine import replay_trajectory
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import DesktopSandbox, DesktopSnapshot
from sandboxes.screens import compare_screens

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

TASK_ID = "gui-sign-memo"
FIRST = "Memo: the audit is complete."
SIGNATURE = "Signed: Dana Smith"

VERIFY = f"""
import os, sys
import docx
texts = [p.text for p in docx.Document(os.environ["DESKTOP_DOCUMENT"]).paragraphs]
print(texts)
sys.exit(0 if {SIGNATURE!r} in texts and {FIRST!r} in texts else 1)
"""


def _memo() -> bytes:
    document = docx.Document()
    document.add_paragraph(FIRST)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _actions(signature: str) -> list[Computer13Action | PyAutoGuiAction]:
    return [
        Computer13Action(action_type="HOTKEY", parameters={"keys": ["ctrl", "end"]}),
        Computer13Action(action_type="TYPING", parameters={"text": f"\n{signature}"}),
        PyAutoGuiAction(code="import pyautogui\npyautogui.hotkey('ctrl', 's')"),
        Computer13Action(action_type="PRESS", parameters={"key": "enter"}),  # keep .docx
        Computer13Action(action_type="WAIT"),
        PyAutoGuiAction(code="DONE"),
    ]


async def _record(root: Path) -> Path:
    """A dataset with the task and one run recorded on a real desktop."""
    write_manifest(root, Manifest(name="gui-replay"))
    task = Task(
        id=TASK_ID,
        domain="gui",
        subdomain="word",
        instruction=f"Add a last paragraph '{SIGNATURE}' to memo.docx and save it as .docx.",
        initial_state=DocumentState(
            path="memo.docx", application="writer", open_at="/home/user/Documents/memo.docx"
        ),
        verifier=VerifierRef(timeout_seconds=60),
    )
    folder = write_task(root, task)
    (folder / "memo.docx").write_bytes(_memo())
    (folder / "verify.py").write_text(VERIFY, encoding="utf-8")
    run_id = f"{TASK_ID}--recorded"
    shots = root / "trajectories" / run_id
    shots.mkdir(parents=True)
    provider = LocalDesktopProvider()
    steps: list[Step] = []
    try:
        desktop = await provider.start_from(task, folder)
        for index, action in enumerate(_actions(SIGNATURE), start=1):
            performed = await KIND.perform_action(desktop, action, screenshot=True, tree=True)
            assert performed.status in ("done", "signal"), performed.error
            assert performed.screenshot is not None
            (shots / f"step_{index}.png").write_bytes(performed.screenshot)
            steps.append(
                Step(
                    index=index,
                    action=action,
                    observation=Observation(
                        screenshot=f"{run_id}/step_{index}.png",
                        accessibility_tree=performed.accessibility_tree,
                    ),
                )
            )
        saved = await desktop.read_document()
    finally:
        await provider.aclose()
    assert saved is not None
    assert SIGNATURE in [p.text for p in docx.Document(io.BytesIO(saved)).paragraphs]
    write_trajectory(
        root,
        Trajectory(
            id=run_id,
            task_id=TASK_ID,
            agent="recorder",
            steps=steps,
            label=Label(value="PASS", source="verifier"),
        ),
    )
    return root


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return asyncio.run(_record(tmp_path_factory.mktemp("gui") / "dataset"))


async def test_a_recorded_trajectory_replays_faithfully_and_its_saved_file_passes(
    recorded: Path,
) -> None:
    dataset = load_dataset(recorded)
    trajectory = dataset.trajectories[f"{TASK_ID}--recorded"]
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            trajectory, dataset.tasks[TASK_ID], dataset.task_dir(TASK_ID), providers, keep=True
        )
        # A judge's desktop is restored from the frozen replay by performing the actions again
        # the way replay did: it shows the replayed end state.
        assert isinstance(result.snapshot, DesktopSnapshot)
        judge = await result.snapshot.clone()
        async with judge:
            seen = await judge.observe("a11y_tree")
        assert seen.linearized_tree is not None
        assert SIGNATURE in seen.linearized_tree
    report = result.report
    assert report.verdict == "faithful", [s.diff or s.message for s in report.steps]
    assert [step.status for step in report.steps] == ["match"] * 6
    assert [step.tool for step in report.steps] == [
        "HOTKEY",
        "TYPING",
        "pyautogui",
        "PRESS",
        "WAIT",
        "pyautogui DONE",
    ]
    assert all(step.screen_changed is not None for step in report.steps)
    assert report.verifier is not None
    assert report.verifier.replayed.passed, report.verifier.replayed.output
    assert report.verifier.agrees is True


async def test_a_drifted_replay_says_where_it_drifted(recorded: Path, tmp_path: Path) -> None:
    dataset = load_dataset(recorded)
    original = dataset.trajectories[f"{TASK_ID}--recorded"]
    # The record says the agent typed the full name; this replay types a shorter one.
    steps = list(original.steps)
    steps[1] = steps[1].model_copy(
        update={
            "action": Computer13Action(action_type="TYPING", parameters={"text": "\nSigned: Dana"})
        }
    )
    drifted = original.model_copy(update={"id": f"{TASK_ID}--drifted", "steps": steps})
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            drifted,
            dataset.tasks[TASK_ID],
            dataset.task_dir(TASK_ID),
            providers,
            trajectory_dir=dataset.trajectory_dir(),
        )
    report = result.report
    assert report.verdict == "diverged"
    first = report.steps[0]
    assert first.status == "match", first.diff
    typed = report.steps[1]
    assert typed.status == "diverged"
    assert typed.effect == "state"
    assert typed.diff is not None
    assert f"-paragraph\t\t{SIGNATURE}" in typed.diff
    assert "+paragraph\t\tSigned: Dana" in typed.diff
    assert typed.screen_region is not None
    assert report.verifier is not None
    assert report.verifier.agrees is False
    assert "diverged at steps" in report.verifier.explanation


LATE_TYPING = PyAutoGuiAction(
    code="import subprocess\n"
    "subprocess.Popen(['sh', '-c', 'sleep 5; xdotool type late'], stdin=subprocess.DEVNULL,"
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)"
)
"""An action whose effect shows a while after it returned, as a busy desktop paints late."""


async def test_a_screen_that_comes_late_is_caught_up_with_not_called_diverged(
    recorded: Path, tmp_path: Path
) -> None:
    dataset = load_dataset(recorded)
    original = dataset.trajectories[f"{TASK_ID}--recorded"]
    media = tmp_path / "media"
    shutil.copytree(dataset.trajectory_dir() / original.id, media / original.id)
    run_id = f"{TASK_ID}--late"
    (media / run_id).mkdir()
    task = dataset.tasks[TASK_ID]
    provider = LocalDesktopProvider()
    try:
        desktop = await provider.start_from(task, dataset.task_dir(TASK_ID))
        assert (
            await KIND.perform_action(
                desktop, original.steps[0].action, screenshot=False, tree=False
            )
        ).status == "done"
        await KIND.perform_action(desktop, LATE_TYPING, screenshot=False, tree=False)
        await asyncio.sleep(8)
        seen = await KIND.observe_screen(desktop, screenshot=True, tree=True)
    finally:
        await provider.aclose()
    assert seen.screenshot is not None
    assert seen.accessibility_tree is not None
    assert f"{FIRST}late" in seen.accessibility_tree
    (media / run_id / "step_2.png").write_bytes(seen.screenshot)
    late_step = Step(
        index=2,
        action=LATE_TYPING,
        observation=Observation(
            screenshot=f"{run_id}/step_2.png", accessibility_tree=seen.accessibility_tree
        ),
    )
    late = original.model_copy(update={"id": run_id, "steps": [original.steps[0], late_step]})
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            late, task, dataset.task_dir(TASK_ID), providers, trajectory_dir=media
        )
    step = result.report.steps[1]
    assert step.status == "match", step.diff
    assert step.caught_up_seconds is not None
    assert 0 < step.caught_up_seconds <= CATCH_UP_SECONDS


def test_screens_and_trees_are_compared_by_what_they_show(recorded: Path) -> None:
    shots = sorted((recorded / "trajectories").rglob("step_*.png"))
    before = (recorded / "trajectories" / f"{TASK_ID}--recorded" / "step_1.png").read_bytes()
    after = (recorded / "trajectories" / f"{TASK_ID}--recorded" / "step_2.png").read_bytes()
    assert len(shots) == 6
    same = compare_screens(before, before)
    assert same.same
    assert same.region is None
    typed = compare_screens(before, after)
    assert not typed.same
    assert typed.region is not None
    with pytest.raises(ValueError, match="replayed screenshot is not an image"):
        compare_screens(before, b"not a png")
    trajectory = json.loads(
        (recorded / "trajectories" / f"{TASK_ID}--recorded.json").read_text("utf-8")
    )
    first_tree = trajectory["steps"][0]["observation"]["accessibility_tree"]
    second_tree = trajectory["steps"][1]["observation"]["accessibility_tree"]
    assert compare_trees(first_tree, first_tree) is None
    diff = compare_trees(first_tree, second_tree)
    assert diff is not None
    assert f"+paragraph\t\t{SIGNATURE}" in diff


async def test_an_osworld_run_imported_from_its_files_replays_faithfully(
    recorded: Path, tmp_path: Path
) -> None:
    """The recorded run written out as OSWorld leaves it (traj.jsonl, step screenshots,
    result.txt; the task JSON downloading and opening the memo), imported, then replayed: OSWorld
    keeps no trees, so the screens alone are compared."""
    from dataset.importers.osworld import import_osworld

    dataset = load_dataset(recorded)
    trajectory = dataset.trajectories[f"{TASK_ID}--recorded"]
    example = "4c1d0e2a-9b7f-4a51-8f0e-3d2b6c7a9e10"
    run = tmp_path / "results/computer_13/screenshot/recorder/libreoffice_writer" / example
    run.mkdir(parents=True)
    lines = []
    for step in trajectory.steps:
        stamp = f"20250101@1200{step.index:02d}"
        shot = f"step_{step.index}_{stamp}.png"
        assert step.observation is not None
        assert step.observation.screenshot is not None
        (run / shot).write_bytes(
            (dataset.trajectory_dir() / step.observation.screenshot).read_bytes()
        )
        action = step.action
        recorded_action: object
        if isinstance(action, Computer13Action):
            recorded_action = {"action_type": action.action_type, "parameters": action.parameters}
        else:
            assert isinstance(action, PyAutoGuiAction)
            recorded_action = action.code
        lines.append(
            json.dumps(
                {
                    "step_num": step.index,
                    "action_timestamp": stamp,
                    "action": recorded_action,
                    "reward": 0,
                    "done": step.index == len(trajectory.steps),
                    "info": {},
                    "screenshot_file": shot,
                }
            )
        )
    (run / "traj.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (run / "result.txt").write_text("1.0\n", "utf-8")
    tasks = tmp_path / "evaluation_examples/examples/libreoffice_writer"
    tasks.mkdir(parents=True)
    url = "https://example.org/memo.docx"
    (tasks / f"{example}.json").write_text(
        json.dumps(
            {
                "id": example,
                "instruction": dataset.tasks[TASK_ID].instruction,
                "config": [
                    {
                        "type": "download",
                        "parameters": {
                            "files": [{"url": url, "path": "/home/user/Documents/memo.docx"}]
                        },
                    },
                    {"type": "open", "parameters": {"path": "/home/user/Documents/memo.docx"}},
                ],
            }
        ),
        "utf-8",
    )
    out = tmp_path / "imported"
    report = import_osworld(
        [tmp_path / "results"],
        out,
        tasks_root=tmp_path / "evaluation_examples",
        files={url: dataset.task_dir(TASK_ID) / "memo.docx"},
    )
    assert report.needed_files == []
    imported = load_dataset(out)
    (converted,) = imported.trajectories.values()
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            converted, imported.tasks[example], imported.task_dir(example), providers
        )
    steps = result.report.steps
    assert result.report.verdict == "faithful", [s.diff or s.message for s in steps]
    assert [s.status for s in steps] == ["match"] * len(trajectory.steps)


async def test_a_desktop_that_never_gets_ready_fails_its_replay_as_not_ready(
    recorded: Path,
) -> None:
    from replay.frozen import FrozenReplays
    from sandboxes.base import SandboxNotReadyError

    dataset = load_dataset(recorded)
    trajectory_id = f"{TASK_ID}--recorded"
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get(KIND.name)
        assert isinstance(provider, LocalDesktopProvider)
        provider.ready_timeout = 0.2  # far too short for any LibreOffice start
        result = await replay_trajectory(
            dataset.trajectories[trajectory_id],
            dataset.tasks[TASK_ID],
            dataset.task_dir(TASK_ID),
            providers,
        )
        report = result.report
        assert (report.verdict, report.not_ready, report.steps) == ("failed", True, [])
        assert any("2 starts never got ready" in problem for problem in report.problems)
        # A judge grid asking for this environment gets an error (an INVALID run that can be
        # made again), not a silent downgrade to trajectory-only judging.
        async with FrozenReplays(dataset, providers, verify=False) as replays:
            with pytest.raises(SandboxNotReadyError, match="never got ready"):
                await replays.environment(trajectory_id, writable=False)
            provider.ready_timeout = 120.0  # the next request replays again, and now it works
            sandbox = await replays.environment(trajectory_id, writable=False)
            assert isinstance(sandbox, DesktopSandbox)
            seen = await sandbox.observe("a11y_tree")
            assert seen.linearized_tree is not None
            assert SIGNATURE in seen.linearized_tree
