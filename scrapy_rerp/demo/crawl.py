"""A polite Scrapy crawl with ``ADDONS = {"scrapy_rerp.Addon": 100}``, offline, in seconds.

Run it with ``scrapy-rerp demo`` (after ``pip install -e "./scrapy-rerp[scrapy]"``), or from the
repository with ``python examples/polite_crawl.py`` (``--pages 5``, ``--blog-robots missing``,
``-v``); it needs no file of the repository and leaves nothing running.

Two small web sites run in this process, on 127.0.0.1 with ports picked by the system:

* **shop** (``http://127.0.0.1:PORT``): its robots.txt keeps every crawler out except
  ``PoliteDemoBot``, which may crawl all but ``/private`` with ``Crawl-delay: 0.5``, and lists a
  ``Sitemap:``. The sitemap names a page no link leads to (``/new-arrivals``).
* **blog** (``http://localhost:PORT``): its robots.txt (``Disallow: /drafts``) answers
  ``503 Service Unavailable`` twice before the ``200`` (``--blog-robots flaky``, the default),
  or does not exist at all (``--blog-robots missing``: 404).

The blog is addressed as ``localhost`` because Scrapy keys download slots (and so delays) by
host name: two origins on ``127.0.0.1`` would share one slot, and the shop's Crawl-delay would
slow the blog down as well.

A spider that sends a full browser-style User-Agent header (``Mozilla/5.0 (compatible;
PoliteDemoBot/1.0; ...)``) starts at both home pages and follows every link, allowed or not.
Nothing but the add-on and two demo-friendly values is configured:
``RERP_SITEMAP_DISCOVERY = True`` (follow the sitemaps robots.txt lists) and
``RERP_RETRY_BACKOFF_BASE = 0.25`` (retry an unreachable robots.txt after 0.25 s, 0.5 s, ...,
instead of the default 1 s, 2 s, ...).

What scrapy_rerp does, and the report below shows as the servers saw it:

* one robots.txt download per origin, before any page of that origin;
* the rules of the spider's own group, picked out of the User-Agent header;
* disallowed URLs are dropped in the downloader (``IgnoreRequest``): they never reach a server;
* Crawl-delay becomes a floor on the shop's download slot: consecutive requests at least
  0.5 s apart, robots.txt included;
* a robots.txt answering 503 means "disallow all for now" (RFC 9309 2.3.1.4): the blog's
  requests are parked outside Scrapy's downloader (holding none of the crawl's concurrency)
  while robots.txt is retried, then released under the rules it returns; a 404 means
  "allow all";
* sitemaps listed in robots.txt are followed (for a SitemapSpider, with discovery on);
* ``robotstxt/*`` stats count all of it.

The script checks those claims against what the servers received and exits with status 1 if
one does not hold.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.spiders import SitemapSpider
from twisted.python.failure import Failure

from scrapy_rerp.core.urls import origin_of
from scrapy_rerp.core.version import __version__
from scrapy_rerp.crawl.compat import crawler_process
from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware
from scrapy_rerp.demo.local_server import Reply, Server, gaps, urlset
from scrapy_rerp.engine import RobotsTxt

USER_AGENT = "Mozilla/5.0 (compatible; PoliteDemoBot/1.0; +https://example.com/polite-demo)"
CRAWL_DELAY = 0.5
#: Clock and thread-scheduling slack when comparing gaps measured at the server to Crawl-delay.
TOLERANCE = 0.02


# -- two small web sites ------------------------------------------------------------------------


class Site(Server):
    """One of the demo's web sites: a local server on 127.0.0.1 that records every request it
    receives, with a name and a line on what it serves. A path without a route gets 404."""

    def __init__(self, name: str, host_name: str = "127.0.0.1") -> None:
        super().__init__(host_name=host_name)  # how the crawl addresses it
        self.name = name
        self.description = ""
        self.default = lambda hit: Reply(status=404, body="not found")


def page(title: str, links: Iterable[str] = ()) -> Reply:
    items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return Reply(
        body=f"<html><head><title>{title}</title></head><body><ul>{items}</ul></body>",
        content_type="text/html; charset=utf-8",
    )


def build_sites(pages: int, blog_robots: str) -> tuple[Site, Site]:
    shop = Site("shop")
    blog = Site("blog", host_name="localhost")

    shop.description = (
        f"robots.txt: Disallow: /private and Crawl-delay: {CRAWL_DELAY} for PoliteDemoBot, "
        "Disallow: / for others, a Sitemap"
    )
    shop.route(
        "/robots.txt",
        Reply(
            body=(
                "# shop: PoliteDemoBot is welcome, gently; everyone else stays out\n"
                "User-agent: *\n"
                "Disallow: /\n"
                "\n"
                "User-agent: PoliteDemoBot\n"
                "Disallow: /private\n"
                f"Crawl-delay: {CRAWL_DELAY}\n"
                "\n"
                f"Sitemap: {shop.url('/sitemap.xml')}\n"
            ),
            content_type="text/plain; charset=utf-8",
        ),
    )
    products = [f"/products/{n}" for n in range(1, pages + 1)]
    shop.route("/", page("shop", [*products, "/private/account", blog.url("/")]))
    for n, path in enumerate(products, 1):
        links = [products[n]] if n < pages else []
        if n == 1:
            links.append("/private/orders")
        shop.route(path, page(f"product {n}", links))
    shop.route("/new-arrivals", page("new arrivals"))
    shop.route("/private/account", page("account"))
    shop.route("/private/orders", page("orders"))
    shop.route("/sitemap.xml", urlset(shop.url(p) for p in [*products, "/new-arrivals"]))

    blog_rules = Reply(body="User-agent: *\nDisallow: /drafts\n", content_type="text/plain")
    if blog_robots == "flaky":
        blog.description = "robots.txt: 503 twice, then 200 with Disallow: /drafts"
        unavailable = Reply(status=503, body="busy, try again", content_type="text/plain")
        blog.route("/robots.txt", [unavailable, unavailable, blog_rules])
    else:
        blog.description = "robots.txt: 404 (none), so everything is allowed"
    blog.route(
        "/", page("blog", ["/posts/1", "/posts/2", "/drafts/next-post", shop.url(products[0])])
    )
    blog.route("/posts/1", page("post 1", ["/drafts/next-post"]))
    blog.route("/posts/2", page("post 2"))
    blog.route("/drafts/next-post", page("a draft"))
    return shop, blog


# -- the spider -----------------------------------------------------------------------------------


@dataclass
class Blocked:
    url: str
    reason: str


class PoliteSpider(SitemapSpider):
    """Follows every link from its start pages, and the sitemaps robots.txt files list."""

    name = "polite_demo"
    sitemap_rules = [("", "parse_page")]  # pages found in sitemaps are parsed like the others

    def __init__(self, start_urls: Sequence[str] = (), *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = list(start_urls)
        self.blocked: list[Blocked] = []
        self.rules: dict[str, RobotsTxt] = {}  # origin -> the rules scrapy_rerp applies

    def remember_rules(self, url: str) -> None:
        # The rules scrapy_rerp applies to the origin, as soon as a page of it is answered or
        # dropped (robots.txt is known by then). Read from the middleware, which every
        # supported Scrapy has; Scrapy 2.18+ also sends them with its robots_parsed signal.
        origin = origin_of(url)
        if origin in self.rules:
            return
        middleware = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        robots = middleware.robots_for(url) if middleware is not None else None
        if robots is not None:
            self.rules[origin] = robots

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse_page, errback=self.failed)

    def parse_page(self, response: Response) -> Iterable[scrapy.Request]:
        self.remember_rules(response.url)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_page, errback=self.failed)

    def failed(self, failure: Failure) -> None:
        request: scrapy.Request = failure.request  # type: ignore[attr-defined]
        if not failure.check(IgnoreRequest):
            self.logger.error("%s failed: %s", request, failure.getErrorMessage())
            return
        reason = failure.getErrorMessage()
        self.remember_rules(request.url)
        robots = self.rules.get(origin_of(request.url))
        if robots is not None and not robots.allowed(request.url, USER_AGENT):
            decision = robots.decide(request.url, USER_AGENT)
            reason = f"robots.txt line {decision.line}: {decision.rule}"
        self.blocked.append(Blocked(request.url, reason))


# -- running and reporting -----------------------------------------------------------------------


@dataclass(kw_only=True)
class Outcome:
    sites: tuple[Site, ...]
    started: float
    elapsed: float
    blocked: list[Blocked]
    rules: dict[str, RobotsTxt]
    stats: dict[str, Any]
    checks: list[tuple[bool, str]] = field(default_factory=list)


def run_crawl(sites: tuple[Site, ...], log_level: str) -> Outcome:
    settings: dict[str, Any] = {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "RERP_SITEMAP_DISCOVERY": True,
        "RERP_RETRY_BACKOFF_BASE": 0.25,
        "USER_AGENT": USER_AGENT,
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "LOG_LEVEL": log_level,
        "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
    }
    process = crawler_process(settings)
    crawler = process.create_crawler(PoliteSpider)
    process.crawl(crawler, start_urls=[site.url("/") for site in sites])
    started = time.monotonic()
    process.start()
    elapsed = time.monotonic() - started
    spider = crawler.spider
    assert isinstance(spider, PoliteSpider)
    assert crawler.stats is not None
    return Outcome(
        sites=sites,
        started=started,
        elapsed=elapsed,
        blocked=spider.blocked,
        rules=spider.rules,
        stats=crawler.stats.get_stats(),
    )


def verify(outcome: Outcome) -> Iterator[tuple[bool, str]]:
    """Check what the servers received against what scrapy_rerp promises: (held, the claim)."""
    received_urls = set()
    for site in outcome.sites:
        hits = site.hits()
        received_urls.update(site.url(hit.path) for hit in hits)
        robots_hits = [hit for hit in hits if hit.path == "/robots.txt"]
        pages = [hit for hit in hits if hit.path != "/robots.txt"]
        statuses = ", ".join(str(hit.status) for hit in robots_hits)
        answered = [hit for hit in robots_hits if hit.status is not None and hit.status < 500]
        last_robots = max((hit.time for hit in robots_hits), default=float("inf"))
        first_page = min((hit.time for hit in pages), default=None)
        yield (
            len(answered) == 1 and (first_page is None or first_page > last_robots),
            f"{site.name}: robots.txt downloaded once ({len(robots_hits)} request(s): "
            f"{statuses}), before any page",
        )
        rules = outcome.rules.get(site.origin)
        if rules is None:
            yield False, f"{site.name}: no rules known to the middleware"
            continue
        disallowed = [h.path for h in pages if not rules.allowed(site.url(h.path), USER_AGENT)]
        yield (
            not disallowed,
            f"{site.name}: all {len(pages)} pages received are allowed by its robots.txt"
            + (f" (received anyway: {disallowed})" if disallowed else ""),
        )
        floor = rules.crawl_delay(USER_AGENT)
        if floor:
            series = gaps(hits)
            smallest = min(series, default=floor)
            yield (
                smallest >= floor - TOLERANCE,
                f"{site.name}: {len(series)} gaps, all >= Crawl-delay {floor:g} s "
                f"(smallest {smallest:.3f} s)",
            )
    leaked = [b.url for b in outcome.blocked if b.url in received_urls]
    yield (
        bool(outcome.blocked) and not leaked,
        f"{len(outcome.blocked)} blocked URL(s), none received by a server"
        + (f" (received: {leaked})" if leaked else ""),
    )
    forbidden = outcome.stats.get("robotstxt/forbidden", 0)
    yield (
        forbidden == len(outcome.blocked),
        f"robotstxt/forbidden = {forbidden} = blocked requests seen by the spider",
    )


def report(outcome: Outcome) -> None:
    print(
        f"scrapy_rerp {__version__}, Scrapy {scrapy.__version__}: "
        f"crawl finished in {outcome.elapsed:.2f} s"
    )
    print(f"User-Agent: {USER_AGENT}")
    for site in outcome.sites:
        print(f"\n== {site.name} {site.origin}")
        print(f"   {site.description}")
        hits = site.hits()
        print(f"   received {len(hits)} request(s) (seconds since the crawl started; gap):")
        gap_texts = [f"{gap:.3f}" for gap in gaps(hits)]
        for hit, gap in zip(hits, ["-", *gap_texts], strict=False):
            print(f"   {hit.time - outcome.started:7.3f} {gap:>7} {hit.status:4d}  {hit.path}")
        rules = outcome.rules.get(site.origin)
        delay = rules.crawl_delay(USER_AGENT) if rules is not None else None
        if delay:
            print(f"   Crawl-delay {delay:g} s: gaps {' '.join(gap_texts)}")
        else:
            print("   Crawl-delay: none")
        if rules is not None and rules.sitemaps:
            print(f"   Sitemaps: {' '.join(rules.sitemaps)}")
    print(f"\n== blocked by robots.txt: {len(outcome.blocked)} (dropped before download)")
    for blocked in sorted(outcome.blocked, key=lambda b: b.url):
        print(f"   {blocked.url}  {blocked.reason}")
    print("\n== robotstxt/* stats")
    for key in sorted(k for k in outcome.stats if k.startswith("robotstxt/")):
        print(f"   {key} = {outcome.stats[key]}")
    print("\n== checks")
    for ok, message in outcome.checks:
        print(f"   {'ok    ' if ok else 'FAILED'} {message}")


def run(pages: int = 3, blog_robots: str = "flaky", verbose: bool = False) -> Outcome:
    """Start the two sites, crawl them, stop them, and check the outcome."""
    if not 1 <= pages <= 40:
        raise ValueError("--pages must be between 1 and 40")
    shop, blog = build_sites(pages, blog_robots)
    with shop, blog:
        outcome = run_crawl((shop, blog), "DEBUG" if verbose else "WARNING")
    outcome.checks.extend(verify(outcome))
    return outcome


def as_dict(outcome: Outcome) -> dict[str, Any]:
    """The outcome as plain data (``scrapy-rerp demo --format json``)."""
    return {
        "elapsed": round(outcome.elapsed, 3),
        "user_agent": USER_AGENT,
        "sites": [
            {
                "name": site.name,
                "origin": site.origin,
                "description": site.description,
                "received": [
                    {
                        "at": round(hit.time - outcome.started, 3),
                        "status": hit.status,
                        "path": hit.path,
                    }
                    for hit in site.hits()
                ],
            }
            for site in outcome.sites
        ],
        "blocked": [{"url": b.url, "reason": b.reason} for b in outcome.blocked],
        "stats": {
            key: value
            for key, value in sorted(outcome.stats.items())
            if key.startswith("robotstxt/") and isinstance(value, (int, float, str))
        },
        "checks": [{"ok": ok, "check": message} for ok, message in outcome.checks],
        "ok": all(ok for ok, _ in outcome.checks),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="A Scrapy crawl of two local sites with ADDONS = {'scrapy_rerp.Addon': 100}: "
        "robots.txt once per origin, disallowed URLs dropped, Crawl-delay kept, "
        "503 robots.txt retried, sitemaps followed. Offline; takes a few seconds."
    )
    parser.add_argument(
        "--pages",
        type=int,
        default=3,
        metavar="N",
        help="product pages on the shop, each 0.5 s apart (1-40, default 3)",
    )
    parser.add_argument(
        "--blog-robots",
        choices=["flaky", "missing"],
        default="flaky",
        help="the blog's robots.txt: 'flaky' (503, 503, then 200; the default) or "
        "'missing' (404: allow all)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show Scrapy's log (DEBUG) on stderr"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.pages <= 40:
        parser.error("--pages must be between 1 and 40")
    outcome = run(args.pages, args.blog_robots, args.verbose)
    report(outcome)
    sys.stdout.flush()
    return 0 if all(ok for ok, _ in outcome.checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
