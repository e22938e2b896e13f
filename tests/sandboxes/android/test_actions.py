"""AndroidWorld actions as gestures, and what ``adb shell input text`` is given."""

from __future__ import annotations

from typing import Any

import pytest

from dataset.actions import AndroidAction
from sandboxes.android.actions import (
    ActionError,
    ClearText,
    LaunchApp,
    LongPress,
    PressKey,
    Swipe,
    Tap,
    TypeText,
    Wait,
    adb_input_text,
    plan_action,
)
from sandboxes.android.hierarchy import Bounds, UIElement

SCREEN = (1080, 2400)
ELEMENTS = [
    UIElement(
        class_name="android.widget.Button",
        text="OK",
        bounds=Bounds(left=780, top=1120, right=996, bottom=1200),
    ),
    UIElement(
        class_name="android.widget.EditText", bounds=Bounds(left=84, top=812, right=996, bottom=920)
    ),
    UIElement(
        class_name="android.widget.ScrollView",
        bounds=Bounds(left=0, top=400, right=1000, bottom=1400),
        flags={"scrollable": True},
    ),
]


def plan(**fields: Any) -> list[object]:
    return list(plan_action(AndroidAction(**fields), ELEMENTS, SCREEN))


def test_an_index_aims_at_the_centre_of_its_bounds() -> None:
    assert plan(action_type="click", index=0) == [Tap(888, 1160)]
    assert plan(action_type="long_press", index=1) == [LongPress(540, 866)]
    assert plan(action_type="double_tap", index=0) == [Tap(888, 1160), Tap(888, 1160)]


def test_coordinates_are_used_as_given_and_checked_against_the_screen() -> None:
    assert plan(action_type="click", x=10, y=2399) == [Tap(10, 2399)]
    with pytest.raises(ActionError, match=r"point \(1080, 5\) is off the 1080x2400 screen"):
        plan(action_type="click", x=1080, y=5)


def test_an_index_past_the_list_names_the_valid_range() -> None:
    with pytest.raises(
        ActionError, match=r"no UI element 7 on this screen \(it has 3: indexes 0 to 2"
    ):
        plan(action_type="click", index=7)


def test_typing_taps_clears_types_and_presses_enter() -> None:
    assert plan(action_type="input_text", index=1, text="shopping", clear_text=True) == [
        Tap(540, 866),
        ClearText(),
        TypeText("shopping"),
        PressKey("enter"),
    ]
    assert plan(action_type="input_text", text="a\n\nb") == [
        TypeText("a"),
        PressKey("enter"),
        PressKey("enter"),
        TypeText("b"),
        PressKey("enter"),
    ]


def test_scroll_moves_content_and_swipe_moves_the_finger() -> None:
    # Scrolling down shows what is below: the finger travels up, across the middle, a fifth of
    # the screen away from both edges.
    assert plan(action_type="scroll", direction="down") == [Swipe(540, 1920, 540, 480)]
    assert plan(action_type="scroll", direction="up") == [Swipe(540, 480, 540, 1920)]
    assert plan(action_type="swipe", direction="up") == [Swipe(540, 1920, 540, 480)]
    assert plan(action_type="scroll", direction="right") == [Swipe(864, 1200, 216, 1200)]
    # Inside an element: its own rectangle (0..1000 x 400..1400).
    assert plan(action_type="scroll", direction="down", index=2) == [Swipe(500, 1200, 500, 600)]


def test_keys_apps_and_signals() -> None:
    assert plan(action_type="navigate_home") == [PressKey("home")]
    assert plan(action_type="navigate_back") == [PressKey("back")]
    assert plan(action_type="keyboard_enter") == [PressKey("enter")]
    assert plan(action_type="open_app", app_name="Contacts") == [LaunchApp("Contacts")]
    assert plan(action_type="wait") == [Wait()]
    assert plan(action_type="status", goal_status="complete") == []
    assert plan(action_type="answer", text="42") == []
    with pytest.raises(ActionError, match="unknown"):
        plan(action_type="unknown")


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("hello world", ["hello%sworld"]),
        ("a&b;c", ["a\\&b\\;c"]),
        ("it's $5 (or less)", ["it\\'s%s\\$5%s\\(or%sless\\)"]),
        ("50%s off", ["50%", "s%soff"]),
        ("100%", ["100%"]),
        ("", []),
    ],
)
def test_adb_input_text_quoting(text: str, arguments: list[str]) -> None:
    assert adb_input_text(text) == arguments


def test_adb_input_text_refuses_what_it_cannot_type() -> None:
    with pytest.raises(ActionError, match=r"cannot type 'é' \(position 3\)"):
        adb_input_text("caf\u00e9")
    with pytest.raises(ActionError, match="position 1"):
        adb_input_text("a\tb")
