"""JSON-lines results files that an interrupted run leaves usable.

Owns appending one JSON document per line (flushed and synced, safe from concurrent tasks),
repairing a file whose last line a kill tore, and reading such a file back into pydantic models.
Must not decide what a record means or which records are current: that is the caller's (see
``storage.jobs``).

A kill can tear the line being written. ``repair_torn_tail`` fixes the file before anything is
appended to it: a last line that is a whole JSON document and lacks only its newline gets the
newline; a fragment that is not a whole document is cut off the file and appended to
``<file>.torn`` (the quarantine, kept for inspection), so the results file is whole lines only
and a later record can never be glued onto a fragment. Every ``JsonlAppender`` repairs its file
before its first append. Files are opened through ``storage.confined``: a link planted in place
of a results file or its quarantine is refused, never written through. Readers also skip a line
that does not validate (or is not UTF-8), so its work is redone.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

from storage.confined import open_confined

__all__ = ["QUARANTINE_SUFFIX", "JsonlAppender", "read_jsonl", "repair_torn_tail"]

ModelT = TypeVar("ModelT", bound=BaseModel)

QUARANTINE_SUFFIX = ".torn"
"""Fragments cut off ``x.jsonl`` go to ``x.jsonl.torn``."""

_TAIL_CHUNK = 64 * 1024


class JsonlAppender:
    """Appends one JSON document per line, flushed and synced, from concurrent tasks.

    Results files (replay reports, judge verdicts) use it so that an interrupted run keeps every
    line written before the interruption. The file is repaired (``repair_torn_tail``) before the
    first append, so a line torn by an earlier kill never swallows a new record.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        self._repaired = False

    async def append(self, line: str) -> None:
        """Write ``line`` (one JSON document, without a newline) as the file's last line."""
        async with self._lock:
            if not self._repaired:
                repair_torn_tail(self.path)
                self._repaired = True
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            with os.fdopen(open_confined(self.path, flags), "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
                os.fsync(handle.fileno())


def repair_torn_tail(path: Path) -> str | None:
    """Make ``path`` end with a whole line; return what was done (None when nothing was).

    A last line without its newline that parses as JSON gets the newline; one that does not is
    truncated off the file and appended (with a newline) to ``<path>.torn``. A missing or empty
    file needs nothing. The caller must be the file's only writer (see ``storage.locks``).
    """
    try:
        handle = os.fdopen(open_confined(path, os.O_RDWR), "r+b")
    except FileNotFoundError:
        return None
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return None
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return None
        start = _last_line_start(handle, size)
        handle.seek(start)
        fragment = handle.read()
        if _is_json(fragment):
            handle.seek(size)
            handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
            return f"{path}: added the newline a kill left out after the last record"
        quarantine = path.with_name(path.name + QUARANTINE_SUFFIX)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        with os.fdopen(open_confined(quarantine, flags), "ab") as kept:
            kept.write(fragment + b"\n")
            kept.flush()
            os.fsync(kept.fileno())
        handle.truncate(start)
        handle.flush()
        os.fsync(handle.fileno())
        return f"{path}: moved a torn last line ({len(fragment)} bytes) to {quarantine}"


def _last_line_start(handle: IO[bytes], size: int) -> int:
    """The offset just after the file's last newline (0 when it has none)."""
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        handle.seek(start)
        chunk = handle.read(end - start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def _is_json(fragment: bytes) -> bool:
    try:
        json.loads(fragment)
    except ValueError:  # includes a torn UTF-8 sequence
        return False
    return True


def read_jsonl(path: Path, model: type[ModelT]) -> list[ModelT]:
    """The records of a file written by ``JsonlAppender``, in order; a missing file has none.

    A line that does not validate (torn by a kill mid-write, even mid-character) is skipped, so
    its work is redone.
    """
    if not path.exists():
        return []
    records: list[ModelT] = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            records.append(model.model_validate_json(line))
        except ValidationError:
            continue
    return records
