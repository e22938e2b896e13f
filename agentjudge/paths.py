"""Checking the paths a command is given, before any work: a missing dataset or input folder is
exit code 2 with a message naming the path, never a half-run or a silent success."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from agentjudge.console import console
from dataset.store import DatasetNotFoundError, check_dataset_folder
from storage.locks import FolderBusyError, ResultsFolderError

__all__ = [
    "fail",
    "folder_error",
    "name_mappings",
    "require_corrections",
    "require_dataset",
    "require_folder",
    "supplied_environments",
]

WAIT_HINT = "pass --wait to wait for it to finish"


def fail(message: str) -> typer.Exit:
    """Print ``error: <message>`` and return the exit (code 2) for the caller to raise."""
    console.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def require_dataset(path: Path) -> None:
    """Stop with exit code 2 when ``path`` is not a readable folder."""
    try:
        check_dataset_folder(path)
    except DatasetNotFoundError as error:
        raise fail(str(error)) from None


def require_corrections(path: Path) -> None:
    """Stop with exit code 2, naming the file (and line), when a label-correction file is
    missing or a line of it is not a correction."""
    from dataset.corrections import read_corrections

    if not path.is_file():
        raise fail(f"{path}: no such label-correction file")
    try:
        read_corrections(path)
    except ValueError as error:
        raise fail(str(error)) from None


def require_folder(path: Path, what: str) -> None:
    """Stop with exit code 2 when ``path`` (described as ``what``) is not a readable folder."""
    try:
        with os.scandir(path):
            return
    except FileNotFoundError:
        problem = f"no such {what} (the path does not exist)"
    except NotADirectoryError:
        problem = f"the {what} is a file, not a folder"
    except OSError as error:
        problem = f"the {what} cannot be read: {error.strerror or error}"
    raise fail(f"{path}: {problem}")


def folder_error(error: ResultsFolderError) -> typer.Exit:
    """Print why a results folder cannot be used (with how to wait, when it is busy)."""
    hint = f"; {WAIT_HINT}" if isinstance(error, FolderBusyError) else ""
    return fail(f"{error}{hint}")


def name_mappings(values: list[str] | None, option: str, form: str) -> dict[str, str]:
    """Repeated ``NAME=VALUE`` options as a mapping; one without ``=``, a name or a value stops
    with exit code 2 naming ``option`` and the ``form`` expected."""
    mapping: dict[str, str] = {}
    for given in values or []:
        name, separator, value = given.partition("=")
        if not separator or not name.strip() or not value.strip():
            raise fail(f"{option} {given!r}: expected {form}")
        mapping[name.strip()] = value.strip()
    return mapping


SuppliedEnvironments = Annotated[
    list[str] | None,
    typer.Option(
        "--environment",
        metavar="TASK_ID=PATH",
        help="Start a task's trajectories from this state instead of the task's own: a "
        "prepared database (SQL or pg_dump archive; the task's preparation does not run) or "
        "a folder (filesystem). Repeatable.",
        rich_help_panel="Environments",
    ),
]
"""The ``--environment`` option of the commands that replay (``replay``, ``judge``)."""


def supplied_environments(values: list[str] | None) -> dict[str, Path]:
    """``--environment TASK_ID=PATH`` options of replaying commands: each path must exist."""
    mapping = {
        task: Path(path)
        for task, path in name_mappings(values, "--environment", "TASK_ID=PATH").items()
    }
    for task, path in mapping.items():
        if not path.exists():
            raise fail(f"--environment {task}={path}: the path does not exist")
    return mapping
