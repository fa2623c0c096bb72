"""The length bounds on logged and recorded fields (docs/evidence.rst, "Bounds")."""

from __future__ import annotations

import json

from scrapy_rerp.core.evidence import decision_record, page_record
from scrapy_rerp.core.lengths import (
    MAX_ENTRIES,
    MAX_FIELD_CHARS,
    bounded,
    bounded_entries,
    bounded_record,
)
from tests.support.evidence import a_decision_record, a_page_record, a_robots_record


def test_short_text_is_kept_as_it_is() -> None:
    assert bounded("train-ai=n") == "train-ai=n"
    text = "x" * MAX_FIELD_CHARS
    assert bounded(text) is text


def test_long_text_keeps_its_start_and_says_how_much_was_cut() -> None:
    text = "train-ai=n, " + "y" * 28_000_000
    cut = bounded(text)
    assert len(cut) <= MAX_FIELD_CHARS
    assert cut.startswith("train-ai=n, yyy")
    kept = cut.index(" [... ")
    assert cut.endswith(f" [... {len(text) - kept:,} more characters not shown]")


def test_every_limit_holds_even_one_shorter_than_the_marker() -> None:
    text = "z" * 10_000
    for limit in (0, 5, 40, 41, 100, 9_999):
        assert len(bounded(text, limit)) <= max(limit, len(bounded(text, 0)))
    assert bounded(text, 10_000) == text


def test_a_long_list_keeps_its_first_entries_and_one_that_counts_the_rest() -> None:
    entries = [f"line {n}" for n in range(1_000)]
    kept = bounded_entries(entries, lambda n: f"{n} more", limit=10)
    assert kept == [*entries[:9], "991 more"]
    assert bounded_entries(entries[:10], lambda n: f"{n} more", limit=10) == entries[:10]


def test_records_are_bounded_at_any_depth_and_keep_their_shape() -> None:
    huge = "noai, " * 50_000
    record = a_page_record(
        directives=[("X-Robots-Tag", "noai")] * 2_000,
        refused=[
            {
                "purpose": "train-ai",
                "images_only": False,
                "rule": "noai",
                "source": "X-Robots-Tag",
                "statement": huge,
                "reason": huge,
            }
        ],
    )
    assert len(record["directives"]) == MAX_ENTRIES
    assert record["directives"][-1] == {
        "source": f"[... {2_000 - MAX_ENTRIES + 1:,} more not recorded]",
        "text": f"[... {2_000 - MAX_ENTRIES + 1:,} more not recorded]",
    }
    [refusal] = record["refused"]
    assert refusal["images_only"] is False
    assert len(refusal["statement"]) <= MAX_FIELD_CHARS
    assert len(json.dumps(record)) < 3 * MAX_FIELD_CHARS + MAX_ENTRIES * 100


def test_a_decision_record_of_huge_values_is_bounded() -> None:
    value = "Content-Usage: " + "train-ai=n, " * 2_000_000
    record = a_decision_record(
        reason=value,
        usage={"purpose": "train-ai", "allowed": False, "source": "header", "value": value},
        page_directives=["noindex"] * 5_000,
    )
    assert len(record["reason"]) <= MAX_FIELD_CHARS
    assert len(record["usage"]["value"]) <= MAX_FIELD_CHARS
    assert record["usage"]["allowed"] is False
    assert len(record["page_directives"]) == MAX_ENTRIES
    assert record["page_directives"][-1] == f"[... {5_000 - MAX_ENTRIES + 1:,} more not recorded]"
    assert len(json.dumps(record)) < 2 * MAX_FIELD_CHARS + MAX_ENTRIES * 50


def test_a_robots_txt_body_is_not_cut_by_the_field_bound() -> None:
    body = b"User-agent: *\n" + b"Disallow: /x\n" * 10_000
    record = a_robots_record(body=body, agent="a" * 10_000)
    assert record["body"] == body.decode()
    assert len(record["agent"]) <= MAX_FIELD_CHARS


def test_small_records_are_unchanged() -> None:
    fields = {
        "url": "https://example.com/a",
        "at": 1.0,
        "verdict": "refused",
        "page_directives": ["noindex"],
    }
    assert decision_record(**fields) == bounded_record(decision_record(**fields))
    assert page_record(url="https://example.com/", at=1.0)["directives"] == []
