"""The command line's endpoint options (``--desktop-url``), checked before any work starts."""

from __future__ import annotations

import typer


def check_desktop_urls(value: str | None) -> str | None:
    """Typer callback: the comma-separated control-server URLs, normalised; a bad list is a
    usage error naming the URL (before anything is replayed)."""
    if value is None:
        return None
    from sandboxes.base import SandboxError
    from sandboxes.desktop.osworld import parse_urls

    try:
        return ",".join(parse_urls(value))
    except SandboxError as error:
        raise typer.BadParameter(str(error)) from None
