"""The runtime's settings: every ``AGENTJUDGE_*`` environment variable, read and documented once.

Owns ``Settings`` (one field per variable, each with its meaning and default) and
``get_settings()``, which looks at the environment on every call, so a variable set or changed
while the process runs (a test's ``monkeypatch.setenv``, a benchmark moving the scratch space) is
seen by the next caller. Parsing is slow (milliseconds), so the parsed settings are reused while
the variables keep their values: a call costs a few dictionary look-ups. ``variable_name`` gives
a field's variable, and ``settings_table`` the Markdown table the README carries.

This is the bottom layer: it imports nothing of the project, and it decides nothing. What a
setting means when it is unset (``workdir``, ``pg_in_memory``) is worked out by the module that
uses it, as each field's docstring says. Variables without the prefix (``JUDGE_MODEL``, the
providers' keys and base URLs, ``XDG_CACHE_HOME``) are read where they are used.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = [
    "ENV_PREFIX",
    "Settings",
    "SettingsError",
    "get_settings",
    "settings_table",
    "variable_name",
]

ENV_PREFIX = "AGENTJUDGE_"
"""Every variable of ``Settings`` is its field name in capitals behind this prefix."""

DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"


def _variable(field: str) -> str:
    return ENV_PREFIX + field.upper()


class Settings(BaseSettings):
    """The effective ``AGENTJUDGE_*`` settings; an empty variable counts as unset.

    Each field is read from its variable, ``ENV_PREFIX`` and the field's name in capitals (given
    as the field's alias, so that the name is exact: ``agentjudge_cache`` is not read).
    """

    model_config = SettingsConfigDict(
        alias_generator=_variable,
        validate_by_name=True,
        case_sensitive=True,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        use_attribute_docstrings=True,
    )

    workdir: Path | None = None
    """Scratch space for sandboxes' trees and embedded Postgres servers. Unset:
    `/dev/shm/agentjudge` (RAM) when `/dev/shm` is writable with 2 GiB free, else
    `<temp dir>/agentjudge`."""

    pg_in_memory: bool | None = None
    """Where embedded Postgres keeps its data: `1` in `/dev/shm` (RAM, or fail), `0` on disk.
    Unset: RAM when `/dev/shm` is writable, else disk."""

    debian_mirror: str = DEFAULT_DEBIAN_MIRROR
    """The Debian mirror `debootstrap` downloads the Docker sandbox image's packages from."""

    docker_pool_size: int = Field(default=2, ge=0)
    """How many started containers each Docker filesystem provider keeps waiting, so that a
    sandbox or clone takes one instead of starting one (`0`: none)."""

    docker_pool_idle_seconds: float = Field(default=60.0, gt=0)
    """How long a container may wait unused in a Docker pool before it is removed (the pool
    refills on its next use)."""

    prices: Path | None = None
    """A TOML price table to cost model calls with. Unset: the bundled
    `judge_agent/prices.toml`."""

    cache: Path | None = None
    """The folder of cached model answers. Unset: `~/.cache/agentjudge/responses`."""

    datasets: Annotated[tuple[Path, ...], NoDecode] = ()
    """Extra folders `agentjudge datasets list` searches, separated by `:` (`;` on Windows),
    before `./datasets` and the bundled datasets."""

    chromium: Path | None = None
    """The Chromium (or Chrome) binary of the browser sandboxes and of the report's end-to-end
    test. Unset: `/usr/bin/chromium`, else the one on `PATH`."""

    browser_summaries: bool = False
    """`1`: judges' browsers hand long page snapshots to the judge's own model for a summary
    (MCP sampling), marked in the tool's answer and counted in the verdict's tokens. Unset: off."""

    @field_validator("datasets", mode="before")
    @classmethod
    def _split_search_path(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part for part in value.split(os.pathsep) if part)
        return value


class SettingsError(ValueError):
    """An ``AGENTJUDGE_*`` variable whose value does not parse; the message names each one."""


def get_settings() -> Settings:
    """The settings as the environment has them now.

    Raises ``SettingsError`` naming every variable whose value does not parse.
    """
    return _parsed(tuple(os.environ.get(name) for name in _VARIABLES))


@functools.lru_cache(maxsize=16)
def _parsed(values: tuple[str | None, ...]) -> Settings:
    """The settings for these values of ``_VARIABLES`` (the environment has them right now)."""
    try:
        return Settings()
    except ValidationError as error:
        problems = "; ".join(
            f"{problem['loc'][0]}={problem['input']!r}: {problem['msg']}"
            for problem in error.errors()
        )
        raise SettingsError(f"invalid environment variable: {problems}") from error


def variable_name(field: str) -> str:
    """The environment variable of a ``Settings`` field (``workdir`` -> ``AGENTJUDGE_WORKDIR``)."""
    if field not in Settings.model_fields:
        raise KeyError(f"no setting named {field!r}")
    return _variable(field)


_VARIABLES = tuple(variable_name(name) for name in Settings.model_fields)
"""Every variable ``Settings`` reads."""


def _default_text(field: str) -> str:
    default = Settings.model_fields[field].default
    if default is None or default == ():
        return "unset"
    return f"`{default}`"


def settings_table() -> str:
    """Every variable as a Markdown table (variable, default, meaning), from the docstrings."""
    lines = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        meaning = " ".join((field.description or "").split())
        lines.append(f"| `{variable_name(name)}` | {_default_text(name)} | {meaning} |")
    return "\n".join(lines) + "\n"
