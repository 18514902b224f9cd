"""The event loop that all scoring runs on: one per :class:`~overseer.Overseer`, on a daemon thread of its own.

That is what makes the sync entry points honest (a sync call works inside a running event loop; it never calls
``asyncio.run``), lets one instance serve any number of threads and loops, and gives scorers one loop to batch on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from overseer.exceptions import LifecycleError

__all__ = ["Portal"]

T = TypeVar("T")


class Portal:
    """An event loop running on a daemon thread; coroutines from any thread or loop run there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            with self._lock:
                if self._loop is None:
                    loop = asyncio.new_event_loop()
                    ready = threading.Event()

                    def run() -> None:
                        asyncio.set_event_loop(loop)
                        loop.call_soon(ready.set)
                        loop.run_forever()

                    self._thread = threading.Thread(target=run, name="overseer-loop", daemon=True)
                    self._thread.start()
                    ready.wait()
                    self._loop = loop
        return self._loop

    def on_loop(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the portal and wait for it (from any thread but the portal's own)."""
        if self.on_loop():
            coro.close()
            raise LifecycleError("a sync overseer call was made from overseer's own loop; await the async twin instead")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def acall(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine on the portal from any event loop."""
        if self.on_loop():
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start a coroutine on the portal without waiting for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or self.on_loop():
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()
        self._loop = None
        self._thread = None
