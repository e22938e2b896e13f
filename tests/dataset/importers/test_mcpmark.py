"""Tests of the MCPMark importer against hand-written run folders in tests/fixtures/mcpmark.

Every expected value below is written out from the fixture files themselves (what the agent sent
and received), never taken from the importer's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.actions import ToolCallAction
from dataset.importers.mcpmark import (
    ImportReport,
    decode_tool_output,
    find_run_dirs,
    import_mcpmark,
)
from dataset.models import (
    SANDBOX_ROOT_PLACEHOLDER,
    AgentUsage,
    DirectoryTreeState,
    ExternalState,
    SqlSeedState,
    Step,
    VerifierRef,
)
from dataset.store import Dataset, load_dataset

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mcpmark"
RESULTS = FIXTURES / "results"
BROKEN = FIXTURES / "broken"
TASKS = FIXTURES / "tasks"
ENVIRONMENTS = FIXTURES / "environments"

S = "${SANDBOX_ROOT}"
BACKUP_RUN_1 = (
    "/home/runner/mcpmark/.mcpmark_backups/backup_filesystem_notes_vault_merge_todo_lists_40211"
)
BACKUP_RUN_2 = (
    "/home/runner/mcpmark/.mcpmark_backups/backup_filesystem_notes_vault_merge_todo_lists_40377"
)
BACKUP_DRAFTS = "/tmp/backup_filesystem_notes_vault_rename_drafts_51902"

MERGE_TASK = "filesystem__notes_vault__merge_todo_lists"
DRAFTS_TASK = "filesystem__notes_vault__rename_drafts"
BOOKSHOP_TASK = "postgres__bookshop__top_customers"
PAYROLL_TASK = "postgres__payroll__raise_salaries"

MERGE_RUN_1 = "filesystem__notes_vault__merge_todo_lists__gpt-4.1-mini__demo-exp__run-1"
MERGE_RUN_2 = "filesystem__notes_vault__merge_todo_lists__gpt-4.1-mini__demo-exp__run-2"
DRAFTS_RUN = "filesystem__notes_vault__rename_drafts__claude-sonnet-4__demo-exp__run-1"
BOOKSHOP_RUN = "postgres__bookshop__top_customers__gpt-4.1-mini__postgres-mcp__demo-exp__run-1"
PAYROLL_RUN = "postgres__payroll__raise_salaries__claude-sonnet-4__postgres-mcp__demo-exp__run-1"

MERGED_TODO = "- buy milk\n- call the plumber\n- send the weekly report\n- book the meeting room\n"
TOP_SQL = (
    "SELECT c.customer_id, c.name, SUM(o.amount) AS total_spent FROM customers c "
    "JOIN orders o USING (customer_id) GROUP BY c.customer_id, c.name "
    "ORDER BY total_spent DESC LIMIT 3;"
)
TABLES_OUTPUT = (
    "[{'schema': 'public', 'name': 'departments', 'type': 'BASE TABLE'}, "
    "{'schema': 'public', 'name': 'employees', 'type': 'BASE TABLE'}]"
)


@dataclass(frozen=True)
class ExpectedStep:
    name: str
    arguments: dict[str, object]
    call_id: str
    output: str | None
    """The decoded tool output; None when the run recorded no output for the call."""
    is_error: bool = False
    reasoning: str | None = None


@dataclass(frozen=True)
class ExpectedTrajectory:
    task_id: str
    model: str
    run: str
    steps: list[ExpectedStep]
    final_response: str | None
    label: str
    verifier_output: str
    error_message: str | None
    stop_reason: str
    turn_count: int
    usage: AgentUsage
    started_at: datetime
    ended_at: datetime


EXPECTED: dict[str, ExpectedTrajectory] = {
    MERGE_RUN_1: ExpectedTrajectory(
        task_id=MERGE_TASK,
        model="gpt-4.1-mini",
        run="run-1",
        steps=[
            ExpectedStep(
                "list_directory",
                {"path": S},
                "call_A1",
                "[FILE] todo_home.txt\n[FILE] todo_work.txt\n[DIR] drafts",
                reasoning="Let me look at what the vault contains.",
            ),
            # Two parallel calls whose outputs were recorded in the opposite order.
            ExpectedStep(
                "read_text_file",
                {"path": f"{S}/todo_home.txt"},
                "call_A2",
                "- buy milk\n- call the plumber\n",
                reasoning="Both lists are there. I will read them together.",
            ),
            ExpectedStep(
                "read_text_file",
                {"path": f"{S}/todo_work.txt"},
                "call_A3",
                "- send the weekly report\n- book the meeting room\n",
            ),
            ExpectedStep(
                "write_file",
                {"path": f"{S}/todo_all.txt", "content": MERGED_TODO},
                "call_A4",
                f"Successfully wrote to {S}/todo_all.txt",
            ),
        ],
        final_response=(
            f"I merged both lists into {S}/todo_all.txt: 2 home items followed by 2 work items."
        ),
        label="PASS",
        verifier_output=f"Checking {S}/todo_all.txt\nall 4 items present in order\nPASS",
        error_message=None,
        stop_reason="completed",
        turn_count=4,
        usage=AgentUsage(
            input_tokens=5210, output_tokens=388, total_tokens=5598, reasoning_tokens=0
        ),
        started_at=datetime(2025, 8, 21, 9, 14, 3, 120000),
        ended_at=datetime(2025, 8, 21, 9, 14, 31, 905000),
    ),
    MERGE_RUN_2: ExpectedTrajectory(
        task_id=MERGE_TASK,
        model="gpt-4.1-mini",
        run="run-2",
        steps=[
            ExpectedStep(
                "search_files",
                {"path": S, "pattern": "todo_*.txt"},
                "call_B1",
                f"{S}/todo_home.txt\n{S}/todo_work.txt",
            ),
            ExpectedStep(
                "read_text_file",
                {"path": f"{S}/todo_home.txt"},
                "call_B2",
                "- buy milk\n- call the plumber\n",
            ),
            # A failed call recorded as plain "Error: ..." text, not a CallToolResult.
            ExpectedStep(
                "read_text_file",
                {"path": f"{S}/todo_work.md"},
                "call_B3",
                f"Error: ENOENT: no such file or directory, open '{S}/todo_work.md'",
                is_error=True,
                reasoning="Now the work list.",
            ),
            ExpectedStep(
                "write_file",
                {"path": f"{S}/todo_all.txt", "content": "- buy milk\n- call the plumber\n"},
                "call_B4",
                f"Successfully wrote to {S}/todo_all.txt",
            ),
        ],
        final_response=(
            "The work list could not be read, so todo_all.txt holds the home items only."
        ),
        label="FAIL",
        verifier_output="FAIL: todo_all.txt is missing '- send the weekly report'",
        error_message=None,
        stop_reason="completed",
        turn_count=5,
        usage=AgentUsage(
            input_tokens=4022, output_tokens=301, total_tokens=4323, reasoning_tokens=64
        ),
        started_at=datetime(2025, 8, 21, 10, 2, 40),
        ended_at=datetime(2025, 8, 21, 10, 3, 5, 500000),
    ),
    DRAFTS_RUN: ExpectedTrajectory(
        task_id=DRAFTS_TASK,
        model="claude-sonnet-4",
        run="run-1",
        steps=[
            ExpectedStep(
                "list_directory",
                {"path": f"{S}/drafts"},
                "call_C1",
                "[FILE] idea.md\n[FILE] plan.md",
                reasoning="I'll start by listing the drafts folder.",
            ),
            ExpectedStep(
                "move_file",
                {"source": f"{S}/drafts/idea.md", "destination": f"{S}/drafts/draft-idea.md"},
                "call_C2",
                f"Successfully moved {S}/drafts/idea.md to {S}/drafts/draft-idea.md",
            ),
            # isError: true inside the double-encoded CallToolResult.
            ExpectedStep(
                "move_file",
                {"source": f"{S}/drafts/plan.md", "destination": f"{S}/drafts/draft-idea.md"},
                "call_C3",
                f"Error: Destination already exists: {S}/drafts/draft-idea.md",
                is_error=True,
            ),
            ExpectedStep(
                "list_directory",
                {"path": f"{S}/drafts"},
                "call_C4",
                "[FILE] draft-idea.md\n[FILE] plan.md",
                reasoning="The second move collided with the first. Checking the folder again.",
            ),
            # The run hit its turn cap during this call: no output was recorded.
            ExpectedStep(
                "move_file",
                {"source": f"{S}/drafts/plan.md", "destination": f"{S}/drafts/draft-plan.md"},
                "call_C5",
                None,
            ),
        ],
        final_response=None,
        label="FAIL",
        verifier_output="FAIL: drafts/plan.md was not renamed",
        error_message="Max turns (100) exceeded",
        stop_reason="turn_limit",
        turn_count=100,
        usage=AgentUsage(
            input_tokens=210344, output_tokens=9120, total_tokens=219464, reasoning_tokens=2048
        ),
        started_at=datetime(2025, 8, 22, 14, 0, 0),
        ended_at=datetime(2025, 8, 22, 14, 21, 47),
    ),
    BOOKSHOP_RUN: ExpectedTrajectory(
        task_id=BOOKSHOP_TASK,
        model="gpt-4.1-mini",
        run="run-1",
        steps=[
            ExpectedStep(
                "list_schemas",
                {},
                "call_D1",
                "[{'schema_name': 'public', 'schema_owner': 'postgres', "
                "'schema_type': 'User Schema'}]",
            ),
            ExpectedStep(
                "list_objects",
                {"schema_name": "public", "object_type": "table"},
                "call_D2",
                "[{'schema': 'public', 'name': 'customers', 'type': 'BASE TABLE'}, "
                "{'schema': 'public', 'name': 'orders', 'type': 'BASE TABLE'}]",
            ),
            ExpectedStep(
                "get_object_details",
                {"schema_name": "public", "object_name": "orders", "object_type": "table"},
                "call_D3",
                "{'basic': {'schema': 'public', 'name': 'orders', 'type': 'table'}, "
                "'columns': [{'column': 'order_id', 'data_type': 'integer'}, "
                "{'column': 'customer_id', 'data_type': 'integer'}, "
                "{'column': 'amount', 'data_type': 'numeric'}]}",
            ),
            ExpectedStep(
                "execute_sql",
                {"sql": TOP_SQL},
                "call_D4",
                "[{'customer_id': 2, 'name': 'Bea', 'total_spent': Decimal('87.50')}, "
                "{'customer_id': 1, 'name': 'Ann', 'total_spent': Decimal('60.00')}, "
                "{'customer_id': 3, 'name': 'Cal', 'total_spent': Decimal('42.25')}]",
                reasoning=(
                    "orders has customer_id and amount; customers has the name. "
                    "Checking the totals before creating the view."
                ),
            ),
            ExpectedStep(
                "execute_sql",
                {"sql": f"CREATE VIEW public.top_customers AS {TOP_SQL}"},
                "call_D5",
                "No results",
            ),
        ],
        final_response="Created the view public.top_customers; it returns Bea, Ann and Cal.",
        label="PASS",
        verifier_output="top_customers returns the expected 3 rows\nPASS",
        error_message=None,
        stop_reason="completed",
        turn_count=5,
        usage=AgentUsage(
            input_tokens=7311, output_tokens=512, total_tokens=7823, reasoning_tokens=0
        ),
        started_at=datetime(2025, 8, 23, 8, 30, 0, 250000),
        ended_at=datetime(2025, 8, 23, 8, 30, 41, 750000),
    ),
    PAYROLL_RUN: ExpectedTrajectory(
        task_id=PAYROLL_TASK,
        model="claude-sonnet-4",
        run="run-1",
        steps=[
            ExpectedStep(
                "get_object_details",
                {"schema_name": "public", "object_name": "employee", "object_type": "table"},
                "call_E1",
                'Error: relation "public.employee" does not exist',
                is_error=True,
                reasoning="I'll inspect the employees table first.",
            ),
            ExpectedStep(
                "list_objects",
                {"schema_name": "public", "object_type": "table"},
                "call_E2",
                TABLES_OUTPUT,
            ),
            ExpectedStep(
                "execute_sql",
                {
                    "sql": "UPDATE employees SET salary = salary * 1.05 "
                    "WHERE department = 'support';"
                },
                "call_E3",
                'Error: column "department" does not exist',
                is_error=True,
            ),
            ExpectedStep(
                "execute_sql",
                {
                    "sql": "UPDATE employees e SET salary = ROUND(e.salary * 1.05, 2) "
                    "FROM departments d WHERE d.id = e.department_id AND d.name = 'Support';"
                },
                "call_E4",
                "No results",
                reasoning="Salaries are linked through department_id; retrying with a join.",
            ),
        ],
        final_response="Done: support salaries are 5% higher.",
        label="FAIL",
        verifier_output="expected 2 raised salaries, found 0\nFAIL",
        error_message="Verification failed",
        stop_reason="completed",
        turn_count=6,
        usage=AgentUsage(
            input_tokens=9876, output_tokens=640, total_tokens=10516, reasoning_tokens=300
        ),
        started_at=datetime(2025, 8, 23, 11, 5, 10),
        ended_at=datetime(2025, 8, 23, 11, 6, 2),
    ),
}

MERGE_PROMPT = (
    "Merge the two todo lists in the notes vault into a single file.\n\n"
    f"The vault is at {S}. Read todo_home.txt and todo_work.txt and write every item, home "
    'items first, to todo_all.txt in the same folder. Keep the "- " bullet of each line.'
)
DRAFTS_PROMPT = (
    f'In {S}/drafts, rename every .md draft so that its name starts with "draft-"; '
    "for example idea.md becomes draft-idea.md."
)
BOOKSHOP_PROMPT = (
    "In the bookshop database, create a view public.top_customers listing the 3 customers "
    "with the highest total order amount (columns customer_id, name, total_spent), "
    "highest first."
)
PAYROLL_PROMPT = (
    "Give every employee of the 'support' department a 5% raise in the payroll database, "
    "rounding salaries to whole cents."
)


@dataclass
class Imported:
    root: Path
    report: ImportReport
    dataset: Dataset


def _import(destination: Path, *, bundled: bool, sources: list[Path] | None = None) -> Imported:
    report = import_mcpmark(
        sources or [RESULTS],
        destination,
        tasks_root=TASKS if bundled else None,
        environments_root=ENVIRONMENTS if bundled else None,
    )
    return Imported(destination, report, load_dataset(destination))


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """The good runs imported with --tasks-root and --environments-root."""
    return _import(tmp_path_factory.mktemp("bundled") / "mcpmark", bundled=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """The good runs imported from the results folder alone."""
    return _import(tmp_path_factory.mktemp("plain") / "mcpmark", bundled=False)


def _tool_call(step: Step) -> ToolCallAction:
    assert isinstance(step.action, ToolCallAction)
    return step.action


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# --- run discovery and the whole import -------------------------------------------------------


def test_placeholder_is_the_one_the_tests_spell_out() -> None:
    assert SANDBOX_ROOT_PLACEHOLDER == S


def test_find_run_dirs_lists_every_run_folder_once() -> None:
    found = find_run_dirs(RESULTS, RESULTS / "demo-exp" / "gpt-4.1-mini__postgres")
    assert [path.relative_to(RESULTS).as_posix() for path in found] == [
        "demo-exp/claude-sonnet-4__filesystem/run-1/notes_vault__rename_drafts",
        "demo-exp/claude-sonnet-4__postgres/run-1/payroll__raise_salaries",
        "demo-exp/gpt-4.1-mini__filesystem/run-1/notes_vault__merge_todo_lists",
        "demo-exp/gpt-4.1-mini__filesystem/run-2/notes_vault__merge_todo_lists",
        "demo-exp/gpt-4.1-mini__postgres/run-1/bookshop__top_customers",
    ]


@pytest.mark.parametrize("imported_name", ["bundled", "plain"])
def test_import_writes_every_run_and_validates_cleanly(
    imported_name: str, request: pytest.FixtureRequest
) -> None:
    imported: Imported = request.getfixturevalue(imported_name)
    assert sorted(imported.report.trajectories) == sorted(EXPECTED)
    assert sorted(imported.report.tasks) == sorted(
        [MERGE_TASK, DRAFTS_TASK, BOOKSHOP_TASK, PAYROLL_TASK]
    )
    assert [p for p in imported.report.problems if p.severity == "error"] == []
    assert imported.dataset.errors == []
    assert imported.dataset.manifest is not None
    assert imported.dataset.manifest.generator == "agentjudge datasets import-mcpmark"
    assert sorted(imported.dataset.trajectories) == sorted(EXPECTED)
    assert sorted(imported.dataset.tasks) == sorted(imported.report.tasks)
    written = sorted(p.stem for p in (imported.root / "trajectories").glob("*.json"))
    assert written == sorted(EXPECTED)


def test_run_without_output_for_its_last_call_is_reported_as_a_warning(
    bundled: Imported,
) -> None:
    [problem] = [p for p in bundled.report.problems if "no recorded output" in p.message]
    assert problem.severity == "warning"
    assert problem.file.endswith(
        "claude-sonnet-4__filesystem/run-1/notes_vault__rename_drafts/messages.json"
    )
    assert problem.field == "[11]"
    assert "call_C5" in problem.message


# --- each trajectory, field by field ------------------------------------------------------------


@pytest.mark.parametrize("trajectory_id", sorted(EXPECTED))
def test_trajectory_matches_its_recording(bundled: Imported, trajectory_id: str) -> None:
    expected = EXPECTED[trajectory_id]
    trajectory = bundled.dataset.trajectories[trajectory_id]

    assert trajectory.task_id == expected.task_id
    assert trajectory.model == expected.model
    assert trajectory.agent == expected.model
    assert [step.index for step in trajectory.steps] == list(range(1, len(expected.steps) + 1))
    assert len(trajectory.steps) == len(expected.steps)
    for step, want in zip(trajectory.steps, expected.steps, strict=True):
        action = _tool_call(step)
        where = f"{trajectory_id} step {step.index}"
        assert action.name == want.name, where
        assert action.arguments == want.arguments, where
        assert action.call_id == want.call_id, where
        if want.output is None:
            assert step.observation is None, where
        else:
            assert step.observation is not None, where
            assert step.observation.text == want.output, where
        assert step.is_error is want.is_error, where
        assert step.reasoning == want.reasoning, where

    assert trajectory.final_response == expected.final_response
    assert trajectory.label is not None
    assert trajectory.label.value == expected.label
    assert trajectory.label.source == "verifier"
    assert trajectory.label.verifier_output == expected.verifier_output
    assert trajectory.label.error_message == expected.error_message
    assert trajectory.stop_reason == expected.stop_reason
    assert trajectory.turn_count == expected.turn_count
    assert trajectory.usage == expected.usage
    assert trajectory.started_at == expected.started_at
    assert trajectory.ended_at == expected.ended_at

    provenance = trajectory.provenance
    assert provenance.source_format == "mcpmark"
    assert provenance.source_path is not None
    # The run folder is <category>__<task>, the task id <service>__<category>__<task>.
    assert expected.task_id.endswith(Path(provenance.source_path).name)
    assert provenance.details["experiment"] == "demo-exp"
    assert provenance.details["run"] == expected.run


def test_every_tool_call_of_the_fixtures_is_imported(bundled: Imported) -> None:
    """Counts function_call items straight from the fixture files, so no call can go missing."""
    recorded: list[str] = []
    for messages in RESULTS.rglob("messages.json"):
        items = json.loads(messages.read_text(encoding="utf-8"))
        recorded += [item["call_id"] for item in items if item.get("type") == "function_call"]
    imported_calls = sorted(
        _tool_call(step).call_id or ""
        for trajectory in bundled.dataset.trajectories.values()
        for step in trajectory.steps
    )
    assert imported_calls == sorted(recorded)
    assert len(imported_calls) == 22


def test_labels_cover_pass_and_fail(bundled: Imported) -> None:
    labels = {
        trajectory_id: trajectory.label.value if trajectory.label else None
        for trajectory_id, trajectory in bundled.dataset.trajectories.items()
    }
    assert labels == {
        MERGE_RUN_1: "PASS",
        MERGE_RUN_2: "FAIL",
        DRAFTS_RUN: "FAIL",
        BOOKSHOP_RUN: "PASS",
        PAYROLL_RUN: "FAIL",
    }


# --- sandbox path rewriting ---------------------------------------------------------------------


def test_no_recorded_sandbox_path_is_left_in_the_dataset(bundled: Imported) -> None:
    files = [path for path in bundled.root.rglob("*") if path.is_file()]
    assert len(files) > 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.parent.name == "trajectories":
            payload = json.loads(text)
            # Provenance deliberately records which roots were rewritten; nothing else may.
            payload["provenance"]["details"].pop("rewritten_sandbox_prefixes", None)
            text = json.dumps(payload, ensure_ascii=False)
        assert "backup_filesystem_" not in text, path
        assert "/home/runner/mcpmark" not in text, path


@pytest.mark.parametrize(
    ("trajectory_id", "prefix"),
    [
        pytest.param(MERGE_RUN_1, BACKUP_RUN_1, id="merge-run-1"),
        pytest.param(MERGE_RUN_2, BACKUP_RUN_2, id="merge-run-2"),
        pytest.param(DRAFTS_RUN, BACKUP_DRAFTS, id="drafts"),
    ],
)
def test_exactly_the_run_sandbox_root_is_rewritten(
    bundled: Imported, trajectory_id: str, prefix: str
) -> None:
    trajectory = bundled.dataset.trajectories[trajectory_id]
    # One root per run: punctuation after a path in prose ("at <root>. Read") is no part of it.
    assert trajectory.provenance.details["rewritten_sandbox_prefixes"] == [prefix]
    raw = (bundled.root / "trajectories" / f"{trajectory_id}.json").read_text(encoding="utf-8")
    assert f"{S}/" in raw


def test_postgres_runs_have_nothing_to_rewrite(bundled: Imported) -> None:
    for trajectory_id in (BOOKSHOP_RUN, PAYROLL_RUN):
        trajectory = bundled.dataset.trajectories[trajectory_id]
        assert "rewritten_sandbox_prefixes" not in trajectory.provenance.details
        assert S not in json.dumps(trajectory.model_dump(mode="json"))


def test_recorded_instructions_are_rewritten_without_eating_punctuation(plain: Imported) -> None:
    tasks = plain.dataset.tasks
    assert tasks[MERGE_TASK].instruction == MERGE_PROMPT
    assert tasks[DRAFTS_TASK].instruction == DRAFTS_PROMPT
    assert tasks[BOOKSHOP_TASK].instruction == BOOKSHOP_PROMPT
    assert tasks[PAYROLL_TASK].instruction == PAYROLL_PROMPT
    # run-1 and run-2 had different sandbox roots; once rewritten their prompts agree.
    assert not [p for p in plain.report.problems if "instruction differs" in p.message]


# --- tasks without --tasks-root / --environments-root ------------------------------------------


def test_plain_import_has_external_states_and_no_verifiers(plain: Imported) -> None:
    for task in plain.dataset.tasks.values():
        assert task.domain == "ds"
        assert isinstance(task.initial_state, ExternalState)
        category = task.metadata["mcpmark_category"]
        assert isinstance(category, str)
        assert f"environment {category!r}" in task.initial_state.reference
        assert task.verifier is None
        assert sorted(p.name for p in plain.dataset.task_dir(task.id).iterdir()) == ["task.json"]
    assert plain.dataset.tasks[MERGE_TASK].subdomain == "filesystem"
    assert plain.dataset.tasks[PAYROLL_TASK].subdomain == "postgres"
    assert plain.dataset.tasks[MERGE_TASK].metadata == {
        "source": "mcpmark",
        "mcpmark_service": "filesystem",
        "mcpmark_category": "notes_vault",
        "mcpmark_task": "merge_todo_lists",
    }


# --- --tasks-root and --environments-root bundling ---------------------------------------------


def test_tasks_root_bundles_description_and_verifier(bundled: Imported) -> None:
    task = bundled.dataset.tasks[MERGE_TASK]
    standard = TASKS / "filesystem" / "standard" / "notes_vault" / "merge_todo_lists"
    assert task.instruction.startswith("# Merge the todo lists\n\nThe notes vault holds two")
    assert task.instruction == (standard / "description.md").read_text(encoding="utf-8").strip()
    assert task.verifier == VerifierRef(path="verify.py")
    copied = bundled.dataset.task_dir(MERGE_TASK) / "verify.py"
    assert copied.read_bytes() == (standard / "verify.py").read_bytes()
    mcpmark_meta = task.metadata["mcpmark_meta"]
    assert isinstance(mcpmark_meta, dict)
    assert mcpmark_meta["difficulty"] == "L1"
    # The same task also exists in the "easy" suite; the standard one wins, with a warning.
    [suites] = {p.message for p in bundled.report.problems if "several suites" in p.message}
    assert "standard" in suites


def test_tasks_missing_from_tasks_root_keep_the_recorded_prompt(bundled: Imported) -> None:
    assert bundled.dataset.tasks[DRAFTS_TASK].instruction == DRAFTS_PROMPT
    assert bundled.dataset.tasks[DRAFTS_TASK].verifier is None
    assert bundled.dataset.tasks[BOOKSHOP_TASK].instruction == BOOKSHOP_PROMPT
    missing = sorted(
        p.message.split(";")[0] for p in bundled.report.problems if "no task folder" in p.message
    )
    assert missing == [
        "no task folder for filesystem notes_vault/rename_drafts",
        "no task folder for postgres bookshop/top_customers",
        "no task folder for postgres payroll/raise_salaries",
    ]


def test_environments_root_bundles_directory_tree(bundled: Imported) -> None:
    for task_id in (MERGE_TASK, DRAFTS_TASK):
        task = bundled.dataset.tasks[task_id]
        assert task.initial_state == DirectoryTreeState(path="initial")
        initial = bundled.dataset.task_dir(task_id) / "initial"
        assert _snapshot(initial) == {
            "drafts/idea.md": b"# Idea\n\nA vault that merges its own todo lists.\n",
            "drafts/plan.md": b"# Plan\n\n1. Write the merge script.\n2. Test it.\n",
            "todo_home.txt": b"- buy milk\n- call the plumber\n",
            "todo_work.txt": b"- send the weekly report\n- book the meeting room\n",
        }


def test_environments_root_bundles_sql_seed(bundled: Imported) -> None:
    task = bundled.dataset.tasks[BOOKSHOP_TASK]
    assert task.initial_state == SqlSeedState(path="seed.sql")
    seed = (bundled.dataset.task_dir(BOOKSHOP_TASK) / "seed.sql").read_text(encoding="utf-8")
    assert seed == (ENVIRONMENTS / "bookshop.sql").read_text(encoding="utf-8")
    assert "CREATE TABLE orders" in seed


def test_missing_environment_keeps_external_state_with_a_warning(bundled: Imported) -> None:
    task = bundled.dataset.tasks[PAYROLL_TASK]
    assert isinstance(task.initial_state, ExternalState)
    [problem] = [p for p in bundled.report.problems if "no initial state" in p.message]
    assert problem.severity == "warning"
    assert "payroll/raise_salaries" in problem.message
    # Both places a Postgres seed may be are named: the task's own, then its category's, each
    # as SQL or as a pg_dump archive.
    own, category = ENVIRONMENTS / "payroll" / "raise_salaries", ENVIRONMENTS / "payroll"
    assert f"tried {own}{{.sql,.backup,.dump}}, {category}{{.sql,.backup,.dump}}" in problem.message


def _run_verifier(verifier: Path, sandbox: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(verifier)],
        env={**os.environ, "FILESYSTEM_TEST_DIR": str(sandbox)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _replay_writes(bundled: Imported, trajectory_id: str, sandbox: Path) -> None:
    """Apply the trajectory's write_file calls to a sandbox, as a replay would."""
    for step in bundled.dataset.trajectories[trajectory_id].steps:
        action = _tool_call(step)
        if action.name == "write_file":
            path, content = action.arguments["path"], action.arguments["content"]
            assert isinstance(path, str)
            assert isinstance(content, str)
            target = Path(path.replace(S, str(sandbox)))
            target.write_text(content, encoding="utf-8")


@pytest.mark.parametrize(
    ("trajectory_id", "exit_code", "printed"),
    [
        pytest.param(None, 1, "FAIL: todo_all.txt does not exist", id="initial-state"),
        pytest.param(MERGE_RUN_1, 0, "PASS", id="after-run-1"),
        pytest.param(
            MERGE_RUN_2,
            1,
            "FAIL: todo_all.txt is missing '- send the weekly report'",
            id="after-run-2",
        ),
    ],
)
def test_bundled_verifier_reproduces_the_recorded_labels(
    bundled: Imported,
    tmp_path: Path,
    trajectory_id: str | None,
    exit_code: int,
    printed: str,
) -> None:
    task_dir = bundled.dataset.task_dir(MERGE_TASK)
    sandbox = tmp_path / "sandbox"
    shutil.copytree(task_dir / "initial", sandbox)
    if trajectory_id is not None:
        _replay_writes(bundled, trajectory_id, sandbox)
        assert (sandbox / "todo_all.txt").is_file()
    result = _run_verifier(task_dir / "verify.py", sandbox)
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert result.stdout.strip() == printed


# --- decode_tool_output -------------------------------------------------------------------------


DIRECTORY_TREE_JSON = '{"name": "root", "type": "directory", "children": []}'


def _call_tool_result(*texts: str, is_error: bool) -> str:
    """A CallToolResult as MCPMark stores it: JSON inside a JSON text block inside a JSON string."""
    result = {
        "meta": None,
        "content": [{"type": "text", "text": text, "annotations": None} for text in texts],
        "structuredContent": None,
        "isError": is_error,
    }
    return json.dumps({"type": "text", "text": json.dumps(result)})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            _call_tool_result("[FILE] a.txt\n[DIR] sub", is_error=False),
            ("[FILE] a.txt\n[DIR] sub", False),
            id="layered-ok",
        ),
        pytest.param(
            _call_tool_result("Error: Access denied - path outside allowed dirs", is_error=True),
            ("Error: Access denied - path outside allowed dirs", True),
            id="layered-error",
        ),
        pytest.param(
            _call_tool_result("Error rate: 3 of 40 rows", is_error=False),
            ("Error rate: 3 of 40 rows", False),
            id="layered-isError-is-authoritative",
        ),
        pytest.param(
            _call_tool_result(DIRECTORY_TREE_JSON, is_error=False),
            (DIRECTORY_TREE_JSON, False),
            id="layered-json-text-kept-verbatim",
        ),
        pytest.param(
            _call_tool_result("first block", "second block", is_error=False),
            ("first block\nsecond block", False),
            id="layered-two-blocks",
        ),
        pytest.param(
            json.dumps({"content": [{"type": "text", "text": "no such table"}], "isError": True}),
            ("no such table", True),
            id="single-encoded-call-tool-result",
        ),
        pytest.param(
            "Error: ENOENT: no such file or directory, open '/x/y'",
            ("Error: ENOENT: no such file or directory, open '/x/y'", True),
            id="plain-error",
        ),
        pytest.param("No results", ("No results", False), id="plain-text"),
        pytest.param(
            "An error occurred while running the tool. Please try again. Error: timeout",
            ("An error occurred while running the tool. Please try again. Error: timeout", True),
            id="agents-sdk-tool-exception",
        ),
        pytest.param(
            "[FILE] not json at all", ("[FILE] not json at all", False), id="plain-bracketed"
        ),
    ],
)
def test_decode_tool_output(raw: str, expected: tuple[str, bool]) -> None:
    assert decode_tool_output(raw) == expected


def test_decode_tool_output_of_nothing_is_empty_text() -> None:
    assert decode_tool_output(None) == ("", False)


def _write_single_run(root: Path, messages: list[object], meta: dict[str, object]) -> Path:
    run = root / "exp" / "m__filesystem" / "run-1" / "cat__task"
    run.mkdir(parents=True)
    (run / "messages.json").write_text(json.dumps(messages))
    (run / "meta.json").write_text(json.dumps(meta))
    return run


def test_root_seen_only_after_a_newline_is_rewritten_and_edge_cases_hold(tmp_path: Path) -> None:
    root = "/srv/mm/backup_filesystem_cat_task_77"
    listing = _call_tool_result(f"Allowed directories:\n{root}", is_error=False)
    messages: list[object] = [
        {"role": "user", "content": "List the allowed directories."},
        {
            "type": "function_call",
            "name": "list_allowed_directories",
            "arguments": "",
            "call_id": "a",
        },
        {"type": "function_call_output", "call_id": "a", "output": listing},
        {"type": "function_call", "name": "list_directory", "arguments": "{}", "call_id": "b"},
        {"type": "function_call_output", "call_id": "b"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]
    meta: dict[str, object] = {
        "model_name": "m",
        "mcp": "filesystem",
        "time": {"start": 1_700_000_000, "end": "2023-11-14T22:14:00+00:00"},
        "execution_result": {"success": True},
    }
    _write_single_run(tmp_path / "src", messages, meta)
    report = import_mcpmark([tmp_path / "src"], tmp_path / "out")
    [trajectory_id] = report.trajectories
    trajectory = load_dataset(tmp_path / "out").trajectories[trajectory_id]
    first, second = trajectory.steps
    assert first.observation is not None
    assert first.observation.text == f"Allowed directories:\n{SANDBOX_ROOT_PLACEHOLDER}"
    assert first.action.arguments == {}  # type: ignore[union-attr]
    assert second.observation is not None
    assert second.observation.text == ""
    assert [(p.field, p.severity) for p in report.problems] == [("[4].output", "warning")]
    assert trajectory.started_at is not None
    assert trajectory.started_at.utcoffset() is not None
    assert trajectory.started_at.timestamp() == 1_700_000_000


def test_decode_tool_output_handles_non_text_blocks() -> None:
    raw = json.dumps(
        {
            "type": "text",
            "text": json.dumps(
                {
                    "content": [
                        {"type": "text", "text": "chart:"},
                        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                    ],
                    "isError": False,
                }
            ),
        }
    )
    assert decode_tool_output(raw) == ("chart:\n[image content: image/png]", False)


# --- broken runs ------------------------------------------------------------------------------


def test_broken_runs_are_reported_and_good_runs_still_land(tmp_path: Path) -> None:
    imported = _import(tmp_path / "mixed", bundled=False, sources=[RESULTS, BROKEN])
    errors = [p for p in imported.report.problems if p.severity == "error"]
    assert len(errors) == 2
    by_run = {Path(p.file).parent.name: p for p in errors}
    assert set(by_run) == {"notes_vault__bad_json", "online_resume__update_skills"}

    bad_json = by_run["notes_vault__bad_json"]
    assert bad_json.file.endswith(
        "broken/demo-exp/gpt-4.1-mini__filesystem/run-1/notes_vault__bad_json/messages.json"
    )
    assert bad_json.message.startswith("invalid JSON at line 4 column 1")
    assert bad_json.field is None

    notion = by_run["online_resume__update_skills"]
    assert notion.file.endswith(
        "broken/demo-exp/gpt-4.1-mini__notion/run-1/online_resume__update_skills/meta.json"
    )
    assert notion.field == "mcp"
    assert "'notion'" in notion.message
    assert "not supported" in notion.message

    assert sorted(imported.report.trajectories) == sorted(EXPECTED)
    assert sorted(imported.dataset.trajectories) == sorted(EXPECTED)
    assert imported.dataset.errors == []
    assert not any("bad_json" in task or "notion" in task for task in imported.dataset.tasks)


def test_only_broken_runs_write_no_dataset(tmp_path: Path) -> None:
    destination = tmp_path / "nothing"
    report = import_mcpmark([BROKEN], destination)
    assert report.trajectories == []
    assert report.tasks == []
    assert len([p for p in report.problems if p.severity == "error"]) == 2
    assert not (destination / "dataset.json").exists()


def test_source_without_runs_is_an_error(tmp_path: Path) -> None:
    report = import_mcpmark([ENVIRONMENTS], tmp_path / "empty")
    [problem] = report.problems
    assert problem.severity == "error"
    assert "no MCPMark run folders" in problem.message


# --- idempotence --------------------------------------------------------------------------------


def test_importing_twice_gives_the_same_files(tmp_path: Path) -> None:
    destination = tmp_path / "twice"
    first = _import(destination, bundled=True)
    before = _snapshot(destination)
    second = _import(destination, bundled=True)
    after = _snapshot(destination)
    assert after == before
    assert second.report.trajectories == first.report.trajectories
    assert len(second.dataset.trajectories) == len(EXPECTED)
    assert len(list((destination / "trajectories").iterdir())) == len(EXPECTED)
    assert sorted(p.name for p in (destination / "tasks").iterdir()) == sorted(
        [MERGE_TASK, DRAFTS_TASK, BOOKSHOP_TASK, PAYROLL_TASK]
    )


# --- command line -------------------------------------------------------------------------------


def test_cli_import_and_validate_succeed(tmp_path: Path) -> None:
    destination = tmp_path / "cli"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "datasets",
            "import-mcpmark",
            str(RESULTS),
            str(destination),
            "--tasks-root",
            str(TASKS),
            "--environments-root",
            str(ENVIRONMENTS),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "imported 5 trajectory(ies) of 4 task(s)" in result.output
    assert (destination / "tasks" / MERGE_TASK / "verify.py").is_file()
    assert (destination / "tasks" / BOOKSHOP_TASK / "seed.sql").is_file()

    validated = runner.invoke(app, ["datasets", "validate", str(destination)])
    assert validated.exit_code == 0, validated.output
    assert "valid" in validated.output

    as_json = runner.invoke(app, ["datasets", "validate", "--json", str(destination)])
    assert as_json.exit_code == 0, as_json.output
    payload = json.loads(as_json.output)
    assert payload["valid"] is True
    assert payload["trajectories"] == 5
    counts = {(row["subdomain"], row["PASS"], row["FAIL"]) for row in payload["counts"]}
    assert counts == {("filesystem", 1, 2), ("postgres", 1, 1)}


def test_cli_exits_1_when_a_run_is_broken(tmp_path: Path) -> None:
    destination = tmp_path / "cli-broken"
    result = CliRunner().invoke(
        app, ["datasets", "import-mcpmark", str(RESULTS), str(BROKEN), str(destination)]
    )
    assert result.exit_code == 1, result.output
    assert "notes_vault__bad_json/messages.json" in result.output
    assert "service 'notion' is not supported" in result.output
    assert "imported 5 trajectory(ies)" in result.output
    # The good runs still landed and form a valid dataset.
    validated = CliRunner().invoke(app, ["datasets", "validate", str(destination)])
    assert validated.exit_code == 0, validated.output


def test_cli_exits_1_when_nothing_is_imported(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["datasets", "import-mcpmark", str(BROKEN), str(tmp_path / "none")]
    )
    assert result.exit_code == 1, result.output
    assert "imported 0 trajectory(ies)" in result.output
