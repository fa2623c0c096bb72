"""The plain data the politeness parts, the origin service and the parking lot share: the key a
request is parked under (its origin and purpose, as it reads in a log), and why a waiting
request is dropped (its stat, as it reads in a log)."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import pytest

from scrapy_rerp.core.admission import DropReason, ParkingKey, Purpose, Waiting

DOCS = Path(__file__).resolve().parents[2] / "docs"
A, B = "http://a.test:80", "http://b.test:80"


def test_a_parking_key_is_its_origin_and_purpose() -> None:
    key = ParkingKey(A, Purpose.COOL_DOWN)
    same = ParkingKey(A, Purpose.COOL_DOWN)
    assert key == same and hash(key) == hash(same) and key is not same
    assert key != ParkingKey(A, Purpose.CRAWL_DELAY)  # the same origin, waiting for another
    assert key != ParkingKey(B, Purpose.COOL_DOWN)
    # What the lot keeps per key: one list each.
    parked = {ParkingKey(origin, purpose): [] for origin in (A, B) for purpose in Purpose}
    assert len(parked) == 2 * len(Purpose) and parked[same] is parked[key]
    # Not the string a key once was, nor its origin: nothing finds requests under a string.
    assert key != f"{A} (cool-down)" and ParkingKey(A, Purpose.ROBOTS_TXT) != A
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.origin = B  # type: ignore[misc]


@pytest.mark.parametrize(
    ("purpose", "reads"),
    [
        (Purpose.ROBOTS_TXT, A),
        (Purpose.COOL_DOWN, f"{A} (cool-down)"),
        (Purpose.CRAWL_DELAY, f"{A} (Crawl-delay)"),
        (Purpose.TURNS_BEGIN, f"{A} (turns begin)"),
        (Purpose.CLOSING, f"{A} (closing)"),
    ],
)
def test_a_parking_key_reads_as_its_origin_and_purpose(
    purpose: Purpose, reads: str, caplog: pytest.LogCaptureFixture
) -> None:
    # As the string keys of earlier versions read; robots.txt's is the origin alone.
    key = ParkingKey(A, purpose)
    assert str(key) == f"{key}" == reads
    with caplog.at_level(logging.INFO, logger="tests"):
        logging.getLogger("tests").info("parked under %s", key)
    assert caplog.messages == [f"parked under {reads}"]


def test_what_each_purpose_waits_for() -> None:
    # The closing summary's words: "Crawl closing: dropped 3 requests still waiting for ..."
    assert {purpose: purpose.waiting_for for purpose in Purpose} == {
        Purpose.ROBOTS_TXT: "robots.txt",
        Purpose.COOL_DOWN: "the end of a cool-down",
        Purpose.CRAWL_DELAY: "a Crawl-delay turn",
        Purpose.TURNS_BEGIN: "a Crawl-delay turn",
        Purpose.CLOSING: "a Crawl-delay or raised floor in a download slot",
    }
    # Any other document kind's requests wait for it by name.
    assert Waiting("tdmrep.json").waiting_for == "tdmrep.json"
    assert str(ParkingKey(A, Waiting("tdmrep.json"))) == f"{A} (tdmrep.json)"


def test_the_drop_reasons_and_their_stats() -> None:
    # The stat names are pinned: docs/stats.rst, dashboards and the tests read them.
    assert {reason: reason.stat for reason in DropReason} == {
        DropReason.UNREACHABLE: "robotstxt/dropped/unreachable",
        DropReason.PARK_LIMIT: "robotstxt/dropped/park_limit",
        DropReason.CRAWL_CLOSING: "robotstxt/dropped/crawl_closing",
        DropReason.ERROR: "robotstxt/dropped/error",
    }


@pytest.mark.parametrize("reason", list(DropReason))
def test_a_drop_reason_reads_as_its_value(
    reason: DropReason, caplog: pytest.LogCaptureFixture
) -> None:
    # The same on every Python: str(), an f-string (whose formatting of enums changed in
    # 3.12) and a log line's %s.
    assert str(reason) == f"{reason}" == format(reason) == reason.value
    with caplog.at_level(logging.INFO, logger="tests"):
        logging.getLogger("tests").info("dropped: %s", reason)
    assert caplog.messages == [f"dropped: {reason.value}"]


def test_every_drop_reason_is_documented() -> None:
    # The ledger's table in docs/status-policy.rst names each reason, and only those.
    text = (DOCS / "status-policy.rst").read_text(encoding="utf-8")
    table = text[text.index("reason             when") :]
    table = table[: table.index("\n\n")]
    named = set(re.findall(r"^``([a-z_]+)``", table, flags=re.MULTILINE))
    assert named == {reason.value for reason in DropReason}
