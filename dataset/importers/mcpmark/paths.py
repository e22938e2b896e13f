"""Rewriting the per-run sandbox folder of MCPMark runs to ``SANDBOX_ROOT_PLACEHOLDER``.

Owns recognising MCPMark's ``backup_filesystem_*`` sandbox folders in recorded text and
replacing recorded roots by the placeholder, so that the paths mean something on replay.
Decides nothing about which texts of a run are scanned or rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from pydantic import JsonValue

from dataset.models import SANDBOX_ROOT_PLACEHOLDER

# The folder name must end in a word character or "-", so that punctuation after a path in prose
# ("the vault is at /tmp/backup_filesystem_x_1.") is not taken as part of the folder name.
_BACKUP_DIR = re.compile(
    r"(?<![\w.~-])((?:/[^/\s\"'`\\]+)*/backup_filesystem_(?:[^/\s\"'`\\]*[\w-])?)"
)


def backup_folders(texts: Iterable[str]) -> set[str]:
    """Every ``backup_filesystem_*`` sandbox folder named in ``texts``."""
    return {match for text in texts for match in _BACKUP_DIR.findall(text)}


class PathRewriter:
    """Replaces recorded sandbox roots by the placeholder, in strings and nested JSON."""

    def __init__(self, prefixes: list[str]) -> None:
        cleaned = {prefix.rstrip("/") for prefix in prefixes if prefix.strip("/")}
        self.prefixes = sorted(cleaned, key=len, reverse=True)

    def text(self, value: str) -> str:
        for prefix in self.prefixes:
            value = value.replace(prefix, SANDBOX_ROOT_PLACEHOLDER)
        return value

    def optional(self, value: object) -> str | None:
        """Rewrite a value that may be absent or not text (JSON is serialised first)."""
        if value is None or value == "":
            return None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return self.text(text)

    def json(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {key: self.json(item) for key, item in value.items()}
        return value
