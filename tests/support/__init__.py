"""Helpers the tests share: one module, imported by test modules, never a test module itself."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["AsyncioRuntime", "Stats"]


class _Repeating:
    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    def cancel(self) -> None:
        self._task.cancel()


class AsyncioRuntime:
    """The Scrapy-free services' :class:`~scrapy_rerp.core.runtime.Runtime` on a plain asyncio loop,
    for unit tests without a crawl. ``tasks`` keeps what was spawned, to be awaited."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[None]] = []

    def spawn(
        self, coro: Coroutine[Any, Any, None], done: Callable[[BaseException | None], None]
    ) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)

        def finished(task: asyncio.Task[None]) -> None:
            done(None if task.cancelled() else task.exception())

        task.add_done_callback(finished)
        self.tasks.append(task)
        return task

    def sleep(self, seconds: float) -> Awaitable[Any]:
        return asyncio.sleep(seconds)

    def every(self, seconds: float, call: Callable[[], None]) -> _Repeating:
        async def repeat() -> None:
            while True:
                await asyncio.sleep(seconds)
                call()

        return _Repeating(asyncio.ensure_future(repeat()))

    async def settle(self) -> None:
        """Wait until every task spawned so far (and those they spawn) has ended."""
        while any(not task.done() for task in self.tasks):
            await asyncio.gather(*self.tasks, return_exceptions=True)


class Stats:
    """The part of Scrapy's stats collector the services use, in a dict."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value

    def max_value(self, key: str, value: Any) -> None:
        self.values[key] = max(self.values.get(key, value), value)

    def get_value(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)
