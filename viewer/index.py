"""The table of judge runs: one small row per run, built once per folder and cached.

Rows come from ``verdicts.jsonl`` (the last line per key wins, torn lines are skipped, as in
``bench.grid_runner.read_records``), read as plain JSON rather than validated records so that a
folder of 10,000 runs indexes in a fraction of a second. Each row keeps the byte range of its
line, so a run page reads its one record without reading the file again. The rows are cached
under ``cache_dir`` keyed by the folder, and reused while the file's size and modification time
are unchanged. Without a current cache the rows stream in: a background thread reads the file
and the table answers from the rows read so far (the first page, in recorded order, is there
after the first few hundred lines), saying the index is not complete yet. A dataset opened
alone gives one row per trajectory.

Filtering, sorting and paging happen here on the in-memory rows; label corrections are applied
at query time (they change while the viewer runs), never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bench.error_tags import error_tag
from bench.results import JudgeConfig, Prediction
from dataset.corrections import CorrectionKey, LabelCorrection
from dataset.store import TASK_FILE, TASKS_DIR, TRAJECTORIES_DIR
from storage.files import write_text_atomic

__all__ = [
    "FILTERS",
    "INDEX_VERSION",
    "RunIndex",
    "RunQuery",
    "RunRow",
    "default_cache_dir",
    "load_index",
    "open_index",
    "read_rows",
    "rows_from_dataset",
    "rows_from_verdicts",
]

INDEX_VERSION = 1
"""Bumped when ``RunRow`` changes, so older caches are rebuilt."""

FILTERS = (
    "mode",
    "turns",
    "model",
    "domain",
    "subdomain",
    "label",
    "verdict",
    "tag",
)
"""Columns the table filters on by exact value (besides ``wrong`` and ``invalid`` only)."""


class RunRow(BaseModel):
    """One line of the table: a judge run (or a trajectory, for a dataset opened alone)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    key: str
    """The run's key (its transcript is ``logs/<key>.jsonl``); the trajectory id for a dataset
    row."""
    kind: Literal["judge", "trajectory"] = "judge"
    """``judge`` for a judge run, ``trajectory`` for a dataset's trajectory."""
    trajectory_id: str
    """The trajectory."""
    item_id: str | None = None
    """The claim judged alone, if any."""
    task_id: str
    """Its task."""
    domain: str
    """The task's domain."""
    subdomain: str
    """The task's subdomain."""
    agent: str | None = None
    """The agent that made the trajectory."""
    mode: str = ""
    """The judge mode."""
    turns: int = 0
    """The turn budget."""
    model: str = ""
    """The judge model."""
    variant: str = ""
    """Non-default ablation axes."""
    run: int = 1
    """The repetition."""
    label: Literal["PASS", "FAIL"] | None = None
    """The label as the data holds it (before corrections)."""
    verdict: Literal["PASS", "FAIL", "INVALID"] | None = None
    """The judge's verdict (None for a dataset row)."""
    confidence: float | None = None
    """The judge's stated confidence."""
    tokens: int = 0
    """Prompt plus completion tokens."""
    cost_usd: float | None = None
    """Dollars spent (None: no price)."""
    seconds: float = 0.0
    """Wall time of the judge run."""
    tool_calls: int = 0
    """Tool calls the judge made."""
    stop_reason: str = ""
    """What ended the judge run."""
    error: str | None = None
    """The error of an ``INVALID`` verdict."""
    scripted: bool = False
    """Made by the scripted model: a dry run, not a judge result."""
    wrong_tag: str | None = None
    """The error tag this run gets when its verdict is wrong (``bench.error_tags``)."""
    steps: int = 0
    """The trajectory's step count (dataset rows only)."""
    offset: int = 0
    """Where the run's line starts in ``verdicts.jsonl``."""
    length: int = 0
    """The line's length in bytes."""

    @property
    def config(self) -> str:
        """The judge configuration's name, as the report writes it."""
        if self.kind != "judge":
            return ""
        return JudgeConfig(
            kind="judge", name=self.mode, turns=self.turns, model=self.model, variant=self.variant
        ).label


class _CacheHeader(BaseModel):
    """The first line of a cache file; one ``RunRow`` per line follows."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    version: int
    """``INDEX_VERSION`` of the code that wrote it."""
    folder: str
    """The results folder (for a person looking at the cache)."""
    signature: list[int]
    """Size and modification time (ns) of ``verdicts.jsonl`` when the rows were read."""
    rows: int
    """How many rows follow (a cache cut short is not trusted)."""


class RunQuery(BaseModel):
    """What the table asks for: filters, sort order and one page."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    filters: dict[str, str] = {}
    """Exact values by column (``FILTERS``); ``turns`` as its number."""
    wrong: bool = False
    """Only runs whose verdict differs from the (corrected) label, ``INVALID`` included."""
    invalid: bool = False
    """Only ``INVALID`` verdicts."""
    search: str = ""
    """A substring of the trajectory id, task id or key."""
    sort: str = ""
    """The column to sort on (empty: the order runs were recorded in)."""
    descending: bool = False
    """Sort from the largest value."""
    offset: int = 0
    """The first row of the page."""
    limit: int = 100
    """Rows per page (at most 500)."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agentjudge/viewer``, else ``~/.cache/agentjudge/viewer``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentjudge" / "viewer"


def _wrong_tag(record: dict[str, Any], verdict: dict[str, Any]) -> str:
    """The tag ``bench.error_tags`` gives this run when its verdict is wrong (the tag does not
    depend on which label it missed, so any label other than the verdict gives it)."""
    value = verdict.get("verdict", "INVALID")
    calls = verdict.get("tool_calls") or []
    # Built without validation: the values were just read from a bench record, and only the
    # fields ``error_tag`` reads are set (this runs once per run of a 10,000-run folder).
    prediction = Prediction.model_construct(
        config=JudgeConfig.model_construct(kind="judge", name=str(record.get("mode", ""))),
        trajectory_id=str(record.get("trajectory_id", "")),
        task_id=str(record.get("task_id", "")),
        domain=str(record.get("domain", "")),
        subdomain=str(record.get("subdomain", "")),
        label="FAIL" if value == "PASS" else "PASS",
        verdict=value,
        tool_calls=len(calls),
        tool_errors=sum(bool(call.get("is_error")) for call in calls),
        stop_reason=verdict.get("stop_reason", "verdict"),
        error=verdict.get("error"),
    )
    return error_tag(prediction) or ""


def _row(record: dict[str, Any], offset: int, length: int) -> RunRow:
    verdict = record["verdict"]
    return RunRow(
        key=record["key"],
        trajectory_id=record["trajectory_id"],
        item_id=record.get("item_id"),
        task_id=record["task_id"],
        domain=record["domain"],
        subdomain=record["subdomain"],
        agent=record.get("agent"),
        mode=record["mode"],
        turns=record["turns"],
        model=record["model"],
        variant=record.get("variant", ""),
        run=record["run"],
        label=record.get("label"),
        verdict=verdict["verdict"],
        confidence=verdict.get("confidence"),
        tokens=int(verdict.get("tokens_in", 0)) + int(verdict.get("tokens_out", 0)),
        cost_usd=verdict.get("cost_usd"),
        seconds=float(verdict.get("wall_time_seconds", 0.0)),
        tool_calls=len(verdict.get("tool_calls") or []),
        stop_reason=verdict.get("stop_reason", "verdict"),
        error=verdict.get("error"),
        scripted=bool(record.get("scripted")),
        wrong_tag=_wrong_tag(record, verdict),
        offset=offset,
        length=length,
    )


def read_rows(path: Path, on_rows: Callable[[list[RunRow]], None], chunk: int = 500) -> None:
    """Read ``verdicts.jsonl`` and hand its rows to ``on_rows`` in file order, ``chunk`` at a
    time (a key seen again replaces its earlier row: the last line wins)."""
    if not path.is_file():
        return
    batch: list[RunRow] = []
    offset = 0
    with path.open("rb") as handle:
        for line in handle:
            length = len(line)
            if line.endswith(b"\n"):
                # A torn or foreign line is left out, as the bench leaves it out.
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    batch.append(_row(json.loads(line), offset, length))
                if len(batch) >= chunk:
                    on_rows(batch)
                    batch = []
            offset += length
    if batch:
        on_rows(batch)


def rows_from_verdicts(path: Path) -> list[RunRow]:
    """One row per key of ``verdicts.jsonl`` (its last whole line), in the order keys first
    appear."""
    index = RunIndex([], from_cache=False)
    read_rows(path, index.add)
    return index.rows


def rows_from_dataset(root: Path) -> list[RunRow]:
    """One row per trajectory file of a dataset (files that do not parse are left out)."""
    rows: list[RunRow] = []
    tasks: dict[str, dict[str, Any]] = {}
    for path in sorted((root / TRAJECTORIES_DIR).glob("*.json")):
        try:
            trajectory = json.loads(path.read_text(encoding="utf-8"))
            task_id = trajectory["task_id"]
            if task_id not in tasks:
                task_file = root / TASKS_DIR / task_id / TASK_FILE
                tasks[task_id] = json.loads(task_file.read_text(encoding="utf-8"))
            task = tasks[task_id]
            label = trajectory.get("label") or {}
            rows.append(
                RunRow(
                    key=trajectory["id"],
                    kind="trajectory",
                    trajectory_id=trajectory["id"],
                    task_id=task_id,
                    domain=task["domain"],
                    subdomain=task["subdomain"],
                    agent=trajectory.get("agent"),
                    label=label.get("value"),
                    steps=len(trajectory.get("steps") or []),
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return rows


def _signature(path: Path) -> list[int]:
    if not path.is_file():
        return [0, 0]
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns]


def _cache_file(cache_dir: Path, folder: Path) -> Path:
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:24]
    return cache_dir / f"{digest}.json"


def _cache_is_current(cache: Path, signature: list[int]) -> bool:
    """Whether the cache file's header matches the results file as it is now."""
    try:
        with cache.open("rb") as handle:
            header = _CacheHeader.model_validate_json(handle.readline())
    except (OSError, ValidationError):
        return False  # missing or unreadable: rebuilt
    return header.version == INDEX_VERSION and header.signature == signature


def _read_cache(cache: Path, on_rows: Callable[[list[RunRow]], None], chunk: int = 500) -> bool:
    """Hand the cached rows to ``on_rows``, ``chunk`` at a time; whether the file was whole
    (a row that does not validate, or fewer rows than the header says, make it not)."""
    try:
        with cache.open("rb") as handle:
            header = _CacheHeader.model_validate_json(handle.readline())
            read = 0
            batch: list[RunRow] = []
            for line in handle:
                batch.append(RunRow.model_validate_json(line))
                if len(batch) >= chunk:
                    on_rows(batch)
                    read += len(batch)
                    batch = []
            on_rows(batch)
            read += len(batch)
    except (OSError, ValidationError):
        return False
    return read == header.rows


def _write_cache(cache: Path, verdicts: Path, signature: list[int], rows: list[RunRow]) -> None:
    header = _CacheHeader(
        version=INDEX_VERSION,
        folder=str(verdicts.parent.resolve()),
        signature=signature,
        rows=len(rows),
    )
    lines = [header.model_dump_json(), *(row.model_dump_json() for row in rows)]
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache, "\n".join(lines) + "\n")
    except OSError:
        pass  # a read-only cache folder only costs speed


def load_index(
    verdicts: Path | None, dataset: Path | None, cache_dir: Path | None
) -> tuple[list[RunRow], bool]:
    """The rows of a results folder (``verdicts``) or of a dataset opened alone, read whole,
    and whether they came from the cache. ``cache_dir`` None: no cache."""
    index = open_index(verdicts, dataset, cache_dir)
    index.wait()
    return index.rows, index.from_cache


def open_index(verdicts: Path | None, dataset: Path | None, cache_dir: Path | None) -> RunIndex:
    """The index of a results folder or a dataset, ready to answer at once: a background
    thread fills it from the cache when that is current, else from ``verdicts.jsonl`` (then
    writes the cache). The first table page is served from the first rows read;
    ``RunIndex.complete`` turns True at the end."""
    if verdicts is None:
        return RunIndex(rows_from_dataset(dataset) if dataset is not None else [], False)
    signature = _signature(verdicts)
    cache = None if cache_dir is None else _cache_file(cache_dir, verdicts.parent)
    from_cache = cache is not None and _cache_is_current(cache, signature)
    index = RunIndex([], from_cache=from_cache, complete=False)

    def build() -> None:
        try:
            if cache is not None and from_cache and _read_cache(cache, index.add):
                return
            index.clear()
            index.from_cache = False
            read_rows(verdicts, index.add)
            if cache is not None:
                _write_cache(cache, verdicts, signature, index.rows)
        finally:
            index.finish()

    threading.Thread(target=build, name="viewer-index", daemon=True).start()
    return index


def _sort_value(row: RunRow, column: str) -> tuple[int, Any]:
    value = getattr(row, column, None) if column != "config" else row.config
    return (1, "") if value is None else (0, value)


class RunIndex:
    """The rows of one viewer, with the corrections that stand, answering table queries."""

    def __init__(self, rows: list[RunRow], from_cache: bool, *, complete: bool = True) -> None:
        self.rows: list[RunRow] = []
        self.by_key: dict[str, RunRow] = {}
        self._positions: dict[str, int] = {}
        self.from_cache = from_cache
        self.corrections: dict[CorrectionKey, LabelCorrection] = {}
        self._complete = threading.Event()
        self.add(rows)
        if complete:
            self._complete.set()

    @property
    def complete(self) -> bool:
        """Whether every row has been read."""
        return self._complete.is_set()

    def add(self, rows: list[RunRow]) -> None:
        """Append rows (a key already here keeps its place and takes the new row)."""
        for row in rows:
            position = self._positions.get(row.key)
            if position is None:
                self._positions[row.key] = len(self.rows)
                self.rows.append(row)
            else:
                self.rows[position] = row
            self.by_key[row.key] = row

    def clear(self) -> None:
        """Drop every row (a cache that turned out broken is read again from the source)."""
        self.rows, self.by_key, self._positions = [], {}, {}

    def finish(self) -> None:
        """Mark the index complete."""
        self._complete.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the index is complete; whether it is."""
        return self._complete.wait(timeout)

    def label_of(self, row: RunRow) -> Literal["PASS", "FAIL"] | None:
        """The row's label after corrections."""
        correction = self.corrections.get((row.trajectory_id, row.item_id))
        return correction.label if correction is not None else row.label

    def is_wrong(self, row: RunRow) -> bool:
        """Whether a judge run's verdict misses its (corrected) label."""
        label = self.label_of(row)
        return row.kind == "judge" and label is not None and row.verdict != label

    def choices(self) -> dict[str, list[str]]:
        """The distinct values of each filter column, for the filter menus."""
        found: dict[str, set[str]] = {name: set() for name in FILTERS}
        for row in self.rows[:]:
            for name in FILTERS:
                value = self._value(row, name)
                if value:
                    found[name].add(value)

        def order(name: str) -> Callable[[str], Any]:
            return int if name == "turns" else str

        return {name: sorted(values, key=order(name)) for name, values in found.items()}

    def _value(self, row: RunRow, name: str) -> str:
        if name == "label":
            return self.label_of(row) or ""
        if name == "tag":
            return (row.wrong_tag or "") if self.is_wrong(row) else ""
        if name == "turns":
            return str(row.turns) if row.kind == "judge" else ""
        value = getattr(row, name)
        return "" if value is None else str(value)

    def _matches(self, row: RunRow, query: RunQuery) -> bool:
        for name, wanted in query.filters.items():
            if wanted and self._value(row, name) != wanted:
                return False
        if query.wrong and not self.is_wrong(row):
            return False
        if query.invalid and row.verdict != "INVALID":
            return False
        if query.search:
            needle = query.search.lower()
            if not any(
                needle in text.lower() for text in (row.key, row.trajectory_id, row.task_id)
            ):
                return False
        return True

    def query(self, query: RunQuery) -> tuple[int, list[RunRow]]:
        """The number of matching rows and the requested page of them, sorted."""
        unknown = set(query.filters) - set(FILTERS)
        if unknown:
            raise ValueError(f"unknown filter(s): {', '.join(sorted(unknown))}")
        # A copy: the background reader may be appending.
        matching: Iterable[RunRow] = (row for row in self.rows[:] if self._matches(row, query))
        column = query.sort
        if (
            column
            and column not in RunRow.model_fields
            and column not in ("config", "label", "tag")
        ):
            raise ValueError(f"cannot sort on {column!r}")
        if not column:
            ordered = list(matching)
        elif column in ("label", "tag"):
            ordered = sorted(
                matching, key=lambda row: self._value(row, column), reverse=query.descending
            )
        else:
            ordered = sorted(
                matching, key=lambda row: _sort_value(row, column), reverse=query.descending
            )
        limit = max(1, min(query.limit, 500))
        start = max(0, query.offset)
        return len(ordered), ordered[start : start + limit]

    def runs_of(self, trajectory_id: str) -> list[RunRow]:
        """Every row about one trajectory (its judge runs, for comparison)."""
        return [row for row in self.rows[:] if row.trajectory_id == trajectory_id]
