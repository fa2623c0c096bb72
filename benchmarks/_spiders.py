"""The spider the crawl benchmarks run: it asks for a list of URLs and counts what came back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
