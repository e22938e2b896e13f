"""JSON-lines results files that an interrupted run leaves usable.

Owns appending one JSON document per line (flushed and synced, safe from concurrent tasks) and
reading such a file back into pydantic models. A kill can tear the line being written: readers
skip a line that does not validate, and the next append starts on a fresh line so that its
record is not glued to the torn one. Must not decide what a record means or which records are
current: that is the caller's (see ``storage.jobs``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["JsonlAppender", "read_jsonl"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class JsonlAppender:
    """Appends one JSON document per line, flushed and synced, from concurrent tasks.

    Results files (replay reports, judge verdicts) use it so that an interrupted run keeps every
    line written before the interruption. If the file ends in a line torn by a kill (no final
    newline), the first append ends that line first: the torn line stays on its own (readers
    skip it) instead of swallowing the new record.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        self._checked_tail = False

    async def append(self, line: str) -> None:
        """Write ``line`` (one JSON document, without a newline) as the file's last line."""
        async with self._lock:
            prefix = "" if self._checked_tail else _newline_if_torn(self.path)
            self._checked_tail = True
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(prefix + line + "\n")
                handle.flush()
                os.fsync(handle.fileno())


def _newline_if_torn(path: Path) -> str:
    """``"\\n"`` when the file exists and its last byte is not a newline, else nothing."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return ""
            handle.seek(-1, os.SEEK_END)
            return "" if handle.read(1) == b"\n" else "\n"
    except FileNotFoundError:
        return ""


def read_jsonl(path: Path, model: type[ModelT]) -> list[ModelT]:
    """The records of a file written by ``JsonlAppender``, in order; a missing file has none.

    A line that does not validate (torn by a kill mid-write) is skipped, so its work is redone.
    """
    if not path.exists():
        return []
    records: list[ModelT] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(model.model_validate_json(line))
        except ValidationError:
            continue
    return records
