"""robots.txt downloads as the crawl makes them (the transport): what a site answers is never the
crawl's exception, any answer is an outcome downloaded once, and the requests other download
plugins see."""

from __future__ import annotations

import gzip
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.utils.test import get_crawler

from scrapy_rerp.core.body import charset_from_content_type, usable_charset
from scrapy_rerp.core.settings import ROBOTSTXT_REQUEST_META_KEYS, RerpSettings
from scrapy_rerp.crawl.compat import sleep
from scrapy_rerp.crawl.transport import RobotsTxtDownloader
from tests.support.crawls import RERP_MW, SCRAPY_MW, pages, rerp, stat, timed_crawl
from tests.support.servers import TEST_REACTOR, ListSpider, Reply, Server, crawl, ledger, own

RULES = b"User-agent: *\nDisallow: /private\n"
MIB = 1 << 20


# -- what a site answers is never the crawl's exception ------------------------------------------


def no_errors(records: list[logging.LogRecord]) -> None:
    """Nothing at ERROR or above, and no traceback, in a crawl's log."""
    bad = [r.getMessage() for r in records if r.levelno >= logging.ERROR or r.exc_info]
    assert bad == [], bad


def spaced(server: Server, paths: list[str]) -> list[tuple[float, str]]:
    """TimedSpider steps: the paths 0.2 s apart, so later ones find the origin's outcome cached."""
    return [(0.0 if i == 0 else 0.2, server.url(p)) for i, p in enumerate(paths)]


@pytest.mark.parametrize(
    "location",
    [
        "file://{file}",
        "data:text/plain,User-agent:%20*%0ADisallow:%20/",
        "ftp://127.0.0.1:1/robots.txt",
        "javascript:alert(1)",
        "http://[::1",
        "http://127.0.0.1:99999/robots.txt",
        "https://:80/robots.txt",
    ],
)
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_redirect_that_cannot_be_followed_is_unavailable(
    server: Server, location: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A local file that would forbid everything if it were read as the site's rules.
    rules = tmp_path / "robots.txt"
    rules.write_text("User-agent: *\nDisallow: /\n")
    server.route("/robots.txt", Reply.redirect(location.format(file=rules)))
    caplog.set_level(logging.INFO)
    crawler = await timed_crawl(rerp(), spaced(server, ["/a", "/b", "/c"]))
    assert server.paths() == ["/robots.txt", "/a", "/b", "/c"]  # allowed, downloaded once
    assert stat(crawler, "robotstxt/redirect/invalid") == 1
    assert stat(crawler, "robotstxt/allow_all") == 1
    assert stat(crawler, "robotstxt/redirect/count") is None
    [line] = [r.getMessage() for r in caplog.records if "cannot be followed" in r.getMessage()]
    assert server.origin in line
    no_errors(caplog.records)


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_redirect_with_credentials_is_a_failed_redirect_and_keeps_them_secret(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # Followed, it would forbid everything (and a failed download would be retried).
    server.route("/elsewhere.txt", Reply(body="User-agent: *\nDisallow: /\n"))
    server.route("/robots.txt", Reply.redirect(f"http://user:s3cret@{server.netloc}/elsewhere.txt"))
    caplog.set_level(logging.DEBUG)
    crawler = await timed_crawl(rerp(), spaced(server, ["/a", "/b", "/c"]))
    assert server.paths() == ["/robots.txt", "/a", "/b", "/c"]  # allow all, downloaded once
    assert stat(crawler, "robotstxt/redirect/invalid") == 1
    assert stat(crawler, "robotstxt/allow_all") == 1
    assert stat(crawler, "robotstxt/redirect/count") is None
    [line] = [r.getMessage() for r in caplog.records if "cannot be followed" in r.getMessage()]
    assert f"http://***@{server.netloc}/elsewhere.txt" in line
    assert "credentials are not followed" in line
    assert not [r.getMessage() for r in caplog.records if "s3cret" in r.getMessage()]
    assert crawler.stats is not None
    assert "s3cret" not in repr(crawler.stats.get_stats())
    no_errors(caplog.records)


@pytest.mark.parametrize("codec", ["idna", "punycode"])
def test_a_codec_of_domain_names_is_no_charset(codec: str) -> None:
    # Python 3.13's punycode decodes any bytes, with replacement characters, into nonsense.
    assert usable_charset(RULES, codec) == (
        "utf-8",
        f"charset {codec!r} cannot decode the body (no robots.txt is written in it); read as UTF-8",
    )


@pytest.mark.parametrize("name", ["no-such-charset", "utf\x008", "\x00", "base64"])
def test_a_name_that_is_no_text_codec_is_no_charset(name: str) -> None:
    assert charset_from_content_type(f"text/plain; charset={name}") is None
    assert charset_from_content_type(f"text/plain; charset={name}".encode()) is None


# A NUL in the name: codecs.lookup raises ValueError, not LookupError. Without a reactor Scrapy
# downloads with aiohttp, which refuses a NUL in a header: robots.txt is unreachable there.
UNKNOWN_CHARSETS = ["no-such-charset", *(["utf\x008"] if TEST_REACTOR != "none" else [])]


@pytest.mark.parametrize("charset", ["idna", "punycode", "undefined", *UNKNOWN_CHARSETS])
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_an_unusable_charset_is_read_as_utf8(
    server: Server, charset: str, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(
        "User-agent: *\nDisallow: /caf\xe9\nDisallow: /\xff\n".encode(),
        content_type=f"text/plain; charset={charset}",
    )
    crawler = await timed_crawl(rerp(), spaced(server, ["/caf%C3%A9", "/ok", "/caf%C3%A9"]))
    assert server.paths() == ["/robots.txt", "/ok"]
    if charset not in UNKNOWN_CHARSETS:  # an unknown name is no charset at all: UTF-8, quietly
        assert stat(crawler, "robotstxt/charset_replaced") == 1
        [warning] = [r for r in own(caplog.records) if r.levelno == logging.WARNING]
        assert f"charset {charset!r} cannot decode the body" in warning.getMessage()
    no_errors(caplog.records)


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_punycode_is_no_charset_even_for_ascii_text(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # punycode "decodes" ASCII without an error, into other characters: the rules would be lost.
    server.robots(
        b"User-agent: *\nDisallow: /private\n", content_type="text/plain; charset=punycode"
    )
    crawler = await timed_crawl(rerp(), spaced(server, ["/private/x", "/ok"]))
    assert server.paths() == ["/robots.txt", "/ok"]
    assert stat(crawler, "robotstxt/charset_replaced") == 1
    no_errors(caplog.records)


@pytest_twisted.ensureDeferred
async def test_a_content_length_over_download_maxsize_is_read_up_to_the_cap(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # 2 MiB announced and sent; Scrapy's DOWNLOAD_MAXSIZE (1 MiB) would cancel it from its
    # Content-Length, and the origin would count as unreachable.
    body = b"User-agent: *\nDisallow: /early\n" + b"#" * (2 * MIB) + b"\nDisallow: /late\n"
    server.robots(body, chunk_size=64 * 1024, chunk_delay=0.002)
    settings = rerp(DOWNLOAD_MAXSIZE=MIB, DOWNLOAD_WARNSIZE=MIB // 2)
    paths = ["/early", "/late", "/x", "/early", "/y"]
    crawler = await timed_crawl(settings, spaced(server, paths))
    assert server.count("/robots.txt") == 1
    assert pages(server) == ["/late", "/x", "/y"]
    [hit] = server.hits("/robots.txt")
    assert not hit.completed and hit.bytes_sent < len(body) // 2  # stopped at the cap
    assert stat(crawler, "robotstxt/truncated") == 1
    no_errors(caplog.records)


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_the_size_cap_holds_on_every_redirect_hop(server: Server) -> None:
    # A redirect whose body never ends: the cap stops it, and the redirect is followed.
    server.route(
        "/robots.txt",
        Reply(
            status=301,
            headers={"Location": "/rules.txt"},
            body=b"#" * (4 * MIB),
            chunk_size=64 * 1024,
            chunk_delay=0.01,
        ),
    )
    server.route(
        "/rules.txt",
        Reply(body=gzip.compress(RULES + b"#" * (4 * MIB)), headers={"Content-Encoding": "gzip"}),
    )
    crawler = await crawl(
        settings=rerp(RERP_MAX_SIZE=64 * 1024), urls=[server.url("/private/x"), server.url("/ok")]
    )
    [hop] = server.hits("/robots.txt")
    assert not hop.completed and hop.bytes_sent < 2 * MIB
    assert pages(server) == ["/ok", "/rules.txt"]
    assert stat(crawler, "robotstxt/redirect/count") == 1
    assert stat(crawler, "robotstxt/truncated") == 1


# -- fuzz: any status, headers and body -----------------------------------------------------------

STATUSES = [200] * 6 + [204, 206, 301, 302, 303, 307, 308, 400, 401, 403, 404, 410, 418, 429]
STATUSES += [500, 502, 503, 504, 599, 600, 999]
CHARSETS = ["utf-8", "iso-8859-1", "idna", "punycode", "undefined", "utf-16", "base64", "rot13"]
CHARSETS += ['"utf-8"', "", "x-no-such", "utf-8; charset=latin1", "UTF-7"]
LOCATIONS = ["http://[::1", "http://h:99999/", "file:///etc/hostname", "data:,x", "ftp://h/r"]
LOCATIONS += ["/next", "", " ", "javascript:x", "//[bad", "http://\u00e9.example/", "%zz"]
HEADER_VALUES = {
    "Cache-Control": ["max-age=0", "max-age=-1", "max-age=" + "9" * 40, "no-store", "max-age=x"],
    "Expires": ["0", "Thu, 01 Jan 1970 00:00:00 GMT", "garbage", "Fri, 31 Dec 9999 23:59:59 GMT"],
    "Retry-After": ["60", "-1", "x", "9" * 30, "Wed, 21 Oct 2015 07:28:00 GMT"],
    "Content-Encoding": ["gzip", "br", "deflate", "gzip, br", "identity", "bogus", "x-gzip"],
}


def fuzz_body(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return b"User-agent: *\nDisallow: /p1\n"
    if kind == 1:
        return rng.randbytes(rng.randrange(2000))
    if kind == 2:
        return b"<html><body>" + b"User-agent: * Disallow: /" * 50 + b"</body></html>"
    if kind == 3:
        return "User-agent: *\nDisallow: /p1\n".encode("utf-16")
    if kind == 4:
        return b"User-agent: *\nDisallow: /\xff\xfe\x00\n" * rng.randrange(1, 20000)
    return gzip.compress(b"User-agent: *\nDisallow: /p1\n")


def fuzz_reply(rng: random.Random, redirects: bool = True) -> Reply:
    status = rng.choice(STATUSES)
    headers: dict[str, str] = {}
    for name, values in HEADER_VALUES.items():
        if rng.random() < 0.3:
            headers[name] = rng.choice(values)
    if redirects and (300 <= status < 400 or rng.random() < 0.1):
        headers["Location"] = rng.choice(LOCATIONS)
    content_type = None
    if rng.random() < 0.7:
        content_type = f"text/plain; charset={rng.choice(CHARSETS)}"
    body = fuzz_body(rng)
    lie = rng.choice([None] * 8 + [0, len(body) + 100])
    return Reply(
        status=status, body=body, headers=headers, content_type=content_type, content_length=lie
    )


class Waves(ListSpider):
    """Requests ``/p0``, ``/p1``, ``/p2`` of every origin, one wave a second, so that the later
    waves find each origin's outcome cached."""

    name = "waves"

    def __init__(self, origins: list[str] = (), **kwargs: Any) -> None:  # type: ignore[assignment]
        super().__init__(**kwargs)
        self.origins = list(origins)

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for wave in range(3):
            if wave:
                await sleep(1.0)
            for origin in self.origins:
                yield scrapy.Request(
                    f"{origin}/p{wave}", self.parse, errback=self.errback, dont_filter=True
                )


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_any_answer_is_an_outcome_and_downloaded_once(
    make_server: Any, seed: int, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(seed)
    sites = [make_server() for _ in range(30)]
    for site in sites:
        site.route("/robots.txt", fuzz_reply(rng))
        site.route("/next", fuzz_reply(rng, redirects=False))
    settings = rerp(
        # An unreachable origin's requests are dropped at once, and it is not retried within
        # the test: every origin has one robots.txt download for the test's lifetime.
        RERP_UNREACHABLE_MAX_WAIT=0,
        RERP_RETRY_BACKOFF_BASE=60,
        RERP_RETRY_BACKOFF_MAX=60,
        DOWNLOAD_MAXSIZE=200_000,
        DOWNLOAD_FAIL_ON_DATALOSS=rng.random() < 0.5,
    )
    crawler = await crawl(Waves, settings, origins=[site.origin for site in sites])
    no_errors(caplog.records)
    assert [site.count("/robots.txt") for site in sites] == [1] * len(sites)
    spider = crawler.spider
    assert isinstance(spider, Waves)
    assert len(spider.responses) + len(spider.failures) == 3 * len(sites)  # none lost
    ledger(crawler)


# -- robots.txt requests, as other download plugins see them -------------------------------------


@pytest.mark.parametrize(
    ("url", "maxsize"), [("http://h/robots.txt", 0), ("ftp://h/robots.txt", 2 * MIB)]
)
@pytest.mark.parametrize("project", [{}, {"proxy": None, "api_params": {"timeout": 5}}])
def test_a_robots_txt_request_sets_the_meta_keys_the_setting_may_not_name(
    url: str, maxsize: int, project: dict[str, Any]
) -> None:
    # The keys RERP_ROBOTSTXT_META may not name are those a robots.txt request is made with,
    # beside the project's own.
    crawler = get_crawler(settings_dict={"DOWNLOAD_MAXSIZE": MIB, "RERP_MAX_SIZE": MIB})
    settings = RerpSettings.from_settings(
        {"ROBOTSTXT_OBEY": True, "RERP_ROBOTSTXT_META": project, "RERP_MAX_SIZE": MIB}
    )
    request = RobotsTxtDownloader(crawler, settings)._robots_request(url, "origin")
    assert set(request.meta) - set(project) == ROBOTSTXT_REQUEST_META_KEYS
    assert {key: request.meta[key] for key in project} == project
    assert request.meta["rerp_robots_origin"] == "origin"
    assert request.meta["download_maxsize"] == maxsize  # 0 over HTTP: the cap is the transport's


class RoutingPlugin:
    """Stands in for a download plugin (a proxy middleware, an API in transparent mode): it
    recognises robots.txt requests by their meta and routes requests as their meta says."""

    seen: list[dict[str, Any]] = []

    def process_request(self, request: scrapy.Request, spider: Any = None) -> None:
        meta = request.meta
        if "rerp_robots_origin" in meta:
            RoutingPlugin.seen.append(
                {
                    "origin": meta["rerp_robots_origin"],
                    "dont_obey_robotstxt": meta.get("dont_obey_robotstxt"),
                    "priority": request.priority,
                    "download_slot": meta.get("download_slot"),
                    "params": dict(meta.get("api_params", {})),
                }
            )
            meta["api_params"]["used"] = True  # a plugin may change what it was given
        if "route" in meta:
            request.headers["X-Route"] = meta["route"]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_robots_txt_requests_carry_a_meta_key_and_the_meta_the_project_adds(
    make_server: Any,
) -> None:
    first, second = make_server(), make_server()
    for site in (first, second):
        site.robots("User-agent: *\nDisallow: /private\n")
    RoutingPlugin.seen = []
    middlewares = {SCRAPY_MW: None, RERP_MW: 100, f"{__name__}.RoutingPlugin": 750}
    settings = rerp(
        DOWNLOADER_MIDDLEWARES=middlewares,
        RERP_ROBOTSTXT_META={"route": "direct", "api_params": {"timeout": 5}},
    )
    urls = [first.url("/a"), first.url("/private/x"), second.url("/b")]
    await crawl(settings=settings, urls=urls)
    assert sorted(RoutingPlugin.seen, key=lambda s: s["origin"]) == sorted(
        (
            {
                "origin": site.origin,
                "dont_obey_robotstxt": True,
                "priority": 1000,
                "download_slot": None,  # the default slot of its host, as the pages have
                "params": {"timeout": 5},  # each request its own copy
            }
            for site in (first, second)
        ),
        key=lambda s: s["origin"],
    )
    for site in (first, second):
        [robots] = site.hits("/robots.txt")
        assert robots.header("X-Route") == "direct"
        assert all(hit.header("X-Route") is None for hit in site.hits() if hit is not robots)
    assert pages(first) == ["/a"] and pages(second) == ["/b"]
