"""``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``: robots.txt shared by a fleet on Redis.

Workers of one crawl (scrapy-redis fleets, or any processes sharing a Redis) keep their
robots.txt knowledge and their Crawl-delay clocks in one Redis, with redis-py's asyncio client:

* ``<prefix>:robots:<origin>``: a hash per origin, in the layout of
  :mod:`scrapy_rerp.fleet.codec` (the robots.txt body as fetched, never pickled rules, and what
  a crawl knows of it), with its format version. Its times are on Redis's clock (``TIME``, in
  the scripts that write and read it), so workers whose clocks disagree agree on them. Its
  Redis TTL is the entry's lifetime plus the stale-serving window (``RERP_MAX_LIFETIME``), so
  an expired copy can still serve while it is refetched;
* ``<prefix>:lock:<origin>``: ``SET NX PX``: the one worker that downloads robots.txt for the
  fleet; the others poll the hash for its result. A worker that dies holding the lock delays
  the others by at most ``RERP_REDIS_LOCK_TIMEOUT``;
* ``<prefix>:delay:<origin>``: the origin's turn, taken atomically (``SET NX PX``, in a Lua
  script) by the worker about to send, and set to end the Crawl-delay after that request's
  answer, on the server's clock, so that all workers together keep the Crawl-delay.

Every call has a timeout (``RERP_REDIS_TIMEOUT``); an error or timeout raises
:class:`RedisUnavailable`, on which each worker falls back to what one process can do
(:mod:`scrapy_rerp.fleet.guard`).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, TypeVar

from scrapy_rerp.fleet.codec import CLOCK_FIELDS, FORMAT_VERSION

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp._settings import RerpSettings

__all__ = ["RedisOriginCache", "RedisUnavailable"]

_T = TypeVar("_T")

# KEYS[1]: the delay key. ARGV[1]: how long the turn may last at most, in ms; ARGV[2]: the
# turn's id. 0 when the caller has the turn (nobody had it); else the ms until the current
# turn ends, to wait and ask again.
_TURN = """
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
if left < 1 then
  return 1
end
return left
"""

# KEYS[1]: the delay key. ARGV[1]: the delay in ms; ARGV[2]: the turn's id. The request of that
# turn has been answered: the next turn starts the delay from now (if the turn is still its).
_TURN_DONE = """
if redis.call('GET', KEYS[1]) == ARGV[2] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0
"""

# KEYS[1]: the hash key. The hash's fields and values, then Redis's clock (seconds, microseconds).
_LOAD = """
local t = redis.call('TIME')
return {redis.call('HGETALL', KEYS[1]), t[1], t[2]}
"""

# KEYS[1]: the hash key. ARGV[1]: its TTL in ms; ARGV[2]: n, the number of time fields;
# then n (name, seconds from now) pairs, written as times on Redis's clock; then the other
# (name, value) pairs. The hash is replaced whole.
_STORE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local values = {}
local n = tonumber(ARGV[2])
for i = 3, 2 + 2 * n, 2 do
  values[#values + 1] = ARGV[i]
  values[#values + 1] = string.format('%.6f', now + tonumber(ARGV[i + 1]))
end
for i = 3 + 2 * n, #ARGV, 2 do
  values[#values + 1] = ARGV[i]
  values[#values + 1] = ARGV[i + 1]
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(values))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

# KEYS[1]: the lock key. ARGV[1]: the token of the worker releasing it.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisUnavailable(Exception):
    """Redis did not answer in time, or answered with an error."""


class RedisOriginCache:
    """The fleet's shared robots.txt store (asynchronous: it never blocks the reactor)."""

    is_shared = True

    def __init__(
        self,
        url: str,
        prefix: str = "rerp",
        *,
        timeout: float = 2.0,
        lock_timeout: float = 30.0,
        stale_window: float = 24 * 3600.0,
    ) -> None:
        try:
            from redis import asyncio as redis_asyncio
        except ImportError as exc:  # pragma: no cover - the [redis] extra
            raise ImportError(
                'RedisOriginCache needs redis-py: pip install "scrapy-rerp[redis]"'
            ) from exc
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.lock_timeout = lock_timeout
        self.stale_window = stale_window
        # One token per process: a lock is released only by the worker that holds it.
        self.token = f"{os.getpid()}-{uuid.uuid4().hex}".encode()
        self._client = redis_asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._load = self._client.register_script(_LOAD)
        self._store = self._client.register_script(_STORE)
        self._turn = self._client.register_script(_TURN)
        self._turn_done = self._client.register_script(_TURN_DONE)
        self._turns = 0
        self.round_trips = 0  # calls sent to Redis (a pipeline is one)
        self._unlock = self._client.register_script(_UNLOCK)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisOriginCache:
        from scrapy_rerp._settings import RerpSettings

        settings = RerpSettings.from_settings(crawler.settings, require_obey=False)
        return cls.from_settings(settings)

    @classmethod
    def from_settings(cls, settings: RerpSettings) -> RedisOriginCache:
        from scrapy_rerp._settings import RerpSettingsError

        if not settings.redis_url:
            raise RerpSettingsError(
                "RERP_REDIS_URL",
                None,
                "a redis:// URL (or scrapy-redis's REDIS_URL) for RERP_CACHE = RedisOriginCache",
            )
        return cls(
            settings.redis_url,
            settings.redis_prefix,
            timeout=settings.redis_timeout,
            lock_timeout=settings.redis_lock_timeout,
            stale_window=settings.max_lifetime,
        )

    def key(self, kind: str, origin: str) -> str:
        return f"{self.prefix}:{kind}:{origin}"

    async def _call(self, awaitable: Awaitable[_T]) -> _T:
        self.round_trips += 1
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # redis.RedisError, OSError, TimeoutError
            raise RedisUnavailable(f"{type(exc).__name__}: {exc}") from exc

    # -- entries -------------------------------------------------------------------------------
    async def load(self, origin: str) -> dict[bytes, bytes] | None:
        """The stored hash of ``origin``, its times on this worker's clock, or None (absent,
        or of another format version)."""
        raw, seconds, micros = await self._call(self._load(keys=[self.key("robots", origin)]))
        fields: dict[bytes, bytes] = dict(zip(raw[::2], raw[1::2], strict=True))
        if not fields or fields.get(b"v") != FORMAT_VERSION:
            return None
        # Redis's clock to this worker's, through the age each time has on Redis's clock.
        offset = time.time() - (int(seconds) + int(micros) / 1_000_000)
        for name in CLOCK_FIELDS & fields.keys():
            try:
                fields[name] = repr(float(fields[name]) + offset).encode()
            except ValueError:
                pass  # unreadable: the caller finds it so
        return fields

    async def store(self, origin: str, fields: Mapping[bytes, bytes], ttl: float) -> None:
        """Replace the hash of ``origin`` (times given on this worker's clock, kept on
        Redis's); it expires ``ttl`` plus the stale-serving window from now."""
        now = time.time()
        times: list[bytes | str] = []
        others: list[bytes | str] = [b"v", FORMAT_VERSION]
        for name, value in fields.items():
            if name in CLOCK_FIELDS:
                times += [name, repr(float(value) - now)]
            else:
                others += [name, value]
        ttl_ms = max(1, int((ttl + self.stale_window) * 1000))
        await self._call(
            self._store(
                keys=[self.key("robots", origin)], args=[ttl_ms, len(times) // 2, *times, *others]
            )
        )

    # -- one download for the fleet ------------------------------------------------------------
    async def lock(self, origin: str) -> bool:
        """Take the download lock of ``origin``: True if this worker now holds it."""
        taken = await self._call(
            self._client.set(
                self.key("lock", origin),
                self.token,
                nx=True,
                px=max(1, int(self.lock_timeout * 1000)),
            )
        )
        return bool(taken)

    async def unlock(self, origin: str) -> None:
        await self._call(self._unlock(keys=[self.key("lock", origin)], args=[self.token]))

    # -- Crawl-delay for the fleet -------------------------------------------------------------
    async def take_turn(self, origin: str, delay: float, hold: float) -> tuple[float, bytes]:
        """Try to take the origin's turn to send, for at most ``hold`` seconds: ``(0.0, id)``
        when taken, else ``(seconds until the current turn ends, id)``; see :meth:`turn_done`."""
        self._turns += 1
        turn = self.token + b"-%d" % self._turns
        left = await self._call(
            self._turn(
                keys=[self.key("delay", origin)],
                args=[max(1, int(hold * 1000)), turn],
            )
        )
        return int(left) / 1000, turn

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        """The request of ``turn`` was answered: the next turn comes ``delay`` from now."""
        await self._call(
            self._turn_done(
                keys=[self.key("delay", origin)], args=[max(1, int(delay * 1000)), turn]
            )
        )

    async def ping(self) -> None:
        await self._call(self._client.ping())

    async def close(self) -> None:
        try:
            await self._client.aclose()
        except Exception:  # closing a broken connection: nothing left to do
            pass

    def __repr__(self) -> str:
        return f"RedisOriginCache({self.url!r}, prefix={self.prefix!r})"
