"""The spider the crawl benchmarks run: it asks for a list of URLs and counts what came back;
and one timed crawl of it (:func:`counted_crawl`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from _children import cpu_seconds


def counting_spider(urls: Sequence[str]) -> Any:
    """A spider class that requests ``urls`` and counts pages received (``pages``), requests
    refused (``ignored``: robots.txt, a drop) and other failures (``errors``). Scrapy is
    imported here: the benchmarks' parent processes never import it."""
    import scrapy
    from scrapy.exceptions import IgnoreRequest

    class BenchSpider(scrapy.Spider):
        name = "bench"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.pages = 0
            self.ignored = 0
            self.errors = 0

        async def start(self) -> Any:
            for url in urls:
                yield scrapy.Request(url, callback=self.parse, errback=self.errback)

        def parse(self, response: Any) -> None:
            self.pages += 1

        def errback(self, failure: Any) -> None:
            if failure.check(IgnoreRequest):
                self.ignored += 1
            else:
                self.errors += 1

    return BenchSpider


def counted_crawl(
    settings: dict[str, Any], urls: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Crawl ``urls`` with :func:`counting_spider` in this process, under ``settings``: the
    crawl's figures (``requests``, and the spider's ``pages``, ``ignored`` and ``errors``; its
    ``cpu`` and ``wall`` seconds, from its start to its end) and its stats."""
    from scrapy.crawler import CrawlerProcess

    BenchSpider = counting_spider(urls)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    process.crawl(crawler)
    process.start()
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    spider = crawler.spider
    assert isinstance(spider, BenchSpider)
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    figures = {
        "requests": len(urls),
        "pages": spider.pages,
        "ignored": spider.ignored,
        "errors": spider.errors,
        "cpu": cpu,
        "wall": wall,
    }
    return figures, stats
