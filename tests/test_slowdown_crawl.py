"""Sites that say "slow down", in real crawls with the add-on: what the servers received, and
when. Each site is on its own host (127.0.0.2, .3, ...), so its own download slot. The answers'
reading and the controller alone are in core/test_slowdown.py and core/test_politeness.py."""

from __future__ import annotations

import threading
import time
from email.utils import formatdate
from statistics import median
from typing import Any

import pytest
import pytest_twisted
from pydispatch.dispatcher import getAllReceivers
from scrapy import signals
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError

from scrapy_rerp.core.slowdown import META
from scrapy_rerp.crawl.gate import RobotsGate
from tests.support.servers import (
    Hit,
    ListSpider,
    Reply,
    Server,
    crawl,
    gaps,
    ledger,
    rate_limited,
)

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

#: Retry-After 1 on a page's first request, then the page.
SLOW_ONCE = [Reply(status=429, headers={"Retry-After": "1"}), Reply(body="ok")]
#: The add-on's companion turned off, as in a project that enables RobotsTxtMiddleware by hand:
#: the answers are heard through Scrapy's response_downloaded signal all the same.
WITHOUT_COMPANION = {"DOWNLOADER_MIDDLEWARES": {"scrapy_rerp.AnswersMiddleware": None}}


def slowdown(**settings: Any) -> dict[str, Any]:
    """The add-on, one request at a time per site 0.1 s apart, and Scrapy's RetryMiddleware."""
    return {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0.1,
        "RETRY_ENABLED": True,
        **settings,
    }


class MetaSpider(ListSpider):
    """Keeps the slow-down decisions each response came with."""

    name = "meta"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decisions: dict[str, dict[str, Any] | None] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.decisions[response.url] = response.meta.get(META)


@pytest.fixture
def site() -> Any:
    with Server(host="127.0.0.2") as server:
        server.robots("User-agent: *\nAllow: /\n")
        yield server


@pytest.fixture
def healthy() -> Any:
    with Server(host="127.0.0.3") as server:
        server.robots("User-agent: *\nAllow: /\n")
        yield server


def pages(server: Server) -> list[Hit]:
    return [h for h in server.hits() if h.path != "/robots.txt"]


def sent_within(server: Server, start: float, end: float) -> list[str]:
    """What the server received after ``start`` and before ``end`` (monotonic times)."""
    return [f"{h.path} at +{h.time - start:.3f} s" for h in server.hits() if start < h.time < end]


def stats(crawler: Any) -> dict[str, Any]:
    return crawler.stats.get_stats()


@pytest.mark.parametrize("heard_by", ["companion", "signal"])
@pytest_twisted.ensureDeferred
async def test_retry_after_in_seconds_holds_the_origin_until_then(
    site: Server, heard_by: str
) -> None:
    site.route("/p0", SLOW_ONCE)
    site.route("/p1", SLOW_ONCE)
    urls = [site.url(f"/p{i}") for i in range(10)]
    settings = slowdown() if heard_by == "companion" else slowdown(**WITHOUT_COMPANION)
    crawler = await crawl(MetaSpider, settings, urls=urls)
    slow = [h for h in site.hits() if h.status == 429]
    assert len(slow) == 2
    for hit in slow:  # nothing at all reached the site during its cool-down
        assert sent_within(site, hit.time, hit.time + 1.0) == []
    # Every page in the end, the two answered 429 once more (their retries), nothing else.
    spider = crawler.spider
    assert sorted(spider.responses) == sorted(urls) and spider.failures == []
    assert sorted(h.path for h in pages(site)) == sorted(
        [f"/p{i}" for i in range(10)] * 1 + ["/p0", "/p1"]
    )
    decision = spider.decisions[site.url("/p0")]
    assert decision is not None
    assert decision["status"] == 429 and decision["decision"] == "cool_down"
    assert decision["retry_after"] == "1" and decision["retried"] is True
    assert decision["waited"] >= 0.9
    values = stats(crawler)
    assert values["robotstxt/slowdown/cooldowns"] == 2
    assert values["robotstxt/slowdown/retries"] == 2 and values["retry/count"] == 2
    counts = ledger(crawler)
    assert counts["slowdown/parked"] == values["robotstxt/slowdown/parked"] >= 2
    # Each request counted once in parked, however often it waited; the rest are re-parks.
    assert counts["parked"] <= len(urls) and counts.get("reparked", 0) >= 1
    assert counts["released"] == counts["parked"] + counts["reparked"]


@pytest.mark.parametrize("heard_by", ["companion", "signal"])
@pytest_twisted.ensureDeferred
async def test_a_slow_429_holds_the_origin_from_its_arrival(site: Server, heard_by: str) -> None:
    # The 429 takes longer to come than the slot's delay: when it arrives, Scrapy's downloader
    # would send the slot's next request at once. The answer is heard before it looks.
    site.route("/p0", [Reply(status=429, headers={"Retry-After": "1"}, delay=0.4), Reply()])
    urls = [site.url(f"/p{i}") for i in range(4)]
    settings = slowdown() if heard_by == "companion" else slowdown(**WITHOUT_COMPANION)
    crawler = await crawl(MetaSpider, settings, urls=urls)
    [slow] = [h for h in site.hits() if h.status == 429]
    answered = slow.time + 0.4
    assert sent_within(site, answered, answered + 1.0) == []
    assert sorted(crawler.spider.responses) == sorted(urls)


@pytest_twisted.ensureDeferred
async def test_a_503_with_an_http_date_holds_the_origin_until_that_date(site: Server) -> None:
    asked: list[tuple[float, float]] = []  # (when the 503 went, the time it names), monotonic

    def unavailable(hit: Hit) -> Reply:
        if asked:
            return Reply(body="ok")
        when = int(time.time()) + 2  # HTTP dates have whole seconds
        asked.append((hit.time, time.monotonic() + when - time.time()))
        return Reply(status=503, headers={"Retry-After": formatdate(when, usegmt=True)})

    site.route("/first", unavailable)
    urls = [site.url("/first")] + [site.url(f"/p{i}") for i in range(5)]
    crawler = await crawl(MetaSpider, slowdown(), urls=urls)
    [(answered, until)] = asked
    assert until - answered > 1.0
    assert sent_within(site, answered, until) == []
    assert sorted(crawler.spider.responses) == sorted(urls)
    decision = crawler.spider.decisions[site.url("/first")]
    assert decision["status"] == 503 and decision["decision"] == "cool_down"


def first_request_slowed(seconds: int) -> Any:
    """A site whose first page request, whichever it is, is answered 429 with Retry-After."""
    lock = threading.Lock()
    answered: list[Hit] = []

    def reply(hit: Hit) -> Reply:
        with lock:
            if not answered:
                answered.append(hit)
                return Reply(status=429, headers={"Retry-After": str(seconds)})
        return Reply(body="ok")

    return reply


@pytest_twisted.ensureDeferred
async def test_a_healthy_origin_beside_goes_on_at_full_speed(site: Server, healthy: Server) -> None:
    # Four requests at a time in the whole crawl, one per site. The cooling site's requests
    # fill the downloader first (the healthy site's robots.txt is slow): had they waited in
    # it, the healthy site would have had none left.
    site.default = first_request_slowed(2)
    healthy.robots("User-agent: *\nAllow: /\n", delay=0.3)
    healthy.default = lambda hit: Reply(body="ok", delay=0.05)
    # Twelve pages: about 1.0 s of serving, well within the cooling site's 2 s (twenty took
    # 1.9 s on an idle machine, and more on loaded cores, with no pause between them).
    urls = [site.url(f"/p{i}") for i in range(8)] + [healthy.url(f"/h{i}") for i in range(12)]
    crawler = await crawl(
        MetaSpider, slowdown(CONCURRENT_REQUESTS=4, DOWNLOAD_DELAY=0.01), urls=urls
    )
    [answered] = [h for h in site.hits() if h.status == 429]
    assert sent_within(site, answered.time, answered.time + 2.0) == []
    assert sorted(crawler.spider.responses) == sorted(urls)
    # Those queued in its slot when it answered left the downloader (two, as the healthy
    # site's robots.txt download held the fourth place).
    assert stats(crawler)["robotstxt/slowdown/taken_back"] >= 1
    # The healthy site's pages came in meanwhile, without a pause, all before the site that
    # asked to slow down got its next request.
    assert max(h.time for h in pages(healthy)) < answered.time + 2.0
    assert max(gaps(pages(healthy))) < 0.5


@pytest_twisted.ensureDeferred
async def test_spent_retries_fail_as_retrymiddleware_fails_them(site: Server) -> None:
    site.route("/busy", Reply(status=429, headers={"Retry-After": "1"}))
    urls = [site.url("/busy"), site.url("/fine")]
    crawler = await crawl(MetaSpider, slowdown(RETRY_TIMES=1), urls=urls)
    busy = site.hits("/busy")
    assert len(busy) == 2 and busy[1].time - busy[0].time >= 1.0  # its one retry, after
    spider = crawler.spider
    assert spider.responses == [site.url("/fine")]
    [failure] = spider.failures  # the errback, with the last 429, as Scrapy would fail it
    assert failure.check(HttpError) and failure.value.response.status == 429
    assert failure.value.response.meta[META]["retry_times"] == 1
    values = stats(crawler)
    assert values["retry/max_reached"] == 1 and values["robotstxt/slowdown/retries"] == 1
    ledger(crawler)


@pytest_twisted.ensureDeferred
async def test_without_retry_after_the_crawl_settles_at_the_rate_the_site_accepts(
    site: Server,
) -> None:
    interval = 0.08  # the site accepts 12.5 requests a second
    site.default = rate_limited(interval)
    urls = [site.url(f"/p{i}") for i in range(40)]
    crawler = await crawl(
        MetaSpider,
        slowdown(
            # Scrapy 2.19 starts every queued request of a slot at once when it has no delay,
            # whatever its concurrency: a small delay keeps the crawl to 2 at a time.
            DOWNLOAD_DELAY=0.01,
            CONCURRENT_REQUESTS_PER_DOMAIN=2,
            RETRY_TIMES=20,
            RERP_SLOWDOWN_START_FLOOR=0.05,
            RERP_SLOWDOWN_DECAY_AFTER=8,
        ),
        urls=urls,
    )
    assert sorted(crawler.spider.responses) == sorted(urls)
    refused = [h for h in pages(site) if h.status == 429]
    accepted = [h for h in pages(site) if h.status == 200]
    # The floor found is within a factor of 2 of the site's interval, and the crawl keeps to it:
    # one 429 each time the floor halves below it after 8 good answers.
    values = stats(crawler)
    assert interval <= values["robotstxt/slowdown/max_floor"] <= 2 * interval
    later = accepted[len(accepted) // 2 :]
    assert interval <= median(gaps(later)) <= 2 * interval + 0.02
    assert len(refused) <= 12, [round(h.time - refused[0].time, 3) for h in refused]
    assert values["robotstxt/slowdown/floor_raised"] >= 2
    assert values["robotstxt/slowdown/floor_decayed"] >= 1
    assert "robotstxt/slowdown/cooldowns" not in values


@pytest_twisted.ensureDeferred
async def test_a_retry_after_in_the_past_raises_the_floor_instead(site: Server) -> None:
    past = formatdate(time.time() - 3600, usegmt=True)
    site.route("/p0", [Reply(status=429, headers={"Retry-After": past}), Reply(body="ok")])
    urls = [site.url(f"/p{i}") for i in range(4)]
    crawler = await crawl(MetaSpider, slowdown(RERP_SLOWDOWN_START_FLOOR=0.3), urls=urls)
    decision = crawler.spider.decisions[site.url("/p0")]
    assert decision["decision"] == "floor_raised" and decision["floor"] == 0.3
    assert decision["retry_after"] == past
    assert "robotstxt/slowdown/cooldowns" not in stats(crawler)
    assert min(gaps(pages(site)[1:])) >= 0.3 - 0.02


@pytest_twisted.ensureDeferred
async def test_a_long_retry_after_is_capped(site: Server) -> None:
    site.route("/p0", [Reply(status=429, headers={"Retry-After": "3600"}), Reply(body="ok")])
    crawler = await crawl(MetaSpider, slowdown(RERP_SLOWDOWN_MAX_WAIT=0.5), urls=[site.url("/p0")])
    first, retry = site.hits("/p0")
    assert 0.5 <= retry.time - first.time < 2.0
    assert stats(crawler)["robotstxt/slowdown/cooldown_capped"] == 1


@pytest_twisted.ensureDeferred
async def test_slowdown_off_leaves_it_to_scrapy(site: Server) -> None:
    site.route("/p0", [Reply(status=429, headers={"Retry-After": "2"}), Reply(body="ok")])
    crawler = await crawl(MetaSpider, slowdown(RERP_SLOWDOWN=False), urls=[site.url("/p0")])
    first, retry = site.hits("/p0")
    assert retry.time - first.time < 1.0  # RetryMiddleware retried at once, as without us
    assert not [k for k in stats(crawler) if k.startswith("robotstxt/slowdown/")]
    assert crawler.spider.decisions[site.url("/p0")] is None


class HandlerSpider(ListSpider):
    """Counts, as each page arrives, the robots.txt layer's answer handlers of its crawler."""

    name = "handlers"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.handlers: list[int] = []

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.handlers.append(len(answer_handlers(self.crawler)))


def answer_handlers(crawler: Any) -> list[Any]:
    receivers = getAllReceivers(crawler, signals.response_downloaded)
    return [r for r in receivers if isinstance(getattr(r, "__self__", None), RobotsGate)]


@pytest.mark.parametrize("heard_by", ["companion", "signal"])
@pytest_twisted.ensureDeferred
async def test_the_answer_handler_is_let_go_when_the_crawl_closes(
    site: Server, heard_by: str
) -> None:
    # Held strongly while the crawl runs (a weak reference costs every response), it would
    # keep the crawler alive after it. The companion hears failed downloads only: the answers
    # are heard by the handler either way, before the slot's next request may leave.
    site.route("/p0", SLOW_ONCE)
    settings = slowdown() if heard_by == "companion" else slowdown(**WITHOUT_COMPANION)
    crawler = await crawl(HandlerSpider, settings, urls=[site.url("/p0"), site.url("/p1")])
    assert crawler.spider.handlers == [1, 1]
    assert answer_handlers(crawler) == []
    assert stats(crawler)["robotstxt/slowdown/cooldowns"] == 1


@pytest.mark.parametrize("heard_by", ["companion", "signal"])
@pytest_twisted.ensureDeferred
async def test_answers_from_scrapys_http_cache_are_not_heard(
    site: Server, heard_by: str, tmp_path: Any
) -> None:
    # The first crawl stores the 429 in the cache, the second is answered from it: the site
    # said nothing to the second crawl, which goes on at once.
    site.route("/p0", [Reply(status=429, headers={"Retry-After": "1"})] * 2 + [Reply(body="ok")])
    settings = slowdown(
        HTTPCACHE_ENABLED=True,
        HTTPCACHE_DIR=str(tmp_path / "cache"),
        RETRY_ENABLED=False,
        HTTPERROR_ALLOWED_CODES=[429],  # the spider sees the answer and its decision
        **({} if heard_by == "companion" else WITHOUT_COMPANION),
    )
    first = await crawl(MetaSpider, settings, urls=[site.url("/p0")])
    assert stats(first)["robotstxt/slowdown/cooldowns"] == 1
    asked = len(site.hits("/p0"))
    second = await crawl(MetaSpider, settings, urls=[site.url("/p0")])
    assert len(site.hits("/p0")) == asked  # answered from the cache
    assert stats(second)["httpcache/hit"] >= 1
    assert not [k for k in stats(second) if k.startswith("robotstxt/slowdown/")]
    assert second.spider.decisions[site.url("/p0")] is None


# -- a closing crawl --------------------------------------------------------------------------


@pytest.mark.parametrize("jobdir", [False, True], ids=["dropped", "kept"])
@pytest_twisted.ensureDeferred
async def test_a_closing_crawl_takes_back_what_waits_behind_a_raised_floor(
    caplog: pytest.LogCaptureFixture, tmp_path: Any, jobdir: bool
) -> None:
    """A site that answers 429 to everything, without Retry-After: its floor rises towards
    60 s. Scrapy alone would send the requests already queued in its slot, a floor apart, to
    the end (about 14 minutes for 15); the closing crawl takes them back and stops at once."""
    import logging

    with Server(host="127.0.0.2") as site:
        site.robots("User-agent: *\nCrawl-delay: 0.5\n")  # one request at a time, queued
        site.default = lambda hit: Reply(status=429)
        urls = [site.url(f"/p{i}") for i in range(15)]
        settings = slowdown(
            RETRY_ENABLED=False,
            CONCURRENT_REQUESTS_PER_DOMAIN=8,
            DOWNLOAD_DELAY=0,
            RERP_SLOWDOWN_START_FLOOR=4,
            CLOSESPIDER_TIMEOUT=3,
        )
        if jobdir:
            settings["JOBDIR"] = str(tmp_path / "job")
        caplog.set_level(logging.INFO)
        started = time.monotonic()
        crawler = await crawl(ListSpider, settings, urls=urls)
        took = time.monotonic() - started
    sent = [h for h in site.hits() if h.path != "/robots.txt"]
    # The first page's 429 raised the floor to 4 s (then 8): one or two pages in the 3 s,
    # then nothing: the crawl closed within a moment of CLOSESPIDER_TIMEOUT.
    assert 1 <= len(sent) <= 3, [round(h.time - started, 2) for h in sent]
    assert took < 3 + 2.5, took
    counts = ledger(crawler)
    taken = crawler.stats.get_value("robotstxt/crawl_delay/taken_back_at_close", 0)
    assert taken >= 1
    if jobdir:
        assert counts.get("persisted", 0) >= taken
    else:
        assert counts["dropped/crawl_closing"] >= taken
        summary = [
            r.getMessage()
            for r in caplog.records
            if r.getMessage().startswith("Crawl closing: dropped")
        ]
        assert len(summary) == 1
        assert "still waiting for a Crawl-delay or raised floor in a download slot" in summary[0]
    assert crawler.stats.get_value("finish_reason") == "closespider_timeout"
