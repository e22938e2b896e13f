"""Which diverged steps could change the end state, and which differ only in presentation (the
shared rules of ``environments.comparison``, with the postgres kind saying which SQL only reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset.actions import ToolCallAction
from dataset.models import Step
from dataset.store import load_dataset
from environments.backends import ProviderSet
from environments.comparison import classify_step
from environments.postgres.comparison import is_query
from environments.postgres.kind import KIND as POSTGRES
from mcp_servers.results import ToolResult
from replay.engine import replay_trajectory
from tests.replay.builders import PG_TASK, build_dataset, call, steps, trajectory


def sql_step(sql: str, output: str, *, error: bool = False) -> Step:
    return call(1, "execute_sql", {"sql": sql}, output, error=error)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "  -- a comment first\nselect * from t order by a",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "EXPLAIN SELECT 1",
        "SHOW search_path; VALUES (1)",
        "TABLE customers",
    ],
)
def test_queries_are_recognised(sql: str) -> None:
    assert is_query(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1)",
        "WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone",
        "SELECT * INTO copy FROM t",
        "EXPLAIN ANALYZE DELETE FROM t",
        "SELECT nextval('s')",
        "SELECT * FROM t FOR UPDATE",
        "SELECT 1; UPDATE t SET a = 2",
        "CREATE TABLE t (a int)",
        "",
    ],
)
def test_anything_else_counts_as_a_write(sql: str) -> None:
    assert not is_query(sql)


@pytest.mark.parametrize(
    ("step", "writes", "replayed", "same_text", "effect"),
    [
        # A tool that cannot write: only what the agent saw differs.
        (
            call(1, "list_tables", {}, "[]"),
            False,
            ToolResult(text="[{}]", wrote=False),
            False,
            "presentation",
        ),
        # postgres-mcp's unflagged "Error: ..." replayed with the flag: same text.
        (
            sql_step("SELEC 1", "Error: syntax error"),
            True,
            ToolResult(text="Error: syntax error", is_error=True),
            True,
            "presentation",
        ),
        # Failed both times, worded differently: nothing was committed either time.
        (
            sql_step("INSERT INTO t VALUES (1)", "Error: relation t does not exist"),
            True,
            ToolResult(text="Error: permission denied", is_error=True),
            False,
            "presentation",
        ),
        # A query that succeeded both times with different rows wrote nothing either time.
        (
            sql_step("SELECT * FROM t", "[{'a': 1}]"),
            True,
            ToolResult(text="[{'a': 2}]", wrote=False),
            False,
            "presentation",
        ),
        # Recorded failing; the replay succeeded but wrote nothing.
        (
            sql_step("UPDATE t SET a = 1 WHERE false", "Error: boom", error=True),
            True,
            ToolResult(text="No results", wrote=False),
            False,
            "presentation",
        ),
        # A query recorded as succeeding, failing now: it cannot have written then.
        (
            sql_step("SELECT * FROM t", "[{'a': 1}]"),
            True,
            ToolResult(text="Error: relation t does not exist", is_error=True),
            False,
            "presentation",
        ),
        # A write that succeeded when recorded and fails now.
        (
            sql_step("INSERT INTO t VALUES (1)", "No results"),
            True,
            ToolResult(text="Error: duplicate key", is_error=True),
            False,
            "state",
        ),
        # Recorded failing, but the replayed call wrote.
        (
            sql_step("INSERT INTO t VALUES (1)", "Error: duplicate key", error=True),
            True,
            ToolResult(text="No results", wrote=True),
            False,
            "state",
        ),
        # Both succeeded; different rows affected (the replay updated nothing).
        (
            call(1, "run-raw-sql", {"query": "UPDATE t SET a = 2"}, '{"rowCount": 3}'),
            True,
            ToolResult(text='{"rowCount": 0}', wrote=False),
            False,
            "state",
        ),
        # Both succeeded and the replay wrote, with a different outcome.
        (
            sql_step("INSERT INTO t SELECT 1 RETURNING a", "[{'a': 1}]"),
            True,
            ToolResult(text="[{'a': 7}]", wrote=True),
            False,
            "state",
        ),
        # A writing call that could not be replayed at all.
        (sql_step("INSERT INTO t VALUES (1)", "No results"), True, None, False, "state"),
    ],
)
def test_each_difference_is_classified(
    step: Step, writes: bool, replayed: ToolResult | None, same_text: bool, effect: str
) -> None:
    assert isinstance(step.action, ToolCallAction)
    only_reads = POSTGRES.call_only_reads(step.action.name, step.action.arguments)
    found, reason = classify_step(
        step, writes=writes, replayed=replayed, only_reads=only_reads, same_text=same_text
    )
    assert found == effect, reason
    assert reason


@pytest.mark.asyncio(loop_scope="module")
async def test_the_report_tells_state_divergences_from_presentation(
    providers: ProviderSet, tmp_path: Path
) -> None:
    recorded = steps(
        # What the agent saw of the seed differs from the seed: a read, so presentation.
        ("execute_sql", {"sql": "SELECT count(*) AS n FROM customers"}, "[{'n': 999}]"),
        # Recorded as refused, but the replay inserts the row: the end state may differ.
        (
            "execute_sql",
            {
                "sql": "INSERT INTO customers VALUES "
                "(100, 'New One', 'new@example.com', 'active', '2024-01-01')"
            },
            'Error: duplicate key value violates unique constraint "customers_pkey"',
            True,
        ),
        # Recorded and replayed alike.
        ("execute_sql", {"sql": "SELECT full_name FROM customers WHERE id = 100"}, None),
    )
    item = trajectory("pg-effects", PG_TASK, recorded)
    dataset = load_dataset(build_dataset(tmp_path / "ds", [item], (PG_TASK,)))
    task = dataset.tasks[PG_TASK]
    result = await replay_trajectory(item, task, dataset.task_dir(PG_TASK), providers, verify=False)
    report = result.report
    assert [step.status for step in report.steps] == ["diverged", "diverged", "unrecorded"]
    assert [step.effect for step in report.steps] == ["presentation", "state", None]
    assert report.state_steps == [2]
    assert report.divergence == "state"
