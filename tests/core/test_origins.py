"""The origin service alone: a fake transport, fake waiters, no crawl, no Scrapy.

Each path of :mod:`scrapy_rerp.core.origins`: rules, one flight per origin, refreshes, outages with
their retries and deadline, earlier copies kept, errors, closing, and a fleet's shared rules.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from scrapy_rerp.cache import FailoverCache, MemoryOriginCache
from scrapy_rerp.core.admission import DropReason, ParkingKey, Purpose
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators
from scrapy_rerp.core.origins import WAIT, Claim, OriginService, Refused
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.engine import RobotsTxt, parse
from tests.support import AsyncioRuntime, Stats
from tests.support.scenarios import scenario

ORIGIN = "http://a.test:80"
KEY = ParkingKey(ORIGIN, Purpose.ROBOTS_TXT)  # where its requests wait for its robots.txt
URL = "http://a.test/page"
RULES = parse("User-agent: *\nDisallow: /private\n")


def ok(robots: RobotsTxt = RULES, lifetime: float | None = None) -> Fetched:
    return Fetched(
        outcome=Outcome.PARSED,
        robots=robots,
        status=200,
        url="http://a.test/robots.txt",
        lifetime=lifetime,
    )


def down(retry_after: float | None = None) -> Fetched:
    return Fetched(
        outcome=Outcome.UNREACHABLE, status=503, retry_after=retry_after, reason="HTTP 503"
    )


class Transport:
    """Answers each download with the next scripted answer (the last one repeats)."""

    def __init__(self, *answers: Fetched | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[float] = []

    async def fetch(
        self, robots_url: str, origin: str, validators: Validators | None = None
    ) -> Fetched:
        assert robots_url == "http://a.test/robots.txt" and origin == ORIGIN
        self.calls.append(time.monotonic())
        await asyncio.sleep(0.001)  # a download takes a moment
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


class Waiters:
    """Requests waiting per key, as numbers."""

    def __init__(self) -> None:
        self.waiting: Counter[ParkingKey] = Counter()
        self.released: list[int] = []
        self.dropped: list[tuple[DropReason, str]] = []

    def count(self, key: ParkingKey) -> int:
        return self.waiting[key]

    def release(self, key: ParkingKey) -> int:
        n = self.waiting.pop(key, 0)
        self.released.append(n)
        return n

    def drop(self, key: ParkingKey, reason: DropReason, message: str) -> int:
        n = self.waiting.pop(key, 0)
        self.dropped.append((reason, message))
        return n


class Listener:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.service: OriginService | None = None
        self.backoff: Callable[[int], float] = lambda failures: 0.05 * failures

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, trigger: Any) -> None:
        self.events.append(("before_sharing", origin))

    async def rules_known(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, trigger: Any
    ) -> None:
        assert self.service is not None
        # Before the rules are stored and the waiters released.
        stored = self.service.entry(origin)
        self.events.append(("rules_known", origin, trigger, fetched is None, stored))
        await asyncio.sleep(0)

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        return max(self.backoff(failures), retry_after or 0)


class Setup:
    def __init__(self, transport: Transport, store: Any = None, **settings: Any) -> None:
        self.settings = RerpSettings.from_settings(
            {"RERP_UNREACHABLE_MAX_WAIT": 0.5, **settings}, require_obey=False
        )
        self.stats = Stats()
        self.waiters = Waiters()
        self.listener = Listener()
        self.runtime = AsyncioRuntime()
        self.transport = transport
        cache = FailoverCache(
            MemoryOriginCache(100), 100, stats=self.stats, on_evicted=print, on_failover=print
        )
        self.service = OriginService(
            self.settings,
            cache,
            transport,
            waiters=self.waiters,
            listener=self.listener,
            runtime=self.runtime,
            stats=self.stats,
            store=store,
        )
        self.listener.service = self.service

    def wait(self, n: int = 1) -> None:
        """``n`` requests arrive and wait, as the middleware makes them."""
        assert self.service.rules(ORIGIN, URL, "trigger") is WAIT
        self.waiters.waiting[KEY] += n
        self.service.wanted(ORIGIN, URL, "trigger")


@scenario
async def test_rules_come_after_the_listener_and_release_the_waiters() -> None:
    s = Setup(Transport(ok()))
    assert s.service.rules(ORIGIN, URL, "trigger") is WAIT
    s.wait(3)
    s.service.wanted(ORIGIN, URL, "again")  # one flight per origin
    assert s.service.busy(ORIGIN)
    await s.runtime.settle()
    assert len(s.transport.calls) == 1
    [event] = s.listener.events
    assert event == ("rules_known", ORIGIN, "trigger", False, None)  # not stored before
    assert s.waiters.released == [3]
    assert s.service.rules(ORIGIN, URL, "trigger") is RULES
    entry = s.service.entry(ORIGIN)
    assert entry is not None and entry.outcome == Outcome.PARSED and entry.status == 200
    assert not s.service.busy(ORIGIN)


@scenario
async def test_expired_rules_keep_deciding_while_one_refresh_runs() -> None:
    newer = parse("User-agent: *\nDisallow: /\n")
    s = Setup(Transport(ok(lifetime=0), ok(newer)), RERP_MIN_LIFETIME=0)
    s.wait()
    await s.runtime.settle()
    # Expired at once (lifetime 0): the old rules answer, and one refresh starts.
    assert s.service.rules(ORIGIN, URL, "t") is RULES
    assert s.service.rules(ORIGIN, URL, "t") is RULES
    assert s.stats.get_value("robotstxt/refresh_count") == 1
    await s.runtime.settle()
    assert len(s.transport.calls) == 2
    assert s.service.rules(ORIGIN, URL, "t") is newer


@scenario
async def test_an_outage_is_retried_while_requests_wait_then_they_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = Setup(Transport(down()))
    # Retried 0.1 s apart three times, then not before 10 s: the outage's deadline (0.5 s
    # after the first failure) comes first.
    s.listener.backoff = lambda failures: 0.1 if failures < 4 else 10.0
    started = time.monotonic()
    s.wait(2)
    await s.runtime.settle()
    assert len(s.transport.calls) == 4
    assert time.monotonic() - started >= 0.5
    [(reason, message)] = s.waiters.dropped
    assert reason is DropReason.UNREACHABLE
    assert message == f"robots.txt of {ORIGIN} unreachable for more than 0.5 s (last: HTTP 503)"
    assert caplog.records[-1].getMessage() == f"Dropping 2 requests: {message}"
    assert s.stats.get_value("robotstxt/retry_count") == 3
    # Until the next retry is due, a new request is refused at once, and nothing is fetched.
    assert s.service.rules(ORIGIN, URL, "t") == Refused(DropReason.UNREACHABLE, message)
    entry = s.service.entry(ORIGIN)
    assert entry is not None and entry.outcome == Outcome.UNREACHABLE and entry.robots is None
    assert entry.failures == 4
    assert len(s.transport.calls) == 4


@scenario
async def test_a_dead_origin_with_nothing_waiting_is_not_retried() -> None:
    s = Setup(Transport(down()))
    s.wait(1)
    await asyncio.sleep(0.01)
    s.waiters.waiting.clear()  # its one request went away (dropped for another reason)
    await s.runtime.settle()
    assert len(s.transport.calls) == 1
    assert not s.service.busy(ORIGIN)


@scenario
async def test_retry_after_sets_the_next_attempt() -> None:
    s = Setup(Transport(down(retry_after=0.3), ok()), RERP_UNREACHABLE_MAX_WAIT=5)
    s.wait()
    await s.runtime.settle()
    first, second = s.transport.calls
    assert second - first >= 0.3
    assert s.waiters.released == [1]


@scenario
async def test_a_failed_refresh_keeps_the_earlier_copy() -> None:
    s = Setup(Transport(ok(lifetime=0), down()), RERP_MIN_LIFETIME=0)
    s.wait()
    await s.runtime.settle()
    assert s.service.rules(ORIGIN, URL, "t") is RULES  # expired: refresh starts, and fails
    await s.runtime.settle()
    entry = s.service.entry(ORIGIN)
    assert entry is not None and entry.robots is RULES and entry.failures == 1
    assert s.stats.get_value("robotstxt/unreachable/stale_copy_kept") == 1
    assert s.service.rules(ORIGIN, URL, "t") is RULES  # still serving, retried after backoff


@scenario
async def test_an_error_in_the_flight_drops_its_waiters_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = Setup(Transport(RuntimeError("a bug")))
    s.wait(2)
    await s.runtime.settle()
    assert s.waiters.dropped == [(DropReason.ERROR, f"robots.txt handling of {ORIGIN} failed")]
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None and "a bug" in str(record.exc_info[1])
    assert not s.service.busy(ORIGIN)


@scenario
async def test_stop_ends_retries_and_starts_nothing() -> None:
    s = Setup(Transport(down()), RERP_UNREACHABLE_MAX_WAIT=60)
    s.wait()
    await asyncio.sleep(0.02)  # failed once, sleeping before its retry
    s.service.stop()
    await s.runtime.settle()
    assert len(s.transport.calls) == 1
    assert not s.service.busy(ORIGIN)
    s.waiters.waiting[KEY] = 1
    s.service.wanted(ORIGIN, URL, "t")  # closing: no new flight
    assert not s.service.busy(ORIGIN) and len(s.transport.calls) == 1


class Shared:
    """A fleet's store, scripted."""

    fleet = True

    def __init__(self, claim: Claim) -> None:
        self.claim_answer = claim
        self.published: list[tuple[RobotsEntry, bool]] = []

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        return self.claim_answer

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched, claim: Claim
    ) -> RobotsEntry:
        self.published.append((entry, claim.locked))
        return entry


@scenario
async def test_a_fleet_worker_takes_another_s_rules_without_downloading() -> None:
    stored = RobotsEntry(
        robots=RULES,
        fetched_at=time.time(),
        expires_at=time.time() + 60,
        status=200,
        url="http://a.test/robots.txt",
    )
    s = Setup(Transport(ok()), store=Shared(Claim(entry=stored)))
    s.wait()
    await s.runtime.settle()
    assert s.transport.calls == []
    assert s.listener.events[0][:4] == ("rules_known", ORIGIN, "trigger", True)
    assert s.service.rules(ORIGIN, URL, "t") is RULES


@scenario
async def test_a_fleet_worker_holding_the_lock_downloads_and_publishes() -> None:
    shared = Shared(Claim(download=True, locked=True))
    s = Setup(Transport(ok()), store=shared)
    s.wait()
    await s.runtime.settle()
    assert len(s.transport.calls) == 1
    assert [e[0] for e in s.listener.events] == ["before_sharing", "rules_known"]
    [(entry, locked)] = shared.published
    assert entry.robots is RULES and locked


class EarlierRun:
    """A crawl's store (RERP_STORE) holding one copy of ORIGIN, fetched ``age`` seconds ago,
    fresh or expired."""

    fleet = False

    def __init__(self, age: float, fresh: bool) -> None:
        now = time.time()
        expires = now + 60 if fresh else now - 1
        self.copy = RobotsEntry(
            robots=RULES,
            fetched_at=now - age,
            expires_at=expires,
            status=200,
            url="http://a.test/robots.txt",
        )
        self.stored: list[RobotsEntry] = []
        self.renewed: list[float] = []

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        if known is not None or origin != ORIGIN:
            return Claim(download=True)
        if self.copy.expires_at > time.time():
            return Claim(entry=self.copy, reused=True)
        validators = Validators("http://a.test/robots.txt", {b"If-None-Match": b'"v1"'})
        return Claim(download=True, previous=self.copy, validators=validators)

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched, claim: Claim
    ) -> RobotsEntry:
        if fetched.not_modified:
            self.renewed.append(entry.expires_at)
            return self.copy.with_(fetched_at=entry.fetched_at, expires_at=entry.expires_at)
        self.stored.append(entry)
        return entry


@scenario
async def test_a_fresh_stored_copy_is_used_without_a_download() -> None:
    store = EarlierRun(age=10, fresh=True)
    s = Setup(Transport(ok()), store=store)
    s.wait(2)
    await s.runtime.settle()
    assert s.transport.calls == []
    assert s.waiters.released == [2]
    assert s.service.rules(ORIGIN, URL, "t") is RULES
    assert s.stats.get_value("robotstxt/store/reused") == 1


@scenario
async def test_a_304_renews_the_stored_copy() -> None:
    store = EarlierRun(age=10, fresh=False)
    not_modified = Fetched(
        outcome=Outcome.UNREACHABLE, status=304, lifetime=7200, not_modified=True
    )
    s = Setup(Transport(not_modified), store=store)
    s.wait()
    await s.runtime.settle()
    assert len(s.transport.calls) == 1
    assert s.service.rules(ORIGIN, URL, "t") is RULES
    [expires_at] = store.renewed
    assert expires_at > time.time() + 3000  # the 304's lifetime, clamped
    assert store.stored == []


@scenario
async def test_an_outage_uses_a_stored_copy_younger_than_the_max_age(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = Setup(Transport(down()), store=EarlierRun(age=3600, fresh=False))
    s.wait()
    await s.runtime.settle()
    assert s.waiters.released == [1] and s.waiters.dropped == []
    assert s.service.rules(ORIGIN, URL, "t") is RULES
    assert s.stats.get_value("robotstxt/store/stale_used") == 1
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "copy stored 60 minutes ago" in warning.getMessage()


@scenario
async def test_an_outage_ignores_a_stored_copy_past_the_max_age() -> None:
    s = Setup(Transport(down()), store=EarlierRun(age=3600, fresh=False), RERP_STALE_MAX_AGE=60)
    s.wait()
    await s.runtime.settle()
    assert s.waiters.released == []
    [(reason, _)] = s.waiters.dropped
    assert reason is DropReason.UNREACHABLE
    assert s.stats.get_value("robotstxt/store/stale_used") is None


@scenario
async def test_a_stale_max_age_of_zero_keeps_no_earlier_copy() -> None:
    s = Setup(Transport(ok(lifetime=0), down()), RERP_MIN_LIFETIME=0, RERP_STALE_MAX_AGE=0)
    s.wait()
    await s.runtime.settle()
    s.waiters.waiting[ORIGIN] += 1
    assert s.service.rules(ORIGIN, URL, "t") is RULES  # expired: refresh starts, and fails
    await s.runtime.settle()
    entry = s.service.entry(ORIGIN)
    assert entry is not None and entry.robots is None
    assert s.stats.get_value("robotstxt/unreachable/stale_copy_kept") is None


@scenario
async def test_what_is_kept_of_an_origin_beside_its_entry_goes_with_it() -> None:
    s = Setup(Transport(down()), store=EarlierRun(age=3600, fresh=False))
    s.wait()
    await s.runtime.settle()
    assert s.stats.get_value("robotstxt/store/stale_used") == 1
    assert ORIGIN in s.service._stored and ORIGIN in s.service._stale_said
    s.service.forget(ORIGIN)  # the cache evicted it
    assert ORIGIN not in s.service._stored and ORIGIN not in s.service._stale_said
    s.service._stored.add(ORIGIN)
    s.service.forget_all()
    assert not s.service._stored and not s.service._stale_said
