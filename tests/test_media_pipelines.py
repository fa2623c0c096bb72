"""Requests that do not come from the scheduler: FilesPipeline and ImagesPipeline.

Media pipelines download through ``engine.download_async``, which downloads a request returned
by ``process_request`` again at once, without scheduling it; such a request waits for its
origin's robots.txt in place. Real crawls over "CDN" origins on their own hosts whose robots.txt
answers at once, late, 503 and never: the crawl closes by itself, every allowed file is stored,
no disallowed file reaches its server, and the item's field lists what was stored.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from PIL import Image
from scrapy.pipelines.files import FilesPipeline
from scrapy.pipelines.images import ImagesPipeline

from tests.support.crawls import rerp
from tests.support.redis import RedisServer
from tests.support.servers import Reply, Server, crawl, gaps, ledger

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

KINDS = ["ok", "late", "503", "never"]


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def cdns() -> Iterator[dict[str, Server]]:
    """A page site on 127.0.0.2 and one CDN per kind of robots.txt on 127.0.0.3 and on."""
    hosts = ["page", *KINDS]
    started = {kind: Server(host=f"127.0.0.{n}").start() for n, kind in enumerate(hosts, 2)}
    yield started
    for server in started.values():
        server.stop()


def program(cdns: dict[str, Server]) -> None:
    rules = "User-agent: *\nDisallow: /private\n"
    cdns["ok"].robots(rules)
    cdns["late"].robots(rules, delay=1.5)
    cdns["503"].robots(rules, status=503)
    cdns["never"].robots(rules, delay=30.0)  # longer than DOWNLOAD_TIMEOUT
    image = Reply(body=png(), content_type="image/png")
    for server in cdns.values():
        server.clear()
        for name in ("a", "b"):
            server.route(f"/media/{name}.png", image)
        server.route("/private/c.png", image)


class MediaSpider(scrapy.Spider):
    """One page; its parse yields one item per CDN, naming two allowed files and a disallowed
    one."""

    name = "media"

    def __init__(
        self,
        page: str = "",
        cdn_urls: dict[str, list[str]] | None = None,
        field: str = "file_urls",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.page = page
        self.cdn_urls = cdn_urls or {}
        self.field = field

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.page)

    def parse(self, response: scrapy.http.Response) -> Iterator[dict[str, Any]]:
        for kind, urls in self.cdn_urls.items():
            yield {"kind": kind, self.field: urls}


class Items:
    """An item pipeline that keeps what the media pipeline put in each item."""

    items: list[dict[str, Any]] = []

    def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
        Items.items.append(dict(item))
        return item


#: Why each media request failed, as the media pipeline was told (``media_failed``).
FAILED: list[str] = []


class RecordingFiles(FilesPipeline):
    def media_failed(self, failure: Any, request: scrapy.Request, info: Any) -> Any:
        FAILED.append(f"{request.url}: {failure.getErrorMessage()}")
        return super().media_failed(failure, request, info)


class RecordingImages(ImagesPipeline):
    def media_failed(self, failure: Any, request: scrapy.Request, info: Any) -> Any:
        FAILED.append(f"{request.url}: {failure.getErrorMessage()}")
        return super().media_failed(failure, request, info)


@pytest.mark.parametrize(
    ("pipeline", "urls_field", "result_field", "store"),
    [
        (f"{__name__}.RecordingFiles", "file_urls", "files", "FILES_STORE"),
        (f"{__name__}.RecordingImages", "image_urls", "images", "IMAGES_STORE"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_media_pipelines_wait_for_robots_txt_and_the_crawl_closes(
    cdns: dict[str, Server],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    pipeline: str,
    urls_field: str,
    result_field: str,
    store: str,
) -> None:
    program(cdns)
    cdn_urls = {
        kind: [cdns[kind].url(p) for p in ("/media/a.png", "/media/b.png", "/private/c.png")]
        for kind in KINDS
    }
    Items.items = []
    FAILED.clear()
    settings = rerp(
        ITEM_PIPELINES={pipeline: 1, f"{__name__}.Items": 900},
        **{store: str(tmp_path)},
        DOWNLOAD_TIMEOUT=2.5,
        RERP_RETRY_BACKOFF_BASE=0.2,
        RERP_RETRY_BACKOFF_MAX=0.4,
        RERP_UNREACHABLE_MAX_WAIT=1.5,
        CLOSESPIDER_TIMEOUT=60,  # a crawl that would never close fails the test instead
    )
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    crawler = await crawl(
        MediaSpider, settings, page=cdns["page"].url("/"), cdn_urls=cdn_urls, field=urls_field
    )
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert time.monotonic() - started < 30
    stored = {item["kind"]: sorted(f["url"] for f in item[result_field]) for item in Items.items}
    # Allowed files are stored, wherever the rules came from; no file of an origin whose
    # robots.txt never came is downloaded.
    assert stored == {
        "ok": cdn_urls["ok"][:2],
        "late": cdn_urls["late"][:2],
        "503": [],
        "never": [],
    }
    for kind in ("ok", "late"):
        # robots.txt once, and once more after each time it did not answer within
        # DOWNLOAD_TIMEOUT: the late origin's 1.5 s passes 2.5 s on a starved machine, and the
        # status ladder retries it (test_a_media_request_waits_in_place_through_a_robots_txt_retry).
        asked = ["/robots.txt"] * (1 + timed_out(caplog.records, cdns[kind]))
        assert sorted(cdns[kind].paths()) == ["/media/a.png", "/media/b.png", *asked]
    for kind in ("503", "never"):
        assert set(cdns[kind].paths()) == {"/robots.txt"}
    assert len(list(tmp_path.rglob("*.*"))) == 4  # the four allowed files, on disk
    # What failed, and why, as the media pipeline was told.
    forbidden = [m for m in FAILED if "Forbidden by robots.txt" in m]
    unreachable = [m for m in FAILED if "unreachable for more than" in m]
    assert len(forbidden) == 2 and all("/private/c.png" in m for m in forbidden)
    assert len(unreachable) == 6
    assert len(FAILED) == 8, FAILED
    # No request went round in a loop: each of them waited in place, once its first return
    # showed it came from outside the scheduler.
    counts = ledger(crawler)
    assert counts["parked"] <= 12 + 4, counts
    assert crawler.stats.get_value("robotstxt/waited_in_place") >= 8
    # Nothing went wrong besides those refusals. (Scrapy < 2.18's media pipelines log each
    # refused media request as an ERROR of their own, a FileException; 2.18 logs it as
    # "filtered".)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in errors if not r.name.startswith("scrapy.pipelines")], errors
    assert len(errors) in (0, len(FAILED)), [r.getMessage() for r in errors]


def timed_out(records: list[logging.LogRecord], server: Server) -> int:
    """How many times the crawl's log says the server's robots.txt timed out."""
    said = f"robots.txt of {server.url('')} unreachable (timed out)"
    return sum(r.getMessage().startswith(said) for r in records)


@pytest_twisted.ensureDeferred
async def test_a_media_request_waits_in_place_through_a_robots_txt_retry(
    cdns: dict[str, Server], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    program(cdns)
    late = cdns["late"]
    rules = "User-agent: *\nDisallow: /private\n"
    # The first robots.txt answers after DOWNLOAD_TIMEOUT, the retry at once.
    late.route("/robots.txt", [Reply(body=rules, delay=2.0), Reply(body=rules)])
    urls = [late.url(p) for p in ("/media/a.png", "/media/b.png", "/private/c.png")]
    Items.items = []
    FAILED.clear()
    settings = rerp(
        ITEM_PIPELINES={f"{__name__}.RecordingFiles": 1, f"{__name__}.Items": 900},
        FILES_STORE=str(tmp_path),
        DOWNLOAD_TIMEOUT=1.0,
        RERP_RETRY_BACKOFF_BASE=0.2,
        RERP_RETRY_BACKOFF_MAX=0.4,
        RERP_UNREACHABLE_MAX_WAIT=20,
        CLOSESPIDER_TIMEOUT=60,
    )
    caplog.set_level(logging.INFO)
    crawler = await crawl(
        MediaSpider, settings, page=cdns["page"].url("/"), cdn_urls={"late": urls}
    )
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert timed_out(caplog.records, late) == 1
    assert sorted(late.paths()) == ["/media/a.png", "/media/b.png", "/robots.txt", "/robots.txt"]
    [item] = Items.items
    assert sorted(f["url"] for f in item["files"]) == urls[:2]
    assert len(FAILED) == 1 and "Forbidden by robots.txt" in FAILED[0], FAILED
    assert crawler.stats.get_value("robotstxt/waited_in_place") >= 3
    ledger(crawler)


@pytest.mark.needs_asyncio  # the fleet's store: redis.asyncio
@pytest_twisted.ensureDeferred
async def test_a_fleet_worker_s_media_downloads_wait_for_their_crawl_delay_turn(
    cdns: dict[str, Server], tmp_path: Path
) -> None:
    program(cdns)
    polite = cdns["ok"]
    polite.robots("User-agent: *\nCrawl-delay: 0.3\n")
    urls = [polite.url(f"/media/{name}.png") for name in ("a", "b")]
    urls += [polite.url(f"/media/a.png?{i}") for i in range(4)]
    redis_server = RedisServer().start()
    try:
        Items.items = []
        settings = rerp(
            ITEM_PIPELINES={"scrapy.pipelines.files.FilesPipeline": 1, f"{__name__}.Items": 900},
            FILES_STORE=str(tmp_path),
            RERP_CACHE="scrapy_rerp.cache.RedisOriginCache",
            RERP_REDIS_URL=redis_server.url,
            CLOSESPIDER_TIMEOUT=60,
        )
        crawler = await crawl(
            MediaSpider, settings, page=cdns["page"].url("/"), cdn_urls={"ok": urls}
        )
    finally:
        redis_server.stop()
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    [item] = Items.items
    assert sorted(f["url"] for f in item["files"]) == sorted(urls)
    hits = polite.hits()
    assert [h.path for h in hits][0] == "/robots.txt"
    assert min(gaps(hits)) >= 0.3 - 0.02, gaps(hits)  # the fleet's turn and the floor held
    ledger(crawler)


@pytest_twisted.ensureDeferred
async def test_media_downloads_wait_out_a_cool_down_in_place(
    cdns: dict[str, Server], tmp_path: Path
) -> None:
    program(cdns)
    cdn = cdns["ok"]
    cdn.route(
        "/media/a.png",
        [
            Reply(status=429, headers={"Retry-After": "1"}),
            Reply(body=png(), content_type="image/png"),
        ],
    )
    urls = [cdn.url("/media/a.png"), cdn.url("/media/b.png")]
    Items.items = []
    settings = rerp(
        ITEM_PIPELINES={"scrapy.pipelines.files.FilesPipeline": 1, f"{__name__}.Items": 900},
        FILES_STORE=str(tmp_path),
        RETRY_ENABLED=True,
        CONCURRENT_REQUESTS_PER_DOMAIN=1,
        DOWNLOAD_DELAY=0.2,  # b.png waits in the slot when a.png's 429 comes
        CLOSESPIDER_TIMEOUT=60,
    )
    crawler = await crawl(MediaSpider, settings, page=cdns["page"].url("/"), cdn_urls={"ok": urls})
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    [item] = Items.items
    assert sorted(f["url"] for f in item["files"]) == sorted(urls)  # both stored in the end
    [answered] = [h for h in cdn.hits() if h.status == 429]
    later = [h.time - answered.time for h in cdn.hits() if h.time > answered.time]
    assert len(later) == 2 and min(later) >= 1.0  # b.png and a.png's retry, after the cool-down
    assert crawler.stats.get_value("robotstxt/waited_in_place") >= 1
    ledger(crawler)
