"""Evidence records written by real crawls (``RERP_EVIDENCE``), checked against what the local
servers received and against the records' JSON Schema."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapy_rerp.core.evidence import read_records
from tests.support.crawls import FAST_OUTAGE, rerp, stat
from tests.support.evidence import SCHEMA, of_kind, records
from tests.support.servers import ListSpider, Reply, Server, crawl, stopped_by_settings

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

ROBOTS = "User-agent: *\nDisallow: /private\n"


def verdicts(found: list[dict[str, Any]]) -> dict[str, str]:
    return {record["url"]: record["verdict"] for record in of_kind(found, "decision")}


@pytest_twisted.ensureDeferred
async def test_a_crawl_records_its_robots_txt_and_every_decision(
    server: Server, tmp_path: Path
) -> None:
    server.robots(ROBOTS, headers={"ETag": '"v1"', "Set-Cookie": "session=server-secret"})
    evidence = tmp_path / "evidence-%(name)s.jsonl"
    urls = [server.url("/a"), server.url("/b"), server.url("/private/x")]
    crawler = await crawl(settings=rerp(RERP_EVIDENCE=str(evidence)), urls=urls)
    found = records(tmp_path / "evidence-list.jsonl")
    [robots] = of_kind(found, "robots")
    assert robots["origin"] == server.origin
    assert robots["url"] == server.url("/robots.txt")
    assert (robots["status"], robots["outcome"], robots["source"]) == (200, "parsed", "download")
    assert robots["body"] == ROBOTS
    assert robots["matched"] == ["*"]  # the crawler is matched by the * group
    assert robots["headers"]["ETag"] == '"v1"'
    assert "Set-Cookie" not in robots["headers"]
    # Each page the server answered is recorded downloaded, the refused one refused.
    answered = {server.url(hit.path) for hit in server.hits() if hit.path != "/robots.txt"}
    assert answered == {server.url("/a"), server.url("/b")}
    assert verdicts(found) == {
        server.url("/a"): "downloaded",
        server.url("/b"): "downloaded",
        server.url("/private/x"): "refused",
    }
    decisions = {record["url"]: record for record in of_kind(found, "decision")}
    refused = decisions[server.url("/private/x")]
    assert (refused["line"], refused["rule"], refused["group"]) == (2, "Disallow: /private", "*")
    # A page no rule decided names no line, rule or group.
    allowed = decisions[server.url("/a")]
    assert (allowed["line"], allowed["rule"], allowed["group"]) == (None, None, None)
    assert all(d["robots_sha256"] == robots["sha256"] for d in decisions.values())
    assert stat(crawler, "robotstxt/evidence/robots") == 1
    assert stat(crawler, "robotstxt/evidence/decision/downloaded") == 2
    assert stat(crawler, "robotstxt/evidence/decision/refused") == 1


@pytest_twisted.ensureDeferred
async def test_a_request_dropped_while_robots_txt_is_unreachable_is_recorded_with_why(
    server: Server, tmp_path: Path
) -> None:
    server.route("/robots.txt", Reply(status=503))
    evidence = tmp_path / "evidence.jsonl"
    await crawl(settings=rerp(RERP_EVIDENCE=str(evidence), **FAST_OUTAGE), urls=[server.url("/a")])
    found = records(evidence)
    [decision] = of_kind(found, "decision")
    assert decision["verdict"] == "dropped"
    assert "unreachable" in decision["reason"]
    assert [hit.path for hit in server.hits()] == ["/robots.txt"] * server.count("/robots.txt")


class SecretSpider(ListSpider):
    """Sends what must never reach the evidence: cookies, credentials in headers and URL."""

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(
                url,
                headers={
                    "Authorization": "Basic c2VjcmV0LWF1dGg=",
                    "Proxy-Authorization": "Basic cHJveHktc2VjcmV0",
                    "Cookie": "token=cookie-secret",
                },
                callback=self.parse,
                errback=self.errback,
                dont_filter=True,
            )


@pytest_twisted.ensureDeferred
async def test_nothing_secret_is_written(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS, headers={"Set-Cookie": "session=server-secret"})
    server.route("/a", Reply(body="ok", headers={"Set-Cookie": "page=server-secret"}))
    evidence = tmp_path / "evidence.jsonl"
    # A URL's user:password@ (Scrapy cannot download one: the download fails, and is
    # recorded so), and secrets in the request's headers.
    urls = [
        server.url("/a"),
        server.url("/private/x"),
        f"http://user:url-secret@{server.netloc}/c",
    ]
    crawler = await crawl(SecretSpider, settings=rerp(RERP_EVIDENCE=str(evidence)), urls=urls)
    # The secrets reached the server: the evidence had them at hand, and left them out.
    [page] = server.hits("/a")
    assert page.header("Authorization") == "Basic c2VjcmV0LWF1dGg="
    assert "cookie-secret" in (page.header("Cookie") or "")
    written = evidence.read_text()
    assert sorted(verdicts(records(evidence)).values()) == ["downloaded", "failed", "refused"]
    for secret in ("c2VjcmV0", "cHJveHkt", "cookie-secret", "server-secret", "url-secret"):
        assert secret not in written
    # A download that failed is a decision, not a failure of the evidence's storage.
    assert stat(crawler, "robotstxt/evidence/decision/failed") == 1
    assert stat(crawler, "robotstxt/evidence/failed") is None


class MediaSpider(scrapy.Spider):
    """One page, whose parse yields one item naming ``cdn_urls`` for FilesPipeline."""

    name = "media"

    def __init__(self, page: str = "", cdn_urls: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.page = page
        self.cdn_urls = cdn_urls or {}

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.page)

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        for kind, urls in self.cdn_urls.items():
            yield {"kind": kind, "file_urls": urls}


def with_items(evidence: Path, items: Path) -> dict[str, Any]:
    """The Addon, evidence with each item's provenance, and the items in a JSON-lines feed."""
    return {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "RERP_EVIDENCE": str(evidence),
        "RERP_EVIDENCE_ITEM_FIELD": "rerp_provenance",
        "FEEDS": {str(items): {"format": "jsonlines"}},
    }


class ItemSpider(ListSpider):
    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url}


@pytest_twisted.ensureDeferred
async def test_items_carry_their_provenance(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    evidence, items = tmp_path / "evidence.jsonl", tmp_path / "items.jsonl"
    settings = with_items(evidence, items)
    await crawl(ItemSpider, settings=settings, urls=[server.url("/a"), server.url("/private/b")])
    [robots] = of_kind(records(evidence), "robots")
    [item] = [json.loads(line) for line in items.read_text().splitlines()]
    provenance = item["rerp_provenance"]
    assert item["url"] == server.url("/a")
    assert provenance["robots_sha256"] == robots["sha256"]
    assert provenance["robots_fetched_at"] == robots["fetched_at"]
    import jsonschema

    jsonschema.validate(provenance, {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/item_provenance"})


@pytest_twisted.ensureDeferred
async def test_a_stored_copy_is_recorded_by_its_hash(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    store = tmp_path / "robots.sqlite"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    urls = [server.url("/a")]
    await crawl(settings=rerp(RERP_STORE=str(store), RERP_EVIDENCE=str(first)), urls=urls)
    await crawl(settings=rerp(RERP_STORE=str(store), RERP_EVIDENCE=str(second)), urls=urls)
    assert server.count("/robots.txt") == 1
    [downloaded] = of_kind(records(first), "robots")
    [recalled] = of_kind(records(second), "robots")
    assert (recalled["source"], recalled["body"]) == ("store", None)
    assert recalled["sha256"] == downloaded["sha256"]
    [decision] = of_kind(records(second), "decision")
    assert decision["robots_sha256"] == downloaded["sha256"]


@pytest_twisted.ensureDeferred
async def test_records_are_written_in_batches(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    urls = [server.url(f"/{n}") for n in range(5)]
    settings = rerp(
        RERP_EVIDENCE=str(tmp_path / "evidence-%(batch_id)d.jsonl"),
        RERP_EVIDENCE_BATCH_SIZE=2,
    )
    await crawl(settings=settings, urls=urls)
    files = sorted(tmp_path.glob("evidence-*.jsonl"))
    assert [f.name for f in files] == [f"evidence-{n}.jsonl" for n in (1, 2, 3)]
    found = records(*files)
    assert len(of_kind(found, "robots")) == 1
    assert sorted(verdicts(found)) == sorted(urls)


@pytest_twisted.ensureDeferred
async def test_evidence_that_cannot_be_written_stops_the_crawl(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(ROBOTS)
    (tmp_path / "taken").write_text("a file where the evidence's folder should be")
    evidence = tmp_path / "taken" / "evidence.jsonl"
    urls = [server.url(f"/{n}") for n in range(3)]
    crawler = await crawl(settings=rerp(RERP_EVIDENCE=str(evidence)), urls=urls)
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "rerp_evidence_failed"
    assert stat(crawler, "robotstxt/evidence/failed") >= 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("cannot open" in e and "the crawl stops" in e for e in errors), errors


@pytest_twisted.ensureDeferred
async def test_evidence_that_cannot_be_written_is_counted_when_the_crawl_goes_on(
    server: Server, tmp_path: Path
) -> None:
    server.robots(ROBOTS)
    (tmp_path / "taken").write_text("a file where the evidence's folder should be")
    evidence = tmp_path / "taken" / "evidence.jsonl"
    urls = [server.url(f"/{n}") for n in range(3)]
    settings = rerp(RERP_EVIDENCE=str(evidence), RERP_EVIDENCE_ON_FAILURE="continue")
    crawler = await crawl(settings=settings, urls=urls)
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert sorted(hit.path for hit in server.hits() if hit.path != "/robots.txt") == [
        "/0",
        "/1",
        "/2",
    ]
    assert stat(crawler, "robotstxt/evidence/failed") == 1
    assert stat(crawler, "robotstxt/evidence/lost") == 4  # one robots.txt, three pages
    # Lost, and only that: no record is counted as written.
    assert stat(crawler, "robotstxt/evidence/robots") is None
    assert stat(crawler, "robotstxt/evidence/decision/downloaded") is None


@pytest_twisted.ensureDeferred
async def test_a_device_that_takes_no_write_stops_the_crawl_before_any_page(
    server: Server, tmp_path: Path
) -> None:
    from tests.support.pages import FollowSpider, addon, exported, feed

    server.robots(ROBOTS)
    for n in range(20):
        server.route(f"/{n}", Reply(body="ok"))
    # /dev/full opens, and refuses every write, root's too: robots.txt's record first.
    settings = addon(**feed(tmp_path, RERP_EVIDENCE="/dev/full", CONCURRENT_REQUESTS=4))
    crawler = await crawl(
        FollowSpider, settings=settings, urls=[server.url(f"/{n}") for n in range(20)]
    )
    assert stat(crawler, "finish_reason") == "rerp_evidence_failed"
    assert [hit.path for hit in server.hits()] == ["/robots.txt"]
    assert exported(tmp_path) == [] and stat(crawler, "item_scraped_count") is None
    # The requests waiting for robots.txt then: stopped before their download, or dropped by
    # the parking lot as the crawl closed (as the reactor's timing falls); no answer came.
    assert stat(crawler, "robotstxt/evidence/stopped/response") is None
    # Nothing was written, and no count says otherwise.
    assert {
        k: v
        for k, v in crawler.stats.get_stats().items()  # type: ignore[union-attr]
        if k.startswith("robotstxt/evidence/") and not k.startswith("robotstxt/evidence/stopped/")
    } == {"robotstxt/evidence/failed": 1, "robotstxt/evidence/lost": 1}


async def crawl_a_filling_disk(server: Server, where: Path, room: int) -> Crawler:
    """A crawl of 30 pages whose evidence has ``room`` bytes: a few pages' records fit."""
    from tests.support.pages import FollowSpider, addon, feed

    where.mkdir()
    settings = addon(
        **feed(where),
        FEED_STORAGES={"full": "tests.support.storages.FullDiskFeedStorage"},
        RERP_EVIDENCE=f"full://{where / 'evidence.jsonl'}?room={room}",
        CONCURRENT_REQUESTS=4,
    )
    return await crawl(
        FollowSpider, settings=settings, urls=[server.url(f"/{n}") for n in range(30)]
    )


@pytest.mark.parametrize("failing", ["decision", "page"])
@pytest_twisted.ensureDeferred
async def test_a_disk_that_fills_hands_the_spider_no_page_without_its_records(
    server: Server, tmp_path: Path, failing: str
) -> None:
    # The decision record is written as the answer comes (the downloader middleware), the page
    # record as it reaches the spider (the spider middleware): the disk fills in one or the
    # other, as the records' sizes and order fall; a few sizes are tried until it is `failing`.
    from tests.support.pages import exported

    server.robots(ROBOTS)
    for n in range(30):  # each page says something of itself: a decision and a page record
        server.route(f"/{n}", Reply(body="ok", headers={"X-Robots-Tag": "noarchive"}, delay=0.02))
    for attempt, room in enumerate(range(3000, 6000, 97)):
        server.clear()
        where = tmp_path / str(attempt)
        crawler = await crawl_a_filling_disk(server, where, room)
        evidence = (where / "evidence.jsonl").read_bytes()
        read = read_records(evidence.splitlines(keepends=True))
        assert read.cut_at_line is not None  # the record the disk filled in
        if evidence.splitlines()[read.cut_at_line - 1].startswith(
            b'{"v":1,"kind":"%s"' % failing.encode()
        ):
            break
    else:
        pytest.fail(f"no crawl filled its disk in a {failing} record")
    assert stat(crawler, "finish_reason") == "rerp_evidence_failed"
    downloaded = {r["url"] for r in read.records if r.get("verdict") == "downloaded"}
    paged = {r["url"] for r in read.records if r["kind"] == "page"}
    scraped = [item["url"] for item in exported(where)]
    assert scraped and len(scraped) < 30
    # Every page the spider got has both its records written; none went on without.
    assert set(scraped) <= downloaded & paged
    assert stat(crawler, "item_scraped_count") == len(scraped)
    # Counted as what happened, once: written, or lost.
    assert stat(crawler, "robotstxt/evidence/robots") == 1
    assert stat(crawler, "robotstxt/evidence/decision/downloaded") == len(downloaded)
    assert stat(crawler, "robotstxt/evidence/page") == len(paged)
    assert stat(crawler, "robotstxt/evidence/failed") == 1
    assert stat(crawler, "robotstxt/evidence/lost") >= 1
    # What the site sent after the failure: counted, never handed to the spider.
    received = [hit.path for hit in server.hits() if hit.path != "/robots.txt"]
    stopped = stat(crawler, "robotstxt/evidence/stopped/response")
    assert len(received) == len(scraped) + stopped
    assert len(received) <= len(downloaded) + 4  # those in flight at the failure, no more


@pytest.mark.parametrize(
    ("settings", "setting"),
    [
        ({"RERP_EVIDENCE": "nosuchscheme://bucket/evidence.jsonl"}, "RERP_EVIDENCE"),
        (
            {"RERP_EVIDENCE": "evidence.jsonl", "RERP_EVIDENCE_BATCH_SIZE": 10},
            "RERP_EVIDENCE",
        ),
        ({"RERP_EVIDENCE_ITEM_FIELD": "provenance"}, "RERP_EVIDENCE"),
        ({"RERP_EVIDENCE": "e.jsonl", "RERP_EVIDENCE_ON_FAILURE": "maybe"}, "RERP_EVIDENCE"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_bad_evidence_setting_stops_the_crawl_before_it_starts(
    server: Server,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    settings: dict[str, Any],
    setting: str,
) -> None:
    server.robots(ROBOTS)
    crawler = await crawl(settings=rerp(**settings), urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, setting)
    assert server.hits() == []


@pytest_twisted.ensureDeferred
async def test_a_media_pipeline_s_downloads_are_recorded(tmp_path: Path) -> None:
    # FilesPipeline downloads outside the scheduler (engine.download_async): its requests wait
    # for robots.txt in place, and are decided, and recorded, like the others.
    page = Server(host="127.0.0.7").start()
    late = Server(host="127.0.0.8").start()
    down = Server(host="127.0.0.9").start()
    try:
        for cdn in (late, down):
            for path in ("/media/a.png", "/private/c.png"):
                cdn.route(path, Reply(body=b"\x89PNG", content_type="image/png"))
        late.robots(ROBOTS, delay=1.0)
        down.robots(ROBOTS, status=503)
        evidence = tmp_path / "evidence.jsonl"
        cdn_urls = {
            "late": [late.url("/media/a.png"), late.url("/private/c.png")],
            "down": [down.url("/media/a.png"), down.url("/private/c.png")],
        }
        settings = rerp(
            RERP_EVIDENCE=str(evidence),
            ITEM_PIPELINES={"scrapy.pipelines.files.FilesPipeline": 1},
            FILES_STORE=str(tmp_path / "files"),
            **FAST_OUTAGE,
        )
        await crawl(MediaSpider, settings, page=page.url("/"), cdn_urls=cdn_urls)
        found = records(evidence)
        assert verdicts(found) == {
            page.url("/"): "downloaded",
            late.url("/media/a.png"): "downloaded",
            late.url("/private/c.png"): "refused",
            down.url("/media/a.png"): "dropped",
            down.url("/private/c.png"): "dropped",
        }
        # What the servers received, and nothing else, is recorded downloaded.
        assert sorted(late.paths()) == ["/media/a.png", "/robots.txt"]
        assert set(down.paths()) == {"/robots.txt"}
        assert {r["origin"] for r in of_kind(found, "robots")} == {page.origin, late.origin}
    finally:
        for server in (page, late, down):
            server.stop()


@pytest.mark.scrapy
def test_a_crawl_killed_mid_write_leaves_its_whole_records_readable(
    server: Server, tmp_path: Path
) -> None:
    import signal
    import time as clock

    from tests.support.redis import start_worker

    server.robots(ROBOTS)
    for n in range(40):
        server.route(f"/{n}", Reply(body="ok", delay=0.05 * n))  # answers spread over seconds
    evidence = tmp_path / "evidence.jsonl"
    worker = start_worker(
        {
            "urls": [server.url(f"/{n}") for n in range(40)],
            "settings": {"RERP_EVIDENCE": str(evidence)},
        }
    )
    try:
        deadline = clock.monotonic() + 60
        while clock.monotonic() < deadline:  # records flushed one by one: seen as they come
            if evidence.exists() and evidence.read_bytes().count(b'"kind":"decision"') >= 5:
                break
            clock.sleep(0.02)
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.communicate(timeout=10)
    with evidence.open("rb") as file:
        read = read_records(file)
    lines = evidence.read_bytes().splitlines()
    # Every whole line is a record; at most the last was cut, and said to be.
    assert read.cut_at_line in (None, len(lines))
    assert len(read.records) >= 6 and len(read.records) >= len(lines) - 1
    assert of_kind(read.records, "robots") and len(of_kind(read.records, "decision")) >= 5
    assert server.count("/39") == 0  # killed before the end


@pytest_twisted.ensureDeferred
async def test_the_evidence_as_warc_holds_the_same_records(server: Server, tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    server.robots(ROBOTS, headers={"ETag": '"v1"', "Set-Cookie": "session=server-secret"})
    jsonl, warc = tmp_path / "evidence.jsonl", tmp_path / "evidence.warc.gz"
    urls = [server.url("/a"), server.url("/private/x")]
    settings = rerp(RERP_EVIDENCE=str(jsonl), RERP_EVIDENCE_WARC=str(warc))
    await crawl(settings=settings, urls=urls)
    with warc.open("rb") as file:
        found = [
            (
                record.rec_type,
                record.rec_headers.get_header("WARC-Target-URI"),
                record.http_headers.statusline if record.http_headers else None,
                record.content_stream().read(),
            )
            for record in ArchiveIterator(file)
        ]
    assert [kind for kind, *_ in found] == [
        "warcinfo",
        "response",
        "metadata",
        "metadata",
        "metadata",
    ]
    _, target, status, body = found[1]
    assert (target, status, body) == (server.url("/robots.txt"), "200 OK", ROBOTS.encode())
    decisions = [json.loads(content) for kind, _, _, content in found[3:]]
    assert decisions == of_kind(records(jsonl), "decision")  # the same records as the JSON lines
    assert b"server-secret" not in warc.read_bytes()


@pytest_twisted.ensureDeferred
async def test_audit_answers_agree_with_what_the_server_received(
    server: Server, tmp_path: Path
) -> None:
    from tests.support.cli import run_json

    server.robots(ROBOTS)
    evidence, items = tmp_path / "evidence.jsonl", tmp_path / "items.jsonl"
    settings = with_items(evidence, items)
    urls = [server.url("/a"), server.url("/b"), server.url("/private/x")]
    await crawl(ItemSpider, settings=settings, urls=urls)
    received = {server.url(h.path) for h in server.hits() if h.path != "/robots.txt"}
    for url in urls:
        status, document = run_json("audit", str(evidence), url)
        # What audit says of each URL is what the server saw: fetched if and only if allowed.
        assert (status == 0) == (url in received), document
        assert [r["verdict"] for r in document["records"]] == [
            "downloaded" if url in received else "refused"
        ]
    status, document = run_json("audit", "verify", str(evidence), str(items))
    assert (status, document["items"], document["listed"]) == (0, 2, [])
    # An item planted for the page robots.txt refused is found.
    with items.open("a") as file:
        file.write(json.dumps({"url": server.url("/private/x")}) + "\n")
    status, document = run_json("audit", "verify", str(evidence), str(items))
    assert status == 1
    [planted] = document["listed"]
    assert (planted["url"], planted["rule"], planted["group"]) == (
        server.url("/private/x"),
        "Disallow: /private",
        "*",
    )


STORAGES = {
    "copy": "tests.support.storages.CopyingFeedStorage",
    "refuse": "tests.support.storages.RefusingFeedStorage",
}


@pytest_twisted.ensureDeferred
async def test_a_remote_storage_gets_its_file_when_the_crawl_ends(
    server: Server, tmp_path: Path
) -> None:
    # A block storage (as S3, GCS, FTP): a temporary file, uploaded when stored; and a
    # file:// URI with the crawl's time in its name.
    server.robots(ROBOTS)
    uploaded = tmp_path / "bucket" / "evidence-list.jsonl"
    settings = rerp(
        FEED_STORAGES=STORAGES,
        RERP_EVIDENCE=f"copy://{tmp_path}/bucket/evidence-%(name)s.jsonl",
        RERP_EVIDENCE_WARC=f"file://{tmp_path}/local/evidence-%(time)s.warc.gz",
    )
    await crawl(settings=settings, urls=[server.url("/a"), server.url("/private/x")])
    assert verdicts(records(uploaded)) == {
        server.url("/a"): "downloaded",
        server.url("/private/x"): "refused",
    }
    [warc] = (tmp_path / "local").glob("evidence-20*.warc.gz")
    assert warc.stat().st_size > 0


@pytest_twisted.ensureDeferred
async def test_an_upload_refused_is_an_error_and_counted(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(ROBOTS)
    for n in range(6):  # the crawl lasts seconds: the first upload fails well before its end
        server.route(f"/{n}", Reply(body="ok", delay=0.5 * n))
    settings = rerp(
        FEED_STORAGES=STORAGES,
        RERP_EVIDENCE=f"refuse://{tmp_path}/evidence-%(batch_id)d.jsonl",
        RERP_EVIDENCE_BATCH_SIZE=2,
    )
    urls = [server.url(f"/{n}") for n in range(6)]
    crawler = await crawl(settings=settings, urls=urls)
    assert crawler.stats is not None
    # The first batch's upload fails while the crawl runs: it stops (the default).
    assert crawler.stats.get_value("finish_reason") == "rerp_evidence_failed"
    assert stat(crawler, "robotstxt/evidence/failed") >= 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("cannot store" in e and "AccessDenied" in e for e in errors), errors


#: A site whose pages speak of themselves: robots meta and X-Robots-Tag directives, TDMRep by
#: its tdmrep.json and by a header; /plain says nothing. /header's link is nofollow.
TDMREP = "/.well-known/tdmrep.json"
TDMREP_FILE = (
    '[{"location": "/reserved/*", "tdm-reservation": 1, "tdm-policy": "https://example.com/p"}]'
)
PAGE_PATHS = ["/noai", "/header", "/reserved/a", "/tdm-header", "/plain"]


def speaking_site(server: Server) -> None:
    from tests.support.pages import links, page, robots_meta

    server.robots(ROBOTS)
    server.route(TDMREP, Reply(body=TDMREP_FILE, content_type="application/json"))
    server.route("/noai", page(robots_meta("robots", "noai"), "text"))
    server.route("/header", page(body=links("/followed"), headers={"X-Robots-Tag": "nofollow"}))
    server.route("/followed", page(body="text"))
    server.route("/reserved/a", page(body="text"))
    server.route("/tdm-header", page(body="text", headers={"tdm-reservation": "1"}))
    server.route("/plain", page(body="text"))


async def crawl_speaking_site(server: Server, tmp_path: Path, **settings: Any) -> list[Any]:
    from tests.support.pages import FollowSpider, addon

    speaking_site(server)
    evidence, items = tmp_path / "evidence.jsonl", tmp_path / "items.jsonl"
    settings = addon(
        RERP_USAGE="train-ai",
        RERP_EVIDENCE=str(evidence),
        FEEDS={str(items): {"format": "jsonlines"}},
        **settings,
    )
    await crawl(FollowSpider, settings=settings, urls=[server.url(p) for p in PAGE_PATHS])
    return records(evidence)


@pytest_twisted.ensureDeferred
async def test_what_a_page_says_of_itself_is_recorded_with_what_it_did(
    server: Server, tmp_path: Path
) -> None:
    import hashlib

    from tests.support.cli import run_json

    found = await crawl_speaking_site(server, tmp_path)
    # The origin's tdmrep.json, recorded once with its body and hash.
    [tdmrep] = of_kind(found, "tdmrep")
    assert (tdmrep["url"], tdmrep["status"], tdmrep["source"]) == (
        server.url(TDMREP),
        200,
        "download",
    )
    assert tdmrep["body"] == TDMREP_FILE
    assert tdmrep["sha256"] == hashlib.sha256(TDMREP_FILE.encode()).hexdigest()
    assert tdmrep["syntax"] is None and tdmrep["agent"] is None
    decisions = {d["url"]: d for d in of_kind(found, "decision")}
    assert {d["tdmrep_sha256"] for d in decisions.values()} == {tdmrep["sha256"]}
    # A page's downloaded decision keeps its X-Robots-Tag values as sent, and only its own.
    assert decisions[server.url("/header")]["page_directives"] == ["nofollow"]
    assert decisions[server.url("/plain")]["page_directives"] == []
    # A page record for each page that said something; /plain and /followed said nothing.
    pages = {record["url"]: record for record in of_kind(found, "page")}
    assert sorted(pages) == sorted(server.url(p) for p in PAGE_PATHS if p != "/plain")
    noai = pages[server.url("/noai")]
    assert noai["directives"] == [{"source": "meta tag 1 (robots)", "text": "noai"}]
    [refusal] = noai["refused"]
    assert (refusal["purpose"], refusal["rule"], refusal["images_only"]) == (
        "train-ai",
        "noai",
        False,
    )
    assert (noai["items"], noai["nofollow"], noai["tdmrep"]) == ("dropped", False, None)
    header = pages[server.url("/header")]
    assert (header["refused"], header["items"], header["nofollow"]) == ([], None, True)
    assert server.count("/followed") == 0  # the nofollow the record says was obeyed
    reserved = pages[server.url("/reserved/a")]
    assert reserved["tdmrep"] == {
        "technique": "tdmrep.json",
        "reservation": 1,
        "policy": "https://example.com/p",
        "source": reserved["tdmrep"]["source"],
    }
    assert reserved["tdmrep_sha256"] == tdmrep["sha256"]
    assert [r["rule"] for r in reserved["refused"]] == ["tdm-reservation"]
    by_header = pages[server.url("/tdm-header")]
    assert by_header["tdmrep"]["technique"] == "header"
    assert by_header["items"] == "dropped"
    # The items feed holds what the records say was kept: /plain's and /header's.
    items = tmp_path / "items.jsonl"
    kept = sorted(json.loads(line)["url"] for line in items.read_text().splitlines())
    assert kept == sorted([server.url("/header"), server.url("/plain")])
    # audit reads the page records: a page refusing the purpose is not allowed for it.
    evidence = str(tmp_path / "evidence.jsonl")
    status, document = run_json("audit", evidence, server.url("/noai"), "--purpose", "train-ai")
    assert status == 1 and document["page_refused"]["rule"] == "noai"
    status, document = run_json("audit", evidence, server.url("/plain"), "--purpose", "train-ai")
    assert (status, document["page"]) == (0, None)
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    assert (status, document["listed"]) == (0, [])
    # An item planted for a page that refused train-ai is found, with the page's statement.
    with items.open("a") as file:
        file.write(json.dumps({"url": server.url("/reserved/a")}) + "\n")
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    [planted] = document["listed"]
    assert status == 1
    assert (planted["problem"], planted["url"]) == (
        "train-ai refused by the page",
        server.url("/reserved/a"),
    )


@pytest_twisted.ensureDeferred
async def test_items_kept_marked_are_recorded_so_and_pass_verify(
    server: Server, tmp_path: Path
) -> None:
    from warcio.archiveiterator import ArchiveIterator

    from tests.support.cli import run_json

    warc = tmp_path / "evidence.warc.gz"
    found = await crawl_speaking_site(
        server, tmp_path, RERP_USAGE_DROP=False, RERP_EVIDENCE_WARC=str(warc)
    )
    pages = {record["url"]: record for record in of_kind(found, "page")}
    assert pages[server.url("/noai")]["items"] == "marked"
    # The WARC holds the tdmrep.json's response, and the page records as the JSON lines do.
    with warc.open("rb") as file:
        written = [
            (
                record.rec_type,
                record.rec_headers.get_header("WARC-Target-URI"),
                record.raw_stream.read(),
            )
            for record in ArchiveIterator(file)
        ]
    assert ("response", server.url(TDMREP), TDMREP_FILE.encode()) in written
    in_warc = [json.loads(body) for kind, _, body in written if kind == "metadata"]
    assert of_kind(in_warc, "page") == of_kind(found, "page")
    evidence, items = str(tmp_path / "evidence.jsonl"), tmp_path / "items.jsonl"
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    assert (status, document["items"], document["listed"]) == (0, 5, [])
    # The same item without its mark is not what the crawl kept.
    with items.open("a") as file:
        file.write(json.dumps({"url": server.url("/noai")}) + "\n")
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    assert status == 1
    assert [entry["url"] for entry in document["listed"]] == [server.url("/noai")]
