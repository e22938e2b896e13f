"""The command line's options that choose where sandboxes run: ``--backend`` and the endpoint
options (``--desktop-url``), the latter checked before any work starts."""

from __future__ import annotations

from typing import Annotated

import typer

from environments.kind import CommandLineBackend

BackendOption = Annotated[
    CommandLineBackend,
    typer.Option(
        help="`auto`: each kind's choice here (host folders, embedded Postgres, and desktops in"
        " containers where a Docker engine answers); `local`: host resources only; `docker`:"
        " containers."
    ),
]


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
