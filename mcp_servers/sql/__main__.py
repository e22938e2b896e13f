"""``python -m mcp_servers.sql --dsn DSN``: the SQL MCP server over stdio, for any MCP client."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import asyncpg

from mcp_servers.serving import serve_stdio
from mcp_servers.sql.access import DEFAULT_SIZE_QUOTA, MIB
from mcp_servers.sql.answers import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_VALUE_BYTES
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.judge_server import DEFAULT_MAX_ROWS, DEFAULT_STATEMENT_TIMEOUT, sql_server

PROG = "python -m mcp_servers.sql"

_STARTUP_FAILURES = (SqlFailure, OSError, ValueError, asyncpg.PostgresError, asyncpg.InterfaceError)
"""A refused role, an unreachable server, a DSN that does not parse or a failed login."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _quota(text: str) -> int | None:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be a number of MiB, 0 for none")
    return round(value * MIB) or None


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def parser() -> argparse.ArgumentParser:
    """The command line."""
    made = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Serve the SQL tools (list_schemas, list_objects, get_object_details, execute_sql, "
            "explain_query, analyze_db_health, get_top_queries, ...) over stdio for one "
            "PostgreSQL database. In read-only mode every call runs in a READ ONLY transaction "
            "that is always rolled back, and statements other than queries are refused before "
            "they run, as are (in either mode) functions reaching the server's files, other "
            "sessions or settings. The connection uses the role the DSN names: a superuser (or "
            "a role that may read or write server files or run programs) is refused unless "
            "--allow-superuser; give it a role without write privileges for a real barrier."
        ),
    )
    made.add_argument("--dsn", required=True, help="postgresql:// URL of the database")
    made.add_argument(
        "--access-mode",
        choices=["read-only", "unrestricted"],
        default="read-only",
        help="read-only (default): queries only, always rolled back; unrestricted: any "
        "statement the role may run, each successful call committed",
    )
    made.add_argument(
        "--max-rows",
        type=_positive_int,
        default=DEFAULT_MAX_ROWS,
        help=f"rows a result shows at most (default {DEFAULT_MAX_ROWS})",
    )
    made.add_argument(
        "--statement-timeout",
        type=_positive_float,
        default=DEFAULT_STATEMENT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds a statement may run (default {DEFAULT_STATEMENT_TIMEOUT:g})",
    )
    made.add_argument(
        "--max-value-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_VALUE_BYTES,
        help=f"bytes of one value a result shows at most (default {DEFAULT_MAX_VALUE_BYTES})",
    )
    made.add_argument(
        "--max-answer-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_ANSWER_BYTES,
        help=f"bytes of rows one result holds at most (default {DEFAULT_MAX_ANSWER_BYTES})",
    )
    made.add_argument(
        "--size-quota",
        type=_quota,
        default=DEFAULT_SIZE_QUOTA,
        metavar="MIB",
        help="unrestricted mode: MiB the database may grow by while served; a call past it is "
        f"stopped and rolled back (default {DEFAULT_SIZE_QUOTA // MIB}; 0 for no quota)",
    )
    made.add_argument(
        "--allow-superuser",
        action="store_true",
        help="accept a DSN whose role is a superuser or may read or write the server's files "
        "or run programs there (refused by default: a judge's SQL would act with those rights "
        "wherever the statement checks cannot see, e.g. inside functions and views)",
    )
    return made


async def _serve(arguments: argparse.Namespace) -> int:
    tool_server = sql_server(
        arguments.dsn,
        access=arguments.access_mode,
        max_rows=arguments.max_rows,
        statement_timeout=arguments.statement_timeout,
        max_value_bytes=arguments.max_value_bytes,
        max_answer_bytes=arguments.max_answer_bytes,
        size_quota=arguments.size_quota,
        allow_superuser=arguments.allow_superuser,
    )
    try:
        try:
            await tool_server.context.verify()
        except _STARTUP_FAILURES as refused:
            print(f"{PROG}: error: {refused}", file=sys.stderr)
            return 2
        await serve_stdio(tool_server.server())
        return 0
    finally:
        await tool_server.context.aclose()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, check the DSN's role, and serve until the client hangs up."""
    arguments = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(asyncio.run(_serve(arguments)))


if __name__ == "__main__":
    main()
