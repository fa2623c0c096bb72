"""``scrapy robots URL...``: what robots.txt decides for URLs, asked through Scrapy itself.

A Scrapy command (entry point ``robots`` in the ``scrapy.commands`` group): it runs a crawl with
the project's settings (user agent, ``RERP_*``, proxies and other middlewares) and
``scrapy_rerp.Addon`` switched on, so robots.txt is downloaded exactly as in the project's
crawls. The pages themselves are never downloaded: a downloader middleware at the end of the
chain answers them with an empty response once the robots.txt middleware has let them through.
It prints, per URL, the decision, the robots.txt line that decided, the Crawl-delay and the
sitemaps; ``--format json`` prints one JSON document instead.

Exit status: 0 every URL allowed, 1 some URL disallowed (or its robots.txt unreachable), 2 a
usage error or a crawl that could not start.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import IgnoreRequest, UsageError
from scrapy.http import Response
from scrapy.settings import SETTINGS_PRIORITIES

from scrapy_rerp.addon import Addon
from scrapy_rerp.cli._summary import Summary
from scrapy_rerp.core.data import Outcome
from scrapy_rerp.core.settings import ROBOTS_ORIGIN_META
from scrapy_rerp.core.status import download_failure
from scrapy_rerp.core.urls import (
    crawl_decision,
    origin_of,
    request_url,
    robots_url_of,
    rules_url,
)
from scrapy_rerp.core.wording import duration
from scrapy_rerp.crawl.compat import loaded
from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware

if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace

    from twisted.python.failure import Failure

__all__ = ["RobotsCommand"]

_META = "rerp_robots_command"


class _Answer:
    """The last downloader middleware: answers the command's own requests without a download,
    and notes why a robots.txt download failed (the crawl keeps only that it did)."""

    def __init__(self) -> None:
        self.causes: dict[str, str] = {}  # origin -> why its robots.txt was not downloaded

    def process_request(self, request: Request, spider: Spider | None = None) -> Response | None:
        if request.meta.get(_META):
            return Response(request.url, status=200, request=request)
        return None

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        origin = request.meta.get(ROBOTS_ORIGIN_META)
        if origin:
            self.causes[origin] = download_failure(exception)


class _RobotsSpider(Spider):
    name = "scrapy_rerp_robots"

    def __init__(self, urls: list[str], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.urls = urls
        self.outcomes: dict[str, tuple[str, str]] = {}  # url -> (verdict, message)
        self.user_agents: dict[str, str] = {}

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(
                url,
                callback=self.passed,
                errback=self.stopped,
                dont_filter=True,
                meta={_META: True, "rerp_url": url},
            )

    def passed(self, response: Response) -> None:
        self._note(response.request, "allowed", "")

    def stopped(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        message = failure.getErrorMessage()
        if failure.check(IgnoreRequest) and message == "Forbidden by robots.txt":
            self._note(request, "disallowed", "")
        else:
            self._note(request, "dropped" if failure.check(IgnoreRequest) else "error", message)

    def _note(self, request: Request | None, verdict: str, message: str) -> None:
        if request is None:
            return
        url = request.url
        self.outcomes[request.meta.get("rerp_url", url)] = (verdict, message)
        middleware = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        if middleware is not None:
            self.user_agents[url] = middleware.user_agent_for(request)


class RobotsCommand(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False}

    def syntax(self) -> str:
        return "[options] <url>..."

    def short_desc(self) -> str:
        return "Say what robots.txt decides for URLs, with the project's settings"

    def long_desc(self) -> str:
        return (
            "Download robots.txt through Scrapy, with the project's settings and user agent and "
            "scrapy_rerp's middleware, and print for each URL the decision, the robots.txt line "
            "that decided, the Crawl-delay and the sitemaps. The pages are not downloaded."
        )

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--format",
            choices=["text", "json"],
            default="text",
            help="text (default) or json: one JSON document on standard output",
        )

    def process_options(self, args: list[str], opts: Namespace) -> None:
        # Scrapy parses a command's options with parse_known_args: an option it does not know
        # would stay among the URLs.
        unknown = [arg for arg in args if arg.startswith("-") and arg != "-"]
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")
        super().process_options(args, opts)
        settings = self.settings
        assert settings is not None

        def force(name: str, value: Any) -> None:
            # Above the project's settings; a -s on the command line still wins.
            if (settings.getpriority(name) or 0) < SETTINGS_PRIORITIES["cmdline"]:
                settings.set(name, value, priority="cmdline")

        force("ROBOTSTXT_OBEY", True)
        # The command reports an unreachable robots.txt at once instead of waiting for it.
        force("RERP_UNREACHABLE_MAX_WAIT", 0)
        addons = settings.getdict("ADDONS")
        if not any(loaded(key) is Addon for key in addons):
            settings.set("ADDONS", {**addons, "scrapy_rerp.Addon": 100}, priority="cmdline")
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", _Answer, 10**6)

    def run(self, args: list[str], opts: Namespace) -> None:
        if not args:
            raise UsageError("give at least one URL")
        for url in args:
            if not url.lower().startswith(("http://", "https://")):
                raise UsageError(f"not an http(s) URL: {url}")
            try:
                request_url(url)
            except ValueError as error:
                raise UsageError(f"not a URL a crawler can request: {url} ({error})") from error
        assert self.crawler_process is not None
        crawler = self.crawler_process.create_crawler(_RobotsSpider)
        self.crawler_process.crawl(crawler, urls=list(args))
        self.crawler_process.start()
        spider = crawler.spider
        if self.crawler_process.bootstrap_failed or not isinstance(spider, _RobotsSpider):
            self.exitcode = 2
            return
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
        answer = crawler.get_downloader_middleware(_Answer)
        causes = answer.causes if answer is not None else {}
        results = [_result(url, spider, middleware, causes) for url in args]
        reason = crawler.stats.get_value("finish_reason") if crawler.stats else None
        if reason == "rerp_settings_error":
            self.exitcode = 2
        else:
            self.exitcode = 0 if all(r["decision"] == "allowed" for r in results) else 1
        if opts.format == "json":
            json.dump({"results": results, "exit_status": self.exitcode}, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            _print(results)


def _result(
    url: str, spider: _RobotsSpider, middleware: Any, causes: dict[str, str]
) -> dict[str, Any]:
    verdict, message = spider.outcomes.get(url, ("error", "no outcome"))
    crawl_url = rules_url(url)
    user_agent = spider.user_agents.get(crawl_url, "")
    result: dict[str, Any] = {
        "url": url,
        "decision": verdict,
        "message": message,
        "user_agent": user_agent,
        "robots_txt": robots_url_of(crawl_url),
        # From the robots.txt's entry, when the crawl has one.
        **dict.fromkeys(("status", "outcome", "line", "rule", "reason", "crawl_delay")),
        "sitemaps": [],
        "invalid_sitemaps": [],
    }
    entry = middleware.entry_for(crawl_url) if middleware is not None else None
    if entry is None:
        return result
    result.update(status=entry.status, outcome=entry.outcome)
    robots = entry.robots
    if verdict == "dropped" and robots is None and entry.outcome == Outcome.UNREACHABLE:
        # The crawl's message says how long it waited (the command does not wait): say why.
        origin = origin_of(crawl_url)
        cause = f"HTTP {entry.status}" if entry.status else causes.get(origin, "no answer")
        result["message"] = (
            f"robots.txt of {origin} unreachable ({cause}): a crawl downloads nothing from "
            "this site until it answers"
        )
    if robots is not None:
        decision = crawl_decision(robots, crawl_url, user_agent)
        result.update(line=decision.line, rule=decision.rule, reason=decision.reason)
        result["crawl_delay"] = robots.crawl_delay(user_agent)
        # As the crawl's sitemap discovery reads them (and fetch shows them): resolved against
        # the robots.txt URL, and a bad line skipped on its own.
        summary = Summary.of(robots, entry.url or result["robots_txt"])
        result.update(sitemaps=summary.sitemaps, invalid_sitemaps=summary.invalid_sitemaps)
    return result


def _print(results: list[dict[str, Any]]) -> None:
    for result in results:
        print(f"{result['decision'].upper():<10}  {result['url']}")
        status = result["status"] if result["status"] is not None else "-"
        outcome = result["outcome"] or "unknown"
        print(f"  robots.txt   {result['robots_txt']} (HTTP {status}, {outcome})")
        if result["message"]:
            print(f"  why          {result['message']}")
        elif result["line"] is not None:
            print(f"  decided by   line {result['line']}: {result['rule']} ({result['reason']})")
        elif result["reason"]:
            print(f"  decided by   {result['reason']}")
        print(f"  user agent   {result['user_agent']}")
        delay = result["crawl_delay"]
        print(f"  crawl-delay  {'none' if delay is None else duration(delay)}")
        for sitemap in result["sitemaps"]:
            print(f"  sitemap      {sitemap}")
        for invalid in result["invalid_sitemaps"]:
            print(f"  sitemap      skipped {invalid['sitemap']!r}: {invalid['reason']}")
