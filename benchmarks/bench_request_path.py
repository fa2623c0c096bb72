"""Instructions per request of the robots.txt layer on the downloader's side.

What ``scrapy_rerp.Addon`` adds to each request between Scrapy's scheduler and its download
handler: the robots.txt middleware's ``process_request`` (the gate: the origin's rules, the
engine's check, the politeness controller's admission), and the hearing of each answer (a 429 or
503 slows its origin down). This script measures it deterministically, as
``bench_page_layer.py`` measures the page directives layer: a child process builds Scrapy's
``DownloaderMiddlewareManager`` from a way's settings, gives the middleware the rules of the crawl
benchmark's 50 origins (their robots.txt, as ``bench_crawl.py`` serves them), and sends the crawl
benchmark's URLs (nothing disallowed) through the chain to a download function that answers at
once and sends Scrapy's ``response_downloaded`` signal, as Scrapy's downloader does. Under
valgrind's callgrind each way sends ``--requests`` requests and twice as many; the difference
divided by the extra requests leaves start-up out.

The ways:

* ``off``: ``ROBOTSTXT_OBEY = False``;
* ``idle``: ``bench_crawl.IdleMiddleware`` at 100, whose ``process_request`` returns None (what
  Scrapy's chain costs any middleware);
* ``signal``: the Addon with ``AnswersMiddleware`` turned off: the answers are heard through the
  ``response_downloaded`` signal;
* ``addon``: the Addon, whose ``AnswersMiddleware`` hears them;
* ``quiet``: the Addon with ``RERP_SLOWDOWN = False``: nothing hears the answers.

No network and no event loop timing, and one hash seed: the count is the same from run to run.
Scrapy's own downloader parses each request's URL for its download slot, which the chain here
does not: the gate, which parses it first (``urlparse_cached``), is charged for that parse, which
a crawl shares with the downloader.

Usage::

    python benchmarks/bench_request_path.py [--requests 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_crawl import child_instructions_per_unit, engineless_crawler, plan, robots_txt  # noqa: E402

WAYS = ("off", "idle", "signal", "addon", "quiet")
USER_AGENT = "Scrapy/2.19 (+https://scrapy.org)"
ORIGINS = 50
NETLOCS = [f"127.0.0.{2 + i}:8000" for i in range(ORIGINS)]

_SETTINGS: dict[str, dict[str, Any]] = {
    "off": {"ROBOTSTXT_OBEY": False},
    "idle": {
        "ROBOTSTXT_OBEY": False,
        "DOWNLOADER_MIDDLEWARES": {"bench_crawl.IdleMiddleware": 100},
    },
    "signal": {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "DOWNLOADER_MIDDLEWARES": {"scrapy_rerp.AnswersMiddleware": None},
    },
    "addon": {"ADDONS": {"scrapy_rerp.Addon": 100}},
    "quiet": {"ADDONS": {"scrapy_rerp.Addon": 100}, "RERP_SLOWDOWN": False},
}


def send(way: str, requests: int) -> dict[str, Any]:
    """Send *requests* requests through the downloader middlewares; what came back."""
    import scrapy
    from scrapy import signals
    from scrapy.core.downloader.middleware import DownloaderMiddlewareManager

    if not hasattr(DownloaderMiddlewareManager, "download_async"):
        raise SystemExit("bench_request_path.py needs Scrapy 2.14 or later (download_async)")
    from scrapy.http import HtmlResponse

    crawler = engineless_crawler("request_path", _SETTINGS[way])
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    names = [type(middleware).__name__ for middleware in manager.middlewares]
    if "RobotsTxtMiddleware" in names:
        from scrapy_rerp import AnswersMiddleware, RobotsTxtMiddleware
        from scrapy_rerp.cache import RobotsEntry
        from scrapy_rerp.engine import parse

        robots = next(m for m in manager.middlewares if isinstance(m, RobotsTxtMiddleware))
        now = time.time()
        for index, netloc in enumerate(NETLOCS):
            rules = parse(robots_txt(index, netloc))
            robots.origins.cache.set(
                f"http://{netloc}",
                RobotsEntry(robots=rules, fetched_at=now, expires_at=now + 86400),
            )
        # What the middleware does when the spider opens, with the companion it would find
        # through the engine, which is not built here.
        answers = [m for m in manager.middlewares if isinstance(m, AnswersMiddleware)]
        robots.gate.hear_answers(answers[0] if answers else None)
    headers = {"Content-Type": "text/html; charset=utf-8"}

    async def download(request: Any) -> Any:
        response = HtmlResponse(request.url, body=b"<html></html>", headers=headers)
        crawler.signals.send_catch_log(
            signal=signals.response_downloaded,
            response=response,
            request=request,
            spider=crawler.spider,
        )
        return response

    answered = 0

    async def run() -> None:
        nonlocal answered
        for url, _ in plan(NETLOCS, requests, 64, disallow_every=0):
            request = scrapy.Request(url, headers={"User-Agent": USER_AGENT})
            result = await manager.download_async(download, request)
            answered += isinstance(result, HtmlResponse)

    asyncio.run(run())
    return {"answered": answered, "middlewares": names}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests (default 1000)")
    parser.add_argument("--way", action="append", choices=WAYS, help="only these ways")
    parser.add_argument("--child", nargs=2, metavar=("WAY", "REQUESTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(send(args.child[0], int(args.child[1]))))
        return 0
    small = args.requests
    per: dict[str, float] = {}
    for way in args.way or WAYS:
        per[way] = child_instructions_per_unit(__file__, way, small)
        line = f"{way}: {per[way]:,.0f} instructions per request"
        if "off" in per and way != "off":
            line += f" ({per[way] - per['off']:+,.0f} against off)"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
