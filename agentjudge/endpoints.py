"""The command line's options that choose where sandboxes run and what the kinds are given:
``--backend``, ``--endpoint KIND=VALUE`` and ``--kind-option KIND.FIELD=VALUE`` (each kind checks
its own), and the deprecated flags they replace. All are checked before any work starts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from environments.kind import CommandLineBackend

if TYPE_CHECKING:
    from environments.backends import BackendChoice

ENVIRONMENTS_PANEL = "Environments"
"""The help panel of the options that choose and configure sandboxes."""

BackendOption = Annotated[
    CommandLineBackend,
    typer.Option(
        help="`auto`: each kind's choice here (host folders, embedded Postgres, and desktops in"
        " containers where a Docker engine answers); `local`: host resources only; `docker`:"
        " containers.",
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]


def endpoint_help() -> str:
    """``--endpoint``'s help: the kinds that take one, from the registry."""
    from environments.registry import all_kinds

    taking = [
        f"{kind.name} ({kind.endpoint_backend})" for kind in all_kinds() if kind.endpoint_backend
    ]
    return (
        "An existing server a kind connects to instead of starting its own, checked by the kind"
        f" (kinds that take one, with the backend it selects: {', '.join(taking) or 'none'}),"
        " e.g. `desktop=http://10.0.0.5:5000` or `postgres=DSN`. Repeatable."
    )


def kind_option_help() -> str:
    """``--kind-option``'s help: every kind's settings, from the registry."""
    from environments.registry import all_kinds

    fields = [
        f"{kind.name}.{name}" for kind in all_kinds() for name in kind.options_model.model_fields
    ]
    return (
        "A setting of one environment kind, validated by the kind (the settings: "
        f"{', '.join(fields) or 'none'}), e.g. `postgres.seed_timeout=30`. Repeatable."
    )


EndpointOption = Annotated[
    list[str] | None,
    typer.Option(
        "--endpoint",
        metavar="KIND=VALUE",
        help=endpoint_help(),
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]

KindOptionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--kind-option",
        metavar="KIND.FIELD=VALUE",
        help=kind_option_help(),
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]


def _deprecated(replacement: str) -> str:
    return f"Deprecated: use `{replacement}`."


DsnOption = Annotated[
    str | None,
    typer.Option(
        "--dsn",
        help=_deprecated("--endpoint postgres=DSN"),
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]

DesktopUrlOption = Annotated[
    str | None,
    typer.Option(
        "--desktop-url",
        help=_deprecated("--endpoint desktop=URL[,URL...]"),
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]

SeedTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--seed-timeout",
        metavar="SECONDS",
        help=_deprecated("--kind-option postgres.seed_timeout=SECONDS"),
        rich_help_panel=ENVIRONMENTS_PANEL,
    ),
]

_warnings = Console(stderr=True, highlight=False, soft_wrap=True)


def warn_deprecated(flag: str, replacement: str) -> None:
    """Say on stderr that ``flag`` is deprecated and what to write instead."""
    _warnings.print(f"warning: {flag} is deprecated; use {replacement}", markup=False)


@dataclass
class KindSettings:
    """What the command line gives the environment kinds, as typed: endpoints by kind and
    options by kind and field, each remembered with the flag it came from (for errors)."""

    endpoints: dict[str, str] = field(default_factory=dict)
    """Endpoints by kind name."""
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Option values (text) by kind name, then field."""
    flags: dict[str, str] = field(default_factory=dict)
    """The flag each endpoint (``KIND``) and option (``KIND.FIELD``) was given with."""


def _usage(flag: str, message: str) -> typer.BadParameter:
    return typer.BadParameter(message, param_hint=f"'{flag}'")


def parse_kind_settings(
    endpoint: list[str] | None,
    kind_option: list[str] | None,
    *,
    dsn: str | None = None,
    desktop_url: str | None = None,
    seed_timeout: float | None = None,
) -> KindSettings:
    """The ``--endpoint`` and ``--kind-option`` texts as mappings, with the deprecated flags
    folded in (each one used is warned about). A text without ``KIND=`` or ``KIND.FIELD=`` is a
    usage error naming it; what the kinds make of the values is checked by ``backend_choice``."""
    settings = KindSettings()
    aliases: list[tuple[str, str, str | None]] = [
        ("--dsn", "--endpoint postgres=DSN", f"postgres={dsn}" if dsn else None),
        (
            "--desktop-url",
            "--endpoint desktop=URL[,URL...]",
            f"desktop={desktop_url}" if desktop_url else None,
        ),
    ]
    for flag, replacement, text in aliases:
        if text is not None:
            warn_deprecated(flag, replacement)
            _add_endpoint(settings, flag, text)
    for text in endpoint or []:
        _add_endpoint(settings, "--endpoint", text)
    if seed_timeout is not None:
        warn_deprecated("--seed-timeout", "--kind-option postgres.seed_timeout=SECONDS")
        _add_option(settings, "--seed-timeout", f"postgres.seed_timeout={seed_timeout}")
    for text in kind_option or []:
        _add_option(settings, "--kind-option", text)
    return settings


def _add_endpoint(settings: KindSettings, flag: str, text: str) -> None:
    kind, separator, value = text.partition("=")
    kind = kind.strip()
    if not separator or not kind or not value.strip():
        raise _usage(flag, f"{text!r}: expected KIND=VALUE, e.g. desktop=http://10.0.0.5:5000")
    if kind in settings.endpoints:
        raise _usage(flag, f"the {kind} kind is given two endpoints")
    settings.endpoints[kind] = value.strip()
    settings.flags[kind] = flag


def _add_option(settings: KindSettings, flag: str, text: str) -> None:
    key, separator, value = text.partition("=")
    kind, dot, name = key.strip().partition(".")
    if not separator or not dot or not kind or not name:
        raise _usage(flag, f"{text!r}: expected KIND.FIELD=VALUE, e.g. postgres.seed_timeout=30")
    settings.options.setdefault(kind, {})[name] = value.strip()
    settings.flags[f"{kind}.{name}"] = flag


def checked_endpoints(settings: KindSettings) -> dict[str, str]:
    """The endpoints of ``settings`` as their kinds check them; one a kind refuses (an unknown
    kind, a kind without a connecting backend, a bad value) is a usage error naming the flag and
    the kind."""
    from environments.backends import check_kind_endpoint

    checked: dict[str, str] = {}
    for kind, value in settings.endpoints.items():
        try:
            checked[kind] = check_kind_endpoint(kind, value)[1]
        except ValueError as error:
            raise _usage(settings.flags.get(kind, "--endpoint"), str(error)) from None
    return checked


def backend_choice(
    backend: CommandLineBackend,
    settings: KindSettings,
    *,
    environments: Mapping[str, Path] | None = None,
) -> BackendChoice:
    """The run's backend choice; an endpoint or option a kind refuses (``checked_endpoints``;
    an unknown kind or field, a bad value) is a usage error naming the flag, the kind and the
    field, before any work."""
    from environments.backends import BackendChoice, check_kind_options

    for kind, values in settings.options.items():
        try:
            check_kind_options(kind, values)
        except ValueError as error:
            flags = {settings.flags.get(f"{kind}.{name}", "--kind-option") for name in values}
            raise _usage(" / ".join(sorted(flags)), str(error)) from None
    return BackendChoice.for_backend(
        backend,
        endpoints=checked_endpoints(settings),
        options=settings.options,
        environments=environments,
    )
