"""SQL as the Node.js servers behind Supabase and InsForge ran it: values, results, failures."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from dataset.models import SqlSeedState, Task
from mcp_servers.sql.node_driver import (
    NodeFailure,
    TypeStyle,
    command_of,
    js_json,
    js_number,
    run_node_script,
)
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresSandbox

ON_CLUSTER = pytest.mark.asyncio(loop_scope="module")
"""The cluster fixtures live on the module's event loop."""

SEED = "CREATE TABLE t (a int PRIMARY KEY, b text); INSERT INTO t VALUES (1, 'x'), (2, 'y');"


@pytest_asyncio.fixture(loop_scope="module")
async def sandbox(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PostgresSandbox]:
    folder = tmp_path_factory.getbasetemp() / "node-seed"
    folder.mkdir(exist_ok=True)
    (folder / "seed.sql").write_text(SEED)
    task = Task(
        id="node-driver",
        domain="ds",
        subdomain="postgres",
        instruction="-",
        initial_state=SqlSeedState(),
    )
    made = await provider.create(task, Path(folder))
    yield made
    await made.destroy()


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (4.0, "4"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (math.nan, "null"),
        (math.inf, "null"),
    ],
)
def test_numbers_print_as_javascript_prints_them(number: float, text: str) -> None:
    assert js_number(number) == text


def test_json_is_laid_out_as_json_stringify_does() -> None:
    value: dict[str, object] = {
        "rows": [],
        "rowCount": None,
        "fields": [{"name": "n", "dataTypeID": 20}],
        "x": {},
    }
    assert (
        js_json(value)
        == '{"rows":[],"rowCount":null,"fields":[{"name":"n","dataTypeID":20}],"x":{}}'
    )
    assert js_json(value, 2) == (
        '{\n  "rows": [],\n  "rowCount": null,\n  "fields": [\n    {\n      "name": "n",\n'
        '      "dataTypeID": 20\n    }\n  ],\n  "x": {}\n}'
    )


@pytest.mark.parametrize(
    ("tag", "reading"),
    [
        ("INSERT 0 20", ("INSERT", 20)),
        ("UPDATE 3", ("UPDATE", 3)),
        ("SELECT 5", ("SELECT", 5)),
        ("CREATE TABLE", ("CREATE", None)),
        (None, (None, None)),
    ],
)
def test_command_tags_are_read_as_node_postgres_reads_them(
    tag: str | None, reading: tuple[str | None, int | None]
) -> None:
    assert command_of(tag) == reading


TYPED = """
SELECT 5::int8 AS big, 7::int4 AS small, 1.50::numeric AS price, 2.5::float8 AS ratio,
       'NaN'::float8 AS nan, true AS yes, '{"k": [1, 2]}'::jsonb AS doc,
       '2024-03-04'::date AS day, '2024-03-04 10:00:00.123456'::timestamp AS at,
       '2024-03-04 10:00:00+02'::timestamptz AS zoned,
       '1 year 2 mons 3 days 04:05:06.5'::interval AS span, '\\x0102'::bytea AS raw,
       ARRAY[1, 2]::int4[] AS ints, ARRAY['a', 'b c']::text[] AS words,
       ARRAY['anon']::name[] AS roles, '(1,2)'::point AS spot,
       'b3e6c3a2-1111-4d2b-9c8e-222233334444'::uuid AS id
"""


async def _typed_row(sandbox: PostgresSandbox, style: TypeStyle) -> dict[str, object]:
    async with sandbox.connect() as connection:
        outcome = await run_node_script(connection, TYPED, style)
    assert outcome.wrote is False
    return outcome.results[0].rows[0]


@ON_CLUSTER
async def test_values_as_node_postgres_parses_them(sandbox: PostgresSandbox) -> None:
    row = await _typed_row(sandbox, TypeStyle.NODE)
    assert row == {
        "big": "5",
        "small": 7,
        "price": "1.50",
        "ratio": 2.5,
        "nan": None,
        "yes": True,
        "doc": {"k": [1, 2]},
        "day": "2024-03-04T00:00:00.000Z",
        "at": "2024-03-04T10:00:00.123Z",
        "zoned": "2024-03-04T08:00:00.000Z",
        "span": {"years": 1, "months": 2, "days": 3, "hours": 4, "minutes": 5, "seconds": 6}
        | {"milliseconds": 500},
        "raw": {"type": "Buffer", "data": [1, 2]},
        "ints": [1, 2],
        "words": ["a", "b c"],
        "roles": "{anon}",
        "spot": {"x": 1, "y": 2},
        "id": "b3e6c3a2-1111-4d2b-9c8e-222233334444",
    }


@ON_CLUSTER
async def test_values_as_supabases_pg_meta_parses_them(sandbox: PostgresSandbox) -> None:
    row = await _typed_row(sandbox, TypeStyle.PG_META)
    assert row["big"] == 5
    assert row["day"] == "2024-03-04"
    assert row["at"] == "2024-03-04 10:00:00.123456"
    assert row["span"] == "1 year 2 mons 3 days 04:05:06.5"
    assert row["price"] == "1.50"


@ON_CLUSTER
async def test_a_script_is_one_transaction_with_a_result_per_statement(
    sandbox: PostgresSandbox,
) -> None:
    async with sandbox.connect() as connection:
        outcome = await run_node_script(
            connection,
            "INSERT INTO t VALUES (3, 'z'); SELECT a FROM t ORDER BY a; CREATE TABLE u (c int)",
            TypeStyle.NODE,
        )
    assert [(r.command, r.row_count) for r in outcome.results] == [
        ("INSERT", 1),
        ("SELECT", 3),
        ("CREATE", None),
    ]
    assert outcome.results[1].rows == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert outcome.results[1].fields == [("a", 23)]
    assert outcome.wrote is True
    async with sandbox.connect() as connection:
        with pytest.raises(NodeFailure) as caught:
            await run_node_script(
                connection, "INSERT INTO t VALUES (4, 'w');\nSELECT nope FROM t", TypeStyle.NODE
            )
        assert str(caught.value) == 'column "nope" does not exist'  # no LINE/caret lines
        assert await connection.fetchval("SELECT count(*) FROM t WHERE a = 4") == 0
