"""The action executor: recorded ``computer_13`` actions and ``pyautogui`` code, run inside a
desktop through its control server (never on the host).

``computer_13`` actions become pyautogui calls built from their parameters (values are written
as Python literals, never pasted as code). Recorded code runs as it was recorded, with one
rewrite OSWorld also makes: pyautogui types ``<`` as ``>`` on X, so typed text containing ``<``
is split and each ``<`` sent as shift+comma. ``WAIT``, ``FAIL`` and ``DONE`` touch nothing:
they are reported as signals (a WAIT also sleeps for the caller's pause).
"""

from __future__ import annotations

import ast
import asyncio
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dataset.actions import Computer13Action, PyAutoGuiAction
from sandboxes.desktop.client import DesktopClient

CONTROL_SIGNALS = frozenset({"WAIT", "FAIL", "DONE"})
"""Actions that are signals to the runner, not input to the desktop."""

CODE_PRELUDE = "import time\nimport pyautogui\npyautogui.FAILSAFE = False\n"
"""What every piece of code sent to the desktop starts with (as OSWorld's runner does)."""

ACTION_TIMEOUT = 60.0
"""Seconds one action's code may run inside the desktop."""

WAIT_SECONDS = 1.0
"""How long a WAIT sleeps unless the caller gives another pause."""

DRAG_SECONDS = 0.5
"""How long a ``DRAG_TO`` takes to move the pointer with the button held."""

_BUTTONS = frozenset({"left", "right", "middle"})


class ActionError(ValueError):
    """An action's parameters cannot be turned into input (a coordinate that is no number)."""


class ActionOutcome(BaseModel):
    """What running one action did."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    status: Literal["done", "failed", "signal"]
    """``done``: the code ran and exited 0; ``failed``: it raised or could not run;
    ``signal``: a WAIT, FAIL or DONE that touched nothing."""
    signal: Literal["WAIT", "FAIL", "DONE"] | None = None
    """The control signal, for ``status == "signal"``."""
    code: str | None = None
    """The Python code sent to the desktop (without the prelude)."""
    output: str = ""
    """What the code printed."""
    error: str = ""
    """Its error output (a traceback), or why it could not run."""
    seconds: float = 0.0
    """Wall time of the action."""


def _number(parameters: dict[str, object], name: str) -> float | int:
    value = parameters.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ActionError(f"parameter {name!r} must be a number, got {value!r}")
    return value


def _optional_point(parameters: dict[str, object]) -> str:
    if "x" in parameters and "y" in parameters:
        return f"x={_number(parameters, 'x')!r}, y={_number(parameters, 'y')!r}"
    return ""


def _button(parameters: dict[str, object]) -> str:
    button = parameters.get("button", "left")
    if button not in _BUTTONS:
        raise ActionError(f"parameter 'button' must be one of left/right/middle, got {button!r}")
    return repr(button)


def _key(value: object, name: str = "key") -> str:
    if not isinstance(value, str) or not value:
        raise ActionError(f"parameter {name!r} must be a key name, got {value!r}")
    return repr(value.lower())


def _click(parameters: dict[str, object]) -> str:
    clicks = parameters.get("num_clicks", 1)
    if isinstance(clicks, bool) or not isinstance(clicks, int) or clicks < 1:
        raise ActionError(f"parameter 'num_clicks' must be a positive integer, got {clicks!r}")
    point = _optional_point(parameters)
    arguments = ", ".join(part for part in (point, f"button={_button(parameters)}") if part)
    return f"pyautogui.click({arguments}, clicks={clicks})"


def _scroll(parameters: dict[str, object]) -> str:
    dx, dy = _number(parameters, "dx"), _number(parameters, "dy")
    lines = []
    if dy:
        lines.append(f"pyautogui.vscroll({int(dy)!r})")
    if dx:
        lines.append(f"pyautogui.hscroll({int(dx)!r})")
    return "\n".join(lines) or "pass"


def _typing(parameters: dict[str, object]) -> str:
    text = parameters.get("text")
    if not isinstance(text, str):
        raise ActionError(f"parameter 'text' must be text, got {text!r}")
    return typing_code(text)


def _hotkey(parameters: dict[str, object]) -> str:
    keys = parameters.get("keys")
    if not isinstance(keys, list) or not keys:
        raise ActionError("parameter 'keys' must be a non-empty list of key names")
    return f"pyautogui.hotkey({', '.join(_key(key, 'keys') for key in keys)})"


def _point(parameters: dict[str, object]) -> str:
    return f"{_number(parameters, 'x')!r}, {_number(parameters, 'y')!r}"


_CODE_OF: dict[str, Callable[[dict[str, object]], str]] = {
    "MOVE_TO": lambda p: f"pyautogui.moveTo({_point(p)})",
    "CLICK": _click,
    "RIGHT_CLICK": lambda p: f"pyautogui.rightClick({_optional_point(p)})",
    "DOUBLE_CLICK": lambda p: f"pyautogui.doubleClick({_optional_point(p)})",
    "MOUSE_DOWN": lambda p: f"pyautogui.mouseDown(button={_button(p)})",
    "MOUSE_UP": lambda p: f"pyautogui.mouseUp(button={_button(p)})",
    "DRAG_TO": lambda p: f"pyautogui.dragTo({_point(p)}, duration={DRAG_SECONDS!r}, button='left')",
    "SCROLL": _scroll,
    "TYPING": _typing,
    "PRESS": lambda p: f"pyautogui.press({_key(p.get('key'))})",
    "KEY_DOWN": lambda p: f"pyautogui.keyDown({_key(p.get('key'))})",
    "KEY_UP": lambda p: f"pyautogui.keyUp({_key(p.get('key'))})",
    "HOTKEY": _hotkey,
}
"""The pyautogui code of each ``computer_13`` action type but the control signals."""


def computer13_code(action: Computer13Action) -> str | None:
    """The pyautogui code of a ``computer_13`` action; None for WAIT, FAIL and DONE."""
    if action.action_type in CONTROL_SIGNALS:
        return None
    build = _CODE_OF.get(action.action_type)
    if build is None:
        raise ActionError(f"no executor for computer_13 action {action.action_type}")
    return build(dict(action.parameters))


def typing_code(text: str, extra_arguments: str = "") -> str:
    """Code typing ``text``, each ``<`` sent as shift+comma (pyautogui would type ``>``);
    ``extra_arguments`` (``, interval=0.1``) go to every typing call."""
    parts = text.split("<")
    lines: list[str] = []
    for index, part in enumerate(parts):
        if part:
            lines.append(f"pyautogui.typewrite({part!r}{extra_arguments})")
        if index < len(parts) - 1:
            lines.append("pyautogui.hotkey('shift', ',')")
    return "\n".join(lines) or "pass"


_TYPING_FUNCTIONS = frozenset({"typewrite", "write"})


def fix_less_than(code: str) -> str:
    """``code`` with every ``pyautogui.typewrite``/``write`` of a literal text holding ``<`` made
    into typing that sends ``<`` as shift+comma; code that does not parse is left as it is."""
    if "<" not in code:
        return code
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code

    class _Rewrite(ast.NodeTransformer):
        changed = False

        def visit_Expr(self, node: ast.Expr) -> ast.AST | list[ast.stmt]:
            call = node.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in _TYPING_FUNCTIONS
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "pyautogui"
                and call.args
                and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)
                and "<" in call.args[0].value
            ):
                self.changed = True
                text = call.args[0].value
                extra = [ast.unparse(arg) for arg in call.args[1:]]
                extra += [ast.unparse(keyword) for keyword in call.keywords]
                suffix = "".join(f", {item}" for item in extra)
                return ast.parse(typing_code(text, suffix)).body
            return node

    rewrite = _Rewrite()
    new_tree = rewrite.visit(tree)
    if not rewrite.changed:
        return code
    return ast.unparse(ast.fix_missing_locations(new_tree))


async def run_code(
    client: DesktopClient, code: str, *, timeout: float = ACTION_TIMEOUT
) -> ActionOutcome:
    """Run pyautogui ``code`` inside the desktop, in a fresh interpreter."""
    started = time.perf_counter()
    result = await client.execute(["python3", "-c", CODE_PRELUDE + code], timeout=timeout)
    return ActionOutcome(
        status="done" if result.ok else "failed",
        code=code,
        output=result.output,
        error=result.error,
        seconds=time.perf_counter() - started,
    )


async def perform_action(
    client: DesktopClient,
    action: Computer13Action | PyAutoGuiAction,
    *,
    wait_seconds: float = WAIT_SECONDS,
    timeout: float = ACTION_TIMEOUT,
) -> ActionOutcome:
    """Run one recorded action inside the desktop; parameters that make no input give a
    ``failed`` outcome saying why (nothing is sent)."""
    started = time.perf_counter()
    if isinstance(action, PyAutoGuiAction):
        signal = action.code.strip() if action.is_control else None
        code = None if signal else fix_less_than(action.code)
    else:
        signal = action.action_type if action.action_type in CONTROL_SIGNALS else None
        try:
            code = None if signal else computer13_code(action)
        except ActionError as error:
            return ActionOutcome(status="failed", error=str(error))
    if signal is not None or code is None:
        if signal == "WAIT":
            await asyncio.sleep(wait_seconds)
        return ActionOutcome(
            status="signal",
            signal=signal,
            seconds=time.perf_counter() - started,
        )
    return await run_code(client, code, timeout=timeout)
