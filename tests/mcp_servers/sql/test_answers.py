"""How ``execute_sql`` reads its answer: through the capping wrapper, without changing what the
statement does or says.

The wrapper must not show: errors point into the caller's SQL, a volatile expression runs once,
answers match those of the plain statement. And it must follow the data: a column whose type
became able to hold long values is capped again (its bytes measured as this process read them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest
import pytest_asyncio

from mcp_servers.serving import ToolServer
from mcp_servers.sql.judge_server import sql_server
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSnapshot
from sandboxes.postgres.sandbox import PostgresSandbox
from tests.sandboxes.postgres.helpers import write_task

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEED = """
CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price numeric(8, 2), tags text[]);
INSERT INTO items VALUES (1, 'pen', 1.50, '{blue}'), (2, 'ink', 3.00, NULL), (3, 'pad', 2.25, '{}');
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def snapshot(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory
) -> ClusterPostgresSnapshot:
    task = write_task(tmp_path_factory.mktemp("answers") / "items", SEED)
    return await (await provider.create(*task)).freeze()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def view(snapshot: ClusterPostgresSnapshot) -> PostgresSandbox:
    return await snapshot.clone(writable=False)


async def answer(server: ToolServer[Any], sql: str) -> tuple[bool, str]:
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool("execute_sql", {"sql": sql})
    return bool(result.is_error), result.content[0].text  # type: ignore[union-attr]


def bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


async def test_answers_are_those_of_the_plain_statement(view: PostgresSandbox) -> None:
    server = sql_server(view)
    queries = {
        # named by the parse: wrapped at once
        "SELECT id, name, price, tags FROM items ORDER BY id DESC": [
            {"id": 3, "name": "pad", "price": "2.25", "tags": []},
            {"id": 2, "name": "ink", "price": "3.00", "tags": None},
            {"id": 1, "name": "pen", "price": "1.50", "tags": ["blue"]},
        ],
        # a star: described first
        "SELECT *, 1 AS id FROM items WHERE id = 1": [
            {"id": 1, "name": "pen", "price": "1.50", "tags": ["blue"], "id_2": 1}
        ],
        "VALUES (1, NULL::text), (2, 'b')": [
            {"column1": 1, "column2": None},
            {"column1": 2, "column2": "b"},
        ],
        "SELECT name FROM items WHERE false": [],
    }
    for _ in range(2):  # the second time through the remembered shapes
        for sql, rows in queries.items():
            is_error, text = await answer(server, sql)
            assert not is_error, text
            assert json.loads(text)["rows"] == rows, sql


async def test_errors_point_into_the_callers_sql(view: PostgresSandbox) -> None:
    server = sql_server(view)
    is_error, text = await answer(server, "SET search_path = public;\nSELECT id, nope FROM items")
    assert is_error
    assert text.splitlines()[1:3] == [
        "LINE 2: SELECT id, nope FROM items",
        " " * len("LINE 2: SELECT id, ") + "^",
    ]
    is_error, text = await answer(server, "SELECT id / 0 FROM items")
    assert is_error
    assert "division by zero" in text


async def test_a_volatile_expression_runs_once(snapshot: ClusterPostgresSnapshot) -> None:
    clone = await snapshot.clone()
    try:
        server = sql_server(clone, access="unrestricted")
        is_error, text = await answer(
            server,
            "CREATE SEQUENCE tickets; SELECT nextval('tickets') AS n, repeat('y', 70000) AS pad",
        )
        assert not is_error, text
        answered = json.loads(text)
        assert answered["rows"][0]["n"] == 1
        assert answered["cut"] == [{"row": 0, "column": "pad", "bytes": 70000}]
        is_error, text = await answer(server, "SELECT last_value FROM tickets")
        assert json.loads(text)["rows"] == [{"last_value": 1}]
    finally:
        await clone.destroy()


async def test_a_column_that_became_long_is_capped_again(
    snapshot: ClusterPostgresSnapshot,
) -> None:
    clone = await snapshot.clone()
    try:
        server = sql_server(clone, access="unrestricted")
        select = "SELECT price AS note FROM items WHERE id = 1"
        assert json.loads((await answer(server, select))[1])["rows"] == [{"note": "1.50"}]
        is_error, text = await answer(
            server,
            "ALTER TABLE items ALTER COLUMN price TYPE text;"
            " UPDATE items SET price = repeat('7', 5000000) WHERE id = 1",
        )
        assert not is_error, text
        before = bytes_read()
        is_error, text = await answer(server, select)
        read = bytes_read() - before
        assert not is_error, text[:200]
        answered = json.loads(text)
        assert answered["rows"] == [{"note": "7" * 65536}]
        assert answered["cut"] == [{"row": 0, "column": "note", "bytes": 5000000}]
        assert read < 1_000_000
    finally:
        await clone.destroy()
