"""What a copy of robots.txt kept across time may say about time, by today's settings: the one
definition that the readers of kept copies (the store's file, ``scrapy_rerp.core.store``; a
fleet's Redis) apply (standard library only).

A kept copy carries times another process wrote: another host whose clock was wrong, an earlier
run under other settings, or a tampered file. Read back, it is bounded as a copy fetched now
would be, so that no copy outlives the rules that made it (docs/status-policy.rst, "What a kept
copy is held to"):

* a time is a finite number of seconds between the epoch and :data:`LATEST_TIME` (the last
  second a date shows), or the copy is not used;
* it was fetched at most :data:`CLOCK_SKEW` seconds in the future (two clocks a little apart),
  or it is not used: a copy "fetched" later would be fresh, and stand through an outage, for as
  long as its clock is ahead;
* it is fresh at most its longest lifetime after its fetch (:func:`longest_lifetime`:
  ``RERP_MAX_LIFETIME``, or ``RERP_ERROR_LIFETIME`` when longer), whatever expiry it carries;
* it stands in through an outage at most ``RERP_STALE_MAX_AGE`` after its fetch, and an outage
  is kept at most :func:`longest_retry_wait` past now (the backoff's cap, or a day of
  ``Retry-After``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from scrapy_rerp.core.status import RETRY_AFTER_MAX

if TYPE_CHECKING:
    from scrapy_rerp.core.settings import RerpSettings

__all__ = [
    "CLOCK_SKEW",
    "LATEST_TIME",
    "bounded_expiry",
    "longest_lifetime",
    "longest_retry_wait",
    "moment_problem",
]

#: Seconds a kept copy may have been "fetched" after now: clocks of one machine's processes, or
#: of a fleet's hosts, a little apart (five minutes, as Kerberos allows).
CLOCK_SKEW = 300.0
#: The latest time a kept copy may name: 9999-12-31T23:59:59Z, the last a date can show.
LATEST_TIME = 253_402_300_799.0


def moment_problem(name: str, value: object, now: float, *, past: bool = True) -> str | None:
    """What is wrong with ``value`` as the time ``name`` of a kept copy, if anything: a finite
    number of seconds from the epoch to :data:`LATEST_TIME` and, when ``past`` (a fetch, the
    start of an outage), at most :data:`CLOCK_SKEW` after ``now``. The message begins with
    ``"future"`` when only the clock is wrong."""
    # An int or a float itself: not a bool, nor another subclass.
    seconds = value if type(value) is int or type(value) is float else None
    if seconds is None or not math.isfinite(seconds):
        return f"{name} {value!r} is not a time"
    if not 0 <= seconds <= LATEST_TIME:
        return f"{name} {value!r} is not a time between 1970 and 9999"
    if past and seconds > now + CLOCK_SKEW:
        return f"future: {name} is {seconds - now:.0f}s ahead of this clock"
    return None


def longest_lifetime(settings: RerpSettings) -> float:
    """The longest a copy is fresh after its fetch under ``settings``: ``RERP_MAX_LIFETIME`` for
    parsed rules, ``RERP_ERROR_LIFETIME`` for a status's "allow all" or "disallow all"."""
    return max(settings.max_lifetime, settings.error_lifetime)


def bounded_expiry(fetched_at: float, expires_at: float, lifetime: float) -> float:
    """When a kept copy fetched at ``fetched_at`` expires: the expiry it carries, never later
    than ``lifetime`` (:func:`longest_lifetime` of today's settings) after its fetch."""
    return min(expires_at, fetched_at + lifetime)


def longest_retry_wait(settings: RerpSettings) -> float:
    """The longest a kept outage may wait for its next retry: the backoff's cap
    (``RERP_RETRY_BACKOFF_MAX``) or a day of ``Retry-After``, whichever is longer."""
    return max(settings.retry_backoff_max, RETRY_AFTER_MAX)
