"""What the judges' SQL server lets a call run, decided on PostgreSQL's own parse of its SQL.

Owns parsing a call's SQL with ``pglast`` (the PostgreSQL parser built as a library) into
statements with their spans (``Script``), and the checks made on that parse before anything runs:

* in either access mode (``bounds_refusal``): calls of the functions of ``DENIED_FUNCTIONS``
  (server files, large objects, other databases, settings, other sessions, locks that outlive
  the call, SQL given as text) wherever they appear in a statement (subqueries, CTEs, the
  statement under EXPLAIN, attribute notation ``(x).f``) and however their name is written
  (schema-qualified, quoted); reads of the catalogs holding the server's secrets
  (``DENIED_RELATIONS``); ``COPY`` to or from a server file or program, ``ALTER SYSTEM``,
  ``LOAD``; and ``SET``/``RESET`` of the call's identity or limits (``LIMIT_SETTINGS``);
* in read-only mode (``read_only_refusal``), also every statement but queries (SELECT, VALUES,
  TABLE, WITH without writing parts, SHOW, EXPLAIN, SET/RESET of ordinary settings), SELECT INTO,
  row locks, and anything that would end, nest or change the call's READ ONLY transaction. SQL
  that does not parse is refused there: what cannot be inspected does not run.

What the parse cannot see: the bodies of the views, functions and triggers a database already
holds (they run with the caller's rights; the read-only transaction and the connection's role
are the walls there), and SQL text those bodies build at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pglast
from pglast import ast, enums
from pglast.parser import ParseError

from mcp_servers.sql.errors import SqlFailure, parse_error_text


class Refused(SqlFailure):
    """SQL refused by the checks of its access mode; nothing of it ran."""


@dataclass(frozen=True)
class Statement:
    """One statement of a script: its parse tree and its span (characters) in the script."""

    node: ast.Node
    start: int
    end: int


@dataclass(frozen=True)
class Script:
    """A call's SQL as the PostgreSQL parser sees it."""

    text: str
    statements: tuple[Statement, ...]

    def source(self, statement: Statement) -> str:
        """The text of ``statement`` (without its semicolon)."""
        return self.text[statement.start : statement.end]


def parse_script(text: str) -> Script:
    """Parse ``text``; raises ``SqlFailure`` worded as the server words a syntax error."""
    try:
        raw = pglast.parse_sql(text)
    except ParseError as error:
        message, location = error.args[0], error.args[1]
        raise SqlFailure(parse_error_text(str(message), text, int(location) + 1)) from None
    statements = []
    for item in raw:
        start = item.stmt_location or 0
        end = start + item.stmt_len if item.stmt_len else len(text)
        if item.stmt is not None:
            statements.append(Statement(item.stmt, start, end))
    return Script(text, tuple(statements))


def try_parse(text: str) -> Script | None:
    """The parse of ``text``, or None when the parser refuses it."""
    try:
        return parse_script(text)
    except SqlFailure:
        return None


def nodes(tree: Any) -> Iterator[ast.Node]:
    """Every node of a parse tree, the root included."""
    pending = [tree]
    while pending:
        item = pending.pop()
        if isinstance(item, ast.Node):
            yield item
            pending.extend(getattr(item, name) for name in item)
        elif isinstance(item, tuple | list):
            pending.extend(item)


def describe(statement: str) -> str:
    """The leading keywords of a statement (``DROP TABLE``), for messages."""
    words: list[str] = []
    for token in pglast.parser.scan(statement):
        if token.name in ("SQL_COMMENT", "C_COMMENT"):
            continue
        if token.kind == "NO_KEYWORD" or len(words) == 2:
            break
        words.append(statement[token.start : token.end + 1].upper())
    return " ".join(words) or "Such"


# ---------------------------------------------------------------------------------------------
# Deny-lists
# ---------------------------------------------------------------------------------------------

DENIED_FUNCTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), reason)
    for pattern, reason in (
        (
            r"pg_(read_file|read_binary_file|stat_file|ls_\w+|current_logfile|file_\w+|logdir_ls"
            r"|show_all_file_settings|hba_file_rules|ident_file_mappings)",
            "it reads, lists or writes files of the database server",
        ),
        (
            r"lo_(import|export|get|put|from_bytea|open|close|creat|create|unlink|lseek|lseek64"
            r"|tell|tell64|truncate|truncate64)|loread|lowrite",
            "large objects copy server files and outlive the call",
        ),
        (r"dblink\w*", "it connects to other databases"),
        (
            r"set_config",
            "it changes settings, this call's time limit included (SET changes ordinary ones)",
        ),
        (
            r"pg_(reload_conf|rotate_logfile\w*|promote|switch_wal|switch_xlog"
            r"|create_restore_point|backup_start|backup_stop|start_backup|stop_backup"
            r"|wal_replay_\w+|log_\w+|import_system_collations|stat_reset\w*"
            r"|stat_statements_reset)|binary_upgrade_\w+",
            "it administers the server",
        ),
        (r"pg_(cancel|terminate)_backend|pg_notify", "it signals other sessions"),
        (r"pg_(try_)?advisory_\w+", "advisory locks outlive the call and block other sessions"),
        (
            r"pg_(create|drop|copy)_\w*replication_slot|pg_replication_\w+|pg_logical_\w+"
            r"|pg_sync_replication_slots",
            "it manages replication",
        ),
        (
            r"(query|cursor|table|schema|database)_to_xml\w*|ts_stat|ts_rewrite",
            "it runs SQL given as text, which cannot be inspected before it runs",
        ),
        (r"txid_current|pg_current_xact_id", "it assigns a transaction id, which is a write"),
    )
)
"""Functions no judge call may name, each pattern (matched against the whole lower-cased name,
whatever its schema) with the reason given. ``pg_sleep`` is not here: the call's time limit and
the watchdog bound it; nor are ``nextval``/``setval``, which the read-only transaction refuses."""

DENIED_RELATIONS = frozenset(
    {
        "pg_authid",
        "pg_shadow",
        "pg_user_mapping",
        "pg_user_mappings",
        "pg_subscription",
        "pg_file_settings",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
    }
)
"""Catalogs holding password hashes, connection strings or the server's configuration files."""

LIMIT_SETTINGS = frozenset(
    {
        "role",
        "session_authorization",
        "session_replication_role",
        "statement_timeout",
        "lock_timeout",
        "idle_in_transaction_session_timeout",
        "idle_session_timeout",
        "transaction_timeout",
        "temp_file_limit",
        "work_mem",
        "maintenance_work_mem",
        "hash_mem_multiplier",
        "logical_decoding_work_mem",
        "temp_buffers",
    }
)
"""Settings no call may change: its identity, its time limits and the memory it may take."""

TRANSACTION_SETTINGS = frozenset(
    {
        "transaction_read_only",
        "default_transaction_read_only",
        "transaction_isolation",
        "default_transaction_isolation",
        "transaction_deferrable",
        "default_transaction_deferrable",
    }
)
"""Settings read-only mode keeps: the mode of the call's transaction."""

_FALSE_WORDS = frozenset({"false", "off", "no", "0"})


def _function_name(node: ast.Node) -> str | None:
    """The function a node calls by name: ``f(...)``, or ``x.f`` / ``(x).f`` (attribute
    notation, which calls ``f(x)`` when no column ``f`` exists)."""
    if isinstance(node, ast.FuncCall) and node.funcname:
        last = node.funcname[-1]
        return last.sval if isinstance(last, ast.String) else None
    if isinstance(node, ast.ColumnRef) and node.fields and len(node.fields) > 1:
        last = node.fields[-1]
        return last.sval if isinstance(last, ast.String) else None
    return None


def _attribute_names(node: ast.A_Indirection) -> Iterator[str]:
    for item in node.indirection or ():
        if isinstance(item, ast.String) and item.sval:
            yield item.sval


def _denied_call(name: str) -> str | None:
    lowered = name.lower()
    for pattern, reason in DENIED_FUNCTIONS:
        if pattern.fullmatch(lowered):
            return f"{lowered}() is not allowed {{where}}: {reason}. Nothing was run."
    return None


def _denied_reference(node: ast.Node) -> str | None:
    """Why a node of a statement is refused in either mode, or None."""
    names = (
        _attribute_names(node)
        if isinstance(node, ast.A_Indirection)
        else iter([name] if (name := _function_name(node)) else [])
    )
    for name in names:
        refusal = _denied_call(name)
        if refusal is not None:
            return refusal
    relation = (node.relname or "").lower() if isinstance(node, ast.RangeVar) else ""
    if relation in DENIED_RELATIONS:
        return (
            f"reading {relation} is not allowed {{where}}: it holds the server's "
            "password hashes, connection strings or configuration. Nothing was run."
        )
    return None


def _setting_refusal(node: ast.VariableSetStmt, *, read_only: bool) -> str | None:
    verb = "RESET" if node.kind in (enums.VariableSetKind.VAR_RESET,) else "SET"
    if node.kind == enums.VariableSetKind.VAR_RESET_ALL:
        return (
            "RESET ALL is not allowed {where}: it would reset this call's time limit too; "
            "reset settings one by one. Nothing was run."
        )
    name = (node.name or "").lower()
    if node.kind == enums.VariableSetKind.VAR_SET_MULTI:
        if read_only:
            return _TRANSACTION_REFUSAL.format(what=f"SET {node.name}")
        return None
    if name in LIMIT_SETTINGS:
        return (
            f"{verb} {name} is not allowed {{where}}: a call may not change its role, its time "
            "limits or the memory it may use. Nothing was run."
        )
    if read_only and name in TRANSACTION_SETTINGS:
        return _TRANSACTION_REFUSAL.format(what=f"{verb} {name}")
    return None


def _statement_bounds(statement: ast.Node, *, read_only: bool) -> str | None:
    """Why one statement is refused in either mode (``{where}`` left to fill), or None."""
    if isinstance(statement, ast.CopyStmt) and (statement.is_program or statement.filename):
        return (
            "COPY to or from a file or program of the database server is not allowed {where}; "
            "query the table instead. Nothing was run."
        )
    if isinstance(statement, ast.AlterSystemStmt):
        return "ALTER SYSTEM is not allowed {where}: it changes the whole server. Nothing was run."
    if isinstance(statement, ast.LoadStmt):
        return "LOAD is not allowed {where}: it loads code into the server. Nothing was run."
    if isinstance(statement, ast.VariableSetStmt):
        refusal = _setting_refusal(statement, read_only=read_only)
        if refusal is not None:
            return refusal
    for node in nodes(statement):
        refusal = _denied_reference(node)
        if refusal is not None:
            return refusal
    return None


# ---------------------------------------------------------------------------------------------
# Read-only mode
# ---------------------------------------------------------------------------------------------

READ_ONLY = "in read-only mode"
ANY_MODE = "on this server"

_TRANSACTION_REFUSAL = (
    "{what} is not allowed in read-only mode: every call runs inside its own READ ONLY "
    "transaction, which the server always rolls back, and statements that end, nest or change "
    "that transaction are refused. Nothing was run."
)
_QUERY_REFUSAL = (
    "{what} statements are not allowed in read-only mode: only queries run here (SELECT, WITH, "
    "VALUES, TABLE, SHOW, EXPLAIN, and SET/RESET of ordinary settings). Nothing was run."
)


def writes_in(tree: ast.Node) -> bool:
    """Whether a statement holds a WITH query that writes (INSERT, UPDATE, DELETE, MERGE)."""
    return any(
        isinstance(node, ast.CommonTableExpr) and not isinstance(node.ctequery, ast.SelectStmt)
        for node in nodes(tree)
    )


def _query_refusal(query: ast.Node) -> str | None:
    """Why read-only mode refuses a SELECT (or VALUES, TABLE, WITH), or None."""
    for node in nodes(query):
        if isinstance(node, ast.SelectStmt) and node.intoClause is not None:
            return (
                "SELECT INTO is not allowed in read-only mode: it creates a table. Nothing was run."
            )
        if isinstance(node, ast.LockingClause):
            return (
                "SELECT ... FOR UPDATE/SHARE is not allowed in read-only mode: it locks rows "
                "other sessions may be waiting to change. Nothing was run."
            )
        if isinstance(node, ast.CommonTableExpr) and not isinstance(node.ctequery, ast.SelectStmt):
            return (
                "A WITH query that writes (INSERT, UPDATE, DELETE or MERGE) is not allowed in "
                "read-only mode. Nothing was run."
            )
    return None


def _turned_off(value: Any) -> bool:
    """Whether an option's value says no (``false``, ``off``, ``0``...)."""
    if isinstance(value, ast.String):
        return (value.sval or "").lower() in _FALSE_WORDS
    if isinstance(value, ast.Integer):
        return value.ival == 0
    return isinstance(value, ast.Boolean) and not value.boolval


def analyzes(statement: ast.ExplainStmt) -> bool:
    """Whether an EXPLAIN runs its statement (ANALYZE given and not turned off)."""
    for option in statement.options or ():
        if isinstance(option, ast.DefElem) and (option.defname or "").lower() == "analyze":
            return not _turned_off(option.arg)
    return False


_EXPLAINABLE = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.MergeStmt)


def _read_only_statement(statement: ast.Node, text: str) -> str | None:  # noqa: PLR0911 - kinds
    """Why read-only mode refuses the kind of one statement, or None."""
    if isinstance(statement, ast.SelectStmt):
        return _query_refusal(statement)
    if isinstance(statement, ast.VariableShowStmt | ast.VariableSetStmt):
        return None  # SET is checked with the bounds
    if isinstance(statement, ast.ExplainStmt):
        inner = statement.query
        if analyzes(statement):
            if not isinstance(inner, ast.SelectStmt):
                return (
                    f"EXPLAIN ANALYZE of {type(inner).__name__.removesuffix('Stmt').upper()} is "
                    "not allowed in read-only mode: ANALYZE runs the statement, and only queries "
                    "(SELECT, WITH, VALUES or TABLE) run here; plain EXPLAIN shows its plan. "
                    "Nothing was run."
                )
            return _query_refusal(inner)
        if not isinstance(inner, _EXPLAINABLE):
            return _QUERY_REFUSAL.format(what="EXPLAIN of such")
        return None
    if isinstance(statement, ast.TransactionStmt):
        return _TRANSACTION_REFUSAL.format(what=describe(text))
    return _QUERY_REFUSAL.format(what=describe(text))


def _numbered(script: Script, number: int, refusal: str) -> str:
    count = len(script.statements)
    return (f"Statement {number} of {count}: " if count > 1 else "") + refusal


def read_only_refusal(script: Script) -> str | None:
    """Why read-only mode refuses ``script`` (naming the statement), or None when it may run."""
    for number, statement in enumerate(script.statements, 1):
        refusal = _read_only_statement(statement.node, script.source(statement))
        if refusal is None:
            refusal = _statement_bounds(statement.node, read_only=True)
        if refusal is not None:
            return _numbered(script, number, refusal.replace("{where}", READ_ONLY))
    return None


def bounds_refusal(script: Script) -> str | None:
    """Why unrestricted mode refuses ``script``, or None (the role's privileges decide the rest)."""
    for number, statement in enumerate(script.statements, 1):
        refusal = _statement_bounds(statement.node, read_only=False)
        if refusal is not None:
            return _numbered(script, number, refusal.replace("{where}", ANY_MODE))
    return None


def checked_script(sql: str, *, read_only: bool) -> Script | None:
    """The parse of a call's SQL once the checks of its mode pass.

    Raises ``Refused`` naming the cause, or ``SqlFailure`` (the parser's syntax error) when
    read-only SQL does not parse. Unrestricted SQL that does not parse gives None: it goes to the
    server, which words the error (the role's privileges are the wall there).
    """
    if read_only:
        script = parse_script(sql)
        refusal = read_only_refusal(script)
    else:
        parsed = try_parse(sql)
        if parsed is None:
            return None
        script = parsed
        refusal = bounds_refusal(script)
    if refusal is not None:
        raise Refused(refusal)
    return script


def explain_target(sql: str, *, read_only: bool, analyze: bool) -> str:
    """The text of the one statement ``explain_query`` may explain (without its semicolon);
    raises ``Refused`` or ``SqlFailure``."""
    script = parse_script(sql)
    if len(script.statements) != 1:
        raise Refused(
            "explain_query takes exactly one statement; "
            f"this SQL has {len(script.statements)}. Nothing was run."
        )
    statement = script.statements[0]
    if not isinstance(statement.node, _EXPLAINABLE):
        raise Refused(
            "explain_query explains one SELECT, WITH, VALUES, TABLE, INSERT, UPDATE, DELETE or "
            f"MERGE statement, not {describe(script.source(statement))}. Nothing was run."
        )
    where = READ_ONLY if read_only else ANY_MODE
    refusal = _statement_bounds(statement.node, read_only=read_only)
    if refusal is None and read_only and analyze:
        if not isinstance(statement.node, ast.SelectStmt):
            refusal = (
                f"analyze of {describe(script.source(statement))} is not allowed in read-only "
                "mode: analyze runs the statement, and only queries (SELECT, WITH, VALUES or "
                "TABLE) run here; without analyze its plan is shown. Nothing was run."
            )
        else:
            refusal = _query_refusal(statement.node)
    if refusal is not None:
        raise Refused(refusal.replace("{where}", where))
    return script.source(statement)
