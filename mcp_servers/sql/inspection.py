"""What the judges' SQL server lets a call run, decided on PostgreSQL's own parse of its SQL.

Owns parsing a call's SQL with ``pglast`` (the PostgreSQL parser built as a library) into
statements with their spans (``Script``), the checks made on that parse before anything runs,
and the names PostgreSQL gives a query's columns (``output_names``):

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

The tree is pglast's JSON form (several times cheaper to get than its Python objects): a node is
``{"Kind": {fields}}``, and fields of a fixed node type hold their fields without the wrapper.

What the parse cannot see: the bodies of the views, functions and triggers a database already
holds (they run with the caller's rights; the read-only transaction and the connection's role
are the walls there), and SQL text those bodies build at run time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pglast
from pglast.parser import ParseError

from mcp_servers.sql.errors import SqlFailure, parse_error_text


class Refused(SqlFailure):
    """SQL refused by the checks of its access mode; nothing of it ran."""


Fields = dict[str, Any]


@dataclass
class Facts:
    """What one walk through a statement's tree found."""

    denied: str | None = None
    """Why a reference in it is refused in any mode (``{where}`` left to fill), or None."""
    into: bool = False
    """Whether it holds a SELECT INTO."""
    locks: bool = False
    """Whether it locks rows (FOR UPDATE/SHARE)."""
    writes: bool = False
    """Whether it holds a WITH query that writes (INSERT, UPDATE, DELETE, MERGE)."""


@dataclass(frozen=True)
class Statement:
    """One statement of a script: its kind (``SelectStmt``), fields and span (characters)."""

    kind: str
    fields: Fields = field(compare=False)
    start: int
    end: int

    @cached_property
    def facts(self) -> Facts:
        """What its tree holds (walked once, on first use)."""
        return _scan(self.fields)


@dataclass(frozen=True)
class Script:
    """A call's SQL as the PostgreSQL parser sees it."""

    text: str
    statements: tuple[Statement, ...]

    def source(self, statement: Statement) -> str:
        """The text of ``statement`` (without its semicolon)."""
        return self.text[statement.start : statement.end]


def kind_of(node: Any) -> str | None:
    """The kind of a node (``{"FuncCall": {...}}``), None for anything else."""
    if isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        if key[:1].isupper() and isinstance(node[key], dict):
            return str(key)
    return None


def _characters(text: str) -> Callable[[int], int]:
    """Byte offsets (the parser's) to character offsets in ``text``."""
    if text.isascii():
        return lambda offset: offset
    encoded = text.encode()
    return lambda offset: len(encoded[:offset].decode(errors="ignore"))


def parse_script(text: str) -> Script:
    """Parse ``text``; raises ``SqlFailure`` worded as the server words a syntax error."""
    try:
        tree = json.loads(pglast.parser.parse_sql_json(text))
    except ParseError as error:
        message, location = error.args[0], error.args[1]
        raise SqlFailure(parse_error_text(str(message), text, int(location) + 1)) from None
    character = _characters(text)
    statements = []
    for item in tree.get("stmts", ()):
        kind = kind_of(item.get("stmt"))
        if kind is None:
            continue
        start = item.get("stmt_location", 0)
        length = item.get("stmt_len", 0)
        end = character(start + length) if length else len(text)
        statements.append(Statement(kind, item["stmt"][kind], character(start), end))
    return Script(text, tuple(statements))


def try_parse(text: str) -> Script | None:
    """The parse of ``text``, or None when the parser refuses it."""
    try:
        return parse_script(text)
    except SqlFailure:
        return None


def _scan(tree: Any) -> Facts:
    """Walk a tree once (every node, and the fields of fixed-type members) for ``Facts``."""
    facts = Facts()
    pending = [tree]
    while pending:
        item = pending.pop()
        if type(item) is list:
            pending.extend(item)
            continue
        if type(item) is not dict:
            continue
        kind = None
        if len(item) == 1:
            key, body = next(iter(item.items()))
            if key[:1].isupper() and type(body) is dict:
                kind, item = key, body
        if facts.denied is None and (
            "funcname" in item or "relname" in item or kind in _REFERENCES
        ):
            facts.denied = _denied_reference(kind, item)
        if "intoClause" in item:
            facts.into = True
        elif kind == "LockingClause":
            facts.locks = True
        elif kind == "CommonTableExpr" and kind_of(item.get("ctequery")) != "SelectStmt":
            facts.writes = True
        pending += [value for value in item.values() if type(value) in _CONTAINERS]
    return facts


_REFERENCES = frozenset({"ColumnRef", "A_Indirection"})
_CONTAINERS = (dict, list)


def _string(node: Any) -> str | None:
    """The text of a ``String`` node, None for any other node."""
    return str(node["String"].get("sval", "")) if kind_of(node) == "String" else None


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

_ANY_DENIED = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in DENIED_FUNCTIONS))

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


def _called_names(kind: str | None, fields: Fields) -> Iterator[str]:
    """The functions a node calls (or defines) by name: ``f(...)`` and ``CALL f()`` (their
    ``funcname``), and ``x.f`` / ``(x).f`` (attribute notation, which calls ``f(x)`` when no
    column ``f`` exists)."""
    funcname = fields.get("funcname")
    if isinstance(funcname, list) and funcname:
        name = _string(funcname[-1])
        if name is not None:
            yield name
    if kind == "ColumnRef":
        names = fields.get("fields", ())
        if len(names) > 1 and (name := _string(names[-1])) is not None:
            yield name
    elif kind == "A_Indirection":
        for item in fields.get("indirection", ()):
            if (name := _string(item)) is not None:
                yield name


def _denied_call(name: str) -> str | None:
    lowered = name.lower()
    if not _ANY_DENIED.fullmatch(lowered):
        return None
    for pattern, reason in DENIED_FUNCTIONS:
        if pattern.fullmatch(lowered):
            return f"{lowered}() is not allowed {{where}}: {reason}. Nothing was run."
    return None


def _denied_reference(kind: str | None, fields: Fields) -> str | None:
    """Why one node of a statement is refused in either mode, or None."""
    for name in _called_names(kind, fields):
        refusal = _denied_call(name)
        if refusal is not None:
            return refusal
    relation = fields.get("relname")
    if isinstance(relation, str) and relation.lower() in DENIED_RELATIONS:
        return (
            f"reading {relation.lower()} is not allowed {{where}}: it holds the server's "
            "password hashes, connection strings or configuration. Nothing was run."
        )
    return None


def _setting_refusal(fields: Fields, *, read_only: bool) -> str | None:
    kind = fields.get("kind", "VAR_SET_VALUE")
    if kind == "VAR_RESET_ALL":
        return (
            "RESET ALL is not allowed {where}: it would reset this call's time limit too; "
            "reset settings one by one. Nothing was run."
        )
    if kind == "VAR_SET_MULTI":  # SET TRANSACTION ..., SET SESSION CHARACTERISTICS ...
        return _TRANSACTION_REFUSAL.format(what=f"SET {fields.get('name')}") if read_only else None
    verb = "RESET" if kind == "VAR_RESET" else "SET"
    name = str(fields.get("name", "")).lower()
    if name in LIMIT_SETTINGS:
        return (
            f"{verb} {name} is not allowed {{where}}: a call may not change its role, its time "
            "limits or the memory it may use. Nothing was run."
        )
    if read_only and name in TRANSACTION_SETTINGS:
        return _TRANSACTION_REFUSAL.format(what=f"{verb} {name}")
    return None


def _statement_bounds(statement: Statement, *, read_only: bool) -> str | None:
    """Why one statement is refused in either mode (``{where}`` left to fill), or None."""
    kind, fields = statement.kind, statement.fields
    if kind == "CopyStmt" and (fields.get("is_program") or fields.get("filename")):
        return (
            "COPY to or from a file or program of the database server is not allowed {where}; "
            "query the table instead. Nothing was run."
        )
    if kind == "AlterSystemStmt":
        return "ALTER SYSTEM is not allowed {where}: it changes the whole server. Nothing was run."
    if kind == "LoadStmt":
        return "LOAD is not allowed {where}: it loads code into the server. Nothing was run."
    if kind == "VariableSetStmt":
        refusal = _setting_refusal(fields, read_only=read_only)
        if refusal is not None:
            return refusal
    return statement.facts.denied


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


def _query_refusal(statement: Statement) -> str | None:
    """Why read-only mode refuses a SELECT (or VALUES, TABLE, WITH; or the query under an
    EXPLAIN ANALYZE), or None."""
    facts = statement.facts
    if facts.into:
        return "SELECT INTO is not allowed in read-only mode: it creates a table. Nothing was run."
    if facts.locks:
        return (
            "SELECT ... FOR UPDATE/SHARE is not allowed in read-only mode: it locks rows "
            "other sessions may be waiting to change. Nothing was run."
        )
    if facts.writes:
        return (
            "A WITH query that writes (INSERT, UPDATE, DELETE or MERGE) is not allowed in "
            "read-only mode. Nothing was run."
        )
    return None


def _turned_off(value: Any) -> bool:
    """Whether an option's value says no (``false``, ``off``, ``0``...)."""
    kind = kind_of(value)
    if kind == "String":
        return str(value[kind].get("sval", "")).lower() in _FALSE_WORDS
    if kind == "Integer":
        return not value[kind].get("ival", 0)
    return kind == "Boolean" and not value[kind].get("boolval", False)


def analyzes(fields: Fields) -> bool:
    """Whether an EXPLAIN (its fields) runs its statement: ANALYZE given and not turned off."""
    for option in fields.get("options", ()):
        if kind_of(option) == "DefElem":
            element = option["DefElem"]
            if str(element.get("defname", "")).lower() == "analyze":
                return not _turned_off(element.get("arg"))
    return False


_EXPLAINABLE = frozenset({"SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})


def _kind_words(kind: str | None) -> str:
    return (kind or "").removesuffix("Stmt").upper() or "such"


def _read_only_statement(statement: Statement, text: str) -> str | None:  # noqa: PLR0911
    """Why read-only mode refuses the kind of one statement, or None."""
    kind, fields = statement.kind, statement.fields
    if kind == "SelectStmt":
        return _query_refusal(statement)
    if kind in ("VariableShowStmt", "VariableSetStmt"):
        return None  # SET is checked with the bounds
    if kind == "ExplainStmt":
        inner = fields.get("query")
        inner_kind = kind_of(inner)
        if analyzes(fields):
            if inner_kind != "SelectStmt" or inner is None:
                return (
                    f"EXPLAIN ANALYZE of {_kind_words(inner_kind)} is not allowed in read-only "
                    "mode: ANALYZE runs the statement, and only queries (SELECT, WITH, VALUES or "
                    "TABLE) run here; plain EXPLAIN shows its plan. Nothing was run."
                )
            return _query_refusal(statement)
        if inner_kind not in _EXPLAINABLE:
            return _QUERY_REFUSAL.format(what="EXPLAIN of such")
        return None
    if kind == "TransactionStmt":
        return _TRANSACTION_REFUSAL.format(what=describe(text))
    return _QUERY_REFUSAL.format(what=describe(text))


def _numbered(script: Script, number: int, refusal: str) -> str:
    count = len(script.statements)
    return (f"Statement {number} of {count}: " if count > 1 else "") + refusal


def read_only_refusal(script: Script) -> str | None:
    """Why read-only mode refuses ``script`` (naming the statement), or None when it may run."""
    for number, statement in enumerate(script.statements, 1):
        refusal = _read_only_statement(statement, script.source(statement))
        if refusal is None:
            refusal = _statement_bounds(statement, read_only=True)
        if refusal is not None:
            return _numbered(script, number, refusal.replace("{where}", READ_ONLY))
    return None


def bounds_refusal(script: Script) -> str | None:
    """Why unrestricted mode refuses ``script``, or None (the role's privileges decide the rest)."""
    for number, statement in enumerate(script.statements, 1):
        refusal = _statement_bounds(statement, read_only=False)
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
    if statement.kind not in _EXPLAINABLE:
        raise Refused(
            "explain_query explains one SELECT, WITH, VALUES, TABLE, INSERT, UPDATE, DELETE or "
            f"MERGE statement, not {describe(script.source(statement))}. Nothing was run."
        )
    where = READ_ONLY if read_only else ANY_MODE
    refusal = _statement_bounds(statement, read_only=read_only)
    if refusal is None and read_only and analyze:
        if statement.kind != "SelectStmt":
            refusal = (
                f"analyze of {describe(script.source(statement))} is not allowed in read-only "
                "mode: analyze runs the statement, and only queries (SELECT, WITH, VALUES or "
                "TABLE) run here; without analyze its plan is shown. Nothing was run."
            )
        else:
            refusal = _query_refusal(statement)
    if refusal is not None:
        raise Refused(refusal.replace("{where}", where))
    return script.source(statement)


# ---------------------------------------------------------------------------------------------
# Column names
# ---------------------------------------------------------------------------------------------

_NAMED_LIKE_FUNCTIONS = {
    "CoalesceExpr": "coalesce",
    "A_ArrayExpr": "array",
    "RowExpr": "row",
    "GroupingFunc": "grouping",
}
_UNNAMED = frozenset({"A_Const", "BoolExpr", "NullTest", "BooleanTest", "ParamRef"})


def _figure(node: Any) -> tuple[str, int] | None:  # noqa: PLR0911, PLR0912 - a rule per kind
    """PostgreSQL's name for a target expression and how strongly it holds (its
    ``FigureColname``: 2 a name, 1 a fallback, 0 none), or None for forms not followed here."""
    kind = kind_of(node)
    if kind is None:
        return None
    fields = node[kind]
    if kind in ("ColumnRef", "A_Indirection"):
        items = fields.get("fields" if kind == "ColumnRef" else "indirection", ())
        if any(kind_of(item) == "A_Star" for item in items):
            return None  # a star expands to columns the parse cannot count
        names = [name for item in items if (name := _string(item)) is not None]
        if names:
            return (names[-1], 2)
        return _figure(fields.get("arg")) if kind == "A_Indirection" else None
    if kind == "FuncCall":
        name = _string(fields["funcname"][-1])
        return (name, 2) if name is not None else None
    if kind == "A_Expr":
        return ("nullif", 2) if fields.get("kind") == "AEXPR_NULLIF" else ("?column?", 0)
    if kind == "TypeCast":
        inner = _figure(fields.get("arg"))
        if inner is None or inner[1] > 1:
            return inner
        type_name = _string((fields.get("typeName", {}).get("names") or [None])[-1])
        return (type_name, 1) if type_name is not None else inner
    if kind == "CollateClause":
        return _figure(fields.get("arg"))
    if kind == "CaseExpr":
        inner = _figure(fields["defresult"]) if "defresult" in fields else ("?column?", 0)
        if inner is None or inner[1] > 1:
            return inner
        return ("case", 1)
    if kind == "MinMaxExpr":
        return ("greatest" if fields.get("op") == "IS_GREATEST" else "least", 2)
    if kind == "SubLink":
        return _sublink_name(fields)
    if kind in _NAMED_LIKE_FUNCTIONS:
        return (_NAMED_LIKE_FUNCTIONS[kind], 2)
    if kind in _UNNAMED:
        return ("?column?", 0)
    return None


def _sublink_name(fields: Fields) -> tuple[str, int] | None:
    link = fields.get("subLinkType")
    if link == "EXISTS_SUBLINK":
        return ("exists", 2)
    if link == "ARRAY_SUBLINK":
        return ("array", 2)
    if link == "EXPR_SUBLINK" and kind_of(fields.get("subselect")) == "SelectStmt":
        # the subquery's first column, named as that column is (a name always holds here)
        inner = _select_names(fields["subselect"]["SelectStmt"])
        return (inner[0], 2) if inner else None
    return None


def _target_names(targets: list[Any]) -> list[str] | None:
    names = []
    for target in targets:
        if kind_of(target) != "ResTarget":
            return None
        fields = target["ResTarget"]
        value = fields.get("val")
        if "name" in fields:
            names.append(str(fields["name"]))
            continue
        figured = _figure(value)
        if figured is None:
            return None
        names.append(figured[0] if figured[1] > 0 else "?column?")
    return names


def _select_names(fields: Fields) -> list[str] | None:
    if fields.get("op", "SETOP_NONE") != "SETOP_NONE":
        larg = fields.get("larg")
        return _select_names(larg) if isinstance(larg, dict) else None
    values = fields.get("valuesLists")
    if values:
        first = values[0].get("List", {}).get("items", []) if isinstance(values[0], dict) else []
        return [f"column{number}" for number in range(1, len(first) + 1)] or None
    targets = fields.get("targetList")
    return _target_names(targets) if targets else None


def output_names(statement: Statement) -> list[str] | None:
    """The names PostgreSQL gives the columns of a query (or of a write's RETURNING), as it
    would describe them; None when the parse alone cannot tell (``*``, rarer expressions)."""
    if statement.kind == "SelectStmt":
        return _select_names(statement.fields)
    returning = statement.fields.get("returningClause") or {}
    targets = returning.get("exprs") if isinstance(returning, dict) else None
    if statement.kind in ("InsertStmt", "UpdateStmt", "DeleteStmt") and targets:
        return _target_names(targets)
    return None
