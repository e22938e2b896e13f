"""``agentjudge view``: open a results folder or a dataset in the local web viewer."""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from agentjudge.console import console
from agentjudge.paths import fail


def view(
    path: Annotated[
        Path,
        typer.Argument(
            help="A judge results folder (runs/judge/<dataset>, or its verdicts.jsonl) or a "
            "dataset folder."
        ),
    ],
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (0: a free one, picked and printed).")
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the viewer in the default web browser.")
    ] = False,
    dataset: Annotated[
        Path | None,
        typer.Option(help="The dataset of a results folder (default: the one summary.json names)."),
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(
            help="A replay folder with fidelity.jsonl (default: runs/replay/<dataset>-* beside "
            "the results folder)."
        ),
    ] = None,
    corrections: Annotated[
        Path | None,
        typer.Option(
            help="Where label corrections are appended (default: label_corrections.jsonl in the "
            "results folder, which `report` applies; for a dataset opened alone, a file per "
            "dataset under ~/.local/share/agentjudge/label-corrections, or $XDG_DATA_HOME)."
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="Where the table index is cached (default: ~/.cache/agentjudge/viewer)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Build the table index afresh and do not keep it.")
    ] = False,
) -> None:
    """Browse judge runs in a local web app (127.0.0.1 only, no internet): a filterable table,
    each run's trajectory (screenshots, trees), judge transcript, verdict and replay report, two
    runs side by side, and label review. Corrections go to a separate file: a results folder's
    are applied by `report` and `judge` by default (--no-folder-corrections to score the
    dataset's labels); any correction file can be given to `judge`, `report` and
    `datasets validate` with --label-corrections. Stop with Ctrl-C."""
    from viewer.index import default_cache_dir
    from viewer.server import bind_socket, build_app, open_viewer, serve
    from viewer.source import SourceError, open_source

    try:
        source = open_source(path, dataset=dataset, replay=replay, corrections=corrections)
    except SourceError as error:
        raise fail(str(error)) from None
    viewer = open_viewer(source, None if no_cache else cache_dir or default_cache_dir())
    try:
        sock = bind_socket(port)
    except OSError as error:
        raise fail(f"cannot listen on 127.0.0.1:{port}: {error}") from None
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    what = "judge runs" if source.results is not None else "trajectories"
    if viewer.index.complete:
        cached = " (from the cache)" if viewer.index.from_cache else ""
        console.print(f"{len(viewer.index.rows)} {what} indexed{cached}", markup=False)
    else:
        console.print(f"Indexing {source.verdicts} in the background", markup=False)
    if source.results is not None and source.dataset is None:
        console.print(
            "warning: the results folder's dataset was not found: trajectories will not show "
            "(pass --dataset FOLDER)",
            markup=False,
        )
    for problem in viewer.problems:
        console.print(str(problem), markup=False)
    console.print(f"Label corrections go to {source.corrections}", markup=False)
    console.print(f"Viewer: {url}  (Ctrl-C to stop)", markup=False)
    if open_browser:
        webbrowser.open(url)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(build_app(viewer), sock))
