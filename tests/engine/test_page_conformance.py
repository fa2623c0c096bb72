"""Conformance of page-level directives: the cases of Google's documentation, draft-illyes-repext,
crawler-commons and StormCrawler, as data (``tests/data/page_*.json``).

Each file names its source, version and license, says how its records were transcribed and
explains its fields in ``conventions``. A record whose answer here differs from its source's
carries a ``divergence`` category (explained in the file's ``categories``) and ``ours``: the test
holds both what the engine returns and that it does differ, so neither can go stale.

Run this file as a script to print every record the engine currently answers otherwise.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from scrapy_rerp.engine import PageDirectives, page_directives, robots_meta_tags
from tests.support.conformance import assert_conforms

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted(DATA.glob("page_*.json"))
Record = dict[str, Any]


def load(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


SOURCES = {path.stem: load(path) for path in FILES}
RECORDS = [(name, record) for name, data in SOURCES.items() for record in data["records"]]
SCOPES = {None: lambda agent: True, "every-crawler": lambda agent: agent is None}
SCOPES["named"] = lambda agent: agent is not None


def directives_of(record: Record) -> PageDirectives:
    tags = robots_meta_tags(record["html"].encode()) if "html" in record else record.get("meta")
    headers = [tuple(pair) for pair in record.get("headers", [])]
    return page_directives(headers, tags, record["agent"])


def answer(record: Record) -> dict[str, Any]:
    """The engine's answer for the keys of the record's ``expect``."""
    whole = directives_of(record)
    keep = SCOPES[record.get("scope")]
    statements = tuple(s for s in whole.statements if keep(s.agent))
    directives = PageDirectives._combine(statements, whole.warnings, whole.agent)
    found: dict[str, Any] = {}
    for key in record["expect"]:
        if key == "rules":
            found[key] = sorted({statement.rule.name for statement in statements})
        elif key == "unknown":
            found[key] = [w.text for w in whole.warnings if w.code == "unknown-rule"]
        elif key == "warnings":
            found[key] = [w.code for w in whole.warnings]
        elif key == "usage":
            now = datetime.datetime.fromisoformat(record["now"].replace("Z", "+00:00"))
            found[key] = {
                purpose: directives.usage(purpose, now=now).allowed
                for purpose in record["expect"][key]
            }
        else:
            value = getattr(directives, key)
            found[key] = value.isoformat() if isinstance(value, datetime.datetime) else value
    return found


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_file_says_where_it_comes_from(name: str) -> None:
    data = SOURCES[name]
    for field in ("source", "license", "transcription", "conventions", "records"):
        assert data.get(field), field
    assert "url" in data or "paths" in data
    ids = [record["id"] for record in data["records"]]
    assert len(ids) == len(set(ids))
    for record in data["records"]:
        if "divergence" in record:
            assert record["divergence"] in data["categories"]
            assert set(record["ours"]) <= set(record["expect"])


def test_the_four_sources_are_there() -> None:
    assert sorted(SOURCES) == [
        "page_crawler_commons",
        "page_google",
        "page_repext",
        "page_stormcrawler",
    ]
    assert all(len(data["records"]) >= 10 for data in SOURCES.values())


@pytest.mark.parametrize(
    ("name", "record"),
    RECORDS,
    ids=[f"{name}:{record['id']}" for name, record in RECORDS],
)
def test_record(name: str, record: Record) -> None:
    assert_conforms(answer(record), record)


def test_google_and_the_draft_are_followed_everywhere() -> None:
    assert not [r["id"] for r in SOURCES["page_google"]["records"] if "divergence" in r]
    assert not [r["id"] for r in SOURCES["page_repext"]["records"] if "divergence" in r]


if __name__ == "__main__":
    for source, record in RECORDS:
        expected = {**record["expect"], **record.get("ours", {})}
        if answer(record) != expected or "divergence" in record:
            print(
                f"{source}:{record['id']}: {record.get('divergence', 'UNLISTED')}", file=sys.stdout
            )
