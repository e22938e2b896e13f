"""Turning recorded actions into pyautogui code, and the '<' typing rewrite (checked by running
the code against a recorder standing in for pyautogui's module, so the calls themselves are
compared)."""

from __future__ import annotations

from typing import Any

import pytest

from dataset.actions import Computer13Action, PyAutoGuiAction
from sandboxes.desktop.actions import (
    ActionError,
    computer13_code,
    fix_less_than,
    perform_action,
    typing_code,
)
from sandboxes.desktop.client import DesktopClient


class Recorder:
    """Records every pyautogui call made by a piece of code."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, args, kwargs))

        return call


def calls_of(code: str) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    recorder = Recorder()
    exec(compile(code, "<action>", "exec"), {"pyautogui": recorder})
    return recorder.calls


def typed(code: str) -> str:
    """What the code types, with shift+comma read as '<'."""
    text = ""
    for name, args, _ in calls_of(code):
        if name in ("typewrite", "write"):
            text += args[0]
        elif name == "hotkey" and args == ("shift", ","):
            text += "<"
    return text


def action(kind: str, **parameters: Any) -> Computer13Action:
    return Computer13Action(action_type=kind, parameters=parameters)


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        (action("MOVE_TO", x=10, y=20), [("moveTo", (10, 20), {})]),
        (action("CLICK"), [("click", (), {"button": "left", "clicks": 1})]),
        (
            action("CLICK", x=5, y=6, button="right", num_clicks=2),
            [("click", (), {"x": 5, "y": 6, "button": "right", "clicks": 2})],
        ),
        (action("DOUBLE_CLICK", x=1, y=2), [("doubleClick", (), {"x": 1, "y": 2})]),
        (action("RIGHT_CLICK"), [("rightClick", (), {})]),
        (action("MOUSE_DOWN", button="middle"), [("mouseDown", (), {"button": "middle"})]),
        (action("MOUSE_UP"), [("mouseUp", (), {"button": "left"})]),
        (action("SCROLL", dx=0, dy=-3), [("vscroll", (-3,), {})]),
        (action("SCROLL", dx=2, dy=0), [("hscroll", (2,), {})]),
        (action("PRESS", key="Enter"), [("press", ("enter",), {})]),
        (action("KEY_DOWN", key="shift"), [("keyDown", ("shift",), {})]),
        (action("HOTKEY", keys=["ctrl", "s"]), [("hotkey", ("ctrl", "s"), {})]),
    ],
)
def test_computer_13_actions_become_the_matching_pyautogui_calls(
    recorded: Computer13Action, expected: list[Any]
) -> None:
    code = computer13_code(recorded)
    assert code is not None
    assert calls_of(code) == expected


def test_drag_holds_the_left_button() -> None:
    code = computer13_code(action("DRAG_TO", x=300, y=400))
    assert code is not None
    ((name, args, kwargs),) = calls_of(code)
    assert (name, args, kwargs["button"]) == ("dragTo", (300, 400), "left")


@pytest.mark.parametrize("text", ["a<b", "<<", "x < y and y <= z", "no angle", "<", "'\"<\\n"])
def test_typed_text_survives_the_less_than_rewrite(text: str) -> None:
    assert typed(typing_code(text)) == text
    code = computer13_code(action("TYPING", text=text))
    assert code is not None
    assert typed(code) == text
    assert not any(
        name in ("typewrite", "write") and "<" in args[0] for name, args, _ in calls_of(code)
    )


def test_recorded_code_is_rewritten_only_where_literal_text_holds_less_than() -> None:
    code = (
        "pyautogui.click(10, 20)\n"
        "pyautogui.typewrite('if a<b:', interval=0.05)\n"
        "pyautogui.press('enter')"
    )
    fixed = fix_less_than(code)
    calls = calls_of(fixed)
    assert calls[0] == ("click", (10, 20), {})
    assert calls[-1] == ("press", ("enter",), {})
    assert typed(fixed) == "if a<b:"
    assert all(kwargs == {"interval": 0.05} for name, _, kwargs in calls if name == "typewrite")
    unchanged = "pyautogui.typewrite(text)\npyautogui.write('a>b')"
    assert fix_less_than(unchanged) == unchanged
    assert fix_less_than("not python (") == "not python ("


@pytest.mark.parametrize(
    ("recorded", "message"),
    [
        (action("MOVE_TO", x="ten", y=2), "'x' must be a number"),
        (action("CLICK", num_clicks=0), "num_clicks"),
        (action("CLICK", button="side"), "button"),
        (action("PRESS", key=""), "key name"),
        (action("TYPING", text=5), "'text' must be text"),
        (action("MOVE_TO", x=1, y="__import__('os')"), "'y' must be a number"),
    ],
)
async def test_bad_parameters_fail_the_action_without_sending_anything(
    recorded: Computer13Action, message: str
) -> None:
    with pytest.raises(ActionError, match=message):
        computer13_code(recorded)
    # The client points nowhere: an attempt to send would fail differently.
    async with DesktopClient("http://127.0.0.1:9") as client:
        outcome = await perform_action(client, recorded)
    assert outcome.status == "failed"
    assert message.strip("'") in outcome.error


async def test_control_signals_touch_nothing() -> None:
    async with DesktopClient("http://127.0.0.1:9") as client:
        for recorded in (action("DONE"), action("FAIL"), PyAutoGuiAction(code=" WAIT ")):
            outcome = await perform_action(client, recorded, wait_seconds=0.01)
            assert outcome.status == "signal"
            assert outcome.code is None
        assert (await perform_action(client, action("FAIL"))).signal == "FAIL"
