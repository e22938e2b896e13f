"""AndroidWorld episodes (JSON) as source runs.

An episode is a JSON object (a file may hold one or a list): ``goal``; ``task_template`` (or
``task_name``/``task``: the task, runs of one task share it); ``is_successful`` (AndroidWorld's
own checker: above 0.5 is PASS, a ``verifier`` label); ``agent``/``agent_name`` and ``model``;
and ``step_data`` (or ``episode_data``), either a list of step objects or AndroidWorld's
dictionary of per-step lists. A step holds the screen *before* its action (``screenshot``,
``raw_screenshot`` or ``before_screenshot``: a path, base64 or a pixel array; ``ui_elements``)
and the action (``action``: an object or text; else ``action_output``, the agent's text with
``Action: {json}``) with its reason (``action_reason``, ``reason`` or ``summary``). A
``final_screenshot`` (and ``final_ui_elements``) is the screen after the last action.
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

__all__ = ["read_androidworld"]

_SHOT_KEYS = ("screenshot", "raw_screenshot", "before_screenshot", "screenshot_path")


def _steps(episode: dict[str, object]) -> list[dict[str, object]]:
    data = episode.get("step_data", episode.get("episode_data"))
    if isinstance(data, list):
        if not all(isinstance(step, dict) for step in data):
            raise SourceError("step_data: every step must be an object")
        return data
    if isinstance(data, dict):
        lengths = {len(v) for v in data.values() if isinstance(v, list)}
        if len(lengths) != 1:
            raise SourceError("step_data: the per-step lists have different lengths")
        count = lengths.pop()
        return [
            {key: value[i] for key, value in data.items() if isinstance(value, list)}
            for i in range(count)
        ]
    raise SourceError("step_data: missing (a list of steps or a dictionary of per-step lists)")


def _episode(record: dict[str, object], path: Path, root: Path, number: int) -> SourceRun:
    goal = first_text(record, ("goal", "instruction", "task_goal"))  # type: ignore[arg-type]
    if goal is None:
        raise SourceError("goal: missing")
    steps = _steps(record)
    actions = []
    screens = []
    for position, step in enumerate(steps):
        where = f"step_data[{position}]"
        shot = next((step[key] for key in _SHOT_KEYS if step.get(key) is not None), None)
        screens.append(
            Screen(
                image_reference(shot, path.parent, root, where),
                ui_elements_text(step.get("ui_elements")),
            )
        )
        raw = step.get("action", step.get("converted_action"))
        try:
            if isinstance(raw, dict):
                action = android_action_from_object(raw)
            elif isinstance(raw, str):
                action = android_action_from_text(raw)
            elif isinstance(step.get("action_output"), str):
                action = android_action_from_text(str(step["action_output"]))
            else:
                raise SourceError(f"{where}: no action (action or action_output)")
        except ActionError as error:
            raise SourceError(f"{where}.action: {error}") from None
        reason = first_text(step, ("action_reason", "reason", "reasoning", "summary"))  # type: ignore[arg-type]
        actions.append((action, reason))
    final = record.get("final_screenshot")
    if final is not None:
        screens.append(
            Screen(
                image_reference(final, path.parent, root, "final_screenshot"),
                ui_elements_text(record.get("final_ui_elements")),
            )
        )
    outcome = record.get("is_successful")
    label = None
    if isinstance(outcome, bool | int | float):
        label = "PASS" if float(outcome) > 0.5 else "FAIL"
    task = first_text(record, ("task_template", "task_name", "task")) or goal  # type: ignore[arg-type]
    agent = first_text(record, ("agent", "agent_name")) or "unknown-agent"  # type: ignore[arg-type]
    key = path.relative_to(root).with_suffix("").as_posix() if path != root else path.stem
    return SourceRun(
        source_format="androidworld",
        source_path=path,
        source_key=key if number == 0 else f"{key}#{number}",
        benchmark=first_text(record, ("benchmark",)) or "androidworld",  # type: ignore[arg-type]
        task_name=task,
        instruction=goal,
        agent=agent,
        model=first_text(record, ("model", "model_name")),  # type: ignore[arg-type]
        actions=actions,
        screens=screens,
        label=label,  # type: ignore[arg-type]
        label_source="verifier",
    )


def read_androidworld(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every episode of the JSON files under ``source`` (or the one file ``source``)."""
    root = source if source.is_dir() else source.parent
    files = sorted(source.rglob("*.json")) if source.is_dir() else [source]
    for path in files:
        loaded = log.read_json(path)
        if loaded is None:
            continue
        episodes = loaded if isinstance(loaded, list) else [loaded]
        for number, record in enumerate(episodes):
            if not isinstance(record, dict):
                log.add(path, "an episode must be a JSON object", field=f"[{number}]")
                continue
            try:
                yield _episode(record, path, root, number if isinstance(loaded, list) else 0)
            except SourceError as error:
                log.add(path, str(error), field=f"[{number}]" if isinstance(loaded, list) else None)
