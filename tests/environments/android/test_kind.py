"""The android kind: which tasks it serves, its backends, replay of recorded AndroidWorld actions
into the Chromium phone (faithful, diverged, failed), verifier inputs, judge servers, and
``agentjudge serve android`` over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters, types

from dataset.actions import AndroidAction
from dataset.store import load_dataset
from environments.android.kind import KIND, STATE_FILE_VARIABLE
from environments.backends import BackendChoice, ProviderSet
from environments.kind import JudgeServerOptions
from environments.registry import kind_for_task
from replay.engine import replay_trajectory
from sandboxes.base import SandboxError

REPO = Path(__file__).resolve().parents[3]
MOBILE = REPO / "datasets" / "mobile"
MINI = REPO / "datasets" / "examples" / "mini"


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_web_tasks_are_served_and_emulator_tasks_only_with_a_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mobile, mini = load_dataset(MOBILE), load_dataset(MINI)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    assert kind_for_task(mobile.tasks["shop-order-blue-mug"]) is KIND
    assert kind_for_task(mini.tasks["android-markor-shopping-note"]) is None
    monkeypatch.setenv("ANDROID_SERIAL", "emulator-5554")
    assert kind_for_task(mini.tasks["android-markor-shopping-note"]) is KIND
    assert KIND.backend_for("docker") == "auto"
    assert BackendChoice().kinds["android"] == "auto"


async def test_the_adb_backend_without_a_device_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    async with ProviderSet(BackendChoice(kinds={"android": "adb"})) as providers:
        with pytest.raises(SandboxError, match="set ANDROID_SERIAL to its serial"):
            await providers.get("android")


async def test_a_recorded_run_replays_faithfully_and_the_verifier_agrees() -> None:
    mobile = load_dataset(MOBILE)
    trajectory = mobile.trajectories["contacts-favourite-chloe--wrong-star"]
    task = mobile.tasks[trajectory.task_id]
    async with ProviderSet() as providers:
        result = await replay_trajectory(
            trajectory, task, mobile.task_dir(task.id), providers, keep=True
        )
        report = result.report
        assert report.verdict == "faithful", report.problems
        assert [step.status for step in report.steps] == ["match"] * len(trajectory.steps)
        assert [step.tool for step in report.steps] == [
            step.action.action_type  # type: ignore[union-attr]
            for step in trajectory.steps
        ]
        assert report.verifier is not None
        assert report.verifier.agrees is True
        assert trajectory.label is not None
        assert trajectory.label.value == "FAIL"
        assert "[FAIL] Chloe Park is a favourite" in report.verifier.replayed.output
        # The frozen end state: a judge's view shows the home screen the run ended on, and the
        # verifier inputs hold the apps' data.
        assert result.snapshot is not None
        async with await result.snapshot.clone(writable=False) as view:
            async with KIND.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
                [server] = servers
                screen = await server.call("get_screen", {})
                assert "Contacts" in text_of(screen)
                opened = await server.call("open_app", {"app_name": "Contacts"})
                assert "\N{BLACK STAR} Ben Ortiz" in text_of(opened)
            async with KIND.verifier_inputs(view) as inputs:
                exported = Path(inputs.environment[STATE_FILE_VARIABLE])
                phone = json.loads(exported.read_text())
                contacts = json.loads(phone["storage"]["contacts"]["state"])["contacts"]
                assert {c["name"]: c["favourite"] for c in contacts} == {
                    "Ben Ortiz": True,
                    "Chloe Park": False,
                }
                assert list(inputs.read_only) == [exported]
            assert not exported.exists()
        await result.snapshot.destroy()


async def test_a_changed_recording_diverges_and_a_bad_index_fails() -> None:
    mobile = load_dataset(MOBILE)
    original = mobile.trajectories["settings-bluetooth-on--careful"]
    task = mobile.tasks[original.task_id]
    steps = list(original.steps)
    wifi = steps[1].model_copy(update={"action": AndroidAction(action_type="click", index=1)})
    assert isinstance(steps[1].action, AndroidAction)
    assert steps[1].action.index != 1  # the recording tapped Bluetooth, not Wi-Fi
    nowhere = steps[2].model_copy(update={"action": AndroidAction(action_type="click", index=40)})
    changed = original.model_copy(update={"steps": [steps[0], wifi, nowhere, *steps[3:]]})
    async with ProviderSet() as providers:
        report = (
            await replay_trajectory(changed, task, mobile.task_dir(task.id), providers)
        ).report
    assert report.verdict == "failed"
    assert report.steps[0].status == "match"
    assert report.steps[1].status == "diverged"
    assert report.steps[1].effect == "state"
    assert report.steps[1].diff is not None
    assert report.steps[2].status == "failed"
    assert report.steps[2].message is not None
    assert "step 3" in report.steps[2].message
    assert "no UI element 40 on this screen" in report.steps[2].message


async def test_agentjudge_serve_android_serves_the_replayed_phone() -> None:
    trajectory_id = "shop-order-blue-mug--steady"
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentjudge", "serve", "android", trajectory_id, "--dataset", str(MOBILE)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    async with Client(parameters) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        screen = await client.call_tool("get_screen", {})
    assert {"click", "input_text", "open_app", "get_screen"} <= names
    assert "Order #1001 placed." in text_of(screen)
