"""Finding MCPMark run folders and reading what their place in the results tree says.

Owns the results tree's layout (``<exp>/<model>__<service>/run-N/<category>__<task>/``): which
folders are runs, the names a run's path and ``meta.json`` give it, and reading its two JSON
files. Converts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.problems import ProblemLog


def find_run_dirs(*sources: Path) -> list[Path]:
    """Every folder at or below the sources holding ``messages.json`` and ``meta.json``, sorted."""
    found: set[Path] = set()
    for source in sources:
        for meta in [source / "meta.json", *source.rglob("meta.json")]:
            if meta.is_file() and (meta.parent / "messages.json").is_file():
                found.add(meta.parent)
    return sorted(found)


@dataclass
class RunKey:
    """The names of one run: where it sits in the results tree and what it attempted."""

    experiment: str | None
    model: str
    service: str
    run: str | None
    category: str
    task: str


def run_key(run_dir: Path, meta: dict[str, Any]) -> RunKey:
    """Read experiment, model, service, run and task names from the folder path and meta.json.

    The folder layout names the category and task; meta.json names the model and service when
    it has them, the folder names otherwise.
    """
    category, _, task = run_dir.name.partition("__")
    if not task:
        name = str(meta.get("task_name") or run_dir.name)
        category, _, task = name.replace("/", "__").partition("__")
        task = task or category
    run = run_dir.parent.name if run_dir.parent.name.startswith("run-") else None
    model_service = run_dir.parent.parent.name if run else run_dir.parent.name
    model, _, service = model_service.rpartition("__")
    meta_service = meta.get("mcp")
    if isinstance(meta_service, dict):
        meta_service = meta_service.get("service") or meta_service.get("name")
    if isinstance(meta_service, str) and meta_service:
        service = meta_service
    meta_model = meta.get("model_name")
    if isinstance(meta_model, str) and meta_model:
        model = meta_model
    experiment_dir = run_dir.parent.parent.parent if run else run_dir.parent.parent
    return RunKey(
        experiment=experiment_dir.name or None,
        model=model or "unknown-model",
        service=service.lower(),
        run=run,
        category=category,
        task=task,
    )


def read_run_files(run_dir: Path, log: ProblemLog) -> tuple[dict[str, Any], list[Any]] | None:
    """A run's ``meta.json`` object and ``messages.json`` list; None (logged) when unusable."""
    meta_path, messages_path = run_dir / "meta.json", run_dir / "messages.json"
    meta = log.read_json(meta_path)
    messages = log.read_json(messages_path)
    if meta is None or messages is None:
        return None
    if not isinstance(meta, dict):
        log.add(meta_path, f"must be a JSON object, got {type(meta).__name__}")
        return None
    if not isinstance(messages, list):
        log.add(messages_path, f"must be a JSON list of items, got {type(messages).__name__}")
        return None
    return meta, messages
