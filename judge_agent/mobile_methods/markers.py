"""Drawing what an agent did onto the screen it did it on (SPA-Bench-style action markers).

Owns where an action lands in screen pixels (its ``x``/``y``, else the centre of the targeted
element's bounds in the screen's UI element list), the marks themselves (a red dot ringed in
white at a tap, a double ring for a double tap, a square for a long press, an arrow along a swipe
or scroll, the finger's path), and a strip above the screen naming the step and its action
(typed text quoted in full). Marks are drawn at the screen's own pixel size, before any resize,
so they land on the pixels the action touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from dataset.actions import Action, AndroidAction
from dataset.frames import UiElement, parse_ui_elements
from dataset.rendering import summarize_action

__all__ = ["MARKER_COLOUR", "ActionPoint", "action_point", "draw_action", "swipe_path"]

MARKER_COLOUR = (255, 0, 0)
"""The colour of every mark."""
_STRIP_BACKGROUND = (255, 255, 224)


@dataclass(frozen=True)
class ActionPoint:
    """Where an action touched the screen."""

    x: int
    y: int
    source: str
    """``coordinates`` or ``element <index>``."""


def action_point(action: Action, elements: list[UiElement]) -> ActionPoint | None:
    """The pixel the action touched, when it touched one the record can locate."""
    if not isinstance(action, AndroidAction):
        return None
    if action.x is not None and action.y is not None:
        return ActionPoint(action.x, action.y, "coordinates")
    if action.index is not None:
        element = next((e for e in elements if e.index == action.index), None)
        if element is not None and element.centre is not None:
            return ActionPoint(*element.centre, source=f"element {action.index}")
    return None


_FINGER = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


def swipe_path(
    action: AndroidAction, size: tuple[int, int], start: ActionPoint | None
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Where the finger went: the recorded end point, else a third of the screen along the
    direction (a swipe moves the finger that way; a scroll shows content that way, so the finger
    moves the opposite way)."""
    if action.action_type not in ("swipe", "scroll") or action.direction is None:
        return None
    width, height = size
    begin = (start.x, start.y) if start is not None else (width // 2, height // 2)
    end_x, end_y = action.extra.get("end_x"), action.extra.get("end_y")
    if isinstance(end_x, int) and isinstance(end_y, int):
        return begin, (end_x, end_y)
    finger = action.direction if action.action_type == "swipe" else _OPPOSITE[action.direction]
    dx, dy = _FINGER[finger]
    return begin, (begin[0] + dx * width // 3, begin[1] + dy * height // 3)


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def _arrow(
    draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], width: int
) -> None:
    draw.line([start, end], fill=MARKER_COLOUR, width=width)
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    ux, uy = dx / length, dy / length
    head = width * 4
    left = (end[0] - ux * head - uy * head / 2, end[1] - uy * head + ux * head / 2)
    right = (end[0] - ux * head + uy * head / 2, end[1] - uy * head - ux * head / 2)
    draw.polygon([end, left, right], fill=MARKER_COLOUR)


def draw_action(
    image: Image.Image, action: Action, step: int, ui_elements: str | None
) -> tuple[Image.Image, ActionPoint | None]:
    """A copy of ``image`` with the action's mark and a strip above it naming step and action;
    also where the mark was drawn (None: the action touched no locatable point)."""
    marked = image.copy()
    draw = ImageDraw.Draw(marked)
    unit = max(4, min(marked.size) // 60)
    point = action_point(action, parse_ui_elements(ui_elements))
    if isinstance(action, AndroidAction):
        path = swipe_path(action, marked.size, point)
        if path is not None:
            _arrow(draw, path[0], path[1], max(2, unit // 2))
        elif point is not None:
            box = [point.x - unit, point.y - unit, point.x + unit, point.y + unit]
            if action.action_type == "long_press":
                draw.rectangle(box, fill=MARKER_COLOUR, outline=(255, 255, 255), width=2)
            else:
                draw.ellipse(box, fill=MARKER_COLOUR, outline=(255, 255, 255), width=2)
                if action.action_type == "double_tap":
                    outer = [
                        point.x - 2 * unit,
                        point.y - 2 * unit,
                        point.x + 2 * unit,
                        point.y + 2 * unit,
                    ]
                    draw.ellipse(outer, outline=MARKER_COLOUR, width=2)
    text = f"Step {step}: {_action_words(action)}"
    font = _font(max(12, marked.width // 30))
    strip_height = max(20, marked.width // 18)
    canvas = Image.new("RGB", (marked.width, marked.height + strip_height), _STRIP_BACKGROUND)
    canvas.paste(marked, (0, strip_height))
    ImageDraw.Draw(canvas).text((6, strip_height // 6), text, fill=(0, 0, 0), font=font)
    return canvas, point


def _action_words(action: Action) -> str:
    if isinstance(action, AndroidAction) and action.action_type == "input_text":
        return f'type "{action.text}"'
    return summarize_action(action, 120).removeprefix("android ")
