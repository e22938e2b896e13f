"""A small in-memory cache for rendered pages."""

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
