import unittest

from config import merge


class MergeTests(unittest.TestCase):
    def test_flat_override(self) -> None:
        self.assertEqual(merge({"a": 1, "b": 2}, {"b": 3}), {"a": 1, "b": 3})

    def test_nested_sections(self) -> None:
        base = {"db": {"host": "localhost", "port": 5432}}
        merged = merge(base, {"db": {"port": 6543}})
        self.assertEqual(merged, {"db": {"host": "localhost", "port": 6543}})
