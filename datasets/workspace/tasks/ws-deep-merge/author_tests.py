import copy
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
