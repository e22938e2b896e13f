"""The watchdog of the judges' SQL server: stops a call on the server at its deadline, or when
its writable sandbox grows past its size quota.

Owns one extra session per server, opened the first time a call runs long and kept until the
server closes (never taken from the calls' pool, which may be full of the very calls to stop).
From it the watchdog cancels a call's backend (``pg_cancel_backend``: a role may signal its own
sessions), checks in ``pg_stat_activity`` that the statement is gone, terminates the backend
when a cancel is not enough, and samples ``pg_database_size`` while a writable call runs.

A call that ends quickly costs no round trip: its watch is a timer, which starts sampling after
``WATCH_DELAY`` (quota) or fires at the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

import asyncpg

logger = logging.getLogger(__name__)

WATCH_DELAY = 0.25
"""Seconds a writable call runs before the watchdog samples its database's size."""

SAMPLE_INTERVAL = 0.1
"""Seconds between two samples of a writable call's database size."""

STOP_WAIT = 1.0
"""Seconds a cancelled (then a terminated) backend gets to leave its statement."""

_POLL = 0.02

SIZE_SQL = "SELECT pg_catalog.pg_database_size(pg_catalog.current_database())"

_CANCEL_SQL = """
SELECT a.query_start, pg_catalog.pg_cancel_backend(a.pid)
FROM pg_catalog.pg_stat_activity a WHERE a.pid = $1 AND a.state = 'active'
"""
_STATE_SQL = "SELECT state, query_start FROM pg_catalog.pg_stat_activity WHERE pid = $1"


class Watchdog:
    """Stops calls of one server on the server; see the module."""

    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]]) -> None:
        self._connect = connect
        self._connection: asyncpg.Connection | None = None
        self._lock: asyncio.Lock | None = None

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _session(self) -> asyncpg.Connection:
        if self._connection is None or self._connection.is_closed():
            self._connection = await self._connect()
        return self._connection

    async def aclose(self) -> None:
        """Close the watchdog's session (a later watch opens a new one)."""
        connection, self._connection = self._connection, None
        if connection is not None and not connection.is_closed():
            with contextlib.suppress(Exception):
                await connection.close(timeout=STOP_WAIT)

    def watch(self, pid: int, *, deadline: float, limit: int | None) -> Watch:
        """Watch the call served by backend ``pid``: stop it ``deadline`` seconds from now, or
        once its database is larger than ``limit`` bytes (None: no quota)."""
        return Watch(self, pid, deadline, limit)

    async def database_size(self) -> int:
        """The size of the server's database, in bytes."""
        async with self._guard():
            session = await self._session()
            size: int = await session.fetchval(SIZE_SQL)
            return size

    async def stop(self, pid: int) -> Literal["idle", "stopped", "failed"]:
        """End the statement backend ``pid`` runs: cancel it, and terminate the backend if the
        cancel does not take within ``STOP_WAIT``. ``idle``: no statement was running."""
        async with self._guard():
            session = await self._session()
            row = await session.fetchrow(_CANCEL_SQL, pid)
            if row is None:
                return "idle"
            if await _left(session, pid, row["query_start"], ended=False):
                return "stopped"
            logger.warning("backend %s ignored its cancel; terminating it", pid)
            await session.fetchval("SELECT pg_catalog.pg_terminate_backend($1)", pid)
            ended = await _left(session, pid, row["query_start"], ended=True)
            return "stopped" if ended else "failed"


async def _left(session: asyncpg.Connection, pid: int, started: object, *, ended: bool) -> bool:
    """Wait up to ``STOP_WAIT`` for backend ``pid`` to leave the statement started at
    ``started`` (to be gone altogether when ``ended``)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + STOP_WAIT
    while True:
        row = await session.fetchrow(_STATE_SQL, pid)
        if row is None:
            return True
        if not ended and (row["state"] != "active" or row["query_start"] != started):
            return True
        if loop.time() >= until:
            return False
        await asyncio.sleep(_POLL)


class Watch:
    """The watch over one call: a timer, then (for long calls) a task that samples and stops.

    ``reason`` tells why the watchdog stopped the call (None while it has not); ``size`` is the
    database size that set off a quota stop.
    """

    def __init__(self, dog: Watchdog, pid: int, deadline: float, limit: int | None) -> None:
        loop = asyncio.get_running_loop()
        self.reason: Literal["deadline", "quota"] | None = None
        self.size: int | None = None
        self.stopped_on_server = False
        self._dog = dog
        self._pid = pid
        self._limit = limit
        self._deadline = loop.time() + deadline
        self._busy = False
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        first = deadline if limit is None else min(WATCH_DELAY, deadline)
        self._timer = loop.call_later(first, self._start)

    def _start(self) -> None:
        if not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._limit is not None and (left := self._deadline - loop.time()) > 0:
                self._busy = True
                size = await self._dog.database_size()
                self._busy = False
                if self._closed:
                    return
                if size > self._limit:
                    self.reason, self.size = "quota", size
                    break
                await asyncio.sleep(min(SAMPLE_INTERVAL, left))
            if self.reason is None:
                await asyncio.sleep(max(0.0, self._deadline - loop.time()))
                self.reason = "deadline"
            # Between two statements of the call the backend is idle: try again until the
            # call starts its next statement or ends.
            until = loop.time() + STOP_WAIT
            while not self._closed:
                self._busy = True
                outcome = await self._dog.stop(self._pid)
                self._busy = False
                if outcome != "idle" or loop.time() >= until:
                    self.stopped_on_server = outcome == "stopped"
                    break
                await asyncio.sleep(_POLL)
        except asyncio.CancelledError:
            raise
        except Exception:
            # The call's own deadline (its connection cut client-side) remains.
            logger.exception("the SQL watchdog could not stop backend %s", self._pid)
        finally:
            self._busy = False

    async def close(self) -> None:
        """End the watch when the call ends; waits for a stop under way to finish."""
        self._closed = True
        self._timer.cancel()
        task = self._task
        if task is None:
            return
        if not self._busy:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
