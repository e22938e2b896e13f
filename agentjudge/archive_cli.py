"""``agentjudge archive``: record pages from the live web into a page archive.

Parses the arguments and delegates to ``sandboxes.browser.recording``; prints what was recorded
and which addresses failed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer

from agentjudge.console import console


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
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(2) from None
    if not urls:
        console.print(f"error: {urls_file}: no addresses", markup=False)
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
        console.print(f"failed: {url}: {reason}", markup=False)
    console.print(
        f"archived {len(report.pages)} of {len(urls)} pages ({report.responses} responses) "
        f"into {report.output}",
        markup=False,
    )
    if report.failures:
        raise typer.Exit(1)
