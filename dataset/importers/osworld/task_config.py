"""OSWorld's task JSON: finding it, and what the importer takes from it.

Owns locating an example's task file (under ``--tasks-root`` as ``examples/<domain>/<id>.json``,
``<domain>/<id>.json`` or anywhere below by name; else a task JSON beside the run, as AJ-Bench
keeps it), the OSWorld domains this runtime replays (LibreOffice Impress, Writer and Calc) and
their subdomains, and reading the setup steps: which files ``download`` steps fetch (url and
place on the agent's desktop), which document an ``open`` step opens, and the other setup steps
(``execute``, ``launch``, ``sleep``, ...), which the desktop carries out on replay or names as
not supported. Windows variants of a task (OSWorld keeps them under ``examples_windows`` with the
Linux task's ``id``) are told apart by where their file lies and by Windows paths in their setup.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from dataset.problems import ProblemLog

__all__ = [
    "APPLICATION_BY_EXTENSION",
    "OSWORLD_DOMAINS",
    "OTHER_OSWORLD_DOMAINS",
    "REPLAYED_SETUP_STEPS",
    "SetupFile",
    "TaskConfig",
    "application_for",
    "find_task_file",
    "read_task_config",
]

OSWORLD_DOMAINS: dict[str, str] = {
    "libreoffice_impress": "ppt",
    "libreoffice_writer": "word",
    "libreoffice_calc": "excel",
}
"""OSWorld domains this importer takes, with the ``gui`` subdomain each becomes."""

OTHER_OSWORLD_DOMAINS = frozenset(
    {"chrome", "gimp", "multi_apps", "os", "thunderbird", "vlc", "vs_code"}
)
"""OSWorld's other domains: reported and skipped (``multi_apps`` tasks span several
applications, and this runtime's desktops replay one LibreOffice application per task)."""

REPLAYED_SETUP_STEPS = frozenset({"download", "open", "sleep", "execute", "command", "launch"})
"""Setup step types a desktop carries out when it starts a task: ``download`` and ``open`` as
the task's document, ``sleep``, ``execute``/``command`` and ``launch`` inside the desktop, in
their recorded order after the document is open. Others are reported per task as not
supported."""

Application = Literal["impress", "writer", "calc"]

APPLICATION_BY_EXTENSION: dict[str, Application] = {
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "impress"),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), "writer"),
    **dict.fromkeys((".xlsx", ".xls", ".ods", ".csv"), "calc"),
}
"""The LibreOffice application that opens a document, by extension."""

_APPLICATION_BY_SUBDOMAIN: dict[str, Application] = {
    "ppt": "impress",
    "word": "writer",
    "excel": "calc",
}


def application_for(path: str, subdomain: str | None) -> Application | None:
    """The application for a document: by its extension, else by the task's subdomain."""
    by_extension = APPLICATION_BY_EXTENSION.get(PurePosixPath(path).suffix.lower())
    if by_extension is not None:
        return by_extension
    return _APPLICATION_BY_SUBDOMAIN.get(subdomain or "")


@dataclass(frozen=True)
class SetupFile:
    """One file a ``download`` setup step puts on the agent's desktop."""

    url: str
    """Where OSWorld fetched it from."""
    path: str
    """Where it was saved on the agent's desktop (e.g. ``/home/user/report.docx``)."""
    step: int
    """The position of its setup step in ``config`` (from 0), for messages."""

    @property
    def name(self) -> str:
        """The file's base name on the desktop."""
        return PurePosixPath(self.path).name


@dataclass
class TaskConfig:
    """What the importer takes from one task JSON."""

    file: Path
    """The task file read."""
    example_id: str
    """Its ``id`` (the example folder's name when the file has none)."""
    instruction: str
    """The instruction the agent received."""
    subdomain: str | None
    """``ppt``, ``word`` or ``excel`` from ``related_apps`` / ``snapshot``, when one fits."""
    downloads: list[SetupFile] = field(default_factory=list)
    """The files its ``download`` setup steps fetch, in order."""
    opened: list[str] = field(default_factory=list)
    """The paths its ``open`` setup steps open, in order."""
    max_steps: int | None = None
    """The task's own step cap, when it sets one."""
    windows: bool = False
    """Whether this is a Windows variant (its file lies under a folder naming Windows, or its
    setup names Windows paths)."""
    unsupported_setup: list[str] = field(default_factory=list)
    """Setup steps a desktop does not carry out, each as ``config[i] (type)``."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The whole file, kept as task metadata."""

    @property
    def document(self) -> str | None:
        """The desktop path of the document the run starts with: the first office file an
        ``open`` step opens, else the first office file downloaded."""
        for path in [*self.opened, *(item.path for item in self.downloads)]:
            if PurePosixPath(path).suffix.lower() in APPLICATION_BY_EXTENSION:
                return path
        return None


def names_windows(path: Path | str) -> bool:
    """Whether a folder of ``path`` names Windows (``examples_windows``, ``results_windows``)."""
    return any("windows" in part.lower() for part in Path(path).parts[:-1])


def _windows_path(path: str) -> bool:
    return bool(re.match(r"^[A-Za-z]:[\\/]", path)) or "\\" in path


def find_task_file(
    example_id: str,
    domain: str | None,
    tasks_root: Path | None,
    run_folder: Path,
    *,
    windows: bool = False,
) -> Path | None:
    """The task JSON of ``example_id``: under ``tasks_root`` first, then beside the run.
    ``windows`` asks for the Windows variant (``examples_windows/<domain>/<id>.json``), which
    otherwise is never taken for the Linux task of the same id."""
    if tasks_root is not None:
        candidates = []
        examples = "examples_windows" if windows else "examples"
        if domain:
            candidates += [
                tasks_root / examples / domain / f"{example_id}.json",
                tasks_root / domain / f"{example_id}.json",
            ]
        candidates.append(tasks_root / f"{example_id}.json")
        for candidate in candidates:
            if candidate.is_file() and names_windows(candidate.relative_to(tasks_root)) == windows:
                return candidate
        found = [
            path
            for path in sorted(tasks_root.rglob(f"{example_id}.json"))
            if names_windows(path.relative_to(tasks_root)) == windows
        ]
        if found:
            return found[0]
    for folder in (run_folder, run_folder.parent):
        named = folder / f"{example_id}.json"
        if named.is_file():
            return named
        for candidate in sorted(folder.glob("*.json")):
            if _looks_like_task(candidate):
                return candidate
    return None


def _looks_like_task(path: Path) -> bool:
    try:
        if path.stat().st_size > 5_000_000:
            return False
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(payload, dict) and isinstance(payload.get("instruction"), str)


def read_task_config(path: Path, example_id: str, log: ProblemLog) -> TaskConfig | None:
    """Read the task JSON at ``path``; None (logged) when it is unusable."""
    raw = log.read_json(path)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        log.add(path, f"a task file must hold an object, not {type(raw).__name__}")
        return None
    instruction = raw.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        log.add(path, "no instruction (a non-empty string) in the task file", field="instruction")
        return None
    identifier = raw.get("id")
    config = TaskConfig(
        file=path,
        example_id=identifier if isinstance(identifier, str) and identifier else example_id,
        instruction=instruction.strip(),
        subdomain=_subdomain(raw),
        raw=raw,
    )
    max_steps = raw.get("max_steps")
    if isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps > 0:
        config.max_steps = max_steps
    setup = raw.get("config", [])
    if not isinstance(setup, list):
        log.add(path, "must be a list of setup steps", field="config")
        return config
    for position, step in enumerate(setup):
        _read_setup_step(path, position, step, config, log)
    config.windows = config.windows or any(
        _windows_path(item) for item in [*config.opened, *(f.path for f in config.downloads)]
    )
    return config


def _subdomain(raw: dict[str, Any]) -> str | None:
    apps = raw.get("related_apps")
    names = [app for app in apps if isinstance(app, str)] if isinstance(apps, list) else []
    snapshot = raw.get("snapshot")
    if isinstance(snapshot, str):
        names.append(snapshot)
    for name in names:
        subdomain = OSWORLD_DOMAINS.get(name.lower()) or OSWORLD_DOMAINS.get(
            f"libreoffice_{name.lower()}"
        )
        if subdomain is not None:
            return subdomain
    return None


def _runnable_step_fault(kind: str, parameters: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(parameter, message, short form)`` when a sleep/execute/launch step cannot be run."""
    if kind in ("execute", "command", "launch"):
        command = parameters.get("command")
        if (isinstance(command, str) and command) or (
            isinstance(command, list) and command and all(isinstance(p, str) for p in command)
        ):
            return None
        message = f"a {kind} step needs a 'command' (a string or a list of strings)"
        return "command", message, f"{kind} without a command"
    if kind == "sleep":
        seconds = parameters.get("seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            return None
        message = "a sleep step needs a number of 'seconds' (0 or more)"
        return "seconds", message, "sleep without seconds"
    return None


def _read_setup_step(
    path: Path, position: int, step: object, config: TaskConfig, log: ProblemLog
) -> None:
    where = f"config[{position}]"
    if not isinstance(step, dict):
        log.add(path, "a setup step must be an object", field=where, severity="warning")
        return
    kind = step.get("type")
    parameters = step.get("parameters")
    if not isinstance(parameters, dict):
        parameters = {}
    if kind not in REPLAYED_SETUP_STEPS:
        config.unsupported_setup.append(f"{where} ({kind})")
    else:
        fault = _runnable_step_fault(str(kind), parameters)
        if fault is not None:
            name, message, short = fault
            log.add(path, message, field=f"{where}.parameters.{name}")
            config.unsupported_setup.append(f"{where} ({short})")
    if kind == "download":
        files = parameters.get("files")
        if not isinstance(files, list):
            log.add(path, "a download step needs a list 'files'", field=f"{where}.parameters.files")
            return
        for number, item in enumerate(files):
            url = item.get("url") if isinstance(item, dict) else None
            target = item.get("path") if isinstance(item, dict) else None
            if not (isinstance(url, str) and url and isinstance(target, str) and target):
                log.add(
                    path,
                    "a downloaded file needs a 'url' and a 'path'",
                    field=f"{where}.parameters.files[{number}]",
                )
                continue
            config.downloads.append(SetupFile(url=url, path=target, step=position))
    elif kind == "open":
        target = parameters.get("path")
        if isinstance(target, str) and target:
            config.opened.append(target)
        else:
            log.add(path, "an open step needs a 'path'", field=f"{where}.parameters.path")
