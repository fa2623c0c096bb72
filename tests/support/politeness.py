"""Fakes for the politeness controller's unit tests (tests/core/test_politeness.py, and a fleet
worker's in tests/fleet/test_delay.py): the download slots, the parking lot, a request, a
slow-down answer; the tests run as coroutines on the test's reactor (no crawl)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy_rerp.core.admission import DropReason, ParkingKey
from scrapy_rerp.core.slowdown import SlowAnswer

__all__ = ["A", "B", "C", "Parking", "Request", "Throttle", "answer", "sent"]

A, B, C = "http://a.test:80", "http://b.test:80", "http://c.test:80"


class Throttle:
    """The download slots' side (``scrapy_rerp.core.admission.Throttle``): each origin's floor,
    and the requests ``queued`` in a slot."""

    def __init__(self) -> None:
        self.floors: dict[str, float] = {}
        self.queued: list[tuple[str, Any]] = []  # (origin, request) waiting in a slot
        self.busy: dict[str, float] = {}  # origin -> seconds before its slot would send

    def ready_in(self, origin: str) -> float:
        return self.busy.get(origin, 0.0)

    def take_back(self, origin: str, keep: Callable[[Any], bool]) -> int:
        taken = [(o, r) for o, r in self.queued if o == origin and keep(r)]
        self.queued = [item for item in self.queued if item not in taken]
        return len(taken)

    def apply_floor(self, origin: str, floor: float) -> None:
        self.floors[origin] = floor

    def clear_floor(self, origin: str) -> bool:
        return self.floors.pop(origin, None) is not None

    def floor_of(self, origin: str) -> float | None:
        return self.floors.get(origin)

    def floored_origins(self) -> list[str]:
        return list(self.floors)


class Parking:
    """The parking lot: at most ``limit`` requests per key; ``released`` in the order they left."""

    def __init__(self, limit: int = 10) -> None:
        self.parked: dict[ParkingKey, list[Any]] = {}
        self.released: list[Any] = []
        self.limit = limit

    def park(self, key: ParkingKey, request: Any) -> DropReason | None:
        waiting = self.parked.setdefault(key, [])
        if len(waiting) >= self.limit:
            return DropReason.PARK_LIMIT
        waiting.append(request)
        return None

    def release_one(self, key: ParkingKey) -> bool:
        if not self.parked.get(key):
            return False
        self.released.append(self.parked[key].pop(0))
        return True

    def release(self, key: ParkingKey) -> int:
        n = 0
        while self.release_one(key):
            n += 1
        return n

    def count(self, key: ParkingKey) -> int:
        return len(self.parked.get(key, ()))

    def watch_closing(self) -> None:
        self.watching = True


class Request:
    """A request as the controller sees it: its meta (and a name for the asserts)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.meta: dict[str, Any] = {}


def answer(status: int = 429, wait: float | None = None) -> SlowAnswer:
    return SlowAnswer(status, None if wait is None else f"{wait:g}", wait)


def sent(seconds_ago: float = 0.0, **meta: Any) -> dict[str, Any]:
    """The meta of a request answered now, sent ``seconds_ago`` (Scrapy's download_latency)."""
    return {"download_latency": seconds_ago, **meta}
