"""Judge prompts: modes differ only in the tool section; the user message is shared by all.

Each mode's prompt is built with its registered ``PromptStyle`` (``judge_agent.modes``).
"""

from __future__ import annotations

import base64
import difflib
import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from dataset.domains import (
    DomainSpec,
    domain_names,
    domain_spec,
    register_domain,
    unregister_domain,
)
from dataset.models import Task, Trajectory
from dataset.screenshots import Screenshot
from dataset.store import Dataset, load_dataset
from judge_agent.loop import opening_messages
from judge_agent.model import ContentImage, ContentText, ToolInfo
from judge_agent.modes import judge_mode
from judge_agent.verdict_parsing import SUBMIT_VERDICT_TOOL, parse_verdict_text
from mcp_servers.trajectory.server import TOOLS as TRAJECTORY_TOOLS
from prompts import (
    FINAL_CALL_MESSAGE,
    MIN_EVIDENCE_CALLS,
    JudgePrompt,
    PromptStyle,
    build_prompt,
    load_template,
)

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "datasets" / "examples" / "mini"
TRAJECTORY_IDS = sorted(load_dataset(MINI).trajectories)

VIEW_STEP = ToolInfo(
    name="VIEW_TRAJECTORY_STEP",
    description=TRAJECTORY_TOOLS["VIEW_TRAJECTORY_STEP"].description,
    input_schema={
        "type": "object",
        "properties": {"step": {"type": "integer", "minimum": 1, "description": "Step number."}},
        "required": ["step"],
    },
)
READ_FILE = ToolInfo(
    name="read_text_file",
    description="Read a text file from the sandbox. Returns its contents as text.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the file."},
            "head": {"type": "integer"},
        },
        "required": ["path"],
    },
)
RUN_SQL = ToolInfo(
    name="execute_sql",
    description="Run one SQL statement.",
    input_schema={"type": "object", "properties": {"sql": {"type": "string"}}},
)
TOOLS = [VIEW_STEP, READ_FILE, RUN_SQL]


@pytest.fixture(scope="module")
def mini() -> Dataset:
    return load_dataset(MINI)


def _pair(mini: Dataset, trajectory_id: str) -> tuple[Task, Trajectory]:
    trajectory = mini.trajectories[trajectory_id]
    return mini.tasks[trajectory.task_id], trajectory


def _style(mode: str) -> PromptStyle:
    return judge_mode(mode).prompt


def _build(mini: Dataset, trajectory_id: str, mode: str, **options: object) -> JudgePrompt:
    task, trajectory = _pair(mini, trajectory_id)
    tools = TOOLS if judge_mode(mode).uses_tools else None
    return build_prompt(
        task,
        trajectory,
        style=_style(mode),
        tools=tools,
        base_dir=mini.trajectory_dir(),
        **options,  # type: ignore[arg-type]
    )


def _section_lines(prompt: JudgePrompt) -> range:
    """The line numbers of the tool section inside the system prompt."""
    lines = prompt.system.splitlines()
    section = prompt.tool_section.splitlines()
    assert section, "the tool section is empty"
    for start in range(len(lines) - len(section) + 1):
        if lines[start : start + len(section)] == section:
            return range(start, start + len(section))
    raise AssertionError("the tool section is not a contiguous part of the system prompt")


@pytest.mark.parametrize("other_mode", ["agent", "react"])
@pytest.mark.parametrize("trajectory_id", TRAJECTORY_IDS)
def test_tool_modes_differ_from_llm_only_inside_the_tool_section(
    mini: Dataset, trajectory_id: str, other_mode: str
) -> None:
    llm = _build(mini, trajectory_id, "llm")
    other = _build(mini, trajectory_id, other_mode)
    assert llm.tool_section == ""
    section = _section_lines(other)

    llm_lines = llm.system.splitlines()
    other_lines = other.system.splitlines()
    matcher = difflib.SequenceMatcher(a=llm_lines, b=other_lines, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert changes, "the tool-using prompt should add a tool section"
    for _tag, i1, i2, j1, j2 in changes:
        # Nothing of the llm prompt is removed or rewritten, apart from blank separator lines...
        assert all(not line.strip() for line in llm_lines[i1:i2]), llm_lines[i1:i2]
        # ...and every added line lies inside the tool section (or is a blank separator).
        for number in range(j1, j2):
            assert number in section or not other_lines[number].strip(), other_lines[number]

    # The same check with a textual diff, as a reviewer would read it.
    diff = difflib.unified_diff(llm_lines, other_lines, lineterm="", n=0)
    added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    removed = [
        line[1:]
        for line in difflib.unified_diff(llm_lines, other_lines, lineterm="", n=0)
        if line.startswith("-") and not line.startswith("---")
    ]
    assert all(not line.strip() for line in removed)
    section_text = other.tool_section.splitlines()
    assert [line for line in added if line.strip()] == [
        line for line in section_text if line.strip()
    ]


@pytest.mark.parametrize("trajectory_id", TRAJECTORY_IDS)
def test_the_user_message_is_identical_in_every_mode(mini: Dataset, trajectory_id: str) -> None:
    prompts = [_build(mini, trajectory_id, mode) for mode in ("agent", "llm", "react")]
    assert prompts[0].user == prompts[1].user == prompts[2].user


@pytest.mark.parametrize("trajectory_id", TRAJECTORY_IDS)
def test_prompts_do_not_leak_the_label(mini: Dataset, trajectory_id: str) -> None:
    _, trajectory = _pair(mini, trajectory_id)
    prompt = _build(mini, trajectory_id, "agent", screenshots="all")
    everything = prompt.system + prompt.user_text
    assert trajectory.id not in everything
    assert trajectory.label is not None
    if trajectory.label.verifier_output:
        assert trajectory.label.verifier_output.strip() not in everything
    for voter in trajectory.label.votes:
        assert voter not in everything
    for value in trajectory.metadata.values():
        assert str(value) not in everything


@pytest.mark.parametrize("mode", ["agent", "llm", "react"])
@pytest.mark.parametrize("trajectory_id", TRAJECTORY_IDS)
def test_every_placeholder_is_filled(mini: Dataset, trajectory_id: str, mode: str) -> None:
    prompt = _build(mini, trajectory_id, mode)
    for text in (prompt.system, prompt.user_text):
        assert not re.search(r"\$\{?[a-z_]", text), text
    assert "\n\n\n" not in prompt.system


def test_every_domain_has_a_template_with_all_slots() -> None:
    for domain in map(domain_spec, domain_names()):
        template = load_template(domain.system_template).template
        for slot in ("$subject", "$subdomain_notes", "$tool_section", "$verdict_format"):
            assert slot in template, (domain.name, slot)
        assert resources.files("prompts").joinpath(domain.evidence_template).is_file()


def test_the_agent_prompt_explains_tools_evidence_and_submission(mini: Dataset) -> None:
    prompt = _build(mini, "fs-meeting-notes-index--sonnet-pass", "agent")
    section = prompt.tool_section
    for tool in TOOLS:
        assert f"- `{tool.name}`: " in section
    assert "- `read_text_file`: Read a text file from the sandbox.\n" in section
    assert "Returns its contents" not in section  # one line per tool
    assert f"at least {MIN_EVIDENCE_CALLS} tool calls" in section
    assert "VIEW_TRAJECTORY_STEP` with a step number" in section
    assert "intermediate step" in section
    assert "`submit_verdict`" in section
    assert "Action Input" not in section
    # Subdomain notes reach the prompt, with the literal sandbox placeholder.
    assert "Notes for filesystem tasks" in prompt.system
    assert "${SANDBOX_ROOT}" in prompt.system


def test_the_react_prompt_documents_the_protocol_and_arguments(mini: Dataset) -> None:
    prompt = _build(mini, "pg-active-customers-view--sonnet-pass", "react")
    section = prompt.tool_section
    assert "Thought:" in section
    assert "Action:" in section
    assert "Action Input:" in section
    assert "Final Answer:" in section
    assert "Arguments: `step` (integer, required): Step number." in section
    assert "`path` (string, required): Path of the file.; `head` (integer)" in section
    assert "Arguments: `sql` (string)" in section
    assert "submit_verdict" not in section
    assert "Notes for database tasks" in prompt.system


def test_the_llm_prompt_names_no_tool(mini: Dataset) -> None:
    for trajectory_id in TRAJECTORY_IDS:
        system = _build(mini, trajectory_id, "llm").system
        for name in ("VIEW_TRAJECTORY_STEP", "submit_verdict", "read_text_file", "Action Input"):
            assert name not in system


def test_submit_verdict_is_never_listed_as_an_inspection_tool(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    with_submit = build_prompt(
        task,
        trajectory,
        style=_style("agent"),
        tools=[*TOOLS, SUBMIT_VERDICT_TOOL],
        base_dir=mini.trajectory_dir(),
    )
    without = _build(mini, "fs-meeting-notes-index--sonnet-pass", "agent")
    assert with_submit == without
    assert "- `submit_verdict`" not in with_submit.system


def test_the_view_step_notes_need_the_view_step_tool(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    prompt = build_prompt(
        task, trajectory, style=_style("agent"), tools=[READ_FILE], base_dir=mini.trajectory_dir()
    )
    assert "VIEW_TRAJECTORY_STEP" not in prompt.system
    assert f"at least {MIN_EVIDENCE_CALLS} tool calls" in prompt.system


def test_an_agent_without_inspection_tools_is_told_so(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    prompt = build_prompt(task, trajectory, style=_style("agent"), tools=[], base_dir=None)
    assert "no inspection tools are connected" in prompt.tool_section
    assert "at least" not in prompt.tool_section


def test_the_turn_budget_and_evidence_minimum_are_configurable(mini: Dataset) -> None:
    prompt = _build(
        mini,
        "fs-meeting-notes-index--sonnet-pass",
        "agent",
        turn_budget=4,
        min_evidence_calls=3,
    )
    assert "at most 4 answers in which you may call tools" in prompt.tool_section
    assert "at least 3 tool calls" in prompt.tool_section
    llm = _build(mini, "fs-meeting-notes-index--sonnet-pass", "llm", turn_budget=4)
    assert "at most 4" not in llm.system


def test_screenshots_follow_the_text_with_captions(mini: Dataset) -> None:
    prompt = _build(mini, "word-memo-q4-update--c13-pass", "agent", screenshots="3")
    kinds = ["text" if isinstance(part, str) else "image" for part in prompt.user]
    assert kinds == ["text", "text", "image", "text", "image", "text", "image", "text"]
    captions = [
        part
        for part, following in zip(prompt.user, prompt.user[1:], strict=False)
        if isinstance(part, str) and isinstance(following, Screenshot)
    ]
    assert captions == [
        "Image 1: the screenshot recorded after step 1.",
        "Image 2: the screenshot recorded after step 5.",
        "Image 3: the screenshot recorded after step 8.",
    ]
    last = prompt.user[-1]
    assert isinstance(last, str)
    assert "end of the record" in last
    # The judge turns the parts into its model's content blocks, images base64-encoded.
    messages = opening_messages(prompt)
    assert messages[0].content == prompt.system
    content = messages[1].content
    assert isinstance(content, list)
    assert len(content) == len(prompt.user)
    for part, block in zip(prompt.user, content, strict=True):
        if isinstance(part, str):
            assert block == ContentText(text=part)
        else:
            assert isinstance(block, ContentImage)
            assert base64.b64decode(block.data) == part.data
            assert block.mime_type == part.mime_type == "image/png"


def test_default_screenshot_policy_is_the_last_one(mini: Dataset) -> None:
    prompt = _build(mini, "android-markor-shopping-note--pass", "llm")
    images = [part for part in prompt.user if isinstance(part, Screenshot)]
    assert len(images) == 1
    assert "Image 1: the screenshot recorded after step 7." in prompt.user_text


def test_verdict_format_is_in_every_mode_and_not_parsable_by_itself(mini: Dataset) -> None:
    for mode in ("agent", "llm", "react"):
        system = _build(mini, "search-python3-release-dates--pass", mode).system
        assert "## Verdict format" in system
        assert "RESULT: PASS or FAIL" in system
        assert parse_verdict_text(system) is None
    assert "RESULT" in FINAL_CALL_MESSAGE
    assert parse_verdict_text(FINAL_CALL_MESSAGE) is None


def test_bad_requests_are_refused(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    llm = _style("llm")
    with pytest.raises(ValueError, match="without a tool section offers no tools"):
        build_prompt(task, trajectory, style=llm, tools=TOOLS, base_dir=None)
    other_task = mini.tasks["pg-active-customers-view"]
    with pytest.raises(ValueError, match="trajectory is for task"):
        build_prompt(other_task, trajectory, style=llm, tools=None, base_dir=None)
    with pytest.raises(ValueError, match="screenshot"):
        build_prompt(task, trajectory, style=llm, tools=[], base_dir=None, screenshots="some")


def test_unknown_subdomains_fall_back_to_the_domain_defaults(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    odd = task.model_copy(update={"subdomain": "s3"})
    prompt = build_prompt(odd, trajectory, style=_style("llm"), tools=None, base_dir=None)
    assert "data task on files or a database" in prompt.system
    assert "Notes for" not in prompt.system


@dataclass(frozen=True)
class _PlainTool:
    """A tool as any caller may describe it: prompts need no judge_agent type."""

    name: str
    description: str
    input_schema: dict[str, Any]


def test_any_tool_description_can_be_listed(mini: Dataset) -> None:
    plain = [_PlainTool(tool.name, tool.description, tool.input_schema) for tool in TOOLS]
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    for mode in ("agent", "react"):
        from_plain = build_prompt(
            task, trajectory, style=_style(mode), tools=plain, base_dir=mini.trajectory_dir()
        )
        assert from_plain == _build(mini, "fs-meeting-notes-index--sonnet-pass", mode)


def test_a_style_can_list_arguments_in_the_agent_section(mini: Dataset) -> None:
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    listed = build_prompt(
        task,
        trajectory,
        style=PromptStyle(tool_section="agent", list_arguments=True),
        tools=TOOLS,
        base_dir=None,
    )
    assert "`submit_verdict`" in listed.tool_section
    assert "Arguments: `step` (integer, required): Step number." in listed.tool_section
    plain = build_prompt(task, trajectory, style=_style("agent"), tools=TOOLS, base_dir=None)
    assert "Arguments:" not in plain.tool_section


def test_prompts_do_not_import_the_judge() -> None:
    code = (
        "import sys, prompts, prompts.templates\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'judge_agent'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]"


def test_environment_notes_template_replaces_the_subdomain_notes(mini: Dataset) -> None:
    """An environment kind's notes template (``notes_template``) is what the system prompt
    carries, instead of the notes the subdomain would pick; a missing template is refused."""
    filesystem_id = next(i for i in TRAJECTORY_IDS if i.startswith("fs-"))
    own = _build(mini, filesystem_id, "llm")
    chosen = _build(mini, filesystem_id, "llm", notes_template="subdomains/postgres.md")
    assert "## Notes for filesystem tasks" in own.system
    assert "## Notes for filesystem tasks" not in chosen.system
    assert "## Notes for database tasks" in chosen.system
    with pytest.raises(ValueError, match="no-such-notes"):
        _build(mini, filesystem_id, "llm", notes_template="subdomains/no-such-notes.md")


def test_notes_may_live_in_another_package(mini: Dataset) -> None:
    """``package:path`` names notes a kind ships in its own package (the workspace kind's); an
    unknown package or file is refused like a missing template."""
    filesystem_id = next(i for i in TRAJECTORY_IDS if i.startswith("fs-"))
    chosen = _build(
        mini, filesystem_id, "llm", notes_template="environments.workspace:judge_notes.md"
    )
    assert "## Notes for coding tasks" in chosen.system
    assert "## Notes for filesystem tasks" not in chosen.system
    for missing in ("environments.workspace:no-such.md", "no_such_package:notes.md"):
        with pytest.raises(ValueError, match="for the environment notes"):
            _build(mini, filesystem_id, "llm", notes_template=missing)


def test_a_registered_domain_frames_the_prompt_from_its_record(mini: Dataset) -> None:
    """A domain added as a record (no code in this package) gets its subject line, its
    templates and, when its record asks for it, the one-line action form."""
    task, trajectory = _pair(mini, "fs-meeting-notes-index--sonnet-pass")
    spec = DomainSpec(
        name="notebook",
        subject="a notebook server",
        subjects={"jupyter": "a Jupyter notebook"},
        system_template="domains/ds.md",
        evidence_template="evidence/search.md",
        action_line=True,
    )
    register_domain(spec)
    try:
        moved = task.model_copy(update={"domain": "notebook", "subdomain": "jupyter"})
        react = build_prompt(
            moved, trajectory, style=_style("react"), tools=TOOLS, base_dir=mini.trajectory_dir()
        )
    finally:
        unregister_domain(spec.name)
    assert "a Jupyter notebook" in react.system
    assert load_template("evidence/search.md").template.splitlines()[1] in react.tool_section
    assert 'ACTION: {"action_type": "CLICK"' in react.tool_section


def test_gui_react_prompts_describe_the_one_line_action_form(mini: Dataset) -> None:
    gui = "word-memo-q4-update--c13-pass"
    react = _build(mini, gui, "react")
    assert 'ACTION: {"action_type": "CLICK"' in react.tool_section
    # Native tool calling needs no text form; other domains have no desktop actions.
    assert "ACTION: {" not in _build(mini, gui, "agent").tool_section
    assert "ACTION: {" not in _build(mini, "fs-meeting-notes-index--sonnet-pass", "react").system
    # The GUI evidence notes tell how to aim from the element list.
    assert "x + width/2" in react.tool_section


def test_the_tree_policy_chooses_which_recorded_trees_are_shown(mini: Dataset) -> None:
    gui = "word-memo-q4-update--c13-pass"
    trajectory = mini.trajectories[gui]
    trees = [s.observation.accessibility_tree for s in trajectory.steps if s.observation]
    assert len(trees) == 8
    everything = _build(mini, gui, "llm")
    assert everything.user_text.count("Accessibility tree (") == 8
    last = _build(mini, gui, "llm", trees="last", screenshots="none")
    assert last.user_text.count("Accessibility tree (") == 1
    assert last.user_text.count("Accessibility tree: recorded (") == 7
    assert last.user_text.index("Accessibility tree (") > last.user_text.index("### Step 8")
    none = _build(mini, gui, "llm", trees="none")
    assert "Accessibility tree (" not in none.user_text
    sampled = _build(mini, gui, "llm", trees="3")
    assert sampled.user_text.count("Accessibility tree (") == 3
