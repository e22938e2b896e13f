"""Splitting SQL scripts into statements: quotes, comments and ``BEGIN ATOMIC`` bodies."""

from __future__ import annotations

from mcp_servers.sql.statements import split_statements


def test_split_statements_respects_quotes_comments_and_atomic_bodies() -> None:
    script = (
        "SELECT 'a;b'; SELECT E'c\\';d'; SELECT $x$ ; $x$; SELECT \"q;\"; -- c;\n"
        "/* a /* nested; */ ; */ SELECT 1; ;  "
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END; "
        "SELECT $1"
    )
    parts = [script[start:end].strip() for start, end in split_statements(script)]
    assert parts == [
        "SELECT 'a;b';",
        "SELECT E'c\\';d';",
        "SELECT $x$ ; $x$;",
        'SELECT "q;";',
        "-- c;\n/* a /* nested; */ ; */ SELECT 1;",
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END;",
        "SELECT $1",
    ]
    assert split_statements("  -- nothing\n /* here */ ") == []
