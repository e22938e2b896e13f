"""JSON-lines results files: appends from concurrent tasks, torn lines repaired before appending."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel

from storage.jsonl import QUARANTINE_SUFFIX, JsonlAppender, read_jsonl, repair_torn_tail


class Row(BaseModel):
    key: str
    value: int


async def test_concurrent_appends_give_one_whole_line_each(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    appender = JsonlAppender(path)
    await asyncio.gather(
        *(appender.append(Row(key=f"k{i}", value=i).model_dump_json()) for i in range(50))
    )
    rows = read_jsonl(path, Row)
    assert sorted(row.value for row in rows) == list(range(50))
    assert len(path.read_text().splitlines()) == 50


def test_a_missing_file_has_no_records(tmp_path: Path) -> None:
    assert read_jsonl(tmp_path / "nothing.jsonl", Row) == []


async def test_a_torn_last_line_is_skipped_and_the_next_record_survives(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(Row(key="a", value=1).model_dump_json() + "\n" + '{"key": "b", "va')
    assert [row.key for row in read_jsonl(path, Row)] == ["a"]
    appender = JsonlAppender(path)
    await appender.append(Row(key="c", value=3).model_dump_json())
    await appender.append(Row(key="d", value=4).model_dump_json())
    # Without the repair, "c" would be glued to the torn line and lost with it.
    assert [row.key for row in read_jsonl(path, Row)] == ["a", "c", "d"]
    # The fragment left the results file (every line of it parses) for the quarantine.
    lines = path.read_text().splitlines()
    assert [Row.model_validate_json(line).key for line in lines] == ["a", "c", "d"]
    quarantine = path.with_name(path.name + QUARANTINE_SUFFIX)
    assert quarantine.read_text() == '{"key": "b", "va\n'


async def test_a_complete_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(Row(key="a", value=1).model_dump_json())  # killed before the newline
    await JsonlAppender(path).append(Row(key="b", value=2).model_dump_json())
    assert [row.key for row in read_jsonl(path, Row)] == ["a", "b"]


def test_a_torn_multibyte_character_loses_only_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    whole = Row(key="é", value=1).model_dump_json().encode() + b"\n"
    torn = Row(key="ü", value=2).model_dump_json().encode()
    torn = torn[: torn.index("ü".encode()) + 1]  # cut inside the two bytes of "ü"
    path.write_bytes(whole + torn)
    assert [row.key for row in read_jsonl(path, Row)] == ["é"]
    assert repair_torn_tail(path) is not None
    assert path.read_bytes() == whole
    assert path.with_name(path.name + QUARANTINE_SUFFIX).read_bytes() == torn + b"\n"


def test_a_whole_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    assert repair_torn_tail(path) is None  # missing
    path.write_text("")
    assert repair_torn_tail(path) is None  # empty
    content = Row(key="a", value=1).model_dump_json() + "\n"
    path.write_text(content)
    assert repair_torn_tail(path) is None
    assert path.read_text() == content
    assert not path.with_name(path.name + QUARANTINE_SUFFIX).exists()


def test_a_fragment_without_any_newline_is_cut_to_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"key": "a", "val')  # the very first record was torn
    assert "torn last line" in (repair_torn_tail(path) or "")
    assert path.read_bytes() == b""


def test_a_line_separator_inside_a_value_does_not_split_the_record(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(Row(key="a\u2028b", value=1).model_dump_json() + "\n", encoding="utf-8")
    assert [row.key for row in read_jsonl(path, Row)] == ["a\u2028b"]
