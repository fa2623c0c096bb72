"""What a worker does when Redis fails (fleet/guard.py's ``RedisGuard``): the failed call
counted, one WARNING when Redis goes away and one when it answers again, the caller told to go on
alone meanwhile; against a real redis-server that is stopped, paused or was never there. What
the callers then do alone: test_documents.py (robots.txt), test_delay.py (Crawl-delay)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from scrapy_rerp.fleet.delay import SharedDelay, turn_hold
from scrapy_rerp.fleet.guard import PROBE_INTERVAL, RedisGuard
from scrapy_rerp.fleet.store import RedisOriginCache, RedisUnavailable
from tests.support import Stats
from tests.support.redis import RedisServer, free_port
from tests.support.scenarios import scenario

pytestmark = pytest.mark.needs_asyncio  # the store: redis.asyncio (markers: pyproject.toml)

GONE = "is unavailable"
BACK = "answers again"


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The guard's WARNINGs so far."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "scrapy_rerp.fleet" and r.levelno == logging.WARNING
    ]


def counts(stats: Stats) -> tuple[int, int]:
    return stats.get_value("robotstxt/redis/errors", 0), stats.get_value(
        "robotstxt/redis/fallback", 0
    )


def always_probe() -> Callable[[], float]:
    """A guard's clock on which every call is a probe interval after the last: each call is
    sent to Redis, as before the guard held calls back during an outage."""
    return itertools.count(0.0, PROBE_INTERVAL).__next__


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def failing() -> None:
    raise RedisUnavailable("TimeoutError: ")


def returning(value: Any) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return value

    return call


@scenario
async def test_a_call_that_succeeds_gives_its_result_and_says_nothing(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g")
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=always_probe())
    assert await guard.call(lambda: store.lock("http://a.test:80")) == (True, True)
    assert await guard.call(lambda: store.lock("http://a.test:80")) == (True, False)
    assert await guard.call(lambda: store.load("http://a.test:80")) == (True, None)
    assert await guard.call(returning(0)) == (True, 0)  # a falsy result is a result
    assert guard.down is False and stats.values == {} and said(caplog) == []
    await store.close()


@scenario
async def test_a_redis_that_was_never_there_is_counted_and_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    store = RedisOriginCache(url, "g", timeout=0.5)
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=always_probe())
    assert await guard.call(lambda: store.lock("http://a.test:80")) == (False, None)
    assert guard.down is True and counts(stats) == (1, 1)
    [warning] = said(caplog)
    assert url in warning and GONE in warning and "goes on alone" in warning
    assert "ConnectionError" in warning  # why, from the store's RedisUnavailable
    for n in (2, 3):
        assert await guard.call(store.ping) == (False, None)
        assert counts(stats) == (n, n)
    assert len(said(caplog)) == 1  # one WARNING per outage, however many calls fail
    await store.close()


@scenario
async def test_redis_stopped_then_started_again_is_said_each_way_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g", timeout=0.5)
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=always_probe())
    origin = "http://a.test:80"
    assert await guard.call(lambda: store.lock(origin)) == (True, True)
    redis_server.stop()
    assert await guard.call(lambda: store.lock(origin)) == (False, None)
    assert await guard.call(lambda: store.unlock(origin)) == (False, None)
    assert guard.down is True and counts(stats) == (2, 2)
    redis_server.start()  # the same port, an empty Redis (no persistence)
    assert await guard.call(lambda: store.lock(origin)) == (True, True)
    assert guard.down is False
    assert counts(stats) == (2, 2)  # a call that succeeds counts nothing
    assert await guard.call(store.ping) == (True, None)
    gone, back = said(caplog)
    assert GONE in gone and redis_server.url in gone
    assert BACK in back and redis_server.url in back
    # The next outage is said again, and so is the next return.
    redis_server.stop()
    assert await guard.call(store.ping) == (False, None)
    redis_server.start()
    assert await guard.call(store.ping) == (True, None)
    assert [GONE in m for m in said(caplog)] == [True, False, True, False]
    assert counts(stats) == (3, 3)
    await store.close()


@scenario
async def test_a_redis_that_does_not_answer_in_time_is_a_failure_too(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g", timeout=0.3)
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=always_probe())
    assert await guard.call(store.ping) == (True, None)
    assert redis_server.process is not None
    pid = redis_server.process.pid
    os.kill(pid, signal.SIGSTOP)  # the server hangs: connected, never answering
    try:
        assert await guard.call(lambda: store.lock("http://a.test:80")) == (False, None)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert counts(stats) == (1, 1)
    [gone] = said(caplog)
    assert "TimeoutError" in gone
    assert await guard.call(store.ping) == (True, None)
    assert guard.down is False and BACK in said(caplog)[-1]
    await store.close()


@scenario
async def test_the_warnings_name_the_spider_of_the_moment(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    spiders = iter(["first spider", "second spider"])
    guard = RedisGuard(
        "redis://r.test:6379/0", Stats(), spider=lambda: next(spiders), clock=always_probe()
    )
    assert await guard.call(failing) == (False, None)
    assert await guard.call(failing) == (False, None)  # said nothing: asked no spider
    assert await guard.call(returning("x")) == (True, "x")
    records = [r for r in caplog.records if r.name == "scrapy_rerp.fleet"]
    assert [r.spider for r in records] == ["first spider", "second spider"]  # type: ignore[attr-defined]


@scenario
async def test_an_error_that_is_not_redis_s_is_not_taken_for_an_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    stats = Stats()
    guard = RedisGuard("redis://r.test:6379/0", stats, clock=always_probe())

    async def bug() -> None:
        raise KeyError("a bug in the caller")

    with pytest.raises(KeyError, match="a bug in the caller"):
        await guard.call(bug)
    assert guard.down is False and stats.values == {} and said(caplog) == []
    # Nor during an outage: it still propagates, and the outage goes on.
    assert await guard.call(failing) == (False, None)
    with pytest.raises(KeyError):
        await guard.call(bug)
    assert guard.down is True and counts(stats) == (1, 1)


@scenario
async def test_a_cancelled_call_is_cancelled_not_counted() -> None:
    stats = Stats()
    guard = RedisGuard("redis://r.test:6379/0", stats, clock=always_probe())
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.ensure_future(guard.call(forever))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert guard.down is False and stats.values == {}


@scenario
async def test_while_redis_is_down_a_call_is_sent_once_per_probe_interval(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g", timeout=0.5)
    stats = Stats()
    clock = ManualClock()
    guard = RedisGuard(store.url, stats, clock=clock)
    redis_server.stop()
    assert await guard.call(store.ping) == (False, None)
    sent = store.round_trips
    # Within the interval: not sent, the caller goes on alone at once.
    for _ in range(5):
        assert await guard.call(store.ping) == (False, None)
    assert store.round_trips == sent and counts(stats) == (1, 6)
    redis_server.start()
    clock.now += PROBE_INTERVAL - 0.01
    assert await guard.call(store.ping) == (False, None)  # not yet tried: still down here
    assert store.round_trips == sent
    clock.now += 0.01
    assert await guard.call(store.ping) == (True, None)  # the probe finds it back
    assert store.round_trips == sent + 1 and guard.down is False
    assert [GONE in m for m in said(caplog)] == [True, False]
    await store.close()


@scenario
async def test_a_turn_is_sent_to_a_redis_that_is_down_whatever_the_probe_interval(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g", timeout=0.5)
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=ManualClock())  # time stands still
    redis_server.stop()
    assert await guard.call(store.ping) == (False, None)
    sent = store.round_trips
    assert await guard.call(store.ping, even_when_down=True) == (False, None)
    assert store.round_trips == sent + 1 and counts(stats) == (2, 2)  # tried, failed, counted
    assert await guard.call(store.ping) == (False, None)  # the others still wait for a probe
    assert store.round_trips == sent + 1
    redis_server.start()
    # Within the same probe interval: a turn finds Redis back at once.
    assert await guard.call(store.ping, even_when_down=True) == (True, None)
    assert guard.down is False
    assert [GONE in m for m in said(caplog)] == [True, False]
    await store.close()


@scenario
async def test_a_fleet_turn_and_its_end_reach_a_redis_back_within_the_probe_interval(
    redis_server: RedisServer,
) -> None:
    store = RedisOriginCache(redis_server.url, "g", timeout=0.5)
    guard = RedisGuard(store.url, Stats(), clock=ManualClock())  # time stands still
    delay = SharedDelay(store, guard, stats=Stats(), sleep=asyncio.sleep)
    redis_server.stop()
    assert await delay.wait_for_turn("http://a", 0.3) is None  # down: the local floor alone
    redis_server.start()
    turn = await delay.wait_for_turn("http://a", 0.3)  # no probe is due: tried all the same
    assert turn is not None and guard.down is False
    guard.down = True  # as after a failure another call met just now
    await delay.turn_done("http://a", 0.3, turn)
    # Its end reached Redis: the next turn is a floor away, not the turn's longest.
    wait, _ = await store.take_turn("http://a", 0.3, turn_hold(0.3))
    assert 0 < wait <= 0.3
    await store.close()


@scenario
async def test_a_command_error_is_counted_and_said_once_not_taken_for_an_outage(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "scrapy_rerp")
    store = RedisOriginCache(redis_server.url, "g", timeout=0.5)
    stats = Stats()
    guard = RedisGuard(store.url, stats, clock=ManualClock())
    client = redis_server.client()
    # A Redis that refuses every write: full, and evicting nothing.
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    for origin in ("http://a.test:80", "http://b.test:80", "http://c.test:80"):
        assert await guard.call(lambda o=origin: store.lock(o)) == (False, None)
    assert guard.down is False
    assert stats.get_value("robotstxt/redis/command_errors") == 3
    assert stats.get_value("robotstxt/redis/fallback") == 3
    assert stats.get_value("robotstxt/redis/errors", 0) == 0
    [warning] = said(caplog)  # once for this kind of error
    assert "refused a command" in warning and "OutOfMemoryError" in warning
    # Reads still work, and are still sent: Redis is used for the rest.
    assert await guard.call(lambda: store.load("http://a.test:80")) == (True, None)
    client.config_set("maxmemory", 0)
    assert await guard.call(lambda: store.lock("http://a.test:80")) == (True, True)
    assert len(said(caplog)) == 1
    await store.close()
