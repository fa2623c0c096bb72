"""Nothing lost at a pause: requests parked when a crawl is paused reach the resumed crawl.

Worker processes (``tests/support/fleet_worker.py``) are paused as a user pauses one, with SIGINT,
while their requests wait for robots.txt (or for a site's cool-down), then started again on the same
job: every page is crawled exactly once across the two runs, with ``JOBDIR`` and with
scrapy-redis's persistent queue, and a cool-down still holds in the resumed job.

What a ``JOBDIR`` holds is input: crawls (in this process, through Scrapy's API) resume from job
directories written by hand, damaged or odd, and the tests assert on what the servers received,
the stats, the log and what became of the files.
"""

from __future__ import annotations

import json
import logging
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import Crawler

from scrapy_rerp.core.wording import counted
from scrapy_rerp.crawl.resume import COOL_DOWN_FILE, DAMAGED_SUFFIX, JOB_FILE, STAT_SKIPPED
from tests.support.parts import build
from tests.support.redis import RedisServer, finish, start_worker
from tests.support.servers import Hit, ListSpider, Reply, Server, crawl, own

PAGES = [f"/p{i}" for i in range(5)]


@pytest.fixture
def site() -> Iterator[Server]:
    with Server(host="127.0.0.2") as server:
        yield server


def pages(server: Server) -> list[str]:
    return sorted(p for p in server.paths() if p != "/robots.txt")


def pause_while_parked(config: dict[str, Any], site: Server) -> dict[str, Any]:
    """Start a worker, send it SIGINT once its requests wait for robots.txt, and return its
    report."""
    worker = start_worker(config)
    deadline = time.monotonic() + 30
    while not site.count("/robots.txt") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert site.count("/robots.txt"), "the worker never asked for robots.txt"
    time.sleep(0.5)  # its five requests have reached the middleware and are parked
    worker.send_signal(signal.SIGINT)
    return finish(worker, timeout=60)


@pytest.mark.parametrize("robots", ["slow", "unreachable"])
def test_a_paused_job_resumes_its_parked_requests(
    site: Server, tmp_path: Path, robots: str
) -> None:
    if robots == "slow":
        # Paused while robots.txt downloads: Scrapy waits for that download before it closes.
        site.route("/robots.txt", [Reply(body="User-agent: *\n", delay=2.0), Reply()])
    else:
        # Paused while the fetcher waits to retry (Retry-After): nothing is in flight, and the
        # crawl closes at once.
        site.route("/robots.txt", [Reply(status=503, headers={"Retry-After": "60"}), Reply()])
    config = {
        "urls": [site.url(p) for p in PAGES],
        "dont_filter": False,  # the dupefilter keeps their fingerprints in the job
        "settings": {"JOBDIR": str(tmp_path / "job"), "LOG_LEVEL": "DEBUG"},
    }
    first = pause_while_parked(config, site)
    assert first["finish_reason"] == "shutdown"
    assert pages(site) == []
    assert first["stats"]["robotstxt/persisted"] == 5
    assert first["stats"]["robotstxt/parked"] == 5
    assert "robotstxt/dropped/crawl_closing" not in first["stats"]
    assert (tmp_path / "job" / "robotstxt-parked.pickle").exists()

    second = finish(start_worker(config), timeout=60)
    assert second["finish_reason"] == "finished"
    assert second["stats"]["robotstxt/resumed"] == 5
    # Every page exactly once across the two runs.
    assert pages(site) == sorted(PAGES)
    assert sorted(second["received"]) == sorted(site.url(p) for p in PAGES)
    assert not (tmp_path / "job" / "robotstxt-parked.pickle").exists()


def test_a_paused_scrapy_redis_worker_puts_its_parked_requests_back_in_the_queue(
    site: Server,
) -> None:
    redis_server = RedisServer().start()
    try:
        site.route("/robots.txt", [Reply(body="User-agent: *\n", delay=2.0), Reply()])
        config = {
            "redis": redis_server.url,
            "scrapy_redis": True,
            "urls": [site.url(p) for p in PAGES],
            "dont_filter": False,
            "settings": {"LOG_LEVEL": "DEBUG"},
        }
        first = pause_while_parked(config, site)
        assert first["finish_reason"] == "shutdown"
        assert pages(site) == []
        assert first["stats"]["robotstxt/persisted"] == 5
        # Another worker of the fleet (no start URLs of its own) takes them from the queue.
        second = finish(start_worker({**config, "urls": []}), timeout=60)
        assert second["finish_reason"] == "finished"
        # The paused worker released the fleet's lock on robots.txt it had not stored: the
        # other did not wait RERP_REDIS_LOCK_TIMEOUT (30 s) for it.
        assert "robotstxt/redis/lock_waits" not in second["stats"]
        assert pages(site) == sorted(PAGES)
        assert sorted(second["received"]) == sorted(site.url(p) for p in PAGES)
    finally:
        redis_server.stop()


def test_without_a_job_parked_requests_are_dropped_and_signalled(site: Server) -> None:
    site.route("/robots.txt", Reply(body="User-agent: *\n", delay=2.0))
    config = {"urls": [site.url(p) for p in PAGES], "settings": {"LOG_LEVEL": "DEBUG"}}
    report = pause_while_parked(config, site)
    assert report["stats"]["robotstxt/dropped/crawl_closing"] == 5
    assert "robotstxt/persisted" not in report["stats"]
    assert report["dropped"] == sorted(site.url(p) for p in PAGES)  # request_dropped, each
    log = report["log"]
    assert "Crawl closing: dropped 5 requests still waiting for robots.txt" in log
    for path in PAGES:
        assert f"Crawl closing: dropped <GET {site.url(path)}>" in log


def test_a_paused_job_keeps_its_requests_waiting_for_a_cool_down_and_the_cool_down(
    site: Server, tmp_path: Path
) -> None:
    # The site asks for a minute; the resumed job caps what is left at RESUMED seconds
    # (RERP_SLOWDOWN_MAX_WAIT), counted from its own start: however long the pause and the
    # second worker's start-up take on a loaded host, a cool-down is left to resume, and the
    # time it must hold is known.
    cool_down = 60
    resumed_for = 3.0
    slowed: list[Hit] = []
    lock = threading.Lock()

    def first_page_slowed(hit: Hit) -> Reply:
        with lock:
            if not slowed:
                slowed.append(hit)
                return Reply(status=429, headers={"Retry-After": str(cool_down)})
        return Reply(body="ok")

    site.robots("User-agent: *\n")
    site.default = first_page_slowed
    config: dict[str, Any] = {
        "urls": [site.url(p) for p in PAGES],
        "dont_filter": False,
        "settings": {
            "JOBDIR": str(tmp_path / "job"),
            "LOG_LEVEL": "DEBUG",
            "RETRY_ENABLED": True,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "DOWNLOAD_DELAY": 0.5,  # the other pages wait in the slot when the 429 comes
        },
    }
    worker = start_worker(config)
    deadline = time.monotonic() + 30
    while not slowed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert slowed, "the worker never reached the site"
    time.sleep(0.5)  # the answer is heard: its retry and the other pages are parked
    worker.send_signal(signal.SIGINT)
    first = finish(worker, timeout=60)
    assert first["finish_reason"] == "shutdown"
    assert first["stats"]["robotstxt/slowdown/cooldowns"] == 1
    assert first["stats"]["robotstxt/persisted"] == len(PAGES)  # the retry and the 4 others
    assert (tmp_path / "job" / "robotstxt-cooldowns.json").exists()

    resumed = {**config, "settings": {**config["settings"], "RERP_SLOWDOWN_MAX_WAIT": resumed_for}}
    started = time.monotonic()
    second = finish(start_worker(resumed), timeout=60)
    assert second["finish_reason"] == "finished"
    assert second["stats"]["robotstxt/resumed"] == len(PAGES)
    assert "Resumed the cool-down of" in second["log"]
    assert "(cut to RERP_SLOWDOWN_MAX_WAIT)" in second["log"]
    # The resumed job held the cool-down: nothing reached the site until it was over.
    [answered] = slowed
    after = [h for h in site.hits() if h.time > answered.time and h.path != "/robots.txt"]
    assert after and min(h.time for h in after) >= started + resumed_for
    # Every page exactly once across the two runs, the slowed one once more (its retry).
    assert pages(site) == sorted([*PAGES, answered.path])
    assert sorted(second["received"]) == sorted(site.url(p) for p in PAGES)
    assert not (tmp_path / "job" / "robotstxt-cooldowns.json").exists()


# -- what a JOBDIR holds is input --------------------------------------------------------------

#: Ample for a crawl of a few pages; a crawl that a stored cool-down holds is closed by then
#: ("closespider_timeout"), so that a test of it fails rather than hangs.
TIMEOUT = 10


def resume_settings(job: Path, **settings: Any) -> dict[str, Any]:
    return {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "JOBDIR": str(job),
        "CLOSESPIDER_TIMEOUT": TIMEOUT,
        **settings,
    }


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    """scrapy_rerp's WARNING lines, after checking that nothing was logged with a traceback
    (an exception escaping a signal handler is logged with one, by Scrapy)."""
    tracebacks = [r.getMessage() for r in caplog.records if r.exc_info]
    assert tracebacks == []
    return [r.getMessage() for r in own(caplog.records) if r.levelno >= logging.WARNING]


def set_aside(path: Path) -> Path:
    return path.with_name(path.name + DAMAGED_SUFFIX)


def crawled_at_once(crawler: Crawler, site: Server, urls: list[str]) -> None:
    """Every page crawled, and none held by a cool-down."""
    assert crawler.stats is not None and crawler.spider is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert sorted(crawler.spider.responses) == sorted(urls)
    assert pages(site) == sorted(PAGES)
    assert crawler.stats.get_value("robotstxt/slowdown/parked") is None


def cool_downs_set_aside(
    crawler: Crawler,
    caplog: pytest.LogCaptureFixture,
    cool_downs: Path,
    stored: str,
    skipped: int,
) -> None:
    """None of the stored cool-downs was restored, ``skipped`` entries were counted and named
    in one WARNING, and the file is set aside as it was, out of the next resume's way."""
    assert crawler.stats is not None
    assert crawler.stats.get_value(STAT_SKIPPED) == skipped
    [warning] = warnings_of(caplog)
    assert str(cool_downs) in warning
    assert f"0 cool-downs restored, {counted(skipped, 'entry', 'entries')} skipped" in warning
    assert f"renamed to {set_aside(cool_downs)}" in warning
    assert not cool_downs.exists()
    assert set_aside(cool_downs).read_text(encoding="utf-8", errors="surrogateescape") == stored


def with_origin(text: str) -> Callable[[str], str]:
    return lambda origin: text.replace("ORIGIN", origin)


#: Values no cool-down can have, each under an origin of its own in one file.
BAD_END_TIMES = [
    # Python's json reads these as floats, which no cool-down can last.
    "Infinity",
    "NaN",
    "1e400",
    "-1000000000.0",
    '"9999999999"',  # a string
    "true",
    "null",
]


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_stored_cool_downs_that_cannot_be_ones_are_skipped(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    cool_downs = job / COOL_DOWN_FILE
    # The site's origin holds the first bad value; other origins the others, and one key that
    # is a URL, not an origin, holds a good end: none of them holds anything back.
    origins = [site.origin] + [f"http://other-{n}.test:80" for n in range(1, len(BAD_END_TIMES))]
    entries = [f'"{o}": {value}' for o, value in zip(origins, BAD_END_TIMES, strict=True)]
    entries.append(f'"{site.origin}/p0": 9999999999')
    stored = "{" + ", ".join(entries) + "}"
    cool_downs.write_text(stored, encoding="utf-8")
    urls = [site.url(p) for p in PAGES]

    crawler = await crawl(ListSpider, resume_settings(job), urls=urls)

    crawled_at_once(crawler, site, urls)
    cool_downs_set_aside(crawler, caplog, cool_downs, stored, len(BAD_END_TIMES) + 1)


@pytest.mark.parametrize(
    "stored",
    [
        pytest.param(with_origin('[["ORIGIN", 9999999999]]'), id="array"),
        pytest.param(with_origin('"ORIGIN"'), id="string-document"),
        pytest.param(with_origin('{"ORIGIN": 9999999999'), id="cut-short"),
        pytest.param(lambda origin: "\udcff{}", id="not-utf-8"),
    ],
)
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_stored_cool_down_file_that_holds_no_object_is_skipped(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, stored: Callable[[str], str]
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    cool_downs = job / COOL_DOWN_FILE
    cool_downs.write_text(stored(site.origin), encoding="utf-8", errors="surrogateescape")
    urls = [site.url(p) for p in PAGES]

    crawler = await crawl(ListSpider, resume_settings(job), urls=urls)

    crawled_at_once(crawler, site, urls)
    cool_downs_set_aside(crawler, caplog, cool_downs, stored(site.origin), 1)


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_stored_cool_down_waits_no_longer_than_the_crawl_allows_now(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    cool_downs = job / COOL_DOWN_FILE
    # Written by a job paused under RERP_SLOWDOWN_MAX_WAIT = 1e9, or by hand.
    cool_downs.write_text(json.dumps({site.origin: time.time() + 1e9}), encoding="utf-8")
    urls = [site.url(p) for p in PAGES]
    started = time.monotonic()

    with caplog.at_level(logging.INFO, logger="scrapy_rerp"):
        crawler = await crawl(ListSpider, resume_settings(job, RERP_SLOWDOWN_MAX_WAIT=1), urls=urls)

    assert crawler.stats is not None and crawler.spider is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert sorted(crawler.spider.responses) == sorted(urls)
    # The cool-down held, for the one second the crawl allows now.
    first = min(h.time for h in site.hits() if h.path != "/robots.txt")
    assert first >= started + 1.0
    assert crawler.stats.get_value("robotstxt/slowdown/parked") == len(PAGES)
    assert (
        f"Resumed the cool-down of {site.origin}: nothing is sent to it for 1 s "
        "(cut to RERP_SLOWDOWN_MAX_WAIT)"
    ) in caplog.text
    # An end too far away is no damage (the setting may have changed): nothing skipped, and
    # the file read is removed.
    assert crawler.stats.get_value(STAT_SKIPPED) is None
    assert warnings_of(caplog) == []
    assert not cool_downs.exists() and not set_aside(cool_downs).exists()


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_pause_writes_back_no_cool_down_beyond_the_cap(
    site: Server, tmp_path: Path
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    cool_downs = job / COOL_DOWN_FILE
    cool_downs.write_text(json.dumps({site.origin: time.time() + 1e9}), encoding="utf-8")
    urls = [site.url(p) for p in PAGES]

    # Paused (here: closed by CLOSESPIDER_TIMEOUT) while the restored cool-down still holds.
    crawler = await crawl(
        ListSpider,
        resume_settings(job, RERP_SLOWDOWN_MAX_WAIT=30, CLOSESPIDER_TIMEOUT=1),
        urls=urls,
    )

    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "closespider_timeout"
    assert pages(site) == []
    assert crawler.stats.get_value("robotstxt/persisted") == len(PAGES)
    [(origin, until)] = json.loads(cool_downs.read_text(encoding="utf-8")).items()
    assert origin == site.origin
    assert time.time() + 25 < until <= time.time() + 30


def request_entry(url: str, **fields: Any) -> dict[str, Any]:
    """A request as the pause writes it (Scrapy's serialization)."""
    return {**scrapy.Request(url).to_dict(), **fields}


@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_the_good_entries_of_a_damaged_parked_file_are_crawled(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    parked = job / JOB_FILE
    good = ["/p0", "/p2", "/p4"]
    entries: list[Any] = [
        request_entry(site.url("/p0")),
        "junk",
        42,
        None,
        ["url", site.url("/p1")],
        {"url": "no scheme"},
        {"method": "GET"},  # no URL
        request_entry(site.url("/p2")),
        request_entry(site.url("/p3"), callback="no_such_method"),
        request_entry(site.url("/p4")),
    ]
    parked.write_bytes(pickle.dumps(entries, protocol=4))

    crawler = await crawl(ListSpider, resume_settings(job), urls=[])

    assert crawler.stats is not None and crawler.spider is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert pages(site) == good
    assert sorted(crawler.spider.responses) == sorted(site.url(p) for p in good)
    assert crawler.stats.get_value("robotstxt/resumed") == 3
    assert crawler.stats.get_value(STAT_SKIPPED) == 7
    [warning] = warnings_of(caplog)
    assert str(parked) in warning
    assert "3 requests restored, 7 entries skipped" in warning
    assert "entry 1 is no dict (str)" in warning
    assert not parked.exists() and set_aside(parked).exists()


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"garbage, not a pickle", id="garbage"),
        pytest.param(
            pickle.dumps([request_entry("http://a.test/")], protocol=4)[:-20], id="cut-short"
        ),
        pytest.param(pickle.dumps(request_entry("http://a.test/"), protocol=4), id="not-a-list"),
        pytest.param(b"", id="empty"),
    ],
)
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_an_unreadable_parked_file_is_set_aside(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    job.mkdir()
    parked = job / JOB_FILE
    parked.write_bytes(content)
    urls = [site.url(p) for p in PAGES]

    crawler = await crawl(ListSpider, resume_settings(job), urls=urls)

    crawled_at_once(crawler, site, urls)
    assert crawler.stats is not None
    assert crawler.stats.get_value(STAT_SKIPPED) == 1
    assert crawler.stats.get_value("robotstxt/resumed") is None
    [warning] = warnings_of(caplog)
    assert str(parked) in warning and "0 requests restored, 1 entry skipped" in warning
    assert not parked.exists() and set_aside(parked).read_bytes() == content


@pytest.mark.parametrize("name", [JOB_FILE, COOL_DOWN_FILE])
@pytest.mark.crawl
@pytest_twisted.ensureDeferred
async def test_a_directory_in_place_of_a_job_file_is_moved_aside(
    site: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    site.robots("User-agent: *\n")
    job = tmp_path / "job"
    (job / name).mkdir(parents=True)
    (job / name / "inside").write_text("kept", encoding="utf-8")
    urls = [site.url(p) for p in PAGES]

    crawler = await crawl(ListSpider, resume_settings(job), urls=urls)

    crawled_at_once(crawler, site, urls)
    assert crawler.stats is not None
    assert crawler.stats.get_value(STAT_SKIPPED) == 1
    [warning] = warnings_of(caplog)
    assert str(job / name) in warning and "IsADirectoryError" in warning
    # Out of the way of the next pause, which writes its file there; nothing in it lost.
    assert not (job / name).exists()
    assert (set_aside(job / name) / "inside").read_text(encoding="utf-8") == "kept"


@pytest.mark.scrapy
def test_a_pause_writes_only_finite_cool_downs_within_the_cap(tmp_path: Path) -> None:
    crawler, parts = build({"JOBDIR": str(tmp_path), "RERP_SLOWDOWN_MAX_WAIT": 60})
    now = time.time()
    parts.resume.keep_cool_downs(
        {
            "http://a.test:80": now + 30,
            "http://b.test:80": now + 1e9,  # e.g. learned from a fleet with another cap
            "http://c.test:80": float("inf"),
            "http://d.test:80": float("nan"),
        }
    )
    written = json.loads((tmp_path / COOL_DOWN_FILE).read_text(encoding="utf-8"))
    assert sorted(written) == ["http://a.test:80", "http://b.test:80"]
    assert written["http://a.test:80"] == now + 30
    assert now + 59 < written["http://b.test:80"] <= time.time() + 60
