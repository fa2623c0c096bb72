"""AI usage preferences (RERP_USAGE) in real crawls against local servers: what the servers
received, and what reached the spider."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler

from scrapy_rerp.engine import UsageDecision
from tests.support.crawls import ignored, pages, rerp, stat
from tests.support.servers import ListSpider, Reply, Server, crawl, servers, stopped_by_settings
from tests.support.usage_examples import ATTACH_ROBOTS_EXAMPLE

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

#: attach-05's example (section 3.4), on one origin: /never/ may not be crawled, /ai-ok/ may be
#: used for training, everything else not (a crawler that is not ExampleBot).
CONTENT_USAGE_ROBOTS = ATTACH_ROBOTS_EXAMPLE
CONTENT_USAGE_PATHS = ["/test", "/never/test", "/ai-ok/test", "/ai-ok/deeper/page"]

#: contentsignals.org's form, for the whole group.
CONTENT_SIGNAL_ROBOTS = """\
User-Agent: *
Content-Signal: search=yes, ai-train=no
Allow: /
Disallow: /private/
"""
CONTENT_SIGNAL_PATHS = ["/a", "/b/c", "/private/x"]

#: Only the pages' headers speak.
HEADER_PATHS = ["/no", "/yes", "/silent", "/search-only"]


def header_only(site: Server) -> None:
    site.robots("User-agent: *\nAllow: /\n")
    site.route("/no", Reply(body="no", headers={"Content-Usage": "train-ai=n"}))
    site.route("/yes", Reply(body="yes", headers={"Content-Usage": "train-ai=y, search=n"}))
    site.route("/search-only", Reply(body="s", headers={"Content-Usage": "search=y"}))


class MarkingSpider(ListSpider):
    """Also keeps each response's usage decisions (``response.meta["rerp_usage"]``)."""

    name = "marking"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.usage: dict[str, dict[str, UsageDecision] | None] = {}

    def parse(self, response: scrapy.http.Response) -> None:
        super().parse(response)
        self.usage[response.url] = response.meta.get("rerp_usage")


def received(crawler: Crawler) -> list[str]:
    spider = crawler.spider
    assert isinstance(spider, ListSpider)
    return sorted(spider.responses)


def usage_of(crawler: Crawler, url: str) -> dict[str, str]:
    spider = crawler.spider
    assert isinstance(spider, MarkingSpider)
    decisions = spider.usage[url]
    assert decisions is not None
    return {purpose: decision.preference for purpose, decision in decisions.items()}


@pytest_twisted.ensureDeferred
async def test_no_url_marked_n_for_the_purpose_is_downloaded_and_every_other_is() -> None:
    with servers(4) as (usage_site, signal_site, header_site, silent_site):
        usage_site.robots(CONTENT_USAGE_ROBOTS)
        signal_site.robots(CONTENT_SIGNAL_ROBOTS)
        header_only(header_site)
        silent_site.robots("User-agent: *\nDisallow: /admin/\n")
        urls = (
            [usage_site.url(p) for p in CONTENT_USAGE_PATHS]
            + [signal_site.url(p) for p in CONTENT_SIGNAL_PATHS]
            + [header_site.url(p) for p in HEADER_PATHS]
            + [silent_site.url(p) for p in ("/x", "/admin/y")]
        )
        crawler = await crawl(MarkingSpider, rerp(RERP_USAGE="train-ai"), urls=urls)

        # Content-Usage: only /ai-ok/ may be used for training; /never/ may not be crawled.
        assert pages(usage_site) == ["/ai-ok/deeper/page", "/ai-ok/test"]
        # Content-Signal ai-train=no covers the whole group.
        assert pages(signal_site) == []
        # Headers arrive with the page: each is downloaded, and the "n" one never reaches the
        # spider.
        assert pages(header_site) == sorted(HEADER_PATHS)
        # Nothing said: unknown, allowed by default.
        assert pages(silent_site) == ["/x"]
        for site in (usage_site, signal_site, header_site, silent_site):
            assert site.count("/robots.txt") == 1

        assert received(crawler) == sorted(
            [usage_site.url("/ai-ok/test"), usage_site.url("/ai-ok/deeper/page")]
            + [header_site.url(p) for p in ("/yes", "/silent", "/search-only")]
            + [silent_site.url("/x")]
        )
        assert stat(crawler, "robotstxt/usage/dropped/robots_txt") == 1 + 2
        assert stat(crawler, "robotstxt/usage/dropped/header") == 1
        assert stat(crawler, "robotstxt/forbidden") == 3
        # Every response downloaded counted once for the purpose (counted in batches, all by
        # the end): /ai-ok/ twice and /yes allowed, /no disallowed, the rest unknown.
        counted = {
            preference: stat(crawler, f"robotstxt/usage/train-ai/{preference}")
            for preference in ("allowed", "disallowed", "unknown")
        }
        assert counted == {"allowed": 3, "disallowed": 1, "unknown": 3}
        # Every URL ends as a response or an IgnoreRequest: nothing is lost.
        assert len(received(crawler)) + len(ignored(crawler)) == len(urls)

        assert usage_of(crawler, usage_site.url("/ai-ok/test")) == {"train-ai": "allowed"}
        assert usage_of(crawler, header_site.url("/yes")) == {"train-ai": "allowed"}
        assert usage_of(crawler, header_site.url("/silent")) == {"train-ai": "unknown"}
        assert usage_of(crawler, header_site.url("/search-only")) == {"train-ai": "unknown"}
        assert usage_of(crawler, silent_site.url("/x")) == {"train-ai": "unknown"}


@pytest_twisted.ensureDeferred
async def test_a_content_signal_name_is_read_as_the_vocabularys_and_search_is_allowed() -> None:
    with servers(2) as (signal_site, header_site):
        signal_site.robots(CONTENT_SIGNAL_ROBOTS)
        header_only(header_site)
        urls = [signal_site.url(p) for p in CONTENT_SIGNAL_PATHS] + [
            header_site.url(p) for p in HEADER_PATHS
        ]
        crawler = await crawl(MarkingSpider, rerp(RERP_USAGE="search"), urls=urls)
        assert pages(signal_site) == ["/a", "/b/c"]
        assert pages(header_site) == sorted(HEADER_PATHS)
        assert header_site.url("/yes") not in received(crawler)  # search=n in its header
        assert usage_of(crawler, signal_site.url("/a")) == {"search": "allowed"}
        assert usage_of(crawler, header_site.url("/search-only")) == {"search": "allowed"}
        assert usage_of(crawler, header_site.url("/no")) == {"search": "unknown"}


@pytest_twisted.ensureDeferred
async def test_several_purposes_drop_what_any_of_them_may_not_use() -> None:
    with servers(1) as (site,):
        site.robots(
            "User-agent: *\nContent-Signal: search=yes, ai-input=no\nAllow: /\n"
            "Content-Usage: /train/ train-ai=y\n"
        )
        urls = [site.url("/train/a"), site.url("/other")]
        settings = rerp(RERP_USAGE=["search", "train-ai"])
        crawler = await crawl(MarkingSpider, settings, urls=urls)
        assert pages(site) == ["/other", "/train/a"]
        assert usage_of(crawler, site.url("/train/a")) == {
            "search": "allowed",
            "train-ai": "allowed",
        }
        assert usage_of(crawler, site.url("/other")) == {"search": "allowed", "train-ai": "unknown"}

        site.clear()
        settings = rerp(RERP_USAGE="search, ai-input")
        crawler = await crawl(MarkingSpider, settings, urls=urls)
        assert pages(site) == []
        assert stat(crawler, "robotstxt/usage/dropped/robots_txt") == 2


@pytest_twisted.ensureDeferred
async def test_deny_unknown_drops_pages_nobody_spoke_for_once_their_header_is_known() -> None:
    with servers(2) as (header_site, silent_site):
        header_only(header_site)
        silent_site.robots("User-agent: *\nAllow: /\n")
        urls = [header_site.url(p) for p in HEADER_PATHS] + [silent_site.url("/x")]
        settings = rerp(RERP_USAGE="train-ai", RERP_USAGE_DEFAULT="deny")
        crawler = await crawl(MarkingSpider, settings, urls=urls)
        # Unknown is only known to be unknown once the header is seen: all are downloaded.
        assert pages(header_site) == sorted(HEADER_PATHS)
        assert pages(silent_site) == ["/x"]
        assert received(crawler) == [header_site.url("/yes")]
        assert stat(crawler, "robotstxt/usage/dropped/unknown") == 3
        assert stat(crawler, "robotstxt/usage/dropped/header") == 1


@pytest_twisted.ensureDeferred
async def test_with_drop_off_every_page_reaches_the_spider_marked() -> None:
    with servers(2) as (usage_site, header_site):
        usage_site.robots(CONTENT_USAGE_ROBOTS)
        header_only(header_site)
        urls = [usage_site.url(p) for p in CONTENT_USAGE_PATHS] + [
            header_site.url(p) for p in HEADER_PATHS
        ]
        settings = rerp(RERP_USAGE="train-ai", RERP_USAGE_DROP=False)
        crawler = await crawl(MarkingSpider, settings, urls=urls)
        # Only robots.txt's Disallow keeps a page away.
        assert pages(usage_site) == ["/ai-ok/deeper/page", "/ai-ok/test", "/test"]
        assert len(received(crawler)) == 3 + len(HEADER_PATHS)
        assert usage_of(crawler, usage_site.url("/test")) == {"train-ai": "disallowed"}
        assert usage_of(crawler, header_site.url("/no")) == {"train-ai": "disallowed"}
        decision = crawler.spider.usage[usage_site.url("/test")]["train-ai"]  # type: ignore[attr-defined]
        assert decision == UsageDecision(
            "disallowed", 4, "Content-Usage: train-ai=n", "train-ai disallowed"
        )
        assert stat(crawler, "robotstxt/usage/marked") == 2
        assert stat(crawler, "robotstxt/usage/dropped/robots_txt") is None


@pytest_twisted.ensureDeferred
async def test_without_rerp_usage_nothing_changes(server: Server) -> None:
    server.robots(CONTENT_USAGE_ROBOTS)
    server.route("/h", Reply(body="h", headers={"Content-Usage": "train-ai=n"}))
    urls = [server.url(p) for p in [*CONTENT_USAGE_PATHS, "/h"]]
    crawler = await crawl(MarkingSpider, rerp(), urls=urls)
    assert pages(server) == ["/ai-ok/deeper/page", "/ai-ok/test", "/h", "/test"]
    assert all(usage is None for usage in crawler.spider.usage.values())  # type: ignore[attr-defined]
    assert not [k for k in crawler.stats.get_stats() if k.startswith("robotstxt/usage")]  # type: ignore[union-attr]


@pytest_twisted.ensureDeferred
async def test_a_drop_is_logged_with_the_robots_txt_line(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(CONTENT_USAGE_ROBOTS)
    # robots.txt allows training under /ai-ok/, this page's header does not: the header wins.
    server.route("/ai-ok/h", Reply(body="h", headers={"Content-Usage": "train-ai=n"}))
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    await crawl(
        MarkingSpider,
        rerp(RERP_USAGE="train-ai"),
        urls=[server.url("/test"), server.url("/ai-ok/h")],
    )
    # At DEBUG, one per request; at INFO, one line for them all as the crawl closes.
    drops = sorted(
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("Dropped") and r.levelno == logging.DEBUG
    )
    assert drops == [
        f"Dropped <GET {server.url('/ai-ok/h')}>: train-ai disallowed by the Content-Usage header "
        "(Content-Usage: train-ai=n)",
        f"Dropped <GET {server.url('/test')}>: train-ai disallowed by robots.txt line 4 "
        "(Content-Usage: train-ai=n)",
    ]


@pytest_twisted.ensureDeferred
async def test_legacy_syntaxes_read_the_same_lines(server: Server) -> None:
    server.robots(
        "User-agent: *\nDisallow: /never/\nContent-Usage: train-ai=n\n"
        "Content-Usage: /ai-ok/ train-ai=y\n"
    )
    urls = [server.url(p) for p in CONTENT_USAGE_PATHS]
    await crawl(MarkingSpider, rerp(RERP_USAGE="train-ai", RERP_SYNTAX="gym2008"), urls=urls)
    assert pages(server) == ["/ai-ok/deeper/page", "/ai-ok/test"]


@pytest_twisted.ensureDeferred
async def test_dont_obey_robotstxt_skips_usage_too(server: Server) -> None:
    server.robots(CONTENT_USAGE_ROBOTS)

    class Unbound(MarkingSpider):
        async def start(self) -> Any:
            yield scrapy.Request(server.url("/test"), meta={"dont_obey_robotstxt": True})

    crawler = await crawl(Unbound, rerp(RERP_USAGE="train-ai"))
    assert pages(server) == ["/test"]
    assert crawler.spider.usage == {server.url("/test"): None}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RERP_USAGE", "training"),
        ("RERP_USAGE", ["train-ai", 3]),
        ("RERP_USAGE_DEFAULT", "maybe"),
        ("RERP_USAGE_DROP", "sometimes"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_bad_usage_setting_stops_the_crawl(
    server: Server, name: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = rerp(**{"RERP_USAGE": "train-ai", name: value})
    crawler = await crawl(settings=settings, urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, name)
    assert server.paths() == []


def test_the_usage_page_examples_run_as_written() -> None:
    """docs/usage.rst's engine session is a doctest: the page shows what the engine answers."""
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "usage.rst"
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3
    assert result.failed == 0
