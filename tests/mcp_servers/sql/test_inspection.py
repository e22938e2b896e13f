"""The statement checks on PostgreSQL's parse, and the column names read from it.

The refusal tables need no server: they check what each access mode lets through, however a
call is spelled. The column names are checked against the server's own description of the same
queries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.inspection import (
    Refused,
    checked_script,
    explain_target,
    output_names,
    parse_script,
)
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster

READ_ONLY_REFUSED: list[Any] = [
    pytest.param("SELECT pg_read_file('/etc/passwd')", "pg_read_file()", id="call"),
    pytest.param('SELECT "pg_catalog"."PG_READ_FILE"(\'x\')', "pg_read_file()", id="quoted"),
    pytest.param("SELECT ('x'::text).pg_read_file", "pg_read_file()", id="attribute"),
    pytest.param("SELECT t.c.lo_import FROM t", "lo_import()", id="column-attribute"),
    pytest.param(
        "SELECT * FROM (SELECT 1) a WHERE EXISTS (SELECT pg_ls_logdir())",
        "pg_ls_logdir()",
        id="in-exists",
    ),
    pytest.param("SELECT count(*) FILTER (WHERE lo_get(1) IS NULL)", "lo_get()", id="filter"),
    pytest.param("SELECT 1 ORDER BY pg_stat_file('x')", "pg_stat_file()", id="order-by"),
    pytest.param("VALUES (dblink_connect('x'))", "dblink_connect()", id="values"),
    pytest.param("EXPLAIN SELECT pg_read_binary_file('x')", "pg_read_binary_file()", id="explain"),
    pytest.param("SELECT * FROM ROWS FROM (pg_ls_waldir())", "pg_ls_waldir()", id="rows-from"),
    pytest.param("SELECT cursor_to_xml('c', 1, true, true, '')", "cursor_to_xml()", id="xml"),
    pytest.param("SELECT ts_stat('SELECT 1')", "ts_stat()", id="ts-stat"),
    pytest.param("SELECT pg_try_advisory_lock(1)", "pg_try_advisory_lock()", id="lock"),
    pytest.param("SELECT pg_cancel_backend(1)", "pg_cancel_backend()", id="cancel"),
    pytest.param("SELECT txid_current()", "txid_current()", id="xid"),
    pytest.param("SELECT pg_notify('c', 'x')", "pg_notify()", id="notify-function"),
    pytest.param("TABLE pg_catalog.pg_authid", "pg_authid", id="table-authid"),
    pytest.param("SELECT * FROM pg_user_mappings", "pg_user_mappings", id="user-mappings"),
    pytest.param("SET statement_timeout TO DEFAULT", "statement_timeout", id="set-default"),
    pytest.param("RESET statement_timeout", "RESET statement_timeout", id="reset"),
    pytest.param("SET SESSION lock_timeout = 0", "lock_timeout", id="lock-timeout"),
    pytest.param("SET ROLE NONE", "role", id="role"),
    pytest.param("SET default_transaction_read_only = off", "transaction", id="tx-setting"),
    pytest.param("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET", id="chars"),
    pytest.param("START TRANSACTION", "START TRANSACTION", id="start"),
    pytest.param("SAVEPOINT a", "SAVEPOINT", id="savepoint"),
    pytest.param("COMMIT AND CHAIN", "COMMIT", id="commit"),
    pytest.param("PREPARE TRANSACTION 'x'", "PREPARE TRANSACTION", id="prepare-transaction"),
    pytest.param("PREPARE p AS SELECT 1", "PREPARE", id="prepare"),
    pytest.param("DECLARE c CURSOR FOR SELECT 1", "DECLARE", id="cursor"),
    pytest.param("LOCK TABLE t", "LOCK TABLE", id="lock-table"),
    pytest.param("LOAD 'plpgsql'", "LOAD", id="load"),
    pytest.param("DISCARD ALL", "DISCARD ALL", id="discard"),
    pytest.param("SELECT 1 FOR SHARE", "FOR UPDATE/SHARE", id="row-lock"),
    pytest.param("SELECT * INTO t2 FROM t", "SELECT INTO", id="select-into"),
    pytest.param(
        "WITH a AS (SELECT 1), b AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM a",
        "WITH query that writes",
        id="writing-cte",
    ),
    pytest.param("EXPLAIN (ANALYZE 1) UPDATE t SET a = 1", "EXPLAIN ANALYZE of UPDATE", id="ea"),
    pytest.param("EXPLAIN (ANALYZE) SELECT 1 FOR UPDATE", "FOR UPDATE", id="ea-lock"),
    pytest.param("SELECT 1; COMMIT", "Statement 2 of 2: COMMIT", id="numbered"),
]


@pytest.mark.parametrize(("sql", "named"), READ_ONLY_REFUSED)
def test_read_only_refusals(sql: str, named: str) -> None:
    with pytest.raises(Refused) as refused:
        checked_script(sql, read_only=True)
    assert named in str(refused.value)
    assert "not allowed in read-only mode" in str(refused.value)
    assert "Nothing was run." in str(refused.value)


READ_ONLY_ALLOWED = [
    "SELECT name, lo_total FROM t",  # a column named like a large-object function
    "SELECT t.lo_total FROM t",
    "SELECT pg_sleep(0.1)",  # bounded by the time limit and the watchdog
    "SELECT current_setting('work_mem')",
    "SHOW ALL",
    "SET search_path = shop, public",
    "SET LOCAL enable_seqscan = off",
    "RESET search_path",
    "EXPLAIN DELETE FROM t",  # a plan runs nothing
    "EXPLAIN (ANALYZE false) DELETE FROM t",
    "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM t",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) TABLE r",
    "(VALUES (1)) UNION (SELECT 2) ORDER BY 1",
    "SELECT 'pg_read_file(''/etc/passwd'')' AS not_a_call",  # text, not a call
    "SELECT 1 -- pg_read_file('/etc/passwd')",
]


@pytest.mark.parametrize("sql", READ_ONLY_ALLOWED)
def test_read_only_lets_queries_through(sql: str) -> None:
    script = checked_script(sql, read_only=True)
    assert script is not None
    assert script.statements


def test_unrestricted_mode_refuses_only_what_reaches_past_the_database() -> None:
    for sql in ("DELETE FROM t", "COMMIT; CREATE TABLE x (a int)", "SET search_path = x"):
        assert checked_script(sql, read_only=False) is not None
    for sql, named in (
        ("COPY t FROM '/etc/passwd'", "COPY"),
        ("COPY t TO PROGRAM 'sh'", "COPY"),
        ("ALTER SYSTEM SET work_mem = '1GB'", "ALTER SYSTEM"),
        ("SELECT set_config('statement_timeout', '0', true)", "set_config()"),
        ("SET statement_timeout = 0", "statement_timeout"),
        ("CALL dblink_exec('x')", "dblink_exec()"),
        (
            "CREATE FUNCTION f() RETURNS text LANGUAGE sql BEGIN ATOMIC "
            "SELECT pg_read_file('x'); END",
            "pg_read_file()",
        ),
    ):
        with pytest.raises(Refused) as refused:
            checked_script(sql, read_only=False)
        assert named in str(refused.value)
        assert "not allowed on this server" in str(refused.value)
    # What the parser cannot read goes to the server, which words the error.
    assert checked_script("SELEC 1", read_only=False) is None


def test_unparsable_read_only_sql_is_refused_as_the_server_would_word_it() -> None:
    with pytest.raises(SqlFailure) as failed:
        checked_script("SELECT 'é', nope FORM t", read_only=True)
    assert str(failed.value).splitlines() == [
        'syntax error at or near "t"',
        "LINE 1: SELECT 'é', nope FORM t",
        " " * len("LINE 1: SELECT 'é', nope FORM ") + "^",
    ]


def test_statement_spans_count_characters() -> None:
    script = parse_script("SELECT 'é€'; -- note\nSELECT 2;  ")
    assert [script.source(statement) for statement in script.statements] == [
        "SELECT 'é€'",
        "SELECT 2",
    ]
    assert parse_script("  -- only a comment").statements == ()


def test_explain_target() -> None:
    assert explain_target("SELECT 1; ", read_only=True, analyze=True) == "SELECT 1"
    assert explain_target("DELETE FROM t", read_only=True, analyze=False) == "DELETE FROM t"
    with pytest.raises(Refused, match="analyze of DELETE"):
        explain_target("DELETE FROM t", read_only=True, analyze=True)
    assert explain_target("DELETE FROM t", read_only=False, analyze=True) == "DELETE FROM t"
    with pytest.raises(Refused, match="exactly one statement"):
        explain_target("SELECT 1; SELECT 2", read_only=False, analyze=False)
    with pytest.raises(Refused, match="not DROP TABLE"):
        explain_target("DROP TABLE t", read_only=False, analyze=False)
    with pytest.raises(Refused, match="pg_read_file"):
        explain_target("SELECT pg_read_file('x')", read_only=False, analyze=False)


# --- column names, against the server's description ------------------------------------------

NAMED = [
    "SELECT id, name FROM items",
    "SELECT i.id AS ident, i.name FROM items i",
    "SELECT count(*), max(price), pg_catalog.lower(name) FROM items GROUP BY 3",
    "SELECT 1, 'a', NULL, true, 1.5, $$x$$, B'1', interval '1 day'",
    "SELECT 1::int, 'a'::text, name::varchar(3), (price)::int, id::text::int FROM items",
    "SELECT CASE WHEN id > 1 THEN 'a' END, CASE WHEN id > 1 THEN name ELSE name END FROM items",
    "SELECT coalesce(name, 'x'), greatest(1, 2), least(1, 2), ARRAY[1], ROW(1, 2), nullif(1, 2)"
    " FROM items",
    "SELECT (SELECT 1), (SELECT name FROM items LIMIT 1), (SELECT max(id) AS top FROM items),"
    " EXISTS (SELECT 1), ARRAY(SELECT 1), (SELECT 1)::int",
    "SELECT id + 1, -id, id IS NULL, NOT true, id = 1 AND true, id IN (1, 2) FROM items",
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT 1 AS a UNION SELECT 2 AS b",
    "(SELECT name FROM items) UNION ALL (SELECT 'x')",
    'SELECT name COLLATE "C", (ARRAY[1, 2])[1], x."Odd Name" FROM items,'
    ' (SELECT 1 AS "Odd Name") x',
    "SELECT extract(year FROM now()), substring('abc' FROM 1 FOR 2), trim(both ' ' FROM 'a ')",
    "SELECT CAST(1 AS bigint), 'x'::character varying, now()::date, grouping(id) FROM items"
    " GROUP BY id",
    "SELECT sum(id) OVER (), row_number() OVER () FROM items",
    "WITH t AS (SELECT 1 AS a) SELECT a, t.a FROM t",
]
UNNAMED = ["SELECT * FROM items", "SELECT items.* FROM items", "SELECT CURRENT_DATE"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def conn(cluster: EmbeddedPostgresCluster) -> AsyncIterator[Any]:
    made = await admin.connect(cluster.admin)
    await made.execute(
        "CREATE TEMP TABLE items (id integer, name text, price numeric);"
        "INSERT INTO items VALUES (1, 'a', 1.5)"
    )
    yield made
    await made.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_output_names_are_the_servers(conn: Any) -> None:
    for sql in NAMED:
        described = [attribute.name for attribute in (await conn.prepare(sql)).get_attributes()]
        assert output_names(parse_script(sql).statements[-1]) == described, sql
    for sql in UNNAMED:  # left to the server's description
        assert output_names(parse_script(sql).statements[-1]) is None, sql
