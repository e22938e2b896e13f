"""The bundled mobile suite (``datasets/mobile``): its shape, labels against the apps' own
state, the hard cases it promises, its files, and (slow) a faithful replay of every run with the
verifier agreeing with every label."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dataset.actions import AndroidAction
from dataset.store import load_dataset
from environments.backends import ProviderSet
from replay.engine import replay_trajectory
from sandboxes.android.hierarchy import parse_hierarchy, render_elements, ui_elements
from suites.ds.verify_script import verify_script
from suites.mobile.build import FINAL_STATE_FILE
from suites.mobile.checks import main as verify_main
from suites.mobile.tasks import all_tasks

MOBILE = Path(__file__).resolve().parents[3] / "datasets" / "mobile"
TASKS = {mobile_task.task.id: mobile_task for mobile_task in all_tasks()}


def test_the_suite_has_ten_tasks_or_more_and_about_half_pass() -> None:
    suite = load_dataset(MOBILE)
    assert len(suite.tasks) >= 10
    assert set(suite.tasks) == set(TASKS)
    labels = Counter(t.label.value for t in suite.trajectories.values() if t.label)
    assert sum(labels.values()) == len(suite.trajectories)
    assert 0.4 <= labels["PASS"] / len(suite.trajectories) <= 0.6
    apps = {app for task in suite.tasks.values() for app in task.metadata["apps"]}  # type: ignore[union-attr]
    assert apps == {"notes", "contacts", "settings", "shop"}
    agents = {t.agent for t in suite.trajectories.values()}
    assert len(agents) >= 3  # enough agents to rank


def test_every_label_follows_from_the_apps_final_state() -> None:
    suite = load_dataset(MOBILE)
    for trajectory in suite.trajectories.values():
        state = json.loads(
            (suite.trajectory_dir() / trajectory.id / FINAL_STATE_FILE).read_text(encoding="utf-8")
        )
        passed = TASKS[trajectory.task_id].check(state)
        assert trajectory.label is not None
        assert trajectory.label.source == "verifier"
        assert trajectory.label.value == ("PASS" if passed else "FAIL"), trajectory.id
        assert trajectory.metadata["intended"] == trajectory.label.value


def test_the_hard_cases_are_there_and_are_what_they_claim() -> None:
    suite = load_dataset(MOBILE)
    by_case: dict[str, list[str]] = {}
    for trajectory in suite.trajectories.values():
        case = trajectory.metadata.get("hard_case")
        if isinstance(case, str):
            by_case.setdefault(case, []).append(trajectory.id)
    assert set(by_case) == {
        "success-mid-trajectory",
        "change-not-on-last-screen",
        "last-screen-misleads",
    }
    for trajectory_id in by_case["success-mid-trajectory"]:
        state = json.loads(
            (suite.trajectory_dir() / trajectory_id / FINAL_STATE_FILE).read_text(encoding="utf-8")
        )
        # The run ends away from the app whose state decides it: the last screen cannot show it.
        assert state["url"].startswith("http://home.phone.invalid/"), trajectory_id
    # A change the last screen does not show: two mugs were in the cart mid-run; the
    # confirmation at the end shows no quantity.
    two = suite.trajectories["shop-order-blue-mug--two-mugs"]
    seen = [step.observation.accessibility_tree or "" for step in two.steps if step.observation]
    assert any(
        '"text": "2", "class_name": "android.widget.TextView", "resource_name": '
        '"com.agentjudge.shop:id/qty-mug-blue"' in screen
        for screen in seen
    )
    assert "qty-mug-blue" not in seen[-1]
    assert "Order #1001 placed." in seen[-1]
    # A pass whose success shows only mid-run: some earlier screen shows what the home screen
    # at the end does not.
    pinned = suite.trajectories["notes-pin-trip--careful"]
    screens = [
        step.observation.accessibility_tree or "" for step in pinned.steps if step.observation
    ]
    assert any("Unpin" in screen for screen in screens[:-1])
    assert "Unpin" not in screens[-1]
    # A last screen that looks right but is not: the unsaved note shows the asked-for text.
    unsaved = suite.trajectories["notes-create-groceries--unsaved"]
    last = unsaved.steps[-1].observation
    assert last is not None
    assert last.accessibility_tree is not None
    assert '"text": "Groceries"' in last.accessibility_tree
    assert unsaved.label is not None
    assert unsaved.label.value == "FAIL"


def test_recorded_files_are_complete_and_consistent() -> None:
    suite = load_dataset(MOBILE)
    for trajectory in suite.trajectories.values():
        folder = suite.trajectory_dir() / trajectory.id
        dumps = trajectory.metadata["ui_dumps"]
        assert isinstance(dumps, list)
        assert len(dumps) == len(trajectory.steps) + 1
        for step in trajectory.steps:
            assert isinstance(step.action, AndroidAction)
            assert step.reasoning
            assert step.observation is not None
            assert step.observation.screenshot is not None
            assert (suite.trajectory_dir() / step.observation.screenshot).read_bytes()[:4] == (
                b"\x89PNG"
            )
            # The element list the agent saw is the dump of that screen, rendered.
            xml = (folder / f"step_{step.index}.xml").read_text(encoding="utf-8")
            rendered = render_elements(ui_elements(parse_hierarchy(xml)))
            assert rendered == step.observation.accessibility_tree, (trajectory.id, step.index)
        assert trajectory.steps[-1].action.action_type == "status"  # type: ignore[union-attr]


def test_the_shipped_verifiers_are_the_suites_checks() -> None:
    for task_id, mobile_task in TASKS.items():
        shipped = (MOBILE / "tasks" / task_id / "verify.py").read_text(encoding="utf-8")
        assert shipped == verify_script(task_id, mobile_task.check, verify_main), task_id


@pytest.mark.slow
async def test_every_run_replays_faithfully_and_its_verifier_agrees() -> None:
    suite = load_dataset(MOBILE)
    problems = []
    async with ProviderSet() as providers:
        for trajectory in suite.trajectories.values():
            task = suite.tasks[trajectory.task_id]
            report = (
                await replay_trajectory(trajectory, task, suite.task_dir(task.id), providers)
            ).report
            if (
                report.verdict != "faithful"
                or report.verifier is None
                or not report.verifier.agrees
            ):
                problems.append(f"{trajectory.id}: {report.verdict} {report.problems}")
    assert problems == []
