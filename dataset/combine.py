"""Several datasets judged as one: a folder of suites (``datasets/``) made into a single
dataset whose tasks keep their domains, so one judge run reports every domain side by side.

``suite_folders`` finds the datasets directly inside a folder (sub-folders holding
``dataset.json``). ``combine_datasets`` writes a new dataset folder holding every task folder,
trajectory and shared asset (``assets/``) of them: files are hard links where the file system
allows (no copy, no symbolic link leaving the folder, which a dataset may not have), copies
otherwise. Two datasets
naming the same task or trajectory id, or the same entry of ``assets/``, stop it with both
named.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dataset.assets import ASSETS_DIR
from dataset.problems import DatasetError, Problem
from dataset.store import MANIFEST_FILE, TASKS_DIR, TRAJECTORIES_DIR, Manifest, write_manifest

__all__ = ["combine_datasets", "suite_folders"]


def suite_folders(folder: Path) -> list[Path]:
    """The datasets directly inside ``folder`` (sorted by name); empty when ``folder`` is a
    dataset itself or holds none."""
    if (folder / MANIFEST_FILE).is_file() or not folder.is_dir():
        return []
    return sorted(child for child in folder.iterdir() if (child / MANIFEST_FILE).is_file())


def _link_tree(source: Path, target: Path) -> None:
    if source.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for child in sorted(source.iterdir()):
            _link_tree(child, target / child.name)
        return
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def combine_datasets(sources: list[Path], target: Path) -> Path:
    """Write one dataset at ``target`` (replacing what is there) holding every task,
    trajectory and shared asset of ``sources``; returns ``target``."""
    owners: dict[str, Path] = {}
    clashes: list[Problem] = []
    plan: list[tuple[Path, Path]] = []
    for source in sources:
        for kind in (TASKS_DIR, TRAJECTORIES_DIR, ASSETS_DIR):
            folder = source / kind
            if not folder.is_dir():
                continue
            for entry in sorted(folder.iterdir()):
                key = f"{kind}/{entry.name}"
                if key in owners:
                    clashes.append(
                        Problem(
                            file=str(source / key),
                            message=f"cannot combine: {owners[key] / key} has the same name",
                        )
                    )
                    continue
                owners[key] = source
                plan.append((entry, target / kind / entry.name))
    if clashes:
        raise DatasetError(clashes)
    if target.exists():
        shutil.rmtree(target)
    (target / TASKS_DIR).mkdir(parents=True)
    (target / TRAJECTORIES_DIR).mkdir()
    names = ", ".join(source.name for source in sources)
    write_manifest(
        target,
        Manifest(
            name=f"combined: {names}",
            description=f"Every task and trajectory of {names}, judged together.",
            generator="dataset.combine",
        ),
    )
    for entry, destination in plan:
        _link_tree(entry, destination)
    return target
