"""``agentjudge settings``: print the effective value of every ``AGENTJUDGE_*`` variable."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.table import Table

from agentjudge.console import console
from settings import SettingsError, get_settings, variable_name

__all__ = ["show_settings"]


def _shown(value: object) -> str:
    if value is None or value == ():
        return "unset"
    if isinstance(value, tuple):
        return os.pathsep.join(str(item) for item in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value) if isinstance(value, Path | str) else repr(value)


def show_settings() -> None:
    """Print every `AGENTJUDGE_*` variable: its effective value (`unset` when the runtime's
    default applies) and what it means."""
    try:
        current = get_settings()
    except SettingsError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(2) from None
    table = Table("variable", "value", "meaning")
    for name, field in type(current).model_fields.items():
        meaning = " ".join((field.description or "").split()).replace("`", "")
        table.add_row(
            variable_name(name), _shown(getattr(current, name)), meaning, end_section=True
        )
    console.print(table)
