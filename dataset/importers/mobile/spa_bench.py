"""SPA-Bench task logs (``log.json`` with ``<n>.png`` screenshots) as source runs.

A run is a folder holding ``log.json`` and the screenshots ``0.png``, ``1.png``, ... (``<n>.png``
is the screen before action ``n``, counting from 0; one more is the screen after the last; an
``<n>.xml`` next to it is that screen's uiautomator dump). ``log.json`` is a list of step objects
or an object with ``steps`` and the run's facts (``task``/``instruction``, ``task_id``, ``app``,
``agent``, ``model``, ``success``). A step has ``action`` (a call string such as ``tap(540,
1200)``, ``swipe(x1, y1, x2, y2)``, ``type("text")``, ``back()``, ``finish()``; or an AndroidWorld
object) and ``reasoning``/``thought``/``response``; an explicit ``screenshot`` overrides
``<n>.png``. The agent, when the log does not name it, is the folder above the run's.
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
from dataset.importers.source_files import SourceFileError, read_source_file, source_file_inside
from dataset.problems import ProblemLog

__all__ = ["read_spa_bench"]


def _screen(folder: Path, root: Path, number: int, explicit: object) -> Screen | None:
    image = image_reference(explicit, folder, root, f"step {number} screenshot")
    if image is None:
        for extension in (".png", ".jpg", ".jpeg"):
            candidate = folder / f"{number}{extension}"
            if candidate.is_file():
                image = source_file_inside(candidate, root)
                break
    dump = folder / f"{number}.xml"
    ui = None
    if dump.exists():
        ui = read_source_file(dump, root).decode("utf-8", errors="replace")
    if image is None and ui is None:
        return None
    return Screen(image, ui_elements_text(ui))


def _run(log_file: Path, record: object, root: Path) -> SourceRun:
    folder = log_file.parent
    facts: dict[str, object] = record if isinstance(record, dict) else {}
    steps = facts.get("steps") if isinstance(record, dict) else record
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise SourceError("steps: expected a list of step objects")
    instruction = first_text(facts, ("task", "instruction", "goal"))  # type: ignore[arg-type]
    if instruction is None:
        raise SourceError("task: the log names no task instruction (task, instruction or goal)")
    actions = []
    screens: list[Screen] = []
    for number, step in enumerate(steps):
        screen = _screen(folder, root, number, step.get("screenshot"))
        screens.append(screen or Screen())
        raw = step.get("action")
        try:
            if isinstance(raw, dict):
                action = android_action_from_object(raw)
            elif isinstance(raw, str) and raw.strip():
                action = android_action_from_text(raw)
            else:
                raise SourceError(f"steps[{number}].action: missing")
        except ActionError as error:
            raise SourceError(f"steps[{number}].action: {error}") from None
        actions.append((action, first_text(step, ("reasoning", "thought", "response"))))
    after = _screen(folder, root, len(steps), None)
    if after is not None:
        screens.append(after)
    outcome = facts.get("success")
    label = None
    if isinstance(outcome, bool | int | float):
        label = "PASS" if float(outcome) > 0.5 else "FAIL"
    agent = first_text(facts, ("agent",)) or (  # type: ignore[arg-type]
        folder.parent.name if folder.parent != root.parent and folder != root else "unknown-agent"
    )
    task_name = first_text(facts, ("task_id", "task_identifier")) or instruction  # type: ignore[arg-type]
    return SourceRun(
        source_format="spa-bench",
        source_path=log_file,
        source_key=folder.relative_to(root).as_posix() if folder != root else folder.name,
        benchmark="spa-bench",
        task_name=task_name,
        instruction=instruction,
        agent=agent,
        model=first_text(facts, ("model",)),  # type: ignore[arg-type]
        actions=actions,
        screens=screens,
        label=label,  # type: ignore[arg-type]
        label_source="human",
        details={"app": str(facts["app"])} if "app" in facts else {},
    )


def read_spa_bench(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every run folder (one holding ``log.json``) under ``source``."""
    for log_file in sorted(source.rglob("log.json")) if source.is_dir() else [source]:
        record = log.read_json(log_file)
        if record is None:
            continue
        try:
            yield _run(log_file, record, source if source.is_dir() else source.parent)
        except (SourceError, SourceFileError) as error:
            log.add(log_file, str(error))
