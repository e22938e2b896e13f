"""Files shared by a whole dataset: the ``assets/`` folder beside ``tasks/``.

An initial state names its files relative to its task's folder; a name that starts with
``dataset:`` is relative to the dataset's root instead, and must lead into ``assets/``
(``"path": "dataset:assets/clinic/seed.sql"``). Many tasks can so start from one copy of a
database seed, a page archive or a set of apps. Such a name is checked like any other: relative,
without ``..``, and (``dataset.store``, once symbolic links are followed) inside ``assets/``.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

__all__ = [
    "ASSETS_DIR",
    "DATASET_PREFIX",
    "check_relative_path",
    "check_state_reference",
    "is_dataset_reference",
    "state_file",
    "state_file_folder",
]

ASSETS_DIR = "assets"
"""The dataset's folder of shared files, beside ``tasks/`` and ``trajectories/``."""

DATASET_PREFIX = "dataset:"
"""Marks a state's file name as relative to the dataset's root (inside ``ASSETS_DIR``)."""


def check_relative_path(value: str) -> str:
    """``value`` unchanged when it is a relative path that cannot leave its folder; otherwise
    ``ValueError`` saying why."""
    if not value or "\x00" in value:
        raise ValueError("must be a non-empty path without null bytes")
    if value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", value):
        raise ValueError(f"must be relative to its folder, got absolute path {value!r}")
    if any(part == ".." for part in re.split(r"[\\/]", value)):
        raise ValueError(f"must stay inside its folder, got {value!r}")
    return value


def is_dataset_reference(reference: str) -> bool:
    """Whether a state's file name is relative to the dataset's root (``dataset:...``)."""
    return reference.startswith(DATASET_PREFIX)


def check_state_reference(value: str) -> str:
    """A state's file name: relative to the task's folder, or ``dataset:`` and a path inside the
    dataset's ``assets/`` folder; ``ValueError`` otherwise."""
    if not is_dataset_reference(value):
        return check_relative_path(value)
    inside = value.removeprefix(DATASET_PREFIX)
    try:
        check_relative_path(inside)
        parts = [part for part in PurePosixPath(inside.replace("\\", "/")).parts if part != "."]
        if len(parts) < 2 or parts[0] != ASSETS_DIR:
            raise ValueError(inside)
    except ValueError:
        raise ValueError(
            f"a {DATASET_PREFIX} name must lead into the dataset's {ASSETS_DIR}/ folder, "
            f"relative and without '..' ({DATASET_PREFIX}{ASSETS_DIR}/<file>), got {value!r}"
        ) from None
    return value


def _dataset_root(task_dir: Path) -> Path:
    # A task's folder is <root>/tasks/<id>.
    return task_dir.parent.parent


def state_file(task_dir: Path, reference: str) -> Path:
    """Where a state's file name leads, for the task whose folder is ``task_dir``
    (``<root>/tasks/<id>``)."""
    if is_dataset_reference(reference):
        return _dataset_root(task_dir) / reference.removeprefix(DATASET_PREFIX)
    return task_dir / reference


def state_file_folder(task_dir: Path, reference: str) -> Path:
    """The folder a state's file must stay inside, symbolic links followed: the task's own, or
    the dataset's ``assets/``."""
    if is_dataset_reference(reference):
        return _dataset_root(task_dir) / ASSETS_DIR
    return task_dir
