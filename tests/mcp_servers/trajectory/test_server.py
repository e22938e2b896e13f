"""The trajectory MCP server, driven through real MCP client sessions.

Every tool is called through ``mcp.Client`` (in-memory, and over stdio for the standalone entry
point) and its answer is checked against the trajectory as loaded independently from disk: the
rendered actions, reasoning and observations, the screenshot bytes, and the absence of anything
that would give the ground-truth label away.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

from dataset.actions import AndroidAction, Computer13Action, PyAutoGuiAction, ToolCallAction
from dataset.models import (
    ClaimItem,
    EmptyState,
    Label,
    Observation,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import DatasetError
from dataset.rendering import (
    ACCESSIBILITY_TREE_CHARS,
    ACTION_CHARS,
    FINAL_ACCESSIBILITY_TREE_CHARS,
    OBSERVATION_TEXT_CHARS,
    REASONING_CHARS,
    render_action,
    render_trajectory,
)
from dataset.store import Dataset, load_dataset
from mcp_servers.serving import ToolServer
from mcp_servers.trajectory import (
    OVERVIEW_TOOL,
    VIEW_STEP_TOOL,
    TrajectoryContext,
    load_trajectory_file,
    trajectory_file_in_dataset,
    trajectory_server,
)
from mcp_servers.trajectory.overview import FINAL_RESPONSE_LIMIT, OVERVIEW_STEP_LIMIT
from mcp_servers.trajectory.server import VIEW_STEP_LIMITS

ACCESSIBILITY_TREE_LIMIT = VIEW_STEP_LIMITS.accessibility_tree
OBSERVATION_TEXT_LIMIT = VIEW_STEP_LIMITS.observation_text

REPO = Path(__file__).resolve().parents[3]
MINI = REPO / "datasets" / "examples" / "mini"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(32))


@pytest.fixture(scope="module")
def mini() -> Dataset:
    return load_dataset(MINI)


MINI_IDS = sorted(path.stem for path in (MINI / "trajectories").glob("*.json"))


def text_of(result: types.CallToolResult) -> str:
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert len(texts) == 1, result.content
    return texts[0]


def images_of(result: types.CallToolResult) -> list[types.ImageContent]:
    return [block for block in result.content if isinstance(block, types.ImageContent)]


def server_for(mini: Dataset, trajectory_id: str) -> ToolServer[TrajectoryContext]:
    trajectory = mini.trajectories[trajectory_id]
    return trajectory_server(
        trajectory, task=mini.tasks[trajectory.task_id], base_dir=mini.trajectory_dir()
    )


async def all_outputs(server: ToolServer[TrajectoryContext]) -> list[str]:
    """Every text the server can show a judge: instructions, tools, overview, each step."""
    trajectory = server.context.trajectory
    async with Client(server.server()) as client:
        texts = [client.instructions or ""]
        for tool in (await client.list_tools()).tools:
            texts.append(tool.description or "")
            texts.append(json.dumps(tool.input_schema))
        texts.append(text_of(await client.call_tool(OVERVIEW_TOOL, {})))
        for number in range(0, len(trajectory.steps) + 2):
            texts.append(text_of(await client.call_tool(VIEW_STEP_TOOL, {"step": number})))
    return texts


def json_block(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def expected_action_parts(step: Step) -> list[str]:
    """Pieces of text the rendering of ``step.action`` must contain."""
    action = step.action
    if isinstance(action, ToolCallAction):
        return [f"Tool call: {action.name}", json_block(action.arguments)]
    if isinstance(action, Computer13Action):
        parts = [f"computer_13): {action.action_type}"]
        return parts + ([json_block(action.parameters)] if action.parameters else [])
    if isinstance(action, PyAutoGuiAction):
        return [action.code.strip()] if action.is_control else [f"pyautogui code:\n{action.code}"]
    fields = action.model_dump(
        mode="json", exclude={"type", "action_type", "extra"}, exclude_none=True
    )
    return [f"Android action: {action.action_type}"] + ([json_block(fields)] if fields else [])


# --- tool listing ---------------------------------------------------------------------------


async def test_tools_are_listed_read_only_and_idempotent(mini: Dataset) -> None:
    server = server_for(mini, "fs-meeting-notes-index--sonnet-pass")
    async with Client(server.server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert client.instructions is not None
        assert OVERVIEW_TOOL in client.instructions
        assert VIEW_STEP_TOOL in client.instructions
    assert set(tools) == {VIEW_STEP_TOOL, OVERVIEW_TOOL}
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.annotations.idempotent_hint is True
    step_schema = tools[VIEW_STEP_TOOL].input_schema
    assert step_schema["required"] == ["step"]
    assert step_schema["properties"]["step"]["type"] == "integer"
    assert "default" not in step_schema["properties"]["step"]
    assert step_schema["properties"]["step"]["description"]
    assert tools[OVERVIEW_TOOL].input_schema["properties"] == {}
    view_description = tools[VIEW_STEP_TOOL].description or ""
    assert f"{ACCESSIBILITY_TREE_LIMIT:,}" in view_description
    assert "corrected it later" in view_description
    assert "image" in view_description
    assert f"{FINAL_RESPONSE_LIMIT:,}" in (tools[OVERVIEW_TOOL].description or "")


# --- every step of every bundled trajectory -------------------------------------------------


def check_observation_text(observation: Observation, text: str) -> None:
    """The observation's text, URL and accessibility tree appear whole in a viewed step."""
    if observation.text is not None:
        assert len(observation.text) <= OBSERVATION_TEXT_LIMIT
        if observation.text.strip():
            assert f"Observation:\n{observation.text}" in text
        else:
            assert "Observation: (empty)" in text
    if observation.url is not None:
        assert f"URL: {observation.url}" in text
    if observation.accessibility_tree is not None:
        assert len(observation.accessibility_tree) <= ACCESSIBILITY_TREE_LIMIT
        assert observation.accessibility_tree in text


@pytest.mark.parametrize("trajectory_id", MINI_IDS)
async def test_every_step_shows_what_was_recorded(mini: Dataset, trajectory_id: str) -> None:
    trajectory = mini.trajectories[trajectory_id]
    server = server_for(mini, trajectory_id)
    total = len(trajectory.steps)
    async with Client(server.server()) as client:
        for step in trajectory.steps:
            result = await client.call_tool(VIEW_STEP_TOOL, {"step": step.index})
            assert not result.is_error
            text = text_of(result)
            assert text.startswith(f"Step {step.index} of {total}.")
            assert f"\n\n### Step {step.index}\n" in text
            for part in expected_action_parts(step):
                assert part in text
            flagged = "The environment flagged this step as an ERROR." in text
            assert flagged == step.is_error
            if step.reasoning:
                assert f"Agent's reasoning:\n{step.reasoning.strip()}" in text
            else:
                assert "Agent's reasoning" not in text
            if step.started_at is not None:
                assert step.started_at.isoformat() in text
            if step.ended_at is not None:
                assert step.ended_at.isoformat() in text
            observation = step.observation or Observation()
            check_observation_text(observation, text)
            images = images_of(result)
            if observation.screenshot is not None:
                assert len(images) == 1
                on_disk = (mini.trajectory_dir() / observation.screenshot).read_bytes()
                assert base64.b64decode(images[0].data) == on_disk
                assert images[0].mime_type == "image/png"
                assert f"attached below (image/png, {len(on_disk):,} bytes)" in text
            else:
                assert images == []
                assert "Screenshot:" not in text


def _fits_the_prompt(step: Step, last: bool) -> bool:
    """Whether no field of ``step`` is cut in the judge's prompt (whose limits are smaller)."""
    observation = step.observation or Observation()
    tree_limit = FINAL_ACCESSIBILITY_TREE_CHARS if last else ACCESSIBILITY_TREE_CHARS
    return (
        len(render_action(step.action)) <= ACTION_CHARS
        and len((step.reasoning or "").strip()) <= REASONING_CHARS
        and len(observation.text or "") <= OBSERVATION_TEXT_CHARS
        and len(observation.accessibility_tree or "") <= tree_limit
    )


def _without_lines(text: str, *prefixes: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(prefixes))


@pytest.mark.parametrize("trajectory_id", MINI_IDS)
async def test_a_viewed_step_is_worded_as_in_the_judge_prompt(
    mini: Dataset, trajectory_id: str
) -> None:
    trajectory = mini.trajectories[trajectory_id]
    task = mini.tasks[trajectory.task_id]
    prompt = render_trajectory(task, trajectory, base_dir=None, screenshots="none").text
    prompt = _without_lines(prompt, "Screenshot: ")
    compared = 0
    async with Client(server_for(mini, trajectory_id).server()) as client:
        for step in trajectory.steps:
            viewed = text_of(await client.call_tool(VIEW_STEP_TOOL, {"step": step.index}))
            header, block = viewed.split("\n\n", 1)
            assert header.startswith(f"Step {step.index} of {len(trajectory.steps)}.")
            # The tool adds the step's timing; the screenshot notes differ by reader.
            block = _without_lines(block, "Timing: ", "Screenshot: ")
            if _fits_the_prompt(step, last=step.index == len(trajectory.steps)):
                assert f"{block}\n\n" in prompt
                compared += 1
    assert compared > 0


def test_mini_covers_every_domain_and_action_space(mini: Dataset) -> None:
    # The parametrised test above only proves "every domain" if the dataset has them all.
    domains = {mini.tasks[t.task_id].domain for t in mini.trajectories.values()}
    assert domains == {"ds", "gui", "mobile", "search"}
    kinds = {step.action.type for t in mini.trajectories.values() for step in t.steps}
    assert kinds == {"tool_call", "computer_13", "pyautogui", "android"}
    assert any(t.screenshots for t in mini.trajectories.values())


@pytest.mark.parametrize("trajectory_id", MINI_IDS)
async def test_overview_lists_task_agent_steps_and_answer(
    mini: Dataset, trajectory_id: str
) -> None:
    trajectory = mini.trajectories[trajectory_id]
    task = mini.tasks[trajectory.task_id]
    async with Client(server_for(mini, trajectory_id).server()) as client:
        result = await client.call_tool(OVERVIEW_TOOL, {})
    assert not result.is_error
    assert images_of(result) == []
    text = text_of(result)
    assert task.instruction in text
    assert f"Agent: {trajectory.agent}; model: {trajectory.model}" in text
    assert f"Stop reason: {trajectory.stop_reason}" in text
    errors = sum(step.is_error for step in trajectory.steps)
    shots = len(trajectory.screenshots)
    assert (
        f"Steps: {len(trajectory.steps)} ({errors} flagged as errors, {shots} with a screenshot)"
    ) in text
    step_lines = [line for line in text.splitlines() if line[:5].strip().rstrip(".").isdigit()]
    assert [int(line.split(".")[0]) for line in step_lines] == [
        step.index for step in trajectory.steps
    ]
    for line, step in zip(step_lines, trajectory.steps, strict=True):
        has_shot = step.observation is not None and step.observation.screenshot is not None
        assert ("screenshot" in line.split("  [")[-1]) == has_shot
        assert ("ERROR" in line) == step.is_error
        assert len(line) < 140
    if trajectory.final_response is not None:
        assert trajectory.final_response in text
    else:
        assert "Final response of the agent: none" in text


# --- the label never leaks ------------------------------------------------------------------


@pytest.mark.parametrize("trajectory_id", MINI_IDS)
async def test_mini_outputs_do_not_reveal_the_label(mini: Dataset, trajectory_id: str) -> None:
    trajectory = mini.trajectories[trajectory_id]
    outputs = "\n".join(await all_outputs(server_for(mini, trajectory_id)))
    # Mini ids end in -pass / -fail: the id, and the screenshot folders named after it, must not
    # be shown.
    assert trajectory_id not in outputs
    label = trajectory.label
    assert label is not None
    if label.verifier_output:
        for line in label.verifier_output.splitlines():
            if len(line) > 10:
                assert line not in outputs
    for voter in label.votes:
        assert voter not in outputs
    for value in trajectory.metadata.values():
        assert str(value) not in outputs
    for item in trajectory.items:
        assert item.id not in outputs.split()


def secret_trajectory(trajectory_id: str = "secret-run--pass") -> Trajectory:
    """A run whose ground truth is spelled with SECRET markers everywhere it can hide."""
    return Trajectory(
        id=trajectory_id,
        task_id="t1",
        agent="tester",
        model="model-x",
        steps=[
            Step(
                index=1,
                action=ToolCallAction(name="lookup", arguments={"q": "weather"}),
                observation=Observation(text="sunny", screenshot=f"{trajectory_id}/s1.png"),
                reasoning="check the weather",
            ),
            Step(index=2, action=PyAutoGuiAction(code="DONE")),
        ],
        final_response="It is sunny.",
        label=Label(
            value="PASS",
            source="vote",
            verifier_output="SECRET verifier output",
            error_message="SECRET error message",
            votes={"SECRET-voter": "PASS"},
        ),
        items=[ClaimItem(id="SECRET-item", text="SECRET claim", label="FAIL", sources=["x"])],
        provenance=Provenance(
            source_format="native", source_path="/SECRET/path", details={"k": "SECRET detail"}
        ),
        metadata={"annotator_note": "SECRET note"},
        stop_reason="completed",
    )


def plain_task(instruction: str = "What is the weather?") -> Task:
    return Task(
        id="t1",
        domain="search",
        subdomain="deep",
        instruction=instruction,
        initial_state=EmptyState(),
    )


async def test_no_output_reveals_label_items_metadata_or_id(tmp_path: Path) -> None:
    trajectory = secret_trajectory()
    (tmp_path / trajectory.id).mkdir()
    (tmp_path / trajectory.id / "s1.png").write_bytes(PNG)
    server = trajectory_server(trajectory, task=plain_task(), base_dir=tmp_path)
    outputs = "\n".join(await all_outputs(server))
    assert "sunny" in outputs  # the outputs are real, not empty
    assert "secret" not in outputs.lower()
    assert "PASS" not in outputs
    assert "FAIL" not in outputs
    assert "label" not in outputs.lower()
    assert trajectory.id not in outputs


# --- step numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {"step": 0},
        {"step": 3},
        {"step": -1},
        {"step": "abc"},
        {"step": 1.5},
        {"step": True},
        {"step": None},
        {"step": [1]},
        {},
    ],
)
async def test_bad_step_numbers_name_the_valid_range(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    server = trajectory_server(secret_trajectory(), task=None, base_dir=tmp_path)
    async with Client(server.server()) as client:
        result = await client.call_tool(VIEW_STEP_TOOL, arguments)
    assert result.is_error
    text = text_of(result)
    assert "from 1 to 2" in text
    assert "2 steps" in text
    assert images_of(result) == []


@pytest.mark.parametrize("given", [2, "2", " 2 ", 2.0])
async def test_step_numbers_given_as_text_or_float_are_accepted(tmp_path: Path, given: Any) -> None:
    server = trajectory_server(secret_trajectory(), task=None, base_dir=tmp_path)
    async with Client(server.server()) as client:
        result = await client.call_tool(VIEW_STEP_TOOL, {"step": given})
    assert not result.is_error
    assert text_of(result).startswith("Step 2 of 2.")
    assert "Control signal (pyautogui space): DONE" in text_of(result)


async def test_trajectory_without_steps(tmp_path: Path) -> None:
    empty = Trajectory(id="empty", task_id="t1", agent="tester", stop_reason="error")
    server = trajectory_server(empty, task=plain_task(), base_dir=tmp_path)
    async with Client(server.server()) as client:
        viewed = await client.call_tool(VIEW_STEP_TOOL, {"step": 1})
        overview = text_of(await client.call_tool(OVERVIEW_TOOL, {}))
    assert viewed.is_error
    assert "no recorded steps" in text_of(viewed)
    assert "Steps: 0 (0 flagged as errors, 0 with a screenshot)" in overview
    assert "The run has no recorded steps." in overview
    assert "Stop reason: error" in overview
    assert "model: not recorded" in overview


# --- edge cases: screenshots, truncation, action spaces -------------------------------------


def one_step(observation: Observation, action: Any = None) -> Trajectory:
    return Trajectory(
        id="edge",
        task_id="t1",
        agent="tester",
        steps=[
            Step(
                index=1,
                action=action or Computer13Action(action_type="CLICK", parameters={"x": 1}),
                observation=observation,
            )
        ],
    )


async def view(server: ToolServer[TrajectoryContext], step: int = 1) -> types.CallToolResult:
    async with Client(server.server()) as client:
        return await client.call_tool(VIEW_STEP_TOOL, {"step": step})


async def test_missing_screenshot_is_reported_without_an_image(tmp_path: Path) -> None:
    trajectory = one_step(Observation(text="clicked", screenshot="edge/step_1.png"))
    result = await view(trajectory_server(trajectory, task=None, base_dir=tmp_path))
    assert not result.is_error
    assert images_of(result) == []
    text = text_of(result)
    assert "Screenshot: recorded, but the image file is missing; not attached" in text
    assert "Observation:\nclicked" in text
    assert "step_1.png" not in text


async def test_screenshot_mime_type_comes_from_the_bytes(tmp_path: Path) -> None:
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "a.png").write_bytes(JPEG)  # misnamed: the bytes are a JPEG
    (tmp_path / "shots" / "b.webp").write_bytes(b"not a known signature")
    jpeg = await view(
        trajectory_server(
            one_step(Observation(screenshot="shots/a.png")), task=None, base_dir=tmp_path
        )
    )
    [image] = images_of(jpeg)
    assert image.mime_type == "image/jpeg"
    assert base64.b64decode(image.data) == JPEG
    webp = await view(
        trajectory_server(
            one_step(Observation(screenshot="shots/b.webp")), task=None, base_dir=tmp_path
        )
    )
    [image] = images_of(webp)
    assert image.mime_type == "image/webp"  # no signature matched: the extension decides


async def test_screenshot_symlinked_outside_its_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG)
    base = tmp_path / "trajectories"
    (base / "edge").mkdir(parents=True)
    (base / "edge" / "s.png").symlink_to(outside)
    result = await view(
        trajectory_server(one_step(Observation(screenshot="edge/s.png")), task=None, base_dir=base)
    )
    assert not result.is_error
    assert images_of(result) == []
    assert "outside the trajectory's folder" in text_of(result)


async def test_huge_accessibility_tree_and_text_are_cut_with_a_notice(tmp_path: Path) -> None:
    tree = "A" * ACCESSIBILITY_TREE_LIMIT + "TREE-TAIL" * 5_000
    output = "TEXT-HEAD" + "o" * OBSERVATION_TEXT_LIMIT + "MIDDLE" + "o" * 20_000 + "TEXT-TAIL"
    trajectory = one_step(Observation(text=output, accessibility_tree=tree))
    text = text_of(await view(trajectory_server(trajectory, task=None, base_dir=tmp_path)))
    assert "A" * ACCESSIBILITY_TREE_LIMIT in text
    assert "TREE-TAIL" not in text
    omitted = len(tree) - ACCESSIBILITY_TREE_LIMIT
    assert (
        f"[... {omitted:,} more characters of step 1's accessibility tree omitted here]"
    ) in text
    assert f"Accessibility tree ({len(tree):,} characters)" in text
    # The observation text keeps its head and its tail, as in the judge's prompt.
    assert "TEXT-HEAD" in text
    assert "TEXT-TAIL" in text
    assert "MIDDLE" not in text
    cut = len(output) - OBSERVATION_TEXT_LIMIT
    assert f"[... {cut:,} characters from the middle of step 1's observation text" in text
    assert len(text) < ACCESSIBILITY_TREE_LIMIT + OBSERVATION_TEXT_LIMIT + 2_000


async def test_every_action_space_is_rendered_readably(tmp_path: Path) -> None:
    actions: list[Any] = [
        ToolCallAction(name="write_file", arguments={"path": "ä.md", "nested": {"n": [1, 2]}}),
        Computer13Action(action_type="HOTKEY", parameters={"keys": ["ctrl", "s"]}),
        PyAutoGuiAction(code="import pyautogui\npyautogui.click(10, 20)\npyautogui.press('tab')"),
        PyAutoGuiAction(code="WAIT"),
        AndroidAction(action_type="swipe", direction="up", extra={"source_field": 3}),
        AndroidAction(action_type="navigate_home"),
    ]
    trajectory = Trajectory(
        id="spaces",
        task_id="t1",
        agent="tester",
        steps=[Step(index=i, action=a) for i, a in enumerate(actions, start=1)],
    )
    server = trajectory_server(trajectory, task=None, base_dir=tmp_path)
    async with Client(server.server()) as client:
        texts = [
            text_of(await client.call_tool(VIEW_STEP_TOOL, {"step": i}))
            for i in range(1, len(actions) + 1)
        ]
        overview = text_of(await client.call_tool(OVERVIEW_TOOL, {}))
    assert "Tool call: write_file" in texts[0]
    assert json_block({"path": "ä.md", "nested": {"n": [1, 2]}}) in texts[0]
    assert "Computer action (computer_13): HOTKEY" in texts[1]
    assert json_block({"keys": ["ctrl", "s"]}) in texts[1]
    assert "pyautogui code:\nimport pyautogui\npyautogui.click(10, 20)\n" in texts[2]
    assert "Control signal (pyautogui space): WAIT" in texts[3]
    assert "Android action: swipe" in texts[4]
    assert json_block({"direction": "up", "extra": {"source_field": 3}}) in texts[4]
    assert "Android action: navigate_home" in texts[5]
    assert "Observation: none recorded." in texts[5]
    assert "1. tool write_file(" in overview
    assert "2. computer_13 HOTKEY(keys=['ctrl', 's'])" in overview
    assert "3. pyautogui: pyautogui.click(10, 20); pyautogui.press('tab')" in overview
    assert "5. android swipe(direction='up')" in overview
    assert "its instruction is not available" in overview


async def test_overview_cuts_long_answers_and_long_runs(tmp_path: Path) -> None:
    count = OVERVIEW_STEP_LIMIT + 50
    trajectory = Trajectory(
        id="long",
        task_id="t1",
        agent="tester",
        steps=[
            Step(index=i, action=ToolCallAction(name=f"tool_{i}", arguments={"v": "x" * 300}))
            for i in range(1, count + 1)
        ],
        final_response="R" * FINAL_RESPONSE_LIMIT + "ANSWER-TAIL",
    )
    server = trajectory_server(trajectory, task=plain_task("I" * 6_000), base_dir=tmp_path)
    async with Client(server.server()) as client:
        text = text_of(await client.call_tool(OVERVIEW_TOOL, {}))
    half = OVERVIEW_STEP_LIMIT // 2
    assert f"tool tool_{half}(" in text
    assert f"tool tool_{half + 1}(" not in text
    assert f"steps {half + 1} to {count - half} not listed here" in text
    assert f"tool tool_{count}(" in text
    assert "ANSWER-TAIL" not in text
    assert "characters of the final response not shown" in text
    assert "characters of the instruction not shown" in text
    assert f"from 1 to {count}" in text
    assert max(len(line) for line in text.splitlines() if "tool_" in line) < 120


def test_a_task_of_another_trajectory_is_refused(tmp_path: Path) -> None:
    other = plain_task().model_copy(update={"id": "t2"})
    with pytest.raises(ValueError, match="not the trajectory's task"):
        trajectory_server(secret_trajectory(), task=other, base_dir=tmp_path)


# --- loading files and the standalone server ------------------------------------------------


def test_loading_a_dataset_file_finds_its_task(mini: Dataset) -> None:
    loaded = load_trajectory_file(MINI / "trajectories" / "word-memo-q4-update--c13-pass.json")
    assert loaded.trajectory == mini.trajectories["word-memo-q4-update--c13-pass"]
    assert loaded.task == mini.tasks["word-memo-q4-update"]
    assert loaded.base_dir == MINI / "trajectories"
    assert loaded.warnings == []


async def test_a_file_outside_any_dataset_is_served_without_its_task(
    mini: Dataset, tmp_path: Path
) -> None:
    source = MINI / "trajectories" / "search-python3-release-dates--pass.json"
    copy = tmp_path / "loose.json"
    copy.write_bytes(source.read_bytes())
    loaded = load_trajectory_file(copy)
    assert loaded.task is None
    [warning] = loaded.warnings
    assert warning.severity == "warning"
    assert warning.field == "task_id"
    async with Client(loaded.server().server()) as client:
        overview = text_of(await client.call_tool(OVERVIEW_TOOL, {}))
    assert "search-python3-release-dates (its instruction is not available" in overview
    assert mini.tasks["search-python3-release-dates"].instruction not in overview


def test_an_invalid_task_file_is_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    (root / "tasks" / "t1").mkdir(parents=True)
    (root / "tasks" / "t1" / "task.json").write_text('{"id": "t1"}')
    (root / "trajectories").mkdir()
    path = root / "trajectories" / "run.json"
    path.write_text(secret_trajectory("run").model_dump_json())
    loaded = load_trajectory_file(path)
    assert loaded.task is None
    assert loaded.warnings
    assert all(problem.severity == "warning" for problem in loaded.warnings)
    assert any(problem.field == "domain" for problem in loaded.warnings)


def test_a_bad_trajectory_file_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    raw = secret_trajectory("bad").model_dump(mode="json")
    raw["steps"][1]["index"] = 5
    path.write_text(json.dumps(raw))
    with pytest.raises(DatasetError) as caught:
        load_trajectory_file(path)
    [problem] = caught.value.problems
    assert problem.file.endswith("bad.json")
    assert problem.field == "steps"
    assert "expected 2" in problem.message
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(DatasetError, match="invalid JSON at line 1"):
        load_trajectory_file(tmp_path / "broken.json")
    with pytest.raises(DatasetError, match="file is missing"):
        load_trajectory_file(tmp_path / "absent.json")
    with pytest.raises(DatasetError, match="not a valid trajectory id"):
        trajectory_file_in_dataset(MINI, "../escape")


def run_module(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_servers.trajectory", *arguments],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )


def test_the_module_exits_2_on_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    raw = secret_trajectory("bad").model_dump(mode="json")
    del raw["steps"][0]["action"]["name"]
    path.write_text(json.dumps(raw))
    done = run_module(str(path))
    assert done.returncode == 2
    assert f"error: {path}: steps[0].action.tool_call.name: Field required" in done.stderr
    missing = run_module("--dataset", str(MINI), "no-such-trajectory")
    assert missing.returncode == 2
    assert "no-such-trajectory.json: file is missing" in missing.stderr


async def test_stdio_server_for_a_file(mini: Dataset) -> None:
    trajectory_id = "android-markor-shopping-note--wrong-name-fail"
    trajectory = mini.trajectories[trajectory_id]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.trajectory", str(MINI / "trajectories" / f"{trajectory_id}.json")],
        cwd=REPO,
    )
    async with Client(parameters) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        overview = text_of(await client.call_tool(OVERVIEW_TOOL, {}))
        step = trajectory.steps[2]
        result = await client.call_tool(VIEW_STEP_TOOL, {"step": step.index})
        out_of_range = await client.call_tool(VIEW_STEP_TOOL, {"step": len(trajectory.steps) + 1})
    assert names == {VIEW_STEP_TOOL, OVERVIEW_TOOL}
    assert mini.tasks[trajectory.task_id].instruction in overview
    assert trajectory_id not in overview
    assert isinstance(step.action, AndroidAction)
    assert step.action.text is not None
    assert json.dumps(step.action.text) in text_of(result)
    assert step.reasoning is not None
    assert step.reasoning in text_of(result)
    assert step.observation is not None
    assert step.observation.screenshot is not None
    [image] = images_of(result)
    on_disk = (mini.trajectory_dir() / step.observation.screenshot).read_bytes()
    assert base64.b64decode(image.data) == on_disk
    assert out_of_range.is_error
    assert f"from 1 to {len(trajectory.steps)}" in text_of(out_of_range)


async def test_stdio_server_by_dataset_and_id(mini: Dataset) -> None:
    trajectory = mini.trajectories["pg-active-customers-view--mini-inner-join"]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.trajectory", "--dataset", str(MINI), trajectory.id],
        cwd=REPO,
    )
    async with Client(parameters) as client:
        result = await client.call_tool(VIEW_STEP_TOOL, {"step": 3})
    step = trajectory.steps[2]
    assert isinstance(step.action, ToolCallAction)
    assert json_block(step.action.arguments) in text_of(result)
    assert step.observation is not None
    assert step.observation.text is not None
    assert step.observation.text in text_of(result)
