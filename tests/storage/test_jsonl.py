"""JSON-lines results files: appends from concurrent tasks, torn lines skipped and isolated."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel

from storage.jsonl import JsonlAppender, read_jsonl


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
    assert path.read_text().splitlines()[1] == '{"key": "b", "va'


async def test_a_complete_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(Row(key="a", value=1).model_dump_json())  # killed before the newline
    await JsonlAppender(path).append(Row(key="b", value=2).model_dump_json())
    assert [row.key for row in read_jsonl(path, Row)] == ["a", "b"]
