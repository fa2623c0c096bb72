"""Sites that say "slow down": scrapy_rerp against Scrapy with AutoThrottle alone, in one run.

Two local sites, served from this process's threads, each on its own loopback address (so its
own Scrapy download slot), every request recorded with its arrival time:

* ``rate``: a site that accepts at most ``--rate`` requests a second: it answers 429, without
  ``Retry-After``, to a request that comes less than ``1 / --rate`` seconds after the last one it
  accepted;
* ``retry-after``: a site under maintenance: it answers its first page request 429 with
  ``Retry-After: --retry-after`` (seconds), and every request until then 429 with what is left
  of it; then it serves every page.

Each way crawls ``--pages`` pages of one site in a fresh subprocess (Scrapy's reactor cannot
restart), with the same settings but these:

* ``scrapy``: Scrapy as it comes (robots.txt obeyed by its own middleware), for reference;
* ``autothrottle``: Scrapy with ``AUTOTHROTTLE_ENABLED`` (its defaults: a 5 s start delay,
  target concurrency 1) and robots.txt obeyed by its own middleware: Scrapy's own answer to a
  site that asks to slow down;
* ``scrapy_rerp``: ``ADDONS = {"scrapy_rerp.Addon": 100}`` with its slow-down defaults, no
  AutoThrottle;
* ``scrapy_rerp+autothrottle``: both.

Every crawl has Scrapy's RetryMiddleware with ``RETRY_TIMES = --retry-times`` (so that pages are
not lost to the budget) and Scrapy's default concurrency (16 requests, 8 per site) and
``DOWNLOAD_DELAY`` 0. Per crawl the report gives what the site received: requests, 429 answers,
the seconds from the first page request to the last answer, pages the spider got; for the
``rate`` site the time to settle (from the first page request to the first answer of the first
window of 20 answers from which no window of 20 has more than 3 429s; "never" when the crawl
ends first) and the rate of accepted requests over the second half of the crawl, against the
site's; for the ``retry-after`` site the requests that reached it while it had asked to be left
alone (after the first 429, before the time it named), and of those the ones that came more than
:data:`HEARD` after the first 429 (the others left together with the request it answered: with
no delay, Scrapy 2.19 starts every request queued in a slot at once).

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_slowdown.py --write-results
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The shared report helpers sit beside the script, which also runs as a child process.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_write_results_argument, write_results  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "SLOWDOWN_RESULTS.md"
RESULTS_TITLE = "Slow-down benchmark results"
WAYS: dict[str, str] = {
    "scrapy": "Scrapy",
    "autothrottle": "Scrapy + AutoThrottle",
    "scrapy_rerp": "scrapy_rerp (Addon)",
    "scrapy_rerp+autothrottle": "scrapy_rerp + AutoThrottle",
}
RATE, RETRY_AFTER = "rate", "retry-after"
#: Settings of every crawl; the ways add theirs (way_settings).
CRAWL_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "RETRY_ENABLED": True,
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_TIMEOUT": 30,
}
#: Settled: from then on, no window of SETTLE_WINDOW answers has more than SETTLE_REFUSED 429s.
SETTLE_WINDOW, SETTLE_REFUSED = 20, 3
CHILD_TIMEOUT = 600.0  # seconds; a guard against a hung crawl
#: Seconds after a site's first 429 by which the crawler has heard it (a loopback answer takes
#: about a millisecond): a request that arrives later left after the crawler knew.
HEARD = 0.1


def way_settings(way: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if way.startswith("scrapy_rerp"):
        settings["ADDONS"] = {"scrapy_rerp.Addon": 100}
    if way.endswith("autothrottle"):
        settings["AUTOTHROTTLE_ENABLED"] = True
    return settings


# --- the sites ----------------------------------------------------------------------------------


@dataclass
class Hit:
    time: float  # time.monotonic() when the request line was read
    path: str
    status: int


class _Server(ThreadingHTTPServer):
    # A crawl opens many connections at once: the default backlog (5) would drop SYNs, and the
    # clients would wait a second for TCP to send them again.
    request_queue_size = 1024


@dataclass
class Site:
    """A site on its own loopback address that answers as ``kind`` says."""

    host: str
    kind: str
    rate: float
    retry_after: int
    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_accepted: float = float("-inf")
    closed_until: float | None = None  # retry-after: the end of the maintenance (monotonic)

    def __post_init__(self) -> None:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                status, headers, body = site.answer(self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = _Server((self.host, 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://{self.host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        now = time.monotonic()
        if path == "/robots.txt":
            with self.lock:
                self.hits.append(Hit(now, path, 200))
            return 200, {}, b"User-agent: *\nDisallow: /private/\n"
        with self.lock:
            status, headers = self._status(now)
            self.hits.append(Hit(now, path, status))
        return status, headers, b"<html>page</html>" if status == 200 else b""

    def _status(self, now: float) -> tuple[int, dict[str, str]]:
        if self.kind == RATE:
            if now - self.last_accepted < 1 / self.rate:
                return 429, {}
            self.last_accepted = now
            return 200, {}
        if self.closed_until is None:
            self.closed_until = now + self.retry_after
        left = self.closed_until - now
        if left > 0:
            return 429, {"Retry-After": str(max(1, round(left)))}
        return 200, {}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- one crawl (a child process) ----------------------------------------------------------------


def child(config: dict[str, Any]) -> None:
    import scrapy
    from scrapy.crawler import CrawlerProcess

    failures: dict[str, int] = {}

    class Spider(scrapy.Spider):
        name = "slowdown"
        received = 0
        failed = 0

        async def start(self) -> Any:
            for url in config["urls"]:
                yield scrapy.Request(url, errback=self.errback)

        def parse(self, response: Any) -> None:
            type(self).received += 1

        def errback(self, failure: Any) -> None:
            type(self).failed += 1
            response = getattr(failure.value, "response", None)
            what = failure.type.__name__
            if response is not None:
                what += f" {response.status}, retry_times {response.meta.get('retry_times', 0)}"
            failures[what] = failures.get(what, 0) + 1

    process = CrawlerProcess(
        {**CRAWL_SETTINGS, "RETRY_TIMES": config["retry_times"], **way_settings(config["way"])}
    )
    crawler = process.create_crawler(Spider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(
        json.dumps(
            {
                "received": Spider.received,
                "failed": Spider.failed,
                "failures": failures,
                "stats": {
                    k: v
                    for k, v in stats.items()
                    if k.startswith(("retry/", "robotstxt/slowdown/"))
                },
            },
            default=str,
        )
    )


def run_crawl(way: str, site: Site, pages: int, retry_times: int) -> dict[str, Any]:
    with site.lock:
        site.hits = []
        site.last_accepted = float("-inf")
        site.closed_until = None
    urls = [f"{site.origin}/p{i}" for i in range(pages)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            json.dumps({"way": way, "urls": urls, "retry_times": retry_times}),
        ],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {way} crawl failed:\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    with site.lock:
        hits = [h for h in site.hits if h.path != "/robots.txt"]
    return {"way": way, "site": site.kind, "pages": pages, "hits": hits, **report}


# --- what the site saw --------------------------------------------------------------------------


def settled_at(hits: Sequence[Hit]) -> float | None:
    """Seconds from the first request to the first answer of the first window of
    SETTLE_WINDOW answers from which no later window has more than SETTLE_REFUSED 429s; None
    when there is no such window (it never settled, or the crawl was too short to tell)."""
    refused = [h.status == 429 for h in hits]
    if len(hits) < SETTLE_WINDOW:
        return None
    windows = [sum(refused[i : i + SETTLE_WINDOW]) for i in range(len(hits) - SETTLE_WINDOW + 1)]
    start = len(windows)
    while start > 0 and windows[start - 1] <= SETTLE_REFUSED:
        start -= 1
    if start == len(windows):
        return None
    return hits[start].time - hits[0].time


def measure(result: dict[str, Any], site: Site) -> dict[str, Any]:
    hits: list[Hit] = result["hits"]
    refused = [h for h in hits if h.status == 429]
    seconds = hits[-1].time - hits[0].time if hits else 0.0
    facts: dict[str, Any] = {
        "requests": len(hits),
        "refused": len(refused),
        "seconds": seconds,
        "received": result["received"],
        "failed": result["failed"],
        "pages": result["pages"],
        "failures": result["failures"],
        "max_floor": result["stats"].get("robotstxt/slowdown/max_floor"),
        "cooldowns": result["stats"].get("robotstxt/slowdown/cooldowns", 0),
    }
    if site.kind == RATE:
        settle = settled_at(hits)
        facts["settle"] = settle
        half = hits[0].time + seconds / 2
        second_half = [h for h in hits if h.time >= half and h.status == 200]
        span = second_half[-1].time - second_half[0].time if len(second_half) > 1 else 0.0
        facts["rate_second_half"] = (len(second_half) - 1) / span if span else None
    else:
        during = []
        if refused:
            first = refused[0].time
            during = [h.time - first for h in hits if first < h.time < first + site.retry_after]
        facts["during"] = len(during)
        facts["during_heard"] = sum(1 for t in during if t > HEARD)
    return facts


# --- the report ---------------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f}"


def _lost(results: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """A line per way that lost pages: how they failed (their errback's failure)."""
    lines = []
    for way, f in results:
        if f["failures"]:
            how = ", ".join(f"{n} x {what}" for what, n in sorted(f["failures"].items()))
            lines.append(f"Pages lost by {WAYS[way]}: {how}.")
    return ["", *lines] if lines else []


def render(results: list[tuple[str, str, dict[str, Any]]], args: argparse.Namespace) -> str:
    rate = [(w, f) for w, s, f in results if s == RATE]
    maintenance = [(w, f) for w, s, f in results if s == RETRY_AFTER]
    lines = [
        f"## A site that accepts {args.rate:g} requests a second (429 without Retry-After)",
        "",
        "| way | pages | requests | 429s | seconds | time to settle (s) | accepted/s, second "
        "half | largest raised floor (s) |",
        "|--|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for way, f in rate:
        after = "-" if f["rate_second_half"] is None else f"{f['rate_second_half']:.2f}"
        floor = "-" if f["max_floor"] is None else f"{f['max_floor']:g}"
        lines.append(
            f"| {WAYS[way]} | {f['received']}/{f['pages']} | {f['requests']} | {f['refused']} | "
            f"{f['seconds']:.1f} | {_seconds(f['settle'])} | {after} | {floor} |"
        )
    lines += [
        "",
        f"The site's rate: {args.rate:g}/s ({args.pages} pages take {args.pages / args.rate:g} s "
        "at least); no way gets more from it, what differs is how many 429s it takes and how "
        f"many pages are lost. Settled: from then on no {SETTLE_WINDOW} answers in a row hold "
        f"more than {SETTLE_REFUSED} 429s.",
        *_lost(rate),
        "",
        f"## A site under maintenance for {args.retry_after} s (429 with Retry-After)",
        "",
        "| way | pages | requests | 429s | requests during the maintenance | of those, "
        f"more than {HEARD:g} s after its first 429 | seconds | cool-downs |",
        "|--|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for way, f in maintenance:
        lines.append(
            f"| {WAYS[way]} | {f['received']}/{f['pages']} | {f['requests']} | {f['refused']} | "
            f"{f['during']} | {f['during_heard']} | {f['seconds']:.1f} | {f['cooldowns']} |"
        )
    lines += [
        "",
        "Requests during the maintenance: those the site received after its first 429 and "
        f"before the time that 429 named. Those within {HEARD:g} s of it left together with "
        "the request it answered (with no delay, Scrapy 2.19 starts every request queued in a "
        "slot at once); the others left after the crawler had the answer.",
        *_lost(maintenance),
        "",
    ]
    by_way = {w: f for w, f in rate}
    peer, ours = by_way.get("autothrottle"), by_way.get("scrapy_rerp")
    if peer and ours and ours["refused"]:
        lines.append(
            f"429s, scrapy_rerp against AutoThrottle alone on the rate-limited site: "
            f"{ours['refused'] / max(peer['refused'], 1):.3f}x "
            f"({ours['refused']} against {peer['refused']})."
        )
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="pages crawled per site")
    parser.add_argument("--rate", type=float, default=4.0, help="requests a second the site takes")
    parser.add_argument("--retry-after", type=int, default=5, help="the maintenance, seconds")
    parser.add_argument("--retry-times", type=int, default=10, help="RETRY_TIMES of every crawl")
    parser.add_argument("--ways", nargs="+", choices=list(WAYS), default=list(WAYS))
    parser.add_argument("--results", type=Path, default=None, help=argparse.SUPPRESS)
    add_write_results_argument(parser, DEFAULT_RESULTS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0
    sites = {
        RATE: Site("127.0.0.2", RATE, args.rate, args.retry_after),
        RETRY_AFTER: Site("127.0.0.3", RETRY_AFTER, args.rate, args.retry_after),
    }
    results: list[tuple[str, str, dict[str, Any]]] = []
    try:
        for kind, site in sites.items():
            for way in args.ways:
                crawl = run_crawl(way, site, args.pages, args.retry_times)
                results.append((way, kind, measure(crawl, site)))
                print(f"{kind:12} {way:26} {results[-1][2]}", file=sys.stderr)
    finally:
        for site in sites.values():
            site.stop()
    report = render(results, args)
    print(report)
    if args.write_results:
        shown_argv = list(argv if argv is not None else sys.argv[1:])
        write_results(
            args.results or args.write_results,
            RESULTS_TITLE,
            __file__,
            report,
            [a for a in shown_argv if a != "--child"],
            facts=[f"RETRY_TIMES {args.retry_times}, {args.pages} pages per crawl"],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
