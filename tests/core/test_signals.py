"""``scrapy_rerp.signals`` in real crawls against local sites: each signal heard by an extension,
as a user's would be, with the arguments docs/signals.rst lists; a handler's ``IgnoreRequest``
keeping a page from the spider; and the docs' recipe, run as the page shows it."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest

from scrapy_rerp import signals
from scrapy_rerp.core.data import Outcome
from scrapy_rerp.engine import PageDirectives, RobotsTxt
from tests.support.pages import FollowSpider
from tests.support.servers import ListSpider, Reply, Server, crawl

pytestmark = pytest.mark.crawl

ROBOTS = "User-agent: *\nDisallow: /private\n"
DOCS = Path(__file__).resolve().parents[2] / "docs"
#: robots.txt comes this late: every page of the site waits for it, parked.
ROBOTS_DELAY = 0.3


class Heard:
    """An extension that keeps every call of each of the layer's signals (name, arguments)."""

    SIGNALS = (
        "document_received",
        "request_refused",
        "request_admitted",
        "request_answered",
        "request_failed",
        "page_read",
    )

    def __init__(self, crawler: Crawler) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.heard_at: dict[int, float] = {}
        for name in self.SIGNALS:
            crawler.signals.connect(getattr(self, name), signal=getattr(signals, name))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Heard:
        return cls(crawler)

    def of(self, name: str) -> list[dict[str, Any]]:
        return [arguments for heard, arguments in self.calls if heard == name]

    def _keep(self, name: str, arguments: dict[str, Any]) -> None:
        arguments.pop("signal"), arguments.pop("sender")
        self.calls.append((name, arguments))
        self.heard_at[id(arguments)] = time.monotonic()  # the servers' clock (Hit.time)

    def document_received(self, **arguments: Any) -> None:
        self._keep("document_received", arguments)

    def request_refused(self, **arguments: Any) -> None:
        self._keep("request_refused", arguments)

    def request_admitted(self, **arguments: Any) -> None:
        self._keep("request_admitted", arguments)

    def request_answered(self, **arguments: Any) -> None:
        self._keep("request_answered", arguments)

    def request_failed(self, **arguments: Any) -> None:
        self._keep("request_failed", arguments)

    def page_read(self, **arguments: Any) -> None:
        self._keep("page_read", arguments)


class KeepsPrivateAnswers(Heard):
    """Keeps every answer of a ``/secret`` page from the spider, as the signal allows."""

    def request_answered(self, **arguments: Any) -> None:
        super().request_answered(**arguments)
        if "/secret" in arguments["request"].url:
            raise IgnoreRequest("kept from the spider")


def settings(extension: str = "Heard", **more: Any) -> dict[str, Any]:
    return {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "EXTENSIONS": {f"tests.core.test_signals.{extension}": 500},
        "RETRY_ENABLED": False,
        **more,
    }


def heard_in(crawler: Crawler) -> Heard:
    assert crawler.extensions is not None
    (extension,) = [e for e in crawler.extensions.middlewares if isinstance(e, Heard)]
    return extension


def a_site(server: Server) -> Server:
    server.robots(ROBOTS, delay=ROBOTS_DELAY)
    server.route("/public", Reply(body="ok"))
    server.route(
        "/noindex",
        Reply(
            body='<html><body><a href="/linked">a link</a></body></html>',
            headers={"X-Robots-Tag": "noindex, nofollow"},
            content_type="text/html",
        ),
    )
    server.route("/broken", Reply(close=True))
    server.route("/secret", Reply(body="ok"))
    return server


@pytest_twisted.ensureDeferred
async def test_each_signal_is_sent_with_its_arguments(make_server: Any) -> None:
    site, other = a_site(make_server()), make_server()
    other.robots("User-agent: *\nAllow: /\n")
    other.route("/", Reply(body='<a href="/next">next</a>', content_type="text/html"))
    other.route("/next", Reply(body="ok"))
    urls = [site.url(p) for p in ("/public", "/private/1", "/noindex", "/broken")]
    crawler = await crawl(FollowSpider, settings(), urls=[*urls, other.url("/")])
    heard = heard_in(crawler)

    # One document per origin, before any of its pages went on.
    documents = heard.of("document_received")
    assert sorted(d["origin"] for d in documents) == sorted(
        [site.url("").rstrip("/"), other.url("").rstrip("/")]
    )
    for document in documents:
        assert document["kind"] == "robots.txt"
        assert isinstance(document["entry"].robots, RobotsTxt)
        assert document["entry"].outcome is Outcome.PARSED
        assert document["fetched"].status == 200
        assert document["user_agent"]
    assert site.count("/robots.txt") == 1 and other.count("/robots.txt") == 1

    # The refused URL, with the rule that refused it; the site never saw it. The link of a
    # nofollow page, refused by the page.
    refused, by_the_page = heard.of("request_refused")
    assert by_the_page["request"].url == site.url("/linked")
    assert by_the_page["reason"] == "page" and by_the_page["decision"] is None
    assert by_the_page["message"] == "nofollow (X-Robots-Tag header 1: nofollow)"
    assert refused["request"].url == site.url("/private/1")
    assert (refused["reason"], refused["message"]) == ("robots.txt", "Forbidden by robots.txt")
    decision = refused["decision"]
    assert (decision["line"], decision["rule"], decision["group"]) == (2, "Disallow: /private", "*")
    (site_document,) = [d for d in documents if d["origin"] == site.url("").rstrip("/")]
    assert decision["robots_sha256"] == site_document["entry"].sha256
    assert "/private/1" not in site.paths()

    # Every page let through had waited for its robots.txt, parked; the refused one is not;
    # the links of /noindex (nofollow) were dropped, and the other site's page went on at once.
    admitted = {r["request"].url: r for r in heard.of("request_admitted")}
    assert sorted(admitted) == sorted(
        [*(u for u in urls if "private" not in u), other.url("/"), other.url("/next")]
    )
    [robots_hit] = site.hits("/robots.txt")
    for url in (site.url("/public"), site.url("/noindex"), site.url("/broken")):
        # Let through once the robots.txt answer came, ROBOTS_DELAY after its request (which
        # left a moment before the page parked: a wait a little shorter than the delay).
        assert heard.heard_at[id(admitted[url])] >= robots_hit.time + ROBOTS_DELAY
        assert admitted[url]["waited"] > 0
        assert admitted[url]["decision"]["robots_sha256"] == site_document["entry"].sha256
    assert admitted[other.url("/next")]["waited"] is None  # its origin's rules were known

    answered = {a["request"].url: a for a in heard.of("request_answered")}
    assert sorted(answered) == sorted(
        [site.url("/public"), site.url("/noindex"), other.url("/"), other.url("/next")]
    )
    assert answered[site.url("/public")]["response"].status == 200
    assert answered[site.url("/public")]["decision"]["line"] is None  # no rule matched
    (failed,) = heard.of("request_failed")
    assert failed["request"].url == site.url("/broken")
    assert failed["decision"]["robots_sha256"] == decision["robots_sha256"]

    # What the page said of itself, before its callback ran.
    (page,) = heard.of("page_read")
    assert page["response"].url == site.url("/noindex")
    assert isinstance(page["directives"], PageDirectives)
    assert [s.text for s in page["directives"].statements] == ["noindex", "nofollow"]
    assert page["nofollow"] is not None and page["refused"] == [] and page["items"] is None
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    assert sorted(spider.responses) == sorted(answered)
    # (Reactorless Scrapy's aiohttp client sends /broken again when its pooled connection is
    # closed without an answer: the set of paths, not their count.)
    assert sorted(set(site.paths())) == ["/broken", "/noindex", "/public", "/robots.txt"]


@pytest_twisted.ensureDeferred
async def test_a_handler_s_ignore_request_keeps_the_answer_from_the_spider(
    server: Server,
) -> None:
    a_site(server)
    urls = [server.url("/public"), server.url("/secret")]
    crawler = await crawl(ListSpider, settings("KeepsPrivateAnswers"), urls=urls)
    spider = crawler.spider
    assert isinstance(spider, ListSpider)
    assert spider.responses == [server.url("/public")]
    (failure,) = spider.failures
    assert failure.check(IgnoreRequest) and str(failure.value) == "kept from the spider"
    assert server.count("/secret") == 1  # downloaded, then kept back
    # Not a handler's error: nothing was logged for it.
    assert crawler.stats is not None
    assert crawler.stats.get_value("log_count/ERROR") is None


@pytest.mark.parametrize("hears", [False, True])
def test_the_answers_cost_the_middleware_a_hook_only_when_heard(hears: bool) -> None:
    # Scrapy's downloader calls every process_response it finds on every response.
    from scrapy.core.downloader.middleware import DownloaderMiddlewareManager

    from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware
    from tests.support.parts import crawler_and_settings

    crawler, _ = crawler_and_settings({"ADDONS": {"scrapy_rerp.Addon": 100}})
    if hears:
        heard = Heard(crawler)
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    (middleware,) = [mw for mw in manager.middlewares if isinstance(mw, RobotsTxtMiddleware)]
    responses = [method.__self__ for method in manager.methods["process_response"]]  # type: ignore[union-attr]
    exceptions = [method.__self__ for method in manager.methods["process_exception"]]  # type: ignore[union-attr]
    assert (middleware in responses, middleware in exceptions) == (hears, hears)
    if hears:
        assert heard.calls == []


def recipe() -> str:
    """The Python block of docs/signals.rst's recipe, as the page shows it (dedented)."""
    page = (DOCS / "signals.rst").read_text(encoding="utf-8")
    section = page.split("\nA recipe: every refused URL in a file\n", 1)[1].split("\n---", 1)[0]
    (block,) = re.findall(r"^\.\. code-block:: python\n\n((?:(?: {4}.*)?\n)+)", section, re.M)
    return "\n".join(line[4:] for line in block.rstrip("\n").splitlines()) + "\n"


@pytest_twisted.ensureDeferred
async def test_the_docs_recipe_writes_every_refused_url_to_its_file(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "refused_urls.py").write_text(recipe(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "refused_urls", raising=False)
    server.robots(ROBOTS)
    server.route("/public", Reply(body="ok"))
    written = tmp_path / "refused.tsv"
    urls = [server.url("/public"), server.url("/private/1"), server.url("/private/2")]
    await crawl(
        ListSpider,
        {
            "ADDONS": {"scrapy_rerp.Addon": 100},
            "EXTENSIONS": {"refused_urls.RefusedUrls": 500},
            "REFUSED_FILE": str(written),
        },
        urls=urls,
    )
    assert sorted(written.read_text().splitlines()) == [
        f"{server.url('/private/1')}\trobots.txt\tForbidden by robots.txt",
        f"{server.url('/private/2')}\trobots.txt\tForbidden by robots.txt",
    ]
    assert server.paths().count("/public") == 1
