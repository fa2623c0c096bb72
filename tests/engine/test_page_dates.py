"""unavailable_after dates: every form read, and what is not a date."""

from __future__ import annotations

import datetime

import pytest

from scrapy_rerp.engine._dates import MAX_DATE_CHARS, read_date

UTC = datetime.timezone.utc


def at(*parts: int) -> datetime.datetime:
    return datetime.datetime(*parts, tzinfo=UTC)


READ = [
    # Google's own examples: the documentation (2020-09-21, 25 Jun 2010 15:00:00 PST) and the
    # 2007 announcement (23-Jul-2007 18:00:00 EST, 7 Jul 2007 16:30:00 GMT).
    ("2020-09-21", at(2020, 9, 21)),
    ("25 Jun 2010 15:00:00 PST", at(2010, 6, 25, 23)),
    ("23-Jul-2007 18:00:00 EST", at(2007, 7, 23, 23)),
    ("7 Jul 2007 16:30:00 GMT", at(2007, 7, 7, 16, 30)),
    # RFC 850 with its weekday (the brief's example), and two-digit years (RFC 2822 4.3)
    ("Sunday, 01-Jan-2023 15:00:00 UTC", at(2023, 1, 1, 15)),
    ("Sunday, 06-Nov-94 08:49:37 GMT", at(1994, 11, 6, 8, 49, 37)),
    ("Monday, 01-Jan-24 00:00:00 GMT", at(2024, 1, 1)),
    # RFC 1123 / 822 (crawler-commons' TemporalValueParser examples among them)
    ("Wed, 31 Dec 2025 23:59:59 GMT", at(2025, 12, 31, 23, 59, 59)),
    ("Wed, 31 Dec 2025 23:59:59 +11", at(2025, 12, 31, 12, 59, 59)),
    ("Wed, 31 Dec 2025 23:59:59 -0630", at(2026, 1, 1, 6, 29, 59)),
    ("Thu, 1 Jan 2026 04:00 GMT", at(2026, 1, 1, 4)),
    ("1 Jan 2026 04:00 GMT", at(2026, 1, 1, 4)),
    ("1 January 2026", at(2026, 1, 1)),
    ("31 Dec 2025 23:59:59", at(2025, 12, 31, 23, 59, 59)),
    ("31 dec 2025 23:59:59 pdt", at(2026, 1, 1, 6, 59, 59)),
    ("  WED, 31 DEC 2025 23:59:59 GMT  ", at(2025, 12, 31, 23, 59, 59)),
    # asctime
    ("Wed Dec 31 23:59:59 2025", at(2025, 12, 31, 23, 59, 59)),
    # ISO 8601
    ("2025-12-31T23:59:59Z", at(2025, 12, 31, 23, 59, 59)),
    ("2025-12-31T23:59", at(2025, 12, 31, 23, 59)),
    ("2025-12-31 23:59:59", at(2025, 12, 31, 23, 59, 59)),
    ("2025-12-31T23:59:59.123456789Z", at(2025, 12, 31, 23, 59, 59, 123456)),
    ("2025-12-31T23:59:59+01:00", at(2025, 12, 31, 22, 59, 59)),
    ("2025-12-31T23:59:59-01", at(2026, 1, 1, 0, 59, 59)),
    ("2025-12-31T23:59:59+0530", at(2025, 12, 31, 18, 29, 59)),
    ("2025-12-31T23:59:59+01:00[Europe/Berlin]", at(2025, 12, 31, 22, 59, 59)),
    ("2025-12-31Z", at(2025, 12, 31)),
    ("20251231", at(2025, 12, 31)),
    ("20251231T235959Z", at(2025, 12, 31, 23, 59, 59)),
    ("2025-365", at(2025, 12, 31)),
    ("2026-W01-3", at(2025, 12, 31)),
    ("2026W013", at(2025, 12, 31)),
]


@pytest.mark.parametrize(("text", "expected"), READ, ids=[text for text, _ in READ])
def test_read(text: str, expected: datetime.datetime) -> None:
    read = read_date(text)
    assert read == expected
    assert read is not None and read.tzinfo is UTC


NOT_DATES = [
    "",
    "   ",
    "tomorrow",
    "24:00:00",  # crawler-commons' example of a value that is no date
    "2025-13-01",
    "2025-02-30",
    "2025-366",
    "2025-W54-1",
    "0000-01-01",
    "31 Foo 2025",
    "32 Dec 2025",
    "31 Dec 2025 25:00",
    "31 Dec 2025 23:59:59 XYZ",
    "31 Dec 2025 23:59:59 +2400",
    "Wed, 31 Dec",
    "2025-12-31T23:59:59+01:00 and more",
    "<script>",
    "9" * 40,
    "2025-12-31 " + "0" * MAX_DATE_CHARS,  # longer than a date can be
]


@pytest.mark.parametrize("text", NOT_DATES)
def test_not_a_date(text: str) -> None:
    assert read_date(text) is None


def test_long_inputs_are_refused_quickly() -> None:
    assert read_date("1 " * 10_000) is None
    assert read_date("Sunday, " * 10_000) is None
