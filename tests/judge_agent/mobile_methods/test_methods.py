"""Each method's inputs: sampling, markers, windows, budgets; and their answers end to end."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from dataset.actions import AndroidAction
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory, planned_requests
from judge_agent.mobile_methods import a3_essential
from judge_agent.mobile_methods.a3_essential import windows
from judge_agent.mobile_methods.agent_reward_bench import parse_four_answers
from judge_agent.mobile_methods.android_arena import within_budget
from judge_agent.mobile_methods.common import ui_list
from judge_agent.mobile_methods.markers import draw_action
from judge_agent.model import ChatMessage, ChatMessageUser, ContentImage, ContentText
from judge_agent.modes import check_method_options, select_modes
from judge_agent.providers.mock import ScriptedModel
from judge_agent.subject import JudgeSubject, MethodRequest

from .conftest import HEIGHT, WIDTH, Maker


def images(messages: list[ChatMessage]) -> list[Image.Image]:
    found = []
    for message in messages:
        if isinstance(message, ChatMessageUser) and isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, ContentImage):
                    found.append(Image.open(io.BytesIO(base64.b64decode(part.data))).convert("RGB"))
    return found


def user_text(messages: list[ChatMessage]) -> str:
    texts = []
    for message in messages:
        if isinstance(message, ChatMessageUser) and isinstance(message.content, list):
            texts += [p.text for p in message.content if isinstance(p, ContentText)]
    return "\n".join(texts)


def requests(
    make: Maker, mode: str, steps: int, text: bool = True, **options: str
) -> list[MethodRequest]:
    task, trajectory, base = make(steps, text=text)
    settings = JudgeSettings(mode=mode, method_options=options)
    return planned_requests(task, trajectory, settings=settings, base_dir=base)


def frame_of(image: Image.Image) -> int:
    """The frame number encoded in a screen's colour (read from its lower middle)."""
    return rgb(image, image.width // 2, image.height - 5)[1]


# --- the simple baseline -------------------------------------------------------------------


def test_baseline_samples_evenly_with_first_and_last(make: Maker) -> None:
    (request,) = requests(make, "mobile-baseline", 20, screenshots="5")
    shown = images(request.messages)
    # 21 frames (0..20), 5 screens: positions round(i * 20 / 4) = 0, 5, 10, 15, 20.
    assert [frame_of(image) for image in shown] == [0, 5, 10, 15, 20]


def test_baseline_default_is_48_screens_at_600_px(make: Maker) -> None:
    (request,) = requests(make, "mobile-baseline", 60)
    shown = images(request.messages)
    assert len(shown) == 48
    assert frame_of(shown[0]) == 0
    assert frame_of(shown[-1]) == 60
    # 360 x 640 shrunk so the long edge is 600: 337.5 -> 338 x 600.
    assert {image.size for image in shown} == {(338, 600)}


def test_baseline_shows_all_screens_of_a_short_run_and_each_after_its_step(make: Maker) -> None:
    (request,) = requests(make, "mobile-baseline", 4)
    assert [frame_of(image) for image in images(request.messages)] == [0, 1, 2, 3, 4]
    content = request.messages[1].content
    assert isinstance(content, list)
    order = [
        p.text.strip().splitlines()[0] if isinstance(p, ContentText) else "IMAGE" for p in content
    ]
    step2 = next(i for i, line in enumerate(order) if line.startswith("### Step 2"))
    assert order[step2 + 1] == "IMAGE"


def test_baseline_switches_are_independent(make: Maker) -> None:
    (plain,) = requests(make, "mobile-baseline", 3)
    assert "thinking at step" not in user_text(plain.messages)
    assert "UI elements" not in user_text(plain.messages)
    (reasoning,) = requests(make, "mobile-baseline", 3, reasoning="on")
    assert "Agent reasoning: thinking at step 2" in user_text(reasoning.messages)
    assert "UI elements" not in user_text(reasoning.messages)
    (ui,) = requests(make, "mobile-baseline", 3, ui="on", long_edge="300")
    assert 'text="Title 2"' in user_text(ui.messages)
    assert "thinking at step" not in user_text(ui.messages)
    assert {image.size for image in images(ui.messages)} == {(169, 300)}


@pytest.mark.parametrize(
    ("key", "value"), [("screenshots", "2"), ("screenshots", "193"), ("ui", "maybe")]
)
def test_baseline_refuses_switches_out_of_range(key: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"mode 'mobile-baseline': {key}="):
        check_method_options(["mobile-baseline"], {key: value})


def test_switches_no_selected_mode_takes_are_refused() -> None:
    with pytest.raises(ValueError, match="token_budget are taken by none"):
        check_method_options(["mobile-baseline", "spa-bench"], {"token_budget": "100"})
    check_method_options(
        ["mobile-baseline", "androidarena"], {"token_budget": "100", "screenshots": "3"}
    )


def test_mode_groups_and_all() -> None:
    assert select_modes("all") == ("agent", "llm", "react")
    assert set(select_modes("mobile-methods")) == {
        "spa-bench",
        "a3-final",
        "a3-essential",
        "androidarena",
        "agentrewardbench",
        "mobile-baseline",
    }
    with pytest.raises(ValueError, match="mobile-methods"):
        select_modes("nonsense")


# --- SPA-Bench markers ----------------------------------------------------------------------


def rgb(image: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    pixel = image.getpixel((x, y))
    assert isinstance(pixel, tuple)
    return pixel[0], pixel[1], pixel[2]


def red(pixel: tuple[int, int, int]) -> bool:
    return pixel[0] > 200 and pixel[1] < 60 and pixel[2] < 60


def test_tap_marker_is_drawn_at_the_tap_point() -> None:
    screen = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 255))
    marked, point = draw_action(screen, AndroidAction(action_type="click", x=100, y=200), 3, None)
    strip = marked.height - HEIGHT
    assert point is not None
    assert (point.x, point.y) == (100, 200)
    assert red(rgb(marked, 100, 200 + strip))
    assert not red(rgb(marked, 200, 400 + strip))
    assert not red(rgb(marked, 100 + 30, 200 + strip))


def test_element_tap_marker_is_at_the_element_centre() -> None:
    screen = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 255))
    bounds = '{"x_min": 20, "y_min": 300, "x_max": 120, "y_max": 340}'
    ui = f'UI element 4: {{"index": 4, "bbox_pixels": {bounds}}}'
    marked, point = draw_action(screen, AndroidAction(action_type="click", index=4), 1, ui)
    strip = marked.height - HEIGHT
    assert point is not None
    assert (point.x, point.y) == (70, 320)
    assert point.source == "element 4"
    assert red(rgb(marked, 70, 320 + strip))


def test_swipe_arrow_follows_the_finger() -> None:
    screen = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 255))
    action = AndroidAction(
        action_type="swipe", x=180, y=500, direction="up", extra={"end_x": 180, "end_y": 200}
    )
    marked, _ = draw_action(screen, action, 1, None)
    strip = marked.height - HEIGHT
    assert red(rgb(marked, 180, 350 + strip))  # the middle of the path
    assert not red(rgb(marked, 60, 350 + strip))


def test_scroll_without_end_point_moves_the_finger_against_the_direction() -> None:
    screen = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 255))
    marked, _ = draw_action(screen, AndroidAction(action_type="scroll", direction="down"), 1, None)
    strip = marked.height - HEIGHT
    # From the centre (180, 320) a third of the height upwards: to (180, 107).
    assert red(rgb(marked, 180, 220 + strip))
    assert not red(rgb(marked, 180, 450 + strip))


def test_typed_text_is_in_the_strip() -> None:
    screen = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 255))
    marked, point = draw_action(
        screen, AndroidAction(action_type="input_text", text="milk"), 2, None
    )
    strip = marked.crop((0, 0, WIDTH, marked.height - HEIGHT))
    assert point is None
    darkest, _ = strip.convert("L").getextrema()
    assert isinstance(darkest, int)
    assert darkest < 50  # dark text was written on the strip


def test_spa_bench_marks_each_screen_with_the_action_taken_on_it(make: Maker) -> None:
    (request,) = requests(make, "spa-bench", 3, long_edge="0")
    shown = images(request.messages)
    assert len(shown) == 4  # frames 0..3
    strip = shown[0].height - HEIGHT
    # Frame 0 gets step 1's action: a tap on element 1, bounds [200,500,300,560] -> (250, 530).
    assert red(rgb(shown[0], 250, 530 + strip))
    # Frame 1 gets step 2's tap at (100, 200).
    assert red(rgb(shown[1], 100, 200 + strip))
    assert not red(rgb(shown[1], 250, 530 + strip))
    # The last screen has no action taken on it: no strip, no mark.
    assert shown[3].size == (WIDTH, HEIGHT)
    assert "Result: 1" in user_text(request.messages)


# --- A3 --------------------------------------------------------------------------------------


def test_windows_of_four_with_stride_three() -> None:
    assert windows(7, 4, 3) == [range(0, 4), range(3, 7)]
    assert windows(5, 4, 3) == [range(0, 4), range(3, 5)]
    assert windows(4, 4, 3) == [range(0, 4)]
    assert windows(1, 4, 3) == [range(0, 1)]
    assert windows(0, 4, 3) == []
    assert windows(10, 4, 3) == [range(0, 4), range(3, 7), range(6, 10)]


def test_a3_essential_window_images_put_screens_side_by_side(make: Maker) -> None:
    decomposition, *window_requests = requests(make, "a3-essential", 6, long_edge="320")
    assert decomposition.purpose == "decomposition"
    assert not images(decomposition.messages)
    assert [r.purpose for r in window_requests] == ["window 1 of 2", "window 2 of 2"]
    (first,) = images(window_requests[0].messages)
    (second,) = images(window_requests[1].messages)
    # Each 360 x 640 screen shrunk to 180 x 320; 4 of them with 3 gaps of 8 px.
    assert first.size == (4 * 180 + 3 * 8, 320)
    assert [rgb(first, 90 + i * 188, 300)[1] for i in range(4)] == [0, 1, 2, 3]
    assert [rgb(second, 90 + i * 188, 300)[1] for i in range(4)] == [3, 4, 5, 6]
    assert "screens 4 to 7 of 7" in user_text(window_requests[1].messages)


def test_a3_final_sends_the_last_screen_and_its_cleaned_elements(make: Maker) -> None:
    (request,) = requests(make, "a3-final", 5)
    (shown,) = images(request.messages)
    assert frame_of(shown) == 5
    text = user_text(request.messages)
    assert '[0] text="Title 5" TextView' in text
    assert '[1] text="OK" Button clickable' in text
    assert "Title 4" not in text


async def test_a3_essential_reaches_states_across_windows_and_caches_the_decomposition(
    make: Maker,
) -> None:
    a3_essential._DECOMPOSITIONS.clear()
    task, trajectory, base = make(6)
    model = ScriptedModel(
        "a3",
        replies=[
            "1. The notes app is open\n2. A note named milk is saved",
            "State 1: yes\nState 2: no",
            "State 1: no\nState 2: yes",
            # the second trajectory of the same task: no decomposition call
            "State 1: yes\nState 2: no",
            "State 1: no\nState 2: no",
        ],
    )
    settings = JudgeSettings(mode="a3-essential")
    verdict = await judge_trajectory(
        task, trajectory, model=model, settings=settings, base_dir=base
    )
    assert verdict.verdict == "PASS"
    assert verdict.details["reached_in_window"] == {"1": 1, "2": 2}
    assert verdict.turns_used == 3
    second = await judge_trajectory(task, trajectory, model=model, settings=settings, base_dir=base)
    assert second.verdict == "FAIL"
    assert second.turns_used == 2
    assert "A note named milk is saved" in (second.reasoning or "")
    assert len(model.calls) == 5


async def test_a3_essential_without_a_list_uses_the_goal_as_its_only_state(make: Maker) -> None:
    a3_essential._DECOMPOSITIONS.clear()
    task, trajectory, base = make(2)
    model = ScriptedModel("a3b", replies=["I cannot say.", "Still no list.", "State 1: yes"])
    verdict = await judge_trajectory(
        task, trajectory, model=model, settings=JudgeSettings(mode="a3-essential"), base_dir=base
    )
    assert verdict.verdict == "PASS"
    assert verdict.details["decomposed"] is False
    assert verdict.details["essential_states"] == [task.instruction]


# --- AndroidArena -----------------------------------------------------------------------------


def test_budget_keeps_the_newest_entries_in_order() -> None:
    entries = ["a" * 40, "b" * 40, "c" * 40, "d" * 40]  # 10 tokens each
    assert within_budget(entries, 25) == (["c" * 40, "d" * 40], 2)
    assert within_budget(entries, 40) == (entries, 0)
    kept, omitted = within_budget(["x" * 400], 50)
    assert omitted == 0
    assert kept[0].startswith("x" * 200)
    assert "cut to fit" in kept[0]


def test_androidarena_record_is_text_newest_first_within_budget(make: Maker) -> None:
    (full,) = requests(make, "androidarena", 8, token_budget="100000")
    assert not images(full.messages)
    text = user_text(full.messages)
    assert text.index("Step 1\n") < text.index("Step 8\n")
    assert 'text="Title 0"' in text  # step 1's screen is the one before it
    (cut,) = requests(make, "androidarena", 8, token_budget="200")
    text = user_text(cut.messages)
    assert "Final screen" in text
    assert "Step 1\n" not in text
    assert "earlier entries left out" in text


def test_androidarena_falls_back_to_screenshots_without_text(make: Maker) -> None:
    (request,) = requests(make, "androidarena", 10, text=False, fallback_screenshots="3")
    shown = images(request.messages)
    assert [frame_of(image) for image in shown] == [0, 5, 10]
    assert "Step 10: status" in user_text(request.messages)


# --- AgentRewardBench ------------------------------------------------------------------------


def test_four_answers() -> None:
    parsed = parse_four_answers(
        "The note is saved.\n<success>Yes</success>\n<side_effect>no</side_effect>\n"
        "<optimal>3</optimal>\n<loop>no</loop>"
    )
    assert parsed is not None
    assert parsed.verdict == "PASS"
    assert parsed.details == {"side_effects": False, "optimality": 3, "looping": False}
    assert parsed.reasoning == "The note is saved."
    assert parse_four_answers("<optimal>3</optimal>") is None


async def test_agentrewardbench_records_the_other_answers_in_the_verdict(make: Maker) -> None:
    task, trajectory, base = make(3)
    model = ScriptedModel(
        "arb",
        replies=[
            "Looks wrong.\n<success>no</success><side_effect>yes</side_effect>"
            "<optimal>1</optimal><loop>yes</loop>"
        ],
    )
    verdict = await judge_trajectory(
        task,
        trajectory,
        model=model,
        settings=JudgeSettings(mode="agentrewardbench"),
        base_dir=base,
    )
    assert verdict.verdict == "FAIL"
    assert verdict.details == {"side_effects": True, "optimality": 1, "looping": True}
    (shown,) = images(model.calls[0].messages)
    assert frame_of(shown) == 3
    assert "Reasoning: thinking at step 2" in user_text(model.calls[0].messages)


async def test_an_unreadable_answer_is_reasked_then_invalid(make: Maker) -> None:
    task, trajectory, base = make(2)
    model = ScriptedModel("bad", replies=["no idea", "still no idea"])
    verdict = await judge_trajectory(
        task,
        trajectory,
        model=model,
        settings=JudgeSettings(mode="mobile-baseline", limits=JudgeLimits()),
        base_dir=base,
    )
    assert verdict.verdict == "INVALID"
    assert verdict.turns_used == 2
    good = ScriptedModel("good", replies=["Result: 1\nConfidence: high\nReason: saved"])
    verdict = await judge_trajectory(
        task, trajectory, model=good, settings=JudgeSettings(mode="mobile-baseline"), base_dir=base
    )
    assert verdict.verdict == "PASS"
    assert verdict.confidence == 0.9


def test_the_label_never_reaches_a_method(make: Maker) -> None:
    task, trajectory, base = make(3)
    marked = trajectory.model_copy(update={"id": "secret-pass-id", "agent": "agent-secret"})
    for mode in select_modes("mobile-methods"):
        for request in planned_requests(
            task, marked, settings=JudgeSettings(mode=mode), base_dir=base
        ):
            text = user_text(request.messages)
            assert "secret" not in text, mode
            assert "PASS" not in text, mode


def test_subject_is_only_given_to_method_modes(make: Maker) -> None:
    task, trajectory, base = make(2)
    (opening,) = planned_requests(
        task, trajectory, settings=JudgeSettings(mode="llm"), base_dir=base
    )
    assert opening.purpose == "opening"
    assert JudgeSubject(task, trajectory, Path(".")).options == {}


def test_cleaned_element_lists_leave_out_layout_containers() -> None:
    xml = (
        '<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][720,1280]">'
        '<node text="Save" class="android.widget.Button" clickable="true" bounds="[1,2][3,4]"/>'
        '<node content-desc="Back" class="android.widget.ImageButton" bounds="[1,2][3,4]"/>'
        '<node class="android.widget.Switch" checked="true" bounds="[1,2][3,4]"/>'
        "</node></hierarchy>"
    )
    assert ui_list(xml) == (
        '[1] text="Save" Button clickable\n[2] content_desc="Back" ImageButton\n[3] Switch checked'
    )
    assert ui_list("free text the agent saw") == "free text the agent saw"
