import unittest


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
