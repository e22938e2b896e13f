"""MCPMark's recorded search runs (Agents SDK item lists + meta.json) from ../shared/real-formats,
imported with ``agentjudge datasets import-search`` and checked field by field against the
files, read here as plain JSON."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.actions import ToolCallAction
from dataset.importers.search import URLS_FILE
from dataset.store import load_dataset

RealFormat = Callable[[str], Path]


def _unwrap(output: str) -> str:
    """The text of a recorded tool result: a JSON text block holding a CallToolResult."""
    outer = json.loads(output)
    inner: dict[str, Any] = json.loads(outer["text"])
    return "\n".join(block["text"] for block in inner["content"])


def test_mcpmark_playwright_runs_field_by_field(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("mcpmark-playwright")
    result = CliRunner().invoke(
        app, ["datasets", "import-search", str(source), str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    dataset = load_dataset(tmp_path / "o")
    assert not dataset.errors
    runs = sorted(source.rglob("messages.json"))
    assert len(dataset.trajectories) == len(runs)
    navigated: set[str] = set()
    for messages_path in runs:
        items = json.loads(messages_path.read_text(encoding="utf-8"))
        meta = json.loads((messages_path.parent / "meta.json").read_text(encoding="utf-8"))
        (trajectory,) = [
            t
            for t in dataset.trajectories.values()
            if t.provenance.source_path == str(messages_path.parent)
        ]
        task = dataset.tasks[trajectory.task_id]
        assert task.instruction == items[0]["content"].strip()
        assert trajectory.model == meta["model_name"]
        calls = [item for item in items if item.get("type") == "function_call"]
        outputs = {
            item["call_id"]: item["output"]
            for item in items
            if item.get("type") == "function_call_output"
        }
        assert len(trajectory.steps) == len(calls)
        for step, call in zip(trajectory.steps, calls, strict=True):
            assert isinstance(step.action, ToolCallAction)
            assert step.action.name == call["name"]
            assert step.action.arguments == json.loads(call["arguments"])
            assert step.action.call_id == call["call_id"]
            assert step.observation is not None
            text = _unwrap(outputs[call["call_id"]])
            assert step.observation.text == text
            page = text.split("- Page URL: ", 1)[1].split("\n", 1)[0]
            assert step.observation.url == page
            if call["name"] == "browser_navigate":
                navigated.add(json.loads(call["arguments"])["url"])
        texts = [
            part["text"]
            for item in items
            if item.get("type") == "message"
            for part in item["content"]
        ]
        assert trajectory.steps[0].reasoning == texts[0]
        assert trajectory.final_response == texts[-1]
        assert trajectory.label is not None
        assert trajectory.label.value == ("PASS" if meta["execution_result"]["success"] else "FAIL")
        assert trajectory.label.source == "verifier"
        assert trajectory.label.verifier_output == meta["execution_result"]["verification_output"]
        assert trajectory.usage is not None
        assert trajectory.usage.total_tokens == meta["token_usage"]["total_tokens"]
    listed = set((tmp_path / "o" / URLS_FILE).read_text(encoding="utf-8").split())
    assert navigated
    assert navigated <= listed


def test_mcpmark_bad_runs_are_named_and_never_empty(
    real_format: RealFormat, tmp_path: Path
) -> None:
    source = real_format("mcpmark-playwright")
    run = next(source.rglob("messages.json")).parent
    copy = tmp_path / "runs"
    for name in ("good", "truncated", "nameless"):
        shutil.copytree(run, copy / name)
    (copy / "truncated" / "messages.json").write_text(
        (run / "messages.json").read_text(encoding="utf-8")[:500], encoding="utf-8"
    )
    items = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    calls = [item for item in items if item.get("type") == "function_call"]
    for item in calls:
        item.pop("name")
    (copy / "nameless" / "messages.json").write_text(json.dumps(items), encoding="utf-8")
    result = CliRunner().invoke(app, ["datasets", "import-search", str(copy), str(tmp_path / "o")])
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "truncated/messages.json: not JSON" in output
    assert f"nameless/messages.json: {len(calls)} function_call item(s) but no step" in output
    (trajectory,) = load_dataset(tmp_path / "o").trajectories.values()
    assert trajectory.steps


def test_sdk_items_wrapped_in_a_run_record_are_read(
    real_format: RealFormat, tmp_path: Path
) -> None:
    messages = next(real_format("mcpmark-playwright").rglob("messages.json"))
    items = json.loads(messages.read_text(encoding="utf-8"))
    record = {"question": items[0]["content"], "messages": items, "label": 1}
    (tmp_path / "run.json").write_text(json.dumps(record), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["datasets", "import-search", str(tmp_path / "run.json"), str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    (trajectory,) = load_dataset(tmp_path / "o").trajectories.values()
    calls = [item for item in items if item.get("type") == "function_call"]
    assert [s.action.name for s in trajectory.steps] == [c["name"] for c in calls]  # type: ignore[union-attr]


def test_an_archive_is_copied_without_its_links(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("mcpmark-playwright")
    archive = tmp_path / "pages"
    (archive / "x.com").mkdir(parents=True)
    (archive / "x.com" / "index.html").write_text("<p>profile</p>", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the dataset", encoding="utf-8")
    (archive / "x.com" / "leak.html").symlink_to(secret)
    (archive / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    result = CliRunner().invoke(
        app,
        ["datasets", "import-search", str(source), str(tmp_path / "o"), "--archive", str(archive)],
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "leak.html: not copied (regular files inside the archive only): leads to" in output
    assert "elsewhere: not copied (regular files inside the archive only): is a link to" in output
    (task,) = (tmp_path / "o" / "tasks").iterdir()
    copied = sorted(
        p.relative_to(task / "archive").as_posix() for p in (task / "archive").rglob("*")
    )
    assert copied == ["x.com", "x.com/index.html"]


def test_a_run_whose_tool_items_yield_no_step_is_an_error(
    real_format: RealFormat, tmp_path: Path
) -> None:
    """Outputs whose calls are missing, or calls in a shape the reader does not know, leave no
    step: each such run is refused by name, never imported as a run that did nothing."""
    source = real_format("mcpmark-playwright")
    run = next(source.rglob("messages.json")).parent
    items = json.loads((run / "messages.json").read_text(encoding="utf-8"))
    outputs = [item for item in items if item.get("type") == "function_call_output"]
    calls = [item for item in items if item.get("type") == "function_call"]
    assert outputs
    assert calls
    only_outputs = [item for item in items if item.get("type") != "function_call"]
    renamed = [
        {**item, "type": "tool_call"} if item.get("type") == "function_call" else item
        for item in items
    ]
    copy = tmp_path / "runs"
    for name, variant in (("good", items), ("outputs", only_outputs), ("renamed", renamed)):
        shutil.copytree(run, copy / name)
        (copy / name / "messages.json").write_text(json.dumps(variant), encoding="utf-8")
    result = CliRunner().invoke(app, ["datasets", "import-search", str(copy), str(tmp_path / "o")])
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert (
        f"outputs/messages.json: no step could be read, though the run holds {len(outputs)} "
        "function_call_output item(s) and 0 item(s) of a type not understood"
    ) in output
    assert (
        f"renamed/messages.json: no step could be read, though the run holds {len(outputs)} "
        f"function_call_output item(s) and {len(calls)} item(s) of a type not understood"
    ) in output
    (trajectory,) = load_dataset(tmp_path / "o").trajectories.values()
    assert len(trajectory.steps) == len(calls)
