"""Dates of ``unavailable_after``: the forms Google reads, to an aware datetime in UTC.

Google: "The date/time must be specified in a widely adopted format including, but not limited
to RFC 822, RFC 850, and ISO 8601." Its own examples over the years are ``25 Jun 2010 15:00:00
PST``, ``23-Jul-2007 18:00:00 EST``, ``7 Jul 2007 16:30:00 GMT`` and ``2020-09-21``. Read here:

- RFC 822 / RFC 1123 (and RFC 2822): ``[Wed,] 31 Dec 2025 23:59[:59] [zone]``; two-digit years
  as RFC 2822 reads them (00-49: 20xx, 50-99: 19xx);
- RFC 850: ``[Wednesday,] 31-Dec-25 23:59:59 [zone]``, four-digit years too;
- asctime, HTTP's third date form: ``Wed Dec 31 23:59:59 2025``;
- ISO 8601: ``2025-12-31``, ``20251231``, ordinal ``2025-365``, week ``2026-W01-3``, each
  optionally followed by ``T`` (or a space) and ``23:59[:59[.fraction]]``, and by ``Z`` or an
  offset (``+01``, ``+0100``, ``+01:00``); a bracketed zone name after an offset
  (``+01:00[Europe/Berlin]``) is ignored, the offset fixing the instant.

Zones: ``GMT``, ``UTC``, ``UT``, ``Z``, RFC 822's North American names (``EST``, ``EDT``,
``CST``, ``CDT``, ``MST``, ``MDT``, ``PST``, ``PDT``) and numeric offsets. A date without a
zone, or a date without a time, is read in UTC at that time (midnight) — the sources say
nothing of it. The weekday, when given, is not checked against the date (RFC 9110 lets a
recipient ignore it). Anything else is unreadable: None, and the caller warns.

The patterns are anchored and have no nested repetition; the text is at most
``MAX_DATE_CHARS`` long.
"""

from __future__ import annotations

import datetime
import re

__all__ = ["MAX_DATE_CHARS", "WEEKDAYS", "read_date"]

MAX_DATE_CHARS = 80

_UTC = datetime.timezone.utc
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
#: Weekday names, short and long, lower case: a value that is only one of these is the start of
#: a date whose comma split it (``unavailable_after: Sunday, 01-Jan-2023 15:00:00 UTC``).
WEEKDAYS = frozenset(
    {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
    | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)
# Zone name -> offset in hours (RFC 822 section 5.1; UTC and Z as in RFC 3339).
_ZONES = {
    "gmt": 0,
    "ut": 0,
    "utc": 0,
    "z": 0,
    "est": -5,
    "edt": -4,
    "cst": -6,
    "cdt": -5,
    "mst": -7,
    "mdt": -6,
    "pst": -8,
    "pdt": -7,
}

_WEEKDAY = r"(?:[a-z]{3,9},?\s+)?"
_TIME = r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?"
_ZONE = r"(?:\s*(?P<zone>[a-z]{1,3}|[+-]\d{2}(?::?\d{2})?))?"
_DAY = r"(?P<day>\d{1,2})"
_MONTH = r"(?P<month>[a-z]{3})"
# RFC 822/1123/2822 and RFC 850: day, month name and year, joined by spaces or hyphens.
_RFC = re.compile(
    rf"{_WEEKDAY}{_DAY}[\s-]+{_MONTH}[a-z]*[\s-]+(?P<year>\d{{2}}|\d{{4}})(?:\s+{_TIME}{_ZONE})?"
)
# asctime: ``Wed Dec 31 23:59:59 2025``.
_ASCTIME = re.compile(rf"[a-z]{{3}}\s+{_MONTH}\s+{_DAY}\s+{_TIME}\s+(?P<year>\d{{4}}){_ZONE}")
# ISO 8601: the date (calendar, ordinal or week; extended or basic), then an optional time.
_ISO = re.compile(
    r"(\d{4})(?:-(\d{2})-(\d{2})|(\d{2})(\d{2})|-(\d{3})|-?w(\d{2})-?(\d))"
    r"(?:[t\s]+(\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"\s*(z|[+-]\d{2}(?::?\d{2})?)?(?:\[[^\]]{1,40}\])?"
)


def read_date(text: str) -> datetime.datetime | None:
    """*text* as an aware datetime in UTC, or None if it is in none of the forms read."""
    text = text.strip().lower()
    if not text or len(text) > MAX_DATE_CHARS:
        return None
    try:
        return _read_iso(text) or _read_named(_RFC, text) or _read_named(_ASCTIME, text)
    except (ValueError, OverflowError):  # a day 31 of February, an hour 25, year 0...
        return None


def _offset(zone: str | None) -> datetime.timezone | None:
    """The offset a zone name or ``±HH[[:]MM]`` stands for; None for an unknown name."""
    if not zone:
        return _UTC
    if zone in _ZONES:
        return datetime.timezone(datetime.timedelta(hours=_ZONES[zone]))
    if zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        minutes = int(digits[:2]) * 60 + (int(digits[2:]) if len(digits) > 2 else 0)
        if minutes >= 24 * 60:
            return None
        return datetime.timezone(
            datetime.timedelta(minutes=-minutes if zone[0] == "-" else minutes)
        )
    return None


def _at(
    date: datetime.date,
    hour: str | None,
    minute: str | None,
    second: str | None,
    zone: str | None,
    fraction: str | None = None,
) -> datetime.datetime | None:
    offset = _offset(zone)
    if offset is None:
        return None
    microsecond = int((fraction or "0")[:6].ljust(6, "0"))
    clock = datetime.time(int(hour or 0), int(minute or 0), int(second or 0), microsecond)
    return datetime.datetime.combine(date, clock, offset).astimezone(_UTC)


def _read_iso(text: str) -> datetime.datetime | None:
    match = _ISO.fullmatch(text)
    if match is None:
        return None
    year, month, day, basic_month, basic_day, ordinal, week, weekday = match.groups()[:8]
    hour, minute, second, fraction, zone = match.groups()[8:]
    number = int(year)
    if month is not None:
        date = datetime.date(number, int(month), int(day))
    elif basic_month is not None:
        date = datetime.date(number, int(basic_month), int(basic_day))
    elif ordinal is not None:
        date = datetime.date(number, 1, 1) + datetime.timedelta(days=int(ordinal) - 1)
        if not 1 <= int(ordinal) <= 366 or date.year != number:
            return None
    else:
        date = datetime.date.fromisocalendar(number, int(week), int(weekday))
    return _at(date, hour, minute, second, zone, fraction)


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:  # RFC 2822 section 4.3
        year += 2000 if year < 50 else 1900
    return year


def _read_named(pattern: re.Pattern[str], text: str) -> datetime.datetime | None:
    """A date in a form with a month name (``_RFC``, ``_ASCTIME``), read by its named groups."""
    match = pattern.fullmatch(text)
    if match is None or match["month"] not in _MONTHS:
        return None
    date = datetime.date(_year(match["year"]), _MONTHS[match["month"]], int(match["day"]))
    return _at(date, *match.group("hour", "minute", "second", "zone"))
