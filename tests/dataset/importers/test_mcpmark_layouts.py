"""The MCPMark importer on the layouts runs are published in, and on what real runs contain.

Run folders are built in a temporary folder from the hand-written fixture runs
(tests/fixtures/mcpmark), moved into the community experiments' layout, AJ-Bench's layout, or
given an empty conversation; expected values are read from those fixture files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.importers.mcpmark import DuplicateIdError, decode_tool_output, import_mcpmark
from dataset.models import ExternalState, SqlSeedState, VerifierRef
from dataset.store import load_dataset

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mcpmark"
BOOKSHOP = FIXTURES / "results/demo-exp/gpt-4.1-mini__postgres/run-1/bookshop__top_customers"
MERGE = FIXTURES / "results/demo-exp/gpt-4.1-mini__filesystem/run-1/notes_vault__merge_todo_lists"
TASKS = FIXTURES / "tasks"


def _copy_run(source: Path, target: Path, **meta_changes: object) -> Path:
    """A copy of a fixture run folder at ``target``, with fields of meta.json replaced."""
    shutil.copytree(source, target)
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    meta.update(meta_changes)
    (target / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return target


def _recorded_user_message(run: Path) -> str:
    messages = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    return str(messages[0]["content"])


def _call_count(run: Path) -> int:
    messages = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    return sum(1 for item in messages if item.get("type") == "function_call")


# --- the community layout: <server>/run-N/<category>__<task>/ ------------------------------------


def test_community_layout_keeps_runs_of_each_server_apart(tmp_path: Path) -> None:
    results = tmp_path / "mcp_servers" / "postgres"
    for server, mcp in (
        ("crystaldba", "postgres"),
        ("supabase", "supabase"),
        ("insforge", "insforge"),
    ):
        _copy_run(BOOKSHOP, results / server / "run-1" / BOOKSHOP.name, mcp=mcp)
    # The server folder's own description, as the community repository keeps it: not a run.
    (results / "supabase" / "meta.json").write_text('{"name": "Supabase MCP"}', encoding="utf-8")

    report = import_mcpmark([tmp_path / "mcp_servers"], tmp_path / "dataset")
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(tmp_path / "dataset")
    assert len(dataset.trajectories) == 3
    # One task: the three servers worked on the same MCPMark task.
    assert list(dataset.tasks) == ["postgres__bookshop__top_customers"]
    meta = json.loads((BOOKSHOP / "meta.json").read_text(encoding="utf-8"))
    servers = {}
    for trajectory in dataset.trajectories.values():
        folder = Path(trajectory.provenance.source_path or "").parent.parent.name
        assert f"__{folder}__" in trajectory.id
        assert trajectory.model == meta["model_name"]
        assert len(trajectory.steps) == _call_count(BOOKSHOP)
        servers[folder] = trajectory.tool_server
    assert servers == {"crystaldba": "postgres-mcp", "supabase": "supabase", "insforge": "insforge"}
    assert report.by_server == {"postgres-mcp": 1, "supabase": 1, "insforge": 1}


def test_mcpmark_layout_names_the_server_in_ids_and_records_it(tmp_path: Path) -> None:
    experiment = tmp_path / "exp"
    _copy_run(BOOKSHOP, experiment / "gpt-4.1-mini__postgres" / "run-1" / BOOKSHOP.name)
    _copy_run(
        BOOKSHOP,
        experiment / "gpt-4.1-mini__supabase" / "run-1" / BOOKSHOP.name,
        mcp="supabase",
    )
    report = import_mcpmark([experiment], tmp_path / "dataset")
    assert sorted(report.trajectories) == [
        "postgres__bookshop__top_customers__gpt-4.1-mini__postgres-mcp__exp__run-1",
        "postgres__bookshop__top_customers__gpt-4.1-mini__supabase__exp__run-1",
    ]
    dataset = load_dataset(tmp_path / "dataset")
    assert {t.tool_server for t in dataset.trajectories.values()} == {"postgres-mcp", "supabase"}


# --- AJ-Bench: .../<service>/.../{success,fail}/<model_run>/messages.json ------------------------


def test_ajbench_layout_takes_the_label_from_its_folder(tmp_path: Path) -> None:
    ds = tmp_path / "src" / "data" / "DS" / "postgres" / "bookshop__top_customers"
    passed = ds / "success" / "gpt-4.1-mini_run1"
    passed.mkdir(parents=True)
    shutil.copy2(BOOKSHOP / "messages.json", passed / "messages.json")  # no meta.json
    # A run with a meta.json that disagrees with its folder: the folder is the published label.
    _copy_run(BOOKSHOP, ds / "fail" / "gpt-4.1-mini_run2")

    report = import_mcpmark([tmp_path / "src"], tmp_path / "dataset")
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(tmp_path / "dataset")
    by_folder = {
        Path(t.provenance.source_path or "").name: t for t in dataset.trajectories.values()
    }
    assert set(by_folder) == {"gpt-4.1-mini_run1", "gpt-4.1-mini_run2"}
    first, second = by_folder["gpt-4.1-mini_run1"], by_folder["gpt-4.1-mini_run2"]
    assert first.label is not None
    assert first.label.value == "PASS"
    assert second.label is not None
    assert second.label.value == "FAIL"
    assert first.id != second.id
    assert first.task_id == second.task_id == "postgres__bookshop__top_customers"
    assert first.tool_server == second.tool_server == "postgres-mcp"
    assert len(first.steps) == _call_count(BOOKSHOP)
    [disagreement] = [p for p in report.problems if "fail folder" in p.message]
    assert disagreement.severity == "warning"
    assert disagreement.file.endswith("gpt-4.1-mini_run2/meta.json")


# --- ids are never written twice -----------------------------------------------------------------


def test_two_runs_with_one_id_stop_the_import_naming_both(tmp_path: Path) -> None:
    first = _copy_run(BOOKSHOP, tmp_path / "a" / "crystaldba" / "run-1" / BOOKSHOP.name)
    second = _copy_run(BOOKSHOP, tmp_path / "b" / "crystaldba" / "run-1" / BOOKSHOP.name)
    destination = tmp_path / "dataset"
    with pytest.raises(DuplicateIdError) as raised:
        import_mcpmark([tmp_path / "a", tmp_path / "b"], destination)
    message = str(raised.value)
    assert str(first) in message
    assert str(second) in message
    assert "crystaldba" in raised.value.clashes[0][0]
    assert not destination.exists()

    result = CliRunner().invoke(
        app,
        ["datasets", "import-mcpmark", str(tmp_path / "a"), str(tmp_path / "b"), str(destination)],
    )
    assert result.exit_code == 1
    assert "would be written twice" in result.output
    assert not destination.exists()


def test_an_id_already_in_the_dataset_from_another_run_is_not_overwritten(tmp_path: Path) -> None:
    first = _copy_run(BOOKSHOP, tmp_path / "a" / "crystaldba" / "run-1" / BOOKSHOP.name)
    second = _copy_run(BOOKSHOP, tmp_path / "b" / "crystaldba" / "run-1" / BOOKSHOP.name)
    destination = tmp_path / "dataset"
    import_mcpmark([tmp_path / "a"], destination)
    [written] = (destination / "trajectories").glob("*.json")
    before = written.read_bytes()
    # The same folder again rewrites its own trajectory; another folder may not.
    import_mcpmark([tmp_path / "a"], destination)
    with pytest.raises(DuplicateIdError) as raised:
        import_mcpmark([tmp_path / "b"], destination)
    assert str(first) in str(raised.value)
    assert str(second) in str(raised.value)
    assert written.read_bytes() == before


# --- runs whose messages.json is [] ------------------------------------------------------------


def _empty_run(target: Path) -> Path:
    """A run that failed before the agent started, as MCPMark records it."""
    run = _copy_run(
        MERGE,
        target,
        execution_result={
            "success": False,
            "error_message": "State Duplication Error",
            "verification_error": None,
            "verification_output": None,
        },
        turn_count=0,
    )
    (run / "messages.json").write_text("[]", encoding="utf-8")
    return run


def test_empty_conversation_is_a_zero_step_trajectory_with_its_failure(tmp_path: Path) -> None:
    results = tmp_path / "exp" / "gpt-4.1-mini__filesystem"
    _empty_run(results / "run-3" / MERGE.name)
    report = import_mcpmark([tmp_path / "exp"], tmp_path / "dataset", tasks_root=TASKS)
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(tmp_path / "dataset")
    [trajectory] = dataset.trajectories.values()
    assert trajectory.steps == []
    assert trajectory.final_response is None
    assert trajectory.stop_reason == "error"
    assert trajectory.label is not None
    assert trajectory.label.value == "FAIL"
    assert trajectory.label.error_message == "State Duplication Error"
    assert trajectory.provenance.details["empty_conversation"] is True
    description = TASKS / "filesystem/standard/notes_vault/merge_todo_lists/description.md"
    task = dataset.tasks[trajectory.task_id]
    assert task.instruction == description.read_text(encoding="utf-8").strip()
    assert len(report.empty) == 1
    [warning] = [p for p in report.problems if "empty conversation" in p.message]
    assert "State Duplication Error" in warning.message


def test_empty_conversation_takes_the_instruction_another_run_recorded(tmp_path: Path) -> None:
    results = tmp_path / "exp" / "gpt-4.1-mini__filesystem"
    # run-0 sorts first: it waits until run-1 has written the task with its user message.
    _empty_run(results / "run-0" / MERGE.name)
    _copy_run(MERGE, results / "run-1" / MERGE.name)
    report = import_mcpmark([tmp_path / "exp"], tmp_path / "dataset")
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(tmp_path / "dataset")
    assert len(dataset.trajectories) == 2
    steps = {t.provenance.details["run"]: len(t.steps) for t in dataset.trajectories.values()}
    assert steps == {"run-0": 0, "run-1": _call_count(MERGE)}
    [task] = dataset.tasks.values()
    # The recorded prompt names the run's sandbox folder, which the import rewrote.
    recorded = _recorded_user_message(MERGE)
    backup = (
        "/home/runner/mcpmark/.mcpmark_backups/backup_filesystem_notes_vault_merge_todo_lists_40211"
    )
    assert backup in recorded
    assert task.instruction == recorded.replace(backup, "${SANDBOX_ROOT}")


def test_empty_conversation_without_any_instruction_is_an_error(tmp_path: Path) -> None:
    _empty_run(tmp_path / "exp" / "gpt-4.1-mini__filesystem" / "run-1" / MERGE.name)
    report = import_mcpmark([tmp_path / "exp"], tmp_path / "dataset")
    [error] = [p for p in report.problems if p.severity == "error"]
    assert "--tasks-root" in error.message
    assert "--skip-empty" in error.message
    assert error.file.endswith("messages.json")
    assert report.trajectories == []


def test_skip_empty_leaves_empty_runs_out_and_lists_them(tmp_path: Path) -> None:
    results = tmp_path / "exp" / "gpt-4.1-mini__filesystem"
    empty = _empty_run(results / "run-0" / MERGE.name)
    _copy_run(MERGE, results / "run-1" / MERGE.name)
    destination = tmp_path / "dataset"
    result = CliRunner().invoke(
        app,
        ["datasets", "import-mcpmark", str(tmp_path / "exp"), str(destination), "--skip-empty"],
    )
    assert result.exit_code == 0, result.output
    assert "0 imported as zero-step trajectories, 1 skipped" in result.output
    dataset = load_dataset(destination)
    assert [t.provenance.details["run"] for t in dataset.trajectories.values()] == ["run-1"]
    report = import_mcpmark([tmp_path / "exp"], tmp_path / "again", skip_empty=True)
    assert report.skipped_empty == [str(empty)]


# --- the error flag as the server meant it -------------------------------------------------------


def _call_tool_result(text: str, *, is_error: bool = False, blocks: int = 1) -> str:
    """A tool output as MCPMark records it: a text item holding a CallToolResult as JSON."""
    result = {
        "meta": None,
        "content": [{"type": "text", "text": text, "annotations": None}] * blocks,
        "isError": is_error,
    }
    return json.dumps({"type": "text", "text": json.dumps(result)})


def test_postgres_mcp_error_text_is_an_error_though_not_flagged() -> None:
    failure = 'Error: relation "function_count" does not exist'
    raw = _call_tool_result(failure)
    assert decode_tool_output(raw, "postgres-mcp") == (failure, True)
    # Other servers flag their failures themselves: their content is data.
    assert decode_tool_output(raw, "supabase") == (failure, False)
    assert decode_tool_output(raw, "filesystem") == (failure, False)
    assert decode_tool_output(raw) == (failure, False)
    # Rows whose values mention an error are a success, and so is a "No results".
    rows = "[{'message': 'Error: disk full', 'id': 1}]"
    assert decode_tool_output(_call_tool_result(rows), "postgres-mcp") == (rows, False)
    assert decode_tool_output(_call_tool_result("No results"), "postgres-mcp") == (
        "No results",
        False,
    )
    # postgres-mcp answers a failure with exactly one text block.
    assert decode_tool_output(_call_tool_result(failure, blocks=2), "postgres-mcp")[1] is False
    # A flagged result is an error whatever the server.
    flagged = _call_tool_result('{"error": {"name": "ZodError"}}', is_error=True)
    assert decode_tool_output(flagged, "supabase")[1] is True


# --- task folders: every file a verifier or a preparation may read, never the answer -------------


def _task_folder(root: Path) -> Path:
    folder = root / "postgres" / "standard" / "bookshop" / "top_customers"
    (folder / "helpers").mkdir(parents=True)
    (folder / "__pycache__").mkdir()
    (folder / "description.md").write_text("List the top customers.\n", encoding="utf-8")
    (folder / "meta.json").write_text('{"difficulty": "L2"}', encoding="utf-8")
    (folder / "verify.py").write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    (folder / "customer_data.pkl").write_bytes(bytes(range(256)))
    (folder / "prepare_environment.py").write_text("print('prepare')\n", encoding="utf-8")
    (folder / "helpers" / "expected.csv").write_text("id\n1\n", encoding="utf-8")
    (folder / "ground_truth.sql").write_text("CREATE VIEW answer AS SELECT 42;\n", encoding="utf-8")
    (folder / "__pycache__" / "verify.cpython-312.pyc").write_bytes(b"\x00")
    return folder


def test_task_files_are_copied_except_the_answer(tmp_path: Path) -> None:
    folder = _task_folder(tmp_path / "tasks")
    report = import_mcpmark(
        [BOOKSHOP.parents[2]], tmp_path / "dataset", tasks_root=tmp_path / "tasks"
    )
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(tmp_path / "dataset")
    task = dataset.tasks["postgres__bookshop__top_customers"]
    target = dataset.task_dir(task.id)
    for name in (
        "verify.py",
        "customer_data.pkl",
        "prepare_environment.py",
        "helpers/expected.csv",
    ):
        assert (target / name).read_bytes() == (folder / name).read_bytes(), name
    assert task.verifier == VerifierRef(path="verify.py")
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == [
        "customer_data.pkl",
        "helpers/expected.csv",
        "prepare_environment.py",
        "task.json",
        "verify.py",
    ]
    answer = (folder / "ground_truth.sql").read_bytes()
    for path in (tmp_path / "dataset").rglob("*"):
        if path.is_file():
            assert answer.strip() not in path.read_bytes(), path
    assert task.metadata["mcpmark_withheld"] == ["ground_truth.sql"]
    assert task.metadata["mcpmark_preparation"] == "prepare_environment.py"
    # No seed was given: MCPMark's case of an empty database that the script prepares.
    assert task.initial_state == SqlSeedState(path=None, preparation="prepare_environment.py")


# --- initial states per task ---------------------------------------------------------------------


def test_a_task_seed_wins_over_its_category_seed_and_a_mapping_over_both(tmp_path: Path) -> None:
    environments = tmp_path / "environments"
    (environments / "bookshop").mkdir(parents=True)
    (environments / "bookshop.sql").write_text("CREATE TABLE category_seed ();\n", encoding="utf-8")
    own = environments / "bookshop" / "top_customers.sql"
    own.write_text("CREATE TABLE task_seed ();\n", encoding="utf-8")
    given = tmp_path / "given.sql"
    given.write_text("CREATE TABLE given_seed ();\n", encoding="utf-8")
    results = BOOKSHOP.parents[2]
    task_id = "postgres__bookshop__top_customers"

    by_lookup = import_mcpmark([results], tmp_path / "a", environments_root=environments)
    assert [p for p in by_lookup.problems if p.severity == "error"] == []
    seed = tmp_path / "a" / "tasks" / task_id / "seed.sql"
    assert seed.read_text(encoding="utf-8") == own.read_text(encoding="utf-8")

    for name in ("bookshop/top_customers", "bookshop__top_customers", task_id):
        destination = tmp_path / f"mapped-{name.replace('/', '-')}"
        import_mcpmark(
            [results], destination, environments_root=environments, environments={name: given}
        )
        task = load_dataset(destination).tasks[task_id]
        assert task.initial_state == SqlSeedState(path="seed.sql")
        copied = destination / "tasks" / task_id / "seed.sql"
        assert copied.read_text(encoding="utf-8") == given.read_text(encoding="utf-8")


def test_a_mapping_to_nothing_is_an_error_and_never_falls_back(tmp_path: Path) -> None:
    environments = tmp_path / "environments"
    environments.mkdir()
    (environments / "bookshop.sql").write_text("CREATE TABLE category_seed ();\n", encoding="utf-8")
    missing = tmp_path / "missing.sql"
    report = import_mcpmark(
        [BOOKSHOP.parents[2]],
        tmp_path / "dataset",
        environments_root=environments,
        environments={"bookshop/top_customers": missing, "bookshop/nothing": missing},
    )
    [error] = [p for p in report.problems if p.severity == "error"]
    assert error.file == str(missing)
    assert "bookshop/top_customers" in error.message
    assert "missing" in error.message
    task = load_dataset(tmp_path / "dataset").tasks["postgres__bookshop__top_customers"]
    assert isinstance(task.initial_state, ExternalState)
    [unused] = [p for p in report.problems if "no imported task" in p.message]
    assert "bookshop/nothing" in unused.message


def test_cli_environment_option_needs_a_task_and_a_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mcpmark",
            str(BOOKSHOP.parents[2]),
            str(tmp_path / "dataset"),
            "--environment",
            "bookshop/top_customers",
        ],
    )
    assert result.exit_code == 2
    assert "expected CATEGORY/TASK=PATH" in result.output
    assert not (tmp_path / "dataset").exists()


def test_an_archive_seed_keeps_the_preparation_and_a_given_state_replaces_both(
    tmp_path: Path,
) -> None:
    tasks_root = tmp_path / "tasks"
    _task_folder(tasks_root)
    environments = tmp_path / "environments"
    environments.mkdir()
    archive = environments / "bookshop.backup"
    archive.write_bytes(b"PGDMP\x01\x0e\x00" + bytes(range(256)))
    results = BOOKSHOP.parents[2]
    task_id = "postgres__bookshop__top_customers"

    import_mcpmark([results], tmp_path / "a", tasks_root=tasks_root, environments_root=environments)
    task = load_dataset(tmp_path / "a").tasks[task_id]
    assert task.initial_state == SqlSeedState(
        path="seed.dump", preparation="prepare_environment.py"
    )
    assert (tmp_path / "a" / "tasks" / task_id / "seed.dump").read_bytes() == archive.read_bytes()

    given = tmp_path / "prepared.sql"
    given.write_text("CREATE TABLE prepared ();\n", encoding="utf-8")
    import_mcpmark(
        [results],
        tmp_path / "b",
        tasks_root=tasks_root,
        environments_root=environments,
        environments={"bookshop/top_customers": given},
    )
    task = load_dataset(tmp_path / "b").tasks[task_id]
    assert task.initial_state == SqlSeedState(path="seed.sql")  # already prepared


def _imported_collation(tmp_path: Path, *options: str) -> tuple[int, str | None]:
    environments = tmp_path / "environments"
    environments.mkdir(exist_ok=True)
    (environments / "bookshop.sql").write_text("CREATE TABLE books ();\n", encoding="utf-8")
    destination = tmp_path / f"dataset{len(list(tmp_path.iterdir()))}"
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mcpmark",
            str(BOOKSHOP.parents[2]),
            str(destination),
            "--environments-root",
            str(environments),
            *options,
        ],
    )
    if result.exit_code != 0:
        return result.exit_code, result.output
    [trajectory] = [
        t for t in load_dataset(destination).trajectories.values() if "bookshop" in t.id
    ]
    state = trajectory.initial_state
    if state is None:
        return 0, None
    assert isinstance(state, SqlSeedState)
    assert state == SqlSeedState(path="seed.sql", collation=state.collation)
    return 0, state.collation


def test_a_run_starts_under_its_servers_collation_unless_told_otherwise(tmp_path: Path) -> None:
    # The fixture is a postgres-mcp run: MCPMark's postgres-mcp databases sorted as en_US.
    assert _imported_collation(tmp_path) == (0, "en_US.utf8")
    assert _imported_collation(tmp_path, "--collation", "postgres-mcp=C") == (0, "C")
    assert _imported_collation(tmp_path, "--collation", "und-x-icu") == (0, "und-x-icu")
    assert _imported_collation(tmp_path, "--collation", "postgres-mcp=default") == (0, None)
    code, output = _imported_collation(tmp_path, "--collation", "=C")
    assert code == 2
    assert "expected [SERVER=]COLLATION" in str(output)
