"""Finding OSWorld run folders and reading what their place in the results tree says.

Owns ``find_run_folders`` (every folder holding a ``traj.jsonl`` below the given sources) and
``RunPlace`` (what the path tells about a run: OSWorld's
``<action_space>/<observation_type>/<model>/<domain>/<example_id>`` or AJ-Bench's
``<app>/<task_id>/{true,false}``). Reading the files inside is other modules' work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ACTION_SPACES",
    "AJ_BENCH_APPS",
    "OBSERVATION_TYPES",
    "TRAJECTORY_FILE",
    "RunPlace",
    "find_run_folders",
    "run_place",
]

TRAJECTORY_FILE = "traj.jsonl"
"""The file that marks a folder as one OSWorld run."""

ACTION_SPACES = frozenset({"computer_13", "pyautogui"})
"""OSWorld's action spaces this importer reads."""

OBSERVATION_TYPES = frozenset({"screenshot", "a11y_tree", "screenshot_a11y_tree", "som"})
"""OSWorld's observation types, as its results tree names them."""

AJ_BENCH_APPS: dict[str, str] = {"ppt": "ppt", "word": "word", "excel": "excel"}
"""AJ-Bench's GUI app folders (compared lower-case) and the subdomain each stands for."""

_LABEL_FOLDERS = {"true": "PASS", "false": "FAIL"}


@dataclass(frozen=True)
class RunPlace:
    """What a run folder's position below its source says about the run."""

    folder: Path
    """The run folder (it holds ``traj.jsonl``)."""
    source: Path
    """The source folder it was found under."""
    example_id: str
    """OSWorld's example id (the folder name), or AJ-Bench's task folder."""
    domain: str | None = None
    """OSWorld's domain folder (``libreoffice_writer``, ...), when the path has one."""
    model: str | None = None
    """The model folder, when the path has OSWorld's layout."""
    action_space: str | None = None
    """``computer_13`` or ``pyautogui`` when a folder of the path names it."""
    observation_type: str | None = None
    """``screenshot``, ``a11y_tree``, ... when a folder of the path names it."""
    ajbench_app: str | None = None
    """The subdomain of AJ-Bench's app folder (``ppt``, ``word``, ``excel``), in that layout."""
    folder_label: str | None = None
    """``PASS``/``FAIL`` from AJ-Bench's ``true``/``false`` folder (a human label)."""

    @property
    def relative(self) -> str:
        """The run folder relative to its source (``.`` when it is the source)."""
        return (
            self.folder.relative_to(self.source).as_posix() if self.folder != self.source else "."
        )


def find_run_folders(*sources: Path) -> list[tuple[Path, Path]]:
    """``(source, run folder)`` for every folder holding ``traj.jsonl`` at or below each source,
    sorted and without repeats."""
    found: dict[Path, Path] = {}
    for source in sources:
        if (source / TRAJECTORY_FILE).is_file():
            found.setdefault(source, source)
        for marker in sorted(source.rglob(TRAJECTORY_FILE)):
            if marker.is_file():
                found.setdefault(marker.parent, source)
    return sorted(((source, folder) for folder, source in found.items()), key=lambda x: x[1])


def run_place(source: Path, folder: Path) -> RunPlace:
    """Read the layout from the folder names between ``source`` and ``folder``."""
    parts = [source.name, *folder.relative_to(source).parts] if folder != source else [folder.name]
    lowered = [part.lower() for part in parts]
    for position in range(len(parts) - 1, 0, -1):
        label = _LABEL_FOLDERS.get(lowered[position])
        if label is None:
            continue
        app = lowered[position - 2] if position >= 2 else None
        return RunPlace(
            folder=folder,
            source=source,
            example_id=parts[position - 1],
            ajbench_app=AJ_BENCH_APPS.get(app) if app is not None else None,
            folder_label=label,
            domain=None,
        )
    action_space = next((part for part in lowered if part in ACTION_SPACES), None)
    observation = next((part for part in lowered if part in OBSERVATION_TYPES), None)
    model: str | None = None
    if observation is not None:
        after = lowered.index(observation) + 1
        # <observation_type>/<model>/<domain>/<example_id>: the model folder sits between.
        if after <= len(parts) - 3:
            model = parts[after]
    domain = parts[-2] if len(parts) >= 2 else None
    return RunPlace(
        folder=folder,
        source=source,
        example_id=parts[-1],
        domain=domain,
        model=model,
        action_space=action_space,
        observation_type=observation,
    )
