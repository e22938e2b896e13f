"""Reading the pieces source formats share: JSON files, screenshot references, UI element lists.

Owns resolving a screenshot reference (a file path inside the source folder, base64-encoded image
bytes, or a pixel array) into a ``Screen`` image, rendering a list of UI element objects as the
``UI element N: {json}`` lines the runtime's mobile observations use, and reading one JSON file
with its problems named by file. A reference that leaves the source folder is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from dataset.importers.source_files import SourceFileError, source_file_inside
from dataset.problems import ProblemLog

__all__ = [
    "SourceError",
    "as_object",
    "image_reference",
    "read_json_file",
    "regular_file",
    "ui_elements_text",
]


class SourceError(ValueError):
    """A record of a source that cannot be read; the message names the field."""


def as_object(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for optional nested records)."""
    return value if isinstance(value, dict) else {}


def read_json_file(path: Path, log: ProblemLog) -> object | None:
    """The file's JSON, or None with a problem naming the file (and line) recorded."""
    return log.read_json(path)


def image_reference(
    value: object, folder: Path, root: Path, where: str
) -> Path | bytes | list[JsonValue] | None:
    """A screenshot as the source gives it: a path (relative to ``folder``, inside ``root``),
    base64 text (optionally a ``data:`` URL), or a pixel array; None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise SourceError(f"{where}: a screenshot must be a path, base64 text or a pixel array")
    text = value.strip()
    if text.startswith("data:image/") and "," in text:
        return _decoded(text.split(",", 1)[1], where)
    if len(text) < 1024 and not _BASE64.fullmatch(text):
        return _file(text, value, folder, root, where)
    if len(text) < 1024 and (folder / text).exists():
        return _file(text, value, folder, root, where)
    return _decoded(text, where)


_BASE64 = re.compile(r"[A-Za-z0-9+/]{64,}={0,2}")


def _file(text: str, value: str, folder: Path, root: Path, where: str) -> Path:
    return regular_file(folder / text, root, where, shown=value)


def regular_file(path: Path, root: Path, where: str, *, shown: str | None = None) -> Path:
    """``path`` resolved, when it is a regular file inside ``root`` by the importers' one rule
    (``dataset.importers.source_files``: a link is followed only while it stays inside ``root``,
    and its target is then copied as a plain file); anything else is a ``SourceError`` naming
    ``where``."""
    name = shown if shown is not None else path.name
    try:
        return source_file_inside(path, root)
    except SourceFileError as error:
        problem = {
            "missing": f"screenshot file {name!r} is missing",
            "outside": f"screenshot {name!r} is outside the source folder",
            "not_regular": f"screenshot {name!r} is not a regular file",
            "folder_link": f"screenshot {name!r} is a link to a folder",
        }[error.reason]
        if error.reason == "outside" and path.is_symlink():
            problem = (
                f"screenshot {name!r} is a link leading outside the source folder; only regular"
                " files inside it are copied"
            )
        raise SourceError(f"{where}: {problem}") from None


def _decoded(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SourceError(
            f"{where}: the screenshot is neither a file nor base64 image data"
        ) from None


def ui_elements_text(value: object) -> str | None:
    """A UI element list as text: objects become ``UI element N: {json}`` lines, text stays."""
    if value is None:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        lines = []
        for position, element in enumerate(value):
            if isinstance(element, dict):
                fields = {
                    "index": position,
                    **{k: v for k, v in element.items() if v not in (None, "")},
                }
                lines.append(f"UI element {position}: {json.dumps(fields, ensure_ascii=False)}")
            else:
                fields = {"index": position, "text": str(element)}
                lines.append(f"UI element {position}: {json.dumps(fields)}")
        return "\n".join(lines) or None
    return json.dumps(value, ensure_ascii=False)
