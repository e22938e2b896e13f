"""Ctrl-C for the long commands: the work is cancelled (its cleanups run, sandboxes close) and
``KeyboardInterrupt`` comes out, without the noise a dying event loop makes.

Ctrl-C reaches the whole foreground process group, so helper processes (a browser driver, an MCP
server) die at the same moment and leave futures failed with "connection closed" that nobody
awaits any more; asyncio logs each one ("Future exception was never retrieved") and transports
closed after the loop print "Exception ignored in ...". After an interrupt these say nothing the
user needs, so ``run_interruptibly`` silences them; before it, nothing is silenced.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_interruptibly"]

T = TypeVar("T")


class _AfterInterrupt(logging.Filter):
    """Drops asyncio's reports once the run is being interrupted."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


def _silence() -> None:
    logging.getLogger("asyncio").addFilter(_AfterInterrupt())
    sys.unraisablehook = lambda _unraisable: None


def run_interruptibly(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``, where Ctrl-C (SIGINT) cancels ``work``, lets its cleanups finish
    and then raises ``KeyboardInterrupt``, with asyncio's shutdown noise silenced."""
    interrupted = False

    async def main() -> T:
        nonlocal interrupted
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_interrupt() -> None:
            nonlocal interrupted
            if not interrupted:
                interrupted = True
                _silence()
            task.cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, on_interrupt)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            return await work
        try:
            return await work
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    except BaseException:
        if interrupted:  # a cleanup that failed because of the interrupt
            raise KeyboardInterrupt from None
        raise
