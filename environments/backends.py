"""Which backend each environment kind uses in a run, and the providers started for it.

Owns ``BackendChoice`` (serialised in replay summaries) and ``ProviderSet`` (one provider per
kind, started on first use through the kind's backend factory and closed through the kind). It
knows no particular kind: backends, their factories and how the command line selects them are
the kinds' (``environments.kind.EnvironmentKind``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from environments.kind import CommandLineBackend, EnvironmentKind, KindOptions
from environments.registry import UnknownEnvironmentKindError, all_kinds, environment_kind
from sandboxes.base import Releasable, SandboxError, SandboxProvider


class BackendChoice(BaseModel):
    """Which backend each environment kind uses in a run, and what the run gives the kinds.

    Every registered kind gets an entry: the one given, else its default backend. A backend a
    kind does not have is refused; endpoints and options are checked by their kinds.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kinds: dict[str, str] = Field(default_factory=dict)
    """The backend of each kind, by kind name (filesystem: ``local`` or ``docker``; postgres:
    ``embedded``, ``external`` or ``docker``)."""
    endpoints: dict[str, str] = Field(default_factory=dict)
    """Existing servers that a kind's connecting backend (``EnvironmentKind.endpoint_backend``)
    uses, by kind name (``--endpoint KIND=VALUE``; postgres: a DSN of a superuser or a
    CREATEDB+CREATEROLE role, for ``external``; desktop: the control servers' URLs of OSWorld
    VMs, comma-separated, for ``osworld``). Their leftovers are collected too."""
    options: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    """Settings given to kinds (``--kind-option KIND.FIELD=VALUE``), by kind name then field,
    as validated by the kind's ``options_model``; read them with ``options_for``."""
    environments: dict[str, Path] = Field(default_factory=dict)
    """Starting states supplied at run time, by task id (``--environment``): a file or folder
    that replaces the task's own (and its runs') initial state, e.g. a prepared database as SQL
    or a ``pg_dump`` archive. What it may be is the task's kind's (``supplied_state``)."""

    @model_validator(mode="before")
    @classmethod
    def _every_kind(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given = data.get("kinds") or {}
        if not isinstance(given, dict):
            return data
        kinds: dict[str, Any] = {}
        for kind in all_kinds():
            backend = given.get(kind.name, kind.default_backend)
            if backend not in kind.backends:
                raise ValueError(
                    f"the {kind.name} kind has no backend {backend!r} "
                    f"(its backends: {', '.join(kind.backends)})"
                )
            kinds[kind.name] = backend
        # Kinds not registered here (a plugin missing from this installation) are kept as given.
        kinds.update({name: value for name, value in given.items() if name not in kinds})
        options = data.get("options") or {}
        if isinstance(options, dict):
            options = {name: check_kind_options(name, values) for name, values in options.items()}
        return {**data, "kinds": kinds, "options": options}

    @classmethod
    def for_backend(
        cls,
        backend: CommandLineBackend,
        *,
        endpoints: Mapping[str, str] | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        environments: Mapping[str, Path] | None = None,
    ) -> Self:
        """The command line's ``--backend`` (``local``: host resources; ``docker``: containers),
        mapped by every kind to one of its backends, with its ``--endpoint``, ``--kind-option``
        and ``--environment`` mappings. A kind given an endpoint uses its connecting backend
        (``EnvironmentKind.endpoint_backend``) instead, after checking the endpoint
        (``check_endpoint``); an endpoint for an unknown kind or one without such a backend is
        refused, as is an option the kind does not have or a bad value (``ValueError`` naming
        the kind and the field)."""
        kinds = {kind.name: kind.backend_for(backend) for kind in all_kinds()}
        checked: dict[str, str] = {}
        for name, value in (endpoints or {}).items():
            if value:
                kinds[name], checked[name] = check_kind_endpoint(name, value)
        return cls(
            kinds=kinds,
            endpoints=checked,
            options={name: dict(values) for name, values in (options or {}).items()},
            environments=dict(environments or {}),
        )

    def options_for(self, kind: EnvironmentKind) -> KindOptions:
        """``kind``'s options in this run: its ``options_model`` with the values given (and the
        defaults of the others)."""
        return kind.options_model.model_validate(self.options.get(kind.name, {}))

    def label(self, kind: str) -> str:
        """The backend name used for ``kind`` (for reports)."""
        if kind in self.kinds:
            return self.kinds[kind]
        return environment_kind(kind).default_backend

    def describe(self) -> str:
        """Every kind with its backend, in registration order (``filesystem local, postgres
        embedded``): a header must say whose backend each is."""
        return ", ".join(f"{kind} {backend}" for kind, backend in self.kinds.items())


def _kind_named(name: str) -> EnvironmentKind:
    try:
        return environment_kind(name)
    except UnknownEnvironmentKindError as error:
        raise ValueError(str(error)) from None


def check_kind_endpoint(name: str, value: str) -> tuple[str, str]:
    """The backend that an endpoint given to kind ``name`` selects, and the endpoint as the kind
    checked it (``EnvironmentKind.check_endpoint``). An unknown kind, a kind without a
    connecting backend or an endpoint the kind refuses raises ``ValueError`` naming the kind."""
    record = _kind_named(name)
    if record.endpoint_backend is None:
        raise ValueError(f"the {name} kind has no backend that connects to an endpoint")
    try:
        return record.endpoint_backend, record.check_endpoint(value)
    except ValueError as error:
        raise ValueError(f"{name} endpoint: {error}") from None


def check_kind_options(name: str, values: Any) -> dict[str, JsonValue]:
    """``values`` given to kind ``name`` as options, validated by its ``options_model``: the
    values given, converted (text to numbers, flags). An unknown kind, a field the kind does not
    have or a bad value raises ``ValueError`` naming the kind and the field."""
    record = _kind_named(name)
    model = record.options_model
    if not isinstance(values, Mapping):
        raise ValueError(f"the {name} kind's options must be a mapping of field to value")
    fields = ", ".join(model.model_fields) or "none"
    for field_name in values:
        if field_name not in model.model_fields:
            raise ValueError(
                f"the {name} kind has no option {field_name!r} (its options: {fields})"
            )
    try:
        parsed = model.model_validate(dict(values))
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        given = values.get(problem["loc"][0]) if problem["loc"] else None
        raise ValueError(f"{name}.{where}: {problem['msg']} (given {given!r})") from None
    dumped: dict[str, JsonValue] = parsed.model_dump(mode="json", include=set(values))
    return dumped


class ProviderSet(Releasable):
    """One provider per environment kind, started on first use and closed together."""

    def __init__(self, choice: BackendChoice | None = None) -> None:
        self.choice = choice or BackendChoice()
        self._providers: dict[str, tuple[EnvironmentKind, SandboxProvider]] = {}
        self._lock = asyncio.Lock()

    async def get(self, kind: str) -> SandboxProvider:
        """The provider for ``kind``, starting it (and its server or image) if needed."""
        async with self._lock:
            if kind not in self._providers:
                try:
                    record = environment_kind(kind)
                except UnknownEnvironmentKindError as error:
                    raise SandboxError(str(error)) from None
                backend = self.choice.label(kind)
                factory = record.backends.get(backend)
                if factory is None:
                    raise SandboxError(f"the {kind} kind has no backend {backend!r}")
                self._providers[kind] = (record, await factory(self.choice))
            return self._providers[kind][1]

    async def aclose(self) -> None:
        """Close every started provider through its kind (destroying what it still holds and
        stopping servers it started)."""
        errors: list[BaseException] = []
        for record, provider in list(self._providers.values()):
            try:
                await record.close_provider(provider)
            except Exception as error:  # closing the others matters more than the first error
                errors.append(error)
        self._providers.clear()
        if errors:
            raise SandboxError("; ".join(str(error) for error in errors))

    async def release(self) -> None:
        await self.aclose()
