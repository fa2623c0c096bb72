"""RerpRobotParser: Scrapy's RobotParser interface, checked like Scrapy's own parsers."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
import pytest_twisted
from scrapy.robotstxt import ProtegoRobotParser, PythonRobotParser, RobotParser
from scrapy.utils.test import get_crawler

from scrapy_rerp import RerpRobotParser
from scrapy_rerp.crawl.compat import SCRAPY_VERSION
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, RobotsTxt, parse
from tests.support.servers import Server, crawl, stopped_by_settings

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

#: What Scrapy's own adapters lack in older releases: ``RobotParser.crawl_delay`` (2.18), a
#: BOM stripped before parsing (2.14).
SCRAPY_LACKS = frozenset(
    {
        *(() if hasattr(RobotParser, "crawl_delay") else ("crawl_delay method",)),
        *(() if SCRAPY_VERSION >= (2, 14) else ("BOM handling",)),
    }
)


class RobotParserContract:
    """Behaviour every RobotParser shares; subclasses name the parser and what it lacks.

    A feature a parser lacks is not skipped: its test asserts what that parser does instead,
    so the table of differences stays true.
    """

    parser_cls: ClassVar[type[RobotParser]]
    lacks: ClassVar[frozenset[str]] = frozenset()

    def parser(self, body: bytes) -> RobotParser:
        return self.parser_cls.from_crawler(None, body)  # type: ignore[arg-type]

    def has(self, feature: str) -> bool:
        return feature not in self.lacks

    def test_allowed(self) -> None:
        rp = self.parser(b"User-agent: *\nDisallow: /disallowed\nAllow: /allowed\nCrawl-delay: 10")
        assert rp.allowed("https://site.local/allowed", "*")
        assert not rp.allowed("https://site.local/disallowed", "*")
        assert rp.allowed("https://site.local/other", "*")

    def test_bytes_url_and_user_agent(self) -> None:
        rp = self.parser(b"User-agent: *\nDisallow: /d\n")
        assert not rp.allowed(b"https://site.local/d", b"mybot")
        assert rp.allowed(b"https://site.local/a", b"mybot")

    def test_specific_group_over_star(self) -> None:
        rp = self.parser(b"User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /x\n")
        assert rp.allowed("https://site.local/a", "mybot")
        assert not rp.allowed("https://site.local/x", "mybot")
        assert not rp.allowed("https://site.local/a", "otherbot")

    def test_wildcards(self) -> None:
        rp = self.parser(
            b"User-agent: first\nDisallow: /disallowed/*/end$\n\n"
            b"User-agent: second\nAllow: /*allowed\nDisallow: /\n"
        )
        if not self.has("wildcards"):  # `*` and `$` read literally
            assert rp.allowed("https://site.local/disallowed/xyz/end", "first")
            assert not rp.allowed("https://site.local/is_still_allowed", "second")
            return
        assert rp.allowed("https://site.local/disallowed", "first")
        assert not rp.allowed("https://site.local/disallowed/xyz/end", "first")
        assert rp.allowed("https://site.local/disallowed/xyz/endinglater", "first")
        assert rp.allowed("https://site.local/is_still_allowed", "second")
        assert not rp.allowed("https://site.local/other", "second")

    def test_longest_match_wins(self) -> None:
        rp = self.parser(b"User-agent: *\nDisallow: /\nAllow: /page\n")
        if not self.has("longest match"):  # the first matching rule wins
            assert not rp.allowed("https://site.local/page", "*")
            return
        assert rp.allowed("https://site.local/page", "*")
        assert not rp.allowed("https://site.local/other", "*")

    def test_empty_body_allows_all(self) -> None:
        rp = self.parser(b"")
        for url in ("https://site.local/", "https://site.local/index.html", "https://site.local/x"):
            assert rp.allowed(url, "*") and rp.allowed(url, "chrome")

    def test_garbage_allows_all_and_never_crashes(self) -> None:
        rp = self.parser(b"GIF89a\xd3\x00\xfe\x00\xa2\xff\xfe\x80")
        assert rp.allowed("https://site.local/", "*")
        assert rp.allowed("https://site.local/disallowed", "chrome")

    def test_utf8_bom(self) -> None:
        rp = self.parser(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
        # Without BOM handling the first line is not a User-agent line: its group is lost.
        assert rp.allowed("https://site.local/x", "*") is not self.has("BOM handling")

    def test_unicode_url_and_user_agent(self) -> None:
        rp = self.parser(
            "User-Agent: *\nDisallow: /admin/\n"
            "Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:\nDisallow: /wiki/Käyttäjä:\n\n"
            "User-Agent: UnicödeBöt\nDisallow: /some/page.html\n".encode()
        )
        assert rp.allowed("https://site.local/", "*")
        assert not rp.allowed("https://site.local/admin/", "*")
        assert not rp.allowed("https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*")
        assert not rp.allowed("https://site.local/wiki/Käyttäjä:", "*")
        assert rp.allowed("https://site.local/some/page.html", "*")

    def test_crawl_delay(self) -> None:
        rp = self.parser(b"User-agent: *\nCrawl-delay: 10\n\nUser-agent: mybot\nCrawl-delay: 2\n")
        if not self.has("crawl_delay method"):  # Scrapy's interface has no crawl_delay yet
            assert not hasattr(rp, "crawl_delay")
            return
        if not self.has("crawl delay"):  # records with no rule are dropped, delay and all
            assert rp.crawl_delay("mybot") is None and rp.crawl_delay("otherbot") is None
            return
        assert rp.crawl_delay("mybot") == 2.0
        assert rp.crawl_delay(b"otherbot") == 10.0
        assert self.parser(b"User-agent: *\nDisallow: /\n").crawl_delay("mybot") is None


class TestRerpRobotParser(RobotParserContract):
    parser_cls = RerpRobotParser


class TestProtegoRobotParser(RobotParserContract):
    parser_cls = ProtegoRobotParser
    lacks = SCRAPY_LACKS


class TestPythonRobotParser(RobotParserContract):
    parser_cls = PythonRobotParser
    lacks = frozenset({"wildcards", "longest match", "BOM handling"}) | SCRAPY_LACKS


class TestScrapyRerpRobotParser(RobotParserContract):
    """Scrapy's adapter for robotexclusionrulesparser, when that package is installed."""

    lacks = frozenset({"longest match", "crawl delay"}) | SCRAPY_LACKS - {"BOM handling"}

    @classmethod
    def setup_class(cls) -> None:
        from scrapy.robotstxt import RerpRobotParser as ScrapyRerp  # needs the test extra

        cls.parser_cls = ScrapyRerp


# -- beyond the shared interface ------------------------------------------------------------------


def test_is_a_scrapy_robot_parser_and_exposes_the_engine() -> None:
    rp = RerpRobotParser.from_crawler(None, b"User-agent: *\nDisallow: /x\n")  # type: ignore[arg-type]
    assert isinstance(rp, RobotParser)
    assert isinstance(rp.robots, RobotsTxt) and rp.syntax == RFC9309
    assert rp.robots.decide("https://site.local/x", "bot").line == 2


def test_fractional_crawl_delay() -> None:
    assert RerpRobotParser(b"User-agent: *\nCrawl-delay: 2.5\n").crawl_delay("bot") == 2.5


def test_request_rate_sitemaps_and_preferred_host() -> None:
    rp = RerpRobotParser(
        b"User-agent: *\nRequest-rate: 1/5s\n"
        b"Sitemap: https://site.local/a.xml\nSitemap: /b.xml\nHost: mirror.site.local\n"
    )
    rate = rp.request_rate("mybot")
    assert rate is not None and (rate.requests, rate.seconds) == (1, 5.0)
    assert rp.sitemaps() == ["https://site.local/a.xml", "/b.xml"]
    assert rp.preferred_host() == "mirror.site.local"
    empty = RerpRobotParser(b"")
    assert empty.request_rate("bot") is None and empty.sitemaps() == []
    assert empty.preferred_host() is None


def test_from_robots_wraps_parsed_rules() -> None:
    robots = parse("User-agent: *\nDisallow: /x\n")
    rp = RerpRobotParser.from_robots(robots)
    assert rp.robots is robots and not rp.allowed("https://h/x", "bot")


def test_syntax_from_crawler_settings() -> None:
    body = b"User-agent: *\nDisallow: /\nAllow: /page\n"
    rfc = RerpRobotParser.from_crawler(get_crawler(settings_dict={}), body)
    legacy = RerpRobotParser.from_crawler(
        get_crawler(settings_dict={"RERP_SYNTAX": "mk1996"}), body
    )
    assert rfc.allowed("https://h/page", "bot")  # longest match
    assert legacy.syntax == MK1996
    assert not legacy.allowed("https://h/page", "bot")  # first match, as rerp


def test_bad_syntax_setting_is_reported_and_allows_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    crawler = get_crawler(settings_dict={"RERP_SYNTAX": "rfc"})
    for _ in range(3):  # Scrapy's middleware builds a parser per robots.txt
        parser = RerpRobotParser.from_crawler(crawler, b"")
        assert not parser.allowed("https://h/", "bot")
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "RERP_SYNTAX = 'rfc'" in errors[0]


@pytest.mark.parametrize("syntax", ["gym2008", "GYM2008", GYM2008])
def test_syntax_by_name_or_constant(syntax: Any) -> None:
    parser = RerpRobotParser(b"User-agent: *\nDisallow: /\nAllow: /page\n", syntax)
    assert parser.syntax == GYM2008
    assert not parser.allowed("https://h/page", "bot")  # first match


def test_unknown_syntax_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="syntax"):
        RerpRobotParser(b"", "google")


# -- with Scrapy's own RobotsTxtMiddleware ----------------------------------------------------


def scrapy_mw(**settings: Any) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_PARSER": "scrapy_rerp.RerpRobotParser",
        # One request at a time: Scrapy 2.19's middleware hands None (= allow) to all but the
        # first request waiting on a robots.txt download under the asyncio reactor.
        "CONCURRENT_REQUESTS": 1,
        **settings,
    }


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_crawl_with_scrapys_middleware(server: Server) -> None:
    server.robots("\ufeffUser-agent: *\nDisallow: /\nAllow: /public\n".encode())
    urls = [server.url("/public/a"), server.url("/private"), server.url("/")]
    crawler = await crawl(settings=scrapy_mw(), urls=urls)
    assert sorted(server.paths()) == ["/public/a", "/robots.txt"]
    assert crawler.stats is not None
    assert crawler.stats.get_value("robotstxt/forbidden") == 2


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_crawl_with_scrapys_middleware_legacy_syntax(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /\nAllow: /public\n")
    await crawl(settings=scrapy_mw(RERP_SYNTAX="gym2008"), urls=[server.url("/public/a")])
    assert server.paths() == ["/robots.txt"]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_bad_setting_stops_the_crawl_at_start_up(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = await crawl(settings=scrapy_mw(RERP_SYNTAX="robots"), urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, "RERP_SYNTAX")
    assert server.paths() == []


# -- URLs as Scrapy writes them ---------------------------------------------------------------

TRICKY_URLS = [
    "https://h/wiki/Käyttäjä:",
    "https://h/wiki/K%C3%A4ytt%C3%A4j%C3%A4:",
    "https://h/a b",
    "https://h/a\\b",
    "https://h/a?x='1'&y=ä",
    "https://h/[x]|y",
    "https://h/%zz",
    " https://h/lead",
    "https://h/a#frag ment",
    "https://bücher.example/ß",
    "https://h?q=1",
    "https://h/plain/path?q=1",
]


@pytest.mark.parametrize("url", TRICKY_URLS)
def test_rules_url_is_the_url_scrapy_requests_carry(url: str) -> None:
    from scrapy import Request

    from scrapy_rerp.core.urls import rules_url

    assert rules_url(url) == Request(url).url
    assert rules_url(rules_url(url)) == rules_url(url)
