"""The registry of environment kinds: by name, by task and by served name.

Owns which kinds exist. The built-in kinds are registered by module path (imported on first
use); other packages add kinds through the entry-point group ``agentjudge.environments`` (the
entry point's name is the kind's name; it loads an ``EnvironmentKind`` instance or subclass), or
by calling ``register_kind``. This is the one place that maps tasks, served names and sandboxes
to kinds (a sandbox's kind is its task's); it holds no kind's behaviour.
"""

from __future__ import annotations

import importlib
import warnings
from importlib import metadata

from dataset.models import Task
from environments.kind import EnvironmentKind

ENTRY_POINT_GROUP = "agentjudge.environments"
"""Entry points of this group name a kind each: ``desktop = "my_package.desktop:KIND"``."""

TRAJECTORY_SERVE_NAME = "trajectory"
"""``agentjudge serve``'s name for the recorded trajectory itself; no kind may take it."""

_BUILT_IN: dict[str, str] = {
    "filesystem": "environments.filesystem.kind:KIND",
    "postgres": "environments.postgres.kind:KIND",
    "android": "environments.android.kind:KIND",
    "browser": "environments.browser.kind:KIND",
    "desktop": "environments.desktop.kind:KIND",
    "workspace": "environments.workspace.kind:KIND",
}
"""The kinds that ship with the runtime, as ``module:attribute`` of their record."""

_Entry = EnvironmentKind | str | metadata.EntryPoint
"""A registered kind: loaded, or where to load it from."""

_kinds: dict[str, _Entry] = dict(_BUILT_IN)
_entry_points_loaded = False


class UnknownEnvironmentKindError(LookupError):
    """No kind of that name (or served name) is registered."""


def register_kind(
    kind: EnvironmentKind | str, *, name: str | None = None, replace: bool = False
) -> None:
    """Register a kind: an instance, or ``"module:attribute"`` with its ``name`` (loaded on
    first use). A name already taken is refused unless ``replace``."""
    if isinstance(kind, str):
        if name is None:
            raise ValueError(f"registering {kind!r} by module path needs the kind's name")
        key = name
    else:
        if name is not None and name != kind.name:
            raise ValueError(f"kind {kind.name!r} registered under another name {name!r}")
        key = kind.name
    if key in _kinds and not replace and _kinds[key] is not kind:
        raise ValueError(f"an environment kind named {key!r} is already registered")
    _kinds[key] = kind


def unregister_kind(name: str) -> None:
    """Forget a registered kind (for tests and plugins that replace one); unknown names pass."""
    _kinds.pop(name, None)


def load_entry_points() -> list[str]:
    """Register the kinds of the ``agentjudge.environments`` entry points not registered yet;
    return their names. Runs once by itself on first lookup; call again after installing."""
    global _entry_points_loaded  # noqa: PLW0603 - one scan per process, recorded here
    _entry_points_loaded = True
    added: list[str] = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in _kinds:
            if entry.name in _BUILT_IN:
                warnings.warn(
                    f"entry point {entry.value!r} ignored: {entry.name!r} is a built-in kind",
                    stacklevel=2,
                )
            continue
        _kinds[entry.name] = entry
        added.append(entry.name)
    return added


def _ensure_entry_points() -> None:
    if not _entry_points_loaded:
        load_entry_points()


def _load(name: str, entry: _Entry) -> EnvironmentKind:
    if isinstance(entry, EnvironmentKind):
        return entry
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        loaded: object = getattr(importlib.import_module(module), attribute)
    else:
        loaded = entry.load()
    if isinstance(loaded, type) and issubclass(loaded, EnvironmentKind):
        loaded = loaded()
    if not isinstance(loaded, EnvironmentKind):
        raise TypeError(f"environment kind {name!r} ({entry}) is not an EnvironmentKind")
    if loaded.name != name:
        raise ValueError(f"environment kind registered as {name!r} calls itself {loaded.name!r}")
    _kinds[name] = loaded
    return loaded


def environment_kind(name: str) -> EnvironmentKind:
    """The kind called ``name``; an unknown name raises ``UnknownEnvironmentKindError`` listing the
    known ones."""
    _ensure_entry_points()
    entry = _kinds.get(name)
    if entry is None:
        known = ", ".join(_kinds) or "none"
        raise UnknownEnvironmentKindError(f"no environment kind {name!r} (known kinds: {known})")
    return _load(name, entry)


def all_kinds() -> list[EnvironmentKind]:
    """Every registered kind: the built-in ones first, then in registration order."""
    _ensure_entry_points()
    return [_load(name, entry) for name, entry in list(_kinds.items())]


def kind_for_task(task: Task) -> EnvironmentKind | None:
    """The kind ``task`` replays into (the first whose ``tasks`` hold its domain and subdomain),
    or None when no kind serves it yet."""
    return next((kind for kind in all_kinds() if kind.serves(task)), None)


def served_kinds() -> dict[str, EnvironmentKind]:
    """The kinds ``agentjudge serve`` serves, by their served name (``filesystem``, ``sql``)."""
    served: dict[str, EnvironmentKind] = {}
    for kind in all_kinds():
        if kind.serve_name == TRAJECTORY_SERVE_NAME or kind.serve_name in served:
            raise ValueError(
                f"environment kind {kind.name!r} cannot be served as {kind.serve_name!r}: "
                "the name is taken"
            )
        served[kind.serve_name] = kind
    return served
