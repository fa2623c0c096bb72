"""What a user reads at INFO, in real crawls against local servers: one line per origin when a
floor or a cool-down first applies, the usage drops summed up at close, and the closing
summary, whose numbers are the stats' (docs/logging.rst)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from scrapy_rerp.crawl.summary import FIRST_NAMED
from tests.support.crawls import ignored, pages, rerp, stat
from tests.support.servers import ListSpider, Reply, Server, crawl, own

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)


def said(records: list[logging.LogRecord], level: int = logging.INFO) -> list[str]:
    return [r.getMessage() for r in own(records) if r.levelno == level]


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    return caplog


@pytest_twisted.ensureDeferred
async def test_a_crawl_delay_floor_is_one_info_line_however_many_pages(
    log: pytest.LogCaptureFixture,
) -> None:
    with Server(host="127.0.0.2") as site:
        site.robots("User-agent: *\nCrawl-delay: 0.1\n")
        urls = [site.url(f"/p{i}") for i in range(8)]
        crawler = await crawl(ListSpider, rerp(), urls=urls)
    assert len(pages(site)) == 8
    floors = [line for line in said(log.records) if line.startswith("Crawl-delay")]
    assert floors == [
        f"Crawl-delay: at least 0.1 s between requests to {site.origin} "
        "(its robots.txt asks for 0.1 s)"
    ]
    assert stat(crawler, "robotstxt/crawl_delay/floor_applied") == 1
    assert stat(crawler, "robotstxt/crawl_delay/max_floor") == 0.1
    # Nothing of the layer at INFO per page; the floor in the closing summary.
    assert not [line for line in said(log.records) if "/p3" in line]
    assert said(log.records)[-1] == (
        "robots.txt layer: 1 origin, 1 robots.txt download, 0 requests refused, "
        f"{stat(crawler, 'robotstxt/parked')} parked, 0 dropped; 1 Crawl-delay floor"
    )


@pytest_twisted.ensureDeferred
async def test_a_download_delay_above_the_crawl_delay_is_said(
    log: pytest.LogCaptureFixture,
) -> None:
    with Server(host="127.0.0.2") as site:
        site.robots("User-agent: *\nCrawl-delay: 0.05\n")
        await crawl(ListSpider, rerp(DOWNLOAD_DELAY=0.1), urls=[site.url("/a"), site.url("/b")])
    assert [line for line in said(log.records) if line.startswith("Crawl-delay")] == [
        f"Crawl-delay: at least 0.1 s between requests to {site.origin} "
        "(its robots.txt asks for 0.05 s, DOWNLOAD_DELAY = 0.1 s)"
    ]


@pytest_twisted.ensureDeferred
async def test_an_origin_s_cool_downs_are_one_info_line(log: pytest.LogCaptureFixture) -> None:
    slow_once = [Reply(status=429, headers={"Retry-After": "1"}), Reply(body="ok")]
    with Server(host="127.0.0.2") as site:
        site.robots("User-agent: *\nAllow: /\n")
        site.route("/p0", slow_once)
        site.route("/p3", slow_once)
        settings = {
            "ADDONS": {"scrapy_rerp.Addon": 100},
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "DOWNLOAD_DELAY": 0.1,
            "RETRY_ENABLED": True,
        }
        crawler = await crawl(ListSpider, settings, urls=[site.url(f"/p{i}") for i in range(5)])
    assert len([h for h in site.hits() if h.status == 429]) == 2
    assert stat(crawler, "robotstxt/slowdown/cooldowns") == 2
    slow = [line for line in said(log.records) if line.startswith("Slow down")]
    assert len(slow) == 1 and slow[0].startswith(f"Slow down: {site.origin} answered 429")
    assert slow[0].endswith("(1 s)")
    later = [line for line in said(log.records, logging.DEBUG) if line.startswith("Slow down")]
    assert len(later) == 1  # the second cool-down, at DEBUG
    waited = stat(crawler, "robotstxt/slowdown/seconds_waited")
    assert waited == round(waited, 3) and waited > 0  # to the millisecond
    closing = said(log.records)[-1]
    assert closing.endswith(f"2 cool-downs ({waited:.3g} s waited)")


@pytest_twisted.ensureDeferred
async def test_usage_drops_are_summed_up_at_close_with_the_first_few_named(
    server: Server, log: pytest.LogCaptureFixture
) -> None:
    server.robots("User-agent: *\nAllow: /\nDisallow: /private/\nContent-Usage: /no/ train-ai=n\n")
    server.route("/h", Reply(body="h", headers={"Content-Usage": "train-ai=n"}))
    dropped = [server.url(f"/no/{i}") for i in range(20)]
    refused = [server.url(f"/private/{i}") for i in range(3)]
    urls = [*dropped, *refused, server.url("/ok"), server.url("/h")]
    crawler = await crawl(ListSpider, rerp(RERP_USAGE="train-ai"), urls=urls)
    assert pages(server) == ["/h", "/ok"]
    assert ignored(crawler) == sorted([*dropped, *refused, server.url("/h")])
    infos = said(log.records)
    assert not [line for line in infos if line.startswith("Dropped")]  # none per request
    debug = [line for line in said(log.records, logging.DEBUG) if line.startswith("Dropped")]
    assert len(debug) == 21
    [usage] = [line for line in infos if line.startswith("RERP_USAGE dropped")]
    # The first few named, in the order they were dropped (their DEBUG lines').
    first = [line.split(">")[0].removeprefix("Dropped <GET ") for line in debug if "/no/" in line]
    named = ", ".join(first[:FIRST_NAMED])
    by_robots = f"20 by robots.txt ({named}, and {20 - FIRST_NAMED} more)"
    by_header = f"1 by their Content-Usage header ({server.url('/h')})"
    assert usage in (
        f"RERP_USAGE dropped 21 requests: {by_robots}; {by_header}",
        f"RERP_USAGE dropped 21 requests: {by_header}; {by_robots}",
    )
    # The closing summary, last, its numbers the stats'.
    assert stat(crawler, "robotstxt/usage/dropped/robots_txt") == 20
    assert stat(crawler, "robotstxt/usage/dropped/header") == 1
    parked = stat(crawler, "robotstxt/parked")
    assert infos[-1] == (
        "robots.txt layer: 1 origin, 1 robots.txt download, 3 requests refused, "
        f"{parked} parked, 21 dropped"
    )
    assert stat(crawler, "robotstxt/response_count") == 1
    assert stat(crawler, "robotstxt/forbidden") == 3


@pytest_twisted.ensureDeferred
async def test_the_closing_summary_counts_the_requests_dropped_waiting(
    log: pytest.LogCaptureFixture, make_server: Any
) -> None:
    site = make_server()
    site.route("/robots.txt", Reply(status=503))
    crawler = await crawl(
        ListSpider,
        rerp(
            RERP_RETRY_BACKOFF_BASE=0.1, RERP_RETRY_BACKOFF_MAX=0.1, RERP_UNREACHABLE_MAX_WAIT=0.3
        ),
        urls=[site.url("/a"), site.url("/b")],
    )
    assert stat(crawler, "robotstxt/dropped/unreachable") == 2
    downloads = stat(crawler, "robotstxt/response_count")  # each answered 503
    assert downloads == len([h for h in site.hits() if h.path == "/robots.txt"]) >= 2
    assert said(log.records)[-1] == (
        f"robots.txt layer: 1 origin, {downloads} robots.txt downloads, 0 requests refused, "
        "2 parked, "
        "2 dropped"
    )


def test_the_logging_page_says_how_many_drops_are_named() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "logging.rst").read_text("utf-8")
    assert f"first {FIRST_NAMED} of each reason named" in " ".join(page.split())
