"""What a worker takes from an origin's hash in Redis: the bounds of today's settings.

Redis is shared with other tools and people (an ``HSET`` by hand, a restored dump, a worker of
another configuration): an entry read from it is used only if no worker with these settings
could have written something else (docs/fleet.rst, "What Redis holds is input"):

* no copy fetched in the future, nor an outage begun there, beyond
  :data:`~scrapy_rerp.core.bounds.CLOCK_SKEW`;
* no lifetime (expiry minus fetch) beyond ``RERP_MAX_LIFETIME`` (or ``RERP_ERROR_LIFETIME``, for
  "allow all" and "disallow all" decided by a status, if longer), plus that skew;
* no outage (an unreachable robots.txt, or rules kept through one) retried later than its own
  bound, the longest backoff: ``RERP_RETRY_BACKOFF_MAX``, or a ``Retry-After`` honoured up to
  :data:`~scrapy_rerp.core.status.RETRY_AFTER_MAX`, plus that skew (the bounds of
  :mod:`scrapy_rerp.core.bounds`, which the store's file is held to as well);
* no failure count below zero.

An entry beyond them is rejected (counted, logged at WARNING by the sharing) and robots.txt is
fetched again, its result replacing the hash. The longest TTL a worker gives a hash
(:attr:`HashBounds.keep`) bounds the key's: one without a TTL, or with a longer one, is cut to
it when read (:mod:`scrapy_rerp.fleet.store`).

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_rerp.core.bounds import CLOCK_SKEW, longest_lifetime, longest_retry_wait
from scrapy_rerp.core.data import Outcome

if TYPE_CHECKING:
    from scrapy_rerp.core.data import RobotsEntry
    from scrapy_rerp.core.settings import RerpSettings

__all__ = ["HashBounds"]

# CLOCK_SKEW is the store's (scrapy_rerp.core.bounds): the fleet keeps its times on Redis's
# clock, so its workers differ by a call's latency at most, and a hash written by hand on another
# host's clock gets the same allowance as a store file copied from one.


@dataclass(frozen=True)
class HashBounds:
    """The bounds an entry read from Redis is held to, in seconds."""

    lifetime: float  # the longest lifetime of a fresh entry
    outage: float  # the longest wait before an unreachable robots.txt is retried
    keep: float  # the longest TTL a worker gives an origin's hash

    @classmethod
    def of(cls, settings: RerpSettings) -> HashBounds:
        lifetime = longest_lifetime(settings)
        outage = longest_retry_wait(settings)
        # What the sharing asks the store for (the entry's lifetime, or rules kept until
        # RERP_STALE_MAX_AGE from their fetch), plus the store's stale-serving window.
        kept = max(lifetime, outage, settings.stale_max_age) + settings.max_lifetime
        return cls(lifetime=lifetime, outage=outage, keep=kept + CLOCK_SKEW)

    def problem(self, entry: RobotsEntry, now: float) -> str | None:
        """Why ``entry`` (read from Redis, its times on this worker's clock ``now``) is beyond
        the bounds, in a few words; None when within them."""
        if entry.fetched_at > now + CLOCK_SKEW:
            return f"fetched {entry.fetched_at - now:.0f} s in the future"
        if entry.outage_since is not None and entry.outage_since > now + CLOCK_SKEW:
            return f"an outage beginning {entry.outage_since - now:.0f} s in the future"
        if entry.failures < 0:
            return f"{entry.failures} failures"
        if entry.outcome == Outcome.UNREACHABLE or entry.failures > 0:
            wait = entry.expires_at - now
            if wait > self.outage + CLOCK_SKEW:
                longest = f"{self.outage:.0f} s"
                return f"an outage retried in {wait:.0f} s, beyond the longest backoff of {longest}"
            return None
        lifetime = entry.expires_at - entry.fetched_at
        if lifetime > self.lifetime + CLOCK_SKEW:
            longest = f"{self.lifetime:.0f} s"
            return f"a lifetime of {lifetime:.0f} s, beyond RERP_MAX_LIFETIME's {longest}"
        return None
