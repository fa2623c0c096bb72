"""robots.txt shared by a fleet (fleet/documents.py's ``FleetStore``), worker by worker, against
a real redis-server: each "worker" is a ``FleetStore`` on a store of its own, as each process of
a fleet has. What a worker claims (the fleet's entry, the download lock, a wait), what it
publishes, and what expiry, a damaged hash and Redis going away change. Fleets of worker
processes: test_crawls.py."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import pytest_twisted
from scrapy.http import Response

from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators
from scrapy_rerp.core.origins import Claim
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.engine import GYM2008, RFC9309, RobotsTxt, parse
from scrapy_rerp.fleet.codec import FORMAT_VERSION
from scrapy_rerp.fleet.documents import POLL_FIRST, POLL_MAX, STALE_RECHECK, FleetStore
from scrapy_rerp.fleet.guard import PROBE_INTERVAL, RedisGuard
from scrapy_rerp.fleet.store import RedisOriginCache
from tests.support import Stats
from tests.support.crawls import FAST_OUTAGE, ignored, not_modified_for, pages, rerp, stat
from tests.support.redis import RedisServer
from tests.support.scenarios import scenario
from tests.support.servers import Server, crawl, own

pytestmark = pytest.mark.needs_asyncio  # the store: redis.asyncio (markers: pyproject.toml)

ORIGIN = "http://a.test:80"
BODY = b"User-agent: *\nDisallow: /private\nAllow: /private/open\nCrawl-delay: 2\n"
#: Paths whose decisions tell these rules from any other here (RFC 9309: the longest match).
PATHS = ["/", "/private", "/private/x", "/private/open"]
RULES = [True, False, False, True]


def decisions(robots: RobotsTxt | None) -> list[bool]:
    assert robots is not None
    return [robots.allowed(f"http://a.test{path}", "bot") for path in PATHS]


class Polls:
    """A worker's sleep between two looks at an origin another worker downloads: records each,
    and runs ``then[n]`` (another worker's move) at the n-th (from 1)."""

    def __init__(self, then: dict[int, Callable[[], Awaitable[Any]]] | None = None) -> None:
        self.slept: list[float] = []
        self.then = then or {}

    async def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)
        move = self.then.get(len(self.slept))
        if move is not None:
            await move()
        await asyncio.sleep(0.01)  # a little of the real thing: a lock may expire meanwhile


class Worker:
    """One worker's side of the fleet: its store, its guard, its stats."""

    def __init__(
        self,
        redis_url: str,
        polls: Polls | None = None,
        store: type[RedisOriginCache] = RedisOriginCache,
        **settings: Any,
    ) -> None:
        self.settings = RerpSettings.from_settings(
            {"RERP_REDIS_URL": redis_url, "RERP_REDIS_PREFIX": "s", **settings},
            require_obey=False,
        )
        self.stats = Stats()
        self.store = store.from_settings(self.settings)
        self.guard = RedisGuard(self.store.url, self.stats)
        self.polls = polls or Polls()
        self.rules = FleetStore(
            self.store, self.guard, self.settings, stats=self.stats, sleep=self.polls
        )

    async def claim(self) -> Claim:
        return await self.rules.claim(ORIGIN)

    async def publish(
        self, entry: RobotsEntry, fetched: Fetched | None, locked: bool = True
    ) -> None:
        await self.rules.publish(ORIGIN, entry, fetched, Claim(download=True, locked=locked))

    def stat(self, name: str) -> int:
        return int(self.stats.get_value(f"robotstxt/redis/{name}", 0))


def downloaded(
    body: bytes = BODY, lifetime: float = 3600.0, syntax: int = RFC9309
) -> tuple[RobotsEntry, Fetched]:
    """What a worker knows after downloading ``body``: its entry, and the download."""
    now = time.time()
    result = Fetched(
        outcome=Outcome.PARSED,
        robots=parse(body, syntax),
        status=200,
        url="http://a.test/robots.txt",
        body=body,
        charset="utf-8",
    )
    entry = RobotsEntry(
        robots=result.robots,
        fetched_at=now,
        expires_at=now + lifetime,
        status=200,
        url=result.url,
    )
    return entry, result


def outage(retry_in: float, failures: int = 1) -> tuple[RobotsEntry, Fetched]:
    """What a worker knows after a failed download of a robots.txt it never had."""
    now = time.time()
    entry = RobotsEntry(
        robots=None,
        fetched_at=now,
        expires_at=now + retry_in,
        status=503,
        outcome=Outcome.UNREACHABLE,
        failures=failures,
        outage_since=now - 10,
    )
    return entry, Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")


def lock_holder(redis_server: RedisServer) -> bytes | None:
    holder: bytes | None = redis_server.client().get(f"s:lock:{ORIGIN}")
    return holder


@scenario
async def test_the_first_worker_downloads_and_the_second_takes_its_rules(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    claim = await one.claim()
    assert claim == Claim(download=True, locked=True)  # nothing stored: its download
    assert lock_holder(redis_server) == one.store.token
    await one.publish(*downloaded())
    assert lock_holder(redis_server) is None  # released with the result
    claim = await two.claim()
    assert claim.download is False and claim.entry is not None
    assert decisions(claim.entry.robots) == RULES  # parsed again from the stored body
    assert claim.entry.robots.crawl_delay("bot") == 2.0  # type: ignore[union-attr]
    assert (claim.entry.status, claim.entry.url) == (200, "http://a.test/robots.txt")
    assert two.stat("shared") == 1 and two.stat("lock_waits") == 0
    assert lock_holder(redis_server) is None  # the second took no lock
    assert two.polls.slept == []
    assert one.stat("shared") == 0 and one.stats.values == {}
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_a_worker_waits_for_the_one_downloading_backing_off_to_the_most(
    redis_server: RedisServer,
) -> None:
    one = Worker(redis_server.url)
    assert (await one.claim()).locked

    async def one_publishes() -> None:
        await one.publish(*downloaded())

    two = Worker(redis_server.url, Polls({7: one_publishes}))
    claim = await two.claim()
    assert claim.entry is not None and decisions(claim.entry.robots) == RULES
    assert not claim.download
    first = POLL_FIRST
    assert two.polls.slept == [first, 2 * first, 4 * first, 8 * first, POLL_MAX, POLL_MAX, POLL_MAX]
    assert two.stat("lock_waits") == 1  # one download waited for, however many looks
    assert two.stat("shared") == 1
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_two_workers_claiming_together_download_once(redis_server: RedisServer) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    assert (await one.claim()).locked
    waiting = asyncio.ensure_future(two.claim())
    while not two.polls.slept:  # the second is waiting for the first's download
        await asyncio.sleep(0.01)
    assert not waiting.done()
    await one.publish(*downloaded())
    claim = await waiting
    assert claim.entry is not None and decisions(claim.entry.robots) == RULES
    assert two.stat("lock_waits") == 1 and two.stat("shared") == 1
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_a_result_stored_between_the_look_and_the_lock_is_taken(
    redis_server: RedisServer,
) -> None:
    other = Worker(redis_server.url)

    class Late(RedisOriginCache):
        """A store whose first look finds nothing and whose lock comes just after another
        worker stored its result (and released its lock)."""

        async def lock(self, origin: str, kind: str = "robots") -> bool:
            await other.publish(*downloaded(), locked=False)
            return await super().lock(origin, kind)

    worker = Worker(redis_server.url, store=Late)
    claim = await worker.claim()
    assert claim.entry is not None and not claim.download
    assert decisions(claim.entry.robots) == RULES
    assert lock_holder(redis_server) is None  # the lock it took, given back
    assert worker.stat("shared") == 1
    for each in (other, worker):
        await each.rules.close()


@scenario
async def test_an_expired_entry_is_downloaded_again_with_the_fleet_s_copy_at_hand(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*downloaded(lifetime=-1.0))  # expired a second ago, kept stale in Redis
    claim = await two.claim()
    assert claim.download and claim.locked and claim.entry is None
    assert claim.previous is not None and claim.previous.expired()
    assert decisions(claim.previous.robots) == RULES  # served if the refetch fails
    assert two.stat("shared") == 0
    assert lock_holder(redis_server) == two.store.token
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_an_expired_copy_serves_while_another_worker_refreshes_it(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*downloaded(lifetime=-1.0))
    assert (await one.claim()).locked  # the first refreshes it
    before = time.time()
    claim = await two.claim()
    after = time.time()
    assert claim.entry is not None and not claim.download
    assert decisions(claim.entry.robots) == RULES
    # Looked at again soon: by then the refreshed copy may be there.
    assert before + STALE_RECHECK <= claim.entry.expires_at <= after + STALE_RECHECK
    assert two.stat("shared") == 1 and two.polls.slept == []
    assert lock_holder(redis_server) == one.store.token
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_an_outage_is_shared_until_its_retry_then_retried_by_one(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    entry, failed = outage(retry_in=60.0, failures=3)
    await one.publish(entry, failed)
    # Before the retry: the others take the outage, and download nothing.
    claim = await two.claim()
    assert claim.entry is not None and not claim.download
    assert claim.entry.robots is None and claim.entry.outcome == Outcome.UNREACHABLE
    assert claim.entry.failures == 3
    assert claim.entry.outage_since == pytest.approx(entry.outage_since, abs=5)
    assert claim.entry.expires_at == pytest.approx(entry.expires_at, abs=5)
    # Its retry is due: one worker retries, with the failures so far; another, finding no
    # copy to serve, waits for that retry.
    await one.publish(*outage(retry_in=-1.0, failures=4), locked=False)
    claim = await one.claim()
    assert claim.locked and claim.previous is not None
    assert (claim.previous.failures, claim.previous.robots) == (4, None)

    async def one_publishes() -> None:
        await one.publish(*downloaded())

    three = Worker(redis_server.url, Polls({2: one_publishes}))
    claim = await three.claim()
    assert claim.entry is not None and decisions(claim.entry.robots) == RULES
    assert len(three.polls.slept) == 2 and three.stat("lock_waits") == 1
    for worker in (one, two, three):
        await worker.rules.close()


def kept_through(previous: RobotsEntry, retry_in: float) -> tuple[RobotsEntry, Fetched]:
    """What a worker knows after a failed refetch of ``previous``: its rules, kept (as
    core/origins.py keeps them), with the outage's state; and the failed download."""
    now = time.time()
    entry = previous.with_(expires_at=now + retry_in, failures=1, outage_since=now)
    return entry, Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")


@scenario
async def test_rules_kept_through_a_failed_refetch_stay_the_fleet_s_rules(
    redis_server: RedisServer,
) -> None:
    one, two, three = (Worker(redis_server.url) for _ in range(3))
    await one.claim()
    await one.publish(*downloaded(lifetime=-1.0))
    claim = await two.claim()  # its refetch is due
    assert claim.locked and claim.previous is not None
    # The site answers 503: the second keeps the rules it had, and shares the outage.
    await two.publish(*kept_through(claim.previous, retry_in=60.0), locked=True)
    claim = await three.claim()
    assert claim.entry is not None and not claim.download
    assert decisions(claim.entry.robots) == RULES  # /private is still disallowed
    assert claim.entry.outcome == Outcome.PARSED and claim.entry.failures == 1
    assert claim.entry.outage_since is not None and not claim.entry.expired()
    for worker in (one, two, three):
        await worker.rules.close()


@scenario
async def test_rules_kept_through_a_failed_refetch_with_no_copy_in_redis_allow_nothing(
    redis_server: RedisServer,
) -> None:
    # The worker's copy is its own (Redis lost the fleet's, FLUSHALL): there are no bytes of
    # those rules to store, and no reader may take "no bytes" for "no rules".
    two, three = Worker(redis_server.url), Worker(redis_server.url)
    previous, _ = downloaded(lifetime=-1.0)
    assert (await two.claim()).locked
    await two.publish(*kept_through(previous, retry_in=60.0), locked=True)
    claim = await three.claim()
    assert claim.entry is not None and not claim.download
    assert claim.entry.robots is None and claim.entry.outcome == Outcome.UNREACHABLE
    assert (claim.entry.failures, claim.entry.status) == (1, 503)
    for worker in (two, three):
        await worker.rules.close()


@scenario
async def test_a_lock_whose_holder_died_is_taken_once_it_times_out(
    redis_server: RedisServer,
) -> None:
    dead = Worker(redis_server.url, RERP_REDIS_LOCK_TIMEOUT=0.2)
    assert (await dead.claim()).locked  # and never publishes
    two = Worker(redis_server.url)
    claim = await two.claim()
    assert claim == Claim(download=True, locked=True)
    assert two.polls.slept and two.stat("lock_waits") == 1
    assert lock_holder(redis_server) == two.store.token
    for worker in (dead, two):
        await worker.rules.close()


@scenario
async def test_only_the_lock_s_holder_releases_it(redis_server: RedisServer) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    assert (await one.claim()).locked
    # A worker that downloaded alone (Redis was away when it claimed) publishes its result
    # without releasing anything: the holder's lock stays.
    await two.publish(*downloaded(), locked=False)
    assert lock_holder(redis_server) == one.store.token
    await two.publish(*downloaded(), locked=True)  # not its lock: stays too
    assert lock_holder(redis_server) == one.store.token
    await one.publish(*downloaded())
    assert lock_holder(redis_server) is None
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_a_stored_entry_lives_in_redis_its_lifetime_and_the_stale_window(
    redis_server: RedisServer,
) -> None:
    one = Worker(redis_server.url, RERP_MAX_LIFETIME=50, RERP_MIN_LIFETIME=0, RERP_STALE_MAX_AGE=0)
    await one.claim()
    await one.publish(*downloaded(lifetime=100.0))
    ttl = redis_server.client().pttl(f"s:robots:{ORIGIN}") / 1000
    assert 145 < ttl <= 150
    await one.rules.close()


@scenario
async def test_rules_live_in_redis_as_long_as_they_may_stand_in_for_an_outage(
    redis_server: RedisServer,
) -> None:
    # RERP_STALE_MAX_AGE beyond the lifetime: the fleet keeps the copy until it is that old
    # (plus the stale window), as a crawl alone keeps it in its store.
    one = Worker(
        redis_server.url, RERP_MAX_LIFETIME=50, RERP_MIN_LIFETIME=0, RERP_STALE_MAX_AGE=1000
    )
    await one.claim()
    await one.publish(*downloaded(lifetime=100.0))
    ttl = redis_server.client().pttl(f"s:robots:{ORIGIN}") / 1000
    assert 1045 < ttl <= 1050
    # Kept through an outage: still as long as the copy may stand in, counted from its fetch.
    entry, _ = downloaded(lifetime=100.0)
    fetched_earlier = entry.with_(fetched_at=entry.fetched_at - 400)
    await one.publish(*kept_through(fetched_earlier, retry_in=5.0), locked=False)
    ttl = redis_server.client().pttl(f"s:robots:{ORIGIN}") / 1000
    assert 645 < ttl <= 650
    # An outage without rules: only until its retry (plus the window).
    await one.publish(*outage(retry_in=5.0), locked=False)
    ttl = redis_server.client().pttl(f"s:robots:{ORIGIN}") / 1000
    assert 50 < ttl <= 55
    await one.rules.close()


def validated(lifetime: float = 3600.0) -> tuple[RobotsEntry, Fetched]:
    """A download of ``BODY`` whose response had validators."""
    entry, fetched = downloaded(lifetime=lifetime)
    response = Response(
        "http://a.test/robots.txt",
        headers={"ETag": '"v1"', "Last-Modified": "Sat, 28 Nov 2026 10:00:00 GMT"},
    )
    return entry, dataclasses.replace(fetched, response=response)


@scenario
async def test_the_fleet_s_expired_copy_comes_with_its_validators(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*validated(lifetime=-1.0))
    claim = await two.claim()
    assert claim.locked and claim.previous is not None
    assert claim.validators == Validators(
        "http://a.test/robots.txt",
        {b"If-None-Match": b'"v1"', b"If-Modified-Since": b"Sat, 28 Nov 2026 10:00:00 GMT"},
    )
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_a_copy_without_validators_or_with_unsendable_ones_has_none(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*downloaded(lifetime=-1.0))
    claim = await two.claim()
    assert claim.locked and claim.previous is not None and claim.validators is None
    await two.publish(*downloaded(lifetime=-1.0))
    # What Redis hands back is input: a validator no request header can carry is not sent.
    redis_server.client().hset(f"s:robots:{ORIGIN}", "etag", b'"a\r\nX-Injected: 1"')
    claim = await one.claim()
    assert claim.locked and claim.previous is not None and claim.validators is None
    for worker in (one, two):
        await worker.rules.close()


def not_modified(
    previous: RobotsEntry, lifetime: float, etag: str | None
) -> tuple[RobotsEntry, Fetched]:
    """What a worker knows after a 304 to its conditional refetch of ``previous``."""
    now = time.time()
    headers = {"ETag": etag} if etag is not None else {}
    response = Response("http://a.test/robots.txt", status=304, headers=headers)
    fetched = Fetched(
        outcome=Outcome.UNREACHABLE,
        status=304,
        url="http://a.test/robots.txt",
        response=response,
        reason="HTTP 304",
        not_modified=True,
    )
    return previous.with_(fetched_at=now, expires_at=now + lifetime), fetched


@scenario
async def test_a_304_renews_the_fleet_s_copy_keeping_its_bytes(redis_server: RedisServer) -> None:
    one, two, three = (Worker(redis_server.url) for _ in range(3))
    await one.claim()
    await one.publish(*validated(lifetime=-1.0))
    claim = await two.claim()
    assert claim.locked and claim.previous is not None
    await two.publish(*not_modified(claim.previous, 600.0, etag='"v2"'), locked=True)
    assert lock_holder(redis_server) is None and two.stat("revalidated") == 1
    claim = await three.claim()
    assert claim.entry is not None and not claim.download  # fresh again: no download
    assert decisions(claim.entry.robots) == RULES
    assert claim.entry.expires_at == pytest.approx(time.time() + 600, abs=5)
    assert claim.entry.fetched_at == pytest.approx(time.time(), abs=5)
    stored = redis_server.client().hgetall(f"s:robots:{ORIGIN}")
    assert stored[b"etag"] == b'"v2"'  # the 304's validator replaces the copy's
    assert stored[b"last_modified"] == b"Sat, 28 Nov 2026 10:00:00 GMT"  # unsaid: kept
    assert stored[b"body"] == BODY
    for worker in (one, two, three):
        await worker.rules.close()


@scenario
async def test_a_304_for_a_copy_the_fleet_lost_stores_nothing(redis_server: RedisServer) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*validated(lifetime=-1.0))
    claim = await two.claim()
    assert claim.locked and claim.previous is not None
    redis_server.client().delete(f"s:robots:{ORIGIN}")  # FLUSHALL, eviction
    await two.publish(*not_modified(claim.previous, 600.0, etag=None), locked=True)
    assert lock_holder(redis_server) is None and two.stat("revalidated") == 0
    assert redis_server.client().exists(f"s:robots:{ORIGIN}") == 0
    claim = await one.claim()  # the next worker downloads it again
    assert claim.locked and claim.previous is None
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_an_old_copy_waits_for_its_refresh_rather_than_serving(
    redis_server: RedisServer,
) -> None:
    # Expired longer ago than RERP_MAX_LIFETIME (kept in Redis for outages only): while another
    # worker refreshes it, the others wait for the refresh, as a crawl alone waits.
    one = Worker(redis_server.url, RERP_MAX_LIFETIME=50, RERP_MIN_LIFETIME=0)
    two = Worker(redis_server.url, RERP_MAX_LIFETIME=50, RERP_MIN_LIFETIME=0)
    await one.claim()
    await one.publish(*downloaded(lifetime=-60.0))
    assert (await one.claim()).locked  # the first refreshes it

    async def one_publishes() -> None:
        await one.publish(*downloaded())

    two.polls.then = {1: one_publishes}
    claim = await two.claim()
    assert claim.entry is not None and not claim.entry.expired()
    assert len(two.polls.slept) == 1 and two.stat("lock_waits") == 1
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_an_entry_gone_from_redis_is_downloaded_again(redis_server: RedisServer) -> None:
    # RERP_MAX_LIFETIME 0: no stale window, and RERP_STALE_MAX_AGE 0: no copy for outages;
    # Redis drops the hash when the entry expires.
    one, two = (
        Worker(redis_server.url, RERP_MAX_LIFETIME=0, RERP_MIN_LIFETIME=0, RERP_STALE_MAX_AGE=0)
        for _ in range(2)
    )
    await one.claim()
    await one.publish(*downloaded(lifetime=0.2))
    assert (await two.claim()).entry is not None  # fresh still
    client = redis_server.client()
    deadline = time.monotonic() + 10
    while client.exists(f"s:robots:{ORIGIN}") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    claim = await two.claim()
    assert claim == Claim(download=True, locked=True, previous=None)  # nothing left to serve
    for worker in (one, two):
        await worker.rules.close()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("outcome", b"garbage"),
        ("expires_at", b"soon"),
        ("expires_at", b"nan"),  # would be fresh for ever
        ("syntax", b"\xff"),
    ],
)
@scenario
async def test_an_unreadable_hash_is_counted_and_downloaded_again(
    redis_server: RedisServer, field: str, value: bytes
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*downloaded())
    redis_server.client().hset(f"s:robots:{ORIGIN}", field, value)
    claim = await two.claim()
    # Counted twice: the look, and the look again once the lock is taken.
    assert claim == Claim(download=True, locked=True, previous=None)
    assert two.stat("unreadable") == 2 and two.stat("shared") == 0
    await two.publish(*downloaded())  # the new result replaces it whole
    claim = await one.claim()
    assert claim.entry is not None and decisions(claim.entry.robots) == RULES
    assert one.stat("unreadable") == 0
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_a_hash_of_another_format_version_is_downloaded_again_uncounted(
    redis_server: RedisServer,
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*downloaded())
    client = redis_server.client()
    client.hset(f"s:robots:{ORIGIN}", "v", b"1")
    assert await two.claim() == Claim(download=True, locked=True)
    assert two.stat("unreadable") == 0  # not damaged: of another version
    await two.publish(*downloaded())
    assert client.hget(f"s:robots:{ORIGIN}", "v") == FORMAT_VERSION
    assert (await one.claim()).entry is not None
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_workers_of_another_syntax_do_not_take_each_other_s_rules(
    redis_server: RedisServer,
) -> None:
    rfc = Worker(redis_server.url, RERP_SYNTAX="rfc9309")
    gym = Worker(redis_server.url, RERP_SYNTAX="gym2008")
    await rfc.claim()
    await rfc.publish(*downloaded())
    assert await gym.claim() == Claim(download=True, locked=True)  # not the same rules
    assert gym.stat("unreadable") == 0
    await gym.publish(*downloaded(syntax=GYM2008))
    claim = await gym.claim()
    assert claim.entry is not None and claim.entry.robots is not None
    assert claim.entry.robots.syntax == GYM2008
    # gym2008 reads the first match: /private/open stays disallowed.
    assert decisions(claim.entry.robots) == [True, False, False, False]
    for worker in (rfc, gym):
        await worker.rules.close()


@scenario
async def test_redis_gone_each_worker_downloads_alone_and_publishing_fails_quietly(
    redis_server: RedisServer,
) -> None:
    one = Worker(redis_server.url, RERP_REDIS_TIMEOUT=0.5)
    await one.claim()
    await one.publish(*downloaded())
    redis_server.stop()
    claim = await one.claim()
    assert claim == Claim(download=True, locked=False)  # no lock: nobody to share with
    assert one.polls.slept == []  # no wait for a Redis that is gone
    await one.publish(*downloaded(), locked=claim.locked)  # raises nothing
    # The claim failed; the publishing, within the guard's probe interval, was not even sent.
    assert (one.stat("errors"), one.stat("fallback")) == (1, 2)
    assert one.guard.down is True
    # Back (empty: no persistence): shared again, from the next probe on.
    redis_server.start()
    await asyncio.sleep(PROBE_INTERVAL)
    assert await one.claim() == Claim(download=True, locked=True)
    await one.publish(*downloaded())
    two = Worker(redis_server.url)
    assert (await two.claim()).entry is not None
    assert one.guard.down is False and one.stat("errors") == 1
    for worker in (one, two):
        await worker.rules.close()


@scenario
async def test_close_reports_the_round_trips(redis_server: RedisServer) -> None:
    one = Worker(redis_server.url)
    await one.claim()  # a look, the lock, a look again: nothing found
    await one.publish(*downloaded())  # the hash and the unlock
    await one.claim()  # one look, the entry found
    await one.publish(*downloaded(), locked=False)  # the hash: no lock to release
    await one.rules.close()
    assert one.stats.get_value("robotstxt/redis/round_trips") == 7


# -- across runs and outages, in crawls: a fleet of one worker, a real crawl, the same Redis ----

ROBOTS = "User-agent: *\nDisallow: /private\n"


def fleet(redis_server: RedisServer, **settings: Any) -> dict[str, Any]:
    return rerp(
        RERP_CACHE="scrapy_rerp.cache.RedisOriginCache",
        RERP_REDIS_URL=redis_server.url,
        **settings,
    )


def age_in_redis(redis_server: RedisServer, origin: str, seconds: float) -> None:
    """Make the fleet's copy of ``origin`` ``seconds`` old and expired, as yesterday's run left
    it (Redis runs on this machine: its clock is this one's)."""
    then = time.time() - seconds
    key = f"rerp:robots:{origin}"
    client = redis_server.client()
    assert client.exists(key)
    client.hset(key, mapping={"fetched_at": repr(then), "expires_at": repr(then + 1)})


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_fleet_restarted_within_freshness_downloads_no_robots_txt(
    server: Server, redis_server: RedisServer
) -> None:
    server.robots(ROBOTS)
    urls = [server.url("/a"), server.url("/private/b")]
    await crawl(settings=fleet(redis_server), urls=urls)
    server.clear()
    second = await crawl(settings=fleet(redis_server), urls=urls)
    assert server.count("/robots.txt") == 0
    assert pages(server) == ["/a"]
    assert ignored(second) == [server.url("/private/b")]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_fleet_revalidates_its_expired_copy_and_a_304_renews_it(
    server: Server, redis_server: RedisServer
) -> None:
    server.robots(ROBOTS, headers={"ETag": '"v1"'})
    await crawl(settings=fleet(redis_server), urls=[server.url("/a")])
    age_in_redis(redis_server, server.origin, 3600)

    server.route("/robots.txt", not_modified_for('"v1"', {"Cache-Control": "max-age=7200"}))
    server.clear()
    urls = [server.url("/a"), server.url("/private/b")]
    second = await crawl(settings=fleet(redis_server), urls=urls)
    [hit] = server.hits("/robots.txt")
    assert (hit.header("If-None-Match"), hit.status) == ('"v1"', 304)
    assert pages(server) == ["/a"]  # the fleet's rules kept
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/redis/revalidated") == 1
    stored = redis_server.client().hgetall(f"rerp:robots:{server.origin}")
    assert stored[b"body"] == ROBOTS.encode()
    assert float(stored[b"expires_at"]) == pytest.approx(time.time() + 7200, abs=60)


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_fleet_meeting_an_outage_crawls_under_its_last_good_copy(
    server: Server, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(ROBOTS)
    await crawl(settings=fleet(redis_server), urls=[server.url("/a")])
    age_in_redis(redis_server, server.origin, 3 * 24 * 3600)  # past any stale-serving window
    server.robots("", status=503)
    server.clear()
    urls = [server.url("/a"), server.url("/private/b")]
    with caplog.at_level(logging.INFO):
        second = await crawl(settings=fleet(redis_server, **FAST_OUTAGE), urls=urls)
    assert pages(server) == ["/a"]  # disallowed still refused
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/store/stale_used") == 1
    warnings = [r.getMessage() for r in own(caplog.records) if r.levelname == "WARNING"]
    assert len([w for w in warnings if "copy stored" in w]) == 1, warnings


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_fleet_s_copy_past_the_stale_max_age_is_not_used(
    server: Server, redis_server: RedisServer
) -> None:
    server.robots(ROBOTS)
    await crawl(settings=fleet(redis_server), urls=[server.url("/a")])
    age_in_redis(redis_server, server.origin, 3600)
    server.robots("", status=503)
    server.clear()
    second = await crawl(
        settings=fleet(redis_server, RERP_STALE_MAX_AGE=60, **FAST_OUTAGE),
        urls=[server.url("/a")],
    )
    assert pages(server) == []  # parked, then dropped, as without a copy
    assert stat(second, "robotstxt/dropped/unreachable") == 1
    assert stat(second, "robotstxt/store/stale_used") is None
    stored = redis_server.client().hgetall(f"rerp:robots:{server.origin}")
    assert stored[b"outcome"] == b"unreachable" and b"body" not in stored  # replaced


class _Ticking:
    """``time`` for fleet/documents.py whose clock moves two seconds at each look: the bounds'
    reason of one planted hash ("an outage retried in N s") then differs from read to read, as
    it does on a loaded worker whose look and look again straddle a second."""

    def __init__(self) -> None:
        self.looks = 0

    def time(self) -> float:
        self.looks += 1
        return time.time() + 2 * self.looks


@scenario
async def test_a_hash_beyond_the_bounds_is_said_once_however_its_reason_reads(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = Worker(redis_server.url), Worker(redis_server.url)
    await one.claim()
    await one.publish(*outage(retry_in=10 * 365 * 86400.0))  # retried in ten years
    monkeypatch.setattr("scrapy_rerp.fleet.documents.time", _Ticking())
    with caplog.at_level(logging.INFO):
        claim = await two.claim()
    assert claim.download and claim.locked and claim.entry is None
    # Counted at each read (the look, and the look again once the lock is taken), said once.
    assert two.stat("rejected") == 2
    warnings = [r.getMessage() for r in own(caplog.records) if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "an outage retried in" in warnings[0], warnings
    for worker in (one, two):
        await worker.rules.close()
