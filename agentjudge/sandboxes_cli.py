"""``agentjudge sandboxes``: garbage collection and the locally built Docker image."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import typer

from agentjudge.console import console

app = typer.Typer(
    help="Manage sandboxes: collect leftovers of killed runs, build the Docker image.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


@app.command()
def gc(
    dsn: Annotated[
        str | None,
        typer.Option(help="Also collect databases and roles in this external Postgres server."),
    ] = None,
) -> None:
    """Remove directories, embedded Postgres servers, databases, roles, containers and images
    left by runs that are no longer alive (every run also does this when it starts)."""
    from environments.leftovers import collect_all_leftovers

    removed = asyncio.run(collect_all_leftovers(dsn))
    for line in removed:
        console.print(f"removed {line}", markup=False)
    console.print(f"{len(removed)} leftover(s) removed", markup=False)


@app.command("build-images")
def build_images(
    force: Annotated[bool, typer.Option(help="Rebuild even when the image exists.")] = False,
    desktop: Annotated[
        bool,
        typer.Option(
            help="Also build the desktop image (LibreOffice on Xvfb) of the desktop kind's "
            "`docker` backend: about 1 GB, a few minutes the first time."
        ),
    ] = False,
) -> None:
    """Build the Docker image the `docker` backends use (debootstrap + docker import), or say
    which tag is already cached."""
    from sandboxes.base import SandboxError
    from sandboxes.docker.images import build_sandbox_image

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # build progress
    try:
        tag = build_sandbox_image(force=force)
        console.print(f"sandbox image: {tag}", markup=False)
        if desktop:
            from sandboxes.desktop.image import build_desktop_image, desktop_image_size

            desktop_tag = build_desktop_image(force=force)
            size = desktop_image_size(desktop_tag) / 2**20
            console.print(f"desktop image: {desktop_tag} ({size:.0f} MiB)", markup=False)
    except SandboxError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(1) from error
