"""A scrapy-redis fleet of 1, 2 and 3 workers sharing robots.txt and Crawl-delay on Redis.

One run starts a throwaway ``redis-server`` (loopback, no persistence) and HTTP servers on
127.0.0.2, 127.0.0.3, ... (one Scrapy download slot each) in this process's threads. The first
origin's robots.txt says ``Crawl-delay: --crawl-delay`` (the *floor*); the others ask for no
delay. Every worker is a process of its own, a scrapy-redis ``RedisSpider`` with
``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``, and names itself in the
``X-Fleet-Worker`` header of its requests, which the servers record with the time each request
arrived and was answered. Two feeds:

``--feed preloaded`` (the default)
    For each fleet size the start URLs (``--pages`` per origin, ``--origins`` origins) are in
    the Redis list ``fleet:start_urls`` before the workers start; scrapy-redis's scheduler and
    dupefilter share the requests. Per fleet size the report gives: pages per second (all
    pages over the wall time from the start of the workers to the end of the last), robots.txt
    downloads per origin (the goal: exactly one for the whole fleet), the smallest gap between
    two requests the polite origin received (the goal: at least its Crawl-delay, robots.txt
    included), and Redis round trips per request: the plugin's own
    (``robotstxt/redis/round_trips``) and Redis's total (scrapy-redis's queue and dupefilter
    included, from ``INFO stats``).

``--feed redis_key``
    The polite origin alone. The workers start idle (their ``start()`` yields nothing) on one
    shared ``redis_key``, with scrapy-redis's scheduler and dupefilter,
    ``SCHEDULER_PERSIST = True`` and start URLs taken 3 at a time; once every worker has opened
    its spider (each pushes its id to ``fleet:opened`` and waits for the others), the benchmark
    pushes the ``--pages`` URLs to the key, and scrapy-redis's ``spider_idle`` handler feeds
    them to the workers. Each run also crawls the same URLs with a baseline: plain Scrapy, one
    worker, robots.txt obeyed by Scrapy's own middleware (no scrapy_rerp),
    ``DOWNLOAD_DELAY`` = the floor, ``RANDOMIZE_DOWNLOAD_DELAY = False``. Per setup (baseline,
    then each fleet size) and run, from the server's timestamps: the time from the robots.txt
    answer to the first page; the pace, pages x floor / time from the first page to the last
    (the goal: at least 0.9); the gaps under the floor between consecutive requests of the
    origin (robots.txt included; a gap counts when shorter than the floor less 10 ms, the
    server's clock's share), listed with the two workers and their times (the goal: none);
    and the plugin's Redis commands per page (``robotstxt/redis/round_trips`` of all workers
    over the pages). ``--runs N`` repeats the whole and counts the runs without a gap under
    the floor.

``--autothrottle`` turns Scrapy's AutoThrottle on in every worker, the baseline's included.
``--idle-check S`` has the scrapy-redis workers check their idleness every S seconds, as Scrapy's
engine does on its 5 s heartbeat: they take fed URLs and close sooner, which the smoke tests
want; it changes the Redis commands counted and, fed, the time from the push to the first page.
``--json PATH`` writes every figure (and, for ``redis_key``, the server's record of each
request) as JSON; ``--write-results`` writes the report to ``benchmarks/FLEET_RESULTS.md``
(``preloaded``: the whole file; ``redis_key``: a section appended to it).

Usage::

    pip install -e ".[bench]"          # and Debian's redis-server
    python benchmarks/bench_fleet.py --write-results
    python benchmarks/bench_fleet.py --feed redis_key --workers 2 3 --crawl-delay 1 --runs 2
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_description  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "FLEET_RESULTS.md"
START_KEY = "fleet:start_urls"
#: Where each idle-fed worker pushes its id once its spider is open (``--feed redis_key``).
OPENED_KEY = "fleet:opened"
#: The request header in which each worker names itself.
WORKER_HEADER = "X-Fleet-Worker"
#: Start URLs a RedisSpider takes from the key at a time (``--feed redis_key``).
BATCH_SIZE = 3
#: Seconds an idle-fed worker waits on an empty key before closing.
IDLE_FED_MAX_IDLE = 3
#: A gap counts as under the floor when shorter than the floor less this (the server's clock).
CLOCK_TOLERANCE = 0.010
#: The goal for pages x floor / (last page - first page).
PACE_GOAL = 0.9
#: How long the benchmark waits for every worker to open its spider.
OPEN_TIMEOUT = 60.0


# --- the sites ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One request a site received, on this process's ``time.monotonic()``."""

    at: float  # the request arrived (its headers were read)
    answered: float  # the answer was written
    path: str
    worker: str  # the X-Fleet-Worker header, "?" without one


class Site:
    """One origin on its own loopback address: robots.txt, pages, and the record of requests."""

    def __init__(self, host: str, robots: str) -> None:
        self.robots = robots.encode()
        self.lock = threading.Lock()
        self.hits: list[Hit] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                at = time.monotonic()
                body = site.robots if self.path == "/robots.txt" else b"<html>page</html>"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                hit = Hit(at, time.monotonic(), self.path, self.headers.get(WORKER_HEADER, "?"))
                with site.lock:
                    site.hits.append(hit)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self) -> list[Hit]:
        """The requests received since the last call, in the order they arrived."""
        with self.lock:
            hits, self.hits = self.hits, []
        return sorted(hits, key=lambda hit: hit.at)


def make_sites(count: int, crawl_delay: float) -> list[Site]:
    """*count* origins; the first (the polite one) asks for ``Crawl-delay: crawl_delay``."""
    return [
        Site(
            f"127.0.0.{n + 2}",
            f"User-agent: *\nCrawl-delay: {crawl_delay}\n" if n == 0 else "User-agent: *\n",
        )
        for n in range(count)
    ]


# --- redis --------------------------------------------------------------------------------------


class Redis:
    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is needed (Debian: apt-get install redis-server)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", ""],
            stdout=subprocess.DEVNULL,
        )
        import redis

        self.client = redis.Redis.from_url(self.url)
        for _ in range(100):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def commands(self) -> int:
        return int(self.client.info("stats")["total_commands_processed"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


# --- one worker (a child process) ---------------------------------------------------------------


def worker_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The Scrapy settings of a worker of *config*'s ``role``: ``preloaded`` and ``idle_fed``
    (scrapy-redis and scrapy_rerp on Redis), or ``baseline`` (Scrapy alone)."""
    from scrapy.settings import default_settings

    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DEFAULT_REQUEST_HEADERS": {
            **default_settings.DEFAULT_REQUEST_HEADERS,
            WORKER_HEADER: config["id"],
        },
        "AUTOTHROTTLE_ENABLED": config.get("autothrottle", False),
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": config.get("log_level", "WARNING"),
    }
    if config["role"] == "baseline":
        # No random delay: RANDOMIZE_DOWNLOAD_DELAY = False, which Scrapy 2.19 deprecates (with
        # a warning) for DOWNLOAD_DELAY_JITTER = 0.
        if hasattr(default_settings, "DOWNLOAD_DELAY_JITTER"):
            settings["DOWNLOAD_DELAY_JITTER"] = 0
        else:
            settings["RANDOMIZE_DOWNLOAD_DELAY"] = False
        return {**settings, "ROBOTSTXT_OBEY": True, "DOWNLOAD_DELAY": config["floor"]}
    settings.update(
        {
            "ADDONS": {"scrapy_rerp.Addon": 100},
            "RERP_CACHE": "scrapy_rerp.cache.RedisOriginCache",
            "REDIS_URL": config["redis"],
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,
        }
    )
    if config["role"] == "idle_fed":
        settings["MAX_IDLE_TIME_BEFORE_CLOSE"] = IDLE_FED_MAX_IDLE
        settings["REDIS_START_URLS_BATCH_SIZE"] = BATCH_SIZE
    else:
        settings["MAX_IDLE_TIME_BEFORE_CLOSE"] = 2
        settings["REDIS_START_URLS_BATCH_SIZE"] = 16
    return settings


def wait_for_the_fleet(redis_url: str, worker_id: str, size: int) -> Any:
    """A spider_opened handler: push *worker_id* to ``fleet:opened``, then wait until *size*
    workers have, so that the fleet starts with every worker open and idle."""

    async def opened(spider: Any, **kwargs: Any) -> None:
        import asyncio

        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_url)
        await client.rpush(OPENED_KEY, worker_id)
        deadline = time.monotonic() + OPEN_TIMEOUT
        while await client.llen(OPENED_KEY) < size and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await client.aclose()
        # scrapy-redis counts the idle time (MAX_IDLE_TIME_BEFORE_CLOSE) from when it last saw
        # start URLs, at first from when the class was defined: from now on instead.
        spider.spider_idle_start_time = int(time.time())

    return opened


def close_when_idle(crawler: Any, seconds: float) -> Any:
    """A coroutine function that does what Scrapy's engine does on its heartbeat, every
    *seconds* (``--idle-check``): when the engine is idle, send ``spider_idle`` and close the
    spider as finished unless a handler keeps it open (scrapy-redis until
    MAX_IDLE_TIME_BEFORE_CLOSE, scrapy_rerp while requests are parked)."""

    async def watch() -> None:
        import asyncio

        from scrapy import signals
        from scrapy.exceptions import CloseSpider, DontCloseSpider
        from twisted.python.failure import Failure

        closed: list[bool] = []
        crawler.signals.connect(lambda: closed.append(True), signals.spider_closed, weak=False)
        while not closed:
            await asyncio.sleep(seconds)
            if closed or not crawler.engine.spider_is_idle():
                continue
            answers = crawler.signals.send_catch_log(
                signals.spider_idle,
                spider=crawler.spider,
                dont_log=(DontCloseSpider, CloseSpider),
            )
            kept_open = any(
                isinstance(answer, Failure) and isinstance(answer.value, DontCloseSpider)
                for _, answer in answers
            )
            if not kept_open and crawler.engine.spider_is_idle():
                await close_spider(crawler)
                return

    return watch


async def close_spider(crawler: Any) -> None:
    """Close the crawler's spider as finished: ``close_spider_async`` from Scrapy 2.14 on."""
    engine = crawler.engine
    if hasattr(engine, "close_spider_async"):
        await engine.close_spider_async(reason="finished")
    else:
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(engine.close_spider(crawler.spider, "finished"))


def worker(config: dict[str, Any]) -> None:
    """Crawl as *config* says, then print the robots.txt stats as one JSON line."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy_redis.spiders import RedisSpider

    class FleetSpider(RedisSpider):
        name = "fleet"
        redis_key = START_KEY

        def parse(self, response: Any) -> None:
            pass

    class IdleFedSpider(FleetSpider):
        # scrapy-redis 0.9 takes its batch size from this or CONCURRENT_REQUESTS, not from
        # REDIS_START_URLS_BATCH_SIZE (which it documents as deprecated).
        redis_batch_size = BATCH_SIZE

        async def start(self) -> Any:
            # Nothing at start: scrapy-redis's spider_idle handler feeds the spider.
            return
            yield

    class BaselineSpider(scrapy.Spider):
        name = "baseline"

        async def start(self) -> Any:
            for url in config["urls"]:
                yield scrapy.Request(url)

        def parse(self, response: Any) -> None:
            pass

    spider_class = {
        "preloaded": FleetSpider,
        "idle_fed": IdleFedSpider,
        "baseline": BaselineSpider,
    }[config["role"]]
    process = CrawlerProcess(worker_settings(config))
    crawler = process.create_crawler(spider_class)
    fleet_wait = None
    if config["role"] == "idle_fed":
        fleet_wait = wait_for_the_fleet(config["redis"], config["id"], config["size"])
    watch = None
    if config.get("idle_check") is not None and config["role"] != "baseline":
        watch = close_when_idle(crawler, config["idle_check"])
    watching: list[Any] = []  # the watch's task, kept: the event loop holds it weakly

    async def opened(spider: Any, **kwargs: Any) -> None:
        import asyncio

        if fleet_wait is not None:
            await fleet_wait(spider)
        if watch is not None:
            # After the fleet's wait, which starts scrapy-redis's idle time afresh: a check
            # before it could close a worker that is idle only because it was not fed yet.
            watching.append(asyncio.get_running_loop().create_task(watch()))

    if fleet_wait is not None or watch is not None:
        crawler.signals.connect(opened, signal=signals.spider_opened, weak=False)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(json.dumps({k: v for k, v in stats.items() if k.startswith("robotstxt/")}, default=str))


def start_worker(config: dict[str, Any]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(config)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )


def worker_reports(children: Sequence[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    """Wait for every worker; what each printed (its robots.txt stats)."""
    reports = []
    for child in children:
        out, _ = child.communicate(timeout=300)
        if child.returncode != 0:
            raise SystemExit(f"a worker failed with status {child.returncode}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def round_trips(reports: Sequence[dict[str, Any]]) -> int:
    return sum(int(r.get("robotstxt/redis/round_trips", 0)) for r in reports)


# --- --feed preloaded ---------------------------------------------------------------------------


def run_fleet(
    size: int,
    sites: Sequence[Site],
    redis: Redis,
    pages: int,
    log_level: str = "WARNING",
    autothrottle: bool = False,
    idle_check: float | None = None,
) -> dict[str, Any]:
    redis.client.flushall()
    for site in sites:
        site.take()
    urls = [f"{s.origin}/p{i}" for i in range(pages) for s in sites]
    redis.client.rpush(START_KEY, *[json.dumps({"url": u}) for u in urls])
    commands_before = redis.commands()
    started = time.monotonic()
    config = {
        "role": "preloaded",
        "redis": redis.url,
        "log_level": log_level,
        "autothrottle": autothrottle,
        "idle_check": idle_check,
    }
    children = [start_worker({**config, "id": f"w{n + 1}"}) for n in range(size)]
    reports = worker_reports(children)
    # The workers wait MAX_IDLE_TIME_BEFORE_CLOSE (2 s) on an empty queue before closing: the
    # crawl ended with the last page any server received.
    hits = [site.take() for site in sites]
    last = max(hit.at for site_hits in hits for hit in site_hits)
    pages_received = sum(1 for site_hits in hits for hit in site_hits if hit.path != "/robots.txt")
    polite = [hit.at for hit in hits[0]]
    return {
        "workers": size,
        "pages": pages_received,
        "expected_pages": len(urls),
        "seconds": last - started,
        "pages_per_s": pages_received / (last - started),
        "robots_per_origin": [
            sum(1 for h in site_hits if h.path == "/robots.txt") for site_hits in hits
        ],
        "polite_min_gap": min(b - a for a, b in zip(polite, polite[1:], strict=False)),
        "plugin_round_trips": round_trips(reports),
        "redis_commands": redis.commands() - commands_before,
        "shared": sum(r.get("robotstxt/redis/shared", 0) for r in reports),
    }


def render(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    autothrottle = " --autothrottle" if args.autothrottle else ""
    lines = [
        "# Fleet benchmark results",
        "",
        "Written by `benchmarks/bench_fleet.py --write-results`.",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {machine_description()}",
        f"- Command: `python benchmarks/bench_fleet.py --origins {args.origins} --pages "
        f"{args.pages} --crawl-delay {args.crawl_delay}{autothrottle} --write-results`",
        "",
        f"Site: {args.origins} origins on 127.0.0.2 and up (one download slot each), {args.pages} "
        f"pages each; the first origin's robots.txt says `Crawl-delay: {args.crawl_delay}`, the "
        "others ask for none. Workers: scrapy-redis scheduler and dupefilter, "
        "`RERP_CACHE = scrapy_rerp.cache.RedisOriginCache`, CONCURRENT_REQUESTS 32, "
        "CONCURRENT_REQUESTS_PER_DOMAIN 8. The polite origin sets the pace of every fleet size "
        f"({args.pages} pages at least {args.crawl_delay} s apart, whatever the number of "
        "workers): pages/s shows what the fleet adds, not what it could do on faster sites.",
        "",
        "| workers | pages | seconds | pages/s | robots.txt downloads per origin | smallest gap "
        "at the polite origin (s) | plugin's Redis round trips per page | all Redis commands "
        "per page |",
        "|--:|--:|--:|--:|--|--:|--:|--:|",
    ]
    for r in results:
        per_origin = r["robots_per_origin"]
        downloads = "exactly 1 each" if set(per_origin) == {1} else f"{per_origin}"
        lines.append(
            f"| {r['workers']} | {r['pages']}/{r['expected_pages']} | {r['seconds']:.2f} | "
            f"{r['pages_per_s']:.1f} | {downloads} | {r['polite_min_gap']:.3f} | "
            f"{r['plugin_round_trips'] / r['pages']:.3f} | {r['redis_commands'] / r['pages']:.2f} |"
        )
    held = all(r["polite_min_gap"] >= args.crawl_delay * 0.95 for r in results)
    once = all(set(r["robots_per_origin"]) == {1} for r in results)
    lines += [
        "",
        f"One robots.txt download per origin for the whole fleet: {'yes' if once else 'NO'}. "
        f"Crawl-delay held across the fleet (every gap >= 0.95 x {args.crawl_delay} s): "
        f"{'yes' if held else 'NO'}.",
        "",
    ]
    return "\n".join(lines)


# --- --feed redis_key: the figures of one crawl of the polite origin ----------------------------


def gaps_under_floor(hits: Sequence[Hit], floor: float) -> list[dict[str, Any]]:
    """Consecutive requests (by arrival) less than ``floor - CLOCK_TOLERANCE`` apart, with their
    workers, paths and times (seconds from the first request of *hits*)."""
    start = hits[0].at if hits else 0.0
    return [
        {
            "gap": b.at - a.at,
            "workers": [a.worker, b.worker],
            "paths": [a.path, b.path],
            "at": [a.at - start, b.at - start],
        }
        for a, b in zip(hits, hits[1:], strict=False)
        if b.at - a.at < floor - CLOCK_TOLERANCE
    ]


def crawl_figures(
    hits: Sequence[Hit], floor: float, paths: Sequence[str], workers: Sequence[str]
) -> dict[str, Any]:
    """What the server's record of one crawl of the polite origin says (*hits* by arrival),
    *workers* being the ids of the crawl's workers."""
    robots = [hit for hit in hits if hit.path == "/robots.txt"]
    pages = [hit for hit in hits if hit.path != "/robots.txt"]
    span = pages[-1].at - pages[0].at if len(pages) > 1 else 0.0
    gaps = [b.at - a.at for a, b in zip(hits, hits[1:], strict=False)]
    start = hits[0].at if hits else 0.0
    return {
        "pages": len(pages),
        "expected_pages": len(paths),
        "every_page_once": Counter(hit.path for hit in pages) == Counter(paths),
        "pages_per_worker": {w: sum(hit.worker == w for hit in pages) for w in workers},
        "robots_downloads": len(robots),
        "robots_to_first_page": pages[0].at - robots[0].answered if robots and pages else None,
        "first_to_last_page": span,
        "pace": len(pages) * floor / span if span > 0 else None,
        "smallest_gap": min(gaps) if gaps else None,
        "gaps_under_floor": len(gaps_under_floor(hits, floor)),
        "short_gaps": gaps_under_floor(hits, floor),
        # The server's record, in seconds from the first request: [arrived, answered, path,
        # worker].
        "hits": [[h.at - start, h.answered - start, h.path, h.worker] for h in hits],
    }


def run_idle_fed(size: int, site: Site, redis: Redis, args: argparse.Namespace) -> dict[str, Any]:
    """A fleet of *size* idle RedisSpiders, fed the polite origin's pages once all are open."""
    redis.client.flushall()
    site.take()
    paths = [f"/p{i}" for i in range(args.pages)]
    config = {
        "role": "idle_fed",
        "redis": redis.url,
        "size": size,
        "log_level": args.log_level,
        "autothrottle": args.autothrottle,
        "idle_check": args.idle_check,
    }
    ids = [f"w{n + 1}" for n in range(size)]
    children = [start_worker({**config, "id": worker_id}) for worker_id in ids]
    deadline = time.monotonic() + OPEN_TIMEOUT
    while redis.client.llen(OPENED_KEY) < size:
        if any(child.poll() is not None for child in children) or time.monotonic() > deadline:
            for child in children:
                child.kill()
                child.wait()
            raise SystemExit(f"the fleet of {size} did not open: a worker ended or hung")
        time.sleep(0.01)
    redis.client.rpush(START_KEY, *[json.dumps({"url": site.origin + p}) for p in paths])
    pushed = time.monotonic()
    commands_before = redis.commands()  # the crawl's, not the wait for the fleet's
    reports = worker_reports(children)
    hits = site.take()
    figures = crawl_figures(hits, args.crawl_delay, paths, ids)
    pages = figures["pages"]
    first_page = next((hit.at for hit in hits if hit.path != "/robots.txt"), None)
    return {
        "setup": f"{size} workers",
        "workers": size,
        **figures,
        "push_to_first_page": first_page - pushed if first_page is not None else None,
        "plugin_round_trips": round_trips(reports),
        "plugin_commands_per_page": round_trips(reports) / pages if pages else None,
        "redis_commands_per_page": (redis.commands() - commands_before) / pages if pages else None,
    }


def run_baseline(site: Site, args: argparse.Namespace) -> dict[str, Any]:
    """One plain Scrapy worker on the same pages: Scrapy's robots.txt, DOWNLOAD_DELAY = floor."""
    site.take()
    paths = [f"/p{i}" for i in range(args.pages)]
    config = {
        "role": "baseline",
        "id": "baseline",
        "urls": [site.origin + p for p in paths],
        "floor": args.crawl_delay,
        "log_level": args.log_level,
        "autothrottle": args.autothrottle,
    }
    worker_reports([start_worker(config)])
    return {
        "setup": "baseline",
        "workers": 1,
        **crawl_figures(site.take(), args.crawl_delay, paths, ["baseline"]),
        "plugin_round_trips": 0,
        "plugin_commands_per_page": None,  # no scrapy_rerp, no Redis
        "redis_commands_per_page": None,
    }


def summarize(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per setup, over the runs: how many had no gap under the floor, and the pace."""
    by_setup: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for crawl in run["crawls"]:
            by_setup.setdefault(crawl["setup"], []).append(crawl)
    summary = []
    for setup, crawls in by_setup.items():
        paces = [c["pace"] for c in crawls if c["pace"] is not None]
        summary.append(
            {
                "setup": setup,
                "runs": len(crawls),
                "runs_without_gaps_under_floor": sum(c["gaps_under_floor"] == 0 for c in crawls),
                "gaps_under_floor": sum(c["gaps_under_floor"] for c in crawls),
                "every_page_once": all(c["every_page_once"] for c in crawls),
                "lowest_pace": min(paces) if paces else None,
                "median_pace": statistics.median(paces) if paces else None,
            }
        )
    return summary


def seconds(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render_idle_fed(
    runs: Sequence[dict[str, Any]],
    summary: Sequence[dict[str, Any]],
    command: str,
    floor: float,
    autothrottle: bool,
) -> str:
    pages = runs[0]["crawls"][0]["expected_pages"]
    throttle = (
        "AutoThrottle on in every worker, baseline included (Scrapy's AUTOTHROTTLE_* defaults). "
        if autothrottle
        else ""
    )
    lines = [
        "## Idle-fed fleet (`--feed redis_key`)",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {machine_description()}",
        f"- Command: `{command}`",
        "",
        f"One origin whose robots.txt says `Crawl-delay: {floor}` (the floor), {pages} pages. "
        "Fleet: scrapy-redis `RedisSpider`s started idle on one `redis_key`, fed once every "
        f"worker's spider is open, {BATCH_SIZE} start URLs at a time, scrapy-redis scheduler "
        "and dupefilter, `SCHEDULER_PERSIST = True`, "
        "`RERP_CACHE = scrapy_rerp.cache.RedisOriginCache`. Baseline: Scrapy alone, one worker, "
        f"`ROBOTSTXT_OBEY`, `DOWNLOAD_DELAY = {floor}`, `RANDOMIZE_DOWNLOAD_DELAY = False`. "
        f"{throttle}Times are the server's. Pace: pages x floor / (last page - first page), "
        f"the goal >= {PACE_GOAL}. A gap under the floor: two consecutive requests (robots.txt "
        f"included) less than the floor - {CLOCK_TOLERANCE * 1000:.0f} ms apart, the goal none.",
        "",
        "| run | setup | pages | pages per worker | robots.txt downloads | robots.txt answer to "
        "first page (s) | pace | gaps under the floor | smallest gap (s) | plugin's Redis "
        "commands per page |",
        "|--:|--|--:|--|--:|--:|--:|--:|--:|--:|",
    ]
    for run in runs:
        for c in run["crawls"]:
            once = "" if c["every_page_once"] else " (not once each)"
            per_worker = ", ".join(f"{w} {n}" for w, n in c["pages_per_worker"].items())
            lines.append(
                f"| {run['run']} | {c['setup']} | {c['pages']}/{c['expected_pages']}{once} | "
                f"{per_worker} | {c['robots_downloads']} | {seconds(c['robots_to_first_page'])} | "
                f"{seconds(c['pace'], 2)} | {c['gaps_under_floor']} | "
                f"{seconds(c['smallest_gap'])} | {seconds(c['plugin_commands_per_page'], 2)} |"
            )
    lines += ["", "Gaps under the floor (seconds from the run's first request to the origin):", ""]
    short = [
        f"- run {run['run']}, {c['setup']}: {g['workers'][0]} at {g['at'][0]:.3f} "
        f"({g['paths'][0]}), then {g['workers'][1]} at {g['at'][1]:.3f} ({g['paths'][1]}): "
        f"{g['gap']:.3f} s"
        for run in runs
        for c in run["crawls"]
        for g in c["short_gaps"]
    ]
    lines += short or ["- none"]
    lines += [
        "",
        "| setup | runs with zero gaps under the floor | gaps under the floor in all | "
        "lowest pace | median pace |",
        "|--|--:|--:|--:|--:|",
    ]
    for s in summary:
        lines.append(
            f"| {s['setup']} | {s['runs_without_gaps_under_floor']}/{s['runs']} | "
            f"{s['gaps_under_floor']} | {seconds(s['lowest_pace'], 2)} | "
            f"{seconds(s['median_pace'], 2)} |"
        )
    lines.append("")
    return "\n".join(lines)


# --- the command --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--feed",
        choices=["preloaded", "redis_key"],
        default="preloaded",
        help="preloaded: the start URLs are in Redis before the workers start; redis_key: "
        "idle workers on one redis_key, fed once all are open, against a baseline",
    )
    parser.add_argument("--origins", type=int, default=10, help="origins (preloaded feed)")
    parser.add_argument("--pages", type=int, default=20, help="pages per origin")
    parser.add_argument("--crawl-delay", type=float, default=0.5, help="the polite origin's")
    parser.add_argument(
        "--workers", "--sizes", dest="workers", type=int, nargs="+", default=[1, 2, 3],
        help="fleet sizes",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=1, help="repeats (redis_key feed)")
    parser.add_argument("--autothrottle", action="store_true", help="AutoThrottle in workers")
    parser.add_argument("--log-level", default="WARNING", help="the workers' LOG_LEVEL")
    parser.add_argument(
        "--idle-check",
        type=float,
        default=None,
        metavar="S",
        help="the scrapy-redis workers look at their idleness every S s, not only on Scrapy's "
        "5 s heartbeat: they take fed URLs and close sooner (smoke runs; it changes the Redis "
        "commands counted and, fed, the time to the first page)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--write-results", action="store_true")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    if args.runs != 1 and args.feed != "redis_key":
        parser.error("--runs repeats the redis_key feed only")
    if args.idle_check is not None and args.idle_check <= 0:
        parser.error("--idle-check needs a positive number of seconds")
    if args.runs < 1 or args.pages < 2 or min(args.workers) < 1:
        parser.error("--runs and --workers need at least 1, --pages at least 2")
    redis = Redis()
    try:
        if args.feed == "redis_key":
            (site,) = make_sites(1, args.crawl_delay)
            runs = [
                {
                    "run": n + 1,
                    "crawls": [
                        run_baseline(site, args),
                        *(run_idle_fed(size, site, redis, args) for size in args.workers),
                    ],
                }
                for n in range(args.runs)
            ]
        else:
            sites = make_sites(args.origins, args.crawl_delay)
            results = [
                run_fleet(
                    n,
                    sites,
                    redis,
                    args.pages,
                    args.log_level,
                    args.autothrottle,
                    args.idle_check,
                )
                for n in args.workers
            ]
    finally:
        redis.stop()
    if args.feed == "redis_key":
        summary = summarize(runs)
        command = shlex.join(["python", "benchmarks/bench_fleet.py", *argv])
        report = render_idle_fed(runs, summary, command, args.crawl_delay, args.autothrottle)
        figures: dict[str, Any] = {"runs": runs, "summary": summary}
    else:
        report = render(results, args)
        figures = {"results": results}
    print(report)
    if args.json:
        settings = {"feed": args.feed, "floor": args.crawl_delay, "pages": args.pages}
        settings |= {"workers": args.workers, "autothrottle": args.autothrottle}
        args.json.write_text(json.dumps({**settings, **figures}, indent=2) + "\n")
    if args.write_results and args.feed == "redis_key":
        with args.results.open("a", encoding="utf-8") as out:
            out.write("\n" + report)
    elif args.write_results:
        args.results.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
