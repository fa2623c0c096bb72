"""The robots.txt middleware's parts, built on a crawler from Scrapy's ``get_crawler`` (no
engine: nothing is downloaded), for the tests of the parts and of the request path."""

from __future__ import annotations

from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from scrapy_rerp.core.settings import RerpSettings, crawler_user_agent, settings_for
from scrapy_rerp.crawl.assembly import Parts, assemble, origin_caches
from scrapy_rerp.crawl.compat import close_when_opened, user_agent_header


class Sitemaps(scrapy.Spider):
    name = "assembly"


def crawler_and_settings(settings: dict[str, Any]) -> tuple[Crawler, RerpSettings]:
    crawler = get_crawler(Sitemaps, {"ROBOTSTXT_OBEY": True, **settings})
    crawler.spider = crawler._create_spider()
    checked = settings_for(crawler, close_when_opened)
    assert checked is not None
    return crawler, checked


def build(settings: dict[str, Any]) -> tuple[Crawler, Parts]:
    crawler, checked = crawler_and_settings(settings)
    caches = origin_caches(crawler, checked)
    assert caches is not None

    def user_agent_for(request: scrapy.Request) -> str:
        return crawler_user_agent(checked, user_agent_header(request))

    return crawler, assemble(crawler, checked, *caches, user_agent_for)
