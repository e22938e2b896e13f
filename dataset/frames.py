"""The screens of a recorded device run, in order, each with the action taken on it.

Owns the convention that ties a step's observation (the screen *after* its action) to the screen
the action was taken *on*: frame 0 is the screen before the first action (kept in the trajectory's
``metadata[INITIAL_OBSERVATION_KEY]`` by importers whose source records it), frame ``k`` is step
``k``'s observation, and the action of step ``k + 1`` was taken on frame ``k``. Also owns reading
UI element lists out of an observation's ``accessibility_tree`` text (AndroidWorld's
``UI element N: {json}`` lines and uiautomator XML dumps) with their pixel bounds. Must not read
image files (``dataset.screenshots`` does) or know any judge method.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from xml.etree import ElementTree

from pydantic import JsonValue

from dataset.actions import Action
from dataset.models import Observation, Trajectory

__all__ = [
    "INITIAL_OBSERVATION_KEY",
    "Frame",
    "UiElement",
    "element_line",
    "parse_ui_elements",
    "trajectory_frames",
]

INITIAL_OBSERVATION_KEY = "initial_observation"
"""``Trajectory.metadata`` key of the screen before the first action (an ``Observation`` as a
JSON object), for sources that record it. The mobile suite's recorder writes the same screen as
two keys, ``initial_screenshot`` and ``initial_ui_elements``; both forms are read."""


@dataclass(frozen=True)
class UiElement:
    """One on-screen element of a UI element list."""

    index: int
    """Its position in the list (what AndroidWorld's ``index`` targets)."""
    bounds: tuple[int, int, int, int] | None
    """Left, top, right, bottom in screen pixels, when recorded."""
    fields: dict[str, JsonValue]
    """Every recorded field (text, content description, class, clickable, ...)."""

    @property
    def centre(self) -> tuple[int, int] | None:
        """The middle of its bounds (where a tap on it lands)."""
        if self.bounds is None:
            return None
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2


@dataclass(frozen=True)
class Frame:
    """One recorded screen and what the agent did on it."""

    position: int
    """0 for the screen before the first action, else the step whose observation it is."""
    observation: Observation | None
    """What was recorded of the screen (None: nothing)."""
    next_action: Action | None
    """The action taken on this screen (the following step's), None after the last step."""
    next_step: int | None
    """That action's step number."""


def trajectory_frames(trajectory: Trajectory) -> list[Frame]:
    """Frame 0 (when the source recorded the first screen) and one frame per step."""
    frames: list[Frame] = []
    steps = trajectory.steps
    initial = trajectory.metadata.get(INITIAL_OBSERVATION_KEY)
    shot, elements = (
        trajectory.metadata.get(k) for k in ("initial_screenshot", "initial_ui_elements")
    )
    if not isinstance(initial, dict) and (isinstance(shot, str) or isinstance(elements, str)):
        initial = {
            "screenshot": shot if isinstance(shot, str) else None,
            "accessibility_tree": elements if isinstance(elements, str) else None,
        }
    if isinstance(initial, dict):
        first = steps[0] if steps else None
        frames.append(
            Frame(
                0,
                Observation.model_validate(initial),
                first.action if first else None,
                first.index if first else None,
            )
        )
    for position, step in enumerate(steps):
        following = steps[position + 1] if position + 1 < len(steps) else None
        frames.append(
            Frame(
                step.index,
                step.observation,
                following.action if following else None,
                following.index if following else None,
            )
        )
    return frames


_ELEMENT_LINE = re.compile(r"^\s*UI element (\d+):\s*(\{.*\})\s*$")
_XML_BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


def _bounds(value: object) -> tuple[int, int, int, int] | None:
    """Bounds from the shapes sources use: [l, t, r, b], {x_min, ...}, or ``[l,t][r,b]``."""
    if (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, int | float) for v in value)
    ):
        left, top, right, bottom = (int(v) for v in value)
        return left, top, right, bottom
    if isinstance(value, dict):
        keys = ("x_min", "y_min", "x_max", "y_max")
        if all(isinstance(value.get(key), int | float) for key in keys):
            left, top, right, bottom = (int(value[key]) for key in keys)
            return left, top, right, bottom
    if isinstance(value, str):
        match = _XML_BOUNDS.match(value.strip())
        if match:
            left, top, right, bottom = (int(group) for group in match.groups())
            return left, top, right, bottom
    return None


def _element_bounds(fields: dict[str, JsonValue]) -> tuple[int, int, int, int] | None:
    for key in ("bbox_pixels", "bbox", "bounds"):
        if key in fields:
            found = _bounds(fields[key])
            if found is not None:
                return found
    return None


def parse_ui_elements(text: str | None) -> list[UiElement]:
    """The elements of an observation's UI element list (empty when there is none or it is in
    a form not recognised)."""
    if not text or not text.strip():
        return []
    stripped = text.lstrip()
    if stripped.startswith("<"):
        return _xml_elements(stripped)
    elements: list[UiElement] = []
    for line in text.splitlines():
        match = _ELEMENT_LINE.match(line)
        if match is None:
            continue
        try:
            fields = json.loads(match.group(2))
        except json.JSONDecodeError:
            continue
        if isinstance(fields, dict):
            elements.append(UiElement(int(match.group(1)), _element_bounds(fields), fields))
    return elements


def _xml_elements(text: str) -> list[UiElement]:
    """uiautomator dump nodes in document order, numbered from 0. Dumps come with datasets
    (untrusted): one that declares a document type or entities is not read."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        return []
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return []
    elements: list[UiElement] = []
    for node in root.iter("node"):
        fields: dict[str, JsonValue] = dict(node.attrib.items())
        elements.append(UiElement(len(elements), _element_bounds(fields), fields))
    return elements


_SHOWN_FIELDS = (
    "text",
    "content_description",
    "content-desc",
    "hint_text",
    "class_name",
    "class",
    "resource-id",
    "resource_name",
    "is_clickable",
    "clickable",
    "is_checked",
    "checked",
    "is_selected",
    "selected",
    "is_editable",
)


def element_line(element: UiElement) -> str:
    """One element as a short line of its telling fields (empty and false values left out)."""
    parts = [f"[{element.index}]"]
    for key in _SHOWN_FIELDS:
        value = element.fields.get(key)
        if value in (None, "", False, "false"):
            continue
        if value in (True, "true"):
            parts.append(key.removeprefix("is_"))
        elif key in ("class_name", "class"):
            parts.append(str(value).rsplit(".", 1)[-1])
        else:
            parts.append(f'{key.replace("-", "_")}="{value}"')
    return " ".join(parts)
