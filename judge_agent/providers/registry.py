"""Model providers by name: ``get_model("provider/model")`` finds its provider here.

Owns the registry of providers, how they are registered (``model_provider`` on a class,
``register_provider`` with a ``module:attr`` target loaded on first use, or the entry-point group
``agentjudge.providers``), ``get_model``, ``is_scripted`` and ``no_model_hint``, the one text that
says how to configure a judge model (each provider contributes its lines). The built-in providers
(openai, anthropic, mock) are registered by ``module:attr``, so their SDKs are imported only when
a run uses them.

Must be the only place that tells providers apart: the rest of the runtime asks
``is_scripted(model)``, never the model's name.

A provider is a class called as ``Provider(model, **options)`` whose instances satisfy
``judge_agent.model.ModelAPI`` and name themselves ``provider/model``. It declares
``scripted: ClassVar[bool]``: True for a stand-in whose answers come from a script (its verdicts
are recorded as dry runs, never judge results). A wrapper around a model (a cache, a connection
limit) exposes the wrapped model as ``inner``; ``is_scripted`` looks through it.

A third-party package registers a provider through the entry-point group
``agentjudge.providers``: an entry ``name = "package.module:ProviderClass"`` registers the class
under ``name`` (imported on first use); an entry naming a module alone (``name =
"package.module"``) imports that module when the registry is first read, and the module
registers its providers itself (with ``model_provider`` or ``register_provider``, which can also
give hint lines).
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal, TypeVar

from judge_agent.model import ModelAPI
from judge_agent.plugins import register_entry_points

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODEL_ENV",
    "ModelSetup",
    "ProviderRegistration",
    "get_model",
    "is_scripted",
    "model_provider",
    "no_model_hint",
    "provider_class",
    "provider_names",
    "register_provider",
    "split_model_name",
]

MODEL_ENV = "JUDGE_MODEL"
"""Environment variable naming the judge model when ``--model`` is not given."""

ENTRY_POINT_GROUP = "agentjudge.providers"
"""The entry-point group through which installed packages register providers."""

ProviderClass = Callable[..., ModelAPI]
"""A provider: called with the model name (the part after ``provider/``) and options."""

_Class = TypeVar("_Class", bound=type[Any])


@dataclass(frozen=True)
class ModelSetup:
    """One way to configure a provider, as the no-model hint shows it."""

    model: str
    """An example model, ``provider/model`` (an upper-case part is a placeholder, e.g.
    ``openai/NAME``)."""
    variable: str
    """The environment variable the setup needs, e.g. ``OPENAI_API_KEY``."""
    value: str | None = None
    """An example value shown on the command line (an address, never a key); None: the variable
    is only named."""
    purpose: str | None = None
    """What this setup is for, when it is more than the provider itself (e.g. any
    OpenAI-compatible server)."""


@dataclass(frozen=True)
class ProviderRegistration:
    """One registered provider."""

    name: str
    """The ``provider`` part of ``provider/model``."""
    target: str | ProviderClass
    """The provider class, or where to import it from (``module:attr``)."""
    setup: tuple[ModelSetup, ...] = ()
    """How to configure it, for the no-model hint (nothing: the hint does not name it)."""
    note: str | None = None
    """One more line for the hint, e.g. that the provider is a scripted stand-in."""


_REGISTRY: dict[str, ProviderRegistration] = {}


def register_provider(
    name: str,
    target: str | ProviderClass,
    *,
    setup: Sequence[ModelSetup] = (),
    note: str | None = None,
    replace: bool = False,
) -> ProviderRegistration:
    """Register the provider ``name``: a class, or ``module:attr`` to import on first use.
    Registering a taken name is an error unless ``replace``."""
    if not name or "/" in name:
        raise ValueError(f"provider name {name!r}: give a non-empty name without '/'")
    if isinstance(target, str) and ":" not in target:
        raise ValueError(f"provider {name!r}: target {target!r} is not module:attr")
    if name in _REGISTRY and not replace:
        raise ValueError(f"provider {name!r} is already registered")
    registration = ProviderRegistration(name, target, tuple(setup), note)
    _REGISTRY[name] = registration
    return registration


def model_provider(
    name: str, *, setup: Sequence[ModelSetup] = (), note: str | None = None
) -> Callable[[_Class], _Class]:
    """Class decorator: register the decorated provider class as ``name``."""

    def register(cls: _Class) -> _Class:
        register_provider(name, cls, setup=setup, note=note)
        return cls

    return register


@functools.cache
def _read_entry_points() -> None:
    """Register the providers of installed packages (once; a broken entry is warned about)."""

    def register(entry: EntryPoint) -> None:
        if entry.name not in _REGISTRY:
            register_provider(entry.name, entry.value)

    register_entry_points(
        entry_points(group=ENTRY_POINT_GROUP), what="model provider", register=register
    )


def _registrations() -> dict[str, ProviderRegistration]:
    _read_entry_points()
    return _REGISTRY


def provider_names() -> tuple[str, ...]:
    """The registered provider names, sorted."""
    return tuple(sorted(_registrations()))


def split_model_name(spec: str) -> tuple[str, str]:
    """``provider/model`` -> (provider, model); the model part may itself contain slashes."""
    provider, separator, model = spec.partition("/")
    if not separator or not provider or not model:
        raise ValueError(f"model {spec!r}: expected provider/model, e.g. openai/gpt-4o")
    if provider not in _registrations():
        known = ", ".join(provider_names())
        raise ValueError(f"model {spec!r}: unknown provider {provider!r} (known: {known})")
    return provider, model


def provider_class(name: str) -> ProviderClass:
    """The provider registered as ``name``, imported now if it was registered by path."""
    registrations = _registrations()
    if name not in registrations:
        known = ", ".join(provider_names())
        raise ValueError(f"unknown provider {name!r} (known: {known})")
    target = registrations[name].target
    if not isinstance(target, str):
        return target
    module_name, _, attribute = target.partition(":")
    loaded: ProviderClass = getattr(importlib.import_module(module_name), attribute)
    return loaded


def get_model(spec: str | None = None, **options: Any) -> ModelAPI:
    """The model ``spec`` names (default: ``$JUDGE_MODEL``), built with ``options``."""
    spec = spec or os.environ.get(MODEL_ENV)
    if not spec:
        raise ValueError(f"no judge model: pass --model provider/model or set {MODEL_ENV}")
    provider, model = split_model_name(spec)
    return provider_class(provider)(model, **options)


def is_scripted(model: object) -> bool:
    """Whether ``model`` (or the model inside its wrappers) answers from a script."""
    while (inner := getattr(model, "inner", None)) is not None:
        model = inner
    return getattr(model, "scripted", False) is True


def _command(setup: ModelSetup) -> str:
    prefix = f"{setup.variable}={setup.value} " if setup.value is not None else ""
    return f"  {prefix}make judge TURNS=16 MODEL={setup.model}"


def _comment(setup: ModelSetup) -> str:
    return f"# {setup.purpose}" if setup.purpose else f"# with {setup.variable} set"


def _lines(setups: list[ModelSetup], notes: list[str]) -> str:
    # Commands that name their variable only come first, their comments aligned in one column;
    # a command that also sets a value is longer and gets its comment on the next line.
    ordered = sorted(setups, key=lambda setup: setup.value is not None)
    plain = [len(_command(setup)) for setup in ordered if setup.value is None]
    column = (max(plain) if plain else 40) + 3
    lines = [
        "To run the judges, name a model as provider/model and give it credentials, for example:"
    ]
    for setup in ordered:
        command, comment = _command(setup), _comment(setup)
        if setup.value is None:
            lines.append(command.ljust(column) + comment)
        else:
            lines += [command, " " * max(2, min(column, 96 - len(comment))) + comment]
    lines.append(
        f"Set {MODEL_ENV}=provider/model to make it the default, or pass --model to agentjudge "
        "judge."
    )
    return "\n".join(lines + notes)


def _sentence(setups: list[ModelSetup]) -> str:
    examples = [
        f"{setup.model} with {setup.variable}" + (f" for {setup.purpose}" if setup.purpose else "")
        for setup in sorted(setups, key=lambda setup: setup.value is not None)
    ]
    if len(examples) > 1:
        examples[-1] = "or " + examples[-1]
    listed = ", ".join(examples) if len(examples) > 2 else " ".join(examples)
    return f"Set {MODEL_ENV} (or pass --model) to provider/model" + (
        f", e.g. {listed}." if listed else "."
    )


def no_model_hint(form: Literal["lines", "sentence"] = "lines") -> str:
    """How to configure a judge model, from every provider's setup lines: ``lines`` for a
    terminal (example commands, then each provider's note), ``sentence`` for a report."""
    registrations = list(_registrations().values())
    setups = [setup for registration in registrations for setup in registration.setup]
    if form == "sentence":
        return _sentence(setups)
    notes = [registration.note for registration in registrations if registration.note]
    return _lines(setups, notes)


register_provider(
    "openai",
    "judge_agent.providers.openai:OpenAIModel",
    setup=(
        ModelSetup("openai/gpt-4.1", "OPENAI_API_KEY"),
        ModelSetup(
            "openai/NAME",
            "OPENAI_BASE_URL",
            value="http://127.0.0.1:8080/v1",
            purpose="any OpenAI-compatible server (vLLM, Ollama, llama.cpp)",
        ),
    ),
)
register_provider(
    "anthropic",
    "judge_agent.providers.anthropic:AnthropicModel",
    setup=(ModelSetup("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),),
)
register_provider(
    "mock",
    "judge_agent.providers.mock:ScriptedModel",
    note="MODEL=mock/pass is the scripted model: a dry run of the pipeline, never a judge result.",
)
