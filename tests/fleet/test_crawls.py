"""A fleet on Redis: a real redis-server, real Scrapy worker processes, local HTTP servers.

The workers use scrapy-redis's scheduler and dupefilter (or Scrapy's own, where the test is
about Redis going away: scrapy-redis's scheduler itself cannot work without Redis) and
``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``. Assertions are on what the HTTP servers
received and what the workers report.

The workers are processes of their own (tests/support/redis.py), not crawls in the test
process: no test here carries the ``crawl`` marker, and the two marked ``scrapy`` also run in
the oldest and newest Scrapy cells (noxfile.py). The store alone: test_store.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scrapy_rerp.fleet.delay import turn_hold
from tests.support.redis import RedisServer, finish, kill, release, start_worker, wait_held
from tests.support.servers import Hit, Reply, Server, gaps, rate_limited


@pytest.fixture
def hosts() -> Iterator[list[Server]]:
    """Three origins, each on its own host (its own download slot)."""
    started = [Server(host=f"127.0.0.{n}").start() for n in (51, 52, 53)]
    yield started
    for s in started:
        s.stop()


def pages(server: Server) -> list[str]:
    return [h.path for h in server.hits() if h.path != "/robots.txt"]


def sent(server: Server, worker: str) -> int:
    """The pages ``worker`` (its ``X-Worker`` header) has sent ``server``."""
    return sum(
        1 for h in server.hits() if h.path != "/robots.txt" and h.header("X-Worker") == worker
    )


def sent_each(server: Server, pages: int, *workers: str) -> bool:
    return all(sent(server, w) >= pages for w in workers)


def seed(redis_server: RedisServer, urls: list[str]) -> None:
    client = redis_server.client()
    client.delete("fleet:start_urls")
    client.rpush("fleet:start_urls", *[json.dumps({"url": u}) for u in urls])


def fleet_config(redis_server: RedisServer, **settings: Any) -> dict[str, Any]:
    return {
        "redis": redis_server.url,
        "scrapy_redis": True,
        "settings": {"REDIS_START_URLS_BATCH_SIZE": 4, **settings},
    }


def test_three_workers_download_robots_txt_once_and_share_the_crawl_delay(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    polite, fast, other = hosts
    polite.robots("User-agent: *\nCrawl-delay: 1\n")
    fast.robots("User-agent: *\nDisallow: /private\n")
    other.robots("User-agent: *\nAllow: /\n")
    urls = [polite.url(f"/p{i}") for i in range(6)]
    urls += [s.url(f"/p{i}") for i in range(20) for s in (fast, other)]
    urls += [fast.url("/private/x")]
    seed(redis_server, urls)
    workers = [start_worker(fleet_config(redis_server)) for _ in range(3)]
    reports = [finish(w) for w in workers]
    # One robots.txt download per origin for the whole fleet.
    assert [s.count("/robots.txt") for s in hosts] == [1, 1, 1]
    assert sum(r["stats"].get("robotstxt/request_count", 0) for r in reports) == 3
    # Every page once, the disallowed one never.
    assert sorted(pages(polite)) == sorted(f"/p{i}" for i in range(6))
    assert sorted(pages(fast)) == sorted(f"/p{i}" for i in range(20))
    assert sorted(pages(other)) == sorted(f"/p{i}" for i in range(20))
    # Crawl-delay 1 held by the three workers together, robots.txt included.
    polite_gaps = gaps(polite.hits())
    assert min(polite_gaps) >= 0.95, polite_gaps
    # No Crawl-delay: full speed.
    fast_hits = [h.time for h in fast.hits()]
    assert max(fast_hits) - min(fast_hits) < 3.0


@pytest.mark.scrapy
def test_two_redis_spiders_fed_through_their_redis_keys_share_robots_txt(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    """scrapy-redis's way to feed workers: ``RedisSpider`` workers that pop their start URLs
    from a Redis list, some pushed before the workers start and some while they crawl. (Scrapy
    2.16+ no longer reads ``start_requests()``, where RedisSpider pops its first batch: the
    workers are fed through scrapy-redis's ``spider_idle`` handler.)

    Each worker has a list of its own, holding pages of both origins, and Scrapy's scheduler, so
    that it crawls what it took and both workers need both origins' rules at the same time.
    (With one list and scrapy-redis's shared queue, whichever worker is quicker may take every
    URL; the three-worker test above runs that way.) The dupefilter is scrapy-redis's.
    """
    polite, fast, _ = hosts
    floor = 0.2
    polite.robots(f"User-agent: *\nCrawl-delay: {floor}\nDisallow: /private\n")
    fast.robots("User-agent: *\nDisallow: /private\n")

    def urls(worker: int, phase: str) -> list[str]:
        allowed = [s.url(f"/w{worker}/{phase}{i}") for i in range(3) for s in (polite, fast)]
        return allowed + [s.url(f"/private/w{worker}/{phase}") for s in (polite, fast)]

    client = redis_server.client()
    client.delete("fleet:opened", "fleet:start_urls:0", "fleet:start_urls:1")

    def push(worker: int, phase: str) -> None:
        entries = [json.dumps({"url": u}) for u in urls(worker, phase)]
        client.lpush(f"fleet:start_urls:{worker}", *entries)

    for worker in (0, 1):
        push(worker, "before")
    settings = {
        "REDIS_START_URLS_BATCH_SIZE": 2,
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    }
    # One worker as scrapy-redis makes it, one with docs/fleet.rst's start(); both open their
    # spiders before either takes a URL, as in a fleet that is already running.
    workers = [
        start_worker(
            {
                "redis": redis_server.url,
                "settings": settings,
                "redis_key": f"fleet:start_urls:{worker}",
                "fed_when_idle": worker == 1,
                "barrier": 2,
            }
        )
        for worker in (0, 1)
    ]
    # Once both are crawling, the rest of the URLs arrive.
    deadline = time.monotonic() + 60

    def crawling(worker: int) -> bool:
        return any(p.startswith(f"/w{worker}/") for p in pages(polite) + pages(fast))

    while not (crawling(0) and crawling(1)) and time.monotonic() < deadline:
        time.sleep(0.01)
    for worker in (0, 1):
        push(worker, "after")
    reports = [finish(w) for w in workers]
    # Each worker crawled every allowed page of its list, once; the disallowed ones never.
    for worker, report in enumerate(reports):
        expected = [u for p in ("before", "after") for u in urls(worker, p) if "/private/" not in u]
        assert sorted(report["received"]) == sorted(expected)
        assert report["stats"].get("robotstxt/forbidden") == 4
        assert report["finish_reason"] == "finished"
    for server in (polite, fast):
        assert sorted(pages(server)) == sorted(
            f"/w{w}/{p}{i}" for w in (0, 1) for p in ("before", "after") for i in range(3)
        )
    # One robots.txt download per origin for the two workers: the other took it from Redis.
    assert [s.count("/robots.txt") for s in (polite, fast)] == [1, 1]
    assert sum(r["stats"].get("robotstxt/request_count", 0) for r in reports) == 2
    assert sum(r["stats"].get("robotstxt/redis/shared", 0) for r in reports) >= 2
    # The Crawl-delay held by both workers together.
    assert min(gaps(polite.hits())) >= floor - 0.02, gaps(polite.hits())


def short_gaps(hits: list[Hit], floor: float) -> list[tuple[float, str, str]]:
    """Each gap under ``floor`` between two requests the server received (10 ms of slack for
    the server's own clock): its length and the two workers (``X-Worker``) that sent them."""
    return [
        (round(b.time - a.time, 3), a.header("X-Worker") or "?", b.header("X-Worker") or "?")
        for a, b in zip(hits, hits[1:], strict=False)
        if b.time - a.time < floor - 0.01
    ]


@pytest.mark.parametrize("autothrottle", [False, True], ids=["plain", "autothrottle"])
def test_redis_spiders_sharing_one_redis_key_hold_the_crawl_delay_together(
    redis_server: RedisServer, hosts: list[Server], autothrottle: bool
) -> None:
    """scrapy-redis as its users run it: three ``RedisSpider`` workers, idle, fed through one
    ``redis_key`` and one shared scheduler queue, so that a request one worker parks may leave
    from another. AutoThrottle's delay (5 s on a new slot) once held a request in its slot
    after it had taken the fleet's turn, until the turn was over: two workers then sent side
    by side."""
    site = hosts[0]
    floor = 0.5
    site.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    client = redis_server.client()
    client.delete("fleet:opened", "fleet:start_urls")
    workers = [
        start_worker(
            {
                **fleet_config(
                    redis_server,
                    CONCURRENT_REQUESTS=8,
                    AUTOTHROTTLE_ENABLED=autothrottle,
                    DEFAULT_REQUEST_HEADERS={"X-Worker": f"w{w}"},
                ),
                "fed_when_idle": True,
                "redis_batch_size": 3,
                "barrier": 3,
                "max_idle": 2,
            }
        )
        for w in range(3)
    ]
    deadline = time.monotonic() + 60
    while client.llen("fleet:opened") < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    urls = [site.url(f"/p{i}") for i in range(12)]
    client.rpush("fleet:start_urls", *[json.dumps({"url": u}) for u in urls])
    reports = [finish(w, timeout=120) for w in workers]
    assert sorted(pages(site)) == sorted(f"/p{i}" for i in range(12))
    assert sorted(u for r in reports for u in r["received"]) == sorted(urls)
    assert site.count("/robots.txt") == 1
    hits = site.hits()
    assert short_gaps(hits, floor) == []
    # Which workers send is scrapy-redis's choice: the worker whose engine pulls a request
    # from the shared queue first, often the same one for a whole crawl (it pulls again the
    # requests it released). Every worker's admissions go through the same gate; the tests
    # above and below give each worker URLs of its own, where all of them must send.
    if not autothrottle:
        # The first page follows robots.txt as soon as the floor allows (no turn lost).
        assert hits[1].time - hits[0].time < floor + 0.5, [h.time - hits[0].time for h in hits]


def test_a_worker_killed_holding_the_lock_delays_the_others_by_the_lock_timeout(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    slow = hosts[0]
    slow.robots("User-agent: *\nAllow: /\n", delay=3)
    lock_timeout = 4
    config = fleet_config(redis_server, RERP_REDIS_LOCK_TIMEOUT=lock_timeout)
    # Two more workers that want the same origin, started now and held ready, so that their
    # start-up (seconds on a loaded host) is over before the lock they will wait for is taken.
    others = [
        start_worker(
            {
                **config,
                "urls": [slow.url(f"/w{w}/p{i}") for i in range(4)],
                "held_until": "fleet:go",
            }
        )
        for w in (1, 2)
    ]
    wait_held(redis_server, 2)
    # The first worker takes the download lock, and is killed while it downloads.
    first = start_worker({**config, "urls": [slow.url("/first")]})
    client = redis_server.client()
    deadline = time.monotonic() + 30
    while client.get(f"rerp:lock:{slow.origin}") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    locked_at = time.monotonic()
    assert client.get(f"rerp:lock:{slow.origin}") is not None, "no worker took the lock"
    while not slow.count("/robots.txt") and time.monotonic() < deadline:
        time.sleep(0.01)  # its download is on the wire
    kill(first)
    # Killed before it could store anything: the others find only its lock.
    assert client.exists(f"rerp:robots:{slow.origin}") == 0
    # The two others go: they wait for the lock, then one downloads.
    release(redis_server)
    reports = [finish(w) for w in others]
    robots = slow.hits("/robots.txt")
    # The killed worker's download, then exactly one more, once its lock had expired.
    assert len(robots) == 2
    assert lock_timeout - 0.1 <= robots[1].time - locked_at <= lock_timeout + 1.5
    assert sorted(pages(slow)) == sorted(f"/w{w}/p{i}" for w in (1, 2) for i in range(4))
    assert all(r["finish_reason"] == "finished" for r in reports)
    stats = [r["stats"] for r in reports]
    assert sum(s.get("robotstxt/redis/lock_waits", 0) for s in stats) >= 1


def test_redis_stopped_mid_crawl_the_crawl_goes_on(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    polite, fast, _ = hosts
    polite.robots("User-agent: *\nCrawl-delay: 0.4\n")
    fast.robots("User-agent: *\nAllow: /\n")
    # Two workers with Scrapy's own scheduler (scrapy-redis's needs Redis itself), each with
    # its half of the URLs of both origins. Enough polite pages that each worker goes on well
    # after Redis is back: before Redis goes, the fleet sends one every 0.4 s; while it is
    # away, each worker does (twice the rate); then once every 0.4 s again.
    polite_pages = 18
    halves = [
        [polite.url(f"/w{w}/p{i}") for i in range(polite_pages)]
        + [fast.url(f"/w{w}/p{i}") for i in range(12)]
        for w in (0, 1)
    ]
    settings = {"RERP_REDIS_TIMEOUT": 0.5}
    workers = [
        start_worker(
            {
                "redis": redis_server.url,
                "urls": urls,
                "settings": {**settings, "DEFAULT_REQUEST_HEADERS": {"X-Worker": f"w{w}"}},
                "barrier": 2,
            }
        )
        for w, urls in enumerate(halves)
    ]
    # Each phase ends on what the site received, not after a fixed time: a worker's start-up
    # (up to 7 s on a loaded host) or a turn won unevenly must not leave a worker that never
    # knew Redis away, or one whose pages were all sent before Redis was back.
    # Redis goes away once each worker has sent two polite pages through the fleet's turns...
    deadline = time.monotonic() + 60
    while not sent_each(polite, 2, "w0", "w1") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sent_each(polite, 2, "w0", "w1"), "the workers did not crawl"
    redis_server.stop()
    before = {w: sent(polite, w) for w in ("w0", "w1")}
    # ...and is back once each has sent three more alone (by then its turns have failed).
    while not all(sent(polite, w) >= before[w] + 3 for w in before) and time.monotonic() < deadline:
        time.sleep(0.01)
    redis_server.start()
    back = time.monotonic()
    reports = [finish(w, timeout=120) for w in workers]
    # Nothing lost.
    for w, report in enumerate(reports):
        assert sorted(report["received"]) == sorted(halves[w])
    expected_polite = sorted(f"/w{w}/p{i}" for w in (0, 1) for i in range(polite_pages))
    assert sorted(pages(polite)) == expected_polite
    logs = "\n".join(r["log"] for r in reports)
    assert "is unavailable" in logs and "answers again" in logs
    assert sum(r["stats"].get("robotstxt/redis/errors", 0) for r in reports) >= 1
    assert sum(r["stats"].get("robotstxt/redis/fallback", 0) for r in reports) >= 1
    # At most one robots.txt per worker and origin: the local caches kept the rules meanwhile
    # (a worker that reached an origin first while Redis was down fetched it alone).
    assert polite.count("/robots.txt") <= 2 and fast.count("/robots.txt") <= 2
    # Once Redis is back, every worker takes turns from its next request (a turn is tried even
    # while Redis is down): the first turn may follow a request sent alone sooner than the
    # floor (one short gap per restart); after a floor, by which a request let go alone just
    # before has left, the floor holds for the fleet.
    floor = 0.4
    after = [h for h in polite.hits() if h.time > back]
    assert len(after) >= 6, "the crawl ended before Redis was back"
    assert {h.header("X-Worker") for h in after} == {"w0", "w1"}, "a worker ended before"
    shown = [(round(h.time - back, 3), h.header("X-Worker")) for h in after]
    late_short = short_gaps([h for h in after if h.time > back + floor], floor)
    assert late_short == [], shown
    assert len(short_gaps(after, floor)) <= 1, shown
    assert all(r["stats"].get("robotstxt/redis/turns", 0) >= 1 for r in reports)
    gone_and_back = [w for r in reports for w in r["warnings"] if "Redis at" in w]
    assert len(gone_and_back) == 4, "\n".join(gone_and_back)  # one line each way, per worker


@pytest.mark.scrapy
def test_a_fleet_under_a_reactor_without_asyncio_stops_at_start_up(server: Server) -> None:
    # redis.asyncio cannot run under the epoll reactor: the crawl stops before anything is
    # downloaded, with one clear error, instead of every Redis call failing.
    worker = start_worker(
        {
            "redis": "redis://127.0.0.1:1/0",  # never reached
            "urls": [server.url("/a")],
            "settings": {"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"},
        }
    )
    report = finish(worker)
    assert report["finish_reason"] == "rerp_settings_error"
    assert server.hits() == []
    errors = [line for line in report["log"].splitlines() if "] ERROR: " in line]
    assert len(errors) == 1, errors
    assert (
        "RERP_CACHE = 'scrapy_rerp.cache.RedisOriginCache' is shared through asyncio" in (errors[0])
    )
    assert "EPollReactor" in errors[0]


TDMREP = "/.well-known/tdmrep.json"


@pytest.mark.parametrize("document", ["/robots.txt", TDMREP])
def test_a_dead_origin_is_retried_by_one_worker_at_the_backoff_rate(
    redis_server: RedisServer, hosts: list[Server], document: str
) -> None:
    # The fleet shares an origin's outage, of robots.txt or of the second per-origin document,
    # tdmrep.json (read as RERP_USAGE names train-ai): its retries keep the backoff rate, and
    # its pages are dropped when the outage outlasts the limit (for tdmrep.json too: an
    # unknown reservation is no "none").
    dead, ok, _ = hosts
    ok.robots("User-agent: *\nAllow: /\n")
    dead.robots("User-agent: *\nAllow: /\n")
    dead.route(document, Reply(status=503))
    seed(
        redis_server, [dead.url(f"/p{i}") for i in range(6)] + [ok.url(f"/p{i}") for i in range(6)]
    )
    usage = {"RERP_USAGE": "train-ai"} if document == TDMREP else {}
    config = fleet_config(
        redis_server,
        **usage,
        RERP_RETRY_BACKOFF_BASE=0.5,
        RERP_RETRY_BACKOFF_MAX=0.5,
        RERP_UNREACHABLE_MAX_WAIT=2,
    )
    reports = [finish(w) for w in [start_worker(config) for _ in range(3)]]
    attempts = dead.hits(document)
    # Alone, each worker would try about four times in the 2 s (0, 0.5, 1.0, 1.5 s): twelve.
    assert 2 <= len(attempts) <= 5, [round(h.time - attempts[0].time, 2) for h in attempts]
    assert min(gaps(attempts)) >= 0.45
    assert [path for path in pages(dead) if path != TDMREP] == []
    assert sorted(path for path in pages(ok) if path != TDMREP) == [f"/p{i}" for i in range(6)]
    if document == TDMREP:
        assert dead.count("/robots.txt") == 1
        assert ok.count(TDMREP) == 1  # its 404, once for the fleet
    dropped = sum(r["stats"].get("robotstxt/dropped/unreachable", 0) for r in reports)
    assert dropped == 6


@pytest.mark.parametrize("skew", [400.0, -400.0])
def test_workers_with_skewed_clocks_share_an_outage_on_redis_s_clock(
    redis_server: RedisServer, hosts: list[Server], skew: float
) -> None:
    dead = hosts[0]
    dead.robots("", status=503)
    max_wait = 4.0
    settings = {
        "RERP_RETRY_BACKOFF_BASE": 0.5,
        "RERP_RETRY_BACKOFF_MAX": 0.5,
        "RERP_UNREACHABLE_MAX_WAIT": max_wait,
    }
    config = {"redis": redis_server.url, "settings": settings}
    # A second worker whose wall clock is 400 s off, started first and held ready (its
    # start-up, seconds on a loaded host, must not run past the outage's end).
    second = start_worker(
        {
            **config,
            "clock_skew": skew,
            "urls": [dead.url(f"/b{i}") for i in range(3)],
            "held_until": "fleet:go",
        }
    )
    wait_held(redis_server, 1)
    first = start_worker({**config, "urls": [dead.url(f"/a{i}") for i in range(3)]})
    deadline = time.monotonic() + 30
    while not dead.count("/robots.txt") and time.monotonic() < deadline:
        time.sleep(0.01)
    outage_began = dead.hits("/robots.txt")[0].time
    time.sleep(1.0)
    # The second reads the outage the first one stored.
    release(redis_server)
    reports = [finish(first), finish(second)]
    assert pages(dead) == []
    assert [r["stats"].get("robotstxt/dropped/unreachable") for r in reports] == [3, 3]
    # Both drop at the end of the one outage, as Redis's clock has it: the skewed worker
    # neither drops at once (+400 s) nor waits 400 s more (-400 s).
    finished = [r["finished_at"] for r in reports]
    assert all(max_wait - 0.5 <= t - outage_began <= max_wait + 3.0 for t in finished), [
        round(t - outage_began, 2) for t in finished
    ]
    # Retried by one worker at the backoff rate, as without skew: the second one did not
    # take the stored outage for an expired one and try again at once.
    attempts = dead.hits("/robots.txt")
    assert min(gaps(attempts)) >= 0.45, gaps(attempts)


def test_what_a_flushall_costs_the_fleet(redis_server: RedisServer, hosts: list[Server]) -> None:
    polite = hosts[0]
    floor = 0.4
    polite.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    config = {"redis": redis_server.url}
    workers = [
        start_worker({**config, "urls": [polite.url(f"/{name}{i}") for i in range(10)]})
        for name in ("a", "b")
    ]
    deadline = time.monotonic() + 60

    def both_crawling() -> bool:
        sent = {path[1] for path in pages(polite)}
        return {"a", "b"} <= sent and len(polite.hits()) >= 8

    while not both_crawling() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert both_crawling()  # each of them has the rules: the flush is mid-crawl for both
    redis_server.client().flushall()  # every robots.txt entry and every turn gone
    flushed = time.monotonic()
    # A worker that starts now finds nothing in Redis.
    workers.append(start_worker({**config, "urls": [polite.url(f"/c{i}") for i in range(4)]}))
    reports = [finish(w) for w in workers]
    assert sorted(pages(polite)) == sorted(
        [f"/{n}{i}" for n in "ab" for i in range(10)] + [f"/c{i}" for i in range(4)]
    )
    # One more robots.txt download: the new worker's. The others keep their local copy.
    assert polite.count("/robots.txt") == 2
    assert sum(r["stats"].get("robotstxt/request_count", 0) for r in reports) == 2
    assert sum(r["stats"].get("robotstxt/redis/shared", 0) for r in reports) >= 1
    # Between pages, one gap shorter than the floor at most, after the flush: the turn that was
    # lost with it (the next worker to ask found no turn and went at once).
    page_hits = [h for h in polite.hits() if h.path != "/robots.txt"]
    short_pages = [
        h for g, h in zip(gaps(page_hits), page_hits[1:], strict=True) if g < floor - 0.02
    ]
    assert len(short_pages) <= 1, [round(g, 3) for g in gaps(page_hits)]
    # The new worker's robots.txt download is spaced from nothing it does not know of yet: it
    # falls between two of the others' pages and may split one gap in two.
    hits = polite.hits()
    short = [h for g, h in zip(gaps(hits), hits[1:], strict=True) if g < floor - 0.02]
    assert len(short) <= 3, [round(g, 3) for g in gaps(hits)]
    assert all(h.time >= flushed for h in short)


def test_a_worker_killed_holding_a_turn_delays_the_others_by_the_turn_s_longest_at_most(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    site = hosts[0]
    floor = 0.5
    site.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    lock = threading.Lock()
    answering: list[Hit] = []

    def slow_for_the_doomed(hit: Hit) -> Reply:
        # The doomed worker's second page is answered slowly: it holds the turn meanwhile.
        with lock:
            doomed = [h for h in site.hits() if h.header("X-Worker") == "doomed"]
            if hit.header("X-Worker") == "doomed" and len(doomed) == 3:
                answering.append(hit)
                return Reply(body="late", delay=10)
        return Reply(body="ok")

    site.default = slow_for_the_doomed

    def config(name: str, urls: list[str]) -> dict[str, Any]:
        settings = {"DEFAULT_REQUEST_HEADERS": {"X-Worker": name}, "DOWNLOAD_TIMEOUT": 30}
        return {"redis": redis_server.url, "urls": urls, "settings": settings}

    doomed = start_worker(config("doomed", [site.url(f"/d{i}") for i in range(6)]))
    survivor = start_worker(config("survivor", [site.url(f"/s{i}") for i in range(10)]))
    deadline = time.monotonic() + 30
    while not answering and time.monotonic() < deadline:
        time.sleep(0.005)
    assert answering, "the doomed worker never sent its slow page"
    kill(doomed)  # holding the turn of its unanswered request
    report = finish(survivor)
    assert sorted(report["received"]) == sorted(site.url(f"/s{i}") for i in range(10))
    held = answering[0]
    after = next(h for h in site.hits() if h.time > held.time)
    assert after.header("X-Worker") == "survivor"
    # The killed worker's turn lasted its longest from when it was taken (its request left at
    # once), no more: the survivor, waiting for it, went then.
    longest = turn_hold(floor)
    assert longest - 0.02 <= after.time - held.time <= longest + 0.4, after.time - held.time
    assert short_gaps(site.hits(), floor) == []


def test_a_worker_stalled_between_its_turn_and_its_send_keeps_the_others_off_the_floor(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    """A worker starved of CPU (a loaded CI host, a long garbage collection) may take its turn,
    then stall before its request leaves. Its turn lasts until the answer, or the turn's
    longest if none is heard: the others wait, rather than send beside the late request. (A
    turn that lasted two floors, 0.4 s for a Crawl-delay of 0.2 s, once let a worker's request
    follow another's by 6 ms on a loaded host.)"""
    site = hosts[0]
    floor = 0.5
    site.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    stall = 2 * floor + 0.3  # beyond two floors, within the turn's longest
    assert turn_hold(floor) > stall + 1.0

    def config(name: str, pages: int, **more: Any) -> dict[str, Any]:
        urls = [site.url(f"/{name}/{i}") for i in range(pages)]
        settings = {"DEFAULT_REQUEST_HEADERS": {"X-Worker": name}}
        return {"redis": redis_server.url, "urls": urls, "settings": settings, **more}

    workers = [
        start_worker(config("stalled", 3, stall_after_turn=stall, held_until="fleet:go")),
        start_worker(config("steady", 8, held_until="fleet:go")),
    ]
    wait_held(redis_server, 2)
    release(redis_server)
    reports = [finish(w) for w in workers]
    assert [len(r["received"]) for r in reports] == [3, 8]
    hits = site.hits()
    assert sent(site, "stalled") == 3 and sent(site, "steady") == 8
    # The steady worker took turns while the other stalled, and waited out each stall.
    workers_in_order = [h.header("X-Worker") for h in hits if h.path != "/robots.txt"]
    assert "stalled" in workers_in_order[:-1], workers_in_order
    assert short_gaps(hits, floor) == [], [round(g, 3) for g in gaps(hits)]
    stats = [r["stats"] for r in reports]
    assert sum(s.get("robotstxt/redis/turns", 0) for s in stats) >= 11  # every page took one


def test_a_download_that_fails_ends_its_turn_a_floor_after_the_failure(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    """A turn lasts until its request's answer; a download that times out has none, and its
    turn ends a floor after the failure, not at the turn's longest (:func:`turn_hold`)."""
    site = hosts[0]
    # The turn's longest (5 s) stays well apart from a floor after the failure (3 s).
    floor = 2.0
    assert turn_hold(floor) > 1 + floor + 1.0
    site.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    site.route("/slow", Reply(body="too late", delay=8))
    settings = {"DOWNLOAD_TIMEOUT": 1}
    # The second worker is started first and held ready (its start-up, seconds on a loaded
    # host, out of the way); it goes once /slow has been sent, and waits for the turn.
    other = start_worker(
        {
            "redis": redis_server.url,
            "urls": [site.url("/next")],
            "settings": settings,
            "held_until": "fleet:go",
        }
    )
    wait_held(redis_server, 1)
    slow = start_worker(
        {"redis": redis_server.url, "urls": [site.url("/slow")], "settings": settings}
    )
    deadline = time.monotonic() + 30
    while not site.count("/slow") and time.monotonic() < deadline:
        time.sleep(0.005)
    release(redis_server)
    reports = [finish(slow), finish(other)]
    assert [h.path for h in site.hits()] == ["/robots.txt", "/slow", "/next"]
    assert site.count("/robots.txt") == 1
    _, sent, after = site.hits()
    # Failed after 1 s (DOWNLOAD_TIMEOUT): the next turn a floor later, 6 s after it was sent.
    assert 1 + floor - 0.05 <= after.time - sent.time <= 1 + floor + 0.6, after.time - sent.time
    assert reports[1]["received"] == [site.url("/next")]


def test_turn_and_lock_keys_left_without_a_ttl_hold_the_fleet_back_for_their_bound_only(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    """A turn key or a lock key without a TTL (written by hand, a buggy tool, a restore)
    once blocked its origin for good, the workers polling Redis a thousand times a second."""
    site = hosts[0]
    floor = 0.3
    site.robots(f"User-agent: *\nCrawl-delay: {floor}\n")
    client = redis_server.client()
    client.set(f"rerp:delay:{site.origin}", "stuck")
    client.set(f"rerp:lock:{site.origin}", "stuck")
    config = {"redis": redis_server.url, "settings": {"RERP_REDIS_LOCK_TIMEOUT": 2}}
    workers = [
        start_worker({**config, "urls": [site.url(f"/w{w}/p{i}") for i in range(4)]})
        for w in (0, 1)
    ]
    deadline = time.monotonic() + 30
    while client.pttl(f"rerp:lock:{site.origin}") == -1 and time.monotonic() < deadline:
        time.sleep(0.005)
    cut = time.monotonic()  # the first worker to look cut the lock to its timeout
    reports = [finish(w, timeout=60) for w in workers]
    assert sorted(pages(site)) == sorted(f"/w{w}/p{i}" for w in (0, 1) for i in range(4))
    assert all(r["finish_reason"] == "finished" for r in reports)
    hits = site.hits()
    # The lock was cut to RERP_REDIS_LOCK_TIMEOUT at the first look, then taken.
    assert hits[0].path == "/robots.txt" and site.count("/robots.txt") == 1
    assert hits[0].time - cut < 2 + 1.0, hits[0].time - cut
    assert short_gaps(hits, floor) == []
    stats = [r["stats"] for r in reports]
    assert sum(s.get("robotstxt/redis/repaired", 0) for s in stats) >= 1
    # No tight polling: a handful of Redis calls per page.
    round_trips = sum(s.get("robotstxt/redis/round_trips", 0) for s in stats)
    assert round_trips < 20 * 9, round_trips


def test_a_slow_down_hash_holding_an_absurd_cool_down_holds_its_origin_for_the_cap_only(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    site = hosts[0]
    site.robots("User-agent: *\nAllow: /\n")
    client = redis_server.client()
    seconds, _ = client.time()
    client.hset(f"rerp:slow:{site.origin}", "until", (seconds + 10**9) * 1000)
    max_wait = 1.5
    config = {"redis": redis_server.url, "settings": {"RERP_SLOWDOWN_MAX_WAIT": max_wait}}
    workers = [
        start_worker({**config, "urls": [site.url(f"/w{w}/p{i}") for i in range(3)]})
        for w in (0, 1)
    ]
    reports = [finish(w, timeout=60) for w in workers]
    assert sorted(pages(site)) == sorted(f"/w{w}/p{i}" for w in (0, 1) for i in range(3))
    hits = site.hits()
    first_page = next(h for h in hits if h.path != "/robots.txt")
    waited = first_page.time - hits[0].time
    assert max_wait - 0.3 <= waited <= max_wait + 2.0, waited
    assert all(r["finish_reason"] == "finished" for r in reports)
    # Cut in Redis at the first read: not a cool-down of RERP_SLOWDOWN_MAX_WAIT per read.
    assert all(h.time - hits[0].time <= 2 * max_wait + 2.0 for h in hits), [
        round(h.time - hits[0].time, 2) for h in hits
    ]


# -- slow-downs -----------------------------------------------------------------------------------


def test_three_workers_keep_a_cool_down_one_of_them_heard(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    site, healthy, _ = hosts
    site.robots("User-agent: *\nAllow: /\n")
    healthy.robots("User-agent: *\nAllow: /\n")
    lock = threading.Lock()
    answered: list[Hit] = []

    def slowed_mid_crawl(hit: Hit) -> Reply:
        with lock:
            senders = {h.path[:3] for h in site.hits() if h.path.startswith("/w")}
            if not answered and len(senders) == 3:  # every worker is sending by now
                answered.append(hit)
                return Reply(status=429, headers={"Retry-After": "2"})
        return Reply(body="ok")

    site.default = slowed_mid_crawl
    # Each worker its own URLs (Scrapy's scheduler), so that all three send to the site.
    urls = [
        [site.url(f"/w{w}/p{i}") for i in range(12)]
        + [healthy.url(f"/w{w}/h{i}") for i in range(4)]
        for w in range(3)
    ]
    settings = {"RETRY_ENABLED": True, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_DELAY": 0.1}
    workers = [
        start_worker({"redis": redis_server.url, "urls": mine, "settings": settings})
        for mine in urls
    ]
    reports = [finish(w) for w in workers]
    [slowed] = answered
    # What the other workers had sent before they could know of it reached the site within
    # a moment; then nothing until the time the site asked for.
    late = [round(h.time - slowed.time, 3) for h in site.hits() if h.time > slowed.time]
    assert [t for t in late if 0.25 < t < 2.0] == [], late
    expected = [f"/w{w}/p{i}" for w in range(3) for i in range(12)] + [slowed.path]
    assert sorted(pages(site)) == sorted(expected)
    for mine, report in zip(urls, reports, strict=True):
        assert sorted(report["received"]) == sorted(mine)
    stats = [r["stats"] for r in reports]
    assert sum(s.get("robotstxt/slowdown/cooldowns", 0) for s in stats) == 1
    # The two others heard it from the fleet (told at once, or read before sending).
    assert sum(1 for s in stats if s.get("robotstxt/slowdown/fleet_cooldowns")) == 2


def test_three_workers_share_a_raised_floor_and_settle_at_the_rate_the_site_accepts(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    site = hosts[0]
    site.robots("User-agent: *\nAllow: /\n")
    interval = 0.15  # the site answers 429 to a request sooner than this after the last one
    site.default = rate_limited(interval)
    urls = [[site.url(f"/w{w}/p{i}") for i in range(10)] for w in range(3)]
    settings = {
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 20,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0.02,
        "RERP_SLOWDOWN_START_FLOOR": 0.05,
        "RERP_SLOWDOWN_DECAY_AFTER": 8,
    }
    workers = [
        start_worker({"redis": redis_server.url, "urls": mine, "settings": settings})
        for mine in urls
    ]
    reports = [finish(w) for w in workers]
    for mine, report in zip(urls, reports, strict=True):
        assert sorted(report["received"]) == sorted(mine)
    accepted = [h for h in site.hits() if h.path != "/robots.txt" and h.status == 200]
    refused = [h for h in site.hits() if h.status == 429]
    # The fleet's floor, taken in turns by the three: the site's pace within a factor of 2.
    later = gaps(accepted[len(accepted) // 2 :])
    assert interval <= sorted(later)[len(later) // 2] <= 2 * interval + 0.03, later
    assert len(refused) <= 15, [round(h.time - refused[0].time, 2) for h in refused]
    stats = [r["stats"] for r in reports]
    assert max(s.get("robotstxt/slowdown/max_floor", 0) for s in stats) <= 2 * interval


def test_two_workers_share_one_download_of_an_origin_s_tdmrep_json(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    # RERP_USAGE names train-ai: each origin's tdmrep.json is read, once for the fleet, through
    # the same sharing as robots.txt (its own key), and both workers apply it.
    site = hosts[0]
    site.robots("User-agent: *\nAllow: /\n")
    tdmrep = '[{"location": "/reserved/*", "tdm-reservation": 1}]'
    site.route("/.well-known/tdmrep.json", Reply(body=tdmrep, delay=0.3))
    client = redis_server.client()
    client.delete("fleet:opened")
    workers = [
        start_worker(
            {
                "redis": redis_server.url,
                "urls": [
                    site.url(f"/{part}/w{worker}-{i}")
                    for part in ("reserved", "open")
                    for i in range(3)
                ],
                "barrier": 2,
                "settings": {"RERP_USAGE": "train-ai"},
            }
        )
        for worker in (0, 1)
    ]
    reports = [finish(w) for w in workers]
    assert site.count("/.well-known/tdmrep.json") == 1
    assert sum(r["stats"].get("robotstxt/tdmrep/request_count", 0) for r in reports) == 1
    assert sum(r["stats"].get("robotstxt/tdmrep/redis/shared", 0) for r in reports) >= 1
    # Each worker read the file for its own pages: three reserved, three not said of.
    for report in reports:
        assert len(report["received"]) == 6
        assert report["stats"].get("robotstxt/tdmrep/reserved/tdmrep.json") == 3
    # Every page waited for the file.
    tdmrep_at = site.hits("/.well-known/tdmrep.json")[0].time
    assert all(h.time > tdmrep_at for h in site.hits() if h.path.startswith(("/reserved", "/open")))


def test_two_workers_share_one_download_of_a_kind_registered_by_setting(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    # A kind from outside the package (tests/support/humans.py), registered by RERP_DOCUMENTS
    # alone: one download for the fleet, under its own key, and every page of both workers
    # carries it.
    site = hosts[0]
    site.robots("User-agent: *\nAllow: /\n")
    site.route("/humans.txt", Reply(body="Developer: Ada\n", delay=0.3))
    client = redis_server.client()
    client.delete("fleet:opened")
    settings = {"RERP_DOCUMENTS": ["tests.support.humans.humans_txt"]}
    workers = [
        start_worker(
            {
                "redis": redis_server.url,
                "urls": [site.url(f"/w{worker}-{i}") for i in range(4)],
                "barrier": 2,
                "settings": settings,
            }
        )
        for worker in (0, 1)
    ]
    reports = [finish(w) for w in workers]
    assert site.count("/humans.txt") == 1
    assert sum(r["stats"].get("robotstxt/humans/request_count", 0) for r in reports) == 1
    assert sum(r["stats"].get("robotstxt/humans/redis/shared", 0) for r in reports) >= 1
    for report in reports:
        assert len(report["received"]) == 4
        assert set(map(tuple, report["humans"].values())) == {("Developer: Ada",)}
    humans_at = site.hits("/humans.txt")[0].time
    assert all(h.time > humans_at for h in site.hits() if h.path.startswith("/w"))
    assert [key for key in client.keys("rerp:humans:*")] == [f"rerp:humans:{site.origin}".encode()]


def test_two_workers_share_one_download_of_an_rsl_licence_on_another_host(
    redis_server: RedisServer, hosts: list[Server]
) -> None:
    site, licences = hosts[0], hosts[1]
    licence = licences.url("/license.xml")
    site.robots(f"User-agent: *\nAllow: /\nLicense: {licence}\n")
    body = (
        '<rsl xmlns="https://rslstandard.org/rsl"><content url="/closed/*"><license>'
        '<prohibits type="usage">ai-train</prohibits></license></content></rsl>'
    )
    licences.route("/license.xml", Reply(body=body, delay=0.3))
    client = redis_server.client()
    client.delete("fleet:opened")
    workers = [
        start_worker(
            {
                "redis": redis_server.url,
                "urls": [site.url(f"/{part}/w{worker}") for part in ("open", "closed")],
                "barrier": 2,
                "settings": {"RERP_USAGE": "train-ai"},
            }
        )
        for worker in (0, 1)
    ]
    reports = [finish(w) for w in workers]
    assert licences.count("/license.xml") == 1
    assert sum(r["stats"].get("robotstxt/rsl/request_count", 0) for r in reports) == 1
    assert sum(r["stats"].get("robotstxt/rsl/redis/shared", 0) for r in reports) >= 1
    for report in reports:
        assert [url.split("/", 3)[3] for url in report["received"]] == [
            f"open/w{reports.index(report)}"
        ]
        assert report["stats"].get("robotstxt/usage/dropped/license") == 1
