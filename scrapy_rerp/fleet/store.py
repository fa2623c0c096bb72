"""``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``: robots.txt shared by a fleet on Redis.

Its two protocols are here, beside the store that implements them: :class:`DocumentStore`
(each origin's documents and their download lock: what :mod:`~scrapy_rerp.fleet.documents` reads)
and :class:`TurnsAndSlowdowns` (the turns, the slow-downs and their channel: what
:mod:`~scrapy_rerp.fleet.delay` reads); :class:`SharedOriginCache` is both. The crawl that
builds the store (``crawl/assembly``, ``crawl/middleware``) stands above the fleet; the core
never names it. ``scrapy_rerp.cache`` (the cache) names the store and :class:`SharedOriginCache`
for their public paths only.

Workers of one crawl (scrapy-redis fleets, or any processes sharing a Redis) keep their
robots.txt knowledge and their Crawl-delay clocks in one Redis, with redis-py's asyncio client:

* ``<prefix>:robots:<origin>``: a hash per origin, in the layout of
  :mod:`scrapy_rerp.fleet.codec` (the robots.txt body as fetched, never pickled rules, and what
  a crawl knows of it), with its format version. Its times are on Redis's clock (``TIME``, in
  the scripts that write and read it), so workers whose clocks disagree agree on them. Its
  Redis TTL is the entry's lifetime plus the stale-serving window (``RERP_MAX_LIFETIME``), so
  an expired copy can still serve while it is refetched; rules are kept at least until
  ``RERP_STALE_MAX_AGE`` from their fetch (plus that window), to stand in through outages
  (the caller's ``ttl``: :mod:`scrapy_rerp.fleet.documents`);
* ``<prefix>:lock:<origin>``: ``SET NX PX``: the one worker that downloads robots.txt for the
  fleet; the others poll the hash for its result. A worker that dies holding the lock delays
  the others by at most ``RERP_REDIS_LOCK_TIMEOUT``;
* ``<prefix>:tdmrep:<origin>`` and ``<prefix>:lock-tdmrep:<origin>``: the same for the
  origin's ``tdmrep.json`` (:mod:`scrapy_rerp.core.documents`), when a crawl reads it;
* ``<prefix>:delay:<origin>``: the origin's turn, taken atomically (``SET NX PX``, in a Lua
  script) by the worker about to send, and set to end the Crawl-delay after that request's
  answer, on the server's clock, so that all workers together keep the Crawl-delay;
* ``<prefix>:slow:<origin>``: what the site said when it asked to slow down, a hash on Redis's
  clock (ms): ``until`` (the end of its cool-down), ``floor`` (its raised floor, ms),
  ``changed`` (when the floor last changed), ``version`` (the floor's: that time, made to grow
  by one at least with every change, also across the hash's expiry) and ``good`` (answers
  without slow-down since). Every change is a Lua script that reads ``TIME``; the key lives at least
  until the cool-down ends, and :data:`SLOWDOWN_KEEP` after the floor last changed;
* ``<prefix>:slowdown``: a channel on which the script that changes a slow-down also publishes
  it, so that the other workers hear it at once (:meth:`RedisOriginCache.listen`): a cool-down
  reaches even the requests they had already admitted, waiting in their download slots.

Every call has a timeout (``RERP_REDIS_TIMEOUT``); an error or timeout raises
:class:`RedisUnavailable`, on which each worker falls back to what one process can do
(:mod:`scrapy_rerp.fleet.guard`).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Protocol, TypeVar

from scrapy_rerp.core.body import MAX_SIZE
from scrapy_rerp.core.settings import RerpSettings, RerpSettingsError, redacted_url
from scrapy_rerp.fleet.bounds import HashBounds
from scrapy_rerp.fleet.codec import CLOCK_FIELDS, FIELDS, FORMAT_VERSION

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


__all__ = [
    "MAX_FIELD",
    "SLOWDOWN_KEEP",
    "DocumentStore",
    "OversizedHash",
    "RedisCommandError",
    "RedisFailure",
    "RedisOriginCache",
    "RedisUnavailable",
    "SharedOriginCache",
    "TurnsAndSlowdowns",
]

_T = TypeVar("_T")

#: The most bytes a field of an origin's hash other than its body may hold (the body: the
#: crawl's ``RERP_MAX_SIZE``): a URL, a validator and a time are far shorter.
MAX_FIELD = 64 * 1024

#: Seconds a raised floor is kept in Redis after its last change: a fleet that stopped and
#: starts again later does not inherit it for ever.
SLOWDOWN_KEEP = 3600.0

# Redis's clock in ms, in every slow-down script (KEYS[1]: the slow-down hash), and how they
# read a number from it: a value that is not a finite number of ms (written by hand, or by
# something else) reads as absent, never as a script error, and a key of another type in the
# hash's place is removed; the caller caps what it is given.
_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function _number(value)
  local n = tonumber(value or '')
  if n == nil or n ~= n or n == math.huge or n == -math.huge then
    return nil
  end
  return math.floor(n)
end
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then
  redis.call('DEL', KEYS[1])
end
"""

# KEYS[1]: the slow-down hash; ARGV[1], ARGV[2]: the longest cool-down and the highest floor a
# worker applies (ms). The ms left of its cool-down (0: none), its floor (ms, 0: none), the
# floor's version, and 1 if a value beyond those caps (which no worker writes) was cut to them
# in the hash, so that it holds the origin back once, not at every read.
_SLOW_READ = (
    _NOW
    + """
local v = redis.call('HMGET', KEYS[1], 'until', 'floor', 'version')
local left = math.max(0, (_number(v[1]) or now) - now)
local floor = math.max(0, _number(v[2]) or 0)
local cut = 0
if left > tonumber(ARGV[1]) then
  left = tonumber(ARGV[1])
  redis.call('HSET', KEYS[1], 'until', now + left)
  cut = 1
end
if floor > tonumber(ARGV[2]) then
  floor = tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'floor', floor)
  cut = 1
end
return {left, floor, _number(v[3]) or 0, cut}
"""
)

# KEYS[1]: the slow-down hash. ARGV[1]: the cool-down in ms; ARGV[2..4]: the channel, this
# worker's token, the origin (for the message). A cool-down only ever ends later. The ms left
# of the cool-down, and 1 if this call moved its end (then published).
_SLOW_COOL_DOWN = (
    _NOW
    + """
local ends = now + tonumber(ARGV[1])
local old = _number(redis.call('HGET', KEYS[1], 'until')) or 0
local moved = 0
if ends > old then
  redis.call('HSET', KEYS[1], 'until', ends)
  redis.call('PUBLISH', ARGV[2], 'cool ' .. ARGV[3] .. ' ' .. (ends - now) .. ' 0 ' .. ARGV[4])
  moved = 1
else
  ends = old
end
if redis.call('PTTL', KEYS[1]) < ends - now then
  redis.call('PEXPIRE', KEYS[1], ends - now)
end
return {ends - now, moved}
"""
)

# What the two scripts that may change a raised floor (_SLOW_RAISE, _SLOW_GOOD) read first,
# after _NOW. KEYS[1]: the slow-down hash; ARGV[1]: ms since the answered request left. The
# floor (ms, 0: none), when it last changed, its version, and whether the request left before
# that change (then it says nothing of the floor as it is now).
_FLOOR_READ = """
local v = redis.call('HMGET', KEYS[1], 'floor', 'changed', 'version')
local floor = math.max(0, _number(v[1]) or 0)
local changed = _number(v[2]) or 0
local version = _number(v[3]) or 0
local sent_before_change = now - tonumber(ARGV[1]) < changed
"""

# How those two scripts end when they change the floor, once ``floor`` holds the new one
# (0: dropped): a new version, the good answers counted again from 0, the hash kept ARGV[5] ms
# at least, and the change published on the channel ARGV[6] with this worker's token ARGV[7]
# and the origin ARGV[8]. The floor, its version, 1 (changed).
_FLOOR_WRITE = """
version = math.max(now, version + 1)
redis.call('HSET', KEYS[1], 'floor', floor, 'changed', now, 'version', version, 'good', 0)
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[5]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
local said = 'floor ' .. ARGV[7] .. ' ' .. floor .. ' ' .. version .. ' ' .. ARGV[8]
redis.call('PUBLISH', ARGV[6], said)
return {floor, version, 1}
"""

# KEYS[1]: the slow-down hash. ARGV: ms since the answered request left, the start floor, the
# highest floor, the origin's own floor (all ms), ms to keep the hash, then the channel, this
# worker's token and the origin. A request that left before the floor last changed changes
# nothing. The floor, its version, 1 if it changed (then published).
_SLOW_RAISE = (
    _NOW
    + _FLOOR_READ
    + """
if floor > 0 and sent_before_change then
  return {floor, version, 0}
end
if floor > 0 then
  floor = 2 * floor
else
  floor = math.max(tonumber(ARGV[2]), 2 * tonumber(ARGV[4]))
end
floor = math.min(floor, tonumber(ARGV[3]))
"""
    + _FLOOR_WRITE
)

# KEYS[1]: the slow-down hash. ARGV: ms since the answered request left, the good answers
# that halve the floor, the origin's own floor, the floor below which it is dropped (ms), ms
# to keep the hash, then the channel, this worker's token and the origin. The floor (0:
# dropped), its version, 1 if it changed (then published).
_SLOW_GOOD = (
    _NOW
    + _FLOOR_READ
    + """
if floor <= 0 or sent_before_change then
  return {floor, version, 0}
end
local good = (_number(redis.call('HGET', KEYS[1], 'good')) or 0) + 1
redis.call('HSET', KEYS[1], 'good', good)
if good < tonumber(ARGV[2]) then
  return {floor, version, 0}
end
floor = math.floor(floor / 2)
if floor < tonumber(ARGV[4]) or floor <= tonumber(ARGV[3]) then
  floor = 0
end
"""
    + _FLOOR_WRITE
)

# KEYS[1]: the delay key or the lock key. ARGV[1]: how long the turn or the lock may last at
# most, in ms; ARGV[2]: the turn's id, or this worker's token. 0 when the caller has the turn
# or now holds the lock (nobody had it); else the ms until the current one ends, to wait and
# ask again. A key that would outlast any turn or lock (no TTL: written by hand or by
# something else; or a longer TTL than one may have) is cut to that length, so that it blocks
# its origin for one turn or one lock timeout at most (a lock without a TTL would stop every
# worker for good): then -ms.
_CLAIM = """
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  return 0
end
local most = tonumber(ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left == -2 then
  return 1
end
if left == -1 or left > most then
  redis.call('PEXPIRE', KEYS[1], most)
  return -most
end
return math.max(1, left)
"""

# KEYS[1]: the delay key or the lock key. ARGV[1]: ms from now; ARGV[2]: the turn's id, or the
# token of the worker releasing the lock. If the key is still theirs, it ends ARGV[1] ms from
# now: the request of that turn has been answered, and the next turn starts the delay from now;
# or, at 0 ms, the lock is released (PEXPIRE deletes a key given no time left).
_END = """
if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[2] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0
"""

# KEYS[1]: the hash key. ARGV[1]: the longest TTL a worker gives it (ms); ARGV[2], ARGV[3]: the
# most bytes its body and each other field may hold; then the names of the fields to read.
# Their values (false: absent), Redis's clock (seconds, microseconds), 1 if the key's TTL was
# cut (none, or a longer one), then the name and length of a field beyond its cap, whose values
# are not sent (lengths are read first: a 100 MB body never leaves Redis). A key of another
# type reads as absent.
_LOAD = """
local t = redis.call('TIME')
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then
  return {{}, t[1], t[2], 0}
end
local cut = 0
local left = redis.call('PTTL', KEYS[1])
if left == -1 or left > tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  cut = 1
end
local names = {}
for i = 4, #ARGV do
  local length = redis.call('HSTRLEN', KEYS[1], ARGV[i])
  local most = ARGV[i] == 'body' and tonumber(ARGV[2]) or tonumber(ARGV[3])
  if length > most then
    return {{}, t[1], t[2], cut, ARGV[i], length}
  end
  names[#names + 1] = ARGV[i]
end
return {redis.call('HMGET', KEYS[1], unpack(names)), t[1], t[2], cut}
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


class RedisFailure(Exception):
    """A Redis call failed: :class:`RedisUnavailable` or :class:`RedisCommandError`."""


class RedisUnavailable(RedisFailure):
    """Redis did not answer in time, or the connection failed: an outage."""


class RedisCommandError(RedisFailure):
    """Redis answered, with an error (a full ``maxmemory``, a read-only replica, a value of the
    wrong type): not an outage, Redis is used for everything else."""


class OversizedHash(Exception):
    """An origin's hash holds a field longer than a worker ever writes (its body beyond
    ``RERP_MAX_SIZE``, another field beyond :data:`MAX_FIELD`): not read."""

    def __init__(self, field: str, length: int, most: int) -> None:
        super().__init__(f"its {field!r} field holds {length} bytes, beyond {most}")
        self.field = field
        self.length = length
        self.most = most


class DocumentStore(Protocol):
    """What a fleet's store keeps of each origin's documents, for
    :class:`~scrapy_rerp.fleet.documents.FleetStore`: a hash per origin and kind, and the lock
    of its one download; asynchronous, so that a networked store never blocks the reactor."""

    is_shared: bool
    url: str
    round_trips: int

    # ``kind``: the document's fleet key (DocumentKind.token): "robots", "tdmrep".
    async def load(self, origin: str, kind: str = "robots") -> dict[bytes, bytes] | None:
        """The stored fields of ``origin`` (:mod:`scrapy_rerp.fleet.codec`), or None."""

    async def store(
        self, origin: str, fields: dict[bytes, bytes], ttl: float, kind: str = "robots"
    ) -> None: ...

    async def lock(self, origin: str, kind: str = "robots") -> bool:
        """Take ``origin``'s download lock for the fleet; True when this worker holds it."""

    async def unlock(self, origin: str, kind: str = "robots") -> None: ...

    async def close(self) -> None: ...


class TurnsAndSlowdowns(Protocol):
    """How a fleet's workers coordinate their politeness, for
    :class:`~scrapy_rerp.fleet.delay.SharedDelay`: each origin's turn to send, its slow-down
    (cool-down, raised floor), and the channel on which slow-downs are heard at once."""

    # What each call answers: RedisOriginCache's.
    async def take_turn(self, origin: str, delay: float, hold: float) -> tuple[float, bytes]: ...

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None: ...

    async def slowdown(
        self, origin: str, max_wait: float, max_floor: float
    ) -> tuple[float, float, int]: ...

    async def cool_down(self, origin: str, seconds: float) -> tuple[float, bool]: ...

    async def raise_floor(
        self, origin: str, sent_ago: float, start: float, maximum: float, own: float
    ) -> tuple[float, int, bool]: ...

    async def good_answer(
        self, origin: str, sent_ago: float, decay_after: int, own: float, gone: float
    ) -> tuple[float, int, bool]: ...

    async def listen(self, heard: Callable[[str, str, float, int], None]) -> None:
        """Hear the other workers' slow-downs as they are written, until cancelled."""


class SharedOriginCache(DocumentStore, TurnsAndSlowdowns, Protocol):
    """Both, as :class:`RedisOriginCache` provides them (``RERP_CACHE`` names a class that
    does, ``is_shared = True``); public as ``scrapy_rerp.cache.SharedOriginCache``."""


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
        max_body: int = MAX_SIZE,
        keep: float | None = None,
    ) -> None:
        try:
            from redis import asyncio as redis_asyncio
            from redis.exceptions import ResponseError
        except ImportError as exc:  # pragma: no cover - the [redis] extra
            raise ImportError(
                'RedisOriginCache needs redis-py: pip install -e "./scrapy-rerp[redis]"'
            ) from exc
        self.url = url
        self._secrets = _secrets(url)
        self.prefix = prefix
        self.channel = f"{prefix}:slowdown"  # on which slow-downs are published
        self.timeout = timeout
        self.lock_timeout = lock_timeout
        self.stale_window = stale_window
        self.max_body = max_body
        # The longest TTL of an origin's hash (a key without one, or a longer one, is cut to it).
        self.keep = keep if keep is not None else HashBounds.of(RerpSettings()).keep
        # One token per process: a lock is released only by the worker that holds it.
        self.token = f"{os.getpid()}-{uuid.uuid4().hex}".encode()
        self._command_error: type[Exception] = ResponseError
        self._client = redis_asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._load = self._client.register_script(_LOAD)
        self._store = self._client.register_script(_STORE)
        self._claim = self._client.register_script(_CLAIM)  # a turn, or the download lock
        self._end = self._client.register_script(_END)  # a turn's end, or the lock's release
        self._slow_read = self._client.register_script(_SLOW_READ)
        self._slow_cool_down = self._client.register_script(_SLOW_COOL_DOWN)
        self._slow_raise = self._client.register_script(_SLOW_RAISE)
        self._slow_good = self._client.register_script(_SLOW_GOOD)
        self._turns = 0
        self.round_trips = 0  # calls sent to Redis (a pipeline is one)
        # turn, lock and hash keys found without a TTL, or a longer one, and cut; slow-downs cut
        self.repaired = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisOriginCache:
        return cls.from_settings(RerpSettings.from_settings(crawler.settings, require_obey=False))

    @classmethod
    def from_settings(cls, settings: RerpSettings) -> RedisOriginCache:
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
            max_body=settings.max_size,
            keep=HashBounds.of(settings).keep,
        )

    def key(self, kind: str, origin: str) -> str:
        return f"{self.prefix}:{kind}:{origin}"

    async def _call(self, awaitable: Awaitable[_T]) -> _T:
        self.round_trips += 1
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except self._command_error as exc:
            raise RedisCommandError(self._said(exc)) from exc
        except Exception as exc:  # redis.ConnectionError, OSError, TimeoutError
            # The pool's idle connections are as dead as this one: without this, each would
            # fail once more after Redis is back ("Connection closed by server"), and each
            # failure would be taken for a new outage.
            with suppress(Exception):  # closing broken connections: nothing left to do
                await self._client.connection_pool.disconnect(inuse_connections=False)
            raise RedisUnavailable(self._said(exc)) from exc

    def _said(self, exc: BaseException) -> str:
        """What a failed call says (the message of a :class:`RedisFailure`, which the log shows),
        without the URL's credentials, should redis-py ever quote them."""
        text = f"{type(exc).__name__}: {exc}"
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # -- entries -------------------------------------------------------------------------------
    async def load(self, origin: str, kind: str = "robots") -> dict[bytes, bytes] | None:
        """The stored hash of ``origin`` (of the document ``kind``), its times on this worker's
        clock, or None (absent, or of another format version). Only the fields of the format
        are read, each capped (:class:`OversizedHash`: not read); a key without a TTL, or with a
        longer one than a worker gives, is cut to :attr:`keep` (counted in :attr:`repaired`)."""
        args = [_ms(self.keep), self.max_body, MAX_FIELD, *FIELDS]
        raw, seconds, micros, cut, *oversized = await self._call(
            self._load(keys=[self.key(kind, origin)], args=args)
        )
        if cut:
            self.repaired += 1
        if oversized:
            name, length = oversized
            most = self.max_body if name == b"body" else MAX_FIELD
            raise OversizedHash(name.decode("ascii"), int(length), most)
        # An empty list for an absent key (or one of another type): nothing read.
        pairs = zip(FIELDS, raw, strict=False)
        fields = {name: value for name, value in pairs if value is not None}
        if not fields or fields.get(b"v") != FORMAT_VERSION:
            return None
        # Redis's clock to this worker's, through the age each time has on Redis's clock.
        offset = time.time() - (int(seconds) + int(micros) / 1_000_000)
        for name in CLOCK_FIELDS & fields.keys():
            with suppress(ValueError):  # unreadable: the caller finds it so
                fields[name] = repr(float(fields[name]) + offset).encode()
        return fields

    async def store(
        self, origin: str, fields: Mapping[bytes, bytes], ttl: float, kind: str = "robots"
    ) -> None:
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
        args = [_px(ttl + self.stale_window), len(times) // 2, *times, *others]
        await self._call(self._store(keys=[self.key(kind, origin)], args=args))

    # -- one download for the fleet ------------------------------------------------------------
    async def lock(self, origin: str, kind: str = "robots") -> bool:
        """Take the download lock of ``origin`` (of the document ``kind``): True if this worker
        now holds it. A lock key that would outlast the lock timeout (no TTL, a longer one) is
        cut to it."""
        key = self.key(_lock_key(kind), origin)
        return await self._take(key, self.lock_timeout, self.token) == 0

    async def unlock(self, origin: str, kind: str = "robots") -> None:
        await self._call(self._end(keys=[self.key(_lock_key(kind), origin)], args=[0, self.token]))

    # -- Crawl-delay for the fleet -------------------------------------------------------------
    async def take_turn(self, origin: str, delay: float, hold: float) -> tuple[float, bytes]:
        """Try to take the origin's turn to send, for at most ``hold`` seconds: ``(0.0, id)``
        when taken, else ``(seconds until the current turn ends, id)``; see :meth:`turn_done`."""
        self._turns += 1
        turn = self.token + b"-%d" % self._turns
        return abs(await self._take(self.key("delay", origin), hold, turn)) / 1000, turn

    async def _take(self, key: str, most: float, token: bytes) -> int:
        """Take the turn or the lock ``key`` for ``token``, for at most ``most`` seconds
        (:data:`_CLAIM`): 0 when taken, else the ms until it ends (negative when cut to
        ``most``, counted in :attr:`repaired`)."""
        left = int(await self._call(self._claim(keys=[key], args=[_px(most), token])))
        if left < 0:
            self.repaired += 1
        return left

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        """The request of ``turn`` was answered: the next turn comes ``delay`` from now."""
        await self._call(self._end(keys=[self.key("delay", origin)], args=[_px(delay), turn]))

    # -- slow-downs for the fleet ---------------------------------------------------------------
    async def slowdown(
        self, origin: str, max_wait: float = SLOWDOWN_KEEP, max_floor: float = SLOWDOWN_KEEP
    ) -> tuple[float, float, int]:
        """What the fleet knows of ``origin``'s slow-down: the seconds left in its cool-down
        (0: none), its raised floor (0: none) and that floor's version; a cool-down longer
        than ``max_wait`` or a floor above ``max_floor`` is cut to it, in Redis too."""
        left, floor, version, cut = await self._call(
            self._slow_read(keys=[self.key("slow", origin)], args=[_ms(max_wait), _ms(max_floor)])
        )
        if cut:
            self.repaired += 1
        return int(left) / 1000, int(floor) / 1000, int(version)

    async def cool_down(self, origin: str, seconds: float) -> tuple[float, bool]:
        """Put ``origin`` in a cool-down for ``seconds`` from now on Redis's clock, unless one
        ends later: the seconds it has left, and whether this call moved its end."""
        left, moved = await self._call(
            self._slow_cool_down(
                keys=[self.key("slow", origin)],
                args=[_ms(seconds), self.channel, self.token, origin],
            )
        )
        return int(left) / 1000, bool(moved)

    async def raise_floor(
        self, origin: str, sent_ago: float, start: float, maximum: float, own: float
    ) -> tuple[float, int, bool]:
        """A slow-down answered a request of ``origin`` sent ``sent_ago`` seconds ago: the
        fleet's floor for it, its version, and whether this call raised it."""
        return await self._change_floor(
            self._slow_raise, origin, _ms(sent_ago), _ms(start), _ms(maximum), _ms(own)
        )

    async def good_answer(
        self, origin: str, sent_ago: float, decay_after: int, own: float, gone: float
    ) -> tuple[float, int, bool]:
        """A request of ``origin`` sent ``sent_ago`` seconds ago was answered without a
        slow-down: the fleet's floor for it (0: none), its version, and whether this call
        halved or dropped it."""
        return await self._change_floor(
            self._slow_good, origin, _ms(sent_ago), decay_after, _ms(own), _ms(gone)
        )

    async def _change_floor(
        self, script: Callable[..., Awaitable[list[int]]], origin: str, *args: int
    ) -> tuple[float, int, bool]:
        """Run a script that may change ``origin``'s floor, ``args`` first (then what
        ``_FLOOR_WRITE`` reads): the floor, its version, and whether it changed."""
        floor, version, changed = await self._call(
            script(
                keys=[self.key("slow", origin)],
                args=[*args, _ms(SLOWDOWN_KEEP), self.channel, self.token, origin],
            )
        )
        return int(floor) / 1000, int(version), bool(changed)

    async def listen(self, heard: Callable[[str, str, float, int], None]) -> None:
        """Call ``heard(kind, origin, seconds, version)`` for each slow-down another worker
        writes (``"cool"``: seconds left in its cool-down; ``"floor"``: the raised floor, 0 for
        none, and its version), until cancelled. Raises :class:`RedisUnavailable` when the
        connection fails (what was said meanwhile is lost: each request still reads the hash)."""
        pubsub = self._client.pubsub()
        try:
            await pubsub.subscribe(self.channel)
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is None or message.get("type") != "message":
                    continue
                said = _slowdown_message(message.get("data"), self.token)
                if said is not None:
                    heard(*said)
        except Exception as exc:  # redis.RedisError, OSError, TimeoutError
            raise RedisUnavailable(self._said(exc)) from exc
        finally:
            with suppress(Exception):  # closing a broken connection: nothing left to do
                await pubsub.aclose()

    async def ping(self) -> None:
        await self._call(self._client.ping())

    async def close(self) -> None:
        with suppress(Exception):  # closing a broken connection: nothing left to do
            await self._client.aclose()

    def __repr__(self) -> str:
        return f"RedisOriginCache({redacted_url(self.url)!r}, prefix={self.prefix!r})"


def _slowdown_message(data: object, own_token: bytes) -> tuple[str, str, float, int] | None:
    """``(kind, origin, seconds, version)`` of a message on the slow-down channel, or None for
    one that is not a well-formed message of another worker (anyone may publish there: the
    listener caps what it hears)."""
    if not isinstance(data, bytes):
        return None
    fields = data.split(b" ", 4)
    if len(fields) != 5 or fields[1] == own_token or fields[0] not in (b"cool", b"floor"):
        return None
    kind, _, value, version, origin = fields
    try:
        seconds, number = int(value) / 1000, int(version)
        name = origin.decode("utf-8")
    except (ValueError, OverflowError, UnicodeDecodeError):
        return None
    if seconds < 0 or not name:
        return None
    return kind.decode("ascii"), name, seconds, number


def _secrets(url: str) -> tuple[str, ...]:
    """The credentials in a Redis URL (its userinfo's password and user, a ``password=`` of its
    query), as they are written and as redis-py reads them, longest first."""
    from urllib.parse import parse_qs, unquote, urlsplit

    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
    except ValueError:
        return ()
    found = {parts.password, parts.username, *query.get("password", ()), *query.get("username", ())}
    found |= {unquote(secret) for secret in found if secret}
    return tuple(sorted((s for s in found if s and len(s) > 1), key=len, reverse=True))


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _px(seconds: float) -> int:
    """A key's lifetime in ms, as ``PX`` and ``PEXPIRE`` take it (1 at least)."""
    return max(1, int(seconds * 1000))


def _lock_key(kind: str) -> str:
    """The kind of the download lock's key for the document ``kind`` (robots.txt's keeps its
    name, which running fleets share)."""
    return "lock" if kind == "robots" else f"lock-{kind}"
