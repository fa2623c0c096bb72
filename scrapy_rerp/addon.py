"""``ADDONS = {"scrapy_rerp.Addon": 100}``: robots.txt handled by scrapy_rerp, in one line.

The equivalent manual settings::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "scrapy_rerp.RerpRobotParser"
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "scrapy_rerp.RobotsTxtMiddleware": 100,
        "scrapy_rerp.AnswersMiddleware": 950,
    }
    SPIDER_MIDDLEWARES = {"scrapy_rerp.PageDirectivesMiddleware": 950}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware

from scrapy_rerp._compat import component_priorities, disable_component
from scrapy_rerp._settings import RerpSettings

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]

_SETTING = "DOWNLOADER_MIDDLEWARES"
_SPIDER_SETTING = "SPIDER_MIDDLEWARES"
_PARSER = "scrapy_rerp.RerpRobotParser"


class Addon:
    """Turns robots.txt on, with scrapy_rerp's middleware in place of Scrapy's, and a page's own
    robots directives (X-Robots-Tag, robots meta tags) with ``PageDirectivesMiddleware``."""

    def __init__(self) -> None:
        self._in_crawler = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> Addon:
        addon = cls()
        addon._in_crawler = True
        return addon

    def __repr__(self) -> str:
        # Scrapy logs the enabled add-ons as a list of these.
        return "scrapy_rerp.Addon"

    def update_settings(self, settings: BaseSettings) -> None:
        if not self._in_crawler:
            # Applied by hand: a bad RERP_* value is an error here.
            RerpSettings.from_settings(settings, require_obey=False)
        # In a crawler, the middleware checks the final settings when it is built: a bad value
        # is logged once and the crawl closes before anything is downloaded.
        # "addon" priority: a project or spider setting still wins (e.g. ROBOTSTXT_OBEY = False).
        settings.set("ROBOTSTXT_OBEY", True, priority="addon")
        settings.set("ROBOTSTXT_PARSER", _PARSER, priority="addon")

        from scrapy_rerp.middleware import (
            ANSWERS_MIDDLEWARE_PRIORITY,
            AnswersMiddleware,
            RobotsTxtMiddleware,
        )

        # Take Scrapy's place in the chain: its priority (100 unless the project moved it).
        priority = component_priorities(settings, _SETTING).get(_scrapy_key(settings), None)
        if not isinstance(priority, int):
            priority = 100
        # setdefault: if the project already lists ours (under any import path), keep it.
        settings.setdefault_in_component_priority_dict(_SETTING, RobotsTxtMiddleware, priority)
        disable_component(settings, _SETTING, ScrapyRobotsTxtMiddleware)
        # Its companion, which hears every answer first; setdefault: a project may move it.
        settings.setdefault_in_component_priority_dict(
            _SETTING, AnswersMiddleware, ANSWERS_MIDDLEWARE_PRIORITY
        )

        from scrapy_rerp._page_policy import PAGE_MIDDLEWARE_PRIORITY, PageDirectivesMiddleware

        # setdefault again: a project listing it keeps its priority, or None to turn it off.
        settings.setdefault_in_component_priority_dict(
            _SPIDER_SETTING, PageDirectivesMiddleware, PAGE_MIDDLEWARE_PRIORITY
        )


def _scrapy_key(settings: BaseSettings) -> object:
    """The key under which Scrapy's middleware appears (a class or any import path); the
    last one, the project's, where a Scrapy older than 2.15 keeps the ``_BASE`` one beside."""
    from scrapy.utils.misc import load_object

    found: object = ScrapyRobotsTxtMiddleware
    for key in component_priorities(settings, _SETTING):
        try:
            if load_object(key) is ScrapyRobotsTxtMiddleware:
                found = key
        except (ImportError, NameError, TypeError, ValueError):
            continue
    return found
