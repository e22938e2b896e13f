"""``agentjudge datasets ...``: list, validate and import datasets."""

from __future__ import annotations

import json
import time
from pathlib import Path, PurePosixPath
from typing import Annotated

import typer
from rich.table import Table

from agentjudge.console import PhaseProgress, console, print_problems
from agentjudge.paths import fail, name_mappings, require_dataset, require_folder
from dataset.importers.search.common import URLS_FILE, ImportReport
from dataset.problems import Problem
from dataset.store import RECORD_MODELS, Dataset, count_by, find_datasets, load_dataset
from dataset.urls import needed_urls
from settings import get_settings

__all__ = ["app", "default_search_roots"]

app = typer.Typer(
    help="List, validate and import trajectory datasets.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)

REPO_DATASETS = Path(__file__).resolve().parent.parent / "datasets"


def default_search_roots() -> list[Path]:
    """Where ``datasets list`` looks: ``$AGENTJUDGE_DATASETS``, ./datasets and the bundled ones."""
    roots = [*get_settings().datasets, Path("datasets"), REPO_DATASETS]
    return [root for root in roots if str(root) not in {"", "."}]


def end_import(destination: Path, *, imported: bool, import_errors: int) -> None:
    """The end of every import command: exit 1 when nothing was imported, the import reported
    errors, or the written dataset does not validate (its errors printed)."""
    if not imported:
        raise typer.Exit(1)
    loaded = load_dataset(destination, partial=True)
    validation_errors, _ = print_problems(p for p in loaded.problems if p.severity == "error")
    if import_errors or validation_errors:
        raise typer.Exit(1)


@app.command("list")
def list_datasets(
    roots: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Folders to search (default: $AGENTJUDGE_DATASETS, ./datasets and "
            "the datasets bundled with the project)."
        ),
    ] = None,
) -> None:
    """List dataset folders with their task and trajectory counts. A folder named on the
    command line that does not exist is exit code 2."""
    for root in roots or []:
        require_folder(root, "folder to search")
    found = find_datasets(*(roots or default_search_roots()))
    if not found:
        console.print("No datasets found (a dataset is a folder with a dataset.json).")
        return
    table = Table("name", "tasks", "trajectories", "PASS", "FAIL", "status")
    table.add_column("path", overflow="fold")
    for root in found:
        loaded = load_dataset(root, partial=True)
        rows = count_by(loaded)
        passed = sum(row[2] for row in rows)
        failed = sum(row[3] for row in rows)
        errors = len(loaded.errors)
        table.add_row(
            loaded.manifest.name if loaded.manifest else "?",
            str(len(loaded.tasks)),
            str(len(loaded.trajectories)),
            str(passed),
            str(failed),
            "valid" if errors == 0 else f"{errors} error(s)",
            str(root),
        )
    console.print(table)


@app.command("validate")
def validate(
    path: Annotated[Path, typer.Argument(help="The dataset folder.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
    label_corrections: Annotated[
        Path | None,
        typer.Option(
            help="A label-correction file (as `agentjudge view` writes): check that each line "
            "names a trajectory (and claim) of the dataset, and count labels as corrected."
        ),
    ] = None,
) -> None:
    """Check every file of a dataset; list all problems, then counts per domain/subdomain/label.

    Exits 1 if there is any error (warnings alone exit 0), 2 if the folder is missing or cannot
    be read.
    """
    require_dataset(path)
    loaded = load_dataset(path, partial=True)
    if label_corrections is not None:
        loaded = _with_corrections(loaded, label_corrections)
    rows = count_by(loaded)
    if as_json:
        payload = {
            "dataset": str(path),
            "valid": not loaded.errors,
            "tasks": len(loaded.tasks),
            "trajectories": len(loaded.trajectories),
            "counts": [
                {"domain": d, "subdomain": s, "PASS": p, "FAIL": f, "unlabelled": u}
                for d, s, p, f, u in rows
            ],
            "problems": [problem.model_dump() for problem in loaded.problems],
        }
        typer.echo(json.dumps(payload, indent=2))
        raise typer.Exit(1 if loaded.errors else 0)

    errors, warnings = print_problems(loaded.problems)
    table = Table(
        "domain",
        "subdomain",
        "PASS",
        "FAIL",
        "unlabelled",
        "total",
        title=f"{len(loaded.tasks)} valid task(s), "
        f"{len(loaded.trajectories)} valid trajectory(ies)",
    )
    for domain, subdomain, passed, failed, unlabelled in rows:
        table.add_row(
            domain,
            subdomain,
            str(passed),
            str(failed),
            str(unlabelled),
            str(passed + failed + unlabelled),
        )
    console.print(table)
    if errors:
        console.print(f"{path}: {errors} error(s), {warnings} warning(s)", markup=False)
        raise typer.Exit(1)
    console.print(f"{path}: valid ({warnings} warning(s))", markup=False)


def _with_corrections(loaded: Dataset, source: Path) -> Dataset:
    """The dataset with the corrections of ``source`` applied and their problems added (a
    missing file stops the command)."""
    from dataset.corrections import apply_to_dataset, check_corrections, read_corrections

    if not source.is_file():
        raise fail(f"{source}: no such label-correction file")
    problems: list[Problem] = []
    corrections = read_corrections(source, problems)
    problems.extend(check_corrections(corrections, loaded, source))
    corrected = apply_to_dataset(loaded, corrections)
    corrected.problems = [*loaded.problems, *problems]
    return corrected


class _Counted:
    """A progress display for an importer that reports ``(done, total)``; it starts at the first
    report, when the total is known."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: PhaseProgress | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = PhaseProgress(self.label, total)
        self.bar.advance(done - self.bar.done)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@app.command("import-mcpmark")
def import_mcpmark_command(
    sources: Annotated[
        list[Path],
        typer.Argument(help="MCPMark results folders; every run folder below them is imported."),
    ],
    destination: Annotated[Path, typer.Argument(help="The dataset folder to write (or add to).")],
    tasks_root: Annotated[
        Path | None,
        typer.Option(
            help="MCPMark's tasks/ folder: bundles description.md, verify.py and the files next "
            "to it (never ground_truth*)."
        ),
    ] = None,
    environments_root: Annotated[
        Path | None,
        typer.Option(
            help="Initial states: <category>/ trees (filesystem); <category>/<task>, else "
            "<category>, as .sql, .backup or .dump (postgres; a task's preparation script runs "
            "on it at replay)."
        ),
    ] = None,
    environment: Annotated[
        list[str] | None,
        typer.Option(
            help="One task's prepared initial state, as CATEGORY/TASK=PATH (an SQL file or a "
            "pg_dump archive for postgres, a folder for filesystem); tried before "
            "--environments-root. Repeatable."
        ),
    ] = None,
    collation: Annotated[
        list[str] | None,
        typer.Option(
            help="The collation a server's runs start under, as SERVER=COLLATION (postgres-mcp,"
            " supabase, insforge), or COLLATION for all; 'default' is the replaying server's."
            " Defaults: postgres-mcp and insforge en_US.utf8, supabase C. Repeatable."
        ),
    ] = None,
    sandbox_prefix: Annotated[
        list[str] | None,
        typer.Option(
            help="Another recorded sandbox root to rewrite to ${SANDBOX_ROOT} "
            "(backup_filesystem_* roots are found automatically). Repeatable."
        ),
    ] = None,
    max_turns: Annotated[
        int, typer.Option(help="The agent's turn cap when the runs were recorded.")
    ] = 100,
    skip_empty: Annotated[
        bool,
        typer.Option(
            "--skip-empty",
            help="Skip (and list) runs whose messages.json is empty, instead of importing them "
            "as zero-step trajectories with their recorded failure.",
        ),
    ] = False,
) -> None:
    """Convert MCPMark run folders (filesystem and Postgres: postgres-mcp, Supabase, InsForge)
    into the unified dataset format.

    Reads MCPMark's layout, the community experiments' and AJ-Bench's. Every run is converted
    on its own: a broken run is reported and the others still land. Two runs that would get one
    trajectory id stop the import before anything is written. The result is validated at the
    end; exits 1 if the import or the written dataset has errors, 2 if a folder it is given is
    missing or cannot be read.
    """
    from dataset.importers.mcpmark import DuplicateIdError, import_mcpmark

    for source in sources:
        require_folder(source, "MCPMark results folder")
    if tasks_root is not None:
        require_folder(tasks_root, "MCPMark tasks folder (--tasks-root)")
    if environments_root is not None:
        require_folder(environments_root, "initial states folder (--environments-root)")
    if destination.exists() and not destination.is_dir():
        raise fail(f"{destination}: the destination is a file, not a dataset folder")
    mapping = {
        name: Path(path)
        for name, path in name_mappings(environment, "--environment", "CATEGORY/TASK=PATH").items()
    }
    collations: dict[str, str | None] = {}
    for given in collation or []:
        server, separator, name = given.rpartition("=") if "=" in given else ("*", "", given)
        if not name.strip() or (separator and not server.strip()):
            raise fail(f"--collation {given!r}: expected [SERVER=]COLLATION")
        collations[server.strip()] = None if name.strip() == "default" else name.strip()
    started = time.perf_counter()
    progress = _Counted("importing run folders")
    try:
        report = import_mcpmark(
            sources,
            destination,
            tasks_root=tasks_root,
            environments_root=environments_root,
            environments=mapping,
            sandbox_prefixes=sandbox_prefix,
            max_turns=max_turns,
            skip_empty=skip_empty,
            collations=collations,
            on_progress=progress,
        )
    except DuplicateIdError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(1) from None
    finally:
        progress.stop()
    seconds = time.perf_counter() - started
    import_errors, _ = print_problems(report.problems)
    servers = ", ".join(f"{name} {count}" for name, count in sorted(report.by_server.items()))
    console.print(
        f"imported {len(report.trajectories)} trajectory(ies) of {len(report.tasks)} task(s) "
        f"into {destination} in {seconds:.1f} s" + (f" ({servers})" if servers else ""),
        markup=False,
    )
    if report.empty or report.skipped_empty:
        console.print(
            f"empty conversations: {len(report.empty)} imported as zero-step trajectories, "
            f"{len(report.skipped_empty)} skipped",
            markup=False,
        )
    end_import(destination, imported=bool(report.trajectories), import_errors=import_errors)


@app.command("import-mobile")
def import_mobile_command(
    source_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="androidworld (run folders of <Task>_<n>.pkl.gz), spa-bench (session "
            "folders), a3 or aitk (histories with states/) or agentrewardbench (the release, "
            "or a folder inside cleaned/).",
        ),
    ],
    sources: Annotated[list[Path], typer.Argument(help="Source files or folders.")],
    destination: Annotated[Path, typer.Argument(help="The dataset folder to write (or add to).")],
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Annotators' votes (CSV: trajectory,annotator,label; AgentRewardBench's "
            "annotations.csv, used by default from its release; or JSON lines): the majority "
            "becomes the label (source vote), every vote is kept."
        ),
    ] = None,
) -> None:
    """Convert Android trajectories (AndroidWorld, SPA-Bench, A3, AITK) and AgentRewardBench web
    trajectories into the unified dataset format, recording the source benchmark and agent.

    A run that cannot be read is reported with its file and field; the others still land. Exits
    1 if nothing was imported or the written dataset has errors, 2 if a source is missing.
    """
    from dataset.importers.mobile import FORMATS, import_mobile

    if source_format not in FORMATS:
        raise fail(f"--format {source_format!r}: use one of {', '.join(FORMATS)}")
    for source in sources:
        if not source.exists():
            raise fail(f"{source}: no such file or folder")
    if labels is not None and not labels.is_file():
        raise fail(f"{labels}: the labels file does not exist")
    if destination.exists() and not destination.is_dir():
        raise fail(f"{destination}: the destination is a file, not a dataset folder")
    started = time.perf_counter()
    with PhaseProgress(f"importing {source_format}", None):
        summary = import_mobile(source_format, sources, destination, labels=labels)
    seconds = time.perf_counter() - started
    import_errors, _ = print_problems(summary.problems)
    benchmarks = ", ".join(
        f"{name} {count}" for name, count in sorted(summary.by_benchmark.items())
    )
    console.print(
        f"imported {len(summary.trajectories)} trajectory(ies) of {len(summary.tasks)} task(s) "
        f"into {destination} in {seconds:.1f} s ({benchmarks or 'none'}); "
        "labels: "
        + (", ".join(f"{k} {n}" for k, n in sorted(summary.by_label_source.items())) or "none"),
        markup=False,
    )
    end_import(destination, imported=bool(summary.trajectories), import_errors=import_errors)


def _finish_search_import(report: ImportReport, destination: Path, seconds: float) -> None:
    """Print what a search import made and its problems; exit 1 on any error."""
    import_errors, _ = print_problems(report.problems)
    console.print(
        f"imported {len(report.trajectories)} trajectory(ies) of {len(report.tasks)} task(s) "
        f"into {destination} in {seconds:.1f} s; {len(report.urls)} page(s) a judge will need "
        f"are listed in {destination / URLS_FILE}",
        markup=False,
    )
    end_import(destination, imported=bool(report.trajectories), import_errors=import_errors)


def _supplied_files(given: list[str]) -> dict[str, Path]:
    """``--file URL=PATH`` options as a mapping; a malformed one or a missing file exits 2."""
    supplied: dict[str, Path] = {}
    for item in given:
        key, separator, path = item.rpartition("=")
        if not separator or not key.strip() or not path.strip():
            console.print(f"error: --file {item!r}: expected URL=PATH", markup=False)
            raise typer.Exit(2)
        if not Path(path.strip()).is_file():
            console.print(f"error: --file {item!r}: {path.strip()} is not a file", markup=False)
            raise typer.Exit(2)
        supplied[key.strip()] = Path(path.strip())
    return supplied


@app.command("import-osworld")
def import_osworld_command(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="OSWorld results folders (or AJ-Bench's GUI folders); every folder holding a "
            "traj.jsonl below them is one run."
        ),
    ],
    destination: Annotated[Path, typer.Argument(help="The dataset folder to write (or add to).")],
    tasks_root: Annotated[
        Path | None,
        typer.Option(
            help="OSWorld's evaluation_examples folder (examples/<domain>/<id>.json); without "
            "it a task JSON beside each run is used."
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="A human label file (JSON, JSON lines or CSV: run -> PASS/FAIL); its labels "
            "win over true/false folders and result.txt."
        ),
    ] = None,
    file: Annotated[
        list[str] | None,
        typer.Option(
            help="A file a task's setup downloads, supplied locally as URL=PATH (the key may "
            "also be its desktop path or file name). Repeatable."
        ),
    ] = None,
    files_dir: Annotated[
        Path | None,
        typer.Option(help="A folder holding downloaded files, found by file name."),
    ] = None,
    pass_threshold: Annotated[
        float,
        typer.Option(help="The result.txt score from which a run is labelled PASS."),
    ] = 1.0,
    max_steps: Annotated[
        int,
        typer.Option(help="The agents' step cap when a task file sets none (OSWorld's 15)."),
    ] = 15,
    merge: Annotated[
        bool,
        typer.Option(
            help="Add to a dataset that already exists at the destination (without it, the "
            "import refuses one); tasks and runs with the same ids are replaced, and listed."
        ),
    ] = False,
) -> None:
    """Convert OSWorld result folders (traj.jsonl, step screenshots, result.txt) and their task
    JSON into the unified dataset format, for LibreOffice Impress, Writer and Calc tasks.

    Both action spaces (computer_13, pyautogui) are read. Labels come from a --labels file,
    else AJ-Bench's true/false folders (human), else result.txt (OSWorld's evaluator). Files the
    task's setup downloads from the web are bundled when supplied with --file or --files-dir;
    otherwise the import lists them and the task cannot be replayed until they are. Exits 1 if
    the import or the written dataset has errors, 2 if a path it is given is missing.
    """
    from dataset.importers.osworld import import_osworld, read_label_file
    from dataset.importers.osworld.importer import ExistingDatasetError
    from dataset.importers.osworld.labels import LabelFileError

    for source in sources:
        require_folder(source, "OSWorld results folder")
    if tasks_root is not None:
        require_folder(tasks_root, "OSWorld tasks folder (--tasks-root)")
    if files_dir is not None:
        require_folder(files_dir, "downloaded files folder (--files-dir)")
    if destination.exists() and not destination.is_dir():
        raise fail(f"{destination}: the destination is a file, not a dataset folder")
    supplied = _supplied_files(file or [])
    human = {}
    if labels is not None:
        try:
            human = read_label_file(labels)
        except LabelFileError as error:
            console.print(f"error: --labels: {error}", markup=False)
            raise typer.Exit(2) from None
    started = time.perf_counter()
    importing = PhaseProgress("importing OSWorld runs", None)
    try:
        report = import_osworld(
            sources,
            destination,
            tasks_root=tasks_root,
            labels=human,
            files=supplied,
            files_dir=files_dir,
            pass_threshold=pass_threshold,
            max_steps=max_steps,
            merge=merge,
        )
    except ExistingDatasetError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(1) from None
    finally:
        importing.stop()
    seconds = time.perf_counter() - started
    import_errors, _ = print_problems(report.problems)
    groups = ", ".join(f"{name} {count}" for name, count in sorted(report.by_subdomain.items()))
    sources_text = ", ".join(
        f"{name} {count}" for name, count in sorted(report.by_label_source.items())
    )
    console.print(
        f"imported {len(report.trajectories)} trajectory(ies) of {len(report.tasks)} task(s) "
        f"into {destination} in {seconds:.1f} s"
        + (f" ({groups}; labels: {sources_text})" if groups else ""),
        markup=False,
    )
    if report.needed_files:
        console.print(
            f"{len(report.needed_files)} downloaded file(s) were not supplied; their tasks "
            "cannot be replayed until they are:",
            markup=False,
        )
        for needed in report.needed_files:
            console.print(
                f"  {needed.task_id}: cannot replay: supply {needed.file_option()}  "
                f"(saved at {needed.path}; or a --files-dir folder holding "
                f"{PurePosixPath(needed.path).name})",
                markup=False,
            )
    if report.replaced:
        console.print(
            f"--merge replaced {len(report.replaced)} file(s) of the existing dataset:",
            markup=False,
        )
        for relative in report.replaced:
            console.print(f"  {relative}", markup=False)
    end_import(destination, imported=bool(report.trajectories), import_errors=import_errors)


def _require_files(sources: list[Path]) -> None:
    for source in sources:
        if not source.exists():
            raise fail(f"{source}: no such file or folder")


@app.command("import-search")
def import_search_command(
    sources: Annotated[
        list[Path],
        typer.Argument(help="Recorded runs: .json/.jsonl files, or folders holding them."),
    ],
    destination: Annotated[Path, typer.Argument(help="The dataset folder to write (or add to).")],
    archive: Annotated[
        Path | None,
        typer.Option(
            help="A page archive (a page folder or a WARC file, e.g. made by `agentjudge "
            "archive` from urls.txt): copied into every task folder, the tasks start from it "
            "instead of the live web."
        ),
    ] = None,
) -> None:
    """Convert recorded search-agent runs (tool calls with URLs and a final answer, OpenAI chat
    messages or a plain step list) into search trajectories, and list in `urls.txt` every page
    they opened or cited (the pages to archive for offline judging). Exits 1 if a run could not
    be imported or the written dataset has errors."""
    from dataset.importers.search import import_search_runs

    _require_files(sources)
    if archive is not None and not archive.exists():
        raise fail(f"{archive}: no such page archive (--archive)")
    if destination.exists() and not destination.is_dir():
        raise fail(f"{destination}: the destination is a file, not a dataset folder")
    started = time.perf_counter()
    with PhaseProgress("importing search runs", None):
        report = import_search_runs(sources, destination, archive=archive)
    _finish_search_import(report, destination, time.perf_counter() - started)


@app.command("import-ajbench-search")
def import_ajbench_search_command(
    sources: Annotated[
        list[Path],
        typer.Argument(help="AJ-Bench's src/data/Search files (deep_*.json/.jsonl, wide_*.jsonl)."),
    ],
    destination: Annotated[Path, typer.Argument(help="The dataset folder to write (or add to).")],
) -> None:
    """Convert AJ-Bench's search items (answers split into labelled single rows) into search
    trajectories whose claims are the rows, and list in `urls.txt` every source they cite.
    Exits 1 if a record could not be imported or the written dataset has errors."""
    from dataset.importers.search import import_ajbench_search

    _require_files(sources)
    if destination.exists() and not destination.is_dir():
        raise fail(f"{destination}: the destination is a file, not a dataset folder")
    started = time.perf_counter()
    with PhaseProgress("importing AJ-Bench search items", None):
        report = import_ajbench_search(sources, destination)
    _finish_search_import(report, destination, time.perf_counter() - started)


@app.command("urls")
def urls_command(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder.")],
) -> None:
    """Print every page the dataset's trajectories opened or cited and each archived task's
    start page, one a line, sorted: the URL list to archive for offline judging."""
    require_dataset(dataset)
    loaded = load_dataset(dataset, partial=True)
    for url in needed_urls(loaded.trajectories.values(), loaded.tasks.values()):
        typer.echo(url)


@app.command("schema")
def schema(
    record: Annotated[
        str, typer.Argument(help=f"Which file's schema: {', '.join(RECORD_MODELS)}.")
    ] = "trajectory",
) -> None:
    """Print the JSON Schema of a dataset file, for authoring datasets with other tools.

    The schema checks structure and types; rules that span fields (required parameters per
    action type, step numbering, file references) are checked by `agentjudge datasets validate`.
    """
    model = RECORD_MODELS.get(record)
    if model is None:
        console.print(f"unknown record {record!r}; choose one of {', '.join(RECORD_MODELS)}")
        raise typer.Exit(2)
    typer.echo(json.dumps(model.model_json_schema(), indent=2))
