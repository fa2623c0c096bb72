"""What the Scrapy-free services need of the event loop (start a task, sleep, repeat a call)
and of the stats collector (count, set, read a value).

The origin service and the politeness controller take a :class:`Runtime`, so that they run
unchanged under Scrapy (``scrapy_rerp.crawl.compat.ScrapyRuntime``: any reactor, or none) and under
a plain asyncio loop in their unit tests. They count into a :class:`Stats`: Scrapy's stats
collector, bound once by ``scrapy_rerp.crawl.compat.stats_of``. Standard library only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

__all__ = ["Runtime", "Stats", "Task"]


class Task(Protocol):
    """A started task or repeated call."""

    def cancel(self) -> None: ...


class Runtime(Protocol):
    def spawn(
        self, coro: Coroutine[Any, Any, None], done: Callable[[BaseException | None], None]
    ) -> Task:
        """Run ``coro`` in the background; ``done`` is called once it ends, with None when it
        returned or was cancelled, else with what it raised."""

    def sleep(self, seconds: float) -> Awaitable[Any]:
        """An awaitable that ends ``seconds`` from now."""

    def every(self, seconds: float, call: Callable[[], None]) -> Task:
        """Call ``call`` every ``seconds``, the first time ``seconds`` from now, until the
        returned task is cancelled."""


class Stats(Protocol):
    """The part of Scrapy's stats collector (``crawler.stats``) the layers use."""

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None: ...

    def set_value(self, key: str, value: Any) -> None: ...

    def get_value(self, key: str, default: Any = None) -> Any: ...

    def max_value(self, key: str, value: Any) -> None: ...
