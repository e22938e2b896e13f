"""AndroidWorld episodes as source runs: its checkpointer's gzipped pickles, or the same in JSON.

AndroidWorld's runner writes one ``<Task>_<instance>.pkl.gz`` per task instance into its run
folder: a gzipped pickle of a list of episode dicts. They are read with the allow-list loader of
``dataset.importers.mobile.pickles`` (a pickle is code; nothing it names is imported or run). An
episode holds ``goal``, ``task_template``, ``instance_id``, ``agent_name``, ``is_successful`` (its
task checker's score: above 0.5 is PASS, a ``verifier`` label), ``seed``, ``exception_info`` (a
run that crashed: imported as an ``error`` stop without steps or label) and ``episode_data``, a
dict of per-step lists. The step keys are the agents' own: the screen before the action as
``raw_screenshot`` (M3A) or ``before_screenshot`` (T3A), its elements as ``before_ui_elements``
(M3A: ``UIElement`` objects) or ``before_element_list`` (T3A: text), the action as
``action_output_json`` (a ``JSONAction``) or the ``Action: {json}`` of ``action_output``, the
reason as ``action_reason`` or the ``Reason:`` of ``action_output``; the last step's
``after_screenshot``/``after_ui_elements`` is the screen after the last action. An ``answer``
action's text is the run's final answer.

Each task instance is its own task (``<template>_<instance>``): instances of one template have
other goals. JSON files holding one episode or a list (with ``step_data`` as a list of step
objects, or the dict of lists) are read the same way.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dataset.importers.mobile.actions import (
    ActionError,
    android_action_from_object,
    android_action_from_text,
)
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.pickles import (
    UnsafePickleError,
    load_gzipped_pickle,
    load_pickle_bytes,
    plain_value,
)
from dataset.importers.mobile.sources import SourceError, image_reference, ui_elements_text
from dataset.problems import ProblemLog

__all__ = ["read_androidworld"]

_SHOT_KEYS = (
    "raw_screenshot",
    "before_screenshot",
    "screenshot",
    "benchmark_screenshot",
    "screenshot_path",
)
_AFTER_SHOT_KEYS = ("after_screenshot", "after_screenshot_with_som")
_UI_KEYS = ("before_ui_elements", "before_element_list", "ui_elements")
_AFTER_UI_KEYS = ("after_ui_elements", "after_element_list")
_ACTION_KEYS = ("action_output_json", "converted_action", "action")
_REASON = re.compile(r"Reason:\s*(.*?)\s*(?:\n\s*Action:|$)", re.DOTALL)


def _steps_key(episode: dict[str, Any]) -> str:
    return (
        "step_data" if "step_data" in episode and "episode_data" not in episode else "episode_data"
    )


def _steps(episode: dict[str, Any]) -> list[dict[str, Any]]:
    key = _steps_key(episode)
    data = episode.get(key)
    if isinstance(data, list):
        if not all(isinstance(step, dict) for step in data):
            raise SourceError(f"{key}: every step must be an object")
        return data
    if isinstance(data, dict):
        lists = {key: value for key, value in data.items() if isinstance(value, list)}
        lengths = {key: len(value) for key, value in lists.items()}
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{key} {length}" for key, length in sorted(lengths.items()))
            raise SourceError(f"{key}: the per-step lists have different lengths ({detail})")
        count = next(iter(lengths.values()), 0)
        return [{key: value[i] for key, value in lists.items()} for i in range(count)]
    raise SourceError(f"{key}: missing (a dict of per-step lists or a list of steps)")


def _first(step: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if step.get(key) is not None:
            return key, step[key]
    return None, None


def _image(value: Any, path: Path, root: Path, where: str) -> Any:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        if len(value.shape) != 3 or value.shape[2] not in (3, 4):
            raise SourceError(f"{where}: a screenshot array of shape {tuple(value.shape)}")
        return value
    return image_reference(value, path.parent, root, where)


def _action(step: dict[str, Any], where: str) -> Any:
    key, raw = _first(step, _ACTION_KEYS)
    try:
        if isinstance(raw, dict):
            fields = {name: value for name, value in raw.items() if value is not None}
            return android_action_from_object(fields)
        if isinstance(raw, str):
            return android_action_from_text(raw)
        output = step.get("action_output")
        if isinstance(output, str):
            key = "action_output"
            return android_action_from_text(output)
    except ActionError as error:
        raise SourceError(f"{where}.{key}: {error}") from None
    raise SourceError(f"{where}: no action (action_output_json, action or action_output)")


def _reason(step: dict[str, Any]) -> str | None:
    reason = first_text(step, ("action_reason", "reason", "reasoning"))
    if reason is not None:
        return reason
    output = step.get("action_output")
    if isinstance(output, str):
        match = _REASON.search(output)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return first_text(step, ("action_gen_response",))


def _outcome(value: object) -> str | None:
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    if isinstance(value, int | float) and not math.isnan(value):
        return "PASS" if float(value) > 0.5 else "FAIL"
    return None


def _details(record: dict[str, Any], path: Path) -> dict[str, Any]:
    details: dict[str, Any] = {"run_folder": path.parent.name}
    for key in ("instance_id", "seed", "episode_length", "run_time", "screen_config"):
        value = record.get(key)
        if isinstance(value, float) and math.isnan(value):
            continue
        if isinstance(value, str | int | float | bool | dict) and value is not None:
            details[key] = value
    finished = record.get("finish_dtime")
    if isinstance(finished, datetime.datetime):
        details["finish_dtime"] = finished.isoformat()
    return details


def _episode(record: dict[str, Any], path: Path, root: Path, number: int) -> SourceRun:
    goal = first_text(record, ("goal", "instruction", "task_goal"))
    if goal is None:
        raise SourceError("goal: missing")
    template = first_text(record, ("task_template", "task_name", "task"))
    instance = record.get("instance_id")
    if template is not None and isinstance(instance, int) and not isinstance(instance, bool):
        task = f"{template}_{instance}"
    else:
        task = template or goal
    agent = first_text(record, ("agent_name", "agent")) or "unknown-agent"
    key = path.relative_to(root).as_posix() if path != root else path.name
    key = key.removesuffix(".gz").removesuffix(".pkl").removesuffix(".json")
    crash = record.get("exception_info")
    run = SourceRun(
        source_format="androidworld",
        source_path=path,
        source_key=key if number == 0 else f"{key}#{number}",
        benchmark=first_text(record, ("benchmark",)) or "androidworld",
        task_name=task,
        instruction=goal,
        agent=agent,
        model=first_text(record, ("model", "model_name")),
        actions=[],
        screens=[],
        label=_outcome(record.get("is_successful")),  # type: ignore[arg-type]
        label_source="verifier",
        details=_details(record, path) | ({"template": template} if template else {}),
    )
    if isinstance(crash, str) and crash.strip():
        run.stop_reason = "error"
        run.error = crash.strip()
        run.label = None
        return run
    steps = _steps(record)
    prefix = _steps_key(record)
    actions = []
    for position, step in enumerate(steps):
        where = f"{prefix}[{position}]"
        shot_key, shot = _first(step, _SHOT_KEYS)
        _, elements = _first(step, _UI_KEYS)
        run.screens.append(
            Screen(_image(shot, path, root, f"{where}.{shot_key}"), ui_elements_text(elements))
        )
        actions.append((_action(step, where), _reason(step)))
    if steps:
        last = steps[-1]
        after_key, after = _first(last, _AFTER_SHOT_KEYS)
        _, after_elements = _first(last, _AFTER_UI_KEYS)
        if after is not None or after_elements is not None:
            where = f"{prefix}[{len(steps) - 1}].{after_key}"
            run.screens.append(
                Screen(_image(after, path, root, where), ui_elements_text(after_elements))
            )
    final = record.get("final_screenshot")
    if final is not None:
        image = _image(final, path, root, "final_screenshot")
        run.screens.append(Screen(image, ui_elements_text(record.get("final_ui_elements"))))
    run.actions = actions
    answers = [a.text for a, _ in actions if getattr(a, "action_type", None) == "answer"]
    run.final_response = next((text for text in reversed(answers) if text), None)
    if not actions and isinstance(record.get("episode_length"), int) and record["episode_length"]:
        raise SourceError(
            f"{prefix}: no steps read, though episode_length is {record['episode_length']}"
        )
    return run


def _episodes(path: Path, log: ProblemLog) -> list[object] | None:
    if path.name.endswith((".pkl.gz", ".pkl")):
        try:
            if path.name.endswith(".gz"):
                loaded = load_gzipped_pickle(path)
            else:
                loaded = load_pickle_bytes(path.read_bytes())
            value = plain_value(loaded)
        except UnsafePickleError as error:
            log.add(path, f"refused: {error}")
            return None
        except OSError as error:
            log.add(path, f"cannot be read: {error}")
            return None
    else:
        value = log.read_json(path)
        if value is None:
            return None
    return value if isinstance(value, list) else [value]


def _files(source: Path) -> list[Path]:
    if not source.is_dir():
        return [source]
    names = ("*.pkl.gz", "*.pkl", "*.json")
    return sorted({p for name in names for p in source.rglob(name) if p.is_file()})


def read_androidworld(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every episode of the checkpoint files (``*.pkl.gz``, ``*.pkl``, ``*.json``) under
    ``source`` (or the one file ``source``)."""
    root = source if source.is_dir() else source.parent
    for path in _files(source):
        episodes = _episodes(path, log)
        if episodes is None:
            continue
        several = len(episodes) > 1
        for number, record in enumerate(episodes):
            where = f"[{number}]" if several else None
            if not isinstance(record, dict):
                log.add(path, "an episode must be a dict", field=where)
                continue
            try:
                yield _episode(record, path, root, number)
            except SourceError as error:
                log.add(path, str(error), field=where)
