"""Finding MCPMark run folders and reading what their place in the results tree says.

Owns the three layouts runs are published in, and the names each gives a run:

* MCPMark's own: ``<exp>/<model>__<service>/run-N/<category>__<task>/`` (also without ``run-N``);
* the community experiments': ``<server>/run-N/<category>__<task>/``, where ``<server>`` names
  the server implementation (``crystaldba``, ``supabase``, ``insforge``) and the model comes from
  ``meta.json``;
* AJ-Bench's: ``.../<service>/.../{success,fail}/<model_run>/messages.json``, where the folder
  above the run is the label and ``meta.json`` may be missing.

Also reads a run's two JSON files. Converts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dataset.importers.mcpmark.services import SERVICES, Service, service_named
from dataset.problems import ProblemLog

Layout = Literal["mcpmark", "community", "ajbench"]

LABEL_FOLDERS = {"success": True, "fail": False}
"""AJ-Bench's label folders and the outcome each stands for."""


def find_run_dirs(*sources: Path) -> list[Path]:
    """Every run folder at or below the sources, sorted: a folder holding ``messages.json`` and
    ``meta.json``, or ``messages.json`` alone inside an AJ-Bench ``success``/``fail`` folder."""
    found: set[Path] = set()
    for source in sources:
        for messages in [source / "messages.json", *source.rglob("messages.json")]:
            folder = messages.parent
            if not messages.is_file():
                continue
            if (folder / "meta.json").is_file() or folder.parent.name in LABEL_FOLDERS:
                found.add(folder)
    return sorted(found)


@dataclass
class RunKey:
    """The names of one run: where it sits in the results tree and what it attempted."""

    layout: Layout
    experiment: str | None
    model: str
    mcp: str
    """The service as the run names it (``meta.json``'s ``mcp``, else its folders), lowercased."""
    service: Service | None
    """What that name stands for; None when this importer does not know it."""
    implementation: str | None
    """The server folder of the community layout (``crystaldba``); None in the other layouts."""
    run: str | None
    """``run-N``, or AJ-Bench's ``<model_run>`` folder name."""
    category: str
    task: str
    path_label: bool | None = None
    """AJ-Bench's label folder: True for ``success``, False for ``fail``."""

    @property
    def server_part(self) -> str | None:
        """The part of a trajectory id naming the server: the community folder, else the
        server implementation unless it is the only one of its service (named after it)."""
        if self.implementation is not None:
            return self.implementation
        if self.service is None or self.service.server == self.service.family:
            return None
        return self.service.server


def run_key(run_dir: Path, meta: dict[str, Any]) -> RunKey:
    """Read layout, experiment, model, service, run and task names from the path and meta.json.

    The folder layout names the category and task; meta.json names the model and service when
    it has them, the folder names otherwise.
    """
    if run_dir.parent.name in LABEL_FOLDERS:
        key = _ajbench_key(run_dir, meta)
    else:
        key = _results_key(run_dir, meta)
    meta_model = meta.get("model_name")
    if isinstance(meta_model, str) and meta_model:
        key.model = meta_model
    meta_service = meta.get("mcp")
    if isinstance(meta_service, dict):
        meta_service = meta_service.get("service") or meta_service.get("name")
    if isinstance(meta_service, str) and meta_service:
        key.mcp = meta_service.lower()
    key.service = service_named(key.mcp)
    return key


def _split_task(name: str) -> tuple[str, str]:
    category, _, task = name.replace("/", "__").partition("__")
    return category, task or category


def _results_key(run_dir: Path, meta: dict[str, Any]) -> RunKey:
    if "__" in run_dir.name:
        category, task = _split_task(run_dir.name)
    else:
        category, task = _split_task(str(meta.get("task_name") or run_dir.name))
    run = run_dir.parent.name if run_dir.parent.name.startswith("run-") else None
    holder = run_dir.parent.parent if run else run_dir.parent
    model, _, service = holder.name.rpartition("__")
    if model:  # MCPMark's own <model>__<service> folder, inside its experiment folder
        return RunKey(
            layout="mcpmark",
            experiment=holder.parent.name or None,
            model=model,
            mcp=service.lower(),
            service=None,
            implementation=None,
            run=run,
            category=category,
            task=task,
        )
    # The community layout: the folder names the server implementation, not model and service.
    return RunKey(
        layout="community",
        experiment=None,
        model="unknown-model",
        mcp=holder.name.lower(),
        service=None,
        implementation=holder.name,
        run=run,
        category=category,
        task=task,
    )


def _ajbench_key(run_dir: Path, meta: dict[str, Any]) -> RunKey:
    label_dir = run_dir.parent
    # Folders between the service folder and the label folder name the task.
    between: list[str] = []
    service = ""
    for folder in label_dir.parents:
        if folder.name.lower() in SERVICES:
            service = folder.name.lower()
            break
        if not folder.name:
            break
        between.insert(0, folder.name)
    if not service:
        between = [label_dir.parent.name]
    if between and "__" in between[-1]:
        category, task = _split_task(between[-1])
    elif len(between) >= 2:
        category, task = "__".join(between[:-1]), between[-1]
    elif between:
        category = task = between[-1]
    else:
        category, task = _split_task(str(meta.get("task_name") or run_dir.name))
    return RunKey(
        layout="ajbench",
        experiment=None,
        model=run_dir.name,
        mcp=service,
        service=None,
        implementation=None,
        run=run_dir.name,
        category=category,
        task=task,
        path_label=LABEL_FOLDERS[label_dir.name],
    )


def read_run_files(run_dir: Path, log: ProblemLog) -> tuple[dict[str, Any], list[Any]] | None:
    """A run's ``meta.json`` object ({} for an AJ-Bench run without one) and ``messages.json``
    list; None (logged) when unusable."""
    meta_path, messages_path = run_dir / "meta.json", run_dir / "messages.json"
    meta: object = {}
    if meta_path.is_file() or run_dir.parent.name not in LABEL_FOLDERS:
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
