"""``agentjudge sandboxes``: garbage collection and the locally built Docker images."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import typer
from rich.logging import RichHandler

from agentjudge.console import PhaseProgress, console
from agentjudge.endpoints import (
    DsnOption,
    EndpointOption,
    checked_endpoints,
    parse_kind_settings,
    warn_deprecated,
)

app = typer.Typer(
    help="Manage sandboxes: collect leftovers of killed runs, build the Docker images.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


@app.command()
def gc(endpoint: EndpointOption = None, dsn: DsnOption = None) -> None:
    """Remove directories, embedded Postgres servers, databases, roles, containers and images
    left by runs that are no longer alive (every run also does this when it starts); with
    `--endpoint`, also in that existing server (e.g. the databases and roles in a Postgres
    server)."""
    from environments.leftovers import collect_all_leftovers

    endpoints = checked_endpoints(parse_kind_settings(endpoint, None, dsn=dsn))
    removed = asyncio.run(collect_all_leftovers(endpoints))
    for line in removed:
        console.print(f"removed {line}", markup=False)
    console.print(f"{len(removed)} leftover(s) removed", markup=False)


@app.command("build-images")
def build_images(
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            help="Build the images of this environment kind's backends (e.g. `desktop`: "
            "LibreOffice on Xvfb, about 1 GB, a few minutes the first time). Repeatable. "
            "Default: the images every kind builds by default (the sandbox image).",
        ),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Build the images of every kind.")] = False,
    force: Annotated[bool, typer.Option(help="Rebuild even when the image exists.")] = False,
    desktop: Annotated[
        bool, typer.Option(help="Deprecated: use `--kind desktop` (with the default images).")
    ] = False,
) -> None:
    """Build the Docker images the kinds' `docker` backends use (debootstrap + docker import),
    or say which tag is already cached."""
    from environments.images import images_of_kinds
    from environments.registry import (
        UnknownEnvironmentKindError,
        all_kinds,
        environment_kind,
    )
    from sandboxes.base import SandboxError

    named = list(kind or [])
    if desktop:
        warn_deprecated("--desktop", "--kind desktop")
        named.append("desktop")
    try:
        chosen = [environment_kind(name) for name in dict.fromkeys(named)]
    except UnknownEnvironmentKindError as error:
        raise typer.BadParameter(str(error), param_hint="'--kind'") from None
    images = images_of_kinds(all_kinds(), every=every) if every or not named or desktop else []
    images += [
        found
        for found in images_of_kinds(chosen)
        if all(found[0].name != known.name for known, _ in images)
    ]
    if not images:
        console.print("no image to build: the chosen kinds run no Docker image", markup=False)
        return
    # The build's own steps, printed above the progress display.
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[RichHandler(console=console, show_path=False, markup=False)],
    )
    try:
        for image, kinds in images:
            with PhaseProgress(f"{image.name} image ({', '.join(kinds)})", None):
                line = image.build(force)
            console.print(f"{image.name} image ({', '.join(kinds)}): {line}", markup=False)
    except SandboxError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(1) from error
