"""The action half of a recorded step, for every domain the runtime judges.

Four action spaces are in use by the agents we import, and a step holds exactly one of them,
told apart by the ``type`` tag:

- ``tool_call``: an MCP / function call (DS and search domains, browser agents);
- ``computer_13``: OSWorld's structured mouse-and-keyboard actions;
- ``pyautogui``: OSWorld's free-form Python code actions (or the WAIT/FAIL/DONE signals);
- ``android``: AndroidWorld's JSON actions.

Each model checks that the parameters its action type needs are present, so that a malformed
recording is caught at load time with the step and field named, not during replay. Each also
words itself, so that readers never tell the spaces apart: ``describe`` (one line for tables and
overviews), ``render`` (in full, for the judge's prompt and ``VIEW_TRAJECTORY_STEP``) and
``summary`` (one line naming the space, which ``dataset.rendering`` cuts to length).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

__all__ = [
    "COMPUTER_13_REQUIRED_PARAMETERS",
    "Action",
    "AndroidAction",
    "Computer13Action",
    "PyAutoGuiAction",
    "ToolCallAction",
]


class _ActionBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    def describe(self) -> str:
        """A one-line, human-readable rendering of the action, for tables and overviews."""
        raise NotImplementedError

    def render(self) -> str:
        """The full action, readable in a prompt: what it is and every parameter."""
        raise NotImplementedError

    def summary(self) -> str:
        """One line naming the action space and the action (not cut to any length)."""
        raise NotImplementedError


class ToolCallAction(_ActionBase):
    """A call of a named tool with JSON arguments, as made through MCP or native tool calling."""

    type: Literal["tool_call"] = "tool_call"
    """Discriminator of the action union."""

    name: str = Field(min_length=1)
    """The tool's name exactly as the agent called it (e.g. ``write_file``, ``execute_sql``)."""

    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    """The decoded arguments object the agent sent."""

    call_id: str | None = None
    """The identifier that paired the call with its result in the source format, if any."""

    def describe(self) -> str:
        return f"{self.name}({_compact(self.arguments)})"

    def render(self) -> str:
        call_id = f" (call id {self.call_id})" if self.call_id else ""
        return f"Tool call: {self.name}{call_id}\nArguments (JSON):\n{_json(self.arguments)}"

    def summary(self) -> str:
        return f"tool {self.describe()}"


Computer13Type = Literal[
    "MOVE_TO",
    "CLICK",
    "MOUSE_DOWN",
    "MOUSE_UP",
    "RIGHT_CLICK",
    "DOUBLE_CLICK",
    "DRAG_TO",
    "SCROLL",
    "TYPING",
    "PRESS",
    "KEY_DOWN",
    "KEY_UP",
    "HOTKEY",
    "WAIT",
    "FAIL",
    "DONE",
]

COMPUTER_13_REQUIRED_PARAMETERS: dict[str, tuple[str, ...]] = {
    "MOVE_TO": ("x", "y"),
    "DRAG_TO": ("x", "y"),
    "SCROLL": ("dx", "dy"),
    "TYPING": ("text",),
    "PRESS": ("key",),
    "KEY_DOWN": ("key",),
    "KEY_UP": ("key",),
    "HOTKEY": ("keys",),
}
"""Parameters each ``computer_13`` action type cannot do without; the others are all optional."""


class Computer13Action(_ActionBase):
    """One action of OSWorld's ``computer_13`` space: a type plus its parameters."""

    type: Literal["computer_13"] = "computer_13"
    """Discriminator of the action union."""

    action_type: Computer13Type
    """The action, e.g. ``CLICK`` or ``TYPING``; WAIT, FAIL and DONE are control signals."""

    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    """The action's parameters: ``x``, ``y``, ``button``, ``num_clicks``, ``text``, ``key``, ..."""

    @model_validator(mode="after")
    def _check_parameters(self) -> Computer13Action:
        missing = [
            name
            for name in COMPUTER_13_REQUIRED_PARAMETERS.get(self.action_type, ())
            if name not in self.parameters
        ]
        if missing:
            raise ValueError(f"{self.action_type} needs parameter(s) {', '.join(missing)}")
        if self.action_type == "HOTKEY" and not (
            isinstance(self.parameters["keys"], list) and self.parameters["keys"]
        ):
            raise ValueError("HOTKEY needs a non-empty list in parameter 'keys'")
        return self

    def describe(self) -> str:
        return f"{self.action_type}({_compact(self.parameters)})"

    def render(self) -> str:
        text = f"Computer action (computer_13): {self.action_type}"
        if self.parameters:
            text += f"\nParameters (JSON):\n{_json(self.parameters)}"
        return text

    def summary(self) -> str:
        return f"computer_13 {self.describe()}"


class PyAutoGuiAction(_ActionBase):
    """One action of OSWorld's ``pyautogui`` space: Python code, or a bare control signal."""

    type: Literal["pyautogui"] = "pyautogui"
    """Discriminator of the action union."""

    code: str = Field(min_length=1)
    """The Python source the agent emitted, or exactly ``WAIT``, ``FAIL`` or ``DONE``."""

    @property
    def is_control(self) -> bool:
        """Whether this is a WAIT/FAIL/DONE signal rather than code to execute."""
        return self.code.strip() in {"WAIT", "FAIL", "DONE"}

    def describe(self) -> str:
        return self.code.strip().splitlines()[0] if self.code.strip() else self.code

    def render(self) -> str:
        if self.is_control:
            return f"Control signal (pyautogui space): {self.code.strip()}"
        return f"pyautogui code:\n{self.code}"

    def summary(self) -> str:
        # The first line of pyautogui code is nearly always ``import pyautogui``: skip imports.
        lines = [
            line.strip()
            for line in self.code.splitlines()
            if line.strip() and not re.match(r"(import|from)\s", line.strip())
        ]
        return "pyautogui: " + "; ".join(lines or [self.code.strip()])


AndroidType = Literal[
    "click",
    "double_tap",
    "long_press",
    "scroll",
    "swipe",
    "input_text",
    "navigate_home",
    "navigate_back",
    "keyboard_enter",
    "open_app",
    "wait",
    "status",
    "answer",
    "unknown",
]


class AndroidAction(_ActionBase):
    """One AndroidWorld JSON action; the fields used depend on ``action_type``."""

    type: Literal["android"] = "android"
    """Discriminator of the action union."""

    action_type: AndroidType
    """The action; ``status`` ends an episode, ``answer`` returns text to the user."""

    index: int | None = Field(default=None, ge=0)
    """Index of the target UI element in the step's element list, when targeting by element."""

    x: int | None = Field(default=None, ge=0)
    """Horizontal screen coordinate in pixels, when targeting by position."""

    y: int | None = Field(default=None, ge=0)
    """Vertical screen coordinate in pixels, when targeting by position."""

    direction: Literal["up", "down", "left", "right"] | None = None
    """Direction of a ``scroll`` or ``swipe``."""

    text: str | None = None
    """Text typed by ``input_text`` or returned by ``answer``."""

    clear_text: bool | None = None
    """Whether ``input_text`` cleared the field before typing."""

    app_name: str | None = None
    """The application launched by ``open_app``."""

    goal_status: Literal["complete", "infeasible"] | None = None
    """The agent's own claim when it ends the episode with ``status``."""

    extra: dict[str, JsonValue] = Field(default_factory=dict)
    """Fields of the source record that have no slot above, kept verbatim."""

    @model_validator(mode="after")
    def _check_fields(self) -> AndroidAction:
        needs: dict[str, tuple[str, bool]] = {
            "click": ("an element index or x and y", self._has_target()),
            "double_tap": ("an element index or x and y", self._has_target()),
            "long_press": ("an element index or x and y", self._has_target()),
            "scroll": ("a direction", self.direction is not None),
            "swipe": ("a direction", self.direction is not None),
            "input_text": ("text", self.text is not None),
            "open_app": ("app_name", bool(self.app_name)),
            "status": ("goal_status", self.goal_status is not None),
            "answer": ("text", self.text is not None),
        }
        if self.action_type in needs:
            what, present = needs[self.action_type]
            if not present:
                raise ValueError(f"{self.action_type} needs {what}")
        if (self.x is None) != (self.y is None):
            raise ValueError("x and y must be given together")
        return self

    def _has_target(self) -> bool:
        return self.index is not None or (self.x is not None and self.y is not None)

    def describe(self) -> str:
        fields = self.model_dump(exclude={"type", "action_type", "extra"}, exclude_none=True)
        return f"{self.action_type}({_compact(fields)})"

    def render(self) -> str:
        fields: dict[str, JsonValue] = self.model_dump(
            mode="json", exclude={"type", "action_type", "extra"}, exclude_none=True
        )
        if self.extra:
            fields["extra"] = self.extra
        text = f"Android action: {self.action_type}"
        if fields:
            text += f"\nFields (JSON):\n{_json(fields)}"
        return text

    def summary(self) -> str:
        return f"android {self.describe()}"


Action = Annotated[
    ToolCallAction | Computer13Action | PyAutoGuiAction | AndroidAction,
    Field(discriminator="type"),
]
"""Any recorded action; the ``type`` field selects the action space."""


def describe_action(action: Action) -> str:
    """A one-line, human-readable rendering of an action, for tables and overviews."""
    return action.describe()


def _compact(values: dict[str, Any], limit: int = 120) -> str:
    text = ", ".join(f"{key}={value!r}" for key, value in values.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: dict[str, JsonValue]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
