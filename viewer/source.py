"""What the viewer opened: a judge results folder or a dataset folder, and where its parts are.

A results folder (``verdicts.jsonl``, ``baselines.jsonl`` or ``summary.json`` in it) names its
dataset in ``summary.json``; the replay reports are looked for where ``agentjudge judge`` puts
them by default (``runs/replay/<dataset name>-<backend>/`` beside ``runs/judge/<dataset name>``),
unless given. Label corrections go to ``label_corrections.jsonl`` in the results folder (where
``agentjudge report`` applies them by default), or, for a dataset opened alone, to the user's
data folder (``dataset_corrections_file``): never inside the dataset, nor anywhere in a
checkout the dataset may belong to.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from bench.grid_runner import SUMMARY_FILE, VERDICTS_FILE
from bench.results import BASELINES_FILE
from dataset.corrections import CORRECTIONS_FILE
from dataset.store import MANIFEST_FILE, TRAJECTORIES_DIR
from replay.runner import REPORT_FILE

__all__ = ["SourceError", "ViewSource", "dataset_corrections_file", "open_source", "user_data_dir"]


class SourceError(Exception):
    """The path is neither a results folder nor a dataset, or its dataset cannot be found."""


@dataclass(frozen=True)
class ViewSource:
    """The folders and files one viewer serves."""

    results: Path | None
    """The judge results folder; None when a dataset was opened alone."""
    dataset: Path | None
    """The dataset folder (None when a results folder's dataset cannot be found: the table and
    transcripts still work, trajectories do not)."""
    replay: Path | None
    """The replay folder holding ``fidelity.jsonl``, if one was found."""
    corrections: Path
    """Where label corrections are appended."""

    @property
    def verdicts(self) -> Path | None:
        """The judge records' file, when a results folder was opened."""
        return None if self.results is None else self.results / VERDICTS_FILE

    @property
    def trajectories(self) -> Path | None:
        """The folder trajectory files and their screenshots are in."""
        return None if self.dataset is None else self.dataset / TRAJECTORIES_DIR

    @property
    def fidelity(self) -> Path | None:
        """The replay reports' file, when there is one."""
        if self.replay is None:
            return None
        path = self.replay / REPORT_FILE
        return path if path.is_file() else None

    @property
    def title(self) -> str:
        """A short name for page titles."""
        shown = self.results if self.results is not None else self.dataset
        return shown.name if shown is not None else "agentjudge"


def _is_results(folder: Path) -> bool:
    return any((folder / name).is_file() for name in (VERDICTS_FILE, BASELINES_FILE, SUMMARY_FILE))


def _recorded_dataset(results: Path) -> Path | None:
    """The dataset ``summary.json`` names, as written (relative to where the judge ran) or
    relative to the results folder's ancestors."""
    summary = results / SUMMARY_FILE
    if not summary.is_file():
        return None
    try:
        named = json.loads(summary.read_text(encoding="utf-8")).get("dataset")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(named, str) or not named:
        return None
    candidates = [Path(named)]
    if not Path(named).is_absolute():
        candidates += [ancestor / named for ancestor in results.resolve().parents]
    return next((path for path in candidates if (path / MANIFEST_FILE).is_file()), None)


def _default_replay(results: Path, dataset: Path | None) -> Path | None:
    """``runs/replay/<dataset name>-*`` beside ``runs/judge/<name>``, the newest with reports."""
    name = dataset.resolve().name if dataset is not None else results.resolve().name
    replay_root = results.resolve().parent.parent / "replay"
    found = [folder for folder in replay_root.glob(f"{name}-*") if (folder / REPORT_FILE).is_file()]
    if not found:
        return None
    return max(found, key=lambda folder: (folder / REPORT_FILE).stat().st_mtime)


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/agentjudge``, else ``~/.local/share/agentjudge`` (not created here)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentjudge"


def dataset_corrections_file(dataset: Path) -> Path:
    """Where the corrections of ``dataset`` opened alone go: one file per dataset folder in the
    user's data folder, ``label-corrections/<folder name>-<hash of its absolute path>.jsonl``
    (the same folder reached by another path or a symlink gets the same file)."""
    resolved = dataset.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    return user_data_dir() / "label-corrections" / f"{resolved.name}-{digest}.jsonl"


def open_source(
    path: Path,
    *,
    dataset: Path | None = None,
    replay: Path | None = None,
    corrections: Path | None = None,
) -> ViewSource:
    """Find out what ``path`` is and where its parts are; ``dataset``, ``replay`` and
    ``corrections`` replace what would be found. Raises ``SourceError`` naming the path."""
    if path.is_file() and path.name == VERDICTS_FILE:
        path = path.parent
    if not path.is_dir():
        raise SourceError(f"{path}: no such folder")
    if dataset is not None and not (dataset / MANIFEST_FILE).is_file():
        raise SourceError(f"{dataset}: not a dataset folder (no {MANIFEST_FILE})")
    if replay is not None and not (replay / REPORT_FILE).is_file():
        raise SourceError(f"{replay}: no {REPORT_FILE} in this replay folder")
    if _is_results(path):
        found = dataset or _recorded_dataset(path)
        return ViewSource(
            results=path,
            dataset=found,
            replay=replay or _default_replay(path, found),
            corrections=corrections or path / CORRECTIONS_FILE,
        )
    if (path / MANIFEST_FILE).is_file():
        return ViewSource(
            results=None,
            dataset=path,
            replay=replay,
            corrections=corrections or dataset_corrections_file(path),
        )
    raise SourceError(
        f"{path}: neither a results folder ({VERDICTS_FILE}, {SUMMARY_FILE}) nor a dataset "
        f"({MANIFEST_FILE})"
    )
