"""The plain data the politeness parts, the origin service and the parking lot share: why a
waiting request is dropped (its stat, as it reads in a log)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from scrapy_rerp.core.admission import DropReason

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
