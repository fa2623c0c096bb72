"""Evidence records (scrapy_rerp.core.evidence): each kind valid against the schema the docs
show, nothing secret copied, and a file cut mid-write still read to its last whole record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scrapy_rerp.core.evidence import (
    FORMAT_VERSION,
    decision_record,
    item_provenance,
    page_record,
    read_records,
)
from tests.support.evidence import BODY, a_page_record, a_robots_record

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
        a_robots_record(kind="sitemap")


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
