"""Evidence records for the tests of their builders and writers: one of each kind, with every
field set, changed by keyword."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scrapy_rerp import __version__
from scrapy_rerp.core.evidence import decision_record, page_record, read_records, robots_record

#: A robots.txt body, not all ASCII.
BODY = "User-agent: *\nDisallow: /private\nDisallow: /café\n".encode()


def a_robots_record(**changes: Any) -> dict[str, Any]:
    """A robots.txt downloaded with a body and headers, one of them a secret never kept."""
    fields: dict[str, Any] = dict(
        origin="https://example.com",
        url="https://example.com/robots.txt",
        final_url="https://www.example.com/robots.txt",
        status=200,
        fetched_at=1_795_000_000.25,
        outcome="parsed",
        body=BODY,
        headers={
            "content-type": b"text/plain; charset=utf-8",
            "ETag": '"abc"',
            "Content-Encoding": b"gzip",
            "Set-Cookie": b"session=s3cret",
        },
        agent="mybot",
        plugin_version=__version__,
    )
    fields.update(changes)
    return robots_record(**fields)


def a_decision_record(**changes: Any) -> dict[str, Any]:
    """A request refused by line 2 of :func:`a_robots_record`'s file."""
    fields: dict[str, Any] = dict(
        url="https://www.example.com/private/a",
        at=1_795_000_001.5,
        verdict="refused",
        reason="robots.txt",
        robots_sha256=a_robots_record()["sha256"],
        line=2,
        rule="Disallow: /private",
        usage={"purpose": "train-ai", "allowed": False, "source": "robots.txt", "value": "n"},
    )
    fields.update(changes)
    return decision_record(**fields)


def a_page_record(**changes: Any) -> dict[str, Any]:
    """A page whose meta tag refuses train-ai, its items dropped."""
    fields: dict[str, Any] = dict(
        url="https://www.example.com/a",
        at=1_795_000_002.0,
        directives=[("meta tag 1 (robots)", "noai")],
        refused=[
            {
                "purpose": "train-ai",
                "images_only": False,
                "rule": "noai",
                "source": "meta tag 1 (robots)",
                "statement": "noai",
                "reason": "train-ai disallowed by meta tag 1 (robots): noai",
            }
        ],
        items="dropped",
    )
    fields.update(changes)
    return page_record(**fields)


SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "evidence.schema.json").read_text())


def records(*paths: Path) -> list[dict[str, Any]]:
    """The records of evidence files, each checked against the schema; no file cut short."""
    import jsonschema

    found: list[dict[str, Any]] = []
    for path in paths:
        with path.open("rb") as file:
            read = read_records(file)
        assert read.cut_at_line is None and read.unknown_version_lines == ()
        for record in read.records:
            jsonschema.validate(record, SCHEMA)
        found.extend(read.records)
    return found


def of_kind(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in found if record.get("kind") == kind]
