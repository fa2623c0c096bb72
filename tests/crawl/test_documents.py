"""Document kinds registered by a project (``RERP_DOCUMENTS``: docs/design.rst, "How to add a
document kind"): a kind defined outside the package (tests/support/humans.py), registered by the
setting alone, is fetched once per origin before that origin's pages, attached to them, cached,
kept by ``RERP_STORE`` and recorded in the evidence, as tdmrep.json is. (Shared by a fleet:
tests/fleet/test_crawls.py.)"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.http import Response

from scrapy_rerp.core.documents import tdmrep_json
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.crawl.documents import registered_kinds
from tests.support.crawls import rerp, stat
from tests.support.evidence import of_kind, records
from tests.support.humans import humans_of
from tests.support.servers import ListSpider, Reply, Server, crawl, stopped_by_settings

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

HUMANS = "tests.support.humans.humans_txt"
BODY = "/* TEAM */\nDeveloper: Ada\nSite: ada.test\n"
LINES = ("/* TEAM */", "Developer: Ada", "Site: ada.test")


class HumansSpider(ListSpider):
    """Keeps the humans.txt each page's request carried, by the page's URL."""

    name = "humans"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.humans: dict[str, tuple[str, ...] | None] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.humans[response.url] = humans_of(response.meta)


def site(server: Server, humans: Reply | None = None) -> list[str]:
    server.robots("User-agent: *\nDisallow: /private\n")
    server.route("/humans.txt", humans or Reply(body=BODY))
    return [server.url(path) for path in ("/a", "/b", "/c", "/private/d")]


@pytest_twisted.ensureDeferred
async def test_a_kind_registered_by_setting_is_fetched_once_per_origin_before_its_pages(
    make_server: Any, tmp_path: Path
) -> None:
    one, two = make_server(), make_server()
    urls = site(one) + site(two, Reply(status=404))
    evidence = tmp_path / "evidence.jsonl"
    settings = rerp(RERP_DOCUMENTS=[HUMANS], RERP_EVIDENCE=str(evidence))
    crawler = await crawl(HumansSpider, settings, urls=urls)
    for server in (one, two):
        [hit] = server.hits("/humans.txt")
        pages = [h for h in server.hits() if h.path not in ("/robots.txt", "/humans.txt")]
        # Once robots.txt allowed a page: the disallowed one is never sent, and every page
        # waited for the document.
        assert sorted(h.path for h in pages) == ["/a", "/b", "/c"]
        assert all(h.time > hit.time for h in pages)
        assert hit.time > server.hits("/robots.txt")[0].time
    spider = crawler.spider
    assert isinstance(spider, HumansSpider)
    # Each page carried its origin's document: the lines, or the kind's "absent" for a 404.
    assert spider.humans == {
        **{one.url(p): LINES for p in ("/a", "/b", "/c")},
        **{two.url(p): () for p in ("/a", "/b", "/c")},
    }
    # Its stats, under its own prefix; robots.txt's are robots.txt's alone.
    assert stat(crawler, "robotstxt/humans/request_count") == 2
    assert stat(crawler, "robotstxt/humans/origin_count") == 2
    assert stat(crawler, "robotstxt/humans/allow_all") == 1  # the 404: "no humans named"
    assert stat(crawler, "robotstxt/request_count") == 2
    # The evidence: one record per origin's copy, its body kept; every page's decision points
    # to the copy it went on with.
    found = records(evidence)
    humans = {r["origin"]: r for r in of_kind(found, "humans")}
    assert set(humans) == {one.origin, two.origin}
    assert humans[one.origin]["body"] == BODY
    assert humans[one.origin]["url"] == one.url("/humans.txt")
    assert humans[one.origin]["sha256"] == hashlib.sha256(BODY.encode()).hexdigest()
    assert humans[two.origin]["outcome"] == "allow-all"
    downloaded = [r for r in of_kind(found, "decision") if r["verdict"] == "downloaded"]
    assert len(downloaded) == 6
    for record in downloaded:
        origin = one.origin if record["url"].startswith(one.origin) else two.origin
        assert record["documents"] == {"humans": humans[origin]["sha256"]}


@pytest_twisted.ensureDeferred
async def test_a_stored_kind_is_kept_by_the_store_for_the_next_run(
    server: Server, tmp_path: Path
) -> None:
    urls = site(server)
    store = tmp_path / "robots.sqlite"
    settings = rerp(RERP_DOCUMENTS=[HUMANS], RERP_STORE=str(store))
    first = await crawl(HumansSpider, settings, urls=urls)
    assert stat(first, "robotstxt/humans/request_count") == 1
    server.clear()
    again = await crawl(HumansSpider, settings, urls=urls)
    # Neither robots.txt nor humans.txt is asked for again: both come from the store.
    assert server.count("/humans.txt") == 0 and server.count("/robots.txt") == 0
    assert stat(again, "robotstxt/humans/store/reused") == 1
    assert stat(again, "robotstxt/store/reused") == 1
    spider = again.spider
    assert isinstance(spider, HumansSpider)
    assert set(spider.humans.values()) == {LINES}
    assert sorted(h.path for h in server.hits()) == ["/a", "/b", "/c"]


@pytest.mark.parametrize(
    ("documents", "said"),
    [
        (["tests.support.humans.missing"], "importable callables"),
        (["tests.support.humans.not_a_kind"], "returned dict, not a DocumentKind"),
        (["tests.support.humans.failing"], "ValueError: no humans here"),
        ([HUMANS, HUMANS.replace("humans_txt", "humans_txt")], None),  # named twice: once
        (["tests.support.humans.tdmrep_again"], "two document kinds have the name"),
        (["tests.support.humans.named_by_pages"], "humans.txt: locate_page without locate"),
    ],
    ids=["missing", "not-a-kind", "failing", "twice", "tdmrep-again", "named-by-pages"],
)
@pytest_twisted.ensureDeferred
async def test_a_registration_that_cannot_be_served_stops_the_crawl_at_start_up(
    server: Server, caplog: pytest.LogCaptureFixture, documents: list[str], said: str | None
) -> None:
    urls = site(server)
    settings = rerp(RERP_DOCUMENTS=documents, RERP_USAGE="train-ai")
    with caplog.at_level(logging.INFO):
        crawler = await crawl(HumansSpider, settings, urls=urls)
    if said is None:  # a path named twice registers its kind once
        assert server.count("/humans.txt") == 1
        return
    line = stopped_by_settings(crawler, caplog.records, "RERP_DOCUMENTS")
    assert said in line
    assert server.hits() == []  # not one request: no crawl that ignores what it was told


def test_robots_txt_comes_first_then_the_base_kinds_then_the_project_s() -> None:
    settings = RerpSettings.from_settings(
        {"RERP_USAGE": "train-ai", "RERP_DOCUMENTS": [HUMANS]}, require_obey=False
    )
    names = [kind.name for kind in registered_kinds(settings)]
    assert names == ["robots.txt", "tdmrep.json", "RSL licence", "humans.txt"]
    # Without a purpose TDMRep speaks to, tdmrep.json's factory registers nothing.
    plain = RerpSettings.from_settings({}, require_obey=False)
    assert [kind.name for kind in registered_kinds(plain)] == ["robots.txt"]
    assert tdmrep_json().meta_key is not None
