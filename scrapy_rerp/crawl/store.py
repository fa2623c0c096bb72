"""The crawl's side of the robots.txt store (``RERP_STORE``): where the file is, and the
:class:`~scrapy_rerp.core.crawl_store.CrawlStore` the origin service reads and writes through.
Built by :mod:`scrapy_rerp.crawl.assembly`, closed when the spider closes."""

from __future__ import annotations

import logging
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.utils.project import data_path

from scrapy_rerp.core import loggers
from scrapy_rerp.core.bounds import longest_lifetime
from scrapy_rerp.core.crawl_store import CrawlStore
from scrapy_rerp.core.settings import setting_path
from scrapy_rerp.core.store import RobotsStore
from scrapy_rerp.crawl.compat import stats_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.settings import RerpSettings

__all__ = ["open_store"]

logger = logging.getLogger(loggers.STORE)


def open_store(crawler: Crawler, settings: RerpSettings) -> CrawlStore | None:
    """The robots.txt store ``RERP_STORE`` names, or None when there is none (the default) or
    the crawl is a fleet's (its robots.txt is shared through Redis). A relative path is from
    the current directory (:func:`~scrapy_rerp.core.settings.setting_path`); a store found only
    where earlier versions put it (under the project's data directory, ``.scrapy``) is named in
    a WARNING, not used. A file that cannot be used makes the store a no-op with one WARNING
    (:class:`RobotsStore`): the crawl goes on as without it."""
    if settings.store is None:
        return None
    path = Path(setting_path(settings.store))
    earlier = Path(data_path(settings.store)).absolute()
    if not path.exists() and earlier != path and earlier.is_file():
        logger.warning(
            "RERP_STORE %(given)r is %(path)s (a relative path is from the current directory);"
            " the store at %(earlier)s, where earlier versions kept it, is not used: move it"
            " there, or name it in RERP_STORE",
            {"given": settings.store, "path": str(path), "earlier": str(earlier)},
            extra={"crawler": crawler},
        )
    with suppress(OSError):  # the store says why it cannot open the file
        path.parent.mkdir(parents=True, exist_ok=True)
    return CrawlStore(
        RobotsStore(path, settings.store_max_origins),
        settings.syntax,
        settings.max_size,
        stats=stats_of(crawler),
        max_lifetime=longest_lifetime(settings),
    )
