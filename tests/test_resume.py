"""Nothing lost at a pause: requests parked when a crawl is paused reach the resumed crawl.

Worker processes (``tests/support/fleet_worker.py``) are paused as a user pauses one, with SIGINT,
while their requests wait for robots.txt (or for a site's cool-down), then started again on the same
job: every page is crawled exactly once across the two runs, with ``JOBDIR`` and with
scrapy-redis's persistent queue, and a cool-down still holds in the resumed job.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.redis import RedisServer, finish, start_worker
from tests.support.servers import Hit, Reply, Server

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
    assert "Crawl closing: dropped 5 request(s) still waiting for robots.txt" in log
    for path in PAGES:
        assert f"Crawl closing: dropped <GET {site.url(path)}>" in log


def test_a_paused_job_keeps_its_requests_waiting_for_a_cool_down_and_the_cool_down(
    site: Server, tmp_path: Path
) -> None:
    cool_down = 4.0
    slowed: list[Hit] = []
    lock = threading.Lock()

    def first_page_slowed(hit: Hit) -> Reply:
        with lock:
            if not slowed:
                slowed.append(hit)
                return Reply(status=429, headers={"Retry-After": f"{cool_down:.0f}"})
        return Reply(body="ok")

    site.robots("User-agent: *\n")
    site.default = first_page_slowed
    config = {
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

    second = finish(start_worker(config), timeout=60)
    assert second["finish_reason"] == "finished"
    assert second["stats"]["robotstxt/resumed"] == len(PAGES)
    assert "Resumed the cool-down of" in second["log"]
    # The resumed job waited for the end of the cool-down the site asked for.
    [answered] = slowed
    after = [h for h in site.hits() if h.time > answered.time and h.path != "/robots.txt"]
    assert after and min(h.time for h in after) >= answered.time + cool_down
    # Every page exactly once across the two runs, the slowed one once more (its retry).
    assert pages(site) == sorted([*PAGES, answered.path])
    assert sorted(second["received"]) == sorted(site.url(p) for p in PAGES)
    assert not (tmp_path / "job" / "robotstxt-cooldowns.json").exists()
