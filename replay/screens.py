"""How far a replayed screen is from the recorded one: screenshots and accessibility trees.

Screenshots are compared perceptually (``sandboxes.desktop.screens.compare_screens``: grey cells,
a tolerance per cell and for the share of changed cells, and the box where they differ). Trees
are compared as the elements an agent reads: role, name and text of each node the linearised
tree keeps, positions left out so that a layout shift of a few pixels is not a different state,
and the desktop's home folder written as ``~`` (every backend now puts it at ``/home/user``, as
OSWorld's VM does; local desktops used to show it as their box's ``/box``, and recordings made
then still compare).
"""

from __future__ import annotations

import re

from replay.diffs import short_diff
from sandboxes.confinement import WORK_MOUNT
from sandboxes.desktop.image import HOME
from sandboxes.desktop.observations import tree_nodes
from sandboxes.desktop.screens import REPLAY_SHIFT, ScreenComparison, compare_screens

__all__ = [
    "REPLAY_SHIFT",
    "ScreenComparison",
    "compare_screens",
    "compare_trees",
    "tree_elements",
]


_HOME_FOLDERS = re.compile(
    "(?<![\\w.-])(?:" + "|".join(re.escape(str(home)) for home in (WORK_MOUNT, HOME)) + ")(?=/)"
)
"""A desktop's home folder on any backend, where a path starts."""


def _home_as_tilde(text: str) -> str:
    return _HOME_FOLDERS.sub("~", text)


def tree_elements(xml: str) -> list[str]:
    """The elements an agent reads in a tree (OSWorld XML): ``role<TAB>name<TAB>text`` per node
    the linearised tree keeps, in document order, with the desktop's home folder as ``~``;
    ``ValueError`` when it is not XML."""
    try:
        return [_home_as_tilde(f"{node.tag}\t{node.name}\t{node.text}") for node in tree_nodes(xml)]
    except Exception as error:  # ElementTree.ParseError and friends
        raise ValueError(f"the accessibility tree is not OSWorld XML: {error}") from None


def compare_trees(recorded: str, replayed: str) -> str | None:
    """A short diff of the elements (recorded -, replayed +), or None when they are the same."""
    before = "\n".join(tree_elements(recorded))
    after = "\n".join(tree_elements(replayed))
    if before == after:
        return None
    return short_diff(before, after)
