"""``agentjudge replay``: replay a dataset into sandboxes and print the fidelity table."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from agentjudge.console import console
from agentjudge.endpoints import (
    BackendOption,
    DesktopUrlOption,
    DsnOption,
    EndpointOption,
    KindOptionOption,
    SeedTimeoutOption,
    backend_choice,
    parse_kind_settings,
)
from agentjudge.paths import (
    SuppliedEnvironments,
    folder_error,
    require_dataset,
    supplied_environments,
)
from environments.capacity import parse_jobs
from replay.report import FidelityReport
from replay.runner import (
    DEFAULT_OUTPUT,
    REPORT_FILE,
    SUMMARY_FILE,
    ReplaySummary,
    SubdomainRow,
    replay_dataset,
)
from storage.locks import ResultsFolderError


def _row(table: Table, row: SubdomainRow, *, bold: bool = False) -> None:
    name = "all" if row.domain == "all" else f"{row.domain}/{row.subdomain}"
    agrees = f"{row.verifier_agrees}/{row.verifier_checked}" if row.verifier_checked else "-"
    cells = [
        name,
        str(row.trajectories),
        str(row.faithful),
        str(row.diverged),
        str(row.diverged_presentation),
        str(row.failed),
        str(row.unsupported),
        agrees,
        str(row.verifier_errors),
        str(row.label_crashes),
    ]
    table.add_row(*(f"[bold]{cell}[/bold]" if bold else cell for cell in cells))


def print_summary(summary: ReplaySummary, output: Path) -> None:
    """The fidelity table, then every problem on its own line, then where the reports are."""
    table = Table(title=f"Replay of {summary.dataset}", box=box.SIMPLE_HEAD)
    for column in (
        "subdomain",
        "total",
        "faithful",
        "diverged",
        "of which shown only",
        "failed",
        "no replay",
        "verifier ok",
        "verifier error",
        "label crashed",
    ):
        if column == "subdomain":
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify="right")
    for row in summary.rows:
        _row(table, row)
    _row(table, summary.total, bold=True)
    console.print(table)
    for problem in summary.problems:
        console.print(problem, markup=False)
    console.print(
        f"{summary.resumed} report(s) reused from an earlier run"
        + (
            f" ({summary.resumed_not_faithful} of them diverged or failed: --fresh replays "
            "them again)"
            if summary.resumed_not_faithful
            else ""
        )
        + f"; {summary.jobs} at once; {summary.seconds:.1f} s. "
        f"Reports: {output / REPORT_FILE}, {output / SUMMARY_FILE}",
        markup=False,
    )


def _progress(report: FidelityReport) -> None:
    agrees = ""
    check = report.verifier
    if check is not None and check.replayed.errored:
        agrees = f" VERIFIER ERROR ({check.replayed.error_summary})"
    elif check is not None and check.recorded_crash is not None:
        agrees = " recorded verification crashed"
    elif check is not None and check.agrees is not None:
        agrees = " verifier agrees" if check.agrees else " VERIFIER DISAGREES"
    effect = {"presentation": " (shown only)", "state": " (state)"}.get(report.divergence or "", "")
    recheck = f" [{report.recheck}]" if report.recheck else ""
    console.print(
        f"  {report.trajectory_id}: {report.verdict}{effect}{agrees} ({report.seconds:.2f} s)"
        f"{recheck}",
        markup=False,
    )


def replay(
    dataset: Annotated[Path, typer.Argument(help="The dataset folder to replay.")],
    backend: BackendOption = "auto",
    endpoint: EndpointOption = None,
    kind_option: KindOptionOption = None,
    jobs: Annotated[
        str,
        typer.Option(
            help="Trajectories replayed concurrently: a number, or auto (as many as this "
            "machine's CPUs and memory hold of the kinds replayed: 2 desktops on 2 cores)."
        ),
    ] = "auto",
    environment: SuppliedEnvironments = None,
    output: Annotated[
        Path | None,
        typer.Option(
            help="Report folder (default: runs/replay/DATASET-BACKEND).", rich_help_panel="Output"
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(
            help="Ignore reports of an earlier run and replay everything.", rich_help_panel="Output"
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            help="When another process writes the report folder, wait for it instead of "
            "stopping (exit code 2).",
            rich_help_panel="Output",
        ),
    ] = False,
    dsn: DsnOption = None,
    desktop_url: DesktopUrlOption = None,
    seed_timeout: SeedTimeoutOption = None,
) -> None:
    """Replay every trajectory into a fresh sandbox, re-execute each call, compare outputs, and
    run the task verifier on the result.

    Prints per subdomain: trajectories, faithful, diverged (and of those, how many differ only in
    what the agent was shown, with an end state no step could have changed), failed, not
    replayable (no replay for
    that domain yet), verifier agreement with the recorded labels, verifier errors (a verifier that
    crashed or timed out on the replay: no verdict, not compared) and labels whose recorded
    verification crashed. Writes `fidelity.jsonl` (one
    report per trajectory, as each finishes) and `summary.json`. Rerunning resumes. One process
    at a time writes a report folder: a second one stops (or, with `--wait`, waits). Exit code 1
    when any replay diverged or failed or the dataset has errors; 2 when the dataset folder is
    missing or the report folder is in use.
    """
    require_dataset(dataset)
    try:
        concurrency = parse_jobs(jobs)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--jobs") from None
    settings = parse_kind_settings(
        endpoint, kind_option, dsn=dsn, desktop_url=desktop_url, seed_timeout=seed_timeout
    )
    choice = backend_choice(backend, settings, environments=supplied_environments(environment))
    folder = output or DEFAULT_OUTPUT / f"{dataset.resolve().name}-{backend}"
    console.print(f"Replaying {dataset} ({choice.describe()})", markup=False)
    try:
        summary = asyncio.run(
            replay_dataset(
                dataset,
                folder,
                choice=choice,
                jobs=concurrency,
                fresh=fresh,
                on_report=_progress,
                wait=wait,
            )
        )
    except ResultsFolderError as error:
        raise folder_error(error) from None
    print_summary(summary, folder)
    total = summary.total
    if total.diverged or total.failed or summary.problems:
        raise typer.Exit(1)
