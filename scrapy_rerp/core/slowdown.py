"""Sites that say "slow down": what a 429 or 503 answer to a page asks, and the raised floor.

Standard library only; the politeness controller (:mod:`scrapy_rerp.core.politeness`) acts on it:

* :func:`slow_answer` reads an answer: a 429, or a 503, is a slow-down; its ``Retry-After``
  (delta-seconds, or an HTTP date read against the response's ``Date``, as
  :func:`scrapy_rerp.core.status.retry_after` reads it for robots.txt too) asks for a cool-down
  of the origin until then. A ``Retry-After`` that is absent, unreadable, zero or in the past
  asks for none: the origin's delay floor is raised instead.
* :class:`FloorBackoff` keeps those raised floors: the first is
  ``max(RERP_SLOWDOWN_START_FLOOR, 2 x the origin's own floor)``, each later slow-down doubles it
  (at most ``RERP_SLOWDOWN_MAX_FLOOR``), and ``RERP_SLOWDOWN_DECAY_AFTER`` answers in a row that
  are no slow-down halve it; halved below :data:`FLOOR_GONE` or to the origin's own floor, it is
  dropped. Only answers to requests sent after the floor last changed count: the requests that
  were already on their way when a floor was raised say nothing about the new one, and a burst
  of 429s raises it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from scrapy_rerp.core.status import retry_after

__all__ = [
    "COOL_DOWN",
    "FLOOR_GONE",
    "FLOOR_KEPT",
    "FLOOR_RAISED",
    "META",
    "SLOW_STATUSES",
    "FloorBackoff",
    "SlowAnswer",
    "slow_answer",
]

#: The statuses by which a site says "slow down".
SLOW_STATUSES = frozenset({429, 503})

#: ``request.meta`` (and so ``response.meta``) key of the slow-down decisions taken for a request
#: and its retries: see docs/status-policy.rst.
META = "rerp_slowdown"

#: The decisions a slow-down answer leads to (``META``'s ``"decision"``).
COOL_DOWN = "cool_down"  # nothing is sent to the origin until the Retry-After time
FLOOR_RAISED = "floor_raised"  # no usable Retry-After: the origin's floor went up
FLOOR_KEPT = "floor_kept"  # the request left before the floor last changed: it stays as it is

#: Seconds: a raised floor halved below this is dropped (the origin is back to its own pace).
FLOOR_GONE = 0.01


class _HeadersLike(Protocol):
    def get(self, key: bytes, def_val: bytes | None = None) -> bytes | None: ...


@dataclass(frozen=True)
class SlowAnswer:
    """A 429 or 503 answer to a page."""

    status: int
    retry_after: str | None  # the Retry-After header as sent, if any
    wait: float | None  # the seconds it asks for (> 0); None: absent, unreadable, zero or past


def slow_answer(status: int, headers: _HeadersLike, now: float) -> SlowAnswer | None:
    """What an answer with ``status`` and ``headers`` asks, if it is a slow-down (429, 503);
    ``now`` is this machine's Unix time."""
    if status not in SLOW_STATUSES:
        return None
    value = headers.get(b"Retry-After")
    return SlowAnswer(
        status,
        None if value is None else value.decode("latin-1", "replace"),
        retry_after(headers, now),
    )


@dataclass
class _Floor:
    floor: float  # seconds
    changed_at: float  # monotonic time of the last raise or halving
    good: int = 0  # answers in a row without slow-down, of requests sent since changed_at


class FloorBackoff:
    """Raised floors per origin, up on slow-downs and down on good answers.

    Times are ``time.monotonic()`` values given by the caller. A fleet worker also takes the
    fleet's floors (:meth:`sync`), each with its version (Redis's time of the change, in ms):
    one older than what the worker has is ignored.
    """

    def __init__(self, start: float, maximum: float, decay_after: int) -> None:
        self.start = start
        self.maximum = maximum
        self.decay_after = decay_after
        self._floors: dict[str, _Floor] = {}
        self._versions: dict[str, int] = {}  # the fleet's version of each origin's floor

    def __contains__(self, origin: str) -> bool:
        return origin in self._floors

    def __bool__(self) -> bool:
        return bool(self._floors)

    def floor(self, origin: str) -> float | None:
        """The raised floor of ``origin``, if it has one."""
        entry = self._floors.get(origin)
        return None if entry is None else entry.floor

    def raised(self, origin: str, sent_at: float, now: float, own_floor: float) -> float | None:
        """A slow-down answered a request of ``origin`` sent at ``sent_at``: its new floor, or
        None when the request left before the floor last changed (nothing changes)."""
        entry = self._floors.get(origin)
        if entry is None:
            floor = max(self.start, 2 * own_floor)
        elif sent_at < entry.changed_at:
            return None
        else:
            floor = 2 * entry.floor
        floor = min(floor, self.maximum)
        self._floors[origin] = _Floor(floor, now)
        return floor

    def good_answer(
        self, origin: str, sent_at: float, now: float, own_floor: float
    ) -> float | None:
        """An answer that is no slow-down, to a request of ``origin`` sent at ``sent_at``: the
        new floor when this one made it halve (0.0 when it is dropped), else None."""
        entry = self._floors.get(origin)
        if entry is None or sent_at < entry.changed_at:
            return None
        entry.good += 1
        if entry.good < self.decay_after:
            return None
        floor = entry.floor / 2
        if floor < FLOOR_GONE or floor <= own_floor:
            del self._floors[origin]
            return 0.0
        self._floors[origin] = _Floor(floor, now)
        return floor

    def sync(
        self, origin: str, floor: float, version: int, now: float, newer_only: bool = True
    ) -> bool:
        """The fleet's floor of ``origin`` (0: none) at ``version``: taken when newer than the
        version this worker has (or as new, without ``newer_only``: the answer to a change this
        worker asked for). True when the floor changed."""
        known = self._versions.get(origin, 0)
        if version < known or (version == known and newer_only):
            return False
        if version:
            self._versions[origin] = version
        if floor <= 0:
            return self._floors.pop(origin, None) is not None
        if self.floor(origin) == floor:
            return False
        self._floors[origin] = _Floor(floor, now)
        return True

    def forget(self, origin: str) -> None:
        self._floors.pop(origin, None)
        self._versions.pop(origin, None)

    def origins(self) -> list[str]:
        return list(self._floors)
