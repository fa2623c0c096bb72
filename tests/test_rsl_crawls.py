"""RSL licences in a crawl (docs/usage.rst, "RSL in a crawl"): the licence files robots.txt's
``License:`` lines name are a registered document kind (core/documents.py, ``rsl_files``), each
fetched once per crawl wherever it is, before the pages of the origins that name it; a licence
that applies and prohibits a ``RERP_USAGE`` purpose, or permits it only on terms the crawl does
not hold, refuses the page, as robots.txt's Content-Usage lines do."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.http import Response

from tests.support.crawls import rerp, stat
from tests.support.evidence import of_kind, records
from tests.support.servers import ListSpider, Reply, Server, crawl

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

NS = 'xmlns="https://rslstandard.org/rsl"'


def rsl(*contents: str) -> Reply:
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<rsl {NS}>\n{"".join(contents)}\n</rsl>\n'
    return Reply(body=body, content_type="application/rsl+xml")


def content(url: str, licence: str, server: str = "") -> str:
    attributes = f'url="{url}"' + (f' server="{server}"' if server else "")
    return f"<content {attributes}><license>{licence}</license></content>"


LICENCE = rsl(
    content("/prohibited/*", '<prohibits type="usage">ai-train</prohibits>'),
    content("/paid/*", '<permits type="usage">all</permits><payment type="purchase"/>'),
    content("/server/*", '<permits type="usage">all</permits>', "https://license.example/api"),
    content("/open/*", '<permits type="usage">all</permits><payment type="attribution"/>'),
)
PAGES = ["/prohibited/a", "/paid/b", "/server/c", "/open/d", "/unlicensed/e"]


class UsageSpider(ListSpider):
    """Keeps each page's ``response.meta["rerp_usage"]`` train-ai decision, by its path."""

    name = "rsl"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.usage: dict[str, str] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        decision = response.meta["rerp_usage"]["train-ai"]
        self.usage[response.url.split("/", 3)[3]] = decision.preference


def site(server: Server, *licences: str) -> list[str]:
    lines = "".join(f"License: {url}\n" for url in licences)
    server.robots(f"User-agent: *\nAllow: /\n{lines}")
    return [server.url(path) for path in PAGES]


def page_hits(server: Server) -> list[str]:
    return sorted(h.path for h in server.hits() if h.path in PAGES)


@pytest_twisted.ensureDeferred
async def test_a_licence_on_another_host_refuses_what_it_prohibits_or_charges_for(
    make_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    one, two, licences = make_server(), make_server(), make_server()
    licences.route("/license.xml", LICENCE)
    licence_url = licences.url("/license.xml")
    urls = site(one, licence_url) + site(two, licence_url)
    evidence = tmp_path / "evidence.jsonl"
    settings = rerp(RERP_USAGE="train-ai", RERP_EVIDENCE=str(evidence))
    with caplog.at_level(logging.DEBUG, logger="scrapy_rerp.usage"):
        crawler = await crawl(UsageSpider, settings, urls=urls)
    # One download of the file for both origins that name it, before any of their pages.
    [hit] = licences.hits("/license.xml")
    for server in (one, two):
        # Prohibited, paid and licence-server pages are never downloaded; the others are.
        assert page_hits(server) == ["/open/d", "/unlicensed/e"]
        assert all(h.time > hit.time for h in server.hits() if h.path in PAGES)
    spider = crawler.spider
    assert isinstance(spider, UsageSpider)
    assert spider.usage == {"open/d": "allowed", "unlicensed/e": "unknown"}
    assert stat(crawler, "robotstxt/rsl/request_count") == 1
    assert stat(crawler, "robotstxt/usage/dropped/license") == 6
    # The decision names the file, the content element and the licence that decided.
    refused = [r.getMessage() for r in caplog.records if "paid/b" in r.getMessage()]
    assert refused and f"RSL {licence_url} content /paid/* license 1" in refused[0]
    found = records(evidence)
    [file] = of_kind(found, "rsl")
    assert (file["url"], file["origin"], file["outcome"]) == (
        licence_url,
        licences.origin,
        "parsed",
    )
    dropped = {r["url"]: r for r in of_kind(found, "decision") if r["verdict"] == "dropped"}
    assert len(dropped) == 6
    usage = dropped[one.url("/server/c")]["usage"]
    assert (usage["source"], usage["allowed"]) == ("license", False)
    downloaded = [r for r in of_kind(found, "decision") if r["verdict"] == "downloaded"]
    assert {tuple(r["documents"]["rsl"]) for r in downloaded} == {(file["sha256"],)}


@pytest_twisted.ensureDeferred
async def test_with_usage_drop_off_every_page_goes_and_its_meta_says_why(
    server: Server, make_server: Any
) -> None:
    licences = make_server()
    licences.route("/license.xml", LICENCE)
    urls = site(server, licences.url("/license.xml"))
    settings = rerp(RERP_USAGE="train-ai", RERP_USAGE_DROP=False)
    crawler = await crawl(UsageSpider, settings, urls=urls)
    assert page_hits(server) == sorted(PAGES)
    spider = crawler.spider
    assert isinstance(spider, UsageSpider)
    assert spider.usage == {
        "prohibited/a": "disallowed",
        "paid/b": "disallowed",
        "server/c": "disallowed",
        "open/d": "allowed",
        "unlicensed/e": "unknown",
    }


@pytest.mark.parametrize(
    "body",
    [
        b"<rsl><content url='/'><license>",  # broken XML
        b'<?xml version="1.0"?>\n<!DOCTYPE rsl [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>'
        b"<rsl " + NS.encode() + b">&b;</rsl>",  # an entity bomb's first steps
    ],
    ids=["broken-xml", "entity-bomb"],
)
@pytest_twisted.ensureDeferred
async def test_a_file_that_is_no_usable_rsl_refuses_nothing_and_is_said_once(
    server: Server, make_server: Any, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    licences = make_server()
    licences.route("/license.xml", Reply(body=body, content_type="application/rsl+xml"))
    urls = site(server, licences.url("/license.xml"))
    with caplog.at_level(logging.WARNING):
        crawler = await crawl(UsageSpider, rerp(RERP_USAGE="train-ai"), urls=urls)
    assert page_hits(server) == sorted(PAGES)
    assert stat(crawler, "robotstxt/rsl/file/invalid") == 1
    said = [r.getMessage() for r in caplog.records if "RSL licence of" in r.getMessage()]
    assert len(said) == 1 and "not used" in said[0]


@pytest_twisted.ensureDeferred
async def test_without_a_purpose_rsl_speaks_to_no_licence_is_fetched(
    server: Server, make_server: Any
) -> None:
    licences = make_server()
    licences.route("/license.xml", LICENCE)
    urls = site(server, licences.url("/license.xml"))
    await crawl(ListSpider, rerp(), urls=urls)
    assert licences.hits() == []
    assert page_hits(server) == sorted(PAGES)


@pytest_twisted.ensureDeferred
async def test_the_store_keeps_a_licence_for_the_next_run(
    server: Server, make_server: Any, tmp_path: Path
) -> None:
    licences = make_server()
    licences.route("/license.xml", LICENCE)
    urls = site(server, licences.url("/license.xml"))
    settings = rerp(RERP_USAGE="train-ai", RERP_STORE=str(tmp_path / "robots.sqlite"))
    await crawl(UsageSpider, settings, urls=urls)
    licences.clear()
    server.clear()
    again = await crawl(UsageSpider, settings, urls=urls)
    assert licences.hits() == []  # the licence, as robots.txt, from the store
    assert stat(again, "robotstxt/rsl/store/reused") == 1
    assert page_hits(server) == ["/open/d", "/unlicensed/e"]


def html_page(head: str = "") -> Reply:
    body = f"<html><head><title>t</title>{head}</head><body>x</body></html>"
    return Reply(body=body, content_type="text/html")


@pytest_twisted.ensureDeferred
async def test_a_page_s_own_link_header_and_link_tag_name_licences_read_before_the_spider(
    server: Server, make_server: Any, tmp_path: Path
) -> None:
    # No License: line: each page names its own file, one by its Link header, one by a <link>
    # in its head, another the same file again; each file is fetched once, after the page
    # that first names it, and before the spider sees the pages.
    licences = make_server()
    closed = rsl(content("/", '<prohibits type="usage">ai-train</prohibits>'))
    licences.route("/closed.xml", closed)
    licences.route("/open.xml", rsl(content("/", '<permits type="usage">all</permits>')))
    link = f'<{licences.url("/closed.xml")}>; rel="license"; type="application/rsl+xml"'
    tag = f'<link rel="license" type="application/rsl+xml" href="{licences.url("/open.xml")}">'
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/by-header", Reply(body="x", headers={"Link": link}))
    server.route("/by-tag", html_page(tag))
    server.route("/by-tag-again", html_page(tag))
    server.route("/none", html_page())
    urls = [server.url(p) for p in ("/by-header", "/by-tag", "/by-tag-again", "/none")]
    evidence = tmp_path / "evidence.jsonl"
    settings = rerp(RERP_USAGE="train-ai", RERP_EVIDENCE=str(evidence))
    crawler = await crawl(UsageSpider, settings, urls=urls)
    spider = crawler.spider
    assert isinstance(spider, UsageSpider)
    # The page whose own licence prohibits training never reaches the spider.
    assert spider.usage == {"by-tag": "allowed", "by-tag-again": "allowed", "none": "unknown"}
    assert licences.count("/closed.xml") == 1 and licences.count("/open.xml") == 1
    assert stat(crawler, "robotstxt/usage/dropped/license") == 1
    assert stat(crawler, "robotstxt/rsl/request_count") == 2
    found = records(evidence)
    assert {r["url"] for r in of_kind(found, "rsl")} == {
        licences.url("/closed.xml"),
        licences.url("/open.xml"),
    }
    [dropped] = [r for r in of_kind(found, "decision") if r["verdict"] == "dropped"]
    assert dropped["url"] == server.url("/by-header")
