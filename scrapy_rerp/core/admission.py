"""What the politeness controller and its parts say of a request robots.txt allows, and where
they act.

* An :class:`Admission`: go on (:data:`GO`), parked (:data:`PARKED`), or refused with a reason;
  :data:`Admitting` is that or an awaitable of it, when the request waits in place (a fleet's
  turn, Redis's answer). The gate turns it into what ``process_request`` returns.
* A parked request waits under a :class:`ParkingKey`: its origin, and the :class:`Purpose` it
  waits for (robots.txt, the end of a cool-down, a Crawl-delay turn...).
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
    "DECISION_META",
    "GO",
    "PARKED",
    "Admission",
    "Admitting",
    "DropReason",
    "Parking",
    "ParkingKey",
    "Purpose",
    "Throttle",
    "Verdict",
    "Waiting",
    "refused",
]


#: ``request.meta`` / ``response.meta``: the robots.txt decision of a request (docs/signals.rst),
#: as the gate keeps it for the parts that read it later (the evidence, the middleware).
DECISION_META = "rerp_robots_decision"


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


class Purpose(enum.Enum):
    """What the requests parked under a :class:`ParkingKey` wait for: each purpose's label (as
    a key reads), and what the closing summary says they waited for."""

    label: str
    waiting_for: str

    ROBOTS_TXT = ("robots.txt", "robots.txt")  # the origin's rules (a key reads as the origin)
    COOL_DOWN = ("cool-down", "the end of a cool-down")
    CRAWL_DELAY = ("Crawl-delay", "a Crawl-delay turn")  # a fleet's turn, its head gone first
    TURNS_BEGIN = ("turns begin", "a Crawl-delay turn")  # taken back from a slot, to take turns
    CLOSING = ("closing", "a Crawl-delay or raised floor in a download slot")  # taken back

    def __init__(self, label: str, waiting_for: str) -> None:
        self.label = label
        self.waiting_for = waiting_for


@dataclass(frozen=True, slots=True)
class Waiting:
    """What requests parked for a per-origin document other than robots.txt wait for: the
    document, by its name (``tdmrep.json``)."""

    label: str

    @property
    def waiting_for(self) -> str:
        return self.label


@dataclass(frozen=True, slots=True)
class ParkingKey:
    """The key under which requests wait in the parking lot: their origin, and what they wait
    for. It reads as the origin followed by its purpose, ``http://a.test:80 (cool-down)``, or
    as the origin alone for robots.txt."""

    origin: str
    purpose: Purpose | Waiting

    def __str__(self) -> str:
        if self.purpose is Purpose.ROBOTS_TXT:
            return self.origin
        return f"{self.origin} ({self.purpose.label})"


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

    def park(self, key: ParkingKey, request: Any) -> DropReason | None:
        """Park ``request`` under ``key``: None, or why it cannot be (it is dropped)."""

    def release(self, key: ParkingKey) -> int: ...

    def release_one(self, key: ParkingKey) -> bool: ...

    def count(self, key: ParkingKey) -> int: ...

    def watch_closing(self) -> None:
        """Notice when the crawl starts to close, though nothing is parked: requests wait in
        download slots behind a floor, to be taken back then."""
