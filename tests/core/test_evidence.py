"""Evidence records (scrapy_rerp.core.evidence): each kind valid against the schema the docs
show, nothing secret copied, and a file cut mid-write still read to its last whole record;
read back, the reader's check of a record agrees with the schema, line by line in bounded
memory, damage said and never raised."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scrapy_rerp.core.evidence import (
    FORMAT_VERSION,
    decision_record,
    item_provenance,
    iter_records,
    page_record,
    read_records,
    record_problem,
)
from tests.support.evidence import BODY, a_decision_record, a_page_record, a_robots_record

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "evidence.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text())


def validate(record: dict[str, Any], definition: str | None = None) -> None:
    # Through json: a record is what a file holds, not the dict before it is written.
    record = json.loads(json.dumps(record))
    schema = SCHEMA if definition is None else {**SCHEMA, "$ref": f"#/$defs/{definition}"}
    if definition is not None:
        schema.pop("oneOf")
    jsonschema.validate(record, schema, cls=jsonschema.Draft202012Validator)


def test_the_docs_show_the_schema_the_tests_use() -> None:
    page = (SCHEMA_PATH.parent / "evidence.rst").read_text()
    assert ".. literalinclude:: evidence.schema.json" in page
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_a_robots_record_is_valid_and_points_to_its_body() -> None:
    record = a_robots_record()
    validate(record)
    assert record["v"] == FORMAT_VERSION
    assert record["kind"] == "robots"
    assert record["fetched_at"] == "2026-11-18T11:06:40.250Z"
    assert record["body"] == BODY.decode()
    assert record["sha256"] == hashlib.sha256(BODY).hexdigest()
    assert record["headers"] == {
        "Content-Type": "text/plain; charset=utf-8",
        "ETag": '"abc"',
        "Content-Encoding": "gzip",
    }


def test_a_robots_record_names_the_agents_that_matched() -> None:
    record = a_robots_record(matched=("mybot",))
    validate(record)
    assert (record["agent"], record["matched"]) == ("mybot", ["mybot"])
    assert a_robots_record()["matched"] is None  # not known


def test_an_unreachable_robots_txt_has_no_body_and_is_valid() -> None:
    record = a_robots_record(status=None, final_url=None, outcome="unreachable", body=None)
    validate(record)
    assert record["body"] is None


@pytest.mark.parametrize(
    ("verdict", "reason", "line"),
    [("downloaded", None, 2), ("refused", "robots.txt", 2), ("dropped", "unreachable", None)],
)
def test_a_decision_record_is_valid(verdict: str, reason: str | None, line: int | None) -> None:
    robots = a_robots_record()
    record = decision_record(
        url="https://example.com/private/a",
        at=1_795_000_001.0,
        verdict=verdict,
        reason=reason,
        robots_sha256=robots["sha256"],
        line=line,
        rule="Disallow: /private" if line else None,
        group="*",
        usage={"purpose": "train-ai", "allowed": False, "source": "robots.txt", "value": "n"},
        page_directives=["noindex"],
    )
    validate(record)
    assert record["verdict"] == verdict


def test_a_page_record_is_valid() -> None:
    record = a_page_record()
    validate(record, "page")
    validate(record)
    assert record["directives"] == [{"source": "meta tag 1 (robots)", "text": "noai"}]
    assert (record["items"], record["nofollow"], record["tdmrep"]) == ("dropped", False, None)
    with pytest.raises(ValueError, match="items"):
        page_record(url="https://example.com/", at=0.0, items="kept")


def test_a_tdmrep_record_is_a_document_record_without_syntax_or_agent() -> None:
    body = b'[{"location": "/*", "tdm-reservation": 1}]'
    record = a_robots_record(
        url="https://example.com/.well-known/tdmrep.json",
        final_url=None,
        body=body,
        kind="tdmrep",
        syntax=None,
        agent=None,
    )
    validate(record)
    assert (record["kind"], record["sha256"]) == ("tdmrep", hashlib.sha256(body).hexdigest())
    with pytest.raises(ValueError, match="kind"):
        a_robots_record(kind="decision")  # another record's kind
    with pytest.raises(ValueError, match="kind"):
        a_robots_record(kind="Site Map")  # no lowercase word
    # A registered kind's own token (RERP_DOCUMENTS) is a document record's kind.
    assert a_robots_record(kind="security_txt")["kind"] == "security_txt"


def test_a_decision_refuses_an_unknown_verdict() -> None:
    with pytest.raises(ValueError, match="verdict"):
        decision_record(url="https://example.com/", at=0.0, verdict="maybe")


def test_an_items_provenance_is_valid() -> None:
    provenance = item_provenance(
        robots_sha256=a_robots_record()["sha256"], fetched_at=1_795_000_000.0, line=3, usage=None
    )
    validate(provenance, "item_provenance")
    with pytest.raises(jsonschema.ValidationError):
        validate({**provenance, "cookie": "x"}, "item_provenance")


def test_nothing_secret_is_written() -> None:
    robots = a_robots_record(
        url="https://user:pass1234@example.com/robots.txt",
        headers={
            "Set-Cookie": b"session=s3cret",
            "Authorization": b"Basic c2VjcmV0",
            "Proxy-Authorization": b"Basic cHJveHk=",
        },
    )
    decision = decision_record(
        url="https://user:pass1234@example.com/a", at=0.0, verdict="downloaded"
    )
    written = json.dumps([robots, decision])
    for secret in ("s3cret", "c2VjcmV0", "cHJveHk=", "pass1234", "Cookie", "Authorization"):
        assert secret not in written
    assert robots["url"] == "https://example.com/robots.txt"
    assert decision["url"] == "https://example.com/a"


def test_a_file_cut_mid_write_keeps_every_whole_record(tmp_path: Path) -> None:
    records = [a_robots_record()] + [
        decision_record(url=f"https://example.com/{n}", at=float(n), verdict="downloaded")
        for n in range(5)
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)
    path = tmp_path / "evidence.jsonl"
    path.write_text(text[: len(text) - 20])  # the last record cut short
    with path.open("rb") as lines:
        read = read_records(lines)
    assert read.records == json.loads(json.dumps(records[:-1]))
    assert read.cut_at_line == len(records)
    for record in read.records:
        validate(record)


def test_a_whole_file_is_not_cut_and_an_unknown_version_is_listed() -> None:
    whole = [json.dumps(a_robots_record()).encode() + b"\n", b'{"v": 2, "kind": "robots"}\n']
    read = read_records(whole)
    assert read.cut_at_line is None
    assert len(read.records) == 1
    assert read.unknown_version_lines == (2,)


def test_a_reason_quoting_credentials_loses_them() -> None:
    record = decision_record(
        url="http://user:secret@example.com/a",
        at=0.0,
        verdict="failed",
        reason="ValueError: invalid hostname: user:secret@example.com",
    )
    assert "secret" not in json.dumps(record)
    assert record["reason"] == "ValueError: invalid hostname: example.com"
    assert record["url"] == "http://example.com/a"


# -- reading evidence back ---------------------------------------------------------------

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
    # A kind that is no lowercase word is not this reader's to check (a later release may add
    # kinds); one that is, is a document's (a kind registered by a project), checked as one.
    assert record_problem({"v": 1, "kind": "Later"}) is None
    assert record_problem({"v": 1, "kind": "later"}) == "no 'origin'"


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
