"""RobotsTxtMiddleware in real crawls against local servers: what the servers received."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.test import get_crawler

from scrapy_rerp.cache import RobotsEntry
from scrapy_rerp.crawl.compat import sleep
from scrapy_rerp.crawl.middleware import AnswersMiddleware
from scrapy_rerp.crawl.robotparser import RerpRobotParser
from tests.support.crawls import (
    FAST_OUTAGE,
    RERP_MW,
    SCRAPY_MW,
    ignored,
    pages,
    rerp,
    stat,
    timed_crawl,
)
from tests.support.servers import (
    BASE_SETTINGS,
    ListSpider,
    Reply,
    Server,
    crawl,
    ledger,
    own,
    stopped_by_settings,
    urlset,
)

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

# -- the basics ---------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_disallowed_urls_never_reach_the_server(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private\n")
    urls = [server.url("/a"), server.url("/private/b"), server.url("/private"), server.url("/c")]
    crawler = await crawl(settings=rerp(), urls=urls)
    assert pages(server) == ["/a", "/c"]
    assert server.paths()[0] == "/robots.txt"
    assert ignored(crawler) == sorted(urls[1:3])
    assert stat(crawler, "robotstxt/forbidden") == 2
    assert stat(crawler, "robotstxt/request_count") == 1
    assert stat(crawler, "robotstxt/response_count") == 1
    assert stat(crawler, "robotstxt/response_status_count/200") == 1


@pytest_twisted.ensureDeferred
async def test_one_download_per_origin_under_500_concurrent_requests(
    make_server: Any,
) -> None:
    sites = [make_server() for _ in range(3)]
    for site in sites:
        # Slow, so that every request arrives while the download is in flight.
        site.robots("User-agent: *\nDisallow: /no\n", delay=0.3)
    urls = [
        sites[i % 3].url(f"/{'no' if i % 10 == 0 else 'yes'}/{i}", host=host)
        for i in range(500)
        for host in [("127.0.0.1", "localhost")[i % 2]]
    ]
    crawler = await crawl(
        settings=rerp(CONCURRENT_REQUESTS=500, CONCURRENT_REQUESTS_PER_DOMAIN=500), urls=urls
    )
    for site in sites:
        robots = site.hits("/robots.txt")
        # 127.0.0.1:port and localhost:port are two origins of the same server.
        assert sorted(h.header("Host") for h in robots) == sorted(
            [f"127.0.0.1:{site.port}", f"localhost:{site.port}"]
        )
        # Each origin's robots.txt went before that origin's first page. (Per origin: under
        # load, localhost, resolved in Scrapy's resolver threads, may send its robots.txt after
        # the 127.0.0.1 origin's pages have started.)
        for origin_robots in robots:
            host = origin_robots.header("Host")
            first_page = min(
                h.time for h in site.hits() if h.path != "/robots.txt" and h.header("Host") == host
            )
            assert origin_robots.time < first_page
        assert not [p for p in site.paths() if p.startswith("/no/")]
    assert stat(crawler, "robotstxt/request_count") == 6
    assert len(crawler.spider.responses) == 450  # type: ignore[union-attr]
    assert len(ignored(crawler)) == 50


@pytest_twisted.ensureDeferred
async def test_origins_are_scheme_host_and_port(make_server: Any) -> None:
    a, b = make_server(), make_server()
    a.robots("User-agent: *\nDisallow: /\n")
    b.robots("")
    urls = [a.url("/x"), b.url("/x"), b.url("/x", host="localhost"), a.url("/x", host="localhost")]
    crawler = await crawl(settings=rerp(), urls=urls)
    assert pages(a) == []
    assert pages(b) == ["/x", "/x"]
    assert a.count("/robots.txt") == 2 and b.count("/robots.txt") == 2
    assert stat(crawler, "robotstxt/forbidden") == 2


@pytest_twisted.ensureDeferred
async def test_user_agent_robotstxt_user_agent_and_request_header(server: Server) -> None:
    server.robots("User-agent: mybot\nDisallow: /\n")
    urls = [server.url("/a")]
    assert ignored(await crawl(settings=rerp(ROBOTSTXT_USER_AGENT="MyBot"), urls=urls)) == urls
    assert ignored(await crawl(settings=rerp(USER_AGENT="MyBot/1.0 (+x)"), urls=urls)) == urls
    assert ignored(await crawl(settings=rerp(USER_AGENT="other/1.0"), urls=urls)) == []
    assert server.paths().count("/a") == 1


class MetaSpider(ListSpider):
    name = "meta"

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(
                url,
                callback=self.parse,
                errback=self.errback,
                meta={"dont_obey_robotstxt": "/free" in url},
            )
        yield scrapy.Request("data:,hello", callback=self.parse)


@pytest_twisted.ensureDeferred
async def test_dont_obey_robotstxt_and_data_urls_are_skipped(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /\n")
    crawler = await crawl(MetaSpider, rerp(), urls=[server.url("/free"), server.url("/x")])
    assert pages(server) == ["/free"]
    assert "data:,hello" in crawler.spider.responses  # type: ignore[union-attr]
    assert server.count("/robots.txt") == 1


@pytest_twisted.ensureDeferred
async def test_blocked_request_logged_with_the_line(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots("User-agent: *\n# comment\nDisallow: /private\n")
    with caplog.at_level(logging.DEBUG, logger="scrapy_rerp.robotstxt"):
        await crawl(settings=rerp(), urls=[server.url("/private/1")])
    [message] = [r.getMessage() for r in caplog.records if "Forbidden by robots.txt" in r.message]
    assert "/private/1" in message
    assert "line 3" in message and "Disallow: /private" in message


@pytest.mark.skipif(
    not hasattr(signals, "robots_parsed"), reason="Scrapy < 2.18 has no robots_parsed signal"
)
@pytest_twisted.ensureDeferred
async def test_robots_parsed_signal_before_waiting_requests_resume(server: Server) -> None:
    server.robots("User-agent: *\nCrawl-delay: 3\nSitemap: /sitemap.xml\n")
    received: list[tuple[Any, str, int]] = []

    class SignalSpider(ListSpider):
        name = "signal"

        @classmethod
        def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SignalSpider:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
            return spider

        async def robots_parsed(self, robotparser: Any, request: scrapy.Request) -> None:
            await sleep(0.2)  # async handlers are awaited before the requests go on
            received.append((robotparser, request.url, len(pages(server))))

    urls = [server.url("/a"), server.url("/b")]
    await crawl(SignalSpider, rerp(RERP_CRAWL_DELAY=False), urls=urls)
    [(parser, url, pages_before)] = received
    assert isinstance(parser, RerpRobotParser)
    assert parser.crawl_delay("bot") == 3.0 and parser.sitemaps() == ["/sitemap.xml"]
    assert url in urls
    assert pages_before == 0
    assert pages(server) == ["/a", "/b"]


# -- status policy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "syntax", "allowed"),
    [
        (404, "rfc9309", True),
        (410, "rfc9309", True),
        (401, "rfc9309", True),
        (403, "rfc9309", True),
        (404, "mk1996", True),
        (401, "mk1996", False),
        (403, "gym2008", False),
    ],
)
@pytest_twisted.ensureDeferred
async def test_4xx(server: Server, status: int, syntax: str, allowed: bool) -> None:
    # The error page's body must never be read as rules.
    server.robots("User-agent: *\nDisallow: /\n", status=status)
    crawler = await crawl(settings=rerp(RERP_SYNTAX=syntax), urls=[server.url("/a")])
    assert pages(server) == (["/a"] if allowed else [])
    assert server.count("/robots.txt") == 1
    assert stat(crawler, f"robotstxt/response_status_count/{status}") == 1
    if allowed:
        assert stat(crawler, "robotstxt/allow_all") == 1
    else:
        assert stat(crawler, f"robotstxt/disallow_all/{status}") == 1


@pytest.mark.parametrize("status", [500, 503, 429])
@pytest_twisted.ensureDeferred
async def test_unreachable_holds_then_drops(
    server: Server, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    # The body says "allow all"; a 5xx/429 must not be read as rules.
    server.robots("User-agent: *\nAllow: /\n", status=status)
    urls = [server.url(f"/p{i}") for i in range(10)]
    started = time.monotonic()
    crawler = await crawl(settings=rerp(**FAST_OUTAGE), urls=urls)
    warnings = [r for r in own(caplog.records) if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        f"Dropping 10 requests: robots.txt of {server.origin} unreachable for more than 0.6 s"
        f" (last: HTTP {status})"
    ]
    assert time.monotonic() - started >= 0.6
    assert pages(server) == []
    # The spider's errback sees each drop, as before parking existed.
    assert ignored(crawler) == sorted(urls)
    assert ledger(crawler) == {"parked": 10, "released": 0, "dropped/unreachable": 10}
    robots = server.hits("/robots.txt")
    assert 2 <= len(robots) <= 6  # retried with backoff, not hammered
    assert stat(crawler, "robotstxt/retry_count") == len(robots) - 1


class RefuseRobots:
    """Another downloader middleware that will not let robots.txt requests through."""

    def process_request(self, request: scrapy.Request, spider: Any = None) -> None:
        if request.url.endswith("/robots.txt"):
            raise IgnoreRequest("no robots here")


@pytest_twisted.ensureDeferred
async def test_robots_request_refused_by_another_middleware_allows_all(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots("User-agent: *\nDisallow: /\n")
    middlewares = {SCRAPY_MW: None, RERP_MW: 100, f"{__name__}.RefuseRobots": 110}
    crawler = await crawl(
        settings=rerp(DOWNLOADER_MIDDLEWARES=middlewares), urls=[server.url("/a")]
    )
    assert server.paths() == ["/a"]
    assert stat(crawler, "robotstxt/ignored") == 1
    assert any("allowing all" in r.getMessage() for r in caplog.records)


@pytest_twisted.ensureDeferred
async def test_network_error_is_unreachable(server: Server) -> None:
    server.route("/robots.txt", Reply.error())
    crawler = await crawl(settings=rerp(**FAST_OUTAGE), urls=[server.url("/a")])
    assert pages(server) == []
    assert ledger(crawler) == {"parked": 1, "released": 0, "dropped/unreachable": 1}
    assert any(k.startswith("robotstxt/exception_count/") for k in crawler.stats.get_stats())  # type: ignore[union-attr]


@pytest_twisted.ensureDeferred
async def test_an_unreachable_robots_txt_is_logged_with_its_cause_in_a_few_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}/a"
    with caplog.at_level(logging.WARNING, logger="scrapy_rerp"):
        await crawl(settings=rerp(**FAST_OUTAGE), urls=[url])
    said = [r.getMessage() for r in own(caplog.records) if r.levelno == logging.WARNING]
    assert said == [
        f"Dropping 1 request: robots.txt of http://127.0.0.1:{port} unreachable for more"
        " than 0.6 s (last: connection refused)"
    ]


@pytest_twisted.ensureDeferred
async def test_held_requests_resume_when_a_retry_succeeds(server: Server) -> None:
    server.route(
        "/robots.txt",
        [Reply(status=503), Reply(status=502), Reply(body="User-agent: *\nDisallow: /no\n")],
    )
    urls = [server.url("/yes"), server.url("/no")]
    crawler = await crawl(
        settings=rerp(**{**FAST_OUTAGE, "RERP_UNREACHABLE_MAX_WAIT": 5}), urls=urls
    )
    robots = server.hits("/robots.txt")
    assert [h.status for h in robots] == [503, 502, 200]
    assert pages(server) == ["/yes"]
    assert server.hits("/yes")[0].time > robots[-1].time
    assert ignored(crawler) == [server.url("/no")]
    assert ledger(crawler) == {"parked": 2, "released": 2}


@pytest_twisted.ensureDeferred
async def test_retry_after_is_honoured_beyond_the_backoff_cap(server: Server) -> None:
    # The README promises "never sooner than Retry-After": the server's wish wins over
    # RERP_RETRY_BACKOFF_MAX, which caps only the exponential backoff.
    server.route(
        "/robots.txt",
        [Reply(status=503, headers={"Retry-After": "1"}), Reply(body="")],
    )
    settings = rerp(RERP_RETRY_BACKOFF_BASE=0.05, RERP_RETRY_BACKOFF_MAX=0.2)
    await crawl(settings=settings, urls=[server.url("/a")])
    first, second = server.hits("/robots.txt")
    assert second.time - first.time >= 0.9
    assert pages(server) == ["/a"]


# -- redirects ----------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_redirect_to_another_host_outside_allowed_domains(make_server: Any) -> None:
    site, cdn = make_server(), make_server()
    site.route("/robots.txt", Reply.redirect(cdn.url("/rules.txt", host="localhost")))
    cdn.route("/rules.txt", Reply(body="User-agent: *\nDisallow: /private\n"))
    crawler = await crawl(
        settings=rerp(),
        urls=[site.url("/public"), site.url("/private")],
        allowed_domains=["127.0.0.1"],
    )
    assert cdn.paths() == ["/rules.txt"]
    assert pages(site) == ["/public"]
    assert stat(crawler, "offsite/filtered") is None
    assert stat(crawler, "robotstxt/redirect/count") == 1


@pytest.mark.parametrize(("hops", "followed"), [(5, True), (6, False)])
@pytest_twisted.ensureDeferred
async def test_redirect_limit(server: Server, hops: int, followed: bool) -> None:
    server.route("/robots.txt", Reply.redirect("/r1", status=302))
    for i in range(1, hops):
        server.route(f"/r{i}", Reply.redirect(f"/r{i + 1}", status=307))
    server.route(f"/r{hops}", Reply(body="User-agent: *\nDisallow: /private\n"))
    crawler = await crawl(settings=rerp(), urls=[server.url("/private")])
    assert server.count("/private") == (0 if followed else 1)
    assert server.count(f"/r{hops}") == (1 if followed else 0)
    if not followed:
        assert stat(crawler, "robotstxt/redirect/limit") == 1


# -- body ---------------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_size_cap_truncates_without_downloading_the_rest(server: Server) -> None:
    body = (
        b"User-agent: *\nDisallow: /early\n" + b"# padding\n" * (800 * 1024) + b"Disallow: /late\n"
    )
    server.robots(body, chunk_size=64 * 1024, chunk_delay=0.002)
    settings = rerp(RERP_MAX_SIZE=64 * 1024)
    crawler = await crawl(settings=settings, urls=[server.url("/early"), server.url("/late")])
    assert pages(server) == ["/late"]
    [hit] = server.hits("/robots.txt")
    assert not hit.completed
    assert hit.bytes_sent < len(body) // 2
    assert stat(crawler, "robotstxt/truncated") == 1


@pytest_twisted.ensureDeferred
async def test_default_cap_is_500_kib(server: Server) -> None:
    padding = b"#" * 1000 + b"\n"
    body = (
        b"User-agent: *\n"
        + padding * 400
        + b"Disallow: /in\n"
        + padding * 200
        + b"Disallow: /out\n"
    )
    server.robots(body)
    await crawl(settings=rerp(), urls=[server.url("/in"), server.url("/out")])
    assert pages(server) == ["/out"]


@pytest_twisted.ensureDeferred
async def test_charset_from_content_type(make_server: Any) -> None:
    latin, default = make_server(), make_server()
    rules = "User-agent: *\nDisallow: /caf\xe9\n".encode("iso-8859-1")
    latin.robots(rules, content_type="text/plain; charset=ISO-8859-1")
    default.robots(rules + b"\xff\xfe garbage \x80\n")  # not UTF-8: must not crash
    urls = [latin.url("/caf%C3%A9"), default.url("/caf%C3%A9"), default.url("/ok")]
    crawler = await crawl(settings=rerp(), urls=urls)
    assert pages(latin) == []
    assert pages(default) == ["/caf%C3%A9", "/ok"]
    assert stat(crawler, "robotstxt/forbidden") == 1


@pytest_twisted.ensureDeferred
async def test_legacy_syntax_defaults_to_iso_8859_1(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /caf\xe9\n".encode("iso-8859-1"))
    await crawl(settings=rerp(RERP_SYNTAX="gym2008"), urls=[server.url("/caf%C3%A9")])
    assert pages(server) == []


# -- expiry and the cache -----------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_expiry_refetch_while_old_rules_serve(server: Server) -> None:
    server.route(
        "/robots.txt",
        [
            Reply(body="User-agent: *\nDisallow: /x\n", headers={"Cache-Control": "max-age=1"}),
            Reply(body="User-agent: *\nDisallow: /y\n", delay=0.3),
        ],
    )
    steps = [
        (0, server.url("/x?1")),  # first rules
        (1.3, server.url("/x?2")),  # expired: refetch starts, old rules decide
        (0.8, server.url("/x?3")),  # new rules
        (0, server.url("/y?3")),
    ]
    crawler = await timed_crawl(rerp(RERP_MIN_LIFETIME=0), steps)
    assert server.count("/robots.txt") == 2
    assert pages(server) == ["/x?3"]
    assert stat(crawler, "robotstxt/refresh_count") == 1


@pytest_twisted.ensureDeferred
async def test_expires_header_and_lifetime_bounds(server: Server) -> None:
    server.robots("", headers={"Expires": "Thu, 01 Jan 1970 00:00:00 GMT"})
    steps = [(0, server.url("/a")), (0.7, server.url("/b"))]
    # Already expired by Expires, raised to RERP_MIN_LIFETIME (0.5 s): one refetch.
    await timed_crawl(rerp(RERP_MIN_LIFETIME=0.5), steps)
    assert server.count("/robots.txt") == 2


@pytest_twisted.ensureDeferred
async def test_errors_cached_for_error_lifetime(server: Server) -> None:
    server.robots("", status=404, headers={"Cache-Control": "max-age=3600"})
    steps = [(0, server.url("/a")), (0.6, server.url("/b")), (0, server.url("/c"))]
    await timed_crawl(rerp(RERP_ERROR_LIFETIME=0.4), steps)
    assert server.count("/robots.txt") == 2
    assert pages(server) == ["/a", "/b", "/c"]


@pytest_twisted.ensureDeferred
async def test_earlier_copy_keeps_serving_while_unreachable(server: Server) -> None:
    server.route(
        "/robots.txt",
        [
            Reply(body="User-agent: *\nDisallow: /x\n", headers={"Cache-Control": "max-age=0"}),
            Reply(status=503),
        ],
    )
    steps = [(0, server.url("/x?1")), (0.3, server.url("/x?2")), (0.3, server.url("/ok"))]
    crawler = await timed_crawl(rerp(RERP_MIN_LIFETIME=0.1, **FAST_OUTAGE), steps)
    assert pages(server) == ["/ok"]
    assert stat(crawler, "robotstxt/forbidden") == 2
    assert stat(crawler, "robotstxt/unreachable/stale_copy_kept") >= 1
    assert ledger(crawler) == {"parked": 1, "released": 1}  # only the first waited


@pytest_twisted.ensureDeferred
async def test_cache_is_bounded_lru(make_server: Any) -> None:
    a, b, c = make_server(), make_server(), make_server()
    steps = [(0, a.url("/1")), (0.1, b.url("/1")), (0.1, c.url("/1")), (0.1, a.url("/2"))]
    crawler = await timed_crawl(rerp(RERP_CACHE_MAX_ORIGINS=2), steps)
    assert a.count("/robots.txt") == 2  # evicted by c, fetched again
    assert b.count("/robots.txt") == 1 and c.count("/robots.txt") == 1
    assert stat(crawler, "robotstxt/cache/evicted") == 2


class BrokenCache:
    """A cache backend that always fails."""

    def get(self, origin: str) -> RobotsEntry | None:
        raise OSError("cache down")

    def set(self, origin: str, entry: RobotsEntry) -> list[str]:
        raise OSError("cache down")

    def delete(self, origin: str) -> None:
        raise OSError("cache down")

    def __len__(self) -> int:
        return 0


@pytest_twisted.ensureDeferred
async def test_cache_failure_degrades_to_memory(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /no\n")
    urls = [server.url("/yes"), server.url("/no"), server.url("/yes2")]
    crawler = await crawl(
        settings=rerp(RERP_CACHE="tests.crawl.test_middleware.BrokenCache"), urls=urls
    )
    assert pages(server) == ["/yes", "/yes2"]
    assert server.count("/robots.txt") == 1
    assert stat(crawler, "robotstxt/cache/errors") == 1


# -- SitemapSpider ------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_sitemap_spider_robots_url_downloaded_once(server: Server) -> None:
    server.robots(f"User-agent: *\nDisallow: /private\nSitemap: {server.url('/sitemap.xml')}\n")
    server.route("/sitemap.xml", urlset([server.url("/page"), server.url("/private/page")]))
    seen: list[str] = []

    class Sitemaps(scrapy.spiders.SitemapSpider):
        name = "sitemaps"
        sitemap_urls = [server.url("/robots.txt")]

        def parse(self, response: scrapy.http.Response) -> None:
            seen.append(response.url)

    crawler = await crawl(Sitemaps, rerp())
    assert server.count("/robots.txt") == 1
    assert sorted(server.paths()) == ["/page", "/robots.txt", "/sitemap.xml"]
    assert seen == [server.url("/page")]
    assert stat(crawler, "robotstxt/served_to_spider") == 1


@pytest_twisted.ensureDeferred
async def test_schemes_without_robots_txt_are_skipped() -> None:
    crawler = await crawl(settings=rerp(**FAST_OUTAGE), urls=["foo://example.invalid/x"])
    assert ignored(crawler) == []
    assert stat(crawler, "robotstxt/request_count") is None


@pytest.mark.parametrize(
    ("name", "value"), [("RERP_SYNTAX", "google"), ("RERP_UNREACHABLE_MAX_WAIT", -1)]
)
@pytest_twisted.ensureDeferred
async def test_misconfiguration_stops_the_crawl_at_start_up(
    server: Server, name: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = await crawl(settings=rerp(**{name: value}), urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, name)
    assert server.paths() == []


@pytest_twisted.ensureDeferred
async def test_sitemap_spider_robots_url_after_a_page_downloaded_once(server: Server) -> None:
    server.robots(f"Sitemap: {server.url('/sitemap.xml')}\n")
    server.route("/sitemap.xml", urlset([server.url("/page")]))

    class PageFirst(scrapy.spiders.SitemapSpider):
        name = "page-first"
        sitemap_urls = [server.url("/robots.txt")]

        async def start(self) -> AsyncIterator[scrapy.Request]:
            # A page of the same origin first: it triggers the robots.txt download.
            yield scrapy.Request(server.url("/home"), callback=self.parse)
            await sleep(0.3)
            async for request in super().start():
                yield request

        def parse(self, response: scrapy.http.Response) -> None:
            pass

    crawler = await crawl(PageFirst, rerp())
    assert server.count("/robots.txt") == 1
    assert sorted(server.paths()) == ["/home", "/page", "/robots.txt", "/sitemap.xml"]
    assert stat(crawler, "robotstxt/served_to_spider") == 1


@pytest.mark.parametrize(
    ("reply", "stat_name"),
    [
        (Reply(status=302, content_type=None), "robotstxt/allow_all"),
        (Reply.redirect("mailto:webmaster@example.invalid"), "robotstxt/redirect/invalid"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_unusable_redirect_means_unavailable(
    server: Server, reply: Reply, stat_name: str
) -> None:
    server.route("/robots.txt", reply)
    crawler = await crawl(settings=rerp(), urls=[server.url("/a")])
    assert server.paths() == ["/robots.txt", "/a"]
    assert stat(crawler, stat_name) == 1
    assert stat(crawler, "robotstxt/allow_all") == 1


def test_the_companion_tells_every_download_that_ended_without_an_answer() -> None:
    answers = AnswersMiddleware()
    # The answers are the response_downloaded signal's: heard before the slot's next request.
    assert not hasattr(answers, "process_response")
    request = scrapy.Request("http://a.test/p")
    assert answers.process_exception(request, TimeoutError()) is None  # told nothing yet
    failed: list[scrapy.Request] = []
    answers.tell(failed.append)
    assert answers.process_exception(request, TimeoutError()) is None  # others handle it
    assert failed == [request]


def test_the_companion_is_off_when_robots_txt_is() -> None:
    crawler = get_crawler(settings_dict={**BASE_SETTINGS, "ROBOTSTXT_OBEY": False})
    with pytest.raises(NotConfigured):
        AnswersMiddleware.from_crawler(crawler)
