"""The fleet's store (fleet/store.py's ``RedisOriginCache``) against a real redis-server: the
entries, the download lock, the Crawl-delay turns and the slow-downs, on Redis's clock."""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

from scrapy_rerp.fleet.codec import FORMAT_VERSION
from scrapy_rerp.fleet.store import MAX_FIELD, OversizedHash, RedisOriginCache, RedisUnavailable
from tests.support.redis import RedisServer


def run(coro: Any) -> Any:
    """Run a coroutine as an asyncio task under the test's reactor (redis.asyncio needs one)."""
    return deferred_from_coro(coro)


@pytest_twisted.ensureDeferred
async def test_store_round_trip_lock_and_reservations(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        one = RedisOriginCache(redis_server.url, "t", lock_timeout=5)
        two = RedisOriginCache(redis_server.url, "t", lock_timeout=5)
        origin = "http://a.test:80"
        assert await one.load(origin) is None
        await one.store(origin, {b"outcome": b"parsed", b"body": b"\xff\x00rules"}, ttl=60)
        fields = await two.load(origin)
        assert fields == {b"v": FORMAT_VERSION, b"outcome": b"parsed", b"body": b"\xff\x00rules"}
        # TTL: the entry's lifetime plus the stale window (a day by default).
        ttl = redis_server.client().pttl("t:robots:http://a.test:80") / 1000
        assert 60 + 24 * 3600 - 5 <= ttl <= 60 + 24 * 3600
        # Another format version is not read.
        redis_server.client().hset("t:robots:http://a.test:80", "v", "999")
        assert await two.load(origin) is None
        # One lock holder at a time; only the holder releases it.
        assert await one.lock(origin) is True
        assert await two.lock(origin) is False
        await two.unlock(origin)
        assert await two.lock(origin) is False
        await one.unlock(origin)
        assert await two.lock(origin) is True
        # Turns on the server's clock: one worker at a time; a turn held until its request's
        # answer (at most 0.6 s here), then 0.3 s more.
        wait, turn = await one.take_turn(origin, 0.3, 0.6)
        assert wait == 0
        wait, _ = await two.take_turn(origin, 0.3, 0.6)
        assert 0.5 < wait <= 0.6
        await asyncio.sleep(0.1)
        await two.turn_done(origin, 0.3, b"not its turn")  # only the holder ends its turn
        assert 0.4 < (await two.take_turn(origin, 0.3, 0.6))[0] <= 0.5
        await one.turn_done(origin, 0.3, turn)  # answered: the next turn in 0.3 s
        wait, _ = await two.take_turn(origin, 0.3, 0.6)
        assert 0.2 < wait <= 0.3
        await asyncio.sleep(wait + 0.01)
        assert (await two.take_turn(origin, 0.3, 0.6))[0] == 0
        await one.close()
        await two.close()

    await run(scenario())


@pytest_twisted.ensureDeferred
async def test_a_redis_that_is_gone_raises_redis_unavailable(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        cache = RedisOriginCache(redis_server.url, timeout=0.5)
        await cache.ping()
        redis_server.stop()
        for call in (cache.load("o"), cache.lock("o"), cache.take_turn("o", 1.0, 2.0)):
            started = time.monotonic()
            with pytest.raises(RedisUnavailable):
                await call
            assert time.monotonic() - started < 2
        await cache.close()

    await run(scenario())


@pytest_twisted.ensureDeferred
async def test_store_slowdown_cool_downs_and_floors_on_redis_s_clock(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        one = RedisOriginCache(redis_server.url, "t")
        two = RedisOriginCache(redis_server.url, "t")
        origin = "http://a.test:80"
        assert await two.slowdown(origin) == (0.0, 0.0, 0)
        # A cool-down only ever ends later; every worker reads what is left of it.
        left, moved = await one.cool_down(origin, 0.6)
        assert moved and 0.55 < left <= 0.6
        left, moved = await two.cool_down(origin, 0.2)
        assert not moved and 0.5 < left <= 0.6
        cooling, floor, version = await two.slowdown(origin)
        assert 0.5 < cooling <= 0.6 and floor == 0.0 and version == 0
        ttl = redis_server.client().pttl("t:slow:http://a.test:80") / 1000
        assert 0.5 < ttl <= 0.6  # the key lives at least until the cool-down ends
        # A raised floor: it starts, then a request sent before the raise changes nothing.
        floor, first, changed = await one.raise_floor(origin, 0.0, 0.5, 4.0, 0.0)
        assert (floor, changed) == (0.5, True) and first > 0
        assert await two.raise_floor(origin, 5.0, 0.5, 4.0, 0.0) == (0.5, first, False)
        floor, second, changed = await two.raise_floor(origin, 0.0, 0.5, 4.0, 0.0)
        assert (floor, changed) == (1.0, True) and second > first
        assert (await one.slowdown(origin))[1:] == (1.0, second)
        # Two good answers halve it (DECAY_AFTER 2 here); one that left before counts not.
        assert await one.good_answer(origin, 5.0, 2, 0.0, 0.01) == (1.0, second, False)
        assert await one.good_answer(origin, 0.0, 2, 0.0, 0.01) == (1.0, second, False)
        floor, third, changed = await two.good_answer(origin, 0.0, 2, 0.0, 0.01)
        assert (floor, changed) == (0.5, True) and third > second
        # Halved down to the origin's own floor: dropped.
        await one.good_answer(origin, 0.0, 2, 0.5, 0.01)
        floor, fourth, changed = await one.good_answer(origin, 0.0, 2, 0.5, 0.01)
        assert (floor, changed) == (0.0, True) and fourth > third
        assert (await two.slowdown(origin))[1:] == (0.0, fourth)
        ttl = redis_server.client().pttl("t:slow:http://a.test:80") / 1000
        assert 3500 < ttl <= 3600  # SLOWDOWN_KEEP after the floor's last change
        await one.close()
        await two.close()

    await run(scenario())


def test_store_reads_scrapy_redis_url_when_rerp_redis_url_is_unset() -> None:
    from scrapy_rerp.core.settings import RerpSettings

    settings = RerpSettings.from_settings({"REDIS_URL": "redis://h:1/2"}, require_obey=False)
    assert settings.redis_url == "redis://h:1/2"
    settings = RerpSettings.from_settings(
        {"REDIS_URL": "redis://h:1/2", "RERP_REDIS_URL": "redis://mine:3/0"}, require_obey=False
    )
    assert settings.redis_url == "redis://mine:3/0"


# -- what Redis holds is input ----------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_turn_and_lock_keys_without_a_ttl_are_cut_to_one_turn_and_the_lock_timeout(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        cache = RedisOriginCache(redis_server.url, "t", lock_timeout=3)
        client = redis_server.client()
        origin = "http://a.test:80"
        client.set(f"t:delay:{origin}", "stuck")  # no TTL: it would block the origin for good
        client.set(f"t:lock:{origin}", "stuck")
        wait, _ = await cache.take_turn(origin, 0.3, 0.6)
        assert wait == 0.6  # one turn's length at most
        assert 500 < client.pttl(f"t:delay:{origin}") <= 600
        assert await cache.lock(origin) is False
        assert 2900 < client.pttl(f"t:lock:{origin}") <= 3000
        # A TTL longer than a turn (a day) is cut too; a fair one is left alone.
        client.set(f"t:delay:{origin}", "long", px=86_400_000)
        assert (await cache.take_turn(origin, 0.3, 0.6))[0] == 0.6
        client.set(f"t:delay:{origin}", "fair", px=400)
        assert 0.3 < (await cache.take_turn(origin, 0.3, 0.6))[0] <= 0.4
        assert client.get(f"t:delay:{origin}") == b"fair"
        assert cache.repaired == 3
        # A turn key of another type is neither an error nor ended by a stranger's answer.
        client.delete(f"t:delay:{origin}")
        client.hset(f"t:delay:{origin}", "not", "a string")
        assert (await cache.take_turn(origin, 0.3, 0.6))[0] == 0.6
        await cache.turn_done(origin, 0.3, b"anyone")
        await cache.unlock(origin)
        await cache.close()

    await run(scenario())


@pytest_twisted.ensureDeferred
async def test_a_slow_down_hash_of_garbage_reads_as_absent_never_as_an_error(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        cache = RedisOriginCache(redis_server.url, "t")
        client = redis_server.client()
        origin = "http://a.test:80"
        key = f"t:slow:{origin}"
        client.hset(key, mapping={"until": "soon", "floor": "inf", "version": "x", "good": "?"})
        assert await cache.slowdown(origin) == (0.0, 0.0, 0)
        floor, version, changed = await cache.raise_floor(origin, 0.0, 0.5, 4.0, 0.0)
        assert (floor, changed) == (0.5, True) and version > 0
        assert (await cache.good_answer(origin, 0.0, 2, 0.0, 0.01))[2] is False
        left, moved = await cache.cool_down(origin, 0.5)
        assert moved and 0.4 < left <= 0.5
        # A key of another type where the hash belongs is removed, not an error.
        client.delete(key)
        client.set(key, "a string")
        assert await cache.slowdown(origin) == (0.0, 0.0, 0)
        assert client.exists(key) == 0
        # Values beyond the caps the reader gives are cut to them, in Redis too: read once,
        # they no longer hold the origin back at every read.
        client.hset(key, mapping={"until": str(10**15), "floor": str(10**15)})
        assert await cache.slowdown(origin, 5.0, 60.0) == (5.0, 60.0, 0)
        left, floor, _ = await cache.slowdown(origin, 3600.0, 3600.0)
        assert 4.9 < left <= 5.0 and floor == 60.0
        assert cache.repaired == 1
        await cache.close()

    await run(scenario())


def test_slow_down_messages_that_are_not_well_formed_are_not_heard() -> None:
    from scrapy_rerp.fleet.store import _slowdown_message

    mine = b"me"
    assert _slowdown_message(b"cool other 1500 0 http://a.test:80", mine) == (
        "cool",
        "http://a.test:80",
        1.5,
        0,
    )
    for data in (
        b"cool me 1500 0 http://a.test:80",  # this worker's own
        b"warm other 1500 0 http://a.test:80",  # no such kind
        b"cool other -5 0 http://a.test:80",
        b"cool other soon 0 http://a.test:80",
        b"cool other 1500 0 \xff\xfe",
        b"cool other " + b"9" * 400 + b" 0 http://a.test:80",  # beyond a float
        b"cool other 1500",
        "not bytes",
        None,
    ):
        assert _slowdown_message(data, mine) is None, data


@pytest_twisted.ensureDeferred
async def test_a_hash_is_read_by_its_fields_lengths_first_and_its_ttl_bounded(
    redis_server: RedisServer,
) -> None:
    """Only the format's fields are sent, each within its cap (a body beyond ``max_body``, or
    another field beyond ``MAX_FIELD``, is not sent at all); a key without a TTL, or with a
    longer one than ``keep``, is cut to ``keep``; a key of another type reads as absent."""

    async def scenario() -> None:
        store = RedisOriginCache(redis_server.url, "t", max_body=1000, keep=600)
        origin = "http://a.test:80"
        key = f"t:robots:{origin}"
        client = redis_server.client()
        junk = b"x" * (4 * MAX_FIELD)
        client.hset(key, mapping={"v": FORMAT_VERSION, "body": b"b" * 1000, "junk": junk})
        assert client.ttl(key) == -1
        assert await store.load(origin) == {b"v": FORMAT_VERSION, b"body": b"b" * 1000}
        assert 599 <= client.ttl(key) <= 600 and store.repaired == 1
        assert await store.load(origin) is not None and store.repaired == 1  # within: kept
        client.expire(key, 10**6)
        await store.load(origin)
        assert client.ttl(key) <= 600 and store.repaired == 2
        client.hset(key, "body", b"b" * 1001)
        with pytest.raises(OversizedHash) as raised:
            await store.load(origin)
        assert (raised.value.field, raised.value.length, raised.value.most) == ("body", 1001, 1000)
        client.hset(key, mapping={"body": b"b", "url": b"u" * (MAX_FIELD + 1)})
        with pytest.raises(OversizedHash) as raised:
            await store.load(origin)
        assert (raised.value.field, raised.value.most) == ("url", MAX_FIELD)
        client.delete(key)
        client.set(key, "a string where the hash belongs")
        assert await store.load(origin) is None
        await store.close()

    await run(scenario())


def _members(protocol: type) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")} | set(
        getattr(protocol, "__annotations__", {})
    )


def _store_calls(module: Path) -> set[str]:
    """What ``module`` asks of ``self.store``: the attributes it reads there."""
    return {
        node.attr
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "store"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
    }


def test_the_store_s_documents_and_its_coordination_are_two_protocols() -> None:
    """The fleet's sharing of documents asks the store only what ``DocumentStore`` says; its
    turns and slow-downs, only what ``TurnsAndSlowdowns`` says; the two share no call, and
    ``RedisOriginCache`` provides both (``SharedOriginCache``)."""
    from scrapy_rerp.fleet import delay
    from scrapy_rerp.fleet import documents as sharing
    from scrapy_rerp.fleet.store import DocumentStore, SharedOriginCache, TurnsAndSlowdowns

    documents, coordination = _members(DocumentStore), _members(TurnsAndSlowdowns)
    assert documents and coordination and not documents & coordination
    assert _store_calls(Path(sharing.__file__)) <= documents | {"repaired"}
    assert _store_calls(Path(delay.__file__)) <= coordination
    assert _members(SharedOriginCache) <= documents | coordination
    methods = {n for n in vars(DocumentStore) | vars(TurnsAndSlowdowns) if not n.startswith("_")}
    assert methods <= set(vars(RedisOriginCache)) and RedisOriginCache.is_shared
