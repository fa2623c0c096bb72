"""Huge response headers in a real crawl: the headers that speak to the crawl are read up to
``MAX_HEADER_BYTES``, every logged and recorded field is bounded (docs/usage.rst and
docs/evidence.rst, "Bounds"), and the decisions are still the site's."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from scrapy_rerp.core.body import MAX_HEADER_BYTES
from scrapy_rerp.core.lengths import MAX_ENTRIES, MAX_FIELD_CHARS
from tests.support.crawls import stat
from tests.support.pages import FollowSpider, addon, links, page
from tests.support.servers import TEST_REACTOR, Reply, Server, crawl

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

#: The header lines of the issue: 2,000 of 14 KB each, 28 MB in one response's head.
LINES = 2_000
LINE_BYTES = 14 * 1024
#: A log line quotes at most three bounded values beside its own words.
LOG_LINE_BOUND = 4 * MAX_FIELD_CHARS


def padded(first: str, filler: str, size: int = LINE_BYTES, numbered: bool = True) -> str:
    """A header line of about *size* bytes: *first*, then *filler* items (numbered, unless
    not *numbered*), comma separated."""
    items = [first]
    length = len(first)
    number = 0
    while length + len(filler) + 8 < size:
        item = f"{filler}{number}" if numbered else filler
        items.append(item)
        length += len(item) + 2
        number += 1
    return ", ".join(items)


def many_lines(name: str, line: str, count: int = LINES) -> dict[str, str]:
    """*count* ``name: line`` header lines. The server writes a header's value as given, so the
    line breaks in it start the other lines on the wire."""
    return {name: f"\r\n{name}: ".join([line] * count)}


def fields(value: Any) -> list[Any]:
    """Every string and list in a record, at any depth."""
    if isinstance(value, dict):
        return [found for item in value.values() for found in fields(item)]
    if isinstance(value, list):
        return [value, *(found for item in value for found in fields(item))]
    return [value] if isinstance(value, str) else []


@pytest.mark.skipif(
    TEST_REACTOR == "none",
    reason="Scrapy's reactorless download handler (aiohttp) refuses a response head with a line "
    "over 8 KiB: no such page reaches the layer there",
)
@pytest_twisted.ensureDeferred
async def test_huge_headers_are_read_to_the_cap_logged_and_recorded_within_bounds(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A robots.txt rule of 100,000 characters decides /private/x: quoted in the log, recorded.
    server.robots("User-agent: *\nDisallow: /private" + "*" * 100_000 + "\nAllow: /\n")
    # The site's first statement refuses training; 28 MB of unknown categories follow.
    refusing = padded("train-ai=n", "category-")
    server.route("/refuses", page(body="text", headers=many_lines("Content-Usage", refusing)))
    # The first statements allow it; whatever the cut part said is not read.
    allowing = padded("train-ai=y", "category-")
    server.route(
        "/allows", page(body="text", headers=many_lines("Content-Usage", allowing, count=200))
    )
    robots_tag = padded("noai, nofollow", "noarchive", numbered=False)
    server.route(
        "/robots-tag",
        page(body=links("/followed"), headers=many_lines("X-Robots-Tag", robots_tag)),
    )
    server.route("/followed", Reply(body="text"))
    evidence = tmp_path / "evidence.jsonl"
    settings = addon(RERP_USAGE="train-ai", RERP_EVIDENCE=str(evidence), LOG_LEVEL="DEBUG")
    urls = [server.url(p) for p in ("/refuses", "/allows", "/robots-tag", "/private/x")]
    with caplog.at_level(logging.DEBUG):
        crawler = await crawl(FollowSpider, settings=settings, urls=urls)
    spider = crawler.spider
    assert isinstance(spider, FollowSpider)
    # The heads were sent whole: the cap is the crawler's, not the transport's.
    for path in ("/refuses", "/allows", "/robots-tag"):
        assert server.count(path) == 1
    # The decisions: the refusal read first holds; the cut permission is unknown (and the
    # default lets it through); the nofollow and noai of the first X-Robots-Tag line hold.
    assert sorted(spider.responses) == sorted([server.url("/allows"), server.url("/robots-tag")])
    assert stat(crawler, "robotstxt/usage/dropped/header") == 1
    assert stat(crawler, "robotstxt/usage/header_cut") == 2
    assert server.count("/followed") == 0
    assert stat(crawler, "robotstxt/page/header_cut") == 1
    assert stat(crawler, "robotstxt/page/nofollow_dropped") == 1
    assert stat(crawler, "robotstxt/page/items_dropped/noai") == 1
    # Each cut logged once per header, saying where it was cut.
    cuts = [r.getMessage() for r in caplog.records if "cut at" in r.getMessage()]
    assert len(cuts) == 2
    assert all(f"cut at {MAX_HEADER_BYTES} bytes" in line for line in cuts)
    longest = max(len(r.getMessage()) for r in caplog.records)
    assert longest <= LOG_LINE_BOUND
    # Which of the two pages answers first is the reactor's business: each line by its page.
    dropped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Dropped")]
    refused = next(line for line in dropped if server.url("/refuses") in line)
    assert "train-ai disallowed by the Content-Usage header" in refused
    # The records: every text field and list within its bound, and the decisions in them.
    lines = evidence.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        # A robots.txt record's body is bounded by RERP_MAX_SIZE, not by the field bound.
        for found in fields({k: v for k, v in record.items() if k != "body"}):
            if isinstance(found, str):
                assert len(found) <= MAX_FIELD_CHARS
            else:
                assert len(found) <= MAX_ENTRIES
    # Beside the robots.txt record (its body as read), records of a few KB: 49.5 MB before.
    sizes = [
        len(line) for line, record in zip(lines, records, strict=True) if record["kind"] != "robots"
    ]
    assert max(sizes) < 16 * 1024
    decisions = {r["url"]: r for r in records if r["kind"] == "decision"}
    refused = decisions[server.url("/refuses")]
    assert refused["verdict"] == "dropped"
    assert refused["usage"]["allowed"] is False
    assert refused["usage"]["value"].startswith("Content-Usage: train-ai=n, category-0")
    assert refused["usage"]["value"].endswith("more characters not shown]")
    forbidden = decisions[server.url("/private/x")]
    assert (forbidden["verdict"], forbidden["line"]) == ("refused", 2)
    assert forbidden["rule"].startswith("Disallow: /private***")
    assert server.count("/private/x") == 0
    [logged] = [
        r.getMessage() for r in caplog.records if "Forbidden by robots.txt" in r.getMessage()
    ]
    assert "line 2: Disallow: /private***" in logged and "more characters not shown" in logged
    allowed = decisions[server.url("/allows")]
    assert (allowed["verdict"], allowed["usage"]["allowed"]) == ("downloaded", None)
    [robots_tag_page] = [r for r in records if r["kind"] == "page"]
    assert robots_tag_page["nofollow"] is True
    assert [r["rule"] for r in robots_tag_page["refused"]] == ["noai"]
    directives = robots_tag_page["directives"]
    assert directives[:2] == [
        {"source": "X-Robots-Tag header 1", "text": "noai"},
        {"source": "X-Robots-Tag header 1", "text": "nofollow"},
    ]
    assert len(directives) == MAX_ENTRIES
    assert directives[-1]["text"].endswith("more not recorded]")
