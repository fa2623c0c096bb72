"""TDMRep's headers and meta tags in real crawls against a local server: which items a
reservation drops or marks, what ``response.meta["rerp_tdmrep"]`` says decided, and what is
counted. (The origin's tdmrep.json is not fetched by a crawl yet: docs/usage.rst, "TDMRep".)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapy_rerp.engine._tdmrep import TdmRepDecision
from tests.support.crawls import pages, stat
from tests.support.pages import FollowSpider, addon, exported, feed, kept, page, robots_meta
from tests.support.servers import Reply, Server, crawl

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

POLICY = "https://example.com/policy.json"

#: One page per way of saying (or not saying) tdm-reservation.
TDMREP_PAGES: dict[str, Reply] = {
    "/header": page(body="text", headers={"tdm-reservation": "1"}),
    "/meta": page(robots_meta("tdm-reservation", "1"), "text"),
    # The meta tag supersedes the header: not reserved.
    "/header-then-meta": page(
        robots_meta("tdm-reservation", "0"), "text", headers={"tdm-reservation": "1"}
    ),
    # The header's policy stays in force under the meta tag's reservation.
    "/licensable": page(
        robots_meta("tdm-reservation", "1"), "text", headers={"tdm-policy": POLICY}
    ),
    "/bad": page(body="text", headers={"tdm-reservation": "yes"}),
    "/plain": page(body="text"),
}
EVERY_ITEM = sorted((path.lstrip("/"), False) for path in TDMREP_PAGES)


class TdmRepSpider(FollowSpider):
    """Keeps each page's ``response.meta["rerp_tdmrep"]``."""

    name = "tdmrep"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tdmrep: dict[str, dict[str, TdmRepDecision] | None] = {}

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        self.tdmrep[response.url.rsplit("/", 1)[1]] = response.meta.get("rerp_tdmrep")
        yield from super().parse(response)


@pytest.fixture
def tdmrep_site(server: Server) -> Server:
    server.robots("User-agent: *\nAllow: /\n")
    for path, reply in TDMREP_PAGES.items():
        server.route(path, reply)
    return server


async def crawl_site(site: Server, tmp_path: Path, **settings: Any) -> Crawler:
    urls = [site.url(path) for path in TDMREP_PAGES]
    return await crawl(TdmRepSpider, addon(**feed(tmp_path, **settings)), urls=urls)


def decisions(crawler: Crawler) -> dict[str, dict[str, TdmRepDecision] | None]:
    """Each page's ``response.meta["rerp_tdmrep"]``, by the last part of its path."""
    spider = crawler.spider
    assert isinstance(spider, TdmRepSpider)
    return spider.tdmrep


@pytest_twisted.ensureDeferred
async def test_a_reservation_by_header_or_meta_tag_drops_the_pages_items(
    tdmrep_site: Server, tmp_path: Path
) -> None:
    crawler = await crawl_site(tdmrep_site, tmp_path, RERP_USAGE="train-ai")
    assert kept(tmp_path) == [
        ("bad", False),
        ("header-then-meta", False),
        ("plain", False),
    ]
    assert stat(crawler, "robotstxt/page/items_dropped/tdm-reservation") == 3
    assert stat(crawler, "robotstxt/tdmrep/reserved/header") == 1
    assert stat(crawler, "robotstxt/tdmrep/reserved/meta") == 2
    assert stat(crawler, "robotstxt/tdmrep/not_reserved/meta") == 1
    # A value that is neither 1 nor 0 is a protocol error: counted, and no reservation.
    assert stat(crawler, "robotstxt/tdmrep/warnings/bad-reservation") == 1
    # Only the page directives' reading of a page: the origin's file is not fetched.
    assert "/.well-known/tdmrep.json" not in tdmrep_site.paths()

    seen = decisions(crawler)
    assert seen["plain"] is None  # says nothing of TDM: no decision recorded
    header = seen["header"]["train-ai"]
    assert header.preference == "disallowed" and header.statement.technique == "header"
    meta = seen["header-then-meta"]["train-ai"]
    assert meta.preference == "allowed" and meta.statement.technique == "meta"
    licensable = seen["licensable"]["train-ai"]
    assert licensable.preference == "disallowed" and licensable.licensable
    assert licensable.policy == POLICY
    assert seen["bad"]["train-ai"].preference == "unknown"


@pytest_twisted.ensureDeferred
async def test_with_drop_off_a_reserved_pages_items_are_kept_and_marked(
    tdmrep_site: Server, tmp_path: Path
) -> None:
    crawler = await crawl_site(
        tdmrep_site, tmp_path, RERP_USAGE=["train-ai", "ai-input"], RERP_USAGE_DROP=False
    )
    assert kept(tmp_path) == EVERY_ITEM
    items = {item["url"].rsplit("/", 1)[1]: item for item in exported(tmp_path)}
    reason = "TDM rights reserved by tdm-reservation header"
    assert items["header"]["rerp_page_usage"] == {
        purpose: {
            "source": "tdm-reservation header",
            "statement": "tdm-reservation: 1",
            "reason": f"{purpose} disallowed: {reason}",
        }
        for purpose in ("train-ai", "ai-input")
    }
    licensable = items["licensable"]["rerp_page_usage"]["ai-input"]
    assert licensable["statement"] == f"tdm-reservation: 1; tdm-policy: {POLICY}"
    for unmarked in ("bad", "header-then-meta", "plain"):
        assert "rerp_page_usage" not in items[unmarked]
    assert stat(crawler, "robotstxt/page/items_marked/tdm-reservation") == 3
    assert stat(crawler, "robotstxt/page/items_dropped/tdm-reservation") is None


@pytest.mark.parametrize("usage", [None, "search"])
@pytest_twisted.ensureDeferred
async def test_without_a_purpose_tdmrep_speaks_to_nothing_is_read(
    tdmrep_site: Server, tmp_path: Path, usage: str | None
) -> None:
    crawler = await crawl_site(tdmrep_site, tmp_path, RERP_USAGE=usage)
    assert kept(tmp_path) == EVERY_ITEM
    assert set(decisions(crawler).values()) == {None}
    assert crawler.stats is not None
    assert not [key for key in crawler.stats.get_stats() if "tdm" in key]
    assert pages(tdmrep_site) == sorted(TDMREP_PAGES)
