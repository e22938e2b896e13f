"""Entry points through which installed packages add to the judge's registries.

Owns the one loop that the provider registry (``agentjudge.providers``) and the mode registry
(``agentjudge.modes``) run over their groups: an entry naming a module alone is imported (the
module registers what it brings itself); any other entry is handed to the registry's own
``register``. An entry that fails is warned about and the others still load. Must not know what
an entry registers: that is the calling registry's.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint

__all__ = ["register_entry_points"]


def register_entry_points(
    found: Iterable[EntryPoint], *, what: str, register: Callable[[EntryPoint], None]
) -> None:
    """Import or ``register`` every entry of ``found``; ``what`` names the registry's items in
    the warning about an entry that could not be registered (e.g. ``model provider``)."""
    for entry in found:
        try:
            if entry.attr:
                register(entry)
            else:
                importlib.import_module(entry.module)
        except Exception as error:
            warnings.warn(
                f"{what} entry point {entry.name} = {entry.value!r} could not be registered: "
                f"{error}",
                stacklevel=3,
            )
