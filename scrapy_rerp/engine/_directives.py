"""Values of the extension directives: Crawl-delay, Request-rate, Visit-time."""

from __future__ import annotations

import datetime
import math
import re
from typing import NamedTuple


class RequestRate(NamedTuple):
    """``Request-rate: requests/seconds`` with an optional ``HHMM-HHMM`` window (UTC)."""

    requests: int
    seconds: float
    start_time: datetime.time | None = None
    end_time: datetime.time | None = None

    @property
    def interval(self) -> float:
        """Seconds between two requests that this rate implies."""
        return self.seconds / self.requests


class VisitTime(NamedTuple):
    """``Visit-time: HHMM-HHMM``: the window (UTC) in which the site asks to be crawled."""

    start_time: datetime.time
    end_time: datetime.time


_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(
    r"(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*([smhd]?)(?:\s+(\d{4})\s*-\s*(\d{4}))?", re.IGNORECASE
)
_WINDOW = re.compile(r"(\d{4})\s*(?:-|\s)\s*(\d{4})")


def parse_crawl_delay(value: str) -> float | None:
    """Seconds, finite and non-negative; anything else is None."""
    try:
        delay = float(value)
    except ValueError:
        return None
    if not math.isfinite(delay) or delay < 0 or "_" in value:
        return None
    return delay


def _clock(hhmm: str) -> datetime.time | None:
    hours, minutes = int(hhmm[:2]), int(hhmm[2:])
    if hours > 23 or minutes > 59:
        return None
    return datetime.time(hours, minutes)


def parse_request_rate(value: str) -> RequestRate | None:
    match = _RATE.fullmatch(value.strip())
    if match is None:
        return None
    requests, seconds, unit, start, end = match.groups()
    count = int(requests)
    span = float(seconds) * _UNITS[unit.lower()]
    if count <= 0 or span <= 0 or not math.isfinite(span):
        return None
    if start is None:
        return RequestRate(count, span)
    start_time, end_time = _clock(start), _clock(end)
    if start_time is None or end_time is None:
        return None
    return RequestRate(count, span, start_time, end_time)


def parse_visit_time(value: str) -> VisitTime | None:
    match = _WINDOW.fullmatch(value.strip())
    if match is None:
        return None
    start_time, end_time = _clock(match.group(1)), _clock(match.group(2))
    if start_time is None or end_time is None:
        return None
    return VisitTime(start_time, end_time)
