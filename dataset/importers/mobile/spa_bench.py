"""SPA-Bench sessions as source runs: ``session-<id>/<task_id>/<agent>/log.json`` + ``results.csv``.

SPA-Bench writes one folder per task and, inside it, one per agent: ``log.json`` and the
screenshots ``0.png``, ``1.png``, ... (``<n>.png`` is the screen the action of step ``n + 1``
was taken on; one more is the screen after the last). ``log.json`` is a list of step records
(``step`` from 1, the agent's own keys such as ``action_output``/``summary`` for M3A and T3A,
``response`` for AutoUI, ``action_gen_response`` for SeeAct, token counts, and ``action``:
``[type, {"detail_type": "coordinates" | "string", "detail": ...}]``) ending with a summary
record (``total_steps``, ``finish_signal``, ...). An ``error.json`` beside it means the run
stopped on an error. The task text and the outcome are only in the session's ``results.csv``:
``task_description`` on the row whose ``task_identifier`` names the task folder, and
``<reasoning>_<action mode>_<agent>_evaluation``: S/F from SPA-Bench's automatic (model-based)
evaluator, recorded as an ``evaluator`` label, never a human one; E (an evaluation error) and N
(not evaluated) leave the run unlabelled.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dataset.actions import AndroidAction
from dataset.importers.mobile.actions import (
    ActionError,
    android_action_from_text,
    swipe_direction,
)
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.sources import SourceError, regular_file, ui_elements_text
from dataset.importers.source_files import SourceFileError, read_source_file
from dataset.problems import ProblemLog

__all__ = ["read_spa_bench"]

RESULTS_FILE = "results.csv"

_TYPES = {
    "click": "click",
    "tap": "click",
    "double_tap": "double_tap",
    "long_press": "long_press",
    "longpress": "long_press",
    "input_text": "input_text",
    "type": "input_text",
    "text": "input_text",
    "keyboard_enter": "keyboard_enter",
    "press_enter": "keyboard_enter",
    "enter": "keyboard_enter",
    "navigate_back": "navigate_back",
    "press_back": "navigate_back",
    "back": "navigate_back",
    "navigate_home": "navigate_home",
    "press_home": "navigate_home",
    "home": "navigate_home",
    "open_app": "open_app",
    "open": "open_app",
    "launch": "open_app",
    "scroll": "scroll",
    "swipe": "swipe",
    "status": "status",
    "status_task_complete": "status",
    "finish": "status",
    "done": "status",
    "task_impossible": "status",
    "wait": "wait",
    "answer": "answer",
}
"""The action types SPA-Bench's agents log, by lower-cased name, as AndroidWorld's types."""

_NUMBER = r"(-?\d+(?:\.\d+)?)"
_TYPED = re.compile(r'^The text "(.*)" has been inputted\.?$', re.DOTALL)
_SWIPED = re.compile(
    rf"coordinates \({_NUMBER},\s*{_NUMBER}\) have been swiped to the (up|down|left|right)"
)
_SWIPE = re.compile(rf"from coordinates \({_NUMBER},\s*{_NUMBER}\) to \({_NUMBER},\s*{_NUMBER}\)")
_REASON = re.compile(r"Reason:\s*(.*?)\s*(?:\n\s*Action:|$)", re.DOTALL)
_EMBEDDED_ACTION = re.compile(r"Action:\s*(\{.*\})", re.DOTALL)


def _coordinates(detail: object, where: str) -> list[int]:
    if not isinstance(detail, list) or len(detail) not in (2, 4):
        raise SourceError(f"{where}.detail: coordinates must be [x, y] (or [x1, y1, x2, y2])")
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in detail):
        raise SourceError(f"{where}.detail: coordinates must be numbers, got {detail!r}")
    return [round(n) for n in detail]


def _from_sentence(
    kind: str, name: str, text: str, fields: dict[str, Any], extra: dict[str, Any]
) -> None:
    """The fields a ``string`` detail gives (typed text, app, end state, swipe coordinates)."""
    if text:
        extra["detail"] = text
    swiped, swipe = _SWIPED.search(text), _SWIPE.search(text)
    typed = _TYPED.match(text)
    if kind == "input_text":
        fields["text"] = typed.group(1) if typed else text
    elif kind == "open_app":
        fields["app_name"] = text
    elif kind == "status":
        impossible = "impossible" in f"{name} {text}".lower()
        fields["goal_status"] = "infeasible" if impossible else "complete"
    elif swipe is not None:
        x1, y1, x2, y2 = (round(float(n)) for n in swipe.groups())
        fields.update(x=x1, y=y1, direction=swipe_direction(x1, y1, x2, y2))
        extra.update(end_x=x2, end_y=y2)
    elif swiped is not None:
        fields.update(
            x=round(float(swiped.group(1))),
            y=round(float(swiped.group(2))),
            direction=swiped.group(3),
        )


def _action(raw: object, where: str) -> AndroidAction:
    """SPA-Bench's ``[type, {detail_type, detail}]`` as an AndroidWorld action."""
    if not (isinstance(raw, list) and len(raw) == 2 and isinstance(raw[1], dict)):
        raise SourceError(f"{where}: expected [type, {{detail_type, detail}}]")
    name, info = raw
    kind = _TYPES.get(str(name).strip().lower())
    if kind is None:
        known = ", ".join(sorted(_TYPES))
        raise SourceError(f"{where}[0]: unknown action type {name!r} (known: {known})")
    detail_type, detail = info.get("detail_type"), info.get("detail")
    fields: dict[str, Any] = {"action_type": kind}
    extra: dict[str, Any] = {"source_type": name} if name != kind else {}
    if detail_type == "coordinates":
        numbers = _coordinates(detail, f"{where}[1]")
        fields["x"], fields["y"] = numbers[0], numbers[1]
        if len(numbers) == 4:
            fields["direction"] = swipe_direction(*numbers)
            extra.update(end_x=numbers[2], end_y=numbers[3])
    elif detail_type == "string":
        _from_sentence(kind, str(name), str(detail or ""), fields, extra)
    else:
        raise SourceError(f"{where}[1].detail_type: {detail_type!r} is not coordinates or string")
    try:
        return AndroidAction(**fields, extra=extra)
    except ValueError as error:
        message = str(error).splitlines()[-1].strip()
        raise SourceError(f"{where}: {name!r} with {detail!r}: {message}") from None


def _reasoning(step: dict[str, Any]) -> str | None:
    output = step.get("action_output")
    if isinstance(output, str):
        match = _REASON.search(output)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return first_text(step, ("reasoning", "thought", "action_gen_response", "response"))


def _answer(step: dict[str, Any]) -> str | None:
    """The text of an AndroidWorld ``answer`` the agent's own output holds (SPA-Bench logs
    it as a ``wait``)."""
    output = step.get("action_output")
    if not isinstance(output, str) or _EMBEDDED_ACTION.search(output) is None:
        return None
    try:
        action = android_action_from_text(output)
    except ActionError:
        return None
    return action.text if action.action_type == "answer" else None


def _results_row(session: Path, task: str, log: ProblemLog) -> dict[str, str] | None:
    path = session / RESULTS_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        with path.open(encoding="utf-8", newline="") as stream:
            for row in csv.DictReader(stream):
                if (row.get("task_identifier") or "").strip() == task:
                    return {str(k): (v or "") for k, v in row.items() if k is not None}
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        log.add(path, f"cannot be read: {error}")
    return None


def _evaluation(row: dict[str, str], agent: str) -> tuple[str | None, dict[str, Any]]:
    """The evaluator's outcome for ``agent`` and the facts around it."""
    outcome: str | None = None
    facts: dict[str, Any] = {}
    suffix = f"_{agent}_evaluation"
    for column, value in row.items():
        if not column.endswith(suffix):
            continue
        mode = column.removesuffix(suffix)
        verdict = value.strip().upper()
        facts[f"evaluation_{mode}"] = verdict
        details = row.get(f"{mode}_{agent}_details", "").strip()
        if details and details != "{}":
            try:
                facts[f"evaluation_{mode}_details"] = json.loads(details)
            except json.JSONDecodeError:
                facts[f"evaluation_{mode}_details"] = details
        if outcome is None and verdict in ("S", "F"):
            outcome = "PASS" if verdict == "S" else "FAIL"
    return outcome, facts


def _task_facts(row: dict[str, str], agent: str) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for column in ("task_app", "task_language", "task_difficulty", "golden_steps", "is_cross_app"):
        if row.get(column, "").strip():
            facts[column] = row[column].strip()
    for column in ("exit_code", "exec_error", "finish_signal", "device"):
        value = row.get(f"{agent}_{column}", "").strip()
        if value:
            facts[column] = value
    return facts


def _screen(folder: Path, number: int, where: str, required: bool) -> Screen | None:
    for extension in (".png", ".jpg", ".jpeg"):
        candidate = folder / f"{number}{extension}"
        if candidate.exists() or candidate.is_symlink():
            image = regular_file(candidate, folder, where)
            dump = folder / f"{number}.xml"
            ui = None
            if dump.exists() or dump.is_symlink():
                try:
                    text = read_source_file(dump, folder).decode("utf-8", errors="replace")
                except SourceFileError as error:
                    raise SourceError(f"{where}: UI dump {dump.name!r}: {error}") from None
                ui = ui_elements_text(text)
            return Screen(image, ui)
    if required:
        raise SourceError(f"{where}: screenshot {number}.png is missing in {folder.name}/")
    return None


def _run(log_file: Path, record: object, log: ProblemLog) -> SourceRun:
    folder = log_file.parent
    agent, task, session = folder.name, folder.parent.name, folder.parent.parent
    if not isinstance(record, list):
        raise SourceError("expected a list of step records ending with a summary record")
    steps = [(i, r) for i, r in enumerate(record) if isinstance(r, dict) and "action" in r]
    summary = next((r for r in reversed(record) if isinstance(r, dict) and "total_steps" in r), {})
    row = _results_row(session, task, log)
    if row is None:
        raise SourceError(
            f"{session.name}/{RESULTS_FILE} has no row with task_identifier {task!r}: the task "
            "text is only there"
        )
    instruction = row.get("task_description", "").strip()
    if not instruction:
        raise SourceError(f"{RESULTS_FILE}: task_description is empty for {task!r}")
    actions = []
    screens: list[Screen] = []
    answer: str | None = None
    for position, (index, step) in enumerate(steps):
        where = f"[{index}]"
        number = step.get("step", position + 1)
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise SourceError(f"{where}.step: expected a step number from 1, got {number!r}")
        screen = _screen(folder, number - 1, f"{where}.screenshot", required=True)
        screens.append(screen or Screen())
        action = _action(step["action"], f"{where}.action")
        actions.append((action, _reasoning(step)))
        answer = _answer(step) or answer
    if not steps and isinstance(summary.get("total_steps"), int) and summary["total_steps"] > 0:
        raise SourceError(
            f"no step records, though the summary counts total_steps {summary['total_steps']}"
        )
    after = _screen(folder, len(steps), "final screenshot", required=False)
    if after is not None:
        screens.append(after)
    label, evaluation = _evaluation(row, agent)
    error_file = folder / "error.json"
    error = None
    if error_file.is_file() and not error_file.is_symlink():
        errors = log.read_json(error_file)
        if isinstance(errors, list):
            texts = [str(e.get("error_message")) for e in errors if isinstance(e, dict)]
            error = "; ".join(texts) or None
    finished = summary.get("finish_signal")
    return SourceRun(
        source_format="spa-bench",
        source_path=log_file,
        source_key=f"{session.name}/{task}/{agent}",
        benchmark="spa-bench",
        task_name=task,
        instruction=instruction,
        agent=agent,
        model=None,
        actions=actions,
        screens=screens,
        label=label,  # type: ignore[arg-type]
        label_source="evaluator",
        final_response=answer,
        details={"session": session.name, **_task_facts(row, agent), **evaluation},
        stop_reason="error" if error else ("completed" if finished == 1 else None),
        error=error,
    )


def _log_files(source: Path) -> list[Path]:
    if not source.is_dir():
        return [source]
    return sorted(p for p in source.rglob("log.json") if p.is_file() and not p.is_symlink())


def read_spa_bench(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every agent run (a folder holding ``log.json``) under ``source``: a session folder, a
    folder of sessions, or a task or agent folder inside a session."""
    for log_file in _log_files(source):
        record = log.read_json(log_file)
        if record is None:
            continue
        try:
            yield _run(log_file, record, log)
        except SourceError as error:
            log.add(log_file, str(error))
