"""Assembling a judge's prompt from the template files of this package.

Owns ``build_prompt`` (task + trajectory + prompt style + tools -> ``JudgePrompt``), the
``PromptStyle`` a judge mode chooses, the loading and filling of the templates, and the formatting
of the tool list. All wording lives in the ``.md`` files next to this module; they are
``string.Template`` texts (``$name`` placeholders, ``$$`` for a literal dollar) and hold no logic.

Must not import ``judge_agent``: the modes (``judge_agent.modes``) hand it their ``PromptStyle``,
tools are anything with a name, a description and an input schema (``ListedTool``), and the user
message is returned as plain parts (text and ``dataset.screenshots.Screenshot``) that the judge
turns into its model's content blocks.

Layout (domain x mode is a composition, so that modes cannot drift apart):

- ``domains/{domain}.md``: the system prompt of a domain (``ds``, ``gui``, ``mobile``, ``search``),
  identical for every mode, with the slots ``$subject`` (the domain record's subject line, see
  ``dataset.domains``), ``$subdomain_notes``, ``$tool_section`` and ``$verdict_format``;
- ``subdomains/{subdomain}.md``: optional notes for one subdomain (filesystem, postgres, word, ...);
- ``modes/tools_<name>.md`` (``tools_agent.md``, ``tools_react.md``): the tool section a
  ``PromptStyle`` names (the ``llm`` mode names none: its tool section is empty), built from the
  tool list,
  ``evidence/{domain}.md`` (what to check in that domain's environment), ``modes/evidence_rules.md``
  (the minimum-evidence rule), ``modes/view_step.md`` (when ``VIEW_TRAJECTORY_STEP`` is offered),
  ``modes/action_line.md`` (tasks of a domain whose record asks for it, in a mode that writes its
  calls as text: the one-line ``ACTION: {...}`` form ``judge_agent.react`` also reads)
  and ``modes/budget.md`` (when a turn budget is given); the react section also documents the text
  protocol that ``judge_agent.react`` parses;
- ``verdict_format.md``: the strict text verdict format shared by all modes;
- ``user.md``, ``screenshot_caption.md``, ``user_closing.md``: the user message around the rendered
  trajectory (``dataset.rendering``) and its screenshots;
- ``final_call.md``: the message before the last call without tools (``FINAL_CALL_MESSAGE``).

Hence the ``agent`` and ``llm`` prompts of a task differ only inside the tool section (a test diffs
them), and their user messages are identical.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from dataset.domains import DomainSpec, domain_spec
from dataset.models import Task, Trajectory
from dataset.rendering import DEFAULT_TREES, render_trajectory
from dataset.screenshots import DEFAULT_SCREENSHOTS, Screenshot, ScreenshotPolicy

__all__ = [
    "FINAL_CALL_MESSAGE",
    "MIN_EVIDENCE_CALLS",
    "SUBMIT_TOOL_NAME",
    "VIEW_STEP_TOOL_NAME",
    "JudgePrompt",
    "ListedTool",
    "PromptPart",
    "PromptStyle",
    "build_prompt",
    "load_template",
    "render_tool_list",
]

MIN_EVIDENCE_CALLS = 2
"""Evidence-gathering tool calls the tool-using modes are asked to make before deciding."""
VIEW_STEP_TOOL_NAME = "VIEW_TRAJECTORY_STEP"
"""The trajectory server's step tool; its usage notes are added when it is offered."""
SUBMIT_TOOL_NAME = "submit_verdict"
"""Left out of the listed tools: the agent tool section describes it on its own."""
DESCRIPTION_CHARS = 200
"""Characters of a tool's description shown in the tool list (its first sentence)."""
ARGUMENT_DESCRIPTION_CHARS = 120
"""Characters of an argument's description shown in the react tool list."""


def _template_file(name: str) -> Traversable:
    # ``package:path`` names a file another package ships (a kind's own judge notes); a plain
    # name is a path inside this package.
    package, separator, path = name.rpartition(":")
    if not separator:
        package, path = __package__ or "prompts", name
    return resources.files(package).joinpath(path)


@cache
def load_template(name: str) -> Template:
    """The template file ``name``: a path relative to this package (``domains/ds.md``), or
    ``package:path`` for a file inside another installed package (a kind's own notes,
    ``environments.workspace:judge_notes.md``)."""
    text = _template_file(name).read_text(encoding="utf-8")
    return Template(text.rstrip("\n"))


def _template_exists(name: str) -> bool:
    try:
        return _template_file(name).is_file()
    except ModuleNotFoundError:
        return False


def _fill(name: str, **values: str) -> str:
    return load_template(name).substitute(values)


FINAL_CALL_MESSAGE = _fill("final_call.md")
"""Sent before the last call without tools, when the turn budget (or another limit) ran out."""


class ListedTool(Protocol):
    """What the prompt needs to know of an offered tool (``judge_agent.model.ToolInfo`` is one)."""

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        ...

    @property
    def description(self) -> str:
        """What it does."""
        ...

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """The JSON schema of its arguments (an object schema)."""
        ...


class PromptStyle(BaseModel):
    """How a judge mode's prompt is composed; each mode in ``judge_agent.modes`` has one."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    tool_section: str | None = None
    """The tool section's template, ``modes/tools_<tool_section>.md`` (e.g. ``agent``,
    ``react``); None: no tool section and no tools (the ``llm`` mode)."""
    list_arguments: bool = False
    """Whether each listed tool's arguments are spelled out (needed when the model writes the
    calls as text rather than through native tool calling)."""


PromptPart = str | Screenshot
"""One part of the user message: a text block, or a screenshot to show as an image."""


class JudgePrompt(BaseModel):
    """The opening of a judge's conversation: a system prompt and a user message."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    style: PromptStyle
    """The style the prompt was built in."""

    system: str
    """The system prompt: the domain's instructions, the tool section and the verdict format."""

    user: list[PromptPart] = Field(default_factory=list)
    """The user message: the rendered task and trajectory as text, then each attached screenshot
    (a caption text block and the image), then a closing text block."""

    tool_section: str = ""
    """The part of ``system`` that differs between modes (empty in ``llm`` mode)."""

    @property
    def user_text(self) -> str:
        """The text blocks of the user message, joined by blank lines (images left out)."""
        return "\n\n".join(part for part in self.user if isinstance(part, str))


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    sentence = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _schema_type(schema: object) -> str:
    """A short name for the type a JSON schema describes."""
    described = "any"
    if isinstance(schema, dict):
        kind = schema.get("type")
        options = schema.get("anyOf", schema.get("oneOf"))
        if kind == "array" and isinstance(schema.get("items"), dict):
            described = f"array of {_schema_type(schema['items'])}"
        elif isinstance(kind, str):
            described = kind
        elif isinstance(kind, list):
            described = " or ".join(str(item) for item in kind)
        elif isinstance(options, list):
            described = " or ".join(_schema_type(option) for option in options)
        elif isinstance(schema.get("enum"), list):
            described = "one of " + ", ".join(repr(item) for item in schema["enum"])
    return described


def _arguments_line(tool: ListedTool) -> str:
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "Arguments: none (write {})."
    required = tool.input_schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    parts = []
    for name, schema in properties.items():
        kind = _schema_type(schema)
        flag = ", required" if name in required_names else ""
        description = schema.get("description") if isinstance(schema, dict) else None
        detail = (
            f": {_one_line(description, ARGUMENT_DESCRIPTION_CHARS)}"
            if isinstance(description, str) and description.strip()
            else ""
        )
        parts.append(f"`{name}` ({kind}{flag}){detail}")
    return "Arguments: " + "; ".join(parts)


def render_tool_list(tools: Sequence[ListedTool], *, with_arguments: bool) -> str:
    """One bullet per tool: its name and the first sentence of its description (and, for the
    react protocol, its arguments)."""
    lines = []
    for tool in tools:
        description = _one_line(tool.description, DESCRIPTION_CHARS) or "(no description)"
        lines.append(f"- `{tool.name}`: {description}")
        if with_arguments:
            lines.append(f"  {_arguments_line(tool)}")
    return "\n".join(lines) if lines else "- (no inspection tools are connected for this run)"


def _tool_section(
    style: PromptStyle,
    domain: DomainSpec,
    tools: Sequence[ListedTool],
    min_evidence_calls: int,
    turn_budget: int | None,
) -> str:
    if style.tool_section is None:
        return ""
    listed = [tool for tool in tools if tool.name != SUBMIT_TOOL_NAME]
    rules = ""
    if listed:
        rules = _fill("modes/evidence_rules.md", min_evidence_calls=str(min_evidence_calls))
        if any(tool.name == VIEW_STEP_TOOL_NAME for tool in listed):
            rules += "\n" + _fill("modes/view_step.md", view_step_tool=VIEW_STEP_TOOL_NAME)
        if domain.action_line and style.list_arguments:
            # Models that write their calls as text may use the source benchmark's action form.
            rules += "\n" + _fill("modes/action_line.md")
    if turn_budget is not None:
        rules += "\n" + _fill("modes/budget.md", turn_budget=str(turn_budget))
    section = _fill(
        f"modes/tools_{style.tool_section}.md",
        tool_list=render_tool_list(listed, with_arguments=style.list_arguments),
        domain_evidence=_fill(domain.evidence_template) if listed else "",
        evidence_rules=rules.strip("\n"),
    )
    return _tidy(section).strip()


def _tidy(text: str) -> str:
    """Empty slots leave runs of blank lines; keep at most one blank line between blocks."""
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def build_prompt(
    task: Task,
    trajectory: Trajectory,
    *,
    style: PromptStyle,
    tools: Sequence[ListedTool] | None,
    base_dir: Path | str | None,
    screenshots: ScreenshotPolicy | str = DEFAULT_SCREENSHOTS,
    trees: ScreenshotPolicy | str = DEFAULT_TREES,
    min_evidence_calls: int = MIN_EVIDENCE_CALLS,
    turn_budget: int | None = None,
    notes_template: str | None = None,
) -> JudgePrompt:
    """The system prompt and user message that open a judge's conversation.

    ``style`` is the judge mode's choice of tool section. ``tools`` are the tools the model is
    offered (``submit_verdict`` may be included or not; it is never listed with the others).
    They are listed in the tool section; a style without one accepts only None or an empty list
    (or ``submit_verdict`` alone). ``base_dir`` is the folder of the trajectory file
    (screenshots are relative to it; None attaches none and says so). ``screenshots`` is a
    ``ScreenshotPolicy`` or its string form (``"last"``, ``"all"``, ``"none"``, ``"8"``);
    ``trees`` chooses the steps whose recorded accessibility tree is shown, in the same forms
    (``"all"`` by default). ``turn_budget``, when given, tells tool-using modes how many
    tool-using answers they have (a style without a tool section ignores it).
    ``notes_template`` names the template with notes on the agent's environment (its
    environment kind's choice); without one the subdomain's own notes
    (``subdomains/<subdomain>.md``) are used when they exist.
    """
    domain = domain_spec(task.domain)
    if trajectory.task_id != task.id:
        raise ValueError(f"trajectory is for task {trajectory.task_id!r}, not {task.id!r}")
    offered = list(tools or [])
    if style.tool_section is None and any(tool.name != SUBMIT_TOOL_NAME for tool in offered):
        raise ValueError("a prompt without a tool section offers no tools; pass tools=None")

    notes_file = notes_template or f"subdomains/{task.subdomain}.md"
    if notes_template is not None and not _template_exists(notes_template):
        raise ValueError(f"no prompt template {notes_template!r} for the environment notes")
    tool_section = _tool_section(style, domain, offered, min_evidence_calls, turn_budget)
    system = _tidy(
        _fill(
            domain.system_template,
            subject=domain.subject_for(task.subdomain),
            subdomain_notes=_fill(notes_file) if _template_exists(notes_file) else "",
            tool_section=tool_section,
            verdict_format=_fill("verdict_format.md"),
        )
    )

    rendered = render_trajectory(
        task, trajectory, base_dir=base_dir, screenshots=screenshots, trees=trees
    )
    user: list[PromptPart] = [_fill("user.md", trajectory=rendered.text.rstrip())]
    for number, (step, image) in enumerate(rendered.images, start=1):
        user.append(_fill("screenshot_caption.md", number=str(number), step=str(step)))
        user.append(image)
    user.append(_fill("user_closing.md"))
    return JudgePrompt(style=style, system=system, user=user, tool_section=tool_section)
