"""Judge modes by name: what each mode gets and how it talks to the model.

Owns ``JudgeModeSpec`` (one record per mode), the registry (``register_mode``, ``judge_mode``,
``MODES``), the built-in modes ``agent``, ``llm`` and ``react``, and ``ModeName``, the type of a
record field that holds a mode's name (a string checked against the registry). Must be the only
place that tells modes apart: the loop, the grid and the command line ask a mode's spec what it
needs, never compare its name.

Adding a mode is one module and one registration: ``register_mode(JudgeModeSpec(...))`` naming
its conversation (one of ``judge_agent.conversation``'s, or a new function of ``JudgeRun``) and
its ``PromptStyle`` (which ``prompts/modes/tools_<name>.md`` section, whether tool arguments are
listed). Another package registers its modes through the entry-point group ``agentjudge.modes``:
an entry naming a ``JudgeModeSpec`` registers it, an entry naming a module imports it (the module
registers its modes itself). Entry points are read once, at the first lookup.
"""

from __future__ import annotations

import functools
import re
from collections.abc import KeysView
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Annotated

from pydantic import AfterValidator

from judge_agent.conversation import Conversation, native_tool_turns, react_turns, single_call
from judge_agent.plugins import register_entry_points
from prompts import PromptStyle

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODES",
    "JudgeModeSpec",
    "ModeName",
    "judge_mode",
    "mode_names",
    "register_mode",
]

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")

ENTRY_POINT_GROUP = "agentjudge.modes"
"""The entry-point group through which installed packages register judge modes."""


@dataclass(frozen=True)
class JudgeModeSpec:
    """Everything the runtime asks about a judge mode."""

    name: str
    """The mode's name (``--mode``, records, run keys): lower-case letters, digits, ``-``, ``_``."""
    description: str
    """One line on what the judge gets and how it answers (for help texts)."""
    conversation: Conversation
    """What drives the model until a verdict (``judge_agent.conversation``)."""
    prompt: PromptStyle
    """How the mode's prompt is composed; a style without a tool section lists no tools (the
    model is not told about them, even when the mode's conversation uses them itself)."""
    uses_tools: bool = False
    """Whether the judge gets tool servers over the environment (and so a replayed one); without
    tools it reads the trajectory only."""
    native_tools: bool = False
    """Whether those tools are offered through the API's native tool calling (else the prompt
    describes them and the conversation calls them)."""
    submit_verdict: bool = False
    """Whether ``submit_verdict`` is offered as a native tool."""
    turn_budget: bool = False
    """Whether ``TURNS`` bounds its tool-using calls; a mode without one is planned once per
    configuration, with ``turns`` 0."""

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(
                f"mode name {self.name!r}: use lower-case letters, digits, '-' and '_'"
            )
        if self.native_tools and not self.uses_tools:
            raise ValueError(f"mode {self.name!r}: native_tools needs uses_tools")


_REGISTRY: dict[str, JudgeModeSpec] = {}

MODES: KeysView[str] = _REGISTRY.keys()
"""The registered modes' names, in registration order (a live view of the registry)."""


def register_mode(spec: JudgeModeSpec, *, replace: bool = False) -> JudgeModeSpec:
    """Register ``spec`` under its name; a taken name is an error unless ``replace``."""
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"judge mode {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


@functools.cache
def _read_entry_points() -> None:
    """Register the modes of installed packages (once; a broken entry is warned about)."""

    def register(entry: EntryPoint) -> None:
        spec = entry.load()
        if not isinstance(spec, JudgeModeSpec):
            raise TypeError(f"{entry.value} is a {type(spec).__name__}, not a JudgeModeSpec")
        if spec.name not in _REGISTRY:
            register_mode(spec)

    register_entry_points(
        entry_points(group=ENTRY_POINT_GROUP), what="judge mode", register=register
    )


def mode_names() -> tuple[str, ...]:
    """The registered modes' names, in registration order (installed packages' included)."""
    _read_entry_points()
    return tuple(MODES)


def judge_mode(name: str) -> JudgeModeSpec:
    """The mode registered as ``name``; a ``ValueError`` naming the known modes otherwise."""
    if name not in _REGISTRY:
        _read_entry_points()
    spec = _REGISTRY.get(name)
    if spec is None:
        raise ValueError(f"unknown judge mode {name!r} (known: {', '.join(MODES)})")
    return spec


def _registered(name: str) -> str:
    return judge_mode(name).name


ModeName = Annotated[str, AfterValidator(_registered)]
"""A registered mode's name, as record fields hold it."""


register_mode(
    JudgeModeSpec(
        name="agent",
        description="the environment's tools and submit_verdict through native tool calling",
        conversation=native_tool_turns,
        prompt=PromptStyle(tool_section="agent"),
        uses_tools=True,
        native_tools=True,
        submit_verdict=True,
        turn_budget=True,
    )
)
register_mode(
    JudgeModeSpec(
        name="llm",
        description="no tools: one call that reads the trajectory and gives the verdict",
        conversation=single_call,
        prompt=PromptStyle(),
    )
)
register_mode(
    JudgeModeSpec(
        name="react",
        description="the same tools through a text protocol (Thought / Action / Final Answer)",
        conversation=react_turns,
        prompt=PromptStyle(tool_section="react", list_arguments=True),
        uses_tools=True,
        turn_budget=True,
    )
)
