"""The screens of a device run in order, and UI element lists read from their text forms."""

from __future__ import annotations

from dataset.actions import AndroidAction
from dataset.frames import element_line, parse_ui_elements, trajectory_frames
from dataset.models import Observation, Step, Trajectory


def run(metadata: dict[str, object]) -> Trajectory:
    steps = [
        Step(
            index=number,
            action=AndroidAction(action_type="click", x=number, y=number),
            observation=Observation(screenshot=f"s{number}.png"),
        )
        for number in (1, 2)
    ]
    return Trajectory(id="t", task_id="k", agent="a", steps=steps, metadata=metadata)


def test_each_screen_carries_the_action_taken_on_it() -> None:
    frames = trajectory_frames(run({"initial_observation": {"screenshot": "s0.png"}}))
    assert [f.position for f in frames] == [0, 1, 2]
    assert [f.next_step for f in frames] == [1, 2, None]
    first = frames[0].next_action
    assert isinstance(first, AndroidAction)
    assert (first.x, first.y) == (1, 1)
    assert frames[0].observation is not None
    assert frames[0].observation.screenshot == "s0.png"


def test_the_suite_recorders_initial_keys_are_read_too() -> None:
    frames = trajectory_frames(run({"initial_screenshot": "s0.png", "initial_ui_elements": "x"}))
    assert frames[0].observation == Observation(screenshot="s0.png", accessibility_tree="x")
    assert [f.position for f in trajectory_frames(run({}))] == [1, 2]


def test_element_lists_in_both_forms() -> None:
    xml = (
        '<hierarchy><node text="" class="android.widget.FrameLayout" bounds="[0,0][720,1280]">'
        '<node text="Save" class="android.widget.Button" clickable="true" '
        'bounds="[10,20][110,60]"/>'
        "</node></hierarchy>"
    )
    frame, button = parse_ui_elements(xml)
    assert button.index == 1
    assert button.bounds == (10, 20, 110, 60)
    assert button.centre == (60, 40)
    assert element_line(button) == '[1] text="Save" Button clickable'
    assert element_line(frame) == "[0] FrameLayout"
    lines = 'UI element 3: {"index": 3, "text": "OK", "bbox_pixels": [1, 2, 3, 4]}\nnoise'
    (ok,) = parse_ui_elements(lines)
    assert (ok.index, ok.bounds) == (3, (1, 2, 3, 4))
    assert parse_ui_elements("<broken") == []
    laughs = '<!DOCTYPE h [<!ENTITY a "aaaa">]><hierarchy><node text="&a;"/></hierarchy>'
    assert parse_ui_elements(laughs) == []
    assert parse_ui_elements(None) == []
