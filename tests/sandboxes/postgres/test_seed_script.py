"""Reading seeds with psql's lexical rules: statements and their lines, COPY data, quoting and
comments, and every psql meta-command refused with the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset.assets import state_file
from dataset.models import SqlSeedState
from dataset.store import load_dataset
from sandboxes.base import SandboxError
from sandboxes.postgres.seed_script import SeedStatement, read_seed
from tests.shared_data import SHARED, needs_shared

REPOSITORY = Path(__file__).resolve().parents[3]
MCPMARK_SAMPLE = SHARED / "mcpmark-sample"
SEED = Path("/data/task/seed.sql")


def read(text: str) -> list[SeedStatement]:
    return read_seed(text.encode(), SEED)


def test_statements_are_split_where_psql_splits_them() -> None:
    script = (
        "-- a comment; with a semicolon \\and a backslash\n"
        "CREATE TABLE t (a text DEFAULT ';', b text DEFAULT E'it\\'s; \\\\ fine');\n"
        "/* block /* nested ; \\! */ still comment ; */ INSERT INTO t VALUES ('x''y;');\n"
        'CREATE TABLE "we;ird""name" (c integer);\n'
        "CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $fn$\n"
        "BEGIN RETURN 'a;b' || $$;\\n$$; END;\n$fn$;\n"
        "CREATE RULE r AS ON INSERT TO t DO ALSO (SELECT 1; SELECT 2);\n"
        "CREATE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC\n"
        "  SELECT CASE WHEN true THEN 1 END; SELECT 2;\nEND;\n"
        "SELECT a$b$c FROM (SELECT 1 AS a$b$c) s; SELECT $1\n"
    )
    statements = read(script)
    assert [(s.line, s.sql.split()[0], s.sql.rstrip()[-1]) for s in statements] == [
        (2, "CREATE", ";"),
        (3, "INSERT", ";"),
        (4, "CREATE", ";"),
        (5, "CREATE", ";"),
        (8, "CREATE", ";"),
        (9, "CREATE", ";"),
        (12, "SELECT", ";"),
        (12, "SELECT", "1"),  # the last statement needs no semicolon, as in psql
    ]
    assert statements[1].sql == "INSERT INTO t VALUES ('x''y;');"
    assert statements[4].sql.endswith("(SELECT 1; SELECT 2);")
    assert all(statement.copy_data is None for statement in statements)


def test_copy_data_is_taken_whole_up_to_its_end_marker() -> None:
    script = (
        "\\restrict AbC123\n"
        "SET standard_conforming_strings = on;\n"
        "COPY public.t (a, b) FROM stdin;\n"
        "1\t\\\\! not a command\n"
        "2\t\\N\n"
        "\\.\n"
        "copy t from STDIN with (format csv);  -- trailing comment is fine\n"
        "3,'; \\gexec'\n"
        "\\.\n"
        "COPY (SELECT 'from stdin') TO STDOUT;\n"
        "\\unrestrict AbC123\n"
    )
    statements = read(script)
    assert [(s.line, s.copy_data) for s in statements] == [
        (2, None),
        (3, b"1\t\\\\! not a command\n2\t\\N\n"),
        (7, b"3,'; \\gexec'\n"),
        (10, None),
    ]


@pytest.mark.parametrize(
    ("script", "line", "command"),
    [
        ("\\! touch /tmp/x\n", 1, "\\!"),
        ("CREATE TABLE t (a int);\n\\connect other\n", 2, "\\connect"),
        ("\\set ON_ERROR_STOP 0\n", 1, "\\set"),
        ("\\copy t FROM '/etc/passwd'\n", 1, "\\copy"),
        ("SELECT 'DROP TABLE t' \\gexec\n", 1, "\\gexec"),
        ("SELECT 1;\n\n\\i /etc/passwd\n", 3, "\\i"),
        ("SELECT 1 \\\\ SELECT 2;\n", 1, "\\\\"),
        ("\\.\n", 1, "\\."),
        ("\\getenv key OPENAI_API_KEY\n", 1, "\\getenv"),
        ("\\restrict\n", 1, "\\restrict"),  # a fence needs its key
        # A standard string ends at its quote: what follows is psql's again.
        ("SELECT 'a\\' \\! touch /tmp/x\n", 1, "\\!"),
        ("COPY t FROM stdin;\n1\n\\.\n\\! touch /tmp/x\n", 4, "\\!"),
        ("/* \\! in a comment */ SELECT 1;\n-- \\! too\n/*\n*/\\! but not here\n", 4, "\\!"),
    ],
)
def test_meta_commands_are_refused_naming_file_and_line(
    script: str, line: int, command: str
) -> None:
    with pytest.raises(SandboxError) as caught:
        read(script)
    message = str(caught.value)
    assert message.startswith(f"seed {SEED}: line {line}: psql meta-command {command} ")
    assert "seeds are SQL only" in message


def test_text_after_a_copy_statement_on_its_line_and_bad_bytes_are_refused() -> None:
    with pytest.raises(SandboxError, match=r"line 2: SQL after `COPY \.\.\. FROM stdin;`"):
        read("SELECT 1;\nCOPY t FROM stdin; SELECT 2;\n1\n\\.\n")
    with pytest.raises(SandboxError, match=r"seed /data/task/seed\.sql: line 2: not UTF-8"):
        read_seed(b"SELECT 1;\nSELECT '\xff';\n", SEED)
    with pytest.raises(SandboxError, match=r"line 3: contains a null byte"):
        read_seed(b"SELECT 1;\n\nSELECT '\x00';\n", SEED)


def test_the_ds_suite_seeds_read_as_sql() -> None:
    # Every seed a task names: the two schemas' shared seeds (``dataset:assets/...``, named by
    # eleven tasks) and the one task that keeps its own.
    ds = REPOSITORY / "datasets" / "ds"
    dataset = load_dataset(ds)
    seeds = sorted(
        {
            state_file(ds / "tasks" / task.id, state.path)
            for task in dataset.tasks.values()
            if isinstance(state := task.initial_state, SqlSeedState) and state.path is not None
        }
    )
    assert len(seeds) == 3
    for seed in seeds:
        statements = read_seed(seed.read_bytes(), seed)
        assert len(statements) > 10, seed
        assert all(statement.sql.rstrip().endswith(";") for statement in statements), seed


@needs_shared(MCPMARK_SAMPLE, "the MCPMark sample")
def test_the_mcpmark_chinook_dump_reads_with_its_copy_blocks() -> None:
    seed = MCPMARK_SAMPLE / "environments" / "chinook.sql"
    statements = read_seed(seed.read_bytes(), seed)
    copies = [statement for statement in statements if statement.copy_data is not None]
    assert len(copies) == 11
    tracks = next(statement for statement in copies if '"Track"' in statement.sql)
    assert tracks.line == 12361
    assert tracks.copy_data is not None
    assert tracks.copy_data.count(b"\n") == 3503  # Chinook's 3,503 tracks
