"""ws-lru-cache (feature): a least-recently-used cache, where reads count as use."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_CACHE = '''"""A small in-memory cache for rendered pages."""

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Holds at most ``capacity`` entries."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._entries: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        """The value stored under ``key``, or None."""
        raise NotImplementedError

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._entries)
'''

_VISIBLE = """import unittest

from cache import LRUCache


class CacheTests(unittest.TestCase):
    def test_put_and_get(self) -> None:
        cache: LRUCache[str, int] = LRUCache(2)
        cache.put("a", 1)
        self.assertEqual(cache.get("a"), 1)
        self.assertIsNone(cache.get("b"))

    def test_capacity(self) -> None:
        cache: LRUCache[str, int] = LRUCache(2)
        for key, value in (("a", 1), ("b", 2), ("c", 3)):
            cache.put(key, value)
        self.assertEqual(len(cache), 2)
        self.assertIsNone(cache.get("a"))
"""

_GET = '        """The value stored under ``key``, or None."""\n        raise NotImplementedError\n'
_PUT = '        """Store ``value`` under ``key``."""\n        raise NotImplementedError\n'

TASK = CodingTask(
    id="ws-lru-cache",
    family="feature",
    instruction=(
        "Implement get and put of LRUCache in cache.py. get returns the stored value (None when "
        "absent) and counts as a use of the entry; put stores or replaces a value, which also "
        "counts as a use, and when the cache then holds more than capacity entries it drops the "
        "least recently used one. Keep the class's interface as it is."
    ),
    files={"cache.py": _CACHE, "tests/__init__.py": "", "tests/test_cache.py": _VISIBLE},
    fix=edits(
        "cache.py",
        [
            (
                _GET,
                '        """The value stored under ``key``, or None."""\n'
                "        if key not in self._entries:\n"
                "            return None\n"
                "        value = self._entries.pop(key)\n"
                "        self._entries[key] = value\n"
                "        return value\n",
            ),
            (
                _PUT,
                '        """Store ``value`` under ``key``."""\n'
                "        self._entries.pop(key, None)\n"
                "        self._entries[key] = value\n"
                "        if len(self._entries) > self.capacity:\n"
                "            del self._entries[next(iter(self._entries))]\n",
            ),
        ],
    ),
    partial=edits(
        "cache.py",
        [
            (
                _GET,
                '        """The value stored under ``key``, or None."""\n'
                "        return self._entries.get(key)\n",
            ),
            (
                _PUT,
                '        """Store ``value`` under ``key``."""\n'
                "        self._entries[key] = value\n"
                "        if len(self._entries) > self.capacity:\n"
                "            del self._entries[next(iter(self._entries))]\n",
            ),
        ],
    ),
    partial_failure="partial",
    partial_note="it evicts the oldest insertion, ignoring that reads and updates count as use",
    author_tests="""import unittest


class LruTests(unittest.TestCase):
    def test_read_counts_as_use(self) -> None:
        from cache import LRUCache

        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.get("a"), 1)
        cache.put("c", 3)
        self.assertIsNone(cache.get("b"))
        self.assertEqual((cache.get("a"), cache.get("c")), (1, 3))

    def test_update_counts_as_use(self) -> None:
        from cache import LRUCache

        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 10)
        cache.put("c", 3)
        self.assertEqual((cache.get("a"), cache.get("b"), len(cache)), (10, None, 2))

    def test_capacity_checked(self) -> None:
        from cache import LRUCache

        with self.assertRaises(ValueError):
            LRUCache(0)
""",
    checks="reads and updates refresh an entry; eviction of the least recently used; capacity",
)
