"""``agentjudge replay``: replay a dataset into sandboxes and print the fidelity table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from agentjudge.console import PhaseProgress, console
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
from agentjudge.interrupts import run_interruptibly
from agentjudge.paths import (
    SuppliedEnvironments,
    folder_error,
    require_dataset,
    supplied_environments,
)
from agentjudge.subset import LimitOption, OnlyOption, selected_ids, selection
from environments.capacity import parse_jobs
from replay.report import FidelityReport
from replay.runner import (
    DEFAULT_OUTPUT,
    REPORT_FILE,
    SUMMARY_FILE,
    ReplaySummary,
    SubdomainRow,
    read_reports,
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


COLUMN_LEGEND: tuple[tuple[str, str], ...] = (
    (
        "faithful",
        "every replayed step gave the recorded output (or a screen accepted as a variant of it)",
    ),
    ("diverged", "at least one step gave another output than the recorded one"),
    (
        "of which shown only",
        "diverged replays whose differences are only in what the agent was shown (no "
        "diverging step could change the end state)",
    ),
    ("failed", "a step could not run, or the sandbox could not be built"),
    ("no replay", "the trajectory's domain has no replay yet (judged from the record only)"),
    ("verifier ok", "the task's verifier on the replayed state agrees with the recorded label"),
    ("verifier error", "the verifier crashed or timed out on the replay (not compared)"),
    ("label crashed", "the recorded label came from a verification that crashed (not compared)"),
)
"""The replay table's columns that need words, as printed under it."""


def print_legend() -> None:
    """The legend printed under the replay table."""
    width = max(len(name) for name, _ in COLUMN_LEGEND)
    for name, meaning in COLUMN_LEGEND:
        console.print(f"  {name.ljust(width)}  {meaning}", markup=False)


def print_summary(summary: ReplaySummary, output: Path) -> None:
    """The fidelity table and its legend, then every problem on its own line, then where the
    reports are."""
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
    print_legend()
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
        + f"; {summary.jobs} at once"
        + (
            f" ({summary.ahead.prepared} fresh sandbox(es) made ahead: {summary.ahead.ready} "
            f"ready when needed, {summary.ahead.waited} waited for, "
            f"{summary.ahead.waited_seconds:.0f} s in all)"
            if summary.ahead.prepared
            else ""
        )
        + f"; {summary.seconds:.1f} s. "
        f"Reports: {output / REPORT_FILE}, {output / SUMMARY_FILE}",
        markup=False,
    )


def report_line(report: FidelityReport) -> str:
    """One replayed trajectory in one line: verdict, verifier outcome, time."""
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
    variants = report.variant_steps
    accepted = f" [matched accepted variants at steps {variants}]" if variants else ""
    return (
        f"  {report.trajectory_id}: {report.verdict}{effect}{agrees} ({report.seconds:.2f} s)"
        f"{recheck}{accepted}"
    )


class _Progress:
    """A line per replayed trajectory under a progress display (``PhaseProgress``)."""

    def __init__(self) -> None:
        self.bar: PhaseProgress | None = None

    def planned(self, new: int, reused: int) -> None:
        self.bar = PhaseProgress("replaying", new + reused, done=reused)

    def report(self, report: FidelityReport) -> None:
        console.print(report_line(report), markup=False)
        if self.bar is not None:
            self.bar.advance(status=report.trajectory_id)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def replay(
    dataset: Annotated[Path, typer.Argument(help="The dataset folder to replay.")],
    backend: BackendOption = "auto",
    endpoint: EndpointOption = None,
    kind_option: KindOptionOption = None,
    jobs: Annotated[
        str,
        typer.Option(
            help="Trajectories replayed concurrently: a number, or auto (as many as this "
            "machine's CPUs and memory hold of the kinds replayed: 3 desktops on 2 cores)."
        ),
    ] = "auto",
    only: OnlyOption = None,
    limit: LimitOption = None,
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
    verification crashed (a legend under the table says what each column counts). `--only` and
    `--limit` replay a subset. Writes `fidelity.jsonl` (one
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
    chosen = selection(only, limit)
    subset = selected_ids(dataset, chosen)
    folder = output or DEFAULT_OUTPUT / f"{dataset.resolve().name}-{backend}"
    what = (
        "" if subset is None else f" ({len(subset)} trajectory(ies) chosen by {chosen.describe()})"
    )
    console.print(
        f"Replaying {dataset}{what} (backends by kind: {choice.describe()})", markup=False
    )
    progress = _Progress()
    try:
        summary = run_interruptibly(
            replay_dataset(
                dataset,
                folder,
                choice=choice,
                jobs=concurrency,
                fresh=fresh,
                on_report=progress.report,
                wait=wait,
                on_planned=progress.planned,
                on_note=lambda text: console.print(text, markup=False),
                only=subset,
            )
        )
    except KeyboardInterrupt:
        progress.stop()
        saved = len(read_reports(folder / REPORT_FILE)) if (folder / REPORT_FILE).is_file() else 0
        console.print(
            f"Interrupted: {saved} replay report(s) saved in {folder / REPORT_FILE}; run the "
            "same command again to resume.",
            markup=False,
        )
        raise typer.Exit(130) from None
    except ResultsFolderError as error:
        raise folder_error(error) from None
    finally:
        progress.stop()
    print_summary(summary, folder)
    total = summary.total
    if total.diverged or total.failed or summary.problems:
        raise typer.Exit(1)
