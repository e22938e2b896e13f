"""A3 history files (``histories/*.json``) as source runs.

A history is a JSON object: the instruction (``task``, ``instruction`` or ``goal``), the task's
name (``task_id`` or ``task_name``), ``app``, ``agent``, ``model``, the outcome (``success`` or
``result``: true/false, 1/0) and ``history``, the steps in order. A step has the screen before
its action (``screenshot``: a path relative to the history file, base64 or a pixel array; its UI
as ``xml``, ``ui_tree`` or ``elements``), the ``action`` (an object or a call string such as
``CLICK(540, 1200)``) and ``thought``/``reasoning``. ``final_screenshot`` and ``final_xml`` are
the screen after the last action.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dataset.importers.mobile.actions import (
    ActionError,
    android_action_from_object,
    android_action_from_text,
)
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.sources import SourceError, image_reference, ui_elements_text
from dataset.problems import ProblemLog

__all__ = ["read_a3"]


def _ui(step: dict[str, object]) -> str | None:
    for key in ("xml", "ui_tree", "elements", "ui_elements"):
        if step.get(key) is not None:
            return ui_elements_text(step[key])
    return None


def _history(path: Path, record: dict[str, object], root: Path) -> SourceRun:
    instruction = first_text(record, ("task", "instruction", "goal"))  # type: ignore[arg-type]
    if instruction is None:
        raise SourceError("task: missing (task, instruction or goal)")
    steps = record.get("history")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise SourceError("history: expected a list of step objects")
    actions = []
    screens = []
    for number, step in enumerate(steps):
        where = f"history[{number}]"
        screens.append(
            Screen(image_reference(step.get("screenshot"), path.parent, root, where), _ui(step))
        )
        raw = step.get("action")
        try:
            if isinstance(raw, dict):
                action = android_action_from_object(raw)
            elif isinstance(raw, str) and raw.strip():
                action = android_action_from_text(raw.lower() if raw.isupper() else raw)
            else:
                raise SourceError(f"{where}.action: missing")
        except ActionError as error:
            raise SourceError(f"{where}.action: {error}") from None
        actions.append((action, first_text(step, ("thought", "reasoning"))))
    if record.get("final_screenshot") is not None or record.get("final_xml") is not None:
        screens.append(
            Screen(
                image_reference(
                    record.get("final_screenshot"), path.parent, root, "final_screenshot"
                ),
                ui_elements_text(record.get("final_xml")),
            )
        )
    outcome = record.get("success", record.get("result"))
    label = None
    if isinstance(outcome, bool | int | float):
        label = "PASS" if float(outcome) > 0.5 else "FAIL"
    return SourceRun(
        source_format="a3",
        source_path=path,
        source_key=path.relative_to(root).with_suffix("").as_posix(),
        benchmark="a3",
        task_name=first_text(record, ("task_id", "task_name")) or instruction,  # type: ignore[arg-type]
        instruction=instruction,
        agent=first_text(record, ("agent",)) or "unknown-agent",  # type: ignore[arg-type]
        model=first_text(record, ("model",)),  # type: ignore[arg-type]
        actions=actions,
        screens=screens,
        label=label,  # type: ignore[arg-type]
        label_source="verifier",
        details={"app": str(record["app"])} if "app" in record else {},
    )


def read_a3(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every history file under ``source`` (or the one file ``source``)."""
    root = source if source.is_dir() else source.parent
    for path in sorted(source.rglob("*.json")) if source.is_dir() else [source]:
        record = log.read_json(path)
        if record is None:
            continue
        if not isinstance(record, dict):
            log.add(path, "a history must be a JSON object")
            continue
        try:
            yield _history(path, record, root)
        except SourceError as error:
            log.add(path, str(error))
