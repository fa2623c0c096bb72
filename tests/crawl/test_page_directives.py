"""A page's own robots directives (X-Robots-Tag, robots meta tags) in real crawls against local
servers: which links were followed (what each server received) and which items were exported."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapy_rerp import PageDirectivesMiddleware
from scrapy_rerp.engine import TdmRepDecision, page_directives
from tests.support.crawls import pages, stat
from tests.support.pages import (
    MYBOT,
    USAGE_PAGES,
    FollowSpider,
    addon,
    exported,
    feed,
    html,
    kept,
    links,
    page,
    png,
    robots_meta,
)
from tests.support.servers import (
    TEST_REACTOR,
    ListSpider,
    Reply,
    Server,
    crawl,
    stopped_by_settings,
)

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

#: One origin per way of saying nofollow, each page linking to two pages of its own origin.
NOFOLLOW_SITES: dict[str, Reply] = {
    "header": page(body=links("/a", "/b"), headers={"X-Robots-Tag": "nofollow"}),
    "meta": page(robots_meta("robots", "noindex, nofollow"), links("/a", "/b")),
    "own-name": page(robots_meta("mybot", "nofollow"), links("/a", "/b")),
    "other-name": page(robots_meta("otherbot", "nofollow"), links("/a", "/b")),
    "none": page(body=links("/a", "/b"), headers={"X-Robots-Tag": "mybot: none"}),
    "nothing": page(robots_meta("robots", "index, follow"), links("/a", "/b")),
}


@pytest.fixture(scope="module")
def sites() -> Iterator[dict[str, Server]]:
    """One server per case on its own host (127.0.0.2 and on): separate origins."""
    started = {
        name: Server(host=f"127.0.0.{n}").start() for n, name in enumerate(NOFOLLOW_SITES, 2)
    }
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def nofollow_sites(sites: dict[str, Server]) -> dict[str, Server]:
    for name, server in sites.items():
        server.clear()
        server.robots("User-agent: *\nAllow: /\n")
        server.route("/", NOFOLLOW_SITES[name])
    return sites


def followed(sites: dict[str, Server]) -> dict[str, list[str]]:
    return {name: pages(server) for name, server in sites.items()}


async def crawl_sites(
    sites: dict[str, Server], tmp_path: Path, **settings: Any
) -> tuple[Crawler, dict[str, list[str]]]:
    urls = [server.url("/") for server in sites.values()]
    crawler = await crawl(
        FollowSpider, addon(**feed(tmp_path, USER_AGENT=MYBOT, **settings)), urls=urls
    )
    return crawler, followed(sites)


ALL_FOLLOWED = ["/", "/a", "/b"]


@pytest_twisted.ensureDeferred
async def test_nofollow_by_header_meta_or_the_crawlers_own_name_drops_the_pages_requests(
    nofollow_sites: dict[str, Server], tmp_path: Path
) -> None:
    crawler, hits = await crawl_sites(nofollow_sites, tmp_path)
    assert hits == {
        "header": ["/"],
        "meta": ["/"],
        "own-name": ["/"],
        "other-name": ALL_FOLLOWED,  # another crawler's statements are not this crawler's
        "none": ["/"],
        "nothing": ALL_FOLLOWED,
    }
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == 4 * 2
    assert stat(crawler, "robotstxt/page/restriction/nofollow") == 4
    assert stat(crawler, "robotstxt/page/header_seen") == 2
    assert stat(crawler, "robotstxt/page/meta_seen") == 3  # robots twice, mybot once
    assert stat(crawler, "robotstxt/page/responses") == 6 + 2 * 2
    # Items still pass: one per page received.
    items = sorted(item["url"] for item in exported(tmp_path))
    assert items == sorted(s.url(p) for n, s in nofollow_sites.items() for p in hits[n])
    # The callback saw the directives, each with where it was stated.
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    own, usage = spider.seen[nofollow_sites["own-name"].url("/")]
    assert usage is None  # no RERP_USAGE: no usage decisions
    assert own is not None and own.nofollow and own.agent == "mybot"
    assert [(s.rule.name, s.source) for s in own.statements] == [("nofollow", "meta tag 1 (mybot)")]
    header, _ = spider.seen[nofollow_sites["header"].url("/")]
    assert header is not None
    assert [(s.rule.name, s.source) for s in header.statements] == [
        ("nofollow", "X-Robots-Tag header 1")
    ]
    other, _ = spider.seen[nofollow_sites["other-name"].url("/")]
    assert other is not None and not other.nofollow and other.statements == ()


@pytest.mark.parametrize(
    ("setting", "now_followed"),
    [
        ("RERP_PAGE_HEADER", {"header", "none"}),
        ("RERP_PAGE_META", {"meta", "own-name"}),
        ("RERP_PAGE_NOFOLLOW", {"header", "none", "meta", "own-name"}),
    ],
)
@pytest_twisted.ensureDeferred
async def test_each_setting_off_restores_following(
    nofollow_sites: dict[str, Server], tmp_path: Path, setting: str, now_followed: set[str]
) -> None:
    crawler, hits = await crawl_sites(nofollow_sites, tmp_path, **{setting: False})
    for name, paths in hits.items():
        expected = ALL_FOLLOWED if name in now_followed | {"other-name", "nothing"} else ["/"]
        assert paths == expected, name
    dropped = 2 * (4 - len(now_followed))
    assert (stat(crawler, "robotstxt/page/nofollow_dropped") or 0) == dropped


@pytest_twisted.ensureDeferred
async def test_the_user_agent_robots_txt_is_matched_against_is_the_pages_too(
    nofollow_sites: dict[str, Server], tmp_path: Path
) -> None:
    # ROBOTSTXT_USER_AGENT names the crawler for robots.txt: page directives follow it.
    crawler, hits = await crawl_sites(nofollow_sites, tmp_path, ROBOTSTXT_USER_AGENT="OtherBot")
    assert hits["own-name"] == ALL_FOLLOWED
    assert hits["other-name"] == ["/"]
    assert hits["none"] == ALL_FOLLOWED  # "mybot: none" is not for OtherBot
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == 3 * 2


@pytest_twisted.ensureDeferred
async def test_without_the_middleware_or_obeying_nothing_changes(
    nofollow_sites: dict[str, Server], tmp_path: Path
) -> None:
    off = {"SPIDER_MIDDLEWARES": {PageDirectivesMiddleware: None}}
    crawler, hits = await crawl_sites(nofollow_sites, tmp_path, **off)
    assert all(paths == ALL_FOLLOWED for paths in hits.values())
    assert stat(crawler, "robotstxt/page/responses") is None

    for server in nofollow_sites.values():
        server.clear()
    crawler, hits = await crawl_sites(nofollow_sites, tmp_path, ROBOTSTXT_OBEY=False)
    assert all(paths == ALL_FOLLOWED for paths in hits.values())
    assert stat(crawler, "robotstxt/page/responses") is None


# -- items and purposes ---------------------------------------------------------------------


@pytest.fixture
def usage_site(server: Server) -> Server:
    server.robots("User-agent: *\nAllow: /\n")
    for path, reply in USAGE_PAGES.items():
        server.route(path, reply)
    return server


EVERY_ITEM = [
    ("expired", False),
    ("image.png", False),
    ("noai", False),
    ("noimageai", False),
    ("noimageai", True),
    ("noindex", False),
    ("nosnippet", False),
    ("plain", False),
    ("plain", True),
]


@pytest.mark.parametrize(
    ("purposes", "dropped", "stats"),
    [
        (None, [], {}),
        (
            "search",
            [("expired", False), ("noindex", False)],
            {"noindex": 1, "unavailable_after": 1},
        ),
        (
            "train-ai",
            [("image.png", False), ("noai", False), ("noimageai", True)],
            {"noai": 1, "noimageai": 2},
        ),
        (
            "ai-input",
            [("image.png", False), ("noai", False), ("noimageai", True), ("nosnippet", False)],
            {"noai": 1, "noimageai": 2, "nosnippet": 1},
        ),
    ],
)
@pytest_twisted.ensureDeferred
async def test_items_are_dropped_for_the_purposes_a_page_forbids(
    usage_site: Server,
    tmp_path: Path,
    purposes: str | None,
    dropped: list[tuple[str, bool]],
    stats: dict[str, int],
) -> None:
    urls = [usage_site.url(path) for path in USAGE_PAGES]
    settings = addon(**feed(tmp_path, USER_AGENT=MYBOT, RERP_USAGE=purposes))
    crawler = await crawl(FollowSpider, settings, urls=urls)
    assert pages(usage_site) == sorted(USAGE_PAGES)  # every page is downloaded
    assert kept(tmp_path) == [item for item in EVERY_ITEM if item not in dropped]
    for rule, count in stats.items():
        assert stat(crawler, f"robotstxt/page/items_dropped/{rule}") == count, rule
    assert crawler.stats is not None
    counted = {
        key.rsplit("/", 1)[1]: value
        for key, value in crawler.stats.get_stats().items()
        if key.startswith("robotstxt/page/items_dropped/")
    }
    assert counted == stats


@pytest_twisted.ensureDeferred
async def test_with_drop_off_items_are_kept_and_marked(usage_site: Server, tmp_path: Path) -> None:
    urls = [usage_site.url(path) for path in ("/noindex", "/noimageai", "/plain")]
    settings = addon(
        **feed(tmp_path, USER_AGENT=MYBOT, RERP_USAGE=["search", "train-ai"], RERP_USAGE_DROP=False)
    )
    crawler = await crawl(FollowSpider, settings, urls=urls)
    items = {
        (item["url"].rsplit("/", 1)[1], "image_urls" in item): item for item in exported(tmp_path)
    }
    assert len(items) == 5
    assert items[("noindex", False)]["rerp_page_usage"] == {
        "search": {
            "source": "X-Robots-Tag header 1",
            "statement": "noindex",
            "reason": "search disallowed by X-Robots-Tag header 1: noindex",
        }
    }
    assert items[("noimageai", True)]["rerp_page_usage"] == {
        "train-ai": {
            "source": "meta tag 1 (mybot)",
            "statement": "noimageai",
            "reason": "train-ai disallowed by meta tag 1 (mybot): noimageai",
        }
    }
    for unmarked in (("noimageai", False), ("plain", False), ("plain", True)):
        assert "rerp_page_usage" not in items[unmarked]
    assert stat(crawler, "robotstxt/page/items_marked/noindex") == 1
    assert stat(crawler, "robotstxt/page/items_marked/noimageai") == 1
    assert stat(crawler, "robotstxt/page/items_dropped/noindex") is None
    # response.meta holds the page's decisions for every purpose.
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    directives, usage = spider.seen[usage_site.url("/noindex")]
    assert directives is not None and directives.noindex
    assert {purpose: decision.allowed for purpose, decision in usage.items()} == {
        "search": False,
        "train-ai": True,
    }
    _, usage = spider.seen[usage_site.url("/noimageai")]
    assert all(decision.allowed for decision in usage.values())  # the page's text may be used


@pytest_twisted.ensureDeferred
async def test_the_links_of_a_noindex_page_are_followed(server: Server, tmp_path: Path) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/", page(body=links("/a"), headers={"X-Robots-Tag": "noindex"}))
    settings = addon(**feed(tmp_path, RERP_USAGE="search"))
    crawler = await crawl(FollowSpider, settings, urls=[server.url("/")])
    assert pages(server) == ["/", "/a"]
    assert [item["url"] for item in exported(tmp_path)] == [server.url("/a")]
    assert stat(crawler, "robotstxt/page/items_dropped/noindex") == 1


class Declared(scrapy.Item):
    url = scrapy.Field()
    rerp_page_usage = scrapy.Field()


class Undeclared(scrapy.Item):
    url = scrapy.Field()


@pytest_twisted.ensureDeferred
async def test_an_item_class_is_marked_only_if_it_declares_the_field(
    usage_site: Server, tmp_path: Path
) -> None:
    class Spider(ListSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            yield Declared(url=response.url)
            yield Undeclared(url=response.url)

    settings = addon(**feed(tmp_path, RERP_USAGE="search", RERP_USAGE_DROP=False))
    crawler = await crawl(Spider, settings, urls=[usage_site.url("/noindex")])
    declared, undeclared = sorted(exported(tmp_path), key=len, reverse=True)
    assert declared["rerp_page_usage"]["search"]["source"] == "X-Robots-Tag header 1"
    assert undeclared == {"url": usage_site.url("/noindex")}  # kept as it was
    assert stat(crawler, "robotstxt/page/items_marked/noindex") == 2


# -- rel="nofollow" -------------------------------------------------------------------------

REL_PAGE = page(
    body='<a href="/only-nofollow" rel="nofollow">x</a>'
    '<a href="/also-followed#top" rel="external nofollow">x</a><a href="/also-followed">x</a>'
    '<a href="/plain">x</a><a href="/ugc" rel="ugc">x</a><a href="up" rel="NoFollow">x</a>'
)
#: A page that never says nofollow: not parsed for links by the middleware.
NO_NOFOLLOW_PAGE = page(body='<a href="/p1">x</a><a href="/p2" rel="external">x</a>')


@pytest.mark.parametrize(
    ("strict", "expected"),
    [
        (
            False,
            [
                "/",
                "/also-followed",
                "/only-nofollow",
                "/other",
                "/p1",
                "/p2",
                "/plain",
                "/ugc",
                "/up",
            ],
        ),
        (True, ["/", "/also-followed", "/other", "/p1", "/p2", "/plain", "/ugc"]),
    ],
)
@pytest_twisted.ensureDeferred
async def test_strict_mode_drops_links_given_only_as_rel_nofollow(
    server: Server, tmp_path: Path, strict: bool, expected: list[str]
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/", REL_PAGE)
    server.route("/other", NO_NOFOLLOW_PAGE)
    settings = addon(**feed(tmp_path, RERP_PAGE_STRICT_NOFOLLOW=strict))
    crawler = await crawl(FollowSpider, settings, urls=[server.url("/"), server.url("/other")])
    assert pages(server) == expected
    assert stat(crawler, "robotstxt/page/rel_nofollow_dropped") == (2 if strict else None)


# -- what is not read -----------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_meta_tags_are_read_from_the_head_of_html_responses_only(
    server: Server, tmp_path: Path
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    nofollow = robots_meta("robots", "nofollow")
    server.route("/in-body", page(body=nofollow + links("/a")))
    server.route(
        "/text",
        Reply(body=html(nofollow, links("/b")), content_type="text/plain"),
    )
    server.route(
        "/after-head",
        Reply(body=f"<html><head></head>{nofollow}<body>{links('/c')}", content_type="text/html"),
    )

    class Spider(FollowSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            yield from super().parse(response)
            if response.url.endswith("/text"):  # a text/plain page's links, read by hand
                yield response.follow("/b", callback=self.parse)

    urls = [server.url(p) for p in ("/in-body", "/text", "/after-head")]
    crawler = await crawl(Spider, addon(**feed(tmp_path)), urls=urls)
    # The head's end is where HTML puts it: a meta tag after </head> is still the head's.
    assert pages(server) == ["/a", "/after-head", "/b", "/in-body", "/text"]
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == 1


@pytest_twisted.ensureDeferred
async def test_dont_obey_robotstxt_skips_page_directives(server: Server, tmp_path: Path) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/", page(robots_meta("robots", "nofollow"), links("/a")))
    server.route("/unbound", page(robots_meta("robots", "nofollow"), links("/b")))

    class Spider(FollowSpider):
        async def start(self) -> Any:
            yield scrapy.Request(server.url("/"))
            yield scrapy.Request(server.url("/unbound"), meta={"dont_obey_robotstxt": True})

        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            yield from super().parse(response)
            if response.url.endswith("/"):
                yield response.follow("/c", meta={"dont_obey_robotstxt": True})

    crawler = await crawl(Spider, addon(**feed(tmp_path)))
    assert pages(server) == ["/", "/b", "/c", "/unbound"]
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == 1
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    assert spider.seen[server.url("/unbound")] == (None, None)


@pytest_twisted.ensureDeferred
async def test_drops_and_unreadable_directives_are_logged_and_counted(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route(
        "/",
        page(
            robots_meta("robots", "nofollow, noindex, no-index, no-follow"),
            links("/a"),
            headers={"X-Robots-Tag": "unavailable_after: someday"},
        ),
    )
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    crawler = await crawl(
        FollowSpider, addon(**feed(tmp_path, RERP_USAGE="search")), urls=[server.url("/")]
    )
    page_url, link = server.url("/"), server.url("/a")
    messages = [r.getMessage() for r in caplog.records if r.name == "scrapy_rerp.page"]
    assert sorted(messages) == [
        f"Dropped <GET {link}>: nofollow (meta tag 1 (robots): nofollow) on {page_url}",
        f"Dropped an item from {page_url}: search disallowed by meta tag 1 (robots): noindex",
        f"Page directive of {page_url} not used: X-Robots-Tag header 1: unavailable_after: "
        "cannot read 'someday', ignored",
        f"Page directive of {page_url} not used: meta tag 1 (robots): unknown rule 'no-follow', "
        "ignored",
        f"Page directive of {page_url} not used: meta tag 1 (robots): unknown rule 'no-index', "
        "ignored",
    ]
    assert stat(crawler, "robotstxt/page/warnings/unknown-rule") == 2  # one per rule
    assert stat(crawler, "robotstxt/page/warnings/bad-date") == 1
    assert exported(tmp_path) == []


# -- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RERP_PAGE_HEADER", "sometimes"),
        ("RERP_PAGE_META", 2),
        ("RERP_PAGE_NOFOLLOW", "no"),
        ("RERP_PAGE_STRICT_NOFOLLOW", [True]),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_bad_page_setting_stops_the_crawl(
    server: Server, name: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {"ADDONS": {"scrapy_rerp.Addon": 100}, name: value}
    crawler = await crawl(settings=settings, urls=[server.url("/a")])
    message = stopped_by_settings(crawler, caplog.records, name)
    assert f"{name} = {value!r} is invalid: expected a boolean (True/False)" in message
    assert server.paths() == []


# -- ImagesPipeline -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purposes", "downloaded"),
    [(None, ["/pic-a.png", "/pic-b.png"]), ("train-ai", ["/pic-b.png"])],
)
@pytest_twisted.ensureDeferred
async def test_images_pipeline_downloads_no_image_of_a_noimageai_page_for_training(
    server: Server, tmp_path: Path, purposes: str | None, downloaded: list[str]
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/no-images", page(robots_meta("robots", "noimageai"), '<img src="/pic-a.png">'))
    server.route("/plain", page(body='<img src="/pic-b.png">'))
    for name in ("a", "b"):
        server.route(f"/pic-{name}.png", Reply(body=png(), content_type="image/png"))
    store = tmp_path / "images"
    settings = addon(
        **feed(tmp_path, RERP_USAGE=purposes),
        ITEM_PIPELINES={"scrapy.pipelines.images.ImagesPipeline": 1},
        IMAGES_STORE=str(store),
    )
    urls = [server.url("/no-images"), server.url("/plain")]
    await crawl(FollowSpider, settings, urls=urls)
    assert sorted(p for p in server.paths() if p.endswith(".png")) == downloaded
    assert len(list(store.rglob("*.jpg"))) == len(downloaded)
    stored = sorted(image["url"] for item in exported(tmp_path) for image in item.get("images", []))
    assert stored == [server.url(path) for path in downloaded]


@pytest_twisted.ensureDeferred
async def test_a_page_that_says_nothing_reads_as_page_directives_of_nothing(
    server: Server, tmp_path: Path
) -> None:
    # Pages without any page directive take a shortcut: the same answers as reading nothing.
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/silent", page(body=links("/silent-too")))
    server.route("/silent-too", page(robots_meta("description", "nothing for robots")))
    server.route("/image.png", Reply(body=b"\x89PNG", content_type="image/png"))
    server.route("/said", page(body="", headers={"X-Robots-Tag": "noai"}))
    urls = [server.url(p) for p in ("/silent", "/image.png", "/said")]
    usage = ["search", "train-ai"]
    crawler = await crawl(FollowSpider, addon(**feed(tmp_path), RERP_USAGE=usage), urls=urls)
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    for path, image in (("/silent", False), ("/silent-too", False), ("/image.png", True)):
        directives, decisions = spider.seen[server.url(path)]
        assert directives == page_directives([], [], "MyBot"), path
        assert decisions == {
            purpose: page_directives([], [], "MyBot").usage(purpose, image=image)
            for purpose in usage
        }
        assert all(decision.allowed for decision in decisions.values())
    directives, decisions = spider.seen[server.url("/said")]
    assert directives.noai and not decisions["train-ai"].allowed and decisions["search"].allowed
    assert stat(crawler, "robotstxt/page/responses") == 4
    assert stat(crawler, "robotstxt/page/header_seen") == 1
    assert stat(crawler, "robotstxt/page/restriction/noai") == 1
    # Every page's item is kept but the one of the page that forbids training (RERP_USAGE_DROP).
    assert {item["url"] for item in exported(tmp_path)} == set(spider.seen) - {server.url("/said")}


@pytest_twisted.ensureDeferred
async def test_a_page_whose_charset_is_no_text_encoding_is_read_as_undeclared(
    server: Server, tmp_path: Path
) -> None:
    # A Content-Type charset that names no text encoding (base64), a hostname codec (idna,
    # punycode) or nothing decodable (a byte that is no UTF-8) is read as no charset: the head
    # is still read, as UTF-8, and the callback runs.
    server.robots("User-agent: *\nAllow: /\n")
    # Without a reactor Scrapy downloads with aiohttp, which refuses the byte that is no UTF-8.
    charsets = ("base64", "idna", "punycode", *(["\xff"] if TEST_REACTOR != "none" else []))
    for n, charset in enumerate(charsets):
        body = html(robots_meta("robots", "nofollow"), "")
        server.route(f"/{n}", Reply(body=body, content_type=f"text/html; charset={charset}"))

    class Spider(FollowSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            self.seen[response.url] = (response.meta.get("rerp_page"), None)
            # Not response.follow: Scrapy would decode the body to find its <base>.
            yield scrapy.Request(response.url + "/a")

    urls = [server.url(f"/{n}") for n in range(len(charsets))]
    # Scrapy's MetaRefreshMiddleware decodes the body with the charset and fails: off here.
    settings = addon(**feed(tmp_path), METAREFRESH_ENABLED=False)
    crawler = await crawl(Spider, settings, urls=urls)
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    assert sorted(spider.seen) == sorted(urls)
    assert all(directives and directives.nofollow for directives, _ in spider.seen.values())
    assert pages(server) == [f"/{n}" for n in range(len(charsets))]
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == len(charsets)
    assert stat(crawler, "spider_exceptions/LookupError") is None


@pytest_twisted.ensureDeferred
async def test_every_page_read_is_counted_by_the_time_the_spider_closes(
    server: Server, tmp_path: Path
) -> None:
    # Pages that say nothing are counted in batches; the count is whole at the end.
    server.robots("User-agent: *\nAllow: /\n")
    silent = 250
    for n in range(silent):
        server.route(f"/{n}", page(body=""))
    server.route("/said", page(body="", headers={"X-Robots-Tag": "noarchive"}))
    urls = [server.url(f"/{n}") for n in range(silent)] + [server.url("/said")]
    crawler = await crawl(FollowSpider, addon(**feed(tmp_path)), urls=urls)
    assert len(pages(server)) == silent + 1
    assert stat(crawler, "robotstxt/page/responses") == silent + 1
    assert stat(crawler, "robotstxt/page/header_seen") == 1


# -- TDMRep: its headers and meta tags, read with the page directives (docs/usage.rst, "TDMRep in a
# crawl"); the origin's tdmrep.json: tests/test_tdmrep_crawls.py.

POLICY = "https://example.com/policy.json"

#: One page per way of saying (or not saying) tdm-reservation.
TDMREP_PAGES: dict[str, Reply] = {
    "/header": page(body="text", headers={"tdm-reservation": "1"}),
    "/meta": page(robots_meta("tdm-reservation", "1"), "text"),
    # The meta tag supersedes the header: not reserved.
    "/header-then-meta": page(
        robots_meta("tdm-reservation", "0"), "text", headers={"tdm-reservation": "1"}
    ),
    # The header's policy stays in force under the meta tag's reservation.
    "/licensable": page(
        robots_meta("tdm-reservation", "1"), "text", headers={"tdm-policy": POLICY}
    ),
    "/bad": page(body="text", headers={"tdm-reservation": "yes"}),
    "/plain": page(body="text"),
}
EVERY_TDMREP_ITEM = sorted((path.lstrip("/"), False) for path in TDMREP_PAGES)


class TdmRepSpider(FollowSpider):
    """Keeps each page's ``response.meta["rerp_tdmrep"]``."""

    name = "tdmrep"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tdmrep: dict[str, dict[str, TdmRepDecision] | None] = {}

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        self.tdmrep[response.url.rsplit("/", 1)[1]] = response.meta.get("rerp_tdmrep")
        yield from super().parse(response)


@pytest.fixture
def tdmrep_site(server: Server) -> Server:
    server.robots("User-agent: *\nAllow: /\n")
    for path, reply in TDMREP_PAGES.items():
        server.route(path, reply)
    return server


async def crawl_tdmrep_site(site: Server, tmp_path: Path, **settings: Any) -> Crawler:
    urls = [site.url(path) for path in TDMREP_PAGES]
    return await crawl(TdmRepSpider, addon(**feed(tmp_path, **settings)), urls=urls)


def tdmrep_decisions(crawler: Crawler) -> dict[str, dict[str, TdmRepDecision] | None]:
    """Each page's ``response.meta["rerp_tdmrep"]``, by the last part of its path."""
    spider = crawler.spider
    assert isinstance(spider, TdmRepSpider)
    return spider.tdmrep


@pytest_twisted.ensureDeferred
async def test_a_reservation_by_header_or_meta_tag_drops_the_pages_items(
    tdmrep_site: Server, tmp_path: Path
) -> None:
    crawler = await crawl_tdmrep_site(tdmrep_site, tmp_path, RERP_USAGE="train-ai")
    assert kept(tmp_path) == [
        ("bad", False),
        ("header-then-meta", False),
        ("plain", False),
    ]
    assert stat(crawler, "robotstxt/page/items_dropped/tdm-reservation") == 3
    assert stat(crawler, "robotstxt/tdmrep/reserved/header") == 1
    assert stat(crawler, "robotstxt/tdmrep/reserved/meta") == 2
    assert stat(crawler, "robotstxt/tdmrep/not_reserved/meta") == 1
    # A value that is neither 1 nor 0 is a protocol error: counted, and no reservation.
    assert stat(crawler, "robotstxt/tdmrep/warnings/bad-reservation") == 1
    # The origin's file is fetched once; this site has none to give (an empty 200).
    assert tdmrep_site.count("/.well-known/tdmrep.json") == 1

    seen = tdmrep_decisions(crawler)
    assert seen["plain"] is None  # says nothing of TDM: no decision recorded
    header = seen["header"]["train-ai"]
    assert header.preference == "disallowed" and header.statement.technique == "header"
    meta = seen["header-then-meta"]["train-ai"]
    assert meta.preference == "allowed" and meta.statement.technique == "meta"
    licensable = seen["licensable"]["train-ai"]
    assert licensable.preference == "disallowed" and licensable.licensable
    assert licensable.policy == POLICY
    assert seen["bad"]["train-ai"].preference == "unknown"


@pytest_twisted.ensureDeferred
async def test_with_drop_off_a_reserved_pages_items_are_kept_and_marked(
    tdmrep_site: Server, tmp_path: Path
) -> None:
    crawler = await crawl_tdmrep_site(
        tdmrep_site, tmp_path, RERP_USAGE=["train-ai", "ai-input"], RERP_USAGE_DROP=False
    )
    assert kept(tmp_path) == EVERY_TDMREP_ITEM
    items = {item["url"].rsplit("/", 1)[1]: item for item in exported(tmp_path)}
    reason = "TDM rights reserved by tdm-reservation header"
    assert items["header"]["rerp_page_usage"] == {
        purpose: {
            "source": "tdm-reservation header",
            "statement": "tdm-reservation: 1",
            "reason": f"{purpose} disallowed: {reason}",
        }
        for purpose in ("train-ai", "ai-input")
    }
    licensable = items["licensable"]["rerp_page_usage"]["ai-input"]
    assert licensable["statement"] == f"tdm-reservation: 1; tdm-policy: {POLICY}"
    for unmarked in ("bad", "header-then-meta", "plain"):
        assert "rerp_page_usage" not in items[unmarked]
    assert stat(crawler, "robotstxt/page/items_marked/tdm-reservation") == 3
    assert stat(crawler, "robotstxt/page/items_dropped/tdm-reservation") is None


@pytest.mark.parametrize("usage", [None, "search"])
@pytest_twisted.ensureDeferred
async def test_without_a_purpose_tdmrep_speaks_to_nothing_is_read(
    tdmrep_site: Server, tmp_path: Path, usage: str | None
) -> None:
    crawler = await crawl_tdmrep_site(tdmrep_site, tmp_path, RERP_USAGE=usage)
    assert kept(tmp_path) == EVERY_TDMREP_ITEM
    assert set(tdmrep_decisions(crawler).values()) == {None}
    assert crawler.stats is not None
    assert not [key for key in crawler.stats.get_stats() if "tdm" in key]
    assert pages(tdmrep_site) == sorted(TDMREP_PAGES)
