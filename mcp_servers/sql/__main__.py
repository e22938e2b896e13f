"""``python -m mcp_servers.sql --dsn DSN``: the SQL MCP server over stdio, for any MCP client."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from mcp_servers.serving import serve_stdio
from mcp_servers.sql.judge_server import DEFAULT_MAX_ROWS, DEFAULT_STATEMENT_TIMEOUT, sql_server


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def parser() -> argparse.ArgumentParser:
    """The command line."""
    made = argparse.ArgumentParser(
        prog="python -m mcp_servers.sql",
        description=(
            "Serve the SQL tools (list_schemas, list_objects, get_object_details, execute_sql, "
            "explain_query, analyze_db_health, get_top_queries, ...) over stdio for one "
            "PostgreSQL database. In read-only mode every call runs in a READ ONLY transaction "
            "that is always rolled back, and statements other than queries are refused before "
            "they run; the connection itself uses the role the DSN names, whatever that role "
            "may do, so give it a role without write privileges for a real barrier."
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
    return made


async def _serve(arguments: argparse.Namespace) -> None:
    tool_server = sql_server(
        arguments.dsn,
        access=arguments.access_mode,
        max_rows=arguments.max_rows,
        statement_timeout=arguments.statement_timeout,
    )
    try:
        await serve_stdio(tool_server.server())
    finally:
        await tool_server.context.aclose()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until the client hangs up."""
    arguments = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(_serve(arguments))


if __name__ == "__main__":
    main()
