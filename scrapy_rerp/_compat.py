"""What scrapy_rerp reads of Scrapy that Scrapy does not publish, in one place.

Scrapy has no public accessor for the engine's scheduler, nor a signal when the engine starts to
close; these functions read the engine's private state, and are the only code that does, so that
a change upstream is mended here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["engine_closing", "scheduler_of"]


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
