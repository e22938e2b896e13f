"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Owns how results, reports and dataset files are replaced on disk. Must not know what the files
hold: callers serialise; this module only writes bytes, text or JSON.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

__all__ = ["write_bytes_atomic", "write_json_atomic", "write_text_atomic"]


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write a file so that readers see the old one or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it private; results are meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """``write_bytes_atomic`` for UTF-8 text."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, payload: object) -> None:
    """Write JSON atomically (see ``write_bytes_atomic``), indented, non-ASCII kept as is."""
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
