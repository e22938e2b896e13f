"""The viewer's table index: rows from verdicts.jsonl, the cache, and table queries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE, JudgeRecord
from dataset.corrections import LabelCorrection
from judge_agent.verdict import JudgeToolCall, Verdict
from viewer.index import (
    RunIndex,
    RunQuery,
    load_index,
    open_index,
    read_rows,
    rows_from_dataset,
    rows_from_verdicts,
)

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def _record(
    trajectory: str, mode: str, verdict: str, label: str, *, calls: int = 0, stop: str = "verdict"
) -> JudgeRecord:
    return JudgeRecord(
        key=f"{trajectory}--{mode}",
        trajectory_id=trajectory,
        task_id="task",
        domain="ds",
        subdomain="filesystem",
        mode=mode,
        turns=4 if mode == "agent" else 0,
        model="mock/x",
        run=1,
        label=label,
        scripted=True,
        environment="filesystem",
        verdict=Verdict(
            trajectory_id=trajectory,
            verdict=verdict,
            tool_calls=[JudgeToolCall(turn=1, name="read_file") for _ in range(calls)],
            tokens_in=100,
            tokens_out=10,
            stop_reason=stop,
        ),
    )


def _write(folder: Path, records: list[JudgeRecord], tail: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / VERDICTS_FILE
    path.write_text("".join(r.model_dump_json() + "\n" for r in records) + tail, encoding="utf-8")
    return path


def test_rows_keep_the_last_line_per_key_skip_a_torn_tail_and_point_at_their_line(
    tmp_path: Path,
) -> None:
    first = _record("a", "agent", "PASS", "PASS", calls=2)
    again = _record("a", "agent", "FAIL", "PASS", calls=0)
    other = _record("b", "llm", "INVALID", "FAIL", stop="turn_limit")
    path = _write(tmp_path, [first, other, again], tail='{"key": "torn"')
    rows = rows_from_verdicts(path)
    # The key judged again keeps its place and takes its last line.
    assert [(row.key, row.verdict) for row in rows] == [("a--agent", "FAIL"), ("b--llm", "INVALID")]
    data = path.read_bytes()
    for row in rows:
        line = json.loads(data[row.offset : row.offset + row.length])
        assert line["key"] == row.key
        assert line["verdict"]["verdict"] == row.verdict
    by_key = {row.key: row for row in rows}
    assert by_key["a--agent"].tokens == 110
    assert by_key["a--agent"].wrong_tag == "no tool call"  # an agent judge that inspected nothing
    assert by_key["b--llm"].wrong_tag == "budget exhausted"


def test_the_cache_is_reused_until_the_file_changes(tmp_path: Path) -> None:
    path = _write(tmp_path / "results", [_record("a", "agent", "PASS", "PASS", calls=1)])
    cache = tmp_path / "cache"
    rows, cached = load_index(path, None, cache)
    assert (len(rows), cached) == (1, False)
    assert len(list(cache.glob("*.json"))) == 1
    rows, cached = load_index(path, None, cache)
    assert (len(rows), cached) == (1, True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(_record("b", "llm", "FAIL", "PASS").model_dump_json() + "\n")
    rows, cached = load_index(path, None, cache)
    assert ([row.key for row in rows], cached) == (["a--agent", "b--llm"], False)
    # A cache file that does not parse is rebuilt, not trusted.
    next(cache.glob("*.json")).write_text("{", encoding="utf-8")
    rows, cached = load_index(path, None, cache)
    assert (len(rows), cached) == (2, False)


def test_an_index_without_a_cache_streams_in_then_is_cached(tmp_path: Path) -> None:
    records = [_record(f"t{n:03d}", "llm", "FAIL", "PASS") for n in range(1200)]
    path = _write(tmp_path / "results", records)
    chunks: list[int] = []
    read_rows(path, lambda rows: chunks.append(len(rows)), chunk=500)
    assert chunks == [500, 500, 200]
    cache = tmp_path / "cache"
    index = open_index(path, None, cache)
    assert index.wait(30)
    assert [row.key for row in index.rows] == [record.key for record in records]
    assert not index.from_cache
    total, page = index.query(RunQuery(limit=100))
    assert (total, page[0].key) == (1200, "t000--llm")
    again = open_index(path, None, cache)
    assert again.wait(30)
    assert (again.from_cache, [row.key for row in again.rows]) == (True, [r.key for r in records])
    # A cache cut short is not trusted: the rows are read from the results file again.
    cached = next(cache.glob("*"))
    cached.write_text("\n".join(cached.read_text().splitlines()[:700]) + "\n")
    cut = open_index(path, None, cache)
    assert cut.wait(30)
    assert (cut.from_cache, len(cut.rows)) == (False, 1200)


def _index(tmp_path: Path) -> RunIndex:
    records = [
        _record("t1", "agent", "PASS", "PASS", calls=1),
        _record("t1", "llm", "FAIL", "PASS"),
        _record("t2", "agent", "PASS", "FAIL", calls=1),
        _record("t2", "llm", "FAIL", "FAIL"),
        _record("t3", "agent", "INVALID", "FAIL", stop="turn_limit"),
    ]
    rows, _ = load_index(_write(tmp_path, records), None, None)
    return RunIndex(rows, False)


def test_filters_wrong_and_invalid_only_sorting_and_pages(tmp_path: Path) -> None:
    index = _index(tmp_path)
    total, page = index.query(RunQuery(wrong=True))
    assert sorted(row.key for row in page) == ["t1--llm", "t2--agent", "t3--agent"]
    assert total == 3
    total, page = index.query(RunQuery(wrong=True, filters={"mode": "agent"}))
    assert [row.key for row in page] == ["t2--agent", "t3--agent"]
    total, page = index.query(RunQuery(invalid=True))
    assert [row.key for row in page] == ["t3--agent"]
    total, page = index.query(RunQuery(filters={"tag": "budget exhausted"}))
    assert [row.key for row in page] == ["t3--agent"]
    total, page = index.query(
        RunQuery(filters={"turns": "4"}, sort="trajectory_id", descending=True)
    )
    assert [row.trajectory_id for row in page] == ["t3", "t2", "t1"]
    total, page = index.query(RunQuery(sort="key", offset=2, limit=2))
    assert (total, [row.key for row in page]) == (5, ["t2--agent", "t2--llm"])
    total, page = index.query(RunQuery(search="T3"))
    assert [row.key for row in page] == ["t3--agent"]
    with pytest.raises(ValueError, match="unknown filter"):
        index.query(RunQuery(filters={"colour": "red"}))
    with pytest.raises(ValueError, match="cannot sort"):
        index.query(RunQuery(sort="nothing"))
    assert index.choices()["mode"] == ["agent", "llm"]
    assert index.choices()["turns"] == ["0", "4"]


def test_corrections_change_labels_and_wrong_runs(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.corrections[("t1", None)] = LabelCorrection(
        trajectory_id="t1", label="FAIL", recorded_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    _total, page = index.query(RunQuery(wrong=True))
    assert sorted(row.key for row in page) == ["t1--agent", "t2--agent", "t3--agent"]
    _total, page = index.query(RunQuery(filters={"label": "FAIL"}))
    assert len(page) == 5


def test_a_dataset_alone_gives_one_row_per_trajectory() -> None:
    rows = rows_from_dataset(MINI)
    assert len(rows) == len(list((MINI / "trajectories").glob("*.json")))
    mobile = next(row for row in rows if row.trajectory_id == "android-markor-shopping-note--pass")
    assert (mobile.kind, mobile.domain, mobile.label, mobile.steps) == (
        "trajectory",
        "mobile",
        "PASS",
        json.loads((MINI / "trajectories" / f"{mobile.trajectory_id}.json").read_text())[
            "steps"
        ].__len__(),
    )
