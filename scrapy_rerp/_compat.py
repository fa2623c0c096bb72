"""What scrapy_rerp needs of Scrapy that Scrapy does not publish, or publishes differently from
one version to the next, in one place.

Scrapy has no public accessor for the engine's scheduler, nor a signal when the engine starts to
close; these functions read the engine's private state, and are the only code that does, so that
a change upstream is mended here. :class:`ScrapyRuntime` runs the Scrapy-free services' tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from scrapy.utils.asyncio import create_looping_call, sleep
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["ScrapyRuntime", "engine_closing", "scheduler_of"]


def engine_closing(crawler: Crawler) -> bool:
    """True once the engine has started to stop or to close the spider.

    Scrapy sends no signal when closing starts (``spider_closed`` comes after the downloader has
    drained), so this reads the engine's state: ``running`` turns false on ``stop`` (Ctrl-C, a
    crawler stop) and the engine slot's ``closing`` is set by ``close_spider`` (CLOSESPIDER_*).
    """
    engine = crawler.engine
    if engine is None or not engine.running:
        return True
    slot = getattr(engine, "_slot", None)
    return slot is None or getattr(slot, "closing", None) is not None


def scheduler_of(crawler: Crawler) -> Any:
    """The running crawl's scheduler, or None before the spider opens and after it closed."""
    slot = getattr(crawler.engine, "_slot", None)
    return getattr(slot, "scheduler", None)


class _Looping:
    def __init__(self, loop: Any) -> None:
        self._loop = loop

    def cancel(self) -> None:
        if self._loop.running:
            self._loop.stop()


class ScrapyRuntime:
    """The :class:`~scrapy_rerp._runtime.Runtime` of a crawl: Scrapy's own helpers, which work
    under any reactor, and without one."""

    def spawn(
        self, coro: Coroutine[Any, Any, None], done: Callable[[BaseException | None], None]
    ) -> Deferred[None]:
        task = deferred_from_coro(coro)

        def finished(result: Any) -> None:
            if not isinstance(result, Failure) or result.check(
                CancelledError, asyncio.CancelledError
            ):
                done(None)
                return
            error = result.value
            if error.__traceback__ is None and result.getTracebackObject() is not None:
                error = error.with_traceback(result.getTracebackObject())
            done(error)

        task.addBoth(finished)
        return task

    def sleep(self, seconds: float) -> Awaitable[Any]:
        return sleep(seconds)

    def every(self, seconds: float, call: Callable[[], None]) -> _Looping:
        loop = create_looping_call(call)
        loop.start(seconds, now=False)
        return _Looping(loop)
