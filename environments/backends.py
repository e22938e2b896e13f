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

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, model_validator

from environments.kind import CommandLineBackend, EnvironmentKind
from environments.registry import UnknownEnvironmentKindError, all_kinds, environment_kind
from sandboxes.base import Releasable, SandboxError, SandboxProvider


class BackendChoice(BaseModel):
    """Which backend each environment kind uses in a run.

    Every registered kind gets an entry: the one given, else its default backend. A backend a
    kind does not have is refused.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    kinds: dict[str, str] = Field(default_factory=dict)
    """The backend of each kind, by kind name (filesystem: ``local`` or ``docker``; postgres:
    ``embedded``, ``external`` or ``docker``)."""
    dsn: str | None = None
    """The server that backends connecting to an existing one use (Postgres ``external``: a
    superuser or CREATEDB+CREATEROLE); its leftovers are collected too."""
    seed_timeout: PositiveFloat | None = None
    """Seconds one task's initial state may take to prepare (a Postgres seed); a task whose
    preparation fails or runs over fails all its trajectories at once. None: each kind's default
    (Postgres: 600)."""
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
        return {**data, "kinds": kinds}

    @classmethod
    def for_backend(
        cls,
        backend: CommandLineBackend,
        dsn: str | None = None,
        *,
        seed_timeout: float | None = None,
        environments: Mapping[str, Path] | None = None,
    ) -> Self:
        """The command line's ``--backend`` (``local``: host resources; ``docker``: containers)
        and ``--dsn`` (an existing server), mapped by every kind to one of its backends, its
        ``--seed-timeout`` and its ``--environment`` mappings."""
        return cls(
            kinds={kind.name: kind.backend_for(backend, dsn) for kind in all_kinds()},
            dsn=dsn,
            seed_timeout=seed_timeout,
            environments=dict(environments or {}),
        )

    def label(self, kind: str) -> str:
        """The backend name used for ``kind`` (for reports)."""
        if kind in self.kinds:
            return self.kinds[kind]
        return environment_kind(kind).default_backend

    def describe(self) -> str:
        """Every kind's backend, in registration order (``local / embedded``)."""
        return " / ".join(self.kinds.values())


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
