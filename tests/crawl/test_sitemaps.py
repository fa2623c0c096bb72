"""Sitemap discovery from robots.txt: what the servers received in real SitemapSpider crawls."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.spiders import SitemapSpider

from scrapy_rerp.crawl.sitemaps import (
    STAT_DISCOVERED,
    STAT_FILTERED_FOLLOW,
    STAT_FILTERED_OFFSITE,
    STAT_INVALID,
    STAT_SCHEDULED,
    STAT_SERVED,
    SitemapDiscovery,
)
from tests.support.servers import ListSpider, Reply, Server, crawl, urlset
from tests.support.slots import ADDON, STAND_IN, FloorFromRobots, rerp_settings
from tests.support.slots import settings as slot_settings

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

XML = "application/xml"


class DiscoveringMiddleware(FloorFromRobots):
    """The floors test middleware, also handing every parsed robots.txt to SitemapDiscovery."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.discovery = SitemapDiscovery.from_crawler(crawler, rerp_settings(crawler))
        self.on_robots.append(self.discovery.robots_parsed)


def settings(via: str, **extra: Any) -> dict[str, Any]:
    """The stand-in middleware with discovery, or RobotsTxtMiddleware through the Addon."""
    if via == ADDON:
        return slot_settings(ADDON, **extra)
    return slot_settings(
        STAND_IN, DOWNLOADER_MIDDLEWARES={f"{__name__}.DiscoveringMiddleware": 100}, **extra
    )


@pytest.fixture(params=[STAND_IN, ADDON])
def via(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def sitemapindex(urls: Iterable[str]) -> Reply:
    body = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return Reply(
        body=f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}'
        f"</sitemapindex>",
        content_type=XML,
    )


class DiscoverySpider(SitemapSpider):
    """Visits the home pages it is given; every sitemap it reads comes from robots.txt."""

    name = "discovery"
    allowed_domains = ["127.0.0.1"]
    sitemap_follow = [r"/sitemap_index\.xml$", r"/sitemap-pages\.xml$", r"/sitemap\.xml$"]
    sitemap_rules = [(r"/keep/", "parse")]

    def __init__(self, homes: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.homes = list(homes)
        self.parsed: list[str] = []

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.homes:
            yield scrapy.Request(url, self.parse)

    def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for entry in entries:
            if "drop" not in entry["loc"]:
                yield entry

    def parse(self, response: Response) -> None:
        self.parsed.append(response.url)


@pytest.fixture
def sites(make_server: Any) -> Iterator[tuple[Server, Server, Server]]:
    """Site ``a`` and site ``c`` on 127.0.0.1 (allowed), ``offsite`` on 127.0.0.2."""
    a, c = make_server(), make_server()
    with Server(host="127.0.0.2") as offsite:
        a.robots(
            "User-agent: *\nDisallow:\n"
            f"Sitemap: {a.url('/sitemap_index.xml')}\n"
            "Sitemap: /sitemap-news.xml\n"  # relative, and not in sitemap_follow
            f"Sitemap: {offsite.url('/sitemap.xml')}\n"  # outside allowed_domains
            f"Sitemap: {a.url('/sitemap_index.xml')}\n"  # listed twice
            "Sitemap: ftp://files.example/sitemap.xml\n"
        )
        a.route(
            "/sitemap_index.xml",
            sitemapindex([a.url("/sitemap-pages.xml"), a.url("/sitemap-other.xml")]),
        )
        a.route(
            "/sitemap-pages.xml",
            urlset([a.url("/keep/1"), a.url("/keep/2"), a.url("/skip/3"), a.url("/keep/drop")]),
        )
        a.route("/sitemap-news.xml", urlset([a.url("/keep/news")]))
        a.route("/sitemap-other.xml", urlset([a.url("/keep/other")]))
        # c lists its own sitemap (relative to its robots.txt) and a's index, already seen.
        c.robots(f"Sitemap: sitemap.xml\nSitemap: {a.url('/sitemap_index.xml')}\n")
        c.route("/sitemap.xml", urlset([c.url("/keep/c1")]))
        offsite.robots("")
        offsite.route("/sitemap.xml", urlset([offsite.url("/keep/x")]))
        yield a, c, offsite


@pytest_twisted.ensureDeferred
async def test_sitemaps_listed_in_robots_txt_are_followed_once(
    sites: tuple[Server, Server, Server], via: str
) -> None:
    a, c, offsite = sites
    crawler = await crawl(
        DiscoverySpider, settings(via, RERP_SITEMAP_DISCOVERY=True), homes=[a.url("/"), c.url("/")]
    )
    assert sorted(a.paths()) == sorted(
        ["/robots.txt", "/", "/sitemap_index.xml", "/sitemap-pages.xml", "/keep/1", "/keep/2"]
    )
    assert sorted(c.paths()) == sorted(["/robots.txt", "/", "/sitemap.xml", "/keep/c1"])
    assert offsite.paths() == []
    spider = crawler.spider
    assert isinstance(spider, DiscoverySpider)
    assert sorted(spider.parsed) == sorted(
        [a.url("/"), c.url("/"), a.url("/keep/1"), a.url("/keep/2"), c.url("/keep/c1")]
    )
    stats = crawler.stats
    # a's index, a's news sitemap, the offsite one, c's own: a's index again is not new.
    assert stats.get_value(STAT_DISCOVERED) == 4
    assert stats.get_value(STAT_SCHEDULED) == 2
    assert stats.get_value(STAT_FILTERED_OFFSITE) == 1
    assert stats.get_value(STAT_FILTERED_FOLLOW) == 1
    assert stats.get_value(STAT_INVALID) == 1


@pytest_twisted.ensureDeferred
async def test_discovery_is_off_by_default(sites: tuple[Server, Server, Server], via: str) -> None:
    a, c, _ = sites
    crawler = await crawl(DiscoverySpider, settings(via), homes=[a.url("/"), c.url("/")])
    assert sorted(a.paths()) == ["/", "/robots.txt"]
    assert sorted(c.paths()) == ["/", "/robots.txt"]
    assert crawler.stats.get_value(STAT_SCHEDULED) is None


@pytest_twisted.ensureDeferred
async def test_discovery_needs_a_sitemap_spider(
    sites: tuple[Server, Server, Server], via: str
) -> None:
    a, _, _ = sites
    await crawl(ListSpider, settings(via, RERP_SITEMAP_DISCOVERY=True), urls=[a.url("/")])
    assert sorted(a.paths()) == ["/", "/robots.txt"]


class WithSitemapUrls(DiscoverySpider):
    """A spider that also names a's index in sitemap_urls: still downloaded once."""

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.homes:
            yield scrapy.Request(url, self.parse)
        for url in self.sitemap_urls:
            yield scrapy.Request(url, self._parse_sitemap)


@pytest_twisted.ensureDeferred
async def test_a_sitemap_also_in_sitemap_urls_is_downloaded_once(
    sites: tuple[Server, Server, Server], via: str
) -> None:
    a, _, _ = sites
    crawler = await crawl(
        WithSitemapUrls,
        settings(via, RERP_SITEMAP_DISCOVERY=True),
        homes=[a.url("/")],
        sitemap_urls=[a.url("/sitemap_index.xml")],
    )
    assert a.count("/sitemap_index.xml") == 1
    assert a.count("/sitemap-pages.xml") == 1
    assert a.count("/keep/1") == 1
    # Not counted as discovered: the spider had it already.
    assert crawler.stats.get_value(STAT_DISCOVERED) == 2
    assert crawler.stats.get_value(STAT_SCHEDULED) is None


class FromRobotsSpider(DiscoverySpider):
    """The classic SitemapSpider set-up: sitemap_urls names robots.txt itself."""

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.sitemap_urls:
            yield scrapy.Request(url, self._parse_sitemap)


@pytest_twisted.ensureDeferred
async def test_robots_txt_in_sitemap_urls_with_discovery_downloads_everything_once(
    sites: tuple[Server, Server, Server],
) -> None:
    a, _, offsite = sites
    crawler = await crawl(
        FromRobotsSpider,
        settings(ADDON, RERP_SITEMAP_DISCOVERY=True),
        sitemap_urls=[a.url("/robots.txt")],
    )
    # The spider reads robots.txt too (Scrapy does not apply sitemap_follow to it, so it also
    # asks for the news sitemap); discovery adds nothing twice, and robots.txt is fetched once.
    assert a.count("/robots.txt") == 1
    for path in ("/sitemap_index.xml", "/sitemap-pages.xml", "/keep/1", "/keep/2"):
        assert a.count(path) == 1, path
    assert a.count("/skip/3") == 0
    assert offsite.paths() == []
    assert crawler.stats.get_value(STAT_SCHEDULED) == 1


class RobotsTxtSitemaps(SitemapSpider):
    """The plain set-up, without discovery: ``sitemap_urls`` names robots.txt."""

    name = "robots-sitemaps"

    def parse(self, response: Response) -> None:
        pass


@pytest_twisted.ensureDeferred
async def test_robots_txt_in_sitemap_urls_is_logged_as_one_download(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(f"User-agent: *\nDisallow: /private\nSitemap: {server.url('/sitemap.xml')}\n")
    server.route("/sitemap.xml", urlset([server.url("/page")]))
    caplog.set_level(logging.DEBUG, logger="scrapy.core.engine")
    await crawl(
        RobotsTxtSitemaps,
        settings(ADDON, LOG_LEVEL="DEBUG"),
        sitemap_urls=[server.url("/robots.txt")],
    )
    assert server.count("/robots.txt") == 1
    robots = f"<GET {server.url('/robots.txt')}>"
    crawled = [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith(f"Crawled (200) {robots}")
    ]
    # The download, logged as any download is; then the spider's request, answered from it,
    # saying so (Scrapy logs the flags of a response at the end of its line).
    assert crawled == [
        f"Crawled (200) {robots} (referer: None)",
        f"Crawled (200) {robots} (referer: None) "
        "['robots.txt', 'served from the download of the rules']",
    ]


@pytest_twisted.ensureDeferred
async def test_an_undecodable_sitemap_line_does_not_stop_the_others(
    server: Server, via: str
) -> None:
    server.robots(
        b"Sitemap: " + server.url("/bad-\xff/sitemap.xml").encode("latin-1") + b"\n"
        b"Sitemap: " + server.url("/sitemap.xml").encode() + b"\n"
    )
    server.route("/sitemap.xml", urlset([server.url("/keep/1")]))
    crawler = await crawl(
        DiscoverySpider,
        settings(via, RERP_SITEMAP_DISCOVERY=True),
        homes=[server.url("/")],
    )
    assert sorted(server.paths()) == ["/", "/keep/1", "/robots.txt", "/sitemap.xml"]
    assert crawler.stats.get_value(STAT_SCHEDULED) == 1
    assert crawler.stats.get_value(STAT_INVALID) == 1


@pytest_twisted.ensureDeferred
async def test_a_malformed_sitemap_line_skips_itself_only(
    server: Server, via: str, caplog: pytest.LogCaptureFixture
) -> None:
    # urljoin raises ValueError on the second line; an empty one would name robots.txt itself.
    server.robots(
        f"Sitemap: {server.url('/sitemap.xml')}\n"
        "Sitemap: http://[::1/sitemap.xml\n"
        "Sitemap:\n"
        "Sitemap: /sitemap-pages.xml\n"
    )
    server.route("/sitemap.xml", urlset([server.url("/keep/1")]))
    server.route("/sitemap-pages.xml", urlset([server.url("/keep/2")]))
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    crawler = await crawl(
        DiscoverySpider,
        settings(via, RERP_SITEMAP_DISCOVERY=True),
        homes=[server.url("/")],
    )
    assert sorted(server.paths()) == [
        "/",
        "/keep/1",
        "/keep/2",
        "/robots.txt",
        "/sitemap-pages.xml",
        "/sitemap.xml",
    ]
    assert crawler.stats.get_value(STAT_SCHEDULED) == 2
    assert crawler.stats.get_value(STAT_INVALID) == 2
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Ignoring")]
    assert skipped == [
        f"Ignoring sitemap 'http://[::1/sitemap.xml' listed in {server.url('/robots.txt')}: "
        "malformed URL (Invalid IPv6 URL)",
        f"Ignoring sitemap '' listed in {server.url('/robots.txt')}: empty",
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest_twisted.ensureDeferred
async def test_robots_txt_in_sitemap_urls_with_the_rules_from_the_store(
    server: Server, tmp_path: Path
) -> None:
    # A second crawl takes the rules from RERP_STORE with no download: the spider's own
    # robots.txt request has no download to be answered from, so it is downloaded, once, and
    # its sitemaps are followed under the stored rules.
    server.robots(f"User-agent: *\nDisallow: /private\nSitemap: {server.url('/sitemap.xml')}\n")
    server.route("/sitemap.xml", urlset([server.url("/page"), server.url("/private/page")]))
    store = str(tmp_path / "robots.sqlite")
    await crawl(
        RobotsTxtSitemaps, settings(ADDON, RERP_STORE=store), sitemap_urls=[server.url("/a")]
    )
    server.clear()
    second = await crawl(
        RobotsTxtSitemaps,
        settings(ADDON, RERP_STORE=store),
        sitemap_urls=[server.url("/robots.txt")],
    )
    assert second.stats.get_value("robotstxt/store/reused") == 1
    assert second.stats.get_value("robotstxt/request_count") is None  # the rules: no download
    assert second.stats.get_value(STAT_SERVED) is None
    assert server.count("/robots.txt") == 1  # the spider's request
    assert server.count("/sitemap.xml") == 1
    assert server.count("/page") == 1
    assert server.count("/private/page") == 0  # the stored rules obeyed
