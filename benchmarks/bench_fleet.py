"""A scrapy-redis fleet of 1, 2 and 3 workers sharing robots.txt and Crawl-delay on Redis.

One run starts a throwaway ``redis-server`` (loopback, no persistence) and ``--origins`` HTTP
servers on 127.0.0.2, 127.0.0.3, ... (one Scrapy download slot each) in this process's threads.
The first origin's robots.txt says ``Crawl-delay: --crawl-delay``; the others ask for no delay.
For each fleet size the start URLs (``--pages`` per origin) are pushed to Redis and that many
worker processes crawl them with scrapy-redis's scheduler and dupefilter and
``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``.

Per fleet size the report gives: pages per second (all pages over the wall time from the start
of the workers to the end of the last), robots.txt downloads per origin (the goal: exactly one
for the whole fleet), the smallest gap between two requests the polite origin received (the
goal: at least its Crawl-delay, robots.txt included), and Redis round trips per request: the
plugin's own (``robotstxt/redis/round_trips``) and Redis's total (scrapy-redis's queue and
dupefilter included, from ``INFO stats``).

Usage::

    pip install -e ".[bench]"          # and Debian's redis-server
    python benchmarks/bench_fleet.py --write-results
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine_description  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "FLEET_RESULTS.md"
START_KEY = "fleet:start_urls"


# --- the sites ----------------------------------------------------------------------------------


class Site:
    """One origin on its own loopback address: robots.txt, pages, and the times of requests."""

    def __init__(self, host: str, robots: str) -> None:
        self.robots = robots.encode()
        self.lock = threading.Lock()
        self.hits: list[tuple[float, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                with site.lock:
                    site.hits.append((time.monotonic(), self.path))
                body = site.robots if self.path == "/robots.txt" else b"<html>page</html>"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self) -> list[tuple[float, str]]:
        with self.lock:
            hits, self.hits = self.hits, []
        return hits


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


def worker(config: dict[str, Any]) -> None:
    from scrapy.crawler import CrawlerProcess
    from scrapy_redis.spiders import RedisSpider

    class FleetSpider(RedisSpider):
        name = "fleet"
        redis_key = START_KEY

        def parse(self, response: Any) -> None:
            pass

    process = CrawlerProcess(
        {
            "ADDONS": {"scrapy_rerp.Addon": 100},
            "RERP_CACHE": "scrapy_rerp.cache.RedisOriginCache",
            "REDIS_URL": config["redis"],
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,
            "MAX_IDLE_TIME_BEFORE_CLOSE": 2,
            "REDIS_START_URLS_BATCH_SIZE": 16,
            "CONCURRENT_REQUESTS": 32,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": config.get("log_level", "WARNING"),
        }
    )
    crawler = process.create_crawler(FleetSpider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(json.dumps({k: v for k, v in stats.items() if k.startswith("robotstxt/")}, default=str))


# --- the measurement ----------------------------------------------------------------------------


def run_fleet(
    size: int, sites: Sequence[Site], redis: Redis, pages: int, log_level: str = "WARNING"
) -> dict[str, Any]:
    redis.client.flushall()
    for site in sites:
        site.take()
    urls = [f"{s.origin}/p{i}" for i in range(pages) for s in sites]
    redis.client.rpush(START_KEY, *[json.dumps({"url": u}) for u in urls])
    commands_before = redis.commands()
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    children = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                json.dumps({"redis": redis.url, "log_level": log_level}),
            ],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(size)
    ]
    reports = []
    for child in children:
        out, _ = child.communicate(timeout=300)
        if child.returncode != 0:
            raise SystemExit(f"a worker failed with status {child.returncode}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    # The workers wait MAX_IDLE_TIME_BEFORE_CLOSE (2 s) on an empty queue before closing: the
    # crawl ended with the last page any server received.
    hits = [site.take() for site in sites]
    last = max(t for site_hits in hits for t, _ in site_hits)
    page_hits = [[t for t, p in h if p != "/robots.txt"] for h in hits]
    polite = sorted(t for t, _ in hits[0])
    return {
        "workers": size,
        "pages": sum(len(h) for h in page_hits),
        "expected_pages": len(urls),
        "seconds": last - started,
        "pages_per_s": sum(len(h) for h in page_hits) / (last - started),
        "robots_per_origin": [sum(1 for _, p in h if p == "/robots.txt") for h in hits],
        "polite_min_gap": min(b - a for a, b in zip(polite, polite[1:], strict=False)),
        "plugin_round_trips": sum(r.get("robotstxt/redis/round_trips", 0) for r in reports),
        "redis_commands": redis.commands() - commands_before,
        "shared": sum(r.get("robotstxt/redis/shared", 0) for r in reports),
    }


def render(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        "# Fleet benchmark results",
        "",
        "Written by `benchmarks/bench_fleet.py --write-results`.",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {machine_description()}",
        f"- Command: `python benchmarks/bench_fleet.py --origins {args.origins} --pages "
        f"{args.pages} --crawl-delay {args.crawl_delay} --write-results`",
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=10)
    parser.add_argument("--pages", type=int, default=20, help="pages per origin")
    parser.add_argument("--crawl-delay", type=float, default=0.5)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--log-level", default="WARNING", help="the workers' LOG_LEVEL")
    parser.add_argument("--write-results", action="store_true")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    sites = [
        Site(
            f"127.0.0.{n + 2}",
            f"User-agent: *\nCrawl-delay: {args.crawl_delay}\n" if n == 0 else "User-agent: *\n",
        )
        for n in range(args.origins)
    ]
    redis = Redis()
    try:
        results = [run_fleet(n, sites, redis, args.pages, args.log_level) for n in args.workers]
    finally:
        redis.stop()
    report = render(results, args)
    print(report)
    if args.write_results:
        args.results.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
