"""The robots.txt store (``RERP_STORE``) in real crawls: a second crawl against the same local
server, and what the server received."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from scrapy_rerp.core.data import Outcome
from scrapy_rerp.core.store import RobotsStore, StoredCopy
from tests.support.crawls import FAST_OUTAGE, ignored, not_modified_for, pages, rerp, stat
from tests.support.redis import finish, start_worker
from tests.support.servers import Hit, Reply, Server, crawl, own, stopped_by_settings

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

ROBOTS = "User-agent: *\nDisallow: /private\n"


def stored(path: Path, **settings: Any) -> dict[str, Any]:
    return rerp(RERP_STORE=str(path), **settings)


def age(path: Path, origin: str, seconds: float) -> None:
    """Make the stored copy of ``origin`` ``seconds`` old and expired, as a past run left it."""
    with RobotsStore(path) as store:
        copy = store.get(origin)
        assert copy is not None
        then = time.time() - seconds
        store.forget(origin)
        assert store.put(origin, replace(copy, fetched_at=then, expires_at=then + 1))


@pytest_twisted.ensureDeferred
async def test_a_second_crawl_uses_the_fresh_stored_copy(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    urls = [server.url("/a"), server.url("/private/b")]
    first = await crawl(settings=stored(path), urls=urls)
    assert stat(first, "robotstxt/store/stored") == 1
    with RobotsStore(path) as store:
        copy = store.get(server.origin)
        assert copy is not None
        assert copy.outcome == Outcome.PARSED
        assert copy.body == ROBOTS.encode()
        assert copy.status == 200
    server.clear()
    second = await crawl(settings=stored(path), urls=urls)
    assert server.count("/robots.txt") == 0  # no download
    assert pages(server) == ["/a"]  # the stored rules obeyed
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/store/reused") == 1
    assert stat(second, "robotstxt/request_count") is None


@pytest_twisted.ensureDeferred
async def test_the_command_line_reads_the_store_a_crawl_wrote(
    server: Server, tmp_path: Path
) -> None:
    # The crawl and the command line name an origin alike: what one writes, the other finds.
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    server.clear()
    command = [sys.executable, "-m", "scrapy_rerp"]
    shown = subprocess.run(
        [*command, "store", str(path), server.url("/any/page")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == ROBOTS
    fetched = subprocess.run(
        [*command, "fetch", server.url("/robots.txt"), "--store", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert fetched.returncode == 0, fetched.stderr
    assert json.loads(fetched.stdout)["store"]["used"] is True
    assert server.count("/robots.txt") == 0  # answered from the store


@pytest_twisted.ensureDeferred
async def test_an_expired_copy_is_refetched_and_replaced(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    age(path, server.origin, 60)
    server.robots("User-agent: *\nDisallow: /a\n")
    server.clear()
    second = await crawl(settings=stored(path), urls=[server.url("/a"), server.url("/private")])
    assert server.count("/robots.txt") == 1
    assert pages(server) == ["/private"]  # the new rules, not the stored ones
    assert stat(second, "robotstxt/store/replaced") == 1
    with RobotsStore(path) as store:
        copy = store.get(server.origin)
        assert copy is not None
        assert copy.body == b"User-agent: *\nDisallow: /a\n"


@pytest_twisted.ensureDeferred
async def test_an_expired_copy_is_revalidated_and_a_304_keeps_it(
    server: Server, tmp_path: Path
) -> None:
    server.robots(
        ROBOTS, headers={"ETag": '"v1"', "Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT"}
    )
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    age(path, server.origin, 60)

    server.route("/robots.txt", not_modified_for('"v1"', {"Cache-Control": "max-age=7200"}))
    server.clear()
    urls = [server.url("/a"), server.url("/private/b")]
    second = await crawl(settings=stored(path), urls=urls)
    [hit] = server.hits("/robots.txt")
    assert hit.header("If-None-Match") == '"v1"'
    assert hit.header("If-Modified-Since") == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert hit.status == 304
    assert pages(server) == ["/a"]  # the stored rules kept
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/store/revalidated") == 1
    with RobotsStore(path) as store:
        copy = store.get(server.origin)
        assert copy is not None
        assert copy.body == ROBOTS.encode()
        assert copy.cache_control == b"max-age=7200"
        assert copy.expires_at > time.time() + 3600


@pytest_twisted.ensureDeferred
async def test_an_outage_is_crawled_under_the_stored_copy(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    age(path, server.origin, 3600)
    server.robots("", status=503)
    server.clear()
    urls = [server.url("/a"), server.url("/private/b")]
    with caplog.at_level(logging.INFO):
        second = await crawl(settings=stored(path, **FAST_OUTAGE), urls=urls)
    assert pages(server) == ["/a"]  # disallowed still refused
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/store/stale_used") == 1
    warnings = [r.getMessage() for r in own(caplog.records) if r.levelname == "WARNING"]
    assert len([w for w in warnings if "copy stored" in w]) == 1, warnings


@pytest_twisted.ensureDeferred
async def test_a_copy_past_the_stale_max_age_is_not_used(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    age(path, server.origin, 3600)
    server.robots("", status=503)
    server.clear()
    second = await crawl(
        settings=stored(path, RERP_STALE_MAX_AGE=60, **FAST_OUTAGE), urls=[server.url("/a")]
    )
    assert pages(server) == []  # parked, then dropped, as without a store
    assert stat(second, "robotstxt/dropped/unreachable") == 1
    assert stat(second, "robotstxt/store/stale_used") is None


def truncated_store(path: Path, origin: str) -> None:
    """A store that held a fresh copy of ``origin`` allowing everything, cut to half its
    length: nothing in it may be read."""
    now = time.time()
    with RobotsStore(path) as store:
        for i in range(200):  # pages enough that half the file is most of its rows
            body = f"User-agent: *\nAllow: /\n# {i} {'x' * 200}\n".encode()
            copy = StoredCopy(
                url=f"{origin}/robots.txt",
                status=200,
                outcome=Outcome.PARSED,
                fetched_at=now,
                expires_at=now + 3600,
                body=body,
            )
            assert store.put(origin if i == 0 else f"http://site-{i}.example", copy)
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("kind", ["directory", "garbage", "truncated"])
@pytest_twisted.ensureDeferred
async def test_an_unusable_store_is_one_warning_and_the_crawl_goes_on(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    if kind == "directory":
        path.mkdir()
    elif kind == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    else:
        truncated_store(path, server.origin)
    urls = [server.url("/a"), server.url("/private/b")]
    with caplog.at_level(logging.INFO):
        crawler = await crawl(settings=stored(path), urls=urls)
    assert pages(server) == ["/a"]
    assert server.count("/robots.txt") == 1
    assert ignored(crawler) == [server.url("/private/b")]
    warnings = [r.getMessage() for r in own(caplog.records) if r.levelname == "WARNING"]
    assert len(warnings) == 1, warnings
    assert stat(crawler, "robotstxt/store/unavailable") == 1


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("RERP_STORE", 42),
        ("RERP_STORE_MAX_ORIGINS", 0),
        ("RERP_STORE_MAX_ORIGINS", "many"),
        ("RERP_STALE_MAX_AGE", -1),
    ],
)
@pytest_twisted.ensureDeferred
async def test_bad_store_settings_stop_the_crawl(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, setting: str, value: Any
) -> None:
    server.robots(ROBOTS)
    settings = {"RERP_STORE": str(tmp_path / "robots.sqlite"), setting: value}
    with caplog.at_level(logging.INFO):
        crawler = await crawl(settings=rerp(**settings), urls=[server.url("/a")])
    stopped_by_settings(crawler, caplog.records, setting)
    assert server.paths() == []


@pytest_twisted.ensureDeferred
async def test_a_4xx_replaces_the_stored_copy_with_allow_all(
    server: Server, tmp_path: Path
) -> None:
    server.robots(ROBOTS)
    path = tmp_path / "robots.sqlite"
    await crawl(settings=stored(path), urls=[server.url("/a")])
    age(path, server.origin, 60)
    server.robots("", status=404)
    server.clear()
    second = await crawl(settings=stored(path), urls=[server.url("/private/b")])
    assert pages(server) == ["/private/b"]
    assert stat(second, "robotstxt/store/replaced") == 1
    with RobotsStore(path) as store:
        copy = store.get(server.origin)
        assert copy is not None
        assert copy.outcome == Outcome.ALLOW_ALL
        assert copy.status == 404


@pytest_twisted.ensureDeferred
async def test_a_relative_path_is_from_the_current_directory(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As FEEDS (and RERP_EVIDENCE) and as the command line read it: what the crawl writes,
    # `scrapy-rerp store robots.sqlite` run in the same directory finds.
    monkeypatch.chdir(tmp_path)
    server.robots(ROBOTS)
    crawler = await crawl(settings=rerp(RERP_STORE="robots.sqlite"), urls=[server.url("/a")])
    assert stat(crawler, "robotstxt/store/stored") == 1
    assert (tmp_path / "robots.sqlite").is_file()
    assert not (tmp_path / ".scrapy").exists()
    command = [sys.executable, "-m", "scrapy_rerp", "store", "robots.sqlite"]
    listed = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(server.origin)


@pytest_twisted.ensureDeferred
async def test_a_store_where_earlier_versions_kept_it_is_named(
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Earlier versions read a relative RERP_STORE under the data directory (./.scrapy without
    # a scrapy.cfg): that store is named, not used, and a new one made where the path says.
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".scrapy").mkdir()
    earlier = tmp_path / ".scrapy" / "robots.sqlite"
    planted(earlier, server.origin, time.time(), time.time() + 3600)
    server.robots(SECRET)
    with caplog.at_level(logging.INFO):
        crawler = await crawl(
            settings=rerp(RERP_STORE="robots.sqlite"),
            urls=[server.url("/a"), server.url("/secret")],
        )
    assert pages(server) == ["/a"]
    [warning] = warned(caplog)
    assert f"the store at {earlier}, where earlier versions kept it, is not used" in warning
    assert stat(crawler, "robotstxt/store/stored") == 1
    assert (tmp_path / "robots.sqlite").is_file()
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rerp", "store", "other.sqlite"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert f"keeps it at {tmp_path / 'other.sqlite'} when started in this directory" in done.stderr
    (tmp_path / "robots.sqlite").rename(tmp_path / "moved.sqlite")
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rerp", "store", "robots.sqlite"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert f"earlier versions kept it at {earlier}" in done.stderr


@pytest_twisted.ensureDeferred
async def test_a_copy_expired_by_its_max_age_is_revalidated(server: Server, tmp_path: Path) -> None:
    server.robots(ROBOTS, headers={"ETag": '"v2"', "Cache-Control": "max-age=0"})
    path = tmp_path / "robots.sqlite"
    settings = stored(path, RERP_MIN_LIFETIME=0)
    await crawl(settings=settings, urls=[server.url("/a")])

    server.route("/robots.txt", not_modified_for('"v2"'))
    server.clear()
    second = await crawl(settings=settings, urls=[server.url("/private/b")])
    assert [h.status for h in server.hits("/robots.txt")][:1] == [304]
    assert pages(server) == []  # the stored rules, not the server's other file
    assert ignored(second) == [server.url("/private/b")]
    assert stat(second, "robotstxt/store/revalidated") >= 1


def test_two_crawl_processes_share_one_store(
    make_server: Callable[[], Server], tmp_path: Path
) -> None:
    # Two crawls started together, each with origins of its own and one in common, write one
    # store file: neither logs an error, and the store ends with every origin's own copy.
    sites = [make_server() for _ in range(5)]
    for i, site in enumerate(sites):
        site.robots(f"User-agent: *\nDisallow: /private-{i}\n")
    shared, *others = sites
    both_asked = threading.Barrier(2, timeout=60)

    def shared_robots(hit: Hit) -> Reply:
        both_asked.wait()  # answered once both crawls are running: their writes meet
        return Reply(body="User-agent: *\nDisallow: /private-0\n")

    shared.route("/robots.txt", shared_robots)
    path = tmp_path / "robots.sqlite"

    def urls(group: list[Server]) -> list[str]:
        return [
            site.url(page) for site in group for page in ("/a", f"/private-{sites.index(site)}/x")
        ]

    groups = [[others[0], others[1], shared], [others[2], others[3], shared]]
    workers = [
        start_worker({"urls": urls(group), "settings": {"RERP_STORE": str(path)}})
        for group in groups
    ]
    reports = [finish(worker) for worker in workers]
    for group, report in zip(groups, reports, strict=True):
        assert report["finish_reason"] == "finished"
        assert sorted(report["received"]) == sorted(site.url("/a") for site in group)
        assert " ERROR" not in report["log"] and "Traceback" not in report["log"]
        assert report["warnings"] == []
        assert report["stats"].get("robotstxt/store/unavailable") is None
        assert report["stats"].get("robotstxt/store/errors") is None
    assert [hit.status for hit in shared.hits("/robots.txt")] == [200, 200]
    for i, site in enumerate(sites):
        assert site.count(f"/private-{i}/x") == 0  # each crawl obeyed its robots.txt
    with RobotsStore(path) as store:
        assert sorted(entry.origin for entry in store.origins()) == sorted(
            site.origin for site in sites
        )
        for i, site in enumerate(sites):
            copy = store.get(site.origin)
            assert copy is not None
            assert copy.body == f"User-agent: *\nDisallow: /private-{i}\n".encode()
    command = [sys.executable, "-m", "scrapy_rerp", "store", str(path)]
    listed = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    for site in sites:
        assert site.origin in listed.stdout
    for i, site in enumerate(sites):
        shown = subprocess.run(
            [*command, site.origin], capture_output=True, text=True, timeout=60, check=False
        )
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == f"User-agent: *\nDisallow: /private-{i}\n"


SECRET = "User-agent: *\nDisallow: /secret\n"
YEAR = 365 * 86400.0


def planted(path: Path, origin: str, fetched_at: float, expires_at: float) -> None:
    """A row allowing everything, its times set through SQLite as another host (or a hand)
    left them."""
    now = time.time()
    with RobotsStore(path) as store:
        body = b"User-agent: *\nAllow: /\n"
        assert store.put(
            origin,
            StoredCopy(
                url=f"{origin}/robots.txt",
                status=200,
                outcome=Outcome.PARSED,
                fetched_at=now,
                expires_at=now + 60,
                body=body,
            ),
        )
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "UPDATE robots SET fetched_at = ?, expires_at = ? WHERE origin = ?",
        (fetched_at, expires_at, origin),
    )
    conn.close()


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in own(caplog.records) if r.levelname == "WARNING"]


@pytest.mark.parametrize(
    ("ahead", "lifetime"),
    [
        pytest.param(4 * YEAR, 86400.0, id="four-years-ahead-fresh"),
        pytest.param(1e8, -1e8 - 60, id="1e8-ahead-expired"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_copy_fetched_in_the_future_is_not_used(
    server: Server,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    ahead: float,
    lifetime: float,
) -> None:
    # A host whose clock was wrong, or a tampered file: the copy is not used, robots.txt is
    # downloaded and obeyed, and the download is stored in its place.
    server.robots(SECRET)
    path = tmp_path / "robots.sqlite"
    now = time.time()
    planted(path, server.origin, now + ahead, now + ahead + lifetime)
    with caplog.at_level(logging.INFO):
        crawler = await crawl(
            settings=stored(path, **FAST_OUTAGE), urls=[server.url("/a"), server.url("/secret")]
        )
    assert server.count("/robots.txt") == 1
    assert pages(server) == ["/a"]  # /secret not downloaded
    assert ignored(crawler) == [server.url("/secret")]
    assert stat(crawler, "robotstxt/store/rejected/future") == 1
    assert stat(crawler, "robotstxt/store/reused") is None
    assert stat(crawler, "robotstxt/store/stored") == 1
    [warning] = warned(caplog)
    assert f"dropped the row of '{server.origin}': future: fetched_at is" in warning
    assert not any("ago" in w and "-" in w.split("ago")[0] for w in warned(caplog))
    with RobotsStore(path) as store:
        copy = store.get(server.origin)
        assert copy is not None and copy.body == SECRET.encode()  # the download, stored
        assert copy.fetched_at <= time.time()


@pytest_twisted.ensureDeferred
async def test_an_expiry_past_the_longest_lifetime_is_bounded(
    server: Server, tmp_path: Path
) -> None:
    # Fetched two days ago, "fresh" for fifty years: fresh a day (RERP_MAX_LIFETIME) at most,
    # so expired, and refetched.
    server.robots(SECRET)
    path = tmp_path / "robots.sqlite"
    now = time.time()
    planted(path, server.origin, now - 2 * 86400, now + 50 * YEAR)
    crawler = await crawl(settings=stored(path), urls=[server.url("/a"), server.url("/secret")])
    assert server.count("/robots.txt") == 1
    assert pages(server) == ["/a"]
    assert stat(crawler, "robotstxt/store/reused") is None
    assert stat(crawler, "robotstxt/store/replaced") == 1


@pytest.mark.parametrize(
    "planted_object",
    [
        pytest.param(
            "CREATE TRIGGER endless AFTER UPDATE ON robots BEGIN"
            " SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
            " SELECT i + 1 FROM n) SELECT i FROM n); END",
            id="trigger",
        ),
        pytest.param("CREATE VIEW everything AS SELECT * FROM robots", id="view"),
        pytest.param("CREATE INDEX by_url ON robots (url)", id="index"),
        pytest.param("CREATE TABLE notes (text TEXT)", id="table"),
        pytest.param(
            "DROP TRIGGER robots_added; CREATE TRIGGER robots_added AFTER INSERT ON robots"
            " BEGIN UPDATE tally SET origins = origins + 2; END",
            id="one-of-ours-changed",
        ),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_store_with_a_planted_schema_object_is_not_used(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, planted_object: str
) -> None:
    server.robots(SECRET)
    path = tmp_path / "robots.sqlite"
    now = time.time()
    planted(path, server.origin, now, now + 3600)  # fresh, allowing everything
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(planted_object)
    conn.close()
    with caplog.at_level(logging.INFO):
        crawler = await crawl(settings=stored(path), urls=[server.url("/a"), server.url("/secret")])
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert server.count("/robots.txt") == 1  # the store not used
    assert pages(server) == ["/a"]
    [warning] = warned(caplog)
    assert "is not used for the rest of this run" in warning
    assert "not a store's" in warning or "not those of version" in warning
    assert stat(crawler, "robotstxt/store/unavailable") == 1


@pytest_twisted.ensureDeferred
async def test_a_store_path_that_is_not_a_regular_file_is_never_opened(
    server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.robots(SECRET)
    path = tmp_path / "robots.sqlite"
    path.symlink_to(os.devnull)
    with caplog.at_level(logging.INFO):
        crawler = await crawl(settings=stored(path), urls=[server.url("/a"), server.url("/secret")])
    assert pages(server) == ["/a"]
    [warning] = warned(caplog)
    assert "not a regular file" in warning
    assert stat(crawler, "robotstxt/store/unavailable") == 1
    for suffix in ("-journal", "-wal", "-shm"):
        assert not Path(f"{os.devnull}{suffix}").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["robots.sqlite"]
