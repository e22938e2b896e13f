"""The root ``agentjudge`` command and the commands that later layers fill in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agentjudge import (
    datasets_cli,
    judge_cli,
    replay_cli,
    sandboxes_cli,
    serve_cli,
    settings_cli,
    view_cli,
)
from agentjudge.console import console
from agentjudge.endpoints import endpoint_help, kind_option_help
from agentjudge.help import HelpGroup, install_help, live_help

__all__ = ["app", "main"]

app = typer.Typer(
    help="Agent-as-a-judge runtime: replay agent trajectories into sandboxes and judge them.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    cls=HelpGroup,
)
_KIND_HELP = {"endpoint": endpoint_help, "kind_option": kind_option_help}
"""The options every sandbox-starting command lists the registered kinds in."""
app.add_typer(datasets_cli.app, name="datasets")
app.add_typer(sandboxes_cli.app, name="sandboxes")
app.command(cls=live_help(**_KIND_HELP))(replay_cli.replay)
app.command(cls=live_help(kind=serve_cli.kind_help, **_KIND_HELP))(serve_cli.serve)
app.command(cls=live_help(mode=judge_cli.mode_help, model=judge_cli.model_help, **_KIND_HELP))(
    judge_cli.judge
)
app.command("settings")(settings_cli.show_settings)
app.command()(view_cli.view)


def _add_kind_commands() -> None:
    """The commands the environment kinds bring (``EnvironmentKind.commands``)."""
    from environments.registry import all_kinds

    for kind in all_kinds():
        for command in kind.commands():
            app.command()(command)


_add_kind_commands()


@app.command()
def report(
    results: Annotated[
        Path,
        typer.Argument(
            help="A judge output folder (or its verdicts.jsonl), as written by `judge`."
        ),
    ],
    output: Annotated[
        Path | None, typer.Option(help="Where to write the report (default: the results folder).")
    ] = None,
    item_scoring: Annotated[
        Literal["trajectory", "item"],
        typer.Option(
            help="Score search claims aggregated per trajectory (AJ-Bench) or one by one."
        ),
    ] = "trajectory",
    label_corrections: Annotated[
        Path | None,
        typer.Option(
            help="Score against reviewed labels: a label-correction file (JSON lines, as "
            "`agentjudge view` writes to label_corrections.jsonl); the dataset is not changed."
        ),
    ] = None,
    folder_corrections: Annotated[
        bool,
        typer.Option(
            help="Score against the label corrections made in `agentjudge view` "
            "(label_corrections.jsonl in the results folder) when there are any; "
            "--no-folder-corrections scores the dataset's own labels. Ignored with "
            "--label-corrections.",
        ),
    ] = True,
    label_source: Annotated[
        list[str] | None,
        typer.Option(
            help="Score only trajectories whose label was decided by this source (repeatable): "
            "human, vote (several human annotators), verifier (the task's own check), "
            "evaluator (an automatic, model-based evaluator), ground-truth, unknown."
        ),
    ] = None,
) -> None:
    """Score a results folder and write `report.md`, `report.html` (self-contained) and
    `report.json`: F1 with bootstrap intervals per subdomain, domain and overall, baselines,
    agent-vs-LLM improvements with paired tests, F1-vs-turns curves, confusion matrices, cost,
    ranking fidelity, and every wrong verdict with its error tag and transcript.

    The label corrections made in `agentjudge view` (the results folder's
    label_corrections.jsonl) are applied by default; a line says how many."""
    from bench.evaluate import report_folder
    from bench.grid_runner import VERDICTS_FILE

    folder = results.parent if results.name == VERDICTS_FILE else results
    if not folder.is_dir():
        console.print(f"error: {results}: no such results folder", markup=False)
        raise typer.Exit(2)
    from bench.results import BASELINES_FILE

    if not (folder / VERDICTS_FILE).is_file() and not (folder / BASELINES_FILE).is_file():
        console.print(
            f"error: {folder}: neither {VERDICTS_FILE} nor {BASELINES_FILE} is here; "
            "run `agentjudge judge` first",
            markup=False,
        )
        raise typer.Exit(2)
    from agentjudge.paths import require_corrections
    from dataset.corrections import CORRECTIONS_FILE

    if label_corrections is not None:
        require_corrections(label_corrections)
    elif folder_corrections and (folder / CORRECTIONS_FILE).is_file():
        require_corrections(folder / CORRECTIONS_FILE)
    from dataset.models import LABEL_SOURCES

    unknown = sorted(set(label_source or ()) - set(LABEL_SOURCES))
    if unknown:
        console.print(
            f"error: --label-source {', '.join(unknown)}: use {', '.join(LABEL_SOURCES)}",
            markup=False,
        )
        raise typer.Exit(2)
    scored, files = report_folder(
        folder,
        output=output,
        item_scoring=item_scoring,
        label_corrections=label_corrections,
        label_sources=label_source or (),
        folder_corrections=folder_corrections,
    )
    from agentjudge.judge_cli import print_report

    print_report(scored)
    console.print(f"Report: {files.html} (also {files.markdown}, {files.json_file})", markup=False)


def main() -> None:
    """Console-script entry point. A sandbox backend that cannot start (no Docker engine, no
    debootstrap for the image), an ``AGENTJUDGE_*`` variable that does not parse, a missing
    dataset folder or a results folder that is in use ends any command with its one-line reason
    and exit code 2."""
    from dataset.store import DatasetNotFoundError
    from sandboxes.base import SandboxError
    from sandboxes.process_memory import keep_freed_buffers
    from settings import SettingsError
    from storage.locks import ResultsFolderError

    keep_freed_buffers()  # replay and judges handle screens: megabytes a buffer, many a step
    try:
        app()
    except (SandboxError, SettingsError, DatasetNotFoundError, ResultsFolderError) as error:
        console.print(f"error: {error}", markup=False)
        raise SystemExit(2) from None


install_help(app)  # last: every command above, the kinds' included, keeps its placeholders
