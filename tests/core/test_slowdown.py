"""What a 429 or 503 answer to a page asks, and the raised floors' arithmetic, without a crawl.
Retry-After's reading itself (both forms): tests/core/test_status.py. Real crawls:
tests/test_slowdown_crawl.py."""

from __future__ import annotations

from email.utils import formatdate

from scrapy_rerp.core.slowdown import (
    FLOOR_GONE,
    FloorBackoff,
    SlowAnswer,
    slow_answer,
)

NOW = 1_700_000_000.0


def http_date(when: float) -> bytes:
    return formatdate(when, usegmt=True).encode()


def test_429_and_503_are_slow_downs() -> None:
    headers = {b"Retry-After": b"7"}
    assert slow_answer(429, headers, NOW) == SlowAnswer(429, "7", 7.0)
    assert slow_answer(503, {}, NOW) == SlowAnswer(503, None, None)
    assert slow_answer(503, {b"Retry-After": b"\xffx"}, NOW) == SlowAnswer(503, "\xffx", None)
    for status in (200, 404, 500, 502, 504):
        assert slow_answer(status, headers, NOW) is None


def test_a_slow_down_s_wait_is_retry_after_s_reading() -> None:
    # An HTTP date against the server's Date (a clock an hour fast still waits 30 s); zero, or a
    # date in the past, is no wait: the floor is raised instead.
    late = {b"Retry-After": http_date(NOW + 30 - 3600), b"Date": http_date(NOW - 3600)}
    assert slow_answer(429, late, NOW) == SlowAnswer(429, late[b"Retry-After"].decode(), 30.0)
    for value in (b"0", http_date(NOW - 10)):
        assert slow_answer(503, {b"Retry-After": value}, NOW) == SlowAnswer(
            503, value.decode(), None
        )


def test_a_floor_starts_doubles_and_is_capped() -> None:
    backoff = FloorBackoff(start=0.5, maximum=3.0, decay_after=2)
    assert not backoff and backoff.floor("o") is None
    assert backoff.raised("o", sent_at=0.0, now=1.0, own_floor=0.0) == 0.5
    assert backoff.raised("p", sent_at=0.0, now=1.0, own_floor=0.4) == 0.8  # twice its own
    assert backoff.raised("o", sent_at=0.9, now=2.0, own_floor=0.0) is None  # left before
    assert backoff.raised("o", sent_at=1.0, now=2.0, own_floor=0.0) == 1.0
    assert backoff.raised("o", sent_at=2.0, now=3.0, own_floor=0.0) == 2.0
    assert backoff.raised("o", sent_at=3.0, now=4.0, own_floor=0.0) == 3.0
    assert backoff.floor("o") == 3.0 and "o" in backoff and sorted(backoff.origins()) == ["o", "p"]


def test_a_floor_halves_after_good_answers_in_a_row_and_is_dropped() -> None:
    backoff = FloorBackoff(start=0.03, maximum=60.0, decay_after=2)
    backoff.raised("o", sent_at=0.0, now=10.0, own_floor=0.0)
    assert backoff.good_answer("o", sent_at=9.0, now=11.0, own_floor=0.0) is None  # left before
    assert backoff.good_answer("o", sent_at=10.0, now=11.0, own_floor=0.0) is None
    assert backoff.good_answer("o", sent_at=10.5, now=12.0, own_floor=0.0) == 0.015
    assert backoff.good_answer("o", sent_at=11.0, now=12.0, own_floor=0.0) is None  # before
    assert backoff.good_answer("o", sent_at=12.0, now=13.0, own_floor=0.0) is None
    # 0.0075 s is below FLOOR_GONE: dropped.
    assert backoff.good_answer("o", sent_at=12.0, now=13.0, own_floor=0.0) == 0.0
    assert backoff.floor("o") is None and not backoff and FLOOR_GONE > 0.0075
    # Halved down to the origin's own floor: dropped too.
    backoff.raised("p", sent_at=0.0, now=1.0, own_floor=1.0)  # 2.0
    backoff.good_answer("p", sent_at=1.0, now=2.0, own_floor=1.0)
    assert backoff.good_answer("p", sent_at=1.0, now=2.0, own_floor=1.0) == 0.0


def test_a_slow_down_resets_the_good_answers() -> None:
    backoff = FloorBackoff(start=1.0, maximum=60.0, decay_after=2)
    backoff.raised("o", sent_at=0.0, now=1.0, own_floor=0.0)
    backoff.good_answer("o", sent_at=1.0, now=2.0, own_floor=0.0)
    backoff.raised("o", sent_at=2.0, now=3.0, own_floor=0.0)  # 2.0
    assert backoff.good_answer("o", sent_at=3.0, now=4.0, own_floor=0.0) is None
    assert backoff.good_answer("o", sent_at=3.0, now=4.0, own_floor=0.0) == 1.0


def test_the_fleet_s_floors_by_version() -> None:
    backoff = FloorBackoff(start=0.5, maximum=60.0, decay_after=2)
    assert not backoff.sync("o", 0.0, 0, now=1.0)  # nothing known anywhere: nothing kept
    assert backoff.origins() == []
    assert backoff.sync("o", 2.0, 100, now=1.0) and backoff.floor("o") == 2.0
    assert not backoff.sync("o", 1.0, 99, now=1.0)  # older
    # This worker raised it meanwhile (provisional); a read of the same version leaves it.
    backoff.raised("o", sent_at=1.0, now=2.0, own_floor=0.0)
    assert backoff.floor("o") == 4.0
    assert not backoff.sync("o", 2.0, 100, now=2.0)
    # The answer to its own change is taken even at that version.
    assert backoff.sync("o", 2.0, 100, now=2.0, newer_only=False) and backoff.floor("o") == 2.0
    assert backoff.sync("o", 0.0, 101, now=3.0) and backoff.floor("o") is None
    backoff.forget("o")
    assert backoff.sync("o", 1.0, 50, now=4.0)  # forgotten: any version is new
