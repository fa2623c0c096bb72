"""Conformance to TDMRep, the W3C TDM Reservation Protocol: the report's examples and its
statements as outcomes, as data (``tests/data/tdmrep.json``).

The file names its source, version and license, says how its records were transcribed and
explains its fields in ``conventions``. A record whose answer here differs from the report's
would carry a ``divergence`` category and ``ours``, as the page conformance files do; none does.

Run this file as a script to print every record the engine currently answers otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from scrapy_rerp.engine import parse_tdmrep, robots_meta_tags, tdm_reservation
from tests.support.conformance import assert_conforms

DATA = Path(__file__).resolve().parents[1] / "data" / "tdmrep.json"
Record = dict[str, Any]

with open(DATA, encoding="utf-8") as handle:
    SOURCE: dict[str, Any] = json.load(handle)
RECORDS: list[Record] = SOURCE["records"]


def answer(record: Record) -> dict[str, Any]:
    """The engine's answer for the keys of the record's ``expect``."""
    file = parse_tdmrep(record["tdmrep"].encode()) if "tdmrep" in record else None
    meta = robots_meta_tags(record["html"].encode()) if "html" in record else record.get("meta")
    headers = [tuple(pair) for pair in record.get("headers", [])]
    reservation = tdm_reservation(record["url"], file, headers, meta)
    statement = reservation.statement
    found: dict[str, Any] = {}
    for key in record["expect"]:
        if key == "reserved":
            found[key] = reservation.reserved
        elif key == "policy":
            found[key] = reservation.policy
        elif key == "technique":
            found[key] = statement.technique if statement else None
        elif key == "entry":
            found[key] = statement.entry.position if statement and statement.entry else None
        elif key == "usage":
            found[key] = {
                purpose: reservation.usage(purpose).preference for purpose in record["expect"][key]
            }
        elif key == "licensable":
            found[key] = reservation.usage("train-ai").licensable
        elif key == "valid":
            found[key] = file.valid if file is not None else None
        elif key == "warnings":
            warnings = (file.warnings if file is not None else ()) + reservation.warnings
            found[key] = [warning.code for warning in warnings]
        else:
            raise AssertionError(f"unknown expect key {key!r}")
    return found


def test_the_file_says_where_it_comes_from() -> None:
    for field in ("source", "url", "version", "license", "transcription", "conventions"):
        assert SOURCE.get(field), field
    assert "Final Specification Agreement" in SOURCE["license"]
    assert "quoted" in SOURCE["license"]
    ids = [record["id"] for record in RECORDS]
    assert len(ids) == len(set(ids))
    assert len(RECORDS) >= 30
    for record in RECORDS:
        if "divergence" in record:
            assert record["divergence"] in SOURCE["categories"]
            assert set(record["ours"]) <= set(record["expect"])


def test_every_technique_and_every_outcome_is_covered() -> None:
    expected = [record["expect"] for record in RECORDS]
    assert {e["technique"] for e in expected} == {"tdmrep.json", "header", "meta", None}
    assert {e["reserved"] for e in expected} == {True, False, None}
    assert any(e["policy"] for e in expected)


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_record(record: Record) -> None:
    assert_conforms(answer(record), record)


def test_the_report_is_followed_everywhere() -> None:
    assert not [record["id"] for record in RECORDS if "divergence" in record]


if __name__ == "__main__":
    for record in RECORDS:
        expected = {**record["expect"], **record.get("ours", {})}
        if answer(record) != expected or "divergence" in record:
            print(f"{record['id']}: {record.get('divergence', 'UNLISTED')}", file=sys.stdout)
