"""Crawl-delay held by a whole fleet: the origin's turn, on Redis's clock.

Every download of a floored origin (Crawl-delay, Request-rate) takes the origin's turn first.
A turn is taken by the worker about to send (``SET NX PX`` on Redis's clock) and lasts until
that request is answered, then the floor: the next request of any worker reaches the site at
least a floor after the previous one's answer, however late the previous one left its worker.
Two simpler schemes were measured first with ``benchmarks/bench_fleet.py`` (three workers on
two busy cores, Crawl-delay 0.5 s): reserving the next free time ahead and sleeping until then
(a late wake-up let the next worker's request follow 0.31 s after), and a turn of one floor
from the moment it was taken (a request that sat 0.4 s in its busy worker after taking its turn
arrived 0.12 s before the next one).

Redis down: no turn is taken, the worker's local floor alone applies
(:mod:`scrapy_rerp.fleet.guard`). Stat: ``robotstxt/redis/turns`` (turns taken).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy_rerp.cache import SharedOriginCache
    from scrapy_rerp.fleet.guard import RedisGuard

__all__ = ["TURN_HOLD", "SharedDelay"]

#: A turn lasts until its request is answered, then the floor: at most this many floors if the
#: answer never comes (a failed download), so that a lost worker blocks no origin for long.
TURN_HOLD = 2.0


class SharedDelay:
    """One worker's side of the fleet's Crawl-delay turns."""

    def __init__(
        self,
        store: SharedOriginCache,
        guard: RedisGuard,
        stats: Any,
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self.store = store
        self.guard = guard
        self.stats = stats
        self._sleep = sleep

    async def wait_for_turn(self, origin: str, delay: float) -> bytes | None:
        """Wait until this worker holds the turn of ``origin``: returns the turn's id, to be
        ended with :meth:`turn_done` when the request is answered, or None when Redis is down
        (the local floor alone applies)."""
        while True:
            ok, answer = await self.guard.call(
                lambda: self.store.take_turn(origin, delay, TURN_HOLD * delay)
            )
            if not ok or answer is None:
                return None
            wait, turn = answer
            if not wait:
                self.stats.inc_value("robotstxt/redis/turns")
                return turn
            if wait > delay:
                # The holder's request is not answered yet; once it is, the turn ends a floor
                # later: look again soon rather than at the longest the turn may last.
                wait = min(wait - delay, max(0.02, delay / 10))
            await self._sleep(wait)

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        """The request of ``turn`` was answered: the next turn comes ``delay`` from now."""
        await self.guard.call(lambda: self.store.turn_done(origin, delay, turn))

    async def first_turn(self, origin: str, delay: float) -> None:
        """The robots.txt answer just arrived: it is the origin's first request on the fleet's
        clock, so the first page waits ``delay`` after it."""
        # A turn held for just the floor: the answer is already in.
        await self.guard.call(lambda: self.store.take_turn(origin, delay, delay))
