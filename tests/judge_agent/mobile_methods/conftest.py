"""A synthetic Android trajectory whose screens encode their frame number in their colour."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from dataset.actions import AndroidAction
from dataset.frames import INITIAL_OBSERVATION_KEY
from dataset.models import AppSnapshotState, Label, Observation, Step, Task, Trajectory

WIDTH, HEIGHT = 360, 640


def colour(frame: int) -> tuple[int, int, int]:
    """Frame ``frame``'s screen colour (green channel = frame number)."""
    return (10, frame, 200)


def elements(frame: int) -> str:
    items = [
        {
            "index": 0,
            "text": f"Title {frame}",
            "class_name": "android.widget.TextView",
            "bbox_pixels": [0, 0, 360, 60],
        },
        {
            "index": 1,
            "text": "OK",
            "class_name": "android.widget.Button",
            "is_clickable": True,
            "bbox_pixels": [200, 500, 300, 560],
        },
    ]
    return "\n".join(f"UI element {item['index']}: {json.dumps(item)}" for item in items)


def make_trajectory(
    folder: Path, steps: int, *, text: bool = True, name: str = "run"
) -> tuple[Task, Trajectory]:
    """``steps`` steps; frame k's screenshot has colour(k); actions cycle through kinds."""
    shots = folder / name
    shots.mkdir(parents=True, exist_ok=True)
    for frame in range(steps + 1):
        Image.new("RGB", (WIDTH, HEIGHT), colour(frame)).save(shots / f"{frame}.png")
    kinds = [
        AndroidAction(action_type="click", index=1),
        AndroidAction(action_type="click", x=100, y=200),
        AndroidAction(
            action_type="swipe", x=180, y=500, direction="up", extra={"end_x": 180, "end_y": 200}
        ),
        AndroidAction(action_type="input_text", text="milk", index=1),
    ]
    recorded = [
        Step(
            index=number,
            action=kinds[(number - 1) % len(kinds)]
            if number < steps
            else AndroidAction(action_type="status", goal_status="complete"),
            observation=Observation(
                screenshot=f"{name}/{number}.png",
                accessibility_tree=elements(number) if text else None,
            ),
            reasoning=f"thinking at step {number}",
        )
        for number in range(1, steps + 1)
    ]
    initial = {
        "screenshot": f"{name}/0.png",
        **({"accessibility_tree": elements(0)} if text else {}),
    }
    task = Task(
        id="task-a",
        domain="mobile",
        subdomain="android",
        instruction="Save the note called milk",
        initial_state=AppSnapshotState(snapshot_name="s"),
    )
    trajectory = Trajectory(
        id=name,
        task_id="task-a",
        agent="agent-x",
        steps=recorded,
        label=Label(value="PASS", source="human"),
        metadata={INITIAL_OBSERVATION_KEY: initial},
    )
    return task, trajectory


Maker = Callable[..., tuple[Task, Trajectory, Path]]
"""``make(steps, text=True, name="run")``: a task, its trajectory and the folder it lives in."""


@pytest.fixture
def make(tmp_path: Path) -> Maker:
    def build(steps: int, *, text: bool = True, name: str = "run") -> tuple[Task, Trajectory, Path]:
        task, trajectory = make_trajectory(tmp_path, steps, text=text, name=name)
        return task, trajectory, tmp_path

    return build
