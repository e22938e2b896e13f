"""The browser kind's command, ``agentjudge archive``: record pages from the live web into a page
archive (``BrowserKind.commands`` adds it to the command line).

Parses the arguments and delegates to ``sandboxes.browser.recording``; prints what was recorded
and which addresses failed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer


def archive(
    urls_file: Annotated[
        Path, typer.Argument(help="A text file with one http(s) address per line (# comments).")
    ],
    output: Annotated[
        Path,
        typer.Argument(help="The archive to write: a folder, or a file ending in .warc.gz/.warc."),
    ],
    archive_format: Annotated[
        Literal["warc", "folder"] | None,
        typer.Option("--format", help="warc or folder (default: from OUTPUT's name)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds each page may take to load.")] = 30.0,
    allow_private: Annotated[
        bool,
        typer.Option(
            help="Also fetch loopback and private addresses (refused by default: a listed page "
            "must not archive what a service on this machine or its network answers)."
        ),
    ] = False,
) -> None:
    """Open every listed address in a headless Chromium that reaches the network, and write
    each page with everything it loaded (styles, scripts, images, frames) into a page archive
    for the browser kind. Needs a machine that reaches those sites; failed addresses are
    listed, and the exit code is 1 when any failed."""
    from sandboxes.browser.recording import read_url_list, record_pages

    try:
        urls = read_url_list(urls_file)
    except (OSError, ValueError) as error:
        typer.echo(f"error: {error}")
        raise typer.Exit(2) from None
    if not urls:
        typer.echo(f"error: {urls_file}: no addresses")
        raise typer.Exit(2)
    report = asyncio.run(
        record_pages(
            urls,
            output,
            archive_format=archive_format,
            timeout_seconds=timeout,
            allow_private=allow_private,
        )
    )
    for url, reason in report.failures.items():
        typer.echo(f"failed: {url}: {reason}")
    typer.echo(
        f"archived {len(report.pages)} of {len(urls)} pages ({report.responses} responses) "
        f"into {report.output}"
    )
    if report.failures:
        raise typer.Exit(1)
