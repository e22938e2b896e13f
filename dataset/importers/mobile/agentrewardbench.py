"""AgentRewardBench's web trajectories as source runs, from its release layout.

The release holds ``trajectories/cleaned/<benchmark>/<agent>/<experiment>/<task>.json`` (next to
``trajectories/screenshots`` and ``trajectories/judgments``, which are not trajectories) and
``annotations.csv`` at its root. The importer takes the root, ``trajectories/``, ``cleaned/`` or
any folder inside ``cleaned/``. A file holds ``benchmark``, ``agent``, ``model``, ``valid``,
``goal``, ``summary_info`` and ``steps``, each with ``num``, ``reasoning``, ``action`` (a
BrowserGym call such as ``click('a51')``, kept as a tool call; null on the last record, the page
after the last action), ``screenshot_path`` (relative to the release root), ``url`` and
``axtree`` (the accessibility tree the agent read). The text of the last ``send_msg_to_user``
is the run's final answer. Labels are the annotators' (``annotations.csv``, read by
``dataset.importers.mobile.labels``), keyed by ``<benchmark>/<agent>/<experiment>/<task>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dataset.actions import ToolCallAction
from dataset.importers.mobile.actions import ActionError, browser_action_from_text
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.sources import SourceError, regular_file
from dataset.problems import ProblemLog

__all__ = ["ANNOTATIONS_FILE", "read_agentrewardbench", "release_annotations"]

ANNOTATIONS_FILE = "annotations.csv"
_ANSWERS = ("send_msg_to_user", "report_infeasible")


def _layout(source: Path) -> tuple[Path, Path]:
    """``(cleaned folder, release root)`` for a source given as the root or a folder in it."""
    for candidate in (source / "trajectories" / "cleaned", source / "cleaned"):
        if candidate.is_dir():
            cleaned = candidate
            break
    else:
        inside = [p for p in (source, *source.parents) if p.name == "cleaned"]
        cleaned = inside[0] if inside else source
    root = cleaned.parent.parent if cleaned.parent.name == "trajectories" else cleaned.parent
    if cleaned == source and not inside_cleaned(source):
        root = source
    return cleaned, root


def inside_cleaned(path: Path) -> bool:
    """Whether ``path`` is ``cleaned/`` or lies inside it."""
    return any(p.name == "cleaned" for p in (path, *path.parents))


def release_annotations(source: Path) -> Path | None:
    """The release's ``annotations.csv`` for a source inside it, if there is one."""
    _, root = _layout(source)
    path = root / ANNOTATIONS_FILE
    return path if path.is_file() and not path.is_symlink() else None


def _screenshot(value: object, path: Path, root: Path, where: str) -> Path | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SourceError(f"{where}: expected a file path")
    for base in (root, path.parent):
        candidate = base / value
        if candidate.exists() or candidate.is_symlink():
            return regular_file(candidate, root, where, shown=value)
    raise SourceError(f"{where}: screenshot file {value!r} is missing")


def _answer(action: ToolCallAction) -> str | None:
    if action.name in _ANSWERS:
        text = action.arguments.get("arg1")
        return text if isinstance(text, str) else None
    return None


def _stop_reason(summary: object) -> Any:
    if not isinstance(summary, dict):
        return None
    if summary.get("err_msg"):
        return "error"
    if summary.get("truncated"):
        return "turn_limit"
    if summary.get("terminated"):
        return "completed"
    return None


def _trajectory(path: Path, record: dict[str, Any], cleaned: Path, root: Path) -> SourceRun:
    parts = path.relative_to(cleaned).parts
    if len(parts) < 4:
        raise SourceError(
            "expected cleaned/<benchmark>/<agent>/<experiment>/<task>.json below the release"
        )
    benchmark, agent, experiment = parts[-4], parts[-3], parts[-2]
    goal = first_text(record, ("goal", "intent", "instruction"))
    if goal is None:
        raise SourceError("goal: missing")
    steps = record.get("steps")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise SourceError("steps: expected a list of step objects")
    actions: list[tuple[Any, str | None]] = []
    screens = []
    answer = None
    for number, step in enumerate(steps):
        where = f"steps[{number}]"
        screens.append(
            Screen(
                _screenshot(step.get("screenshot_path"), path, root, f"{where}.screenshot_path"),
                step.get("axtree") if isinstance(step.get("axtree"), str) else None,
                step.get("url") if isinstance(step.get("url"), str) else None,
            )
        )
        raw = step.get("action")
        if not isinstance(raw, str) or not raw.strip():
            if number == len(steps) - 1:
                break  # the last record is the page after the last action
            raise SourceError(f"{where}.action: missing")
        try:
            action = browser_action_from_text(raw)
        except ActionError as error:
            raise SourceError(f"{where}.action: {error}") from None
        answer = _answer(action) or answer  # type: ignore[arg-type]
        actions.append((action, first_text(step, ("reasoning", "thought"))))
    if steps and not actions and len(steps) > 1:
        raise SourceError("steps: no action could be read from a non-empty trajectory")
    details: dict[str, Any] = {"experiment": experiment}
    if isinstance(record.get("valid"), bool):
        details["valid"] = record["valid"]
    summary = record.get("summary_info")
    if isinstance(summary, dict) and summary.get("err_msg"):
        details["error"] = str(summary["err_msg"])
    return SourceRun(
        source_format="agentrewardbench",
        source_path=path,
        source_key=f"{benchmark}/{agent}/{experiment}/{path.stem}",
        benchmark=benchmark,
        task_name=path.stem,
        instruction=goal.strip(),
        agent=agent,
        model=first_text(record, ("model",)),
        actions=actions,
        screens=screens,
        domain="gui",
        subdomain="web",
        final_response=answer,
        details=details,
        stop_reason=_stop_reason(summary),
    )


def read_agentrewardbench(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every trajectory file of the release's ``cleaned/`` tree under ``source``."""
    cleaned, root = _layout(source)
    walk = source if inside_cleaned(source) else cleaned
    files = [walk] if walk.is_file() else sorted(walk.rglob("*.json"))
    for path in files:
        if path.is_symlink() or not path.is_file():
            continue
        record = log.read_json(path)
        if record is None:
            continue
        if not isinstance(record, dict):
            log.add(path, "a trajectory must be a JSON object")
            continue
        try:
            yield _trajectory(path, record, cleaned, root)
        except SourceError as error:
            log.add(path, str(error))
