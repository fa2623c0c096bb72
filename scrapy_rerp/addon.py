"""``ADDONS = {"scrapy_rerp.Addon": 100}``: robots.txt handled by scrapy_rerp, in one line.

The equivalent manual settings::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "scrapy_rerp.RerpRobotParser"
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "scrapy_rerp.RobotsTxtMiddleware": 100,
        "scrapy_rerp.AnswersMiddleware": 950,
        "scrapy_rerp.SigningMiddleware": 990,  # with RERP_SIGNATURE_KEY only
    }
    SPIDER_MIDDLEWARES = {
        "scrapy_rerp.PageDirectivesMiddleware": 950,
        "scrapy_rerp.EvidenceItemsMiddleware": 900,
    }
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.utils.misc import load_object

from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.crawl.compat import component_priorities, disable_component, loaded

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

        # Take Scrapy's place in the chain: its priority (100 unless the project moved it).
        priority = component_priorities(settings, _SETTING).get(_scrapy_key(settings), None)
        if not isinstance(priority, int):
            priority = 100
        # Each listed under its public name, which Scrapy's log shows; kept as the project
        # lists it, under any import path (None turns it off).
        _setdefault(settings, _SETTING, "scrapy_rerp.RobotsTxtMiddleware", priority)
        disable_component(settings, _SETTING, ScrapyRobotsTxtMiddleware)

        from scrapy_rerp.crawl import evidence, middleware, page_directives, signing

        for name, path, at in (
            # Its companion, which hears every answer first.
            (_SETTING, "scrapy_rerp.AnswersMiddleware", middleware.ANSWERS_MIDDLEWARE_PRIORITY),
            # Web Bot Auth signatures (RERP_SIGNATURE_KEY; off otherwise), made last, after
            # every middleware that may change a header they cover.
            (_SETTING, "scrapy_rerp.SigningMiddleware", signing.SIGNING_MIDDLEWARE_PRIORITY),
            (
                _SPIDER_SETTING,
                "scrapy_rerp.PageDirectivesMiddleware",
                page_directives.PAGE_MIDDLEWARE_PRIORITY,
            ),
            # An item's provenance (RERP_EVIDENCE_ITEM_FIELD; off otherwise), added to the
            # items the page directives kept.
            (
                _SPIDER_SETTING,
                "scrapy_rerp.EvidenceItemsMiddleware",
                evidence.EVIDENCE_ITEMS_PRIORITY,
            ),
        ):
            _setdefault(settings, name, path, at)


def _setdefault(settings: BaseSettings, name: str, path: str, priority: int) -> None:
    """Enable the component ``path`` names in the component priority dictionary ``name``,
    unless the project lists it already, under any import path or as a class."""
    cls = load_object(path)
    components = settings.getdict(name)
    if any(loaded(key) is cls for key in components):
        return
    components[path] = priority
    settings.set(name, components, settings.getpriority(name) or 0)


def _scrapy_key(settings: BaseSettings) -> object:
    """The key under which Scrapy's middleware appears (a class or any import path); the
    last one, the project's, where a Scrapy older than 2.15 keeps the ``_BASE`` one beside."""
    found: object = ScrapyRobotsTxtMiddleware
    for key in component_priorities(settings, _SETTING):
        if loaded(key) is ScrapyRobotsTxtMiddleware:
            found = key
    return found
