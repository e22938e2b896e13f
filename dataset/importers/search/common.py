"""What both search importers share: reading JSON records, loose field values, writing the
dataset with the list of pages a judge will need (``urls.txt``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataset.importers.source_files import SourceFileError, copy_source
from dataset.models import LabelValue, Task, Trajectory
from dataset.problems import Problem
from dataset.store import Manifest, write_manifest, write_task, write_trajectory
from dataset.urls import needed_urls
from storage.files import write_text_atomic

__all__ = [
    "URLS_FILE",
    "ImportReport",
    "archive_name",
    "first_of",
    "label_value",
    "read_records",
    "safe_id",
    "write_search_dataset",
]

URLS_FILE = "urls.txt"
"""Written next to ``dataset.json``: every page the imported runs opened or cited, one a line,
sorted (the list an archive must cover for judges to work offline)."""


@dataclass
class ImportReport:
    """What an import produced and what it could not read."""

    tasks: dict[str, Task] = field(default_factory=dict)
    """Imported tasks by id."""
    trajectories: dict[str, Trajectory] = field(default_factory=dict)
    """Imported trajectories by id."""
    problems: list[Problem] = field(default_factory=list)
    """Records that could not be imported, each naming its file, line and field."""
    urls: list[str] = field(default_factory=list)
    """The pages a judge will need (also written to ``urls.txt``)."""

    def problem(self, where: str, message: str, field_name: str | None = None) -> None:
        """Record a record that could not be imported."""
        self.problems.append(Problem(file=where, field=field_name, message=message))


def read_records(path: Path, report: ImportReport) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The JSON objects in ``path`` with where each came from (``file:line`` for JSON lines):
    a ``.jsonl`` file holds one object a line; a ``.json`` file one object or a list of them."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        report.problem(str(path), f"cannot read: {error}")
        return
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                report.problem(where, f"not JSON: {error.msg}")
                continue
            if not isinstance(value, dict):
                report.problem(where, f"expected a JSON object, got {type(value).__name__}")
                continue
            yield where, value
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        report.problem(str(path), f"not JSON: {error.msg} (line {error.lineno})")
        return
    values = value if isinstance(value, list) else [value]
    for index, item in enumerate(values):
        where = f"{path}[{index}]" if isinstance(value, list) else str(path)
        if not isinstance(item, dict):
            report.problem(where, f"expected a JSON object, got {type(item).__name__}")
            continue
        yield where, item


def first_of(record: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` present and not null in ``record``."""
    for name in names:
        if record.get(name) is not None:
            return record[name]
    return None


_PASS = {"pass", "passed", "1", "true", "yes", "correct", "success"}
_FAIL = {"fail", "failed", "0", "false", "no", "incorrect", "failure"}


def label_value(raw: object) -> LabelValue | None:
    """A PASS/FAIL label from the spellings datasets use (``1``/``0``, booleans, words);
    None for a value that is none of them."""
    if isinstance(raw, bool):
        return "PASS" if raw else "FAIL"
    if isinstance(raw, int | float) and raw in (0, 1):
        return "PASS" if raw == 1 else "FAIL"
    if isinstance(raw, str):
        word = raw.strip().strip("[]").strip().lower()
        if word in _PASS:
            return "PASS"
        if word in _FAIL:
            return "FAIL"
    return None


def safe_id(text: str, limit: int = 120) -> str:
    """``text`` made into a dataset identifier (letters, digits, ``.``, ``_``, ``-``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:limit].strip("-._")
    return cleaned or "x"


def archive_name(archive: Path) -> str:
    """The name a page archive gets inside each task folder: ``archive`` for a page folder, the
    file's own name for a WARC file."""
    return "archive" if archive.is_dir() else archive.name


def _refusal(error: SourceFileError) -> str:
    """A file of the page archive the one rule refused, worded for the report."""
    _, _, why = str(error).partition(": ")
    return f"not copied (regular files inside the archive only): {why}"


def write_search_dataset(
    destination: Path,
    report: ImportReport,
    *,
    name: str,
    description: str,
    generator: str,
    archive: Path | None = None,
) -> None:
    """Write the imported tasks and trajectories, the manifest (unless one exists) and
    ``urls.txt``; with ``archive`` (a page folder or a WARC file), a copy of it in every task
    folder (the tasks name it as their initial state)."""
    destination.mkdir(parents=True, exist_ok=True)
    if not (destination / "dataset.json").exists():
        write_manifest(
            destination, Manifest(name=name, description=description, generator=generator)
        )
    if archive is not None and not archive.exists():
        report.problem(str(archive), "no such page archive: nothing copied", "--archive")
        archive = None
    refused: dict[Path, str] = {}
    for task in report.tasks.values():
        folder = write_task(destination, task)
        if archive is not None:
            errors: list[SourceFileError] = []
            copy_source(archive, folder / archive_name(archive), errors)
            refused.update((error.path, _refusal(error)) for error in errors)
    for path, problem in sorted(refused.items()):
        report.problem(str(path), problem)
    for trajectory in report.trajectories.values():
        write_trajectory(destination, trajectory)
    report.urls = needed_urls(report.trajectories.values(), report.tasks.values())
    write_text_atomic(destination / URLS_FILE, "".join(f"{url}\n" for url in report.urls))
