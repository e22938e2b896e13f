"""Search importers: recorded runs and AJ-Bench's single-row items, with the URL list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.importers.search import URLS_FILE, import_ajbench_search, import_search_runs
from dataset.store import load_dataset
from replay.runner import replay_dataset
from sandboxes.browser.recording import read_url_list


def _call(call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


RUN = {
    "task_id": "capital-rivers",
    "question": "Which river runs through the capital of Examplia, and how long is it?",
    "agent": "react-browser",
    "model": "some-model",
    "messages": [
        {"role": "user", "content": "Which river ...?"},
        {
            "role": "assistant",
            "content": "Open the encyclopedia.",
            "tool_calls": [_call("a", "browser_navigate", url="http://wiki.test/Examplia")],
        },
        {
            "role": "tool",
            "tool_call_id": "a",
            "content": "- Page URL: http://wiki.test/Examplia\n...",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("b", "browser_click", ref="e12")],
        },
        {
            "role": "tool",
            "tool_call_id": "b",
            "content": "### Page state\n- Page URL: http://wiki.test/Long_River#length\n812 km",
        },
        {"role": "assistant", "content": "The Long River, 812 km (http://wiki.test/Long_River)."},
    ],
    "label": 1,
    "items": [
        {
            "text": "The Long River runs through the capital.",
            "label": "PASS",
            "sources": ["http://wiki.test/Examplia"],
        },
        {"text": "It is 812 km long.", "label": 1, "sources": "http://wiki.test/Long_River"},
    ],
}

STEP_RUN = {
    "id": "plain-steps",
    "question": "Price of the blue kettle?",
    "steps": [
        {"tool": "fetch", "arguments": {"url": "http://shop.test/kettles?page=2"}, "output": "..."},
    ],
    "final_answer": "It costs 30 (see http://shop.test/p/kettle-blue).",
    "label": "FAIL",
}


def test_recorded_runs_become_trajectories_and_list_their_pages(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "\n".join(
            [
                json.dumps(RUN),
                json.dumps(STEP_RUN),
                json.dumps({"question": "no calls"}),
                "{not json",
                json.dumps({**STEP_RUN, "id": "bad-label", "label": "maybe"}),
            ]
        )
        + "\n"
    )
    destination = tmp_path / "ds"
    report = import_search_runs([runs], destination)
    assert sorted(str(p.file) for p in report.problems) == [
        f"{runs}:3",
        f"{runs}:4",
        f"{runs}:5",
    ]
    assert any(p.field == "label" for p in report.problems)
    loaded = load_dataset(destination)
    first = next(t for t in loaded.trajectories.values() if t.task_id == "capital-rivers")
    assert [step.action.name for step in first.steps] == ["browser_navigate", "browser_click"]  # type: ignore[union-attr]
    assert [step.observation.url for step in first.steps if step.observation] == [
        "http://wiki.test/Examplia",
        "http://wiki.test/Long_River",
    ]
    assert first.steps[0].reasoning == "Open the encyclopedia."
    assert first.final_response == "The Long River, 812 km (http://wiki.test/Long_River)."
    assert first.label is not None
    assert first.label.value == "PASS"
    assert [(i.id, i.label, i.sources) for i in first.items] == [
        ("i1", "PASS", ["http://wiki.test/Examplia"]),
        ("i2", "PASS", ["http://wiki.test/Long_River"]),
    ]
    plain = loaded.trajectories["plain-steps"]
    assert plain.label is not None
    assert plain.label.value == "FAIL"
    assert loaded.tasks[plain.task_id].domain == "search"
    # Opened pages and the address written in the final answer (no claims there).
    assert (destination / URLS_FILE).read_text().splitlines() == [
        "http://shop.test/kettles?page=2",
        "http://shop.test/p/kettle-blue",
        "http://wiki.test/Examplia",
        "http://wiki.test/Long_River",
    ]


def test_ajbench_rows_are_grouped_into_answers_with_claims(tmp_path: Path) -> None:
    wide = tmp_path / "wide_llm_judge_single_row.jsonl"
    rows = [
        {
            "task_id": 7,
            "query": "List the towns",
            "model": "m1",
            "response": "A table",
            "single_row": {"town": "Avel", "population": 1200},
            "label": 1,
            "urls": ["http://wiki.test/Avel"],
        },
        {
            "task_id": 7,
            "query": "List the towns",
            "model": "m1",
            "response": "A table",
            "single_row": "Bram, population 900, http://wiki.test/Bram",
            "label": 0,
        },
        {
            "task_id": 7,
            "query": "List the towns",
            "model": "m2",
            "response": "Other table",
            "single_row": "Avel 1200",
            "label": True,
            "urls": "http://wiki.test/Avel",
        },
        {
            "task_id": 7,
            "query": "List the towns",
            "model": "m3",
            "response": "T",
            "single_row": "Cael 300",
            "label": 0,
            "source": "the town hall's leaflet",
        },
        {"task_id": 8, "model": "m1", "single_row": "x", "label": 1},
        {"task_id": 9, "query": "q", "model": "m1", "single_row": "y", "label": "unsure"},
    ]
    wide.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    deep = tmp_path / "deep_llm_judge_origin.jsonl"
    deep.write_text(json.dumps({"id": "d1", "question": "Deep q", "answer": "A", "gt": 1}) + "\n")
    destination = tmp_path / "aj"
    report = import_ajbench_search([wide, deep], destination)
    assert sorted(p.file for p in report.problems) == [f"{wide}:5", f"{wide}:6"]
    loaded = load_dataset(destination)
    by_agent = {t.agent: t for t in loaded.trajectories.values() if t.task_id == "wide-7"}
    m1 = by_agent["m1"]
    assert [(i.id, i.text, i.label) for i in m1.items] == [
        ("r1", "town: Avel; population: 1200", "PASS"),
        ("r2", "Bram, population 900, http://wiki.test/Bram", "FAIL"),
    ]
    assert m1.items[1].sources == ["http://wiki.test/Bram"]
    assert m1.label is not None
    assert (m1.label.value, m1.label.source) == ("FAIL", "evaluator")  # six models' majority
    assert by_agent["m2"].label is not None
    assert by_agent["m2"].label.value == "PASS"
    assert loaded.tasks["wide-7"].subdomain == "wide"
    # A source that is not an address stays on its claim but is not listed for archiving.
    assert by_agent["m3"].items[0].sources == ["the town hall's leaflet"]
    whole = next(t for t in loaded.trajectories.values() if t.task_id == "deep-d1")
    assert whole.items == []
    assert whole.label is not None
    assert (whole.label.value, whole.label.source) == ("PASS", "human")
    assert (destination / URLS_FILE).read_text().splitlines() == [
        "http://wiki.test/Avel",
        "http://wiki.test/Bram",
    ]


def test_command_line_imports_and_lists_urls(tmp_path: Path) -> None:
    runs = tmp_path / "run.json"
    runs.write_text(json.dumps([RUN]))
    runner = CliRunner()
    result = runner.invoke(app, ["datasets", "import-search", str(runs), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "1 trajectory(ies) of 1 task(s)" in result.output
    # The list is what `agentjudge archive` reads.
    assert read_url_list(tmp_path / "out" / URLS_FILE) == [
        "http://wiki.test/Examplia",
        "http://wiki.test/Long_River",
    ]
    listed = runner.invoke(app, ["datasets", "urls", str(tmp_path / "out")])
    assert listed.exit_code == 0
    assert listed.output.splitlines() == [
        "http://wiki.test/Examplia",
        "http://wiki.test/Long_River",
    ]
    missing = runner.invoke(
        app, ["datasets", "import-search", str(tmp_path / "nope.json"), str(tmp_path / "x")]
    )
    assert missing.exit_code == 2


@pytest.mark.slow
async def test_an_imported_run_with_its_archive_replays_faithfully(tmp_path: Path) -> None:
    # A run recorded on the search suite's archive, written out in the plain step form.
    suite = Path(__file__).resolve().parents[3] / "datasets" / "search"
    recorded = load_dataset(suite).trajectories["deep-ventra-hometown-mayor--careful"]
    run = {
        "id": "imported-run",
        "question": "Who is the current mayor of the town where Ventra has its headquarters?",
        "steps": [
            {
                "tool": step.action.name,  # type: ignore[union-attr]
                "arguments": step.action.arguments,  # type: ignore[union-attr]
                "output": step.observation.text if step.observation else None,
            }
            for step in recorded.steps
        ],
        "final_answer": recorded.final_response,
        "label": "PASS",
    }
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps(run))
    archive = suite / "assets" / "search-archive"  # the suite shares one archive
    destination = tmp_path / "imported"
    report = import_search_runs([runs], destination, archive=archive)
    assert report.problems == []
    task = next(iter(load_dataset(destination).tasks.values()))
    assert task.initial_state.kind == "page_archive"
    assert (destination / "tasks" / task.id / "archive" / "pages.json").is_file()
    summary = await replay_dataset(destination, tmp_path / "replay", jobs=1)
    assert summary.problems == []
    assert (summary.total.trajectories, summary.total.faithful) == (1, 1)
