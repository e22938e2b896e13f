"""The step renderer: what the judge's prompt shows, what it never shows, cuts and screenshots."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from pydantic import JsonValue

from dataset.actions import ToolCallAction
from dataset.models import Observation, Step, Task, Trajectory
from dataset.rendering import (
    ACCESSIBILITY_TREE_CHARS,
    ACTION_CHARS,
    FINAL_ACCESSIBILITY_TREE_CHARS,
    HEAD_STEPS,
    MAX_STEPS_SHOWN,
    OBSERVATION_TEXT_CHARS,
    STEPS_CHAR_BUDGET,
    render_trajectory,
)
from dataset.store import Dataset, load_dataset

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "datasets" / "examples" / "mini"
SCREENSHOT_RUN = "word-memo-q4-update--c13-pass"


@pytest.fixture(scope="module")
def mini() -> Dataset:
    return load_dataset(MINI)


def _strings(value: JsonValue) -> list[str]:
    """Every string inside a JSON value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *_strings(item)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_mini_dataset_covers_every_domain(mini: Dataset) -> None:
    domains = {mini.tasks[t.task_id].domain for t in mini.trajectories.values()}
    assert domains == {"ds", "gui", "mobile", "search"}


@pytest.mark.parametrize("trajectory_id", sorted(load_dataset(MINI).trajectories))
def test_every_mini_trajectory_renders_without_leaking_the_ground_truth(
    mini: Dataset, trajectory_id: str
) -> None:
    trajectory = mini.trajectories[trajectory_id]
    task = mini.tasks[trajectory.task_id]
    rendered = render_trajectory(
        task, trajectory, base_dir=mini.trajectory_dir(), screenshots="all"
    )
    text = rendered.text

    # What must be there.
    assert task.instruction.strip() in text
    assert f"Domain: {task.domain} (subdomain: {task.subdomain})" in text
    for step in trajectory.steps:
        assert f"### Step {step.index}\n" in text
        if step.reasoning:
            assert step.reasoning.strip() in text
    if trajectory.final_response:
        assert trajectory.final_response.strip() in text
    for item in trajectory.items:
        assert item.text in text
    assert rendered.shown_steps == [step.index for step in trajectory.steps]

    # What must never be there.
    secrets = [trajectory.id, *trajectory.screenshots]
    label = trajectory.label
    assert label is not None
    if label.verifier_output:
        secrets += [line for line in label.verifier_output.splitlines() if len(line) > 6]
    if label.error_message:
        secrets.append(label.error_message)
    secrets += list(label.votes)
    secrets += [s for s in _strings(dict(trajectory.metadata)) if len(s) > 3]
    secrets += [s for s in _strings(trajectory.provenance.details) if len(s) > 3]
    secrets += [s for s in _strings(dict(task.metadata)) if len(s) > 8]
    if trajectory.model:
        secrets.append(trajectory.model)
    # A secret that also occurs in what the agent did or saw may legitimately appear.
    visible = task.instruction + trajectory.model_dump_json(include={"steps", "final_response"})
    for secret in secrets:
        if secret in visible and secret not in (trajectory.id, *trajectory.screenshots):
            continue
        assert secret not in text, f"{secret!r} leaked into the rendering"
    assert "annotator" not in text.lower()


def _ds_task() -> Task:
    return Task.model_validate(
        {
            "id": "synthetic-task",
            "domain": "ds",
            "subdomain": "filesystem",
            "instruction": "Write the report.",
            "initial_state": {"kind": "empty"},
        }
    )


def _step(index: int, *, text: str | None = None, tree: str | None = None, arg: str = "x") -> Step:
    return Step(
        index=index,
        action=ToolCallAction(name="read_text_file", arguments={"path": arg}),
        observation=Observation(text=text, accessibility_tree=tree),
    )


def _trajectory(steps: list[Step], **fields: object) -> Trajectory:
    return Trajectory.model_validate(
        {
            "id": "synthetic-run--pass",
            "task_id": "synthetic-task",
            "agent": "a",
            "steps": [step.model_dump() for step in steps],
            **fields,
        }
    )


def test_long_observation_keeps_head_and_tail_and_says_how_much_is_cut() -> None:
    body = "HEAD" + "a" * 5_000 + "MIDDLE" + "b" * 5_000 + "TAIL"
    rendered = render_trajectory(_ds_task(), _trajectory([_step(1, text=body)]), base_dir=None).text
    omitted = len(body) - OBSERVATION_TEXT_CHARS
    assert f"[... {omitted:,} characters from the middle of step 1's observation text" in rendered
    assert "HEAD" in rendered
    assert "TAIL" in rendered
    assert "MIDDLE" not in rendered
    # The notice names no tool: the text is the same in every mode.
    assert "VIEW_TRAJECTORY_STEP" not in rendered


def test_accessibility_trees_are_capped_more_tightly_except_on_the_last_step() -> None:
    tree = "node\n" * 1_000  # 5,000 characters
    rendered = render_trajectory(
        _ds_task(), _trajectory([_step(1, tree=tree), _step(2, tree=tree)]), base_dir=None
    ).text
    step_one, step_two = rendered.split("### Step 2")
    cut = len(tree) - ACCESSIBILITY_TREE_CHARS
    assert f"[... {cut:,} more characters of step 1's accessibility tree omitted here]" in step_one
    assert "omitted" not in step_two
    assert tree in step_two
    assert f"Accessibility tree ({len(tree):,} characters)" in step_one

    huge = "leaf\n" * 3_000  # 15,000 characters
    last_only = render_trajectory(_ds_task(), _trajectory([_step(1, tree=huge)]), base_dir=None)
    cut = len(huge) - FINAL_ACCESSIBILITY_TREE_CHARS
    assert f"[... {cut:,} more characters of step 1's accessibility tree" in last_only.text


def test_long_actions_are_cut_with_a_notice() -> None:
    rendered = render_trajectory(
        _ds_task(), _trajectory([_step(1, arg="p" * 10_000)]), base_dir=None
    ).text
    assert "more characters of step 1's action omitted here" in rendered
    longest_run = max(len(run) for run in re.findall(r"p+", rendered))
    assert longest_run < ACTION_CHARS


def test_a_trajectory_with_many_steps_keeps_its_head_and_tail() -> None:
    steps = [_step(index, text=f"result of step {index}") for index in range(1, 201)]
    rendered = render_trajectory(_ds_task(), _trajectory(steps), base_dir=None)
    shown = rendered.shown_steps
    assert len(shown) == MAX_STEPS_SHOWN
    assert shown[:HEAD_STEPS] == list(range(1, HEAD_STEPS + 1))
    tail_start = 200 - (MAX_STEPS_SHOWN - HEAD_STEPS) + 1
    assert shown[HEAD_STEPS:] == list(range(tail_start, 201))
    text = rendered.text
    gap = tail_start - HEAD_STEPS - 1
    assert f"[... steps {HEAD_STEPS + 1} to {tail_start - 1} ({gap} steps) are omitted" in text
    assert "result of step 200" in text
    assert f"result of step {HEAD_STEPS + 1}\n" not in text
    assert f"{MAX_STEPS_SHOWN} of its 200 steps are shown" in text


def test_the_character_budget_also_limits_the_steps_shown() -> None:
    steps = [_step(index, text=f"s{index} " + "z" * 2_900) for index in range(1, 101)]
    rendered = render_trajectory(_ds_task(), _trajectory(steps), base_dir=None)
    shown = rendered.shown_steps
    assert len(shown) < MAX_STEPS_SHOWN
    assert shown[0] == 1
    assert shown[-1] == 100
    step_text = rendered.text.split("# Final response")[0]
    assert len(step_text) <= STEPS_CHAR_BUDGET + 2_000


def test_no_steps_and_no_final_response_are_said_plainly() -> None:
    text = render_trajectory(_ds_task(), _trajectory([]), base_dir=None).text
    assert "The agent took 0 steps." in text
    assert "(No steps were recorded.)" in text
    assert "(The run ended without a final response.)" in text


def test_error_steps_and_the_stop_reason_are_shown() -> None:
    step = _step(1, text="Error: ENOENT").model_copy(update={"is_error": True})
    text = render_trajectory(
        _ds_task(), _trajectory([step], stop_reason="turn_limit"), base_dir=None
    ).text
    assert "The environment flagged this step as an ERROR." in text
    assert "(1 flagged as errors by the environment)" in text
    assert "the agent ran out of its turn budget" in text


@pytest.mark.parametrize(
    ("policy", "steps"),
    [("last", [8]), ("all", [1, 2, 3, 4, 5, 6, 7, 8]), ("none", []), ("3", [1, 5, 8])],
)
def test_screenshots_are_attached_with_the_bytes_of_their_files(
    mini: Dataset, policy: str, steps: list[int]
) -> None:
    trajectory = mini.trajectories[SCREENSHOT_RUN]
    base = mini.trajectory_dir()
    rendered = render_trajectory(
        mini.tasks[trajectory.task_id], trajectory, base_dir=base, screenshots=policy
    )
    assert [index for index, _ in rendered.images] == steps
    for number, (index, image) in enumerate(rendered.images, start=1):
        observation = trajectory.steps[index - 1].observation
        assert observation is not None
        assert observation.screenshot is not None
        assert image.data == (base / observation.screenshot).read_bytes()
        assert image.mime_type == "image/png"
        block = rendered.text.split(f"### Step {index}\n")[1].split("### Step")[0]
        assert f"Screenshot: attached below as image {number}" in block
    not_attached = rendered.text.count("Screenshot: recorded, not attached")
    assert not_attached == len(trajectory.screenshots) - len(steps)
    assert rendered.missing_screenshots == []


def test_a_missing_screenshot_is_noted_not_fatal(mini: Dataset, tmp_path: Path) -> None:
    trajectory = mini.trajectories[SCREENSHOT_RUN]
    shutil.copytree(mini.trajectory_dir() / SCREENSHOT_RUN, tmp_path / SCREENSHOT_RUN)
    (tmp_path / SCREENSHOT_RUN / "step_8.png").unlink()
    rendered = render_trajectory(
        mini.tasks[trajectory.task_id], trajectory, base_dir=tmp_path, screenshots="all"
    )
    assert [index for index, _ in rendered.images] == [1, 2, 3, 4, 5, 6, 7]
    assert rendered.missing_screenshots == [8]
    last_block = rendered.text.split("### Step 8\n")[1]
    assert "Screenshot: recorded, but the image file is missing; not attached" in last_block
    assert "Selected but not available: step(s) 8." in rendered.text
    assert "step_8.png" not in rendered.text


def test_without_a_base_dir_no_image_is_attached(mini: Dataset) -> None:
    trajectory = mini.trajectories[SCREENSHOT_RUN]
    rendered = render_trajectory(mini.tasks[trajectory.task_id], trajectory, base_dir=None)
    assert rendered.images == []
    assert rendered.missing_screenshots == [8]
    assert "the image files are not available to this judge" in rendered.text


def test_rendering_is_deterministic(mini: Dataset) -> None:
    trajectory = mini.trajectories[SCREENSHOT_RUN]
    task = mini.tasks[trajectory.task_id]
    first = render_trajectory(task, trajectory, base_dir=mini.trajectory_dir())
    second = render_trajectory(task, trajectory, base_dir=mini.trajectory_dir())
    assert first == second


def test_the_tree_policy_samples_first_and_last_and_mentions_the_others() -> None:
    steps = [_step(n, tree=f"<tree-{n}/>", arg=str(n)) for n in range(1, 6)]
    rendered = render_trajectory(_ds_task(), _trajectory(steps), base_dir=None, trees=2)
    assert rendered.tree_steps == [1, 5]
    assert "<tree-1/>" in rendered.text
    assert "<tree-5/>" in rendered.text
    assert "<tree-3/>" not in rendered.text
    assert rendered.text.count("Accessibility tree: recorded (9 characters), not shown.") == 3
    assert render_trajectory(_ds_task(), _trajectory(steps), base_dir=None).tree_steps == [
        1,
        2,
        3,
        4,
        5,
    ]
    with pytest.raises(ValueError, match="screenshot policy"):
        render_trajectory(_ds_task(), _trajectory(steps), base_dir=None, trees="some")
