"""Instructions per response of the page directives layer, through Scrapy's spider middlewares.

``scrapy_rerp.Addon`` adds ``PageDirectivesMiddleware`` to the spider middlewares: every response
that reaches the spider has its headers and, for HTML, its head read before the callback runs,
and the callback's output passes through the middleware. This script measures what that costs
per response, deterministically: a child process builds Scrapy's ``SpiderMiddlewareManager``
from the Addon's settings, with page directives on or off, and scrapes made-up responses
through it (the crawl benchmark's page: a small HTML page whose head names neither ``robots``
nor the crawler, as most pages; the callback yields nothing). Under valgrind's callgrind each
way scrapes ``--responses`` responses and twice as many; the difference divided by the extra
responses leaves start-up out. The page layer's cost is the difference between the first two
ways; the third, ``RERP_USAGE = "train-ai"``, adds what reading the usage purposes costs a page
that says nothing of them (TDMRep's ``tdm-reservation`` and ``tdm-policy`` headers looked up,
and their names among those that make a head worth parsing).

No network, no event loop timing and one hash seed: the count is the same from run to run,
which the crawl benchmark's (benchmarks/bench_crawl.py) is not to within a few tenths of a
percent.

Usage::

    python benchmarks/bench_page_layer.py [--responses 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_crawl import child_instructions_per_unit, engineless_crawler, page  # noqa: E402

WAYS = ("page directives off", "page directives on", "page directives on, train-ai")
USER_AGENT = "Scrapy/2.19 (+https://scrapy.org)"


def scrape(way: str, responses: int) -> dict[str, Any]:
    """Scrape *responses* responses through the spider middlewares; how many the layer read."""
    import scrapy
    from scrapy.core.spidermw import SpiderMiddlewareManager

    if not hasattr(SpiderMiddlewareManager, "scrape_response_async"):
        raise SystemExit("bench_page_layer.py needs Scrapy 2.14 or later (scrape_response_async)")
    from scrapy.http import HtmlResponse

    settings: dict[str, Any] = {"ADDONS": {"scrapy_rerp.Addon": 100}}
    if way == WAYS[0]:
        settings.update(RERP_PAGE_HEADER=False, RERP_PAGE_META=False)
    elif way == WAYS[2]:
        settings.update(RERP_USAGE="train-ai")
    crawler = engineless_crawler("page_layer", settings)
    manager = SpiderMiddlewareManager.from_crawler(crawler)
    headers = {"Content-Type": "text/html; charset=utf-8"}

    async def callback(response: Any, request: Any) -> list[Any]:
        return []

    read = 0

    async def run() -> None:
        nonlocal read
        for n in range(responses):
            url = f"http://127.0.0.{2 + n % 50}:8000/public/{n}.html"
            request = scrapy.Request(url, headers={"User-Agent": USER_AGENT})
            response = HtmlResponse(
                url, body=page(f"/public/{n}.html"), headers=headers, request=request
            )
            async for _ in await manager.scrape_response_async(callback, response, request):
                pass
            read += "rerp_page" in response.meta  # what the layer gives the callback

    asyncio.run(run())
    return {"read": read}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=2000, help="responses (default 2000)")
    parser.add_argument("--child", nargs=2, metavar=("WAY", "RESPONSES"), help=argparse.SUPPRESS)
    # Every way in turn in one process, each with its own crawler: the smoke test's child (one
    # Scrapy start-up instead of three); the counted children stay one way each.
    parser.add_argument("--every-way-child", type=int, metavar="RESPONSES", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(scrape(args.child[0], int(args.child[1]))))
        return 0
    if args.every_way_child:
        print(json.dumps({way: scrape(way, args.every_way_child) for way in WAYS}))
        return 0
    small = args.responses
    per: dict[str, float] = {}
    for way in WAYS:
        per[way] = child_instructions_per_unit(__file__, way, small)
        print(f"{way}: {per[way]:,.0f} instructions per response", flush=True)
    print(f"page directives layer: {per[WAYS[1]] - per[WAYS[0]]:,.0f} instructions per response")
    print(f"RERP_USAGE train-ai: {per[WAYS[2]] - per[WAYS[1]]:+,.0f} instructions per response")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
