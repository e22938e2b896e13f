"""Problems found in input data, named by file and field, collected rather than raised one by one.

Loaders and importers never stop at the first bad record: they add a ``Problem`` for it and go on,
so a user sees every fault of a dataset in one run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "JSON_DEPTH_LIMIT",
    "DatasetError",
    "JsonTooDeepError",
    "Problem",
    "ProblemLog",
    "format_location",
    "loads_bounded",
]

JSON_DEPTH_LIMIT = 256
"""The deepest nesting of arrays and objects accepted in imported JSON (real records nest a few
dozen levels; a hostile file nests hundreds of thousands to exhaust the parser's stack)."""


class JsonTooDeepError(ValueError):
    """A JSON document nested deeper than ``JSON_DEPTH_LIMIT``."""


def loads_bounded(text: str | bytes, limit: int = JSON_DEPTH_LIMIT) -> object:
    """``json.loads``, refusing a document nested deeper than ``limit`` (``JsonTooDeepError``)
    instead of letting a ``RecursionError`` end the whole import."""
    try:
        parsed: object = json.loads(text)
    except RecursionError:
        raise JsonTooDeepError(f"nested deeper than {limit} levels") from None
    pending: list[tuple[object, int]] = [(parsed, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Iterable[object] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            raise JsonTooDeepError(f"nested deeper than {limit} levels")
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return parsed


_NO_ECHO = {"missing", "extra_forbidden", "value_error", "assertion_error"}


class Problem(BaseModel):
    """One fault in one file."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    file: str
    """The file (or folder) at fault, relative to the dataset root where possible."""

    field: str | None = None
    """The field at fault inside the file, e.g. ``steps[2].action.name``; absent for whole files."""

    message: str
    """What is wrong, in words a person can act on."""

    severity: Literal["error", "warning"] = "error"
    """Errors make the record unusable; warnings are worth a look but do not block loading."""

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{self.severity}: {where}: {self.message}"


class DatasetError(Exception):
    """Raised when data has errors and the caller did not ask for the valid part only."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        errors = [problem for problem in self.problems if problem.severity == "error"]
        listing = "\n".join(f"  {problem}" for problem in errors)
        super().__init__(f"{len(errors)} error(s):\n{listing}")


def format_location(location: Iterable[int | str]) -> str:
    """Render a pydantic error location as ``steps[2].action.name``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


class ProblemLog:
    """Collects problems for one load or import, with paths shown relative to a base folder."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.problems: list[Problem] = []

    def display(self, path: Path) -> str:
        """The path as shown in problems: relative to the base when inside it."""
        try:
            return path.relative_to(self.base).as_posix()
        except ValueError:
            return str(path)

    def add(
        self,
        path: Path,
        message: str,
        *,
        field: str | None = None,
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        """Record one problem about ``path``."""
        self.problems.append(
            Problem(file=self.display(path), field=field, message=message, severity=severity)
        )

    def add_validation_error(self, path: Path, error: ValidationError, prefix: str = "") -> None:
        """Record every field error of a pydantic validation failure."""
        for detail in error.errors(include_url=False):
            location = format_location(detail["loc"])
            if prefix:
                location = f"{prefix}.{location}" if location else prefix
            message = detail["msg"].removeprefix("Value error, ")
            value = detail.get("input")
            # Echo the offending value when it is a scalar: a whole object would bury the message.
            if detail["type"] not in _NO_ECHO and not isinstance(value, dict | list):
                shown = repr(value)
                message += f" (got {shown[:80]}{'…' if len(shown) > 80 else ''})"
            self.add(path, message, field=location or None)

    def read_json(self, path: Path) -> object | None:
        """Parse a JSON file, recording a problem (with line and column) if it cannot be read."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.add(path, "file is missing")
            return None
        except (OSError, UnicodeDecodeError) as error:
            self.add(path, f"cannot be read: {error}")
            return None
        try:
            return loads_bounded(text)
        except json.JSONDecodeError as error:
            self.add(path, f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}")
        except JsonTooDeepError as error:
            self.add(path, f"not read: {error}")
        return None

    @property
    def errors(self) -> list[Problem]:
        """Only the problems of severity ``error``."""
        return [problem for problem in self.problems if problem.severity == "error"]
