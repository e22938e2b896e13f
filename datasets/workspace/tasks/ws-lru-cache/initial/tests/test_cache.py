import unittest

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
