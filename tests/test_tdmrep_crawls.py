"""Each origin's /.well-known/tdmrep.json in a crawl (docs/usage.rst, "TDMRep in a crawl"):
fetched once per origin through the origin service, the pages robots.txt allows waiting for it,
its reservations applied to their items with the page's own TDMRep headers and meta tags."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapy_rerp.core.data import RobotsEntry
from scrapy_rerp.core.documents import tdmrep_json
from scrapy_rerp.crawl.documents import DocumentListener
from scrapy_rerp.engine import TdmRepDecision, parse_tdmrep
from tests.support.crawls import FAST_OUTAGE, stat
from tests.support.pages import FollowSpider, addon, exported, feed, kept, page, robots_meta
from tests.support.parts import crawler_and_settings
from tests.support.servers import Hit, Reply, Server, crawl

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

TDMREP = "/.well-known/tdmrep.json"
POLICY = "https://example.com/policy.json"


def tdmrep_file(*entries: dict[str, Any]) -> Reply:
    return Reply(body=json.dumps(list(entries)), content_type="application/json")


#: Reserves /reserved/ and its pages, and says "not reserved" of /open/.
FILE = tdmrep_file(
    {"location": "/reserved/*", "tdm-reservation": 1, "tdm-policy": POLICY},
    {"location": "/open/*", "tdm-reservation": 0},
)
PAGES = ["/reserved/a", "/reserved/b", "/open/c", "/elsewhere"]


class TdmRepSpider(FollowSpider):
    """Keeps each page's ``response.meta["rerp_tdmrep"]``, by its path."""

    name = "tdmrep-file"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tdmrep: dict[str, dict[str, TdmRepDecision] | None] = {}

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        self.tdmrep[response.url.split("/", 3)[3]] = response.meta.get("rerp_tdmrep")
        yield from super().parse(response)


def site(server: Server, tdmrep: Reply | Any, pages: list[str] = PAGES) -> Server:
    server.robots("User-agent: *\nAllow: /\n")
    server.route(TDMREP, tdmrep)
    for path in pages:
        server.route(path, page(body="text"))
    return server


async def crawl_site(
    server: Server, tmp_path: Path, pages: list[str] = PAGES, **settings: Any
) -> Crawler:
    urls = [server.url(path) for path in pages]
    settings.setdefault("RERP_USAGE", "train-ai")
    return await crawl(TdmRepSpider, addon(**feed(tmp_path, **settings)), urls=urls)


def decisions(crawler: Crawler) -> dict[str, dict[str, TdmRepDecision] | None]:
    spider = crawler.spider
    assert isinstance(spider, TdmRepSpider)
    return spider.tdmrep


def page_hits(server: Server) -> list[Hit]:
    return [hit for hit in server.hits() if hit.path not in ("/robots.txt", TDMREP)]


def every_item(pages: list[str] = PAGES) -> list[tuple[str, bool]]:
    return sorted((path.lstrip("/"), False) for path in pages)


@pytest_twisted.ensureDeferred
async def test_the_file_reserves_its_paths_once_fetched_before_any_page(
    server: Server, tmp_path: Path
) -> None:
    crawler = await crawl_site(site(server, FILE), tmp_path)
    # One download for the origin's three... four pages, before any of them: they waited.
    assert server.count(TDMREP) == 1
    tdmrep_at = server.hits(TDMREP)[0].time
    assert all(hit.time > tdmrep_at for hit in page_hits(server))
    assert sorted(hit.path for hit in page_hits(server)) == sorted(PAGES)  # all downloaded
    assert kept(tmp_path) == [("elsewhere", False), ("open/c", False)]
    assert stat(crawler, "robotstxt/page/items_dropped/tdm-reservation") == 2
    assert stat(crawler, "robotstxt/tdmrep/reserved/tdmrep.json") == 2
    assert stat(crawler, "robotstxt/tdmrep/not_reserved/tdmrep.json") == 1
    assert stat(crawler, "robotstxt/tdmrep/request_count") == 1
    assert stat(crawler, "robotstxt/request_count") == 1  # robots.txt's own count, apart
    seen = decisions(crawler)
    reserved = seen["reserved/a"]["train-ai"]  # type: ignore[index]
    assert reserved.preference == "disallowed" and reserved.licensable
    assert reserved.statement is not None and reserved.statement.technique == "tdmrep.json"
    assert seen["open/c"]["train-ai"].preference == "allowed"  # type: ignore[index]
    assert seen["elsewhere"] is None  # no entry matches: nothing said


@pytest_twisted.ensureDeferred
async def test_with_drop_off_the_file_s_reservations_mark_the_items(
    server: Server, tmp_path: Path
) -> None:
    crawler = await crawl_site(
        site(server, FILE), tmp_path, RERP_USAGE=["train-ai", "ai-input"], RERP_USAGE_DROP=False
    )
    assert kept(tmp_path) == every_item()
    items = {item["url"].split("/", 3)[3]: item for item in exported(tmp_path)}
    usage = items["reserved/a"]["rerp_page_usage"]
    assert set(usage) == {"train-ai", "ai-input"}
    assert usage["train-ai"]["source"] == 'tdmrep.json entry 1 (location "/reserved/*")'
    assert usage["train-ai"]["statement"] == f"tdm-reservation: 1; tdm-policy: {POLICY}"
    for unmarked in ("open/c", "elsewhere"):
        assert "rerp_page_usage" not in items[unmarked]
    assert stat(crawler, "robotstxt/page/items_marked/tdm-reservation") == 2
    assert server.count(TDMREP) == 1


@pytest_twisted.ensureDeferred
async def test_headers_supersede_the_file_and_meta_tags_supersede_both(
    server: Server, tmp_path: Path
) -> None:
    file = tdmrep_file(
        {"location": "/file-1*", "tdm-reservation": 1},
        {"location": "/file-0*", "tdm-reservation": 0},
    )
    server.robots("User-agent: *\nAllow: /\n")
    server.route(TDMREP, file)
    routes = {
        "/file-1": page(body="text"),  # the file alone: reserved
        "/file-1-header-0": page(body="text", headers={"tdm-reservation": "0"}),
        "/file-0-header-1": page(body="text", headers={"tdm-reservation": "1"}),
        "/file-1-header-1-meta-0": page(
            robots_meta("tdm-reservation", "0"), "text", headers={"tdm-reservation": "1"}
        ),
        "/file-0-meta-1": page(robots_meta("tdm-reservation", "1"), "text"),
    }
    for path, reply in routes.items():
        server.route(path, reply)
    crawler = await crawl_site(server, tmp_path, list(routes))
    said = {
        path: (decision["train-ai"].preference, decision["train-ai"].statement.technique)
        for path, decision in decisions(crawler).items()
        if decision is not None and decision["train-ai"].statement is not None
    }
    assert said == {
        "file-1": ("disallowed", "tdmrep.json"),
        "file-1-header-0": ("allowed", "header"),
        "file-0-header-1": ("disallowed", "header"),
        "file-1-header-1-meta-0": ("allowed", "meta"),
        "file-0-meta-1": ("disallowed", "meta"),
    }
    assert kept(tmp_path) == [("file-1-header-0", False), ("file-1-header-1-meta-0", False)]


@pytest_twisted.ensureDeferred
async def test_a_broken_file_reserves_nothing_and_is_counted_and_logged_once(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = Reply(body='[{"location": "/reserved/*", "tdm-reservation": 1}', content_type=None)
    with caplog.at_level(logging.WARNING, logger="scrapy_rerp.robotstxt"):
        crawler = await crawl_site(site(server, broken), tmp_path)
    assert kept(tmp_path) == every_item()
    assert server.count(TDMREP) == 1
    assert stat(crawler, "robotstxt/tdmrep/file/invalid") == 1
    said = [r.getMessage() for r in caplog.records if "tdmrep.json of" in r.getMessage()]
    assert len(said) == 1
    assert "not JSON" in said[0] and server.origin in said[0]
    assert set(decisions(crawler).values()) == {None}


@pytest_twisted.ensureDeferred
async def test_a_missing_file_reserves_nothing(server: Server, tmp_path: Path) -> None:
    crawler = await crawl_site(site(server, Reply(status=404)), tmp_path)
    assert kept(tmp_path) == every_item()
    assert server.count(TDMREP) == 1
    assert stat(crawler, "robotstxt/tdmrep/response_status_count/404") == 1
    assert stat(crawler, "robotstxt/tdmrep/allow_all") == 1
    assert stat(crawler, "robotstxt/tdmrep/file/invalid") is None
    assert set(decisions(crawler).values()) == {None}


@pytest_twisted.ensureDeferred
async def test_a_redirect_is_followed_to_the_file_before_any_page(
    server: Server, tmp_path: Path
) -> None:
    moved = Reply(status=301, headers={"Location": "/files/tdm.json"})
    site(server, moved).route("/files/tdm.json", FILE)
    crawler = await crawl_site(server, tmp_path)
    assert (server.count(TDMREP), server.count("/files/tdm.json")) == (1, 1)
    file_at = server.hits("/files/tdm.json")[0].time
    assert all(hit.time > file_at for hit in page_hits(server) if hit.path != "/files/tdm.json")
    # The file the redirect led to reserves its paths.
    assert kept(tmp_path) == [("elsewhere", False), ("open/c", False)]
    assert stat(crawler, "robotstxt/tdmrep/reserved/tdmrep.json") == 2


@pytest_twisted.ensureDeferred
async def test_a_redirect_loop_is_no_file(server: Server, tmp_path: Path) -> None:
    loop = Reply(status=302, headers={"Location": TDMREP})
    crawler = await crawl_site(site(server, loop), tmp_path, RERP_MAX_REDIRECTS=3)
    # The first request and three redirects, then no file: no reservation from it.
    assert server.count(TDMREP) == 4
    assert kept(tmp_path) == every_item()
    assert stat(crawler, "robotstxt/tdmrep/reserved/tdmrep.json") is None


@pytest_twisted.ensureDeferred
async def test_a_503_is_retried_and_the_pages_wait_for_the_file(
    server: Server, tmp_path: Path
) -> None:
    answers = iter([Reply(status=503)])

    def flaky(hit: Hit) -> Reply:
        return next(answers, FILE)

    crawler = await crawl_site(site(server, flaky), tmp_path, **FAST_OUTAGE)
    tdmrep_hits = server.hits(TDMREP)
    assert len(tdmrep_hits) == 2
    # Every page waited for the good copy, and its reservations hold.
    assert all(hit.time > tdmrep_hits[1].time for hit in page_hits(server))
    assert len(page_hits(server)) == len(PAGES)
    assert kept(tmp_path) == [("elsewhere", False), ("open/c", False)]
    assert stat(crawler, "robotstxt/tdmrep/retry_count") == 1
    assert stat(crawler, "robotstxt/tdmrep/unreachable/count") == 1


@pytest_twisted.ensureDeferred
async def test_a_file_unreachable_for_too_long_drops_the_pages_that_wait(
    server: Server, tmp_path: Path
) -> None:
    crawler = await crawl_site(site(server, Reply(status=503)), tmp_path, **FAST_OUTAGE)
    assert page_hits(server) == []  # an unknown reservation is no "no reservation"
    assert server.count(TDMREP) >= 2  # retried
    assert stat(crawler, "robotstxt/dropped/unreachable") == len(PAGES)
    assert kept(tmp_path) == []


@pytest.mark.parametrize("usage", [None, "search"])
@pytest_twisted.ensureDeferred
async def test_not_fetched_without_a_purpose_tdmrep_speaks_to(
    server: Server, tmp_path: Path, usage: str | None
) -> None:
    crawler = await crawl_site(site(server, FILE), tmp_path, RERP_USAGE=usage)
    assert server.count(TDMREP) == 0
    assert kept(tmp_path) == every_item()
    assert stat(crawler, "robotstxt/tdmrep/request_count") is None


@pytest_twisted.ensureDeferred
async def test_not_fetched_for_an_origin_whose_robots_txt_disallows_every_page(
    server: Server, tmp_path: Path
) -> None:
    site(server, FILE)
    server.robots("User-agent: *\nDisallow: /\n")
    crawler = await crawl_site(server, tmp_path)
    assert server.paths() == ["/robots.txt"]
    assert stat(crawler, "robotstxt/forbidden") == len(PAGES)


@pytest_twisted.ensureDeferred  # as the crawl tests: also without a reactor (asyncio.run)
async def test_an_invalid_file_is_counted_each_time_it_is_read_and_logged_once_per_origin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    crawler, _ = crawler_and_settings({})
    stats = crawler.stats
    assert stats is not None
    listener = DocumentListener(crawler, None, tdmrep_json(), max_origins=2)  # type: ignore[arg-type]
    invalid = RobotsEntry(
        robots=parse_tdmrep(b"nope"), fetched_at=0.0, expires_at=1.0, url="http://a.test/x"
    )
    valid = RobotsEntry(robots=parse_tdmrep(b"[]"), fetched_at=0.0, expires_at=1.0)

    async def read(*origins: str) -> None:
        for origin in origins:
            await listener.rules_known(origin, invalid, None, None)
        await listener.rules_known("http://valid.test", valid, None, None)

    with caplog.at_level(logging.WARNING, logger="scrapy_rerp.robotstxt"):
        # a, then b: both logged; a again: not; c pushes a out of the two remembered.
        await read("http://a.test", "http://b.test", "http://a.test", "http://c.test")
        await read("http://a.test")
    logged = [r.getMessage().split(" ")[2] for r in caplog.records]
    assert logged == ["http://a.test", "http://b.test", "http://c.test", "http://a.test"]
    assert stats.get_value("robotstxt/tdmrep/file/invalid") == 5


def test_the_file_attached_to_a_request_is_not_kept_with_it_on_disk() -> None:
    # A JOBDIR's queues pickle a request's dict, meta included (scrapy.squeues), and a retried
    # request carries its meta: the file is left out, and the gate attaches it again.
    import copy
    import pickle

    from scrapy import Request
    from scrapy.utils.request import request_from_dict

    from scrapy_rerp.core.documents import TDMREP_FILE_META as FILE_META
    from scrapy_rerp.crawl.documents import Attached

    big = parse_tdmrep(
        json.dumps([{"location": f"/d{i}/*", "tdm-reservation": 1} for i in range(2000)])
    )
    request = Request("https://example.com/d1/a", meta={FILE_META: Attached(big), "kept": 1})
    pickled = pickle.dumps(request.to_dict(), protocol=4)  # as scrapy.squeues pickles it
    assert len(pickled) < 1_000
    back = request_from_dict(pickle.loads(pickled))
    assert back.meta == {FILE_META: None, "kept": 1}
    # In memory, a copy (a retry's) shares it.
    assert request.copy().meta[FILE_META].document is big
    assert copy.deepcopy(request.meta)[FILE_META].document is big
