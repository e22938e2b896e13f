"""ws-deep-merge (bug-fix): configuration dictionaries merged recursively, inputs untouched."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_CONFIG = '''"""Layered configuration: defaults, then a site file, then the command line."""

from typing import Any


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The configuration ``base`` with ``override`` applied on top."""
    result = dict(base)
    result.update(override)
    return result
'''

_VISIBLE = """import unittest

from config import merge


class MergeTests(unittest.TestCase):
    def test_flat_override(self) -> None:
        self.assertEqual(merge({"a": 1, "b": 2}, {"b": 3}), {"a": 1, "b": 3})

    def test_nested_sections(self) -> None:
        base = {"db": {"host": "localhost", "port": 5432}}
        merged = merge(base, {"db": {"port": 6543}})
        self.assertEqual(merged, {"db": {"host": "localhost", "port": 6543}})
"""

_SHALLOW = "    result = dict(base)\n    result.update(override)\n    return result\n"

TASK = CodingTask(
    id="ws-deep-merge",
    family="bug-fix",
    instruction=(
        "config.merge loses settings: merging {'db': {'port': 1}} into a configuration drops "
        "the other keys of 'db'. Fix merge so that nested dictionaries are merged recursively "
        "(a value of override wins, except that a dict merged onto a dict is merged key by key) "
        "and so that neither argument is ever modified."
    ),
    files={"config.py": _CONFIG, "tests/__init__.py": "", "tests/test_config.py": _VISIBLE},
    fix=edits(
        "config.py",
        [
            (
                _SHALLOW,
                "    result = dict(base)\n"
                "    for key, value in override.items():\n"
                "        if isinstance(value, dict) and isinstance(result.get(key), dict):\n"
                "            result[key] = merge(result[key], value)\n"
                "        else:\n"
                "            result[key] = value\n"
                "    return result\n",
            )
        ],
    ),
    partial=edits(
        "config.py",
        [
            (
                _SHALLOW,
                "    for key, value in override.items():\n"
                "        if isinstance(value, dict) and isinstance(base.get(key), dict):\n"
                "            merge(base[key], value)\n"
                "        else:\n"
                "            base[key] = value\n"
                "    return base\n",
            )
        ],
    ),
    partial_failure="constraint",
    partial_note="it merges in place, so the base configuration is modified",
    author_tests="""import copy
import unittest


class MergeTests(unittest.TestCase):
    def test_nested(self) -> None:
        from config import merge

        base = {"db": {"host": "h", "pool": {"min": 1, "max": 5}}, "debug": False}
        merged = merge(base, {"db": {"pool": {"max": 9}}, "debug": True})
        expected = {"db": {"host": "h", "pool": {"min": 1, "max": 9}}, "debug": True}
        self.assertEqual(merged, expected)

    def test_dict_replaces_scalar(self) -> None:
        from config import merge

        self.assertEqual(merge({"a": 1}, {"a": {"b": 2}}), {"a": {"b": 2}})

    def test_arguments_untouched(self) -> None:
        from config import merge

        base = {"db": {"host": "h", "port": 1}, "x": 1}
        override = {"db": {"port": 2}, "y": 2}
        before = (copy.deepcopy(base), copy.deepcopy(override))
        merge(base, override)
        self.assertEqual((base, override), before)
""",
    checks="recursive merge at several levels; neither argument modified",
)
