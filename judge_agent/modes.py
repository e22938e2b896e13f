"""Judge modes by name: what each mode gets and how it talks to the model.

Owns ``JudgeModeSpec`` (one record per mode), the registry (``register_mode``, ``judge_mode``,
``MODES``), the built-in modes ``agent``, ``llm`` and ``react``, and ``ModeName``, the type of a
record field that holds a mode's name (a string checked against the registry). Must be the only
place that tells modes apart: the loop, the grid and the command line ask a mode's spec what it
needs, never compare its name.

Adding a mode is one module and one registration: a ``JudgeModeSpec`` naming its conversation
(one of ``judge_agent.conversation``'s, or a new function of ``JudgeRun``) and its ``PromptStyle``
(which ``prompts/modes/tools_<name>.md`` section, whether tool arguments are listed), registered
with ``register_mode``. The MobileJudgeBench methods (``judge_agent.mobile_methods``) are
registered here by module path, like the environment kinds, and imported at their first lookup, so
that their modules may import this one without a cycle. Another package registers its modes
through the entry-point group ``agentjudge.modes``: an entry naming a ``JudgeModeSpec`` registers
it, an entry naming a module imports it (the module registers its modes itself). Entry points are
read once, at the first lookup.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, KeysView, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ValidationError

from judge_agent.conversation import Conversation, native_tool_turns, react_turns, single_call
from judge_agent.plugins import register_entry_points
from judge_agent.subject import JudgeSubject, MethodRequest
from prompts import PromptStyle

__all__ = [
    "ENTRY_POINT_GROUP",
    "MOBILE_METHODS",
    "MODES",
    "JudgeModeSpec",
    "ModeName",
    "check_method_options",
    "judge_mode",
    "method_options_for",
    "mode_names",
    "register_mode",
    "register_mode_path",
    "select_modes",
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
    plan: Callable[[JudgeSubject], list[MethodRequest]] | None = None
    """For a mode that writes its own messages (a judge *method*, such as the MobileJudgeBench
    ones): the requests it sends for a subject, exactly, as far as they do not depend on earlier
    answers (``--dry-run`` writes them). With it the loop builds no prompt: the conversation
    reads the subject from ``JudgeRun.subject`` and sends its own messages."""
    group: str | None = None
    """A name that selects this mode together with the others of its group (``--mode
    mobile-methods``); grouped modes are left out of ``--mode all``, which means the runtime's
    own modes."""
    options: type[BaseModel] | None = None
    """The method's switches (``--method-option KEY=VALUE``), a pydantic model that refuses
    unknown fields; None: the mode takes none."""

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(
                f"mode name {self.name!r}: use lower-case letters, digits, '-' and '_'"
            )
        if self.native_tools and not self.uses_tools:
            raise ValueError(f"mode {self.name!r}: native_tools needs uses_tools")


_REGISTRY: dict[str, JudgeModeSpec | str] = {}
"""Each mode's spec, or where to load it from (``module:attribute``)."""

MODES: KeysView[str] = _REGISTRY.keys()
"""The registered modes' names, in registration order (a live view of the registry)."""


def register_mode(spec: JudgeModeSpec, *, replace: bool = False) -> JudgeModeSpec:
    """Register ``spec`` under its name; a taken name is an error unless ``replace``."""
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"judge mode {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def register_mode_path(name: str, location: str) -> None:
    """Register the mode ``name`` by where its spec is, ``"module:attribute"``; the module is
    imported at the mode's first lookup. A taken name is an error."""
    if name in _REGISTRY:
        raise ValueError(f"judge mode {name!r} is already registered")
    _REGISTRY[name] = location


def _load(name: str, entry: JudgeModeSpec | str) -> JudgeModeSpec:
    if isinstance(entry, JudgeModeSpec):
        return entry
    module, _, attribute = entry.partition(":")
    spec = getattr(importlib.import_module(module), attribute)
    if not isinstance(spec, JudgeModeSpec):
        raise TypeError(f"judge mode {name!r} ({entry}) is a {type(spec).__name__}, not a spec")
    if spec.name != name:
        raise ValueError(f"judge mode registered as {name!r} calls itself {spec.name!r}")
    _REGISTRY[name] = spec
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
    entry = _REGISTRY.get(name)
    if entry is None:
        raise ValueError(f"unknown judge mode {name!r} (known: {', '.join(MODES)})")
    return _load(name, entry)


def select_modes(text: str) -> tuple[str, ...]:
    """The modes a ``--mode`` value names: ``all`` (the ungrouped modes), a comma list of mode
    names and group names; a ``ValueError`` naming what is known otherwise."""
    names = mode_names()
    if text.strip() == "all":
        return tuple(name for name in names if judge_mode(name).group is None)
    chosen: list[str] = []
    for part in text.split(","):
        name = part.strip()
        members = [mode for mode in names if judge_mode(mode).group == name]
        if name in names:
            members = [name]
        if not members:
            groups = sorted({g for mode in names if (g := judge_mode(mode).group) is not None})
            raise ValueError(
                f"unknown mode {name!r}: use {', '.join(names)}, a group "
                f"({', '.join(groups) or 'none'}), a comma list, or all"
            )
        chosen.extend(mode for mode in members if mode not in chosen)
    return tuple(chosen)


def method_options_for(name: str, options: Mapping[str, str]) -> dict[str, str]:
    """The switches of ``options`` that mode ``name`` takes (the others belong to other modes),
    checked by its options model; a ``ValueError`` naming the mode and the switch when a value
    is out of range."""
    spec = judge_mode(name)
    if spec.options is None:
        return {}
    known = {key: value for key, value in options.items() if key in spec.options.model_fields}
    try:
        spec.options.model_validate(known)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}={known.get(str(e['loc'][0]), '')!r}: {e['msg']}"
            for e in error.errors(include_url=False)
        )
        raise ValueError(f"mode {name!r}: {problems}") from None
    return known


def check_method_options(modes: Sequence[str], options: Mapping[str, str]) -> None:
    """A ``ValueError`` when a switch is taken by none of ``modes`` or a value is out of range
    for a mode that takes it."""
    taken: set[str] = set()
    for name in modes:
        taken.update(method_options_for(name, options))
    unknown = sorted(set(options) - taken)
    if unknown:
        raise ValueError(
            f"method option(s) {', '.join(unknown)} are taken by none of the modes "
            f"{', '.join(modes)}"
        )


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

MOBILE_METHODS: dict[str, str] = {
    "a3-essential": "judge_agent.mobile_methods.a3_essential:SPEC",
    "a3-final": "judge_agent.mobile_methods.a3_final:SPEC",
    "agentrewardbench": "judge_agent.mobile_methods.agent_reward_bench:SPEC",
    "androidarena": "judge_agent.mobile_methods.android_arena:SPEC",
    "mobile-baseline": "judge_agent.mobile_methods.baseline:SPEC",
    "spa-bench": "judge_agent.mobile_methods.spa_bench:SPEC",
}
"""The MobileJudgeBench methods, one module each, as ``module:attribute`` of their spec."""

for _name, _location in MOBILE_METHODS.items():
    register_mode_path(_name, _location)
