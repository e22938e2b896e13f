"""The MCPMark importer on real runs: ``../shared/mcpmark-sample`` (15 runs of claude-sonnet-4.5,
five Postgres tasks through three server implementations, MCPMark's task folders and Chinook).

The sample is outside the repository; every test here skips, saying so, when it is absent (and
fails in CI, ``tests.shared_data``). All
expectations are read from the sample's own files (its messages.json, meta.json and task folders).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.models import SqlSeedState, Trajectory
from dataset.store import Dataset, load_dataset
from tests.shared_data import SHARED, needs_shared

SAMPLE = SHARED / "mcpmark-sample"
RUNS = SAMPLE / "runs"
TASKS = SAMPLE / "tasks"
ENVIRONMENTS = SAMPLE / "environments"

pytestmark = needs_shared(RUNS, "the real MCPMark sample's runs (these tests import it)")


@dataclass
class Imported:
    root: Path
    output: str
    dataset: Dataset


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """The whole sample imported by the command line, with its tasks and environments."""
    root = tmp_path_factory.mktemp("sample") / "mcpmark-sample"
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mcpmark",
            str(RUNS),
            str(root),
            "--tasks-root",
            str(TASKS),
            "--environments-root",
            str(ENVIRONMENTS),
        ],
    )
    assert result.exit_code == 0, result.output
    return Imported(root, result.output, load_dataset(root))


def _run_folders() -> list[Path]:
    return sorted(meta.parent for meta in RUNS.glob("*/run-*/*/meta.json"))


def _server_folder(trajectory: Trajectory) -> str:
    """The runs/<server>/ folder the trajectory was read from."""
    source = Path(trajectory.provenance.source_path or "")
    return source.relative_to(RUNS).parts[0]


def _recorded_outputs(run: Path) -> list[tuple[str, bool]]:
    """Each call's recorded output text and isError flag, in call order, decoded by hand:
    ``output`` is a text item whose text is a CallToolResult as JSON, or plain text."""
    messages = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    outputs = {
        item["call_id"]: json.loads(item["output"])["text"]
        for item in messages
        if item.get("type") == "function_call_output"
    }
    decoded: list[tuple[str, bool]] = []
    for item in messages:
        if item.get("type") != "function_call":
            continue
        text = outputs[item["call_id"]]
        try:
            result = json.loads(text)
        except json.JSONDecodeError:
            decoded.append((text, False))
            continue
        content = "\n".join(block["text"] for block in result["content"])
        decoded.append((content, bool(result["isError"])))
    return decoded


def test_every_run_is_imported_once_under_an_id_naming_its_server(imported: Imported) -> None:
    runs = _run_folders()
    assert len(runs) == 15
    trajectories = imported.dataset.trajectories
    assert len(trajectories) == len(runs)
    assert sorted(Path(t.provenance.source_path or "") for t in trajectories.values()) == runs
    for trajectory_id, trajectory in trajectories.items():
        assert f"__{_server_folder(trajectory)}__" in trajectory_id
    servers = Counter(_server_folder(t) for t in trajectories.values())
    assert servers == Counter(run.relative_to(RUNS).parts[0] for run in runs)
    # Three servers, one task each time: the five MCPMark tasks are shared.
    assert len(imported.dataset.tasks) == len({run.name for run in runs}) == 5
    # The command line says how many runs of each server it imported.
    per_server = Counter(t.tool_server for t in trajectories.values())
    for server, count in per_server.items():
        assert f"{server} {count}" in imported.output


def test_each_trajectory_records_the_server_its_meta_names(imported: Imported) -> None:
    # meta.json names supabase and insforge by name, and postgres-mcp by MCPMark's postgres
    # service (sample README).
    expected_server = {"postgres": "postgres-mcp", "supabase": "supabase", "insforge": "insforge"}
    for trajectory in imported.dataset.trajectories.values():
        source = Path(trajectory.provenance.source_path or "")
        meta = json.loads((source / "meta.json").read_text(encoding="utf-8"))
        assert trajectory.tool_server == expected_server[meta["mcp"]]
        assert trajectory.model == meta["model_name"]
        assert trajectory.label is not None
        assert (trajectory.label.value == "PASS") is meta["execution_result"]["success"]
        assert trajectory.turn_count == meta["turn_count"]


def test_steps_are_errors_exactly_where_the_recorded_result_says_so(imported: Imported) -> None:
    flagged: Counter[str] = Counter()
    for trajectory in imported.dataset.trajectories.values():
        recorded = _recorded_outputs(Path(trajectory.provenance.source_path or ""))
        assert len(trajectory.steps) == len(recorded)
        for step, (text, is_error) in zip(trajectory.steps, recorded, strict=True):
            assert step.observation is not None
            assert step.observation.text == text
            says_error = is_error or text.startswith("Error")
            assert step.is_error is says_error, (trajectory.id, step.index, text[:80])
            flagged[_server_folder(trajectory)] += step.is_error
    # postgres-mcp never sets isError: every one of its errors is an "Error: ..." text.
    assert flagged["crystaldba"] > 0


def test_task_files_are_bundled_and_the_answer_never_is(imported: Imported) -> None:
    answers: list[bytes] = []
    for folder in sorted(path.parent for path in TASKS.glob("postgres/standard/*/*/verify.py")):
        task_id = f"postgres__{folder.parent.name}__{folder.name}"
        bundled = imported.dataset.task_dir(task_id)
        for path in folder.iterdir():
            if path.name.startswith("ground_truth"):
                answers.append(path.read_bytes())
                assert not (bundled / path.name).exists()
            elif path.name not in {"description.md", "meta.json"}:
                assert (bundled / path.name).read_bytes() == path.read_bytes(), path
    assert answers, "the sample's security tasks ship ground_truth.sql"
    for path in imported.root.rglob("*"):
        assert not path.name.startswith("ground_truth"), path
        if path.is_file():
            content = path.read_bytes()
            for answer in answers:
                assert answer.strip() not in content, path


def test_chinook_tasks_start_from_the_chinook_seed(imported: Imported) -> None:
    chinook = (ENVIRONMENTS / "chinook.sql").read_bytes()
    for task_id, task in imported.dataset.tasks.items():
        if task.metadata["mcpmark_category"] == "chinook":
            assert task.initial_state == SqlSeedState(path="seed.sql")
            assert (imported.dataset.task_dir(task_id) / "seed.sql").read_bytes() == chinook
        else:  # security tasks: an empty database that their prepare_environment.py builds
            assert task.initial_state == SqlSeedState(
                path=None, preparation="prepare_environment.py"
            )
            name = str(task.metadata["mcpmark_task"])
            script = TASKS / "postgres" / "standard" / "security" / name
            copied = imported.dataset.task_dir(task_id) / "prepare_environment.py"
            assert copied.read_bytes() == (script / "prepare_environment.py").read_bytes()


def test_runs_start_under_their_servers_collation_where_the_task_allows(
    imported: Imported,
) -> None:
    # What each server's database sorted as, read off the sample (see
    # tests/mcp_servers/sql/mcpmark_sample.py): crystaldba and insforge as en_US, supabase as C.
    recorded = {"crystaldba": "en_US.utf8", "insforge": "en_US.utf8", "supabase": "C"}
    for trajectory in imported.dataset.trajectories.values():
        task = imported.dataset.tasks[trajectory.task_id]
        server = str(trajectory.provenance.details["server_folder"])
        state = trajectory.initial_state
        # Supabase's runs also name its standard roles (see the test below); set them aside.
        if state is not None and server == "supabase":
            assert isinstance(state, SqlSeedState)
            state = state.model_copy(update={"server_roles": None})
        if task.metadata["mcpmark_category"] == "chinook":
            assert state == SqlSeedState(path="seed.sql", collation=recorded[server])
        elif server == "supabase":
            assert state == task.initial_state
        else:  # one database build at a time for a preparation: the task's, with a warning
            assert state is None
    warned = [line for line in imported.output.splitlines() if "builds one database" in line]
    assert len(warned) == 6  # the security runs of the three servers, two tasks


def test_the_imported_sample_validates(imported: Imported) -> None:
    result = CliRunner().invoke(app, ["datasets", "validate", "--json", str(imported.root)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["valid"] is True
    assert payload["trajectories"] == 15


def test_supabase_runs_start_where_supabases_standard_roles_exist(imported: Imported) -> None:
    """Runs recorded on Supabase name its built-in roles; their replays must have them. The
    server of each run is read from its meta.json."""
    for trajectory in imported.dataset.trajectories.values():
        folder = Path(trajectory.provenance.source_path or "")
        server = json.loads((folder / "meta.json").read_text("utf-8")).get("mcp")
        task = imported.dataset.tasks[trajectory.task_id]
        state = trajectory.initial_state or task.initial_state
        assert isinstance(state, SqlSeedState)
        if server == "supabase":
            assert state.server_roles == ["anon", "authenticated", "service_role"]
            # Everything else of the start is the task's (or the server's collation).
            assert state.preparation == getattr(task.initial_state, "preparation", None)
        else:
            assert not state.server_roles


def test_a_task_folders_link_to_a_file_elsewhere_is_not_copied(tmp_path: Path) -> None:
    import shutil

    from dataset.importers.mcpmark import import_mcpmark

    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS, tasks)
    secret = tmp_path / "host-secret.txt"
    secret.write_text("not the task's", "utf-8")
    folder = tasks / "postgres" / "standard" / "chinook" / "customer_data_migration"
    (folder / "notes.txt").symlink_to(secret)
    (folder / "inside.txt").write_text("the task's own", "utf-8")
    (folder / "alias.txt").symlink_to(folder / "inside.txt")  # a link inside is fine
    out = tmp_path / "dataset"
    report = import_mcpmark(
        [RUNS / "crystaldba", RUNS / "supabase"],
        out,
        tasks_root=tasks,
        environments_root=ENVIRONMENTS,
    )
    warned = [p for p in report.problems if "link leading out of the task folder" in p.message]
    assert len(warned) == 1
    assert warned[0].file.endswith("notes.txt")
    copied = {path.name: path for path in out.rglob("*.txt")}
    assert "notes.txt" not in copied
    assert copied["alias.txt"].read_text("utf-8") == "the task's own"
    assert all(path.read_text("utf-8") != "not the task's" for path in copied.values())
