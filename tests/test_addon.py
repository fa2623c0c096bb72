"""The Addon on real crawlers: one line turns scrapy_rerp's robots.txt handling on."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyMiddleware
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from scrapy_rerp import (
    Addon,
    AnswersMiddleware,
    PageDirectivesMiddleware,
    RobotsTxtMiddleware,
    SigningMiddleware,
)
from scrapy_rerp.core.settings import RerpSettingsError
from scrapy_rerp.crawl.compat import component_priorities
from tests.support.servers import Server, crawl, stopped_by_settings

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

ADDON = {"ADDONS": {"scrapy_rerp.Addon": 100}}


def middlewares(crawler: Crawler, setting: str = "DOWNLOADER_MIDDLEWARES") -> dict[type, Any]:
    """The enabled middlewares as the crawler resolved them: class -> priority."""
    merged = component_priorities(crawler.settings, setting)
    resolved: dict[type, Any] = {}
    for key, priority in merged.items():
        if priority is None:
            continue
        cls = load_object(key)
        assert cls not in resolved, f"{cls} listed twice"
        resolved[cls] = priority
    return resolved


def active(crawler: Crawler) -> list[type]:
    assert crawler.engine is not None
    return [type(mw) for mw in crawler.engine.downloader.middleware.middlewares]


def active_spider_middlewares(crawler: Crawler) -> list[type]:
    assert crawler.engine is not None
    return [type(mw) for mw in crawler.engine.scraper.spidermw.middlewares]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_addon_alone_turns_everything_on(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private\n")
    crawler = await crawl(settings=ADDON, urls=[server.url("/a"), server.url("/private/b")])
    assert sorted(server.paths()) == ["/a", "/robots.txt"]
    settings = crawler.settings
    assert settings.getbool("ROBOTSTXT_OBEY")
    assert settings.getpriority("ROBOTSTXT_OBEY") == settings.getpriority("ROBOTSTXT_PARSER")
    assert load_object(settings["ROBOTSTXT_PARSER"]).__name__ == "RerpRobotParser"
    resolved = middlewares(crawler)
    assert ScrapyMiddleware not in resolved
    assert resolved[RobotsTxtMiddleware] == 100
    assert RobotsTxtMiddleware in active(crawler) and ScrapyMiddleware not in active(crawler)
    assert crawler.get_downloader_middleware(RobotsTxtMiddleware) is not None
    # Its companion hears every failed download before any other process_exception.
    assert resolved[AnswersMiddleware] == 950
    assert active(crawler)[-1] is AnswersMiddleware
    # The signatures are made last (990, the highest), and only with a key: without one the
    # signing middleware is not built, and no other has a process_exception after the answers'.
    assert resolved[SigningMiddleware] == 990 == max(resolved.values())
    assert SigningMiddleware not in active(crawler)
    assert crawler.stats is not None
    assert crawler.stats.get_value("robotstxt/forbidden") == 1
    # Page directives too, close to the spider.
    assert middlewares(crawler, "SPIDER_MIDDLEWARES")[PageDirectivesMiddleware] == 950
    assert active_spider_middlewares(crawler).count(PageDirectivesMiddleware) == 1
    assert crawler.get_spider_middleware(PageDirectivesMiddleware) is not None
    assert crawler.stats.get_value("robotstxt/page/responses") == 1


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_the_log_lists_the_middlewares_under_their_public_names(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy.middleware")
    await crawl(settings=ADDON, urls=[server.url("/a")])
    enabled = {
        r.getMessage().split(":", 1)[0]: r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("Enabled ")
    }
    downloader = enabled["Enabled downloader middlewares"]
    assert "'scrapy_rerp.RobotsTxtMiddleware'" in downloader
    assert "'scrapy_rerp.AnswersMiddleware'" in downloader
    assert "'scrapy_rerp.PageDirectivesMiddleware'" in enabled["Enabled spider middlewares"]
    # The names the docs give, never a private module's.
    assert "scrapy_rerp._" not in "".join(enabled.values())
    assert "scrapy_rerp.middleware" not in "".join(enabled.values())


def test_settings_at_addon_priority() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    addon_priority = 15  # scrapy.settings.SETTINGS_PRIORITIES["addon"]
    assert settings.getpriority("ROBOTSTXT_OBEY") == addon_priority
    assert settings.getpriority("ROBOTSTXT_PARSER") == addon_priority
    merged = component_priorities(settings, "DOWNLOADER_MIDDLEWARES")
    resolved = {load_object(k): v for k, v in merged.items() if v is not None}
    assert ScrapyMiddleware not in resolved and resolved[RobotsTxtMiddleware] == 100
    # Its process_exception runs first: before RetryMiddleware turns a failed download into
    # a retry.
    priorities = {cls.__name__: v for cls, v in resolved.items()}
    assert resolved[AnswersMiddleware] > priorities["HttpCacheMiddleware"]
    assert resolved[AnswersMiddleware] > priorities["RetryMiddleware"]
    spider_side = component_priorities(settings, "SPIDER_MIDDLEWARES")
    resolved = {load_object(k): v for k, v in spider_side.items() if v is not None}
    assert resolved[PageDirectivesMiddleware] == 950
    # After Scrapy's DepthMiddleware, so that it sees the callback's output first; before
    # MetaCopyDetectionMiddleware on the Scrapy versions that have it.
    priorities = {cls.__name__: v for cls, v in resolved.items()}
    assert priorities["DepthMiddleware"] < 950
    assert 950 < priorities.get("MetaCopyDetectionMiddleware", 1000)


def test_applied_twice_no_duplicates() -> None:
    settings = Settings()
    Addon().update_settings(settings)
    Addon().update_settings(settings)
    keys = [load_object(k) for k in settings.getdict("DOWNLOADER_MIDDLEWARES")]
    assert keys.count(RobotsTxtMiddleware) == 1 and keys.count(ScrapyMiddleware) == 1
    assert keys.count(AnswersMiddleware) == 1
    keys = [load_object(k) for k in settings.getdict("SPIDER_MIDDLEWARES")]
    assert keys.count(PageDirectivesMiddleware) == 1


@pytest.mark.parametrize("priority", [None, 600])
def test_a_project_listing_of_the_page_middleware_is_kept(priority: int | None) -> None:
    for key in (
        "scrapy_rerp.PageDirectivesMiddleware",
        "scrapy_rerp.crawl.page_directives.PageDirectivesMiddleware",
    ):
        settings = Settings({"SPIDER_MIDDLEWARES": {key: priority}})
        Addon().update_settings(settings)
        assert settings.getdict("SPIDER_MIDDLEWARES") == {
            key: priority,
            "scrapy_rerp.EvidenceItemsMiddleware": 900,
        }


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_project_listing_kept_without_duplicate(server: Server) -> None:
    settings = {
        **ADDON,
        "DOWNLOADER_MIDDLEWARES": {"scrapy_rerp.middleware.RobotsTxtMiddleware": 120},
    }
    crawler = await crawl(settings=settings, urls=[server.url("/a")])
    resolved = middlewares(crawler)
    assert resolved[RobotsTxtMiddleware] == 120
    assert ScrapyMiddleware not in resolved
    assert active(crawler).count(RobotsTxtMiddleware) == 1
    assert server.paths() == ["/robots.txt", "/a"]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_takes_the_priority_the_project_gave_scrapys(server: Server) -> None:
    settings = {**ADDON, "DOWNLOADER_MIDDLEWARES": {ScrapyMiddleware: 200}}
    crawler = await crawl(settings=settings, urls=[server.url("/a")])
    resolved = middlewares(crawler)
    assert resolved[RobotsTxtMiddleware] == 200 and ScrapyMiddleware not in resolved


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_project_can_still_turn_robots_off(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /\n")
    await crawl(settings={**ADDON, "ROBOTSTXT_OBEY": False}, urls=[server.url("/a")])
    assert server.paths() == ["/a"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("RERP_SYNTAX", "rfc"), ("RERP_MAX_CRAWL_DELAY", -2), ("RERP_CRAWL_DELAY", "sometimes")],
)
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_misconfiguration_stops_the_crawl_at_start_up(
    server: Server, name: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = await crawl(settings={**ADDON, name: value}, urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, name)
    assert server.paths() == []


def test_applied_by_hand_a_bad_value_is_an_error() -> None:
    with pytest.raises(RerpSettingsError, match="RERP_SYNTAX"):
        Addon().update_settings(Settings({"RERP_SYNTAX": "rfc"}))


def test_repr_is_readable() -> None:
    assert repr(Addon()) == "scrapy_rerp.Addon"


SPIDER = """
import scrapy

class OneUrl(scrapy.Spider):
    name = "one"
    custom_settings = {{
        "ADDONS": {{"scrapy_rerp.Addon": 100}},
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,  # Scrapy >= 2.19, which warns without asyncio
    }}
    start_urls = [{url!r}]

    def parse(self, response):
        pass
"""


#: A fleet whose shared store cannot start stops the crawl as a bad value does.
FLEET = "RERP_CACHE=scrapy_rerp.cache.RedisOriginCache"
NO_ASYNCIO = "TWISTED_REACTOR=twisted.internet.epollreactor.EPollReactor"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["RERP_SYNTAX=rfc"], "RERP_SYNTAX = 'rfc' is invalid"),
        (["RERP_CACHE=nope.Cache"], "RERP_CACHE = 'nope.Cache' is invalid"),
        ([FLEET], "RERP_REDIS_URL = None is invalid: expected a redis:// URL"),
        (
            [FLEET, "RERP_REDIS_URL=redis://127.0.0.1:1/0", NO_ASYNCIO],
            "RERP_CACHE = 'scrapy_rerp.cache.RedisOriginCache' is shared through asyncio",
        ),
    ],
)
def test_scrapy_command_line_shows_one_message_and_exits_1(
    server: Server, tmp_path: Path, settings: list[str], message: str
) -> None:
    spider = tmp_path / "spider.py"
    spider.write_text(SPIDER.format(url=server.url("/a")))
    options = [arg for setting in settings for arg in ("-s", setting)]
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    log = done.stderr
    # As Scrapy's own bad settings: a crawl that did not start is a failure for a script or CI.
    assert done.returncode == 1, log
    # The one line that names the setting, and no other warning or error.
    (line,) = [
        line
        for line in log.splitlines()
        if any(f"] {level}: " in line for level in ("WARNING", "ERROR", "CRITICAL"))
    ]
    assert "] ERROR: " in line and message in line and log.count(message) == 1, log
    assert line.endswith("; the crawl stops before it starts"), line
    assert "Traceback" not in log and "Task exception" not in log, log
    assert "Spider closed (rerp_settings_error)" in log
    assert server.paths() == []


def test_scrapy_command_line_warns_about_a_misspelled_setting(
    server: Server, tmp_path: Path
) -> None:
    server.robots("User-agent: *\nDisallow:\n")
    spider = tmp_path / "spider.py"
    spider.write_text(SPIDER.format(url=server.url("/a")))
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider)]
        + ["-s", "RERP_SITEMAP_DISCOVER=1", "-s", "RERP_CRAWL_DELAYS=0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    log = done.stderr
    assert "Unknown setting RERP_SITEMAP_DISCOVER" in log
    assert "did you mean RERP_SITEMAP_DISCOVERY?" in log
    assert "did you mean RERP_CRAWL_DELAY?" in log
    assert "Spider closed (finished)" in log
    assert sorted(server.paths()) == ["/a", "/robots.txt"]
