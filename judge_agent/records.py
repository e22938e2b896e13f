"""Per-run logs: every message, model call, tool call, timing, token count and cost, as JSONL.

One file per judge run (``<runs dir>/<run key>.jsonl``), one JSON object per line, appended and
flushed as the run goes, so a crash keeps everything up to the crash. Each line has ``event``
(``start``, ``message``, ``model_call``, ``tool_call``, ``limit``, ``verdict``), ``t`` (seconds
since the run started) and the event's fields.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from storage.confined import open_confined


class RunLog:
    """An append-only JSONL log of one judge run (or a no-op when ``path`` is None)."""

    def __init__(self, path: Path | None, *, within: Path | None = None) -> None:
        """``within`` is the results folder holding ``path``: no link below it is followed."""
        self.path = path
        self._started = time.perf_counter()
        self._handle: IO[str] | None = None
        if path is not None:
            # The results folder itself is the caller's (made here when missing, as on a
            # cluster worker's first run); what lies below it is reached without links.
            (path.parent if within is None else within).mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            descriptor = open_confined(path, flags, within=within)
            self._handle = os.fdopen(descriptor, "w", encoding="utf-8")

    def write(self, event: str, **fields: Any) -> None:
        """Append one event."""
        if self._handle is None:
            return
        record = {"event": event, "t": round(time.perf_counter() - self._started, 6)}
        record.update({key: _plain(value) for key, value in fields.items()})
        self._handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def read_log(path: Path) -> list[dict[str, Any]]:
    """The events of a run log, in order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
