"""What the politeness controller and its parts say of a request robots.txt allows, and where
they act.

* An :class:`Admission`: go on (:data:`GO`), parked (:data:`PARKED`), or refused with a reason;
  :data:`Admitting` is that or an awaitable of it, when the request waits in place (a fleet's
  turn, Redis's answer). The gate turns it into what ``process_request`` returns.
* A parked request waits under a key, its origin's and a purpose (:func:`parking_key`); what
  each purpose waits for is :data:`WAITING_FOR` (the closing summary says it).
* A request that waits, for robots.txt or parked, and cannot wait any more is dropped for a
  :class:`DropReason`, which names its stat (``robotstxt/dropped/<reason>``).
* Where the parts act: a :class:`Throttle` (Scrapy's download slots:
  :mod:`scrapy_rerp.crawl.slots`) and a :class:`Parking` (the middleware's parking lot).

Standard library only: the plain data and protocols that join the controller
(:mod:`scrapy_rerp.core.politeness`), its parts (:mod:`scrapy_rerp.core.floors`,
:mod:`scrapy_rerp.core.cool_downs`, ``scrapy_rerp.fleet.delay``) and the gate.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "GO",
    "PARKED",
    "WAITING_FOR",
    "Admission",
    "Admitting",
    "DropReason",
    "Parking",
    "Throttle",
    "Verdict",
    "origin_and_purpose",
    "parking_key",
    "refused",
]


class Verdict(enum.Enum):
    GO = "go"  # it goes on to its download slot
    PARKED = "parked"  # kept outside the downloader until it may go: return it
    REFUSED = "refused"  # dropped with IgnoreRequest(reason)


@dataclass(frozen=True)
class Admission:
    """What the politeness controller says of a request robots.txt allows."""

    verdict: Verdict
    reason: str = ""  # a refusal's message


GO = Admission(Verdict.GO)
PARKED = Admission(Verdict.PARKED)


def refused(reason: str) -> Admission:
    return Admission(Verdict.REFUSED, reason)


#: An admission now, or an awaitable of one when the request waits in place (a fleet's turn,
#: Redis's answer).
Admitting = Admission | Awaitable[Admission]


#: What a request parked under a key of each purpose waits for (the closing summary says it).
#: A key without a purpose is its origin's: the request waits for its robots.txt.
WAITING_FOR = {
    "": "robots.txt",
    "cool-down": "the end of a cool-down",
    "Crawl-delay": "a Crawl-delay turn",
    "turns begin": "a Crawl-delay turn",
    "closing": "a Crawl-delay or raised floor in a download slot",
}


class DropReason(enum.Enum):
    """Why requests that wait (for robots.txt, or parked) are dropped: each names the stat
    ``robotstxt/dropped/<reason>`` (:attr:`stat`), and reads as its value."""

    UNREACHABLE = "unreachable"  # its origin stayed unreachable for RERP_UNREACHABLE_MAX_WAIT
    PARK_LIMIT = "park_limit"  # RERP_MAX_PARKED_PER_ORIGIN requests wait under its key already
    CRAWL_CLOSING = "crawl_closing"  # the crawl closed first (and nothing persists)
    ERROR = "error"  # robots.txt handling failed unexpectedly (logged at ERROR)

    def __str__(self) -> str:
        return str(self.value)

    @property
    def stat(self) -> str:
        """The stat that counts the requests dropped for this reason."""
        return f"robotstxt/dropped/{self.value}"


def parking_key(origin: str, purpose: str = "") -> str:
    """The key under which requests of ``origin`` wait for ``purpose`` (one of
    :data:`WAITING_FOR`)."""
    return f"{origin} ({purpose})" if purpose else origin


def origin_and_purpose(key: str) -> tuple[str, str]:
    """The origin and the purpose of a parking key (:func:`parking_key`)."""
    origin, _, purpose = key.rpartition(" (")
    if origin and purpose.endswith(")") and purpose[:-1] in WAITING_FOR:
        return origin, purpose[:-1]
    return key, ""


class Throttle(Protocol):
    """Where floors are applied (Scrapy's download slots)."""

    def apply_floor(self, origin: str, floor: float) -> None: ...

    def clear_floor(self, origin: str) -> bool: ...

    def floor_of(self, origin: str) -> float | None: ...

    def floored_origins(self) -> list[str]: ...

    def take_back(self, origin: str, keep: Callable[[Any], bool]) -> int:
        """Offer each request of ``origin`` queued in a download slot (admitted, not sent yet)
        to ``keep``; those it keeps leave the downloader. Returns how many left."""

    def ready_in(self, origin: str) -> float:
        """Seconds until a request of ``origin`` admitted now would leave its slot (0: at
        once; an estimate, to look again then, while the slot sends or holds one already)."""


class Parking(Protocol):
    """Requests kept out of the downloader under a key (the middleware's parking lot)."""

    def park(self, key: str, request: Any) -> DropReason | None:
        """Park ``request`` under ``key``: None, or why it cannot be (it is dropped)."""

    def release(self, key: str) -> int: ...

    def release_one(self, key: str) -> bool: ...

    def count(self, key: str) -> int: ...

    def watch_closing(self) -> None:
        """Notice when the crawl starts to close, though nothing is parked: requests wait in
        download slots behind a floor, to be taken back then."""
