"""The normalisation rules: what may differ between recording and replay, and what may not.

Each output goes through the ``normalise_output`` of the kind whose agents' tool it is (the
shared rules of ``environments.comparison`` and the kind's own)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from environments.filesystem.kind import KIND as FILESYSTEM
from environments.kind import EnvironmentKind
from environments.postgres.comparison import split_top_level
from environments.postgres.kind import KIND as POSTGRES


def normalise_output(
    text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
) -> str:
    kinds: list[EnvironmentKind] = [FILESYSTEM, POSTGRES]
    kind = next(kind for kind in kinds if kind.tool_spec(tool) is not None)
    return kind.normalise_output(text, tool=tool, arguments=arguments, root=root)


def test_the_sandbox_root_becomes_the_placeholder() -> None:
    text = "Successfully wrote to /tmp/aj/aj_x_fs_1/notes/a.md"
    assert (
        normalise_output(text, tool="write_file", root="/tmp/aj/aj_x_fs_1")
        == "Successfully wrote to ${SANDBOX_ROOT}/notes/a.md"
    )


def test_date_times_are_masked_but_dates_are_data() -> None:
    recorded = "[{'id': 1, 'day': datetime.date(2024, 3, 4), 'at': '2024-03-04T10:00:00.123Z'}]"
    replayed = "[{'id': 1, 'day': datetime.date(2024, 3, 4), 'at': '2026-11-29T23:59:01.5Z'}]"
    assert normalise_output(recorded, tool="execute_sql") == normalise_output(
        replayed, tool="execute_sql"
    )
    changed_date = replayed.replace("2024, 3, 4", "2024, 3, 5")
    assert normalise_output(recorded, tool="execute_sql") != normalise_output(
        changed_date, tool="execute_sql"
    )


@pytest.mark.parametrize(
    "moment",
    [
        "2024-03-04 10:00:00+00",
        "2024-03-04T10:00",
        "Mon Mar 04 2024 10:00:00 GMT+0000 (Coordinated Universal Time)",
        "datetime.datetime(2024, 3, 4, 10, 0, tzinfo=datetime.timezone.utc)",
    ],
)
def test_every_date_time_format_is_masked(moment: str) -> None:
    assert normalise_output(f"at {moment}.", tool="execute_sql") == "at <DATETIME>."


def test_uuids_are_masked() -> None:
    assert (
        normalise_output("id 123e4567-e89b-12d3-a456-426614174000 ok", tool="execute_sql")
        == "id <UUID> ok"
    )


def test_file_info_times_are_masked_and_sizes_kept() -> None:
    recorded = "size: 10\ncreated: Mon Mar 04 2024\nmodified: x\naccessed: y\nisFile: true"
    replayed = "size: 10\ncreated: Sun Nov 29 2026\nmodified: z\naccessed: w\nisFile: true"
    assert normalise_output(recorded, tool="get_file_info") == normalise_output(
        replayed, tool="get_file_info"
    )
    assert normalise_output(recorded, tool="get_file_info") != normalise_output(
        replayed.replace("size: 10", "size: 11"), tool="get_file_info"
    )


def test_listing_order_does_not_matter_but_content_does() -> None:
    first = "[FILE] b.txt\n[DIR] a"
    assert normalise_output(first, tool="list_directory") == normalise_output(
        "[DIR] a\n[FILE] b.txt", tool="list_directory"
    )
    assert normalise_output(first, tool="list_directory") != normalise_output(
        "[DIR] a\n[FILE] c.txt", tool="list_directory"
    )
    # Other tools keep their order: file contents are not sorted.
    assert normalise_output("b\na", tool="read_text_file") != normalise_output(
        "a\nb", tool="read_text_file"
    )


def test_directory_tree_json_ignores_child_order_and_key_order() -> None:
    recorded = json.dumps(
        [
            {
                "name": "d",
                "type": "directory",
                "children": [{"name": "y", "type": "file"}, {"name": "x", "type": "file"}],
            }
        ]
    )
    replayed = json.dumps(
        [
            {
                "type": "directory",
                "name": "d",
                "children": [{"name": "x", "type": "file"}, {"type": "file", "name": "y"}],
            }
        ]
    )
    assert normalise_output(recorded, tool="directory_tree") == normalise_output(
        replayed, tool="directory_tree"
    )
    assert normalise_output(recorded, tool="directory_tree") != normalise_output(
        replayed.replace('"x"', '"z"'), tool="directory_tree"
    )


def test_sql_rows_are_sorted_only_without_order_by() -> None:
    one = "[{'id': 1, 'name': 'a, [b]'}, {'id': 2, 'name': 'c'}]"
    two = "[{'id': 2, 'name': 'c'}, {'id': 1, 'name': 'a, [b]'}]"
    unordered = {"sql": "SELECT id, name FROM t"}
    ordered = {"sql": "SELECT id, name FROM t ORDER BY id"}
    assert normalise_output(one, tool="execute_sql", arguments=unordered) == normalise_output(
        two, tool="execute_sql", arguments=unordered
    )
    assert normalise_output(one, tool="execute_sql", arguments=ordered) != normalise_output(
        two, tool="execute_sql", arguments=ordered
    )
    supabase = {"query": "select * from t"}
    assert normalise_output(one, tool="execute_sql", arguments=supabase) == normalise_output(
        two, tool="execute_sql", arguments=supabase
    )


def test_line_endings_and_trailing_blanks_do_not_count() -> None:
    assert normalise_output("a  \r\nb\n\n", tool="read_text_file") == "a\nb"


@pytest.mark.parametrize(
    ("text", "elements"),
    [
        ("[]", []),
        ("[{'a': 1}]", ["{'a': 1}"]),
        ("[{'a': '}, {'}, {'b': (1, 2)}]", ["{'a': '}, {'}", "{'b': (1, 2)}"]),
        ('[{"q": "it\\"s, ok"}, 3]', ['{"q": "it\\"s, ok"}', "3"]),
    ],
)
def test_top_level_split(text: str, elements: list[str]) -> None:
    assert split_top_level(text) == elements


@pytest.mark.parametrize("text", ["No results", "[unbalanced", "[{'a': 1]", "Error: x"])
def test_non_lists_are_not_split(text: str) -> None:
    assert split_top_level(text) is None


def test_oids_in_not_null_constraint_names_are_masked() -> None:
    recorded = "[{'name': '2200_16384_1_not_null', 'type': 'CHECK'}]"
    replayed = "[{'name': '2200_24577_1_not_null', 'type': 'CHECK'}]"
    assert normalise_output(recorded, tool="get_object_details") == normalise_output(
        replayed, tool="get_object_details"
    )
    other_column = replayed.replace("_1_not_null", "_2_not_null")
    assert normalise_output(recorded, tool="get_object_details") != normalise_output(
        other_column, tool="get_object_details"
    )


def test_only_the_last_statement_decides_and_semicolons_in_strings_do_not_split() -> None:
    one = "[{'id': 1}, {'id': 2}]"
    two = "[{'id': 2}, {'id': 1}]"
    # ORDER BY in an earlier statement does not order the rows the last one returns.
    earlier = {"sql": "SELECT 1 ORDER BY 1; SELECT id FROM t"}
    assert normalise_output(one, tool="execute_sql", arguments=earlier) == normalise_output(
        two, tool="execute_sql", arguments=earlier
    )
    # A semicolon inside a comment is not a statement boundary: the ORDER BY still counts.
    quoted = {"sql": "SELECT id FROM t ORDER BY id -- oldest first; as asked"}
    assert normalise_output(one, tool="execute_sql", arguments=quoted) != normalise_output(
        two, tool="execute_sql", arguments=quoted
    )


def test_directory_sizes_do_not_decide_a_size_sorted_listing() -> None:
    totals = "\n\nTotal: 2 files, 2 directories"
    on_tmpfs = "[DIR] big\n[FILE] a.bin    2.00 KB\n[DIR] raw\n[FILE] b.txt   10 B" + totals
    on_ext4 = "[FILE] a.bin    2.00 KB\n[DIR] raw\n[DIR] big\n[FILE] b.txt   10 B" + totals
    arguments = {"path": "/x", "sortBy": "size"}
    assert normalise_output(on_tmpfs, tool="list_directory_with_sizes", arguments=arguments) == (
        normalise_output(on_ext4, tool="list_directory_with_sizes", arguments=arguments)
    )
    # the files' own order still counts
    swapped = "[FILE] b.txt   10 B\n[DIR] raw\n[DIR] big\n[FILE] a.bin    2.00 KB" + totals
    assert normalise_output(swapped, tool="list_directory_with_sizes", arguments=arguments) != (
        normalise_output(on_ext4, tool="list_directory_with_sizes", arguments=arguments)
    )
    by_name = {"path": "/x", "sortBy": "name"}
    assert normalise_output(on_tmpfs, tool="list_directory_with_sizes", arguments=by_name) != (
        normalise_output(on_ext4, tool="list_directory_with_sizes", arguments=by_name)
    )


def test_a_directorys_size_is_masked_in_get_file_info() -> None:
    directory = "size: 4096\ncreated: x\nmodified: x\naccessed: x\nisDirectory: true\nisFile: false"
    elsewhere = directory.replace("4096", "120")
    assert normalise_output(directory, tool="get_file_info") == normalise_output(
        elsewhere, tool="get_file_info"
    )
    file = directory.replace("isDirectory: true", "isDirectory: false")
    assert normalise_output(file, tool="get_file_info") != normalise_output(
        file.replace("4096", "120"), tool="get_file_info"
    )


def _supabase(rows: str, boundary: str) -> str:
    fence = f"untrusted-data-{boundary}"
    message = (
        f"Below is the result of the SQL query. Note ... within the below <{fence}> boundaries."
        f"\n\n<{fence}>\n{rows}\n</{fence}>\n\nUse this data ... within the <{fence}> boundaries."
    )
    return json.dumps(message)


def test_supabase_rows_are_compared_in_any_order_unless_ordered() -> None:
    first = _supabase('[{"a":1},{"a":2}]', "96ecf746-c3d7-4afd-b983-f6b4699b34eb")
    second = _supabase('[{"a":2},{"a":1}]', "73642f06-39c7-4911-b6c8-b09f1909ee26")
    unordered = {"query": "SELECT a FROM t"}
    ordered = {"query": "SELECT a FROM t ORDER BY a"}
    assert normalise_output(first, tool="execute_sql", arguments=unordered) == normalise_output(
        second, tool="execute_sql", arguments=unordered
    )
    assert normalise_output(first, tool="execute_sql", arguments=ordered) != normalise_output(
        second, tool="execute_sql", arguments=ordered
    )
    other = _supabase('[{"a":1},{"a":3}]', "73642f06-39c7-4911-b6c8-b09f1909ee26")
    assert normalise_output(first, tool="execute_sql", arguments=unordered) != normalise_output(
        other, tool="execute_sql", arguments=unordered
    )


def test_insforge_rows_are_compared_in_any_order_unless_ordered() -> None:
    def answer(*values: int) -> str:
        body = {"rows": [{"a": value} for value in values], "rowCount": len(values), "fields": []}
        return "SQL query executed completed successfully:\n" + json.dumps(body, indent=2)

    unordered = {"query": "SELECT a FROM t"}
    assert normalise_output(answer(1, 2), tool="run-raw-sql", arguments=unordered) == (
        normalise_output(answer(2, 1), tool="run-raw-sql", arguments=unordered)
    )
    ordered = {"query": "SELECT a FROM t ORDER BY a DESC"}
    assert normalise_output(answer(1, 2), tool="run-raw-sql", arguments=ordered) != (
        normalise_output(answer(2, 1), tool="run-raw-sql", arguments=ordered)
    )
    assert normalise_output(answer(1, 2), tool="run-raw-sql", arguments=unordered) != (
        normalise_output(answer(1, 3), tool="run-raw-sql", arguments=unordered)
    )


def test_insforge_documentation_and_hosted_configuration_are_not_compared() -> None:
    assert normalise_output("# Their docs", tool="get-instructions") == normalise_output(
        "# Our own text", tool="get-instructions"
    )

    def metadata(oauths: list[object], size: float, rows: int) -> str:
        state = {
            "auth": {"oauths": oauths},
            "database": {
                "tables": [{"schema": "public", "tableName": "t", "recordCount": rows}],
                "totalSizeInGB": size,
                "hint": "call get-table-schema",
            },
            "storage": {"buckets": [], "totalSizeInGB": 0},
            "functions": [],
            "aiIntegration": {"models": []},
            "version": "1.0.0",
        }
        return "Backend metadata:\n\n" + json.dumps(state, indent=2)

    recorded = metadata([{"provider": "google"}], 0.0103, 59)
    assert normalise_output(recorded, tool="get-backend-metadata") == normalise_output(
        metadata([], 0.0071, 59), tool="get-backend-metadata"
    )
    assert normalise_output(recorded, tool="get-backend-metadata") != normalise_output(
        metadata([], 0.0071, 60), tool="get-backend-metadata"
    )
