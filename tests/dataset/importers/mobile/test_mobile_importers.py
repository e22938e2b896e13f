"""The Android (and AgentRewardBench) importers on files written from each documented format."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from dataset.actions import AndroidAction, ToolCallAction
from dataset.frames import INITIAL_OBSERVATION_KEY, parse_ui_elements, trajectory_frames
from dataset.importers.mobile import import_mobile
from dataset.importers.mobile.actions import android_action_from_text
from dataset.store import load_dataset


def png(color: tuple[int, int, int], size: tuple[int, int] = (36, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_androidworld_episode_steps_screens_and_verifier_label(tmp_path: Path) -> None:
    source = tmp_path / "aw"
    (source / "shots").mkdir(parents=True)
    for number, color in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
        (source / "shots" / f"{number}.png").write_bytes(png(color))
    write(
        source / "ep1.json",
        {
            "goal": "Create a note named a.md",
            "task_template": "MarkorCreateNote",
            "is_successful": 1.0,
            "agent": "m3a",
            "model": "gpt-4o",
            "step_data": [
                {
                    "screenshot": "shots/0.png",
                    "ui_elements": [
                        {
                            "text": "New",
                            "bbox_pixels": {"x_min": 10, "y_min": 20, "x_max": 30, "y_max": 40},
                        }
                    ],
                    "action_output": "Reason: tap New\n"
                    'Action: {"action_type": "click", "index": 0}',
                    "action_reason": "tap New",
                },
                {
                    "screenshot": "shots/1.png",
                    "action": {"action_type": "input_text", "text": "a.md", "index": 0},
                },
                {
                    "screenshot": "shots/2.png",
                    "action": {"action_type": "status", "goal_status": "complete"},
                },
            ],
        },
    )
    summary = import_mobile("androidworld", [source], tmp_path / "out")
    assert summary.problems == []
    data = load_dataset(tmp_path / "out")
    assert not data.errors
    (trajectory,) = data.trajectories.values()
    assert trajectory.agent == "m3a"
    assert trajectory.model == "gpt-4o"
    assert trajectory.metadata["benchmark"] == "androidworld"
    assert trajectory.label is not None
    assert trajectory.label.value == "PASS"
    assert trajectory.label.source == "verifier"
    first = trajectory.steps[0].action
    assert isinstance(first, AndroidAction)
    assert first.action_type == "click"
    assert first.index == 0
    assert trajectory.steps[0].reasoning == "tap New"
    # frame 0 is the screen before step 1 (the red one); step 1's observation is shots/1.png.
    frames = trajectory_frames(trajectory)
    assert [frame.position for frame in frames] == [0, 1, 2, 3]
    initial = trajectory.metadata[INITIAL_OBSERVATION_KEY]
    assert isinstance(initial, dict)
    red = Image.open(data.trajectory_dir() / str(initial["screenshot"])).getpixel((0, 0))
    assert red == (255, 0, 0)
    step1 = trajectory.steps[0].observation
    assert step1 is not None
    assert step1.screenshot is not None
    assert Image.open(data.trajectory_dir() / step1.screenshot).getpixel((0, 0)) == (0, 255, 0)
    assert trajectory.steps[2].observation is None  # no screen after the last action
    (element,) = parse_ui_elements(str(initial["accessibility_tree"]))
    assert element.bounds == (10, 20, 30, 40)
    assert element.centre == (20, 30)


def test_androidworld_dictionary_of_lists_with_pixel_arrays_and_base64(tmp_path: Path) -> None:
    pixels = [[[200, 10, 10]] * 4] * 3
    encoded = base64.b64encode(png((1, 2, 3))).decode()
    write(
        tmp_path / "src" / "ep.json",
        [
            {
                "goal": "Open settings",
                "is_successful": 0,
                "episode_data": {
                    "raw_screenshot": [pixels, encoded],
                    "action_output": [
                        'Action: {"action_type": "open_app", "app_name": "Settings"}',
                        "back()",
                    ],
                },
            }
        ],
    )
    summary = import_mobile("androidworld", [tmp_path / "src"], tmp_path / "out")
    assert summary.problems == []
    (trajectory,) = load_dataset(tmp_path / "out").trajectories.values()
    assert trajectory.label is not None
    assert trajectory.label.value == "FAIL"
    assert [s.action.action_type for s in trajectory.steps] == ["open_app", "navigate_back"]  # type: ignore[union-attr]
    obs = trajectory.steps[0].observation
    assert obs is not None
    assert obs.screenshot is not None
    assert obs.screenshot.endswith(".png")
    image = Image.open(tmp_path / "out" / "trajectories" / obs.screenshot)
    assert image.getpixel((0, 0)) == (1, 2, 3)  # the base64 screen, after the first action
    initial = trajectory.metadata[INITIAL_OBSERVATION_KEY]
    assert isinstance(initial, dict)
    first = Image.open(tmp_path / "out" / "trajectories" / str(initial["screenshot"]))
    assert first.size == (4, 3)
    assert first.getpixel((0, 0)) == (200, 10, 10)


def test_bad_episodes_are_named_and_the_others_land(tmp_path: Path) -> None:
    source = tmp_path / "src"
    write(source / "good.json", {"goal": "g", "step_data": [{"action": {"action_type": "wait"}}]})
    write(source / "no_goal.json", {"step_data": []})
    write(
        source / "bad_action.json",
        {"goal": "g", "step_data": [{"action": {"action_type": "click"}}]},
    )
    write(
        source / "escape.json",
        {
            "goal": "g",
            "step_data": [{"screenshot": "../../etc/passwd", "action": {"action_type": "wait"}}],
        },
    )
    (source / "broken.json").write_text("{", encoding="utf-8")
    summary = import_mobile("androidworld", [source], tmp_path / "out")
    assert len(summary.trajectories) == 1
    messages = {p.file.rsplit("/", 1)[-1]: p.message for p in summary.problems}
    assert "goal: missing" in messages["no_goal.json"]
    assert "step_data[0].action" in messages["bad_action.json"]
    assert "click needs an element index" in messages["bad_action.json"]
    assert "outside the source folder" in messages["escape.json"]
    assert "invalid JSON" in messages["broken.json"]


def test_votes_majority_ties_and_unmatched(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for name in ("a", "b"):
        write(
            source / f"{name}.json",
            {
                "goal": f"goal {name}",
                "is_successful": 1,
                "step_data": [{"action": {"action_type": "wait"}}],
            },
        )
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "trajectory,annotator,label\n"
        "a,ann1,0\na,ann2,failure\na,ann3,1\n"
        "b,ann1,1\nb,ann2,0\n"
        "zzz,ann1,1\n"
        "a,ann4,maybe\n",
        encoding="utf-8",
    )
    summary = import_mobile("androidworld", [source], tmp_path / "out", labels=labels)
    data = load_dataset(tmp_path / "out")
    by_key = {t.provenance.details["source_key"]: t for t in data.trajectories.values()}
    label_a = by_key["a"].label
    assert label_a is not None
    assert label_a.source == "vote"
    assert label_a.value == "FAIL"
    assert label_a.votes == {"ann1": "FAIL", "ann2": "FAIL", "ann3": "PASS"}
    assert by_key["b"].label is None  # a tie: no label, not the source's own outcome
    text = "\n".join(str(p) for p in summary.problems)
    assert "split" in text
    assert "match no imported run: 'zzz'" in text
    assert "line 8" in text
    assert "'maybe' is not a vote" in text
    assert summary.labelled_by_vote == 1


def test_spa_bench_session_with_another_agents_step_keys(tmp_path: Path) -> None:
    """AutoUI's log (``response``, upper-case types, float coordinates, sentences) in a
    session, with the task text and the evaluator's outcome only in results.csv."""
    session = tmp_path / "session-s1"
    run = session / "contacts_01" / "AutoUI"
    run.mkdir(parents=True)
    for number in range(4):
        (run / f"{number}.png").write_bytes(png((number * 40, 0, 0)))
    (run / "0.xml").write_text(
        '<hierarchy><node text="Save" bounds="[100,200][300,260]" clickable="true"/></hierarchy>',
        encoding="utf-8",
    )
    (session / "results.csv").write_text(
        "task_identifier,task_description,AutoUI_exit_code,"
        "result_only_no_action_AutoUI_evaluation,result_only_no_action_AutoUI_details\n"
        'contacts_01,Add contact Bob,0,F,"{}"\n',
        encoding="utf-8",
    )
    pair = [
        ["TAP", {"detail_type": "coordinates", "detail": [540.4, 1199.6]}],
        [
            "SWIPE",
            {
                "detail_type": "string",
                "detail": "The swipe action has been performed starting from coordinates "
                "(500.0,1500.0) to (500.0,400.0).",
            },
        ],
        ["TYPE", {"detail_type": "string", "detail": "Bob"}],
    ]
    write(
        run / "log.json",
        [
            {"step": n + 1, "response": f"Action Decision: {n}", "action": action}
            for n, action in enumerate(pair)
        ]
        + [{"total_steps": 3, "finish_signal": 0}],
    )
    summary = import_mobile("spa-bench", [session], tmp_path / "out")
    assert summary.problems == []
    (trajectory,) = load_dataset(tmp_path / "out").trajectories.values()
    assert trajectory.agent == "AutoUI"
    assert trajectory.label is not None
    assert (trajectory.label.value, trajectory.label.source) == ("FAIL", "evaluator")
    tap, swipe, typed = (step.action for step in trajectory.steps)
    assert isinstance(tap, AndroidAction)
    assert (tap.action_type, tap.x, tap.y) == ("click", 540, 1200)
    assert isinstance(swipe, AndroidAction)
    assert (swipe.x, swipe.y, swipe.direction) == (500, 1500, "up")
    assert (swipe.extra["end_x"], swipe.extra["end_y"]) == (500, 400)
    assert isinstance(typed, AndroidAction)
    assert typed.text == "Bob"
    assert trajectory.steps[0].reasoning == "Action Decision: 0"
    initial = trajectory.metadata[INITIAL_OBSERVATION_KEY]
    assert isinstance(initial, dict)
    (save,) = parse_ui_elements(str(initial["accessibility_tree"]))
    assert save.bounds == (100, 200, 300, 260)
    assert trajectory.steps[2].observation is not None  # 3.png is the screen after the last action


def test_a3_history(tmp_path: Path) -> None:
    run = tmp_path / "save_dir" / "some-model" / "task_3"
    (run / "states" / "screenshots").mkdir(parents=True)
    (run / "states" / "screenshots" / "s0.png").write_bytes(png((9, 9, 9)))
    write(run / "results" / "func_eval_results.json", {"task": "Turn on wifi", "eval_results": 0})
    step = {"task": "Turn on wifi", "xml": "", "screenshot": "s0.png", "agent_messages": "tap"}
    write(
        run / "histories" / "task_3_history.json",
        [{**step, "actions": {"action": "long_press", "x": 10, "y": 20}}],
    )
    summary = import_mobile("a3", [tmp_path / "save_dir"], tmp_path / "out")
    assert [str(p) for p in summary.problems] == [
        "warning: "
        + str(run / "results" / "func_eval_results.json")
        + ": eval_results is not true/false; left unlabelled"
    ]
    (trajectory,) = load_dataset(tmp_path / "out").trajectories.values()
    action = trajectory.steps[0].action
    assert isinstance(action, AndroidAction)
    assert (action.action_type, action.x, action.y) == ("long_press", 10, 20)
    assert trajectory.metadata["benchmark"] == "a3"
    assert trajectory.label is None
    assert INITIAL_OBSERVATION_KEY in trajectory.metadata


def test_agentrewardbench_layout_names_benchmark_and_agent(tmp_path: Path) -> None:
    cleaned = tmp_path / "trajectories" / "cleaned"
    folder = cleaned / "webarena" / "GenericAgent-gpt-4o" / "exp1"
    folder.mkdir(parents=True)
    (folder / "s0.png").write_bytes(png((5, 5, 5)))
    write(
        folder / "webarena.12.json",
        {
            "goal": "Find the cheapest item",
            "steps": [
                {
                    "num": 0,
                    "reasoning": "click search",
                    "action": "click('a51')",
                    "screenshot_path": "s0.png",
                    "url": "http://x/",
                    "axtree": "[a51] button 'Search'",
                },
                {
                    "num": 1,
                    "reasoning": "done",
                    "action": "send_msg_to_user('$3')",
                    "url": "http://x/r",
                },
            ],
        },
    )
    write(cleaned / "broken" / "x.json", {"goal": "g"})
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps(
            {
                "trajectory": "webarena/GenericAgent-gpt-4o/exp1/webarena.12",
                "votes": {"r1": "success", "r2": "success"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    summary = import_mobile("agentrewardbench", [cleaned], tmp_path / "out", labels=labels)
    (trajectory,) = load_dataset(tmp_path / "out").trajectories.values()
    assert trajectory.agent == "GenericAgent-gpt-4o"
    assert trajectory.metadata["benchmark"] == "webarena"
    click = trajectory.steps[0].action
    assert isinstance(click, ToolCallAction)
    assert click.name == "click"
    assert click.arguments == {"arg1": "a51"}
    assert trajectory.label is not None
    assert trajectory.label.value == "PASS"
    assert trajectory.label.source == "vote"
    assert any(
        "broken/x.json" in p.file and "<benchmark>/<agent>" in p.message for p in summary.problems
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tap(1, 2)", {"action_type": "click", "x": 1, "y": 2}),
        ("long_press(3, 4)", {"action_type": "long_press", "x": 3, "y": 4}),
        ("back()", {"action_type": "navigate_back"}),
        ("swipe(0, 0, 100, 10)", {"action_type": "swipe", "direction": "right"}),
        ('scroll("down")', {"action_type": "scroll", "direction": "down"}),
        ("finish()", {"action_type": "status", "goal_status": "complete"}),
        ("wiggle(1)", {"action_type": "unknown"}),
    ],
)
def test_call_strings(text: str, expected: dict[str, object]) -> None:
    action = android_action_from_text(text)
    for key, value in expected.items():
        assert getattr(action, key) == value


def test_a_second_import_never_overwrites_another_runs_trajectory(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    record = {"goal": "g", "agent": "m3a", "step_data": [{"action": {"action_type": "wait"}}]}
    write(first / "ep.json", {**record, "is_successful": 1})
    write(second / "other.json", {**record, "is_successful": 0})
    import_mobile("androidworld", [first], tmp_path / "out")
    import_mobile("androidworld", [first], tmp_path / "out")  # the same run again: same id
    import_mobile("androidworld", [second], tmp_path / "out")
    data = load_dataset(tmp_path / "out")
    assert sorted(data.trajectories) == ["androidworld--g--m3a", "androidworld--g--m3a--2"]
    outcomes = {t.provenance.details["source_key"]: t.label for t in data.trajectories.values()}
    assert outcomes["ep"] is not None
    assert outcomes["ep"].value == "PASS"
    assert outcomes["other"] is not None
    assert outcomes["other"].value == "FAIL"
