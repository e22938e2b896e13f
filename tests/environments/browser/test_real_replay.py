"""A run recorded through the real Playwright MCP server (``../shared/real-formats/
mcpmark-playwright``), imported with ``agentjudge datasets import-search --archive`` and replayed
on real Chromium against an archive of the pages it visited (rebuilt from its own answers:
``recorded_pages``): every step is faithful where the archive holds the page, the recorded
element reference of a click is found again on the replayed page, and a page the archive lacks
or holds differently makes exactly the steps that show it diverge."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import environments.browser.refs
from agentjudge.cli import app
from dataset.actions import ToolCallAction
from dataset.store import load_dataset
from environments.backends import BackendChoice, ProviderSet
from environments.steps import RecordedStep
from replay.engine import replay_trajectory
from replay.report import FidelityReport
from tests.environments.browser.recorded_pages import recorded_pages, write_warc

RealFormat = Callable[[str], Path]


def _answers(source: Path) -> list[str]:
    texts = []
    for messages in sorted(source.rglob("messages.json")):
        for item in json.loads(messages.read_text(encoding="utf-8")):
            if item.get("type") == "function_call_output":
                inner = json.loads(json.loads(item["output"])["text"])
                texts.append("\n".join(block["text"] for block in inner["content"]))
    return texts


async def _replay(source: Path, pages: dict[str, str], tmp_path: Path) -> list[FidelityReport]:
    """Import the runs with an archive of ``pages`` and replay every one."""
    archive = write_warc(pages, tmp_path / "pages.warc.gz")
    root = tmp_path / "dataset"
    result = CliRunner().invoke(
        app, ["datasets", "import-search", str(source), str(root), "--archive", str(archive)]
    )
    assert result.exit_code == 0, result.output
    dataset = load_dataset(root)
    assert not dataset.errors
    reports = []
    async with ProviderSet(BackendChoice()) as providers:
        for trajectory in dataset.trajectories.values():
            task = dataset.tasks[trajectory.task_id]
            assert task.initial_state.kind == "page_archive"
            replayed = await replay_trajectory(
                trajectory, task, root / "tasks" / task.id, providers, verify=False
            )
            reports.append(replayed.report)
    return reports


async def test_a_real_playwright_run_replays_faithfully_against_its_pages(
    real_format: RealFormat, tmp_path: Path
) -> None:
    source = real_format("mcpmark-playwright")
    pages = recorded_pages(_answers(source))
    reports = await _replay(source, pages, tmp_path)
    assert reports
    for report in reports:
        assert report.verdict == "faithful", [(s.status, s.diff, s.message) for s in report.steps]
        assert report.steps
        assert {step.status for step in report.steps} == {"match"}
    # The real run clicks an element by the number Playwright MCP gave it; the rebuilt page
    # numbers it otherwise, yet the click reached the linked page (its step matched).
    dataset = load_dataset(tmp_path / "dataset")
    clicks = [
        step
        for trajectory in dataset.trajectories.values()
        for step in trajectory.steps
        if isinstance(step.action, ToolCallAction) and step.action.name == "browser_click"
    ]
    assert clicks


async def test_pages_missing_or_changed_in_the_archive_diverge_where_shown(
    real_format: RealFormat, tmp_path: Path
) -> None:
    source = real_format("mcpmark-playwright")
    answers = _answers(source)
    pages = recorded_pages(answers)
    dataset_runs = sorted(source.rglob("messages.json"))
    items = json.loads(dataset_runs[0].read_text(encoding="utf-8"))
    calls = [item for item in items if item.get("type") == "function_call"]
    # The page the click leads to is left out; the first page's title is changed.
    clicked = next(i for i, call in enumerate(calls) if call["name"] == "browser_click")
    first_url = json.loads(calls[0]["arguments"])["url"]
    last_page = answers[clicked].split("- Page URL: ", 1)[1].split("\n", 1)[0]
    pages.pop(last_page)
    pages[first_url] = pages[first_url].replace("<title>", "<title>Changed: ", 1)
    reports = await _replay(source, pages, tmp_path)
    report = next(r for r in reports if len(r.steps) == len(calls))
    statuses = {step.index: step.status for step in report.steps}
    assert statuses[1] == "diverged"
    assert statuses[clicked + 1] == "diverged"
    others = {index for index in statuses if index not in (1, clicked + 1)}
    assert others
    assert {statuses[index] for index in others} == {"match"}
    first = report.steps[0]
    assert first.diff is not None
    assert "Changed: " in first.diff
    assert report.verdict == "diverged"


async def test_without_carrying_the_reference_over_the_click_misses(
    real_format: RealFormat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuilt page numbers the clicked link otherwise than Playwright MCP did: replayed with
    the recorded number as it stands, the click finds no element and its step diverges."""

    async def unchanged(session: object, recorded: RecordedStep) -> RecordedStep:
        return recorded

    monkeypatch.setattr(environments.browser.refs, "with_replayed_ref", unchanged)
    source = real_format("mcpmark-playwright")
    reports = await _replay(source, recorded_pages(_answers(source)), tmp_path)
    clicks = [s for report in reports for s in report.steps if s.tool == "browser_click"]
    assert clicks
    assert {step.status for step in clicks} == {"diverged"}
    assert all(step.replayed_error for step in clicks)
