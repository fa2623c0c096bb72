"""Reading evidence back (scrapy_rerp.core.evidence): the reader's check of a record agrees with
the schema the docs show, line by line in bounded memory, damage said and never raised."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scrapy_rerp.core.evidence import iter_records, read_records, record_problem
from tests.support.evidence import a_decision_record, a_page_record, a_robots_record

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "evidence.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

#: Values of every JSON type, and of the ranges the fields have: one of them fits each field.
VALUES: list[Any] = [
    None,
    True,
    0,
    7,
    -1,
    2.5,
    "",
    "x",
    "2026-11-28T19:58:47.123Z",
    "9" * 64,
    "a" * 64,
    [],
    ["x"],
    [7],
    {},
    {"purpose": "train-ai", "allowed": None, "source": "robots.txt"},
    {"purpose": "train-ai", "allowed": "no", "source": "robots.txt"},
    "parsed",
    "downloaded",
    "fleet",
    "marked",
]


def records() -> list[dict[str, Any]]:
    usage = {"purpose": "train-ai", "allowed": False, "source": "robots.txt", "value": "n"}
    tdmrep = {"technique": "meta", "reservation": 1, "policy": None, "source": "meta tag 1"}
    return [
        json.loads(json.dumps(record))
        for record in (
            a_robots_record(),
            a_robots_record(kind="tdmrep", syntax=None, agent=None, status=None, body=None),
            a_decision_record(usage=usage),
            a_decision_record(usage=None, line=None, robots_sha256=None),
            a_page_record(tdmrep=tdmrep),
        )
    ]


@pytest.mark.parametrize("record", records(), ids=lambda r: r["kind"])
def test_the_reader_s_check_agrees_with_the_schema_field_by_field(record: dict[str, Any]) -> None:
    assert VALIDATOR.is_valid(record) and record_problem(record) is None
    for name in record:
        if name in ("v", "kind"):
            continue
        for value in VALUES:
            changed = {**record, name: value}
            assert VALIDATOR.is_valid(changed) == (record_problem(changed) is None), (name, value)
        missing = {key: value for key, value in record.items() if key != name}
        assert not VALIDATOR.is_valid(missing)
        assert record_problem(missing) == f"no {name!r}"


def test_the_reader_is_stricter_than_the_schema_on_ranges_only() -> None:
    decision = a_decision_record()
    # The schema's pattern lets a date that is none through; the reader does not.
    impossible = {**decision, "at": "9999-99-99T00:00:00.000Z"}
    assert VALIDATOR.is_valid(impossible)
    assert record_problem(impossible) == (
        "'at' is '9999-99-99T00:00:00.000Z', not an RFC 3339 UTC time"
    )
    # A kind this reader does not know is not its to check (a later release may add kinds).
    assert record_problem({"v": 1, "kind": "later"}) is None


def test_every_line_is_said_and_none_raises() -> None:
    good = json.dumps(a_decision_record()).encode()
    lines = [
        good + b"\n",
        b"[" * 100_000 + b"\n",
        json.dumps({**a_decision_record(), "line": 0}).encode() + b"\n",
        b'{"v": 2, "kind": "decision"}\n',
        b"\xff\xfe\n",
        b"\n",
        good + b"\n",
        good[:-5],
    ]
    said = [
        (line.number, line.problem, line.reason)
        for line in iter_records(io.BytesIO(b"".join(lines)))
    ]
    assert said == [
        (1, None, None),
        (2, "damaged", "JSON nested too deep"),
        (3, "damaged", "'line' is 0, not a line number (1 or more) or null"),
        (4, "unknown_version", None),
        (5, "damaged", "not UTF-8"),
        (7, None, None),
        (8, "cut", "cut short"),
    ]
    read = read_records(lines)
    assert (read.cut_at_line, read.unknown_version_lines, read.damaged_lines) == (
        8,
        (4,),
        (2, 3, 5),
    )


def test_a_line_over_the_cap_is_damaged_and_the_next_one_read() -> None:
    good = json.dumps(a_decision_record()).encode() + b"\n"
    data = io.BytesIO(b"x" * 5000 + b"\n" + good)
    said = [(line.number, line.problem, line.reason) for line in iter_records(data, 1000)]
    assert said == [(1, "damaged", "over 1,000 bytes"), (2, None, None)]


def test_a_damaged_gzip_stream_ends_with_a_damaged_line() -> None:
    good = json.dumps(a_decision_record()).encode() + b"\n"
    whole = gzip.compress(good * 2000)
    with gzip.GzipFile(fileobj=io.BytesIO(whole[: len(whole) - 10])) as unzipped:
        said = list(iter_records(unzipped))  # type: ignore[arg-type]
    assert said[-1].problem == "damaged" and said[-1].reason.startswith("cannot be read")
    assert all(line.record is not None for line in said[:-1])
