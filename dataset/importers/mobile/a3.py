"""A3 and AITK histories as source runs.

A3 (``save_dir/<model>/task_<i>/``) writes ``histories/task_<i>_history.json``: a list of step
records, each repeating the task (``task``, ``task_level``, ``category``) and holding the screen
before its action (``xml``, ``screenshot``: file names under ``../states/xmls`` and
``../states/screenshots``), the action (``actions``: ``{"action": "open" | "tap" | "long_press"
| "swipe" | "type" | "enter" | "back" | "home" | "wait" | "end", ...}``) and the agent's text
(``agent_messages``). Its function evaluator's outcome is ``results/func_eval_results.json``
(``eval_results``), recorded as a ``verifier`` label. AITK, A3's successor
(``results/<model>/<task>/``), writes ``history.json``: an object with ``task``, ``name``,
``level``, ``category``, ``essential states``, ``exp_args`` and ``steps`` (each ``xml``,
``screenshot`` under ``states/``, ``action``, ``agent_message``, ``package``, ``activity``), and
no outcome. An ``end`` action's ``answer`` is the run's final answer.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dataset.actions import AndroidAction
from dataset.importers.mobile.actions import swipe_direction
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.sources import SourceError, as_object, regular_file
from dataset.problems import ProblemLog

__all__ = ["read_a3", "read_aitk"]

_THOUGHT = re.compile(r"Thought:\s*(.*?)\s*(?:\n\s*Action:|$)", re.DOTALL)
_KNOWN = ("open", "tap", "long_press", "swipe", "type", "enter", "back", "home", "wait", "end")


def _number(action: dict[str, Any], key: str, where: str) -> int:
    value = action.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise SourceError(f"{where}.{key}: expected a number, got {value!r}")
    return round(value)


def _action(raw: object, where: str) -> AndroidAction:
    """An A3/AITK action object as an AndroidWorld action (other keys kept in ``extra``)."""
    if not isinstance(raw, dict):
        raise SourceError(f"{where}: expected an action object")
    kind = raw.get("action")
    used = {"action"}
    fields: dict[str, Any]
    if kind == "open":
        fields = {"action_type": "open_app", "app_name": raw.get("app")}
        used.add("app")
    elif kind in ("tap", "long_press"):
        fields = {
            "action_type": "click" if kind == "tap" else "long_press",
            "x": _number(raw, "x", where),
            "y": _number(raw, "y", where),
        }
        used.update(("x", "y"))
    elif kind == "swipe":
        x1, y1, x2, y2 = (_number(raw, key, where) for key in ("x1", "y1", "x2", "y2"))
        fields = {"action_type": "swipe", "x": x1, "y": y1}
        fields["direction"] = swipe_direction(x1, y1, x2, y2)
        fields["extra_end"] = {"end_x": x2, "end_y": y2}
        used.update(("x1", "y1", "x2", "y2"))
    elif kind == "type":
        fields = {"action_type": "input_text", "text": raw.get("text")}
        used.add("text")
    elif kind in ("enter", "back", "home", "wait"):
        fields = {
            "action_type": {
                "enter": "keyboard_enter",
                "back": "navigate_back",
                "home": "navigate_home",
                "wait": "wait",
            }[kind]
        }
    elif kind == "end":
        fields = {"action_type": "status", "goal_status": "complete"}
    else:
        raise SourceError(
            f"{where}.action: unknown action type {kind!r} (known: {', '.join(_KNOWN)})"
        )
    extra = {key: value for key, value in raw.items() if key not in used}
    extra.update(fields.pop("extra_end", {}))
    try:
        return AndroidAction(**fields, extra=extra)
    except ValueError as error:
        message = str(error).splitlines()[-1].strip()
        raise SourceError(f"{where}: {json.dumps(raw)[:120]}: {message}") from None


def _reasoning(message: object) -> str | None:
    if not isinstance(message, str) or not message.strip():
        return None
    match = _THOUGHT.search(message)
    return match.group(1).strip() if match and match.group(1).strip() else message.strip()


def _screen(states: Path, step: dict[str, Any], root: Path, where: str) -> Screen:
    shot = step.get("screenshot")
    if not isinstance(shot, str) or not shot.strip():
        raise SourceError(f"{where}.screenshot: missing")
    image = regular_file(states / "screenshots" / shot, root, f"{where}.screenshot", shown=shot)
    ui = None
    xml = step.get("xml")
    if isinstance(xml, str) and xml.lstrip().startswith("<"):
        ui = xml
    elif isinstance(xml, str) and xml.strip():
        dump = regular_file(states / "xmls" / xml, root, f"{where}.xml", shown=xml)
        ui = dump.read_text(encoding="utf-8", errors="replace")
    return Screen(image, ui)


def _steps(
    records: list[Any], states: Path, root: Path, keys: tuple[str, str, str]
) -> tuple[list[tuple[AndroidAction, str | None]], list[Screen], str | None]:
    action_key, message_key, prefix = keys
    actions: list[tuple[AndroidAction, str | None]] = []
    screens: list[Screen] = []
    answer: str | None = None
    for position, step in enumerate(records):
        where = f"{prefix}[{position}]"
        if not isinstance(step, dict):
            raise SourceError(f"{where}: expected a step object")
        screens.append(_screen(states, step, root, where))
        action = _action(step.get(action_key), f"{where}.{action_key}")
        actions.append((action, _reasoning(step.get(message_key))))
        given = action.extra.get("answer")
        if isinstance(given, str) and given.strip():
            answer = given.strip()
    return actions, screens, answer


def _a3_history(path: Path, records: list[Any], root: Path, log: ProblemLog) -> SourceRun:
    run_folder = path.parent.parent if path.parent.name == "histories" else path.parent
    if not records:
        raise SourceError("the history holds no step records")
    first = records[0] if isinstance(records[0], dict) else {}
    instruction = first_text(first, ("task",))
    if instruction is None:
        raise SourceError("[0].task: missing")
    actions, screens, answer = _steps(
        records, run_folder / "states", root, ("actions", "agent_messages", "")
    )
    label = None
    results = run_folder / "results" / "func_eval_results.json"
    if results.is_file() and not results.is_symlink():
        outcome = log.read_json(results)
        value = outcome.get("eval_results") if isinstance(outcome, dict) else None
        if isinstance(value, bool):
            label = "PASS" if value else "FAIL"
        else:
            log.add(results, "eval_results is not true/false; left unlabelled", severity="warning")
    model = run_folder.parent.name
    details = {
        key: first[key] for key in ("task_level", "category") if isinstance(first.get(key), str)
    }
    return SourceRun(
        source_format="a3",
        source_path=path,
        source_key=run_folder.relative_to(root).as_posix() if run_folder != root else path.stem,
        benchmark="a3",
        task_name=run_folder.name,
        instruction=instruction,
        agent=model,
        model=model,
        actions=actions,
        screens=screens,
        label=label,  # type: ignore[arg-type]
        label_source="verifier",
        final_response=answer,
        details=details,
    )


def _aitk_history(path: Path, record: dict[str, Any], root: Path) -> SourceRun:
    instruction = first_text(record, ("task",))
    if instruction is None:
        raise SourceError("task: missing")
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise SourceError("steps: expected a list of step objects")
    actions, screens, answer = _steps(
        steps, path.parent / "states", root, ("action", "agent_message", "steps")
    )
    exp = as_object(record.get("exp_args"))
    agent_args, experiment = as_object(exp.get("agent")), as_object(exp.get("experiment"))
    model = first_text(experiment, ("name",)) or path.parent.parent.name
    details: dict[str, Any] = {
        key: record[key]
        for key in ("level", "category", "app", "app_package", "max_steps")
        if isinstance(record.get(key), str | int)
    }
    essential = record.get("essential states")
    if isinstance(essential, str):
        with contextlib.suppress(json.JSONDecodeError):
            essential = json.loads(essential)
    if isinstance(essential, list | str):
        details["essential_states"] = essential
    return SourceRun(
        source_format="aitk",
        source_path=path,
        source_key=path.parent.relative_to(root).as_posix() if path.parent != root else "run",
        benchmark="aitk",
        task_name=first_text(record, ("name",)) or path.parent.name,
        instruction=instruction,
        agent=first_text(agent_args, ("name",)) or model,
        model=model,
        actions=actions,
        screens=screens,
        final_response=answer,
        details=details,
    )


def _histories(source: Path) -> list[Path]:
    if not source.is_dir():
        return [source]
    found = [*source.rglob("*_history.json"), *source.rglob("history.json")]
    return sorted({p for p in found if p.is_file() and not p.is_symlink()})


def _read(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    if source.is_dir():
        root = source
    else:  # a single history: its run folder (with states/ and results/) is the source
        root = source.parent.parent if source.parent.name == "histories" else source.parent
    for path in _histories(source):
        record = log.read_json(path)
        if record is None:
            continue
        try:
            if isinstance(record, list):
                yield _a3_history(path, record, root, log)
            elif isinstance(record, dict) and "steps" in record:
                yield _aitk_history(path, record, root)
            else:
                raise SourceError(
                    "neither an A3 history (a list of step records) nor an AITK history (an "
                    "object with steps)"
                )
        except SourceError as error:
            log.add(path, str(error))


def read_a3(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every A3 (``histories/*_history.json``) or AITK (``history.json``) history under
    ``source`` (or the one file ``source``)."""
    return _read(source, log)


def read_aitk(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """The same reader under AITK's name: both layouts are recognised by their shape."""
    return _read(source, log)
