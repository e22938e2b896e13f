"""AgentRewardBench's cleaned web trajectories as source runs.

The layout is ``trajectories/cleaned/<benchmark>/<agent>/<experiment>/<task>.json`` (the folders
name the web benchmark and the agent; point the importer at ``cleaned/`` or any folder above the
benchmark folders). A file holds ``goal`` and ``steps``, each with ``num``, ``reasoning``,
``action`` (a BrowserGym call such as ``click('a51')``, kept as a tool call), ``screenshot_path``
(relative to the file, or to the source folder), ``url`` and ``axtree`` (the accessibility tree
the agent read). Its screens are the pages the agent saw before each action. Labels come from the
annotators (``--labels``), keyed by ``<benchmark>/<agent>/<experiment>/<task>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dataset.importers.mobile.actions import ActionError, browser_action_from_text
from dataset.importers.mobile.common import Screen, SourceRun, first_text
from dataset.importers.mobile.sources import SourceError, image_reference
from dataset.problems import ProblemLog

__all__ = ["read_agentrewardbench"]


def _screenshot(
    value: object, path: Path, root: Path, where: str
) -> Path | bytes | list[object] | None:
    try:
        return image_reference(value, path.parent, root, where)  # type: ignore[return-value]
    except SourceError:
        return image_reference(value, root, root, where)  # type: ignore[return-value]


def _trajectory(path: Path, record: dict[str, object], root: Path) -> SourceRun:
    parts = path.relative_to(root).parts
    if len(parts) < 4:
        raise SourceError(
            "expected <benchmark>/<agent>/<experiment>/<task>.json below the source folder"
        )
    benchmark, agent, experiment = parts[-4], parts[-3], parts[-2]
    goal = first_text(record, ("goal", "intent", "instruction"))  # type: ignore[arg-type]
    if goal is None:
        raise SourceError("goal: missing")
    steps = record.get("steps")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise SourceError("steps: expected a list of step objects")
    actions = []
    screens = []
    for number, step in enumerate(steps):
        where = f"steps[{number}]"
        screens.append(
            Screen(
                _screenshot(step.get("screenshot_path"), path, root, f"{where}.screenshot_path"),  # type: ignore[arg-type]
                step.get("axtree") if isinstance(step.get("axtree"), str) else None,
                step.get("url") if isinstance(step.get("url"), str) else None,
            )
        )
        raw = step.get("action")
        if not isinstance(raw, str) or not raw.strip():
            if number == len(steps) - 1:
                break  # the last record is often the final page with no action
            raise SourceError(f"{where}.action: missing")
        try:
            action = browser_action_from_text(raw)
        except ActionError as error:
            raise SourceError(f"{where}.action: {error}") from None
        actions.append((action, first_text(step, ("reasoning", "thought"))))
    key = f"{benchmark}/{agent}/{experiment}/{path.stem}"
    return SourceRun(
        source_format="agentrewardbench",
        source_path=path,
        source_key=key,
        benchmark=benchmark,
        task_name=path.stem,
        instruction=goal,
        agent=agent,
        model=first_text(record, ("model",)),  # type: ignore[arg-type]
        actions=actions,
        screens=screens,
        domain="gui",
        subdomain="web",
        details={"experiment": experiment},
    )


def read_agentrewardbench(source: Path, log: ProblemLog) -> Iterator[SourceRun]:
    """Every trajectory file under ``source``."""
    root = source
    for path in sorted(source.rglob("*.json")):
        record = log.read_json(path)
        if record is None:
            continue
        if not isinstance(record, dict):
            log.add(path, "a trajectory must be a JSON object")
            continue
        try:
            yield _trajectory(path, record, root)
        except SourceError as error:
            log.add(path, str(error))
