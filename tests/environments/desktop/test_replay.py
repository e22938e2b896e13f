"""Comparing recorded and replayed accessibility trees across desktop backends: the home folder
(``/home/user`` on every backend now, ``/box`` in recordings local desktops made before) is not a
difference."""

from __future__ import annotations

from environments.desktop.replay import compare_trees, tree_elements
from tests.sandboxes.desktop.test_observations import node, tree


def _window(path: str) -> str:
    return tree(node("document-spreadsheet", f"file://{path} - LibreOffice Spreadsheets"))


def test_the_same_document_under_either_home_folder_is_the_same_tree() -> None:
    local = _window("/box/Documents/visits.xlsx")
    container = _window("/home/user/Documents/visits.xlsx")
    assert compare_trees(local, container) is None
    assert tree_elements(local) == [
        "document-spreadsheet\tfile://~/Documents/visits.xlsx - LibreOffice Spreadsheets\t"
    ]


def test_other_folders_and_other_files_still_differ() -> None:
    local = _window("/box/Documents/visits.xlsx")
    assert compare_trees(local, _window("/home/user/Documents/other.xlsx")) is not None
    # Only a whole home folder at the start of a path is rewritten.
    assert compare_trees(_window("/boxes/visits.xlsx"), _window("/home/user/visits.xlsx"))
    assert compare_trees(_window("/home/username/a.xlsx"), _window("/home/user/a.xlsx"))
    assert compare_trees(_window("/srv/box/a.xlsx"), _window("/srv/home/user/a.xlsx"))
