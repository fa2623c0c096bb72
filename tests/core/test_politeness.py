"""The politeness controller alone, with its parts (core/floors.py: floors and raised floors;
core/cool_downs.py: cool-downs) and the robots.txt backoff, with fakes
for the slots and the parking lot (tests/support/politeness.py; no crawl). A fleet worker's
(turns, shared slow-downs): tests/fleet/test_delay.py. Gaps measured at a server are in
tests/crawl/test_slots.py; slow-downs in real crawls in tests/test_slowdown_crawl.py."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from scrapy_rerp.core.admission import GO, PARKED
from scrapy_rerp.core.cool_downs import CoolDowns
from scrapy_rerp.core.floors import STAT_APPLIED, STAT_CAPPED, STAT_CLEARED, STAT_MAX, wanted_delay
from scrapy_rerp.core.politeness import STAT_RETRIES, Politeness
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.slowdown import COOL_DOWN, FLOOR_KEPT, FLOOR_RAISED, META
from scrapy_rerp.engine import parse
from tests.support import AsyncioRuntime, Stats
from tests.support.politeness import A, B, Parking, Request, Throttle, answer, sent
from tests.support.scenarios import scenario


def politeness(download_delay: float = 0.0, **settings: Any) -> Politeness:
    rerp = RerpSettings.from_settings(settings, require_obey=False)
    return Politeness(rerp, download_delay, Throttle(), stats=Stats())


@pytest.mark.parametrize(
    ("lines", "wanted"),
    [
        ("Crawl-delay: 2", 2.0),
        ("Request-rate: 3/15", 5.0),
        ("Crawl-delay: 2\nRequest-rate: 1/10s", 10.0),
        ("Crawl-delay: 0", None),
        ("Disallow: /x", None),
    ],
)
def test_the_wanted_delay_is_crawl_delay_or_the_request_rate_interval(
    lines: str, wanted: float | None
) -> None:
    assert wanted_delay(parse(f"User-agent: *\n{lines}\n"), "Bot") == wanted


def test_floors_are_capped_raised_to_download_delay_and_applied(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = politeness(download_delay=1.5, RERP_MAX_CRAWL_DELAY=10)
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    assert p.rules_known(A, parse("User-agent: *\nCrawl-delay: 100\n"), "Bot") == 10.0
    assert p.rules_known(A, parse("User-agent: *\nCrawl-delay: 100\n"), "Bot") == 10.0
    assert p.rules_known(B, parse("User-agent: *\nCrawl-delay: 1\n"), "Bot") == 1.5
    assert throttle.floors == {A: 10.0, B: 1.5}
    stats = p.stats
    assert stats.get_value(STAT_APPLIED) == 3 and stats.get_value(STAT_CAPPED) == 2
    assert stats.get_value(STAT_MAX) == 10.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [  # once per origin
        f"robots.txt of {A} asks for 100 s between requests; capped to RERP_MAX_CRAWL_DELAY = 10 s"
    ]
    # No delay any more: the floor goes; forgetting an origin clears its floor too.
    assert p.rules_known(A, parse("User-agent: *\nDisallow: /x\n"), "Bot") is None
    p.forget(B)
    assert throttle.floors == {} and stats.get_value(STAT_CLEARED) == 2
    assert (
        p.floors.floor_for(parse("User-agent: *\nCrawl-delay: 3\n"), "Bot") == 3.0
    )  # no side effect
    assert throttle.floors == {}


def test_a_floor_is_told_at_info_once_per_origin(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    p = politeness()
    for delay in ("2", "2", "172803", "172803"):  # a refetch, then new rules, capped
        p.rules_known(A, parse(f"User-agent: *\nCrawl-delay: {delay}\n"), "Bot")
    p.forget(A)  # evicted: told again when it comes back
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 2\n"), "Bot")
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    told = f"Crawl-delay: at least 2 s between requests to {A} (its robots.txt asks for 2 s)"
    capped = (
        f"robots.txt of {A} asks for 2.0 days between requests; capped to "
        "RERP_MAX_CRAWL_DELAY = 30 s"
    )
    assert lines == [
        ("INFO", told),
        ("DEBUG", told),
        ("WARNING", capped),
        ("DEBUG", capped),
        ("INFO", told),
    ]


@pytest.mark.parametrize("settings", [{"RERP_CRAWL_DELAY": False}, {"RERP_MAX_CRAWL_DELAY": 0}])
def test_floors_off(settings: dict[str, Any]) -> None:
    p = politeness(**settings)
    robots = parse("User-agent: *\nCrawl-delay: 3\n")
    assert p.throttle is None
    assert p.rules_known(A, robots, "Bot") is None and p.floors.floor_for(robots, "Bot") is None


def test_robots_txt_retries_back_off_and_honour_retry_after() -> None:
    p = politeness(RERP_RETRY_BACKOFF_BASE=1, RERP_RETRY_BACKOFF_MAX=8)
    assert [p.robots_retry_in(n, None) for n in range(1, 6)] == [1, 2, 4, 8, 8]
    assert p.robots_retry_in(1, 30.0) == 30.0
    assert p.robots_retry_in(1, 10**9) == 24 * 3600  # a day at most


# -- slow-downs ---------------------------------------------------------------------------------


def slowing(
    download_delay: float = 0.0, **settings: Any
) -> tuple[Politeness, Parking, AsyncioRuntime]:
    """A single process's politeness with a parking lot and a runtime: slow-downs on."""
    parking, runtime = Parking(), AsyncioRuntime()
    rerp = RerpSettings.from_settings(settings, require_obey=False)
    p = Politeness(
        rerp, download_delay, Throttle(), stats=Stats(), parking=parking, runtime=runtime
    )
    return p, parking, runtime


@scenario
async def test_a_cool_down_parks_the_origin_s_requests_and_its_end_releases_them() -> None:
    p, parking, runtime = slowing()
    queued_a, queued_b = Request("queued a"), Request("queued b")
    p.throttle.queued = [(A, queued_a), (B, queued_b)]  # type: ignore[union-attr]
    meta = sent(retry_times=0)
    before = time.time()
    p.slow_answer(A, answer(429, 0.2), meta)
    decision = meta[META]
    assert decision["decision"] == COOL_DOWN and decision["status"] == 429
    assert decision["retry_after"] == "0.2" and decision["wait"] == 0.2
    assert before + 0.2 <= decision["until"] <= time.time() + 0.2
    # What waited in A's slot left it, parked; B's did not.
    assert parking.parked[CoolDowns.key(A)] == [queued_a]
    assert p.throttle.queued == [(B, queued_b)]  # type: ignore[union-attr]
    later = Request("later")
    assert p.admit(A, later) is PARKED
    assert p.admit(B, Request("other origin")) is GO
    assert 0.1 < (p.cooling(A) or 0) <= 0.2 and p.cooling(B) is None
    assert set(p.cool_down_ends()) == {A}
    await asyncio.sleep(0.3)
    assert parking.released == [queued_a, later] and p.cooling(A) is None
    # Back from the cool-down: admitted, with the wait counted once in meta and stats.
    assert p.admit(A, later) is GO
    assert 0.2 <= later.meta[META]["waited"] < 0.5
    stats = p.stats.values
    assert stats["robotstxt/slowdown/cooldowns"] == 1
    assert stats["robotstxt/slowdown/parked"] == 2
    assert stats["robotstxt/slowdown/taken_back"] == 1
    assert stats["robotstxt/slowdown/seconds_waited"] == pytest.approx(
        later.meta[META]["waited"], abs=0.2
    )
    await runtime.settle()


@scenario
async def test_a_cool_down_only_ends_later_and_is_capped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    p, _, runtime = slowing(RERP_SLOWDOWN_MAX_WAIT=0.3)
    p.slow_answer(A, answer(503, 0.2), sent())
    p.slow_answer(A, answer(503, 0.1), sent())  # ends sooner: nothing changes
    assert p.stats.values.get("robotstxt/slowdown/cooldown_extended") is None
    meta = sent()
    p.slow_answer(A, answer(429, 3600), meta)  # capped to 0.3 s
    assert meta[META]["wait"] == 0.3
    assert 0.25 < (p.cooling(A) or 0) <= 0.3
    stats = p.stats.values
    assert stats["robotstxt/slowdown/cooldowns"] == 1
    assert stats["robotstxt/slowdown/cooldown_extended"] == 1
    assert stats["robotstxt/slowdown/cooldown_capped"] == 1
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1  # one INFO line per cool-down, naming the origin and its end
    assert infos[0].startswith(f"Slow down: {A} answered 503 with Retry-After: 0.2; nothing more")
    assert "until 20" in infos[0]
    p.stop()  # the timer ends with the crawl; the cool-down is still known (kept at a pause)
    assert set(p.cool_down_ends()) == {A}
    await runtime.settle()


@scenario
async def test_without_retry_after_the_floor_doubles_then_halves_on_good_answers() -> None:
    p, _, _ = slowing(
        RERP_SLOWDOWN_START_FLOOR=0.5, RERP_SLOWDOWN_MAX_FLOOR=1.5, RERP_SLOWDOWN_DECAY_AFTER=3
    )
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    first = sent(0.01)
    p.slow_answer(A, answer(429), first)
    assert first[META]["decision"] == FLOOR_RAISED and first[META]["floor"] == 0.5
    # A request that left before the raise says nothing about the new floor.
    stale = sent(60.0)
    p.slow_answer(A, answer(503), stale)
    assert stale[META]["decision"] == FLOOR_KEPT and throttle.floors[A] == 0.5
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 1.0
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 1.5  # RERP_SLOWDOWN_MAX_FLOOR
    # Good answers: those of requests sent before the change do not count.
    p.good_answer(A, sent(60.0))
    for _ in range(2):
        p.good_answer(A, sent())
    assert throttle.floors[A] == 1.5
    p.good_answer(A, sent())
    assert throttle.floors[A] == 0.75
    for _ in range(3 * 7):  # 0.375, 0.1875, ... 0.0117, then below FLOOR_GONE
        p.good_answer(A, sent())
    assert A not in throttle.floors and not p.slowed  # halved below FLOOR_GONE: dropped
    stats = p.stats.values
    assert stats["robotstxt/slowdown/floor_raised"] == 3
    assert stats["robotstxt/slowdown/floor_decayed"] >= 1
    assert stats["robotstxt/slowdown/floor_dropped"] == 1
    assert stats["robotstxt/slowdown/max_floor"] == 1.5


@scenario
async def test_a_raised_floor_never_goes_below_crawl_delay_or_download_delay() -> None:
    p, _, _ = slowing(download_delay=0.2, RERP_SLOWDOWN_START_FLOOR=0.1)
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 2\n"), "Bot")
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 4.0  # twice the origin's own floor
    p.slow_answer(B, answer(429), sent())
    assert throttle.floors[B] == 0.4  # twice DOWNLOAD_DELAY
    # New rules without Crawl-delay keep the raised floor; its decay ends at the own floor.
    p.rules_known(A, parse("User-agent: *\nDisallow: /x\n"), "Bot")
    assert throttle.floors[A] == 4.0
    p.forget(A)  # the origin left the cache: its floors go
    assert A not in throttle.floors and not p.floors.is_raised(A)


@scenario
async def test_a_retry_of_a_slow_down_answer_is_counted_once() -> None:
    p, _, _ = slowing()
    original = Request("answered 429")
    original.meta.update(sent(retry_times=0))
    p.slow_answer(A, answer(429), original.meta)
    retry = Request("its retry")
    retry.meta = dict(original.meta, retry_times=1)  # as RetryMiddleware copies it
    assert p.admit(A, retry) is GO
    assert p.admit(A, retry) is GO  # seen again (parked and released, say)
    assert p.stats.values[STAT_RETRIES] == 1
    assert retry.meta[META]["retried"] and not original.meta[META].get("retried")


def test_slowdown_off() -> None:
    p, parking, _ = slowing(RERP_SLOWDOWN=False)
    assert not p.slowdown and not p.cool_down(A, 10)
    assert p.admit(A, Request("r")) is GO and parking.parked == {}
    # Without a parking lot and a runtime, there is no slow-down either.
    bare = politeness()
    assert not bare.slowdown
