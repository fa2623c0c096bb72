"""A local Scrapy crawl run five ways: robots.txt off, Scrapy's own middleware, scrapy_rerp,
scrapy_rerp without its page directives, and an idle downloader middleware (the floor).

One run starts ``--origins`` HTTP servers on loopback addresses (127.0.0.1, 127.0.0.2, ...,
each on its own port, so distinct origins and, as Scrapy keys download slots by host, distinct
slots; ``--one-host`` puts them all on 127.0.0.1, one slot for the whole crawl) in a separate
process, so that serving costs the crawler no CPU time. Each origin serves a small
HTML page for any path and its own robots.txt: a ``*`` group with a few Disallow rules, Allow
exceptions, two wildcard rules and some origin-specific lines, plus two groups for other robots;
no Crawl-delay, so that politeness does not set the pace. A small, known share of the
``--pages`` URLs is disallowed.

Each crawl runs in a fresh subprocess (Scrapy's reactor cannot restart in-process) whose spider
yields every URL from ``start()``, round-robin over the origins, with the same settings but
robots.txt handling:

* ``off``: ``ROBOTSTXT_OBEY = False``;
* ``scrapy``: ``ROBOTSTXT_OBEY = True``, Scrapy's ``RobotsTxtMiddleware`` and its default parser,
  Protego;
* ``scrapy_rerp``: ``ADDONS = {"scrapy_rerp.Addon": 100}``;
* ``scrapy_rerp_robots``: the same with ``RERP_PAGE_HEADER`` and ``RERP_PAGE_META`` off, the
  robots.txt layer alone (the page directives middleware reads every response's headers and
  HTML head); the report compares it with the others under a heading of its own;
* ``idle``: ``ROBOTSTXT_OBEY = False`` and, where the robots.txt middleware would be, a
  downloader middleware whose ``process_request`` returns None: the floor under any robots.txt
  middleware.

The crawl window runs from ``spider_opened`` to the first ``spider_idle`` (start-up and shutdown
left out). Per way the report gives the median over ``--repeats`` runs (each repeat starts with
another way) of

* pages/s: pages downloaded for the spider in the window, per wall-clock second;
* CPU s per 1,000 requests: the crawler process's user + system CPU time in the window
  (``resource.getrusage(RUSAGE_SELF)``), per 1,000 of the spider's requests (the same URL list
  for every way; each request is downloaded or blocked);
* GC s per 1,000 requests: the CPU time of the garbage collector's runs in the window (timed by
  ``gc.callbacks``), and its collections per generation. Python's collector walks the objects
  it tracks, touching memory far apart, so its CPU time grows by more than its instructions do
  (docs/benchmarks.rst says what a blocked request leaves it);

and the facts, from the crawler's stats and from what the servers received: requests blocked by
robots.txt, disallowed pages that reached a server, robots.txt downloads. Memory per cached
origin is measured once, outside the timed runs (see ``memory_child``).

A full run then measures a broad crawl with a few troubled origins, scrapy_rerp only (see
``measure_troubled``; ``--troubled-only`` runs just this part, ``--quick`` skips it): healthy
origins alone, with a few whose robots.txt answers 503, and with a few whose robots.txt answers
late. Requests waiting for robots.txt are parked outside Scrapy's downloader, so the healthy
origins' pages should come in nearly as fast as alone (goal: at most ``TROUBLED_GOAL`` times),
and no troubled origin's page may be downloaded. ``--write-results`` keeps the part of the
results file that the run did not measure.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_crawl.py --write-results
    python benchmarks/bench_crawl.py --troubled-only --write-results
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import inspect
import json
import multiprocessing
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# The shared report helpers sit beside the script, which also runs as a child process.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import (  # noqa: E402
    add_write_results_argument,
    machine_description,
    write_results,
)
from _spiders import counting_spider  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "CRAWL_RESULTS.md"
RESULTS_TITLE = "Crawl benchmark results"
WAYS: dict[str, str] = {
    "off": "ROBOTSTXT_OBEY off",
    "scrapy": "Scrapy's RobotsTxtMiddleware + Protego",
    "scrapy_rerp": "scrapy_rerp (Addon)",
    # The robots.txt layer alone: the Addon without its page directives middleware (X-Robots-Tag
    # and robots meta tags read on every response), whose cost the difference shows.
    "scrapy_rerp_robots": "scrapy_rerp (Addon), page directives off",
    # The floor of any robots.txt middleware: a downloader middleware at its place whose
    # process_request does nothing. What it costs against "off" is Scrapy's price for one
    # more middleware, and the size of the CPU time's noise.
    "idle": "an idle downloader middleware",
}
OFF, SCRAPY, RERP, RERP_ROBOTS, IDLE = WAYS
#: The ways without a robots.txt middleware (nothing of it to time).
WITHOUT_ROBOTS = (OFF, IDLE)
DEFAULT_PAGES, DEFAULT_ORIGINS = 10_000, 50
QUICK_PAGES, QUICK_ORIGINS = 500, 10
#: Goals for scrapy_rerp (issue 3): at most 2% of throughput lost against no robots.txt at
#: all, and never slower than Scrapy's own middleware.
THROUGHPUT_VS_OFF = 0.98
THROUGHPUT_VS_SCRAPY = 1.0
#: One URL in DISALLOW_EVERY (after the warm-up) is disallowed by robots.txt (--disallow-every).
DISALLOW_EVERY = 33
#: Settings of every crawl; the ways differ only in robots.txt handling.
CRAWL_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 64,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_TIMEOUT": 60,
}
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl
#: How much longer a crawl may take under valgrind (``--instructions``).
INSTRUCTIONS_SLOWDOWN = 8

#: The troubled-origins crawl (see ``measure_troubled``): healthy origins, troubled origins
#: among them, pages per origin. The scenario measured before parking existed.
TROUBLED_HEALTHY, TROUBLED_ORIGINS, TROUBLED_PAGES = 36, 4, 10
SLOW_ROBOTS_DELAY = 5.0  # seconds before a slow origin's robots.txt answers
#: Goal: with the troubled origins, the healthy origins' pages are in within 1.3x the time
#: they take alone.
TROUBLED_GOAL = 1.3
#: Before parking, on the same scenario with the dead origins: 41 s, against 1.6 s alone.
TROUBLED_BEFORE = (41.0, 1.6)
#: Settings of every troubled-origins crawl: scrapy_rerp only, a broad crawl's concurrency.
TROUBLED_SETTINGS: dict[str, Any] = {
    **CRAWL_SETTINGS,
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "RERP_UNREACHABLE_MAX_WAIT": 20,
    "ADDONS": {"scrapy_rerp.Addon": 100},
}
#: Guards against a hung troubled crawl: the crawl closes itself (CLOSESPIDER_TIMEOUT) after
#: TROUBLED_GUARD seconds, and its process is killed after TROUBLED_CHILD_TIMEOUT.
TROUBLED_GUARD = 60.0
TROUBLED_CHILD_TIMEOUT = 180.0
#: The spider's close reason once every healthy page is in.
HEALTHY_DONE = "healthy_done"
#: robots.txt behaviour of a site: answers at once, 503, or after SLOW_ROBOTS_DELAY.
ROBOTS_OK, ROBOTS_DEAD, ROBOTS_SLOW = "ok", "dead", "slow"
#: The troubled-origins crawls: the healthy origins alone, with the dead ones, with the slow ones.
ALONE = "alone"
CASES: tuple[str, ...] = (ALONE, ROBOTS_DEAD, ROBOTS_SLOW)
TROUBLED_HEADING = "## Troubled origins"


# --- the sites --------------------------------------------------------------------------------


def robots_txt(index: int, netloc: str) -> str:
    """The robots.txt of origin ``index``: shared rules, wildcards, origin-specific lines."""
    extra = "".join(f"Disallow: /archive-{index}-{k}/\n" for k in range((index % 5) * 3))
    return (
        f"# robots.txt of site {index}\n"
        "User-agent: BadBot\n"
        "Disallow: /\n"
        "\n"
        "User-agent: Googlebot\n"
        "User-agent: bingbot\n"
        "Disallow: /private/\n"
        "Disallow: /search\n"
        "\n"
        "User-agent: *\n"
        "Disallow: /admin/\n"
        "Disallow: /cart\n"
        "Disallow: /search\n"
        "Disallow: /private/\n"
        "Allow: /private/press/\n"
        "Disallow: /*?sessionid=\n"
        "Disallow: /*.pdf$\n"
        f"Disallow: /tmp-{index}/\n"
        f"Disallow: /section-{index % 7}/drafts/\n"
        "Allow: /public/\n"
        f"{extra}"
        "\n"
        f"Sitemap: http://{netloc}/sitemap.xml\n"
    )


_ALLOWED_PATHS: tuple[Callable[[int, int], str], ...] = (
    lambda i, j: f"/products/{j}",
    lambda i, j: f"/blog/2024/{j}-a-post",
    lambda i, j: f"/public/{j}.html",
    lambda i, j: f"/private/press/{j}.html",  # Allow beats the shorter Disallow
    lambda i, j: f"/docs/report-{j}.pdf?download=1",  # "$" ends the pattern: not matched
    lambda i, j: f"/category/{j % 17}?page={j}",
    lambda i, j: f"/section-{i % 7}/{j}",
    lambda i, j: f"/item/{j}?color=red",
)
_DISALLOWED_PATHS: tuple[Callable[[int, int], str], ...] = (
    lambda i, j: f"/private/{j}.html",
    lambda i, j: f"/search?q=term{j}",
    lambda i, j: f"/docs/report-{j}.pdf",
    lambda i, j: f"/cart/{j}",
    lambda i, j: f"/tmp-{i}/{j}",
    lambda i, j: f"/item/{j}?sessionid=abc{j}",
    lambda i, j: f"/admin/{j}",
    lambda i, j: f"/section-{i % 7}/drafts/{j}",
)


def warmup_rounds(origins: int, concurrency: int) -> int:
    """Rounds over the origins whose URLs are all allowed.

    Scrapy 2.19's middleware lets through every request but the first that waits for a
    robots.txt download (see docs/status-policy.rst), so the first requests to an origin are kept
    allowed: both robots-aware ways then block exactly the same URLs.
    """
    return max(3, -(-2 * concurrency // origins))


def host_of(index: int, one_host: bool) -> str:
    """The loopback address of origin ``index``: 127.0.0.1, 127.0.0.2, ... (all on 127/8)."""
    return "127.0.0.1" if one_host else f"127.0.{index // 250}.{index % 250 + 1}"


def plan(
    netlocs: Sequence[str], pages: int, concurrency: int, disallow_every: int = DISALLOW_EVERY
) -> list[tuple[str, bool]]:
    """The spider's URLs, round-robin over the origins, each with "disallowed by robots.txt".

    One URL in ``disallow_every`` (after the warm-up) is disallowed; none with 0.
    """
    origins = len(netlocs)
    warmup = warmup_rounds(origins, concurrency)
    urls: list[tuple[str, bool]] = []
    rounds = -(-pages // origins)
    for j in range(rounds):
        for i, netloc in enumerate(netlocs):
            if len(urls) == pages:
                return urls
            if j == 0:
                path, disallowed = "/", False
            elif j >= warmup and disallow_every and (j * 7 + i) % disallow_every == 0:
                path, disallowed = _DISALLOWED_PATHS[(j + i) % len(_DISALLOWED_PATHS)](i, j), True
            else:
                path, disallowed = _ALLOWED_PATHS[(j + i) % len(_ALLOWED_PATHS)](i, j), False
            urls.append((f"http://{netloc}{path}", disallowed))
    return urls


def page(path: str) -> bytes:
    """The HTML page every site serves at *path* (benchmarks/bench_page_layer.py scrapes it too)."""
    links = "".join(f'<li><a href="{path.rstrip("/")}/{k}">item {k}</a></li>' for k in range(8))
    return (
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>Page</title></head><body>"
        f"<h1>{path}</h1><p>{'Lorem ipsum dolor sit amet. ' * 12}</p><ul>{links}</ul>"
        "</body></html>"
    ).encode()


def _response(body: bytes, content_type: str, status: str = "200 OK") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


class _Site:
    """One origin: its replies, and what it received (touched by the event loop only).

    ``robots``: its robots.txt answers at once (``ROBOTS_OK``), with a 503 (``ROBOTS_DEAD``), or
    after ``slow_delay`` seconds (``ROBOTS_SLOW``).
    """

    def __init__(
        self, index: int, netloc: str, robots: str = ROBOTS_OK, slow_delay: float = 0.0
    ) -> None:
        if robots == ROBOTS_DEAD:
            self.robots = _response(b"", "text/plain", "503 Service Unavailable")
        else:
            body = robots_txt(index, netloc).encode()
            self.robots = _response(body, "text/plain; charset=utf-8")
        self.robots_delay = slow_delay if robots == ROBOTS_SLOW else 0.0
        self.disallowed: set[bytes] = set()
        self.counts = [0, 0, 0, 0]  # robots.txt, pages, disallowed pages, connections

    def reply(self, target: bytes) -> tuple[bytes, float]:
        """The reply to a GET of ``target``, and the seconds to wait before sending it."""
        if target == b"/robots.txt":
            self.counts[0] += 1
            return self.robots, self.robots_delay
        self.counts[1] += 1
        if target in self.disallowed:
            self.counts[2] += 1
        return _response(page(target.decode("latin-1")), "text/html; charset=utf-8"), 0.0


#: Seconds after which a server closes a keep-alive connection that carried nothing (Apache's
#: default): with 10,000 origins the crawler's idle connections, one per origin, would otherwise
#: take the server process past its limit of open files.
IDLE_CLOSE = 5.0


class _HTTP(asyncio.Protocol):
    """Just enough HTTP/1.1 for a crawler: GET, keep-alive, no request bodies."""

    def __init__(self, site: _Site) -> None:
        self.site = site
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        # A delayed reply is pending: requests behind it on this connection wait their turn,
        # so that replies keep the order of the requests.
        self.held = False
        self.idle: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.site.counts[3] += 1
        self._idle_from_now()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.idle is not None:
            self.idle.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._answer()
        self._idle_from_now()

    def _idle_from_now(self) -> None:
        if self.idle is not None:
            self.idle.cancel()
        self.idle = asyncio.get_running_loop().call_later(IDLE_CLOSE, self._close_idle)

    def _close_idle(self) -> None:
        if self.transport is not None and not self.held:
            self.transport.close()

    def _answer(self) -> None:
        assert self.transport is not None
        while not self.held and not self.transport.is_closing():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            request_line = head.split(b"\r\n", 1)[0].split(b" ")
            target = request_line[1] if len(request_line) > 1 else b"/"
            reply, delay = self.site.reply(target)
            close = b"connection: close" in head.lower()
            if delay:
                # A timer, not a sleep: the loop keeps serving every other connection.
                self.held = True
                asyncio.get_running_loop().call_later(delay, self._send_late, reply, close)
                return
            self._send(reply, close)

    def _send(self, reply: bytes, close: bool) -> None:
        assert self.transport is not None
        if self.transport.is_closing():  # the crawler hung up first (e.g. its crawl closed)
            return
        self.transport.write(reply)
        if close:
            self.transport.close()

    def _send_late(self, reply: bytes, close: bool) -> None:
        self.held = False
        self._send(reply, close)
        self._answer()
        self._idle_from_now()


def serve(
    conn: Connection,
    origins: int,
    pages: int,
    concurrency: int,
    one_host: bool,
    every: int,
    robots: Sequence[str] = (),
    slow_delay: float = 0.0,
) -> None:
    """The server process: ``origins`` servers, then commands from ``conn`` until "stop".

    ``robots[i]`` is the robots.txt behaviour of origin ``i`` (``ROBOTS_OK`` if absent).
    """

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sites: list[_Site] = []
        servers = []
        for i in range(origins):
            holder: list[_Site] = []
            server = await loop.create_server(
                lambda holder=holder: _HTTP(holder[0]), host_of(i, one_host), 0, backlog=1024
            )
            host, port = server.sockets[0].getsockname()[:2]
            behaviour = robots[i] if i < len(robots) else ROBOTS_OK
            holder.append(_Site(i, f"{host}:{port}", behaviour, slow_delay))
            sites.append(holder[0])
            servers.append(server)
        netlocs = ["{}:{}".format(*s.sockets[0].getsockname()[:2]) for s in servers]
        by_netloc = dict(zip(netlocs, sites, strict=True))
        for url, disallowed in plan(netlocs, pages, concurrency, every):
            if disallowed:
                parts = urlsplit(url)
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                by_netloc[parts.netloc].disallowed.add(target.encode())
        done = loop.create_future()

        def commands() -> None:
            conn.send(netlocs)
            while True:
                command = conn.recv()
                if command == "stop":
                    loop.call_soon_threadsafe(done.set_result, None)
                    return
                future = asyncio.run_coroutine_threadsafe(_command(sites, command), loop)
                conn.send(future.result())

        threading.Thread(target=commands, daemon=True).start()
        await done
        for server in servers:
            server.close()

    asyncio.run(main())


async def _command(sites: Sequence[_Site], command: str) -> list[list[int]]:
    counts = [list(site.counts) for site in sites]
    if command == "reset":
        for site in sites:
            site.counts = [0, 0, 0, 0]
    return counts


class Servers:
    """The server process, seen from the benchmark."""

    def __init__(
        self,
        origins: int,
        pages: int,
        concurrency: int,
        one_host: bool,
        every: int,
        robots: Sequence[str] = (),
        slow_delay: float = 0.0,
    ) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._process = multiprocessing.Process(
            target=serve,
            args=(child, origins, pages, concurrency, one_host, every, robots, slow_delay),
            daemon=True,
        )
        self._process.start()
        self.netlocs: list[str] = self._conn.recv()

    def reset(self) -> None:
        self._conn.send("reset")
        self._conn.recv()

    def per_site(self) -> list[list[int]]:
        """Per origin: robots.txt requests, pages, disallowed pages, TCP connections."""
        self._conn.send("counts")
        per_site: list[list[int]] = self._conn.recv()
        return per_site

    def counts(self) -> dict[str, int]:
        per_site = self.per_site()
        return {
            "robots_downloads": sum(c[0] for c in per_site),
            "robots_max_per_origin": max(c[0] for c in per_site),
            "robots_origins": sum(1 for c in per_site if c[0]),
            "pages": sum(c[1] for c in per_site),
            "disallowed_pages": sum(c[2] for c in per_site),
            "connections": sum(c[3] for c in per_site),
        }

    def stop(self) -> None:
        self._conn.send("stop")
        self._process.join(10)
        if self._process.is_alive():
            self._process.terminate()


# --- one crawl (the child process) ------------------------------------------------------------


def _cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class IdleMiddleware:
    """The ``idle`` way's downloader middleware: where Scrapy's RobotsTxtMiddleware sits
    (priority 100), it lets every request through."""

    def process_request(self, request: Any, spider: Any = None) -> None:
        return None


class _GcClock:
    """The garbage collector's CPU time and collections per generation while ``on`` (the
    crawl window), from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.on = False
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started
            self.collections[info["generation"]] += 1


class _Timed:
    """Runs a coroutine and adds the CPU time of its steps (not its waits) to ``totals[0]``."""

    __slots__ = ("coro", "totals")

    def __init__(self, coro: Coroutine[Any, Any, Any], totals: list[float]) -> None:
        self.coro = coro
        self.totals = totals

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self.coro.__await__()
        clock, totals = time.thread_time, self.totals
        value: Any = None
        error: BaseException | None = None
        while True:
            start = clock()
            try:
                step = inner.send(value) if error is None else inner.throw(error)
            except StopIteration as stop:
                totals[0] += clock() - start
                return stop.value
            except BaseException:
                totals[0] += clock() - start
                raise
            totals[0] += clock() - start
            try:
                value, error = (yield step), None
            except BaseException as exc:  # thrown in by the awaiting task: pass it on
                value, error = None, exc


def time_robots_middleware(crawler: Any, totals: list[float]) -> bool:
    """Wrap the robots.txt middleware's ``process_request`` to add up its CPU time."""
    manager = crawler.engine.downloader.middleware
    methods = manager.methods["process_request"]
    for index, method in enumerate(methods):
        owner = getattr(method, "__self__", None)
        if type(owner).__name__ != "RobotsTxtMiddleware":
            continue

        def timed(request: Any, spider: Any = None, method: Any = method) -> Any:
            start = time.thread_time()
            try:
                # Scrapy 2.13 passes the spider to every middleware; its own requires it.
                if spider is None:
                    result = method(request=request)
                else:
                    result = method(request=request, spider=spider)
            finally:
                totals[0] += time.thread_time() - start
            totals[1] += 1
            return _Timed(result, totals) if inspect.iscoroutine(result) else result

        methods[index] = timed
        return True
    return False


def deep_size(root: object) -> int:
    """Bytes of every object reachable from ``root`` (classes, modules, functions left out)."""
    from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType

    skip = (type, ModuleType, FunctionType, BuiltinFunctionType, MethodType)
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    way = config["way"]
    planned = plan(config["netlocs"], config["pages"], config["concurrency"], config["every"])
    urls = [url for url, _ in planned]
    settings = {**CRAWL_SETTINGS, "CONCURRENT_REQUESTS": config["concurrency"]}
    settings["LOG_LEVEL"] = config["log_level"]
    if way in WITHOUT_ROBOTS:
        settings["ROBOTSTXT_OBEY"] = False
        if way == IDLE:  # this script is the child's __main__
            settings["DOWNLOADER_MIDDLEWARES"] = {f"{__name__}.IdleMiddleware": 100}
    elif way == SCRAPY:
        settings["ROBOTSTXT_OBEY"] = True
    else:
        settings["ADDONS"] = {"scrapy_rerp.Addon": 100}
        if way == RERP_ROBOTS:
            settings["RERP_PAGE_HEADER"] = settings["RERP_PAGE_META"] = False

    window: dict[str, float] = {}
    middleware = [0.0, 0]  # CPU seconds in the robots.txt middleware's process_request, calls
    collector = _GcClock()
    gc.callbacks.append(collector)
    downloader_middlewares: list[str] = []  # their class names, for the facts
    memory: dict[str, int] = {}

    BenchSpider = counting_spider(urls)

    def opened(spider: scrapy.Spider) -> None:
        # Timing the middleware costs CPU time of its own: only in the runs that ask for it,
        # never in those whose CPU time is compared.
        if config.get("time_middleware") and not time_robots_middleware(crawler, middleware):
            raise RuntimeError("no robots.txt middleware in the downloader")
        window["wall0"], window["cpu0"] = time.perf_counter(), _cpu_seconds()
        collector.on = True

    def idle(spider: scrapy.Spider) -> None:
        if "wall1" not in window:
            window["wall1"], window["cpu1"] = time.perf_counter(), _cpu_seconds()
            collector.on = False

    def closed(spider: scrapy.Spider) -> None:
        # After the window: the size of the robots.txt cache the crawl built.
        assert crawler.engine is not None
        for mw in crawler.engine.downloader.middleware.middlewares:
            downloader_middlewares.append(type(mw).__name__)
            # scrapy_rerp: a MemoryOriginCache behind the origin service's FailoverCache.
            origins = getattr(mw, "origins", None)
            cache = getattr(getattr(origins, "cache", None), "backend", None)
            parsers = getattr(mw, "_parsers", None)  # Scrapy: netloc -> RobotParser
            if cache is not None and hasattr(cache, "_entries"):
                memory["origins"] = len(cache._entries)
                memory["bytes"] = deep_size(cache._entries)
            elif isinstance(parsers, dict):
                memory["origins"] = len(parsers)
                memory["bytes"] = deep_size(parsers)

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(idle, signal=signals.spider_idle)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()

    spider = crawler.spider
    assert isinstance(spider, BenchSpider)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    result = {
        "way": way,
        "requests": len(urls),
        "pages": spider.pages,
        "ignored": spider.ignored,
        "errors": spider.errors,
        "blocked": stats.get("robotstxt/forbidden", 0),
        "robots_requests": stats.get("robotstxt/request_count", 0),
        "wall": window["wall1"] - window["wall0"],
        "cpu": window["cpu1"] - window["cpu0"],
        "gc_cpu": collector.seconds,
        "gc_collections": collector.collections,
        "downloader_middlewares": downloader_middlewares,
        "cache_origins": memory.get("origins"),
        "cache_bytes": memory.get("bytes"),
        "middleware_cpu": middleware[0],
        "middleware_calls": middleware[1],
    }
    print("RESULT " + json.dumps(result), flush=True)


def run_crawl(
    way: str,
    netlocs: Sequence[str],
    args: argparse.Namespace,
    *,
    time_middleware: bool = False,
    pages: int | None = None,
    prefix: Sequence[str] = (),
) -> dict[str, Any]:
    config = {
        "way": way,
        "netlocs": list(netlocs),
        "pages": pages or args.pages,
        "concurrency": args.concurrency,
        "every": args.disallow_every,
        "log_level": args.log_level,
        "time_middleware": time_middleware,
    }
    timeout = CHILD_TIMEOUT * (INSTRUCTIONS_SLOWDOWN if prefix else 1)
    return run_child("--crawl-child", config, f"the {way} crawl", timeout, prefix)


def run_child(
    flag: str,
    config: dict[str, Any],
    what: str,
    timeout: float,
    prefix: Sequence[str] = (),
) -> dict[str, Any]:
    """Run this script with ``flag`` in a fresh process (under ``prefix``, e.g. valgrind), at
    most ``timeout`` s; its RESULT. The child reads ``config`` from a file: with thousands of
    origins it is too long for a command line (``OSError: [Errno 7] Argument list too long``)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="bench-crawl-") as file:
        json.dump(config, file)
        file.flush()
        return _run_child(flag, file.name, what, timeout, prefix)


def _run_child(
    flag: str, config_path: str, what: str, timeout: float, prefix: Sequence[str]
) -> dict[str, Any]:
    command = [*prefix, sys.executable, str(Path(__file__).resolve()), flag, config_path]
    # Under valgrind (counting instructions): one hash seed for every run, so that set and
    # dict orders, and with them the crawl's order, are the same in each; counts otherwise
    # move by a few tenths of a percent between runs of the same crawl.
    env = {**os.environ, "PYTHONHASHSEED": "0"} if prefix else None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as expired:  # the child is killed by now
        stderr = expired.stderr or b""
        tail = (stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr)[-3000:]
        raise SystemExit(f"{what} did not end within {timeout:g} s:\n{tail}") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    if done.stderr.strip():
        sys.stderr.write(done.stderr)
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return result


# --- memory per cached origin (a child process, untimed) --------------------------------------


def memory_child(config: dict[str, Any]) -> None:
    """Retained bytes per origin of parsed robots.txt in a cache, by tracemalloc.

    A fresh process, so that nothing parsed earlier (interned patterns, compiled globs)
    hides an allocation. Per parser: parse every origin's robots.txt as the middleware does,
    keep the result in the structure the middleware keeps (scrapy_rerp: a ``RobotsEntry`` in a
    ``MemoryOriginCache``; Scrapy: a ``ProtegoRobotParser`` in a dict), answer one check per
    origin with Scrapy's user agent (so lazily compiled state counts), collect garbage and
    divide what is still allocated by the number of origins.
    """
    import re
    import tracemalloc

    from scrapy.robotstxt import ProtegoRobotParser
    from scrapy.settings.default_settings import USER_AGENT

    from scrapy_rerp.cache import MemoryOriginCache, RobotsEntry
    from scrapy_rerp.core.body import parse_body

    netlocs: list[str] = config["netlocs"]
    bodies = [robots_txt(i, netloc).encode() for i, netloc in enumerate(netlocs)]
    probe = [f"http://{netloc}/private/1.html" for netloc in netlocs]

    def rerp() -> object:
        cache = MemoryOriginCache(10_000)
        for netloc, body, url in zip(netlocs, bodies, probe, strict=True):
            robots = parse_body(body, charset="utf-8")
            now = time.time()
            cache.set(
                f"http://{netloc}",
                RobotsEntry(robots=robots, fetched_at=now, expires_at=now + 86400, status=200),
            )
            robots.allowed(url, USER_AGENT)
        return cache

    def protego() -> object:
        parsers: dict[str, Any] = {}
        for netloc, body, url in zip(netlocs, bodies, probe, strict=True):
            parser = ProtegoRobotParser(body, None)
            parsers[netloc] = parser
            parser.allowed(url, USER_AGENT)
        return parsers

    out: dict[str, float] = {}
    for name, build in ((RERP, rerp), (SCRAPY, protego)):
        re.purge()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        out[name] = (after - before) / len(netlocs)
        del kept
    out["robots_bytes"] = statistics.mean(len(b) for b in bodies)
    print("RESULT " + json.dumps(out), flush=True)


def run_memory(netlocs: Sequence[str]) -> dict[str, float]:
    config = {"netlocs": list(netlocs)}
    return run_child("--memory-child", config, "the memory measurement", CHILD_TIMEOUT)


# --- a few troubled origins in a broad crawl (a child process per crawl) -----------------------


def troubled_urls(healthy: Sequence[str], troubled: Sequence[str], pages: int) -> list[str]:
    """``pages`` URLs per origin, round-robin: each round the healthy origins, then the others.

    Every path is allowed by the origin's robots.txt, whatever its index.
    """
    origins = [*healthy, *troubled]
    return [
        f"http://{netloc}{_ALLOWED_PATHS[(j + i) % len(_ALLOWED_PATHS)](i, j)}"
        for j in range(pages)
        for i, netloc in enumerate(origins)
    ]


def troubled_child(config: dict[str, Any]) -> None:
    """Run one troubled-origins crawl; print its measurements as one JSON line.

    The spider closes the crawl once every healthy page is in: what is measured ends there, and
    closing drops the troubled origins' parked requests at once, where waiting for them would
    take RERP_UNREACHABLE_MAX_WAIT (dead) or the slow robots.txt.
    """
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import IgnoreRequest

    from scrapy_rerp.crawl.compat import close_spider

    healthy: list[str] = config["healthy"]
    urls = troubled_urls(healthy, config["troubled"], config["pages"])
    expected = len(healthy) * config["pages"]
    healthy_netlocs = set(healthy)
    settings = {**TROUBLED_SETTINGS, "LOG_LEVEL": config["log_level"]}
    settings["CLOSESPIDER_TIMEOUT"] = config["guard"]  # ends the crawl if a healthy page fails
    marks: dict[str, float] = {}  # perf_counter() at spider_opened, healthy pages in, closed

    class TroubledSpider(scrapy.Spider):
        name = "troubled"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.counts = dict.fromkeys(("healthy_pages", "troubled_pages", "dropped", "errors"), 0)
            self.closing: Any = None

        async def start(self) -> Any:
            for url in urls:
                yield scrapy.Request(url, callback=self.parse, errback=self.errback)

        def parse(self, response: Any) -> None:
            if urlsplit(response.url).netloc not in healthy_netlocs:
                self.counts["troubled_pages"] += 1
                return
            self.counts["healthy_pages"] += 1
            if self.counts["healthy_pages"] == expected:
                marks["healthy_done"] = time.perf_counter()
                self.closing = close_spider(self.crawler, HEALTHY_DONE)

        def errback(self, failure: Any) -> None:
            # IgnoreRequest: a parked request dropped at closing (its origin's robots.txt
            # never came); anything else is an error.
            self.counts["dropped" if failure.check(IgnoreRequest) else "errors"] += 1

    def opened(spider: scrapy.Spider) -> None:
        marks["opened"] = time.perf_counter()

    def closed(spider: scrapy.Spider) -> None:
        marks["closed"] = time.perf_counter()

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(TroubledSpider)
    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()

    spider = crawler.spider
    assert isinstance(spider, TroubledSpider)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    ledger = {
        name.removeprefix("robotstxt/"): int(value)
        for name, value in stats.items()
        if name in ("robotstxt/parked", "robotstxt/released")
        or name.startswith("robotstxt/dropped/")
    }
    done = marks.get("healthy_done")
    result = {
        "healthy_requests": expected,
        "troubled_requests": len(urls) - expected,
        **spider.counts,
        "seconds": None if done is None else done - marks["opened"],
        "closed_seconds": marks["closed"] - marks["opened"],
        "finish_reason": stats.get("finish_reason"),
        "ledger": ledger,
    }
    print("RESULT " + json.dumps(result), flush=True)


# --- the runs ---------------------------------------------------------------------------------


@dataclass
class WayResult:
    way: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    timed: dict[str, Any] | None = None  # the run that timed the middleware (not in `runs`)

    def median(self, key: str) -> float:
        return statistics.median(run[key] for run in self.runs)

    @property
    def pages_per_second(self) -> float:
        return statistics.median(run["pages"] / run["wall"] for run in self.runs)

    @property
    def pages_per_cpu_second(self) -> float:
        return statistics.median(run["pages"] / run["cpu"] for run in self.runs)

    @property
    def cpu_share(self) -> float:
        return statistics.median(run["cpu"] / run["wall"] for run in self.runs)

    @property
    def cpu_per_1000(self) -> float:
        return statistics.median(1000 * run["cpu"] / run["requests"] for run in self.runs)

    @property
    def gc_cpu_per_1000(self) -> float:
        return statistics.median(1000 * run["gc_cpu"] / run["requests"] for run in self.runs)

    @property
    def gc_collections(self) -> list[float]:
        """Collections per generation (young, middle, old), medians."""
        return [statistics.median(run["gc_collections"][g] for run in self.runs) for g in range(3)]

    def same(self, key: str) -> int | None:
        """The value of ``key`` when every run agrees, else None."""
        values = {run[key] for run in self.runs}
        return values.pop() if len(values) == 1 else None


def measure(args: argparse.Namespace) -> tuple[dict[str, WayResult], dict[str, Any]]:
    servers = Servers(
        args.origins, args.pages, args.concurrency, args.one_host, args.disallow_every
    )
    try:
        netlocs = servers.netlocs
        planned = plan(netlocs, args.pages, args.concurrency, args.disallow_every)
        expected = sum(d for _, d in planned)
        results = {way: WayResult(way) for way in args.way}
        ways = list(results)
        for repeat in range(args.repeats):
            # Each repeat starts with another way, so that a slow spell does not hit one only.
            for way in ordered(ways, repeat, args.order):
                print(f"repeat {repeat + 1}/{args.repeats}: {way} ...", flush=True)
                servers.reset()
                run = run_crawl(way, netlocs, args)
                run.update(servers.counts())
                results[way].runs.append(run)
                print(
                    f"  {run['pages'] / run['wall']:,.0f} pages/s, "
                    f"{1000 * run['cpu'] / run['requests']:.3f} CPU s/1,000 requests, "
                    f"{run['blocked']} blocked, {run['robots_downloads']} robots.txt downloads",
                    flush=True,
                )
        for way in ways:
            if way in WITHOUT_ROBOTS:
                continue
            # The middleware's own CPU time, from one more run that times it (timing costs).
            print(f"{way}, its middleware timed ...", flush=True)
            servers.reset()
            results[way].timed = run_crawl(way, netlocs, args, time_middleware=True)
        instructions: dict[str, Any] = {}
        if args.instructions:
            instructions = measure_instructions(ways, netlocs, args, servers)
        memory: dict[str, float] = {}
        if not args.no_memory and (RERP in results or SCRAPY in results):
            print("memory per cached origin ...", flush=True)
            memory = run_memory(netlocs)
    finally:
        servers.stop()
    return results, {
        "expected_disallowed": expected,
        "memory": memory,
        "instructions": instructions,
    }


def measure_instructions(
    ways: Sequence[str], netlocs: Sequence[str], args: argparse.Namespace, servers: Servers
) -> dict[str, Any]:
    """Instructions per request, counted by valgrind's callgrind: each way crawls
    ``args.instructions`` URLs and twice as many, and the difference divided by the extra URLs
    leaves start-up and shutdown out. Unlike CPU time, the count hardly depends on what else
    the machine does; it still moves by a few tenths of a percent from one crawl to the next
    (how the event loop batches the answers), so ``args.instruction_repeats`` pairs of crawls
    are counted per way, the order of the ways rotating, and their median is the figure."""
    small = args.instructions
    runs: dict[str, list[float]] = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.instruction_repeats):
            for way in rotated(ways, repeat):
                totals = []
                for pages in (small, 2 * small):
                    print(f"{way}, {pages:,} URLs under callgrind ...", flush=True)
                    out = Path(tmp, f"callgrind.{way}.{pages}")
                    prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                    servers.reset()
                    run_crawl(way, netlocs, args, pages=pages, prefix=prefix)
                    totals.append(callgrind_total(out))
                runs[way].append((totals[1] - totals[0]) / small)
    counts = {
        way: {"per_request": statistics.median(per_request), "runs": per_request}
        for way, per_request in runs.items()
    }
    return {"urls": small, "ways": counts}


def rotated(ways: Sequence[str], repeat: int) -> list[str]:
    """*ways* (or cases) in the order of one repeat: each repeat starts one further."""
    shift = repeat % len(ways) if ways else 0
    return [*ways[shift:], *ways[:shift]]


#: How the ways of one repeat are ordered (``--order``): ``rotate``, each repeat starting one
#: further (A B C, B C A, ...); ``abba``, every other repeat reversed (A B, B A, A B, ...), so
#: that with an even number of repeats each way runs first, and after each other, equally often.
ORDERS = ("rotate", "abba")


def ordered(ways: Sequence[str], repeat: int, order: str = "rotate") -> list[str]:
    """*ways* in the order of one repeat under ``--order``."""
    if order == "abba":
        return list(ways) if repeat % 2 == 0 else list(reversed(ways))
    return rotated(ways, repeat)


def engineless_crawler(name: str, settings: dict[str, Any]) -> Any:
    """A crawler and its spider (named *name*) without an engine, for the deterministic
    benchmarks' children, which drive Scrapy's middleware managers directly; Scrapy's warnings
    and log lines below ERROR are silenced ("Disabled ..." when a middleware is off)."""
    import logging
    import warnings

    import scrapy
    from scrapy.utils.reactor import install_reactor
    from scrapy.utils.test import get_crawler

    # Some Scrapy versions build no crawler without an installed reactor; none runs here.
    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    spider_class = type("Spider", (scrapy.Spider,), {"name": name})
    crawler = get_crawler(spider_class, settings)
    crawler.spider = spider_class()
    return crawler


def child_instructions(script: str, child_args: Sequence[str], out: Path) -> int:
    """The instructions callgrind counts in ``python script --child *child_args*`` (written to
    *out*): the deterministic benchmarks' children (bench_page_layer.py, bench_request_path.py).
    One hash seed, so that dict and set orders are the same in every run."""
    command = [
        *("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"),
        *(sys.executable, str(Path(script).resolve()), "--child", *child_args),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(command, check=True, capture_output=True, env=env)
    return callgrind_total(out)


def child_instructions_per_unit(script: str, way: str, units: int) -> float:
    """Instructions per unit of work (a request, a response) of *script*'s child for *way*:
    counted for *units* and twice as many, the difference divided by *units*, which leaves the
    child's start-up out."""
    counts = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (units, 2 * units):
            out = Path(tmp, f"callgrind.{n}")
            counts.append(child_instructions(script, [way, str(n)], out))
    return (counts[1] - counts[0]) / units


def callgrind_total(path: Path) -> int:
    """The instructions a callgrind output file counted (benchmarks/bench_page_layer.py too)."""
    for line in path.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no instruction total in {path}")


def measure_troubled(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """The troubled-origins crawls, ``args.repeats`` times each: per case, its runs.

    One server process holds the healthy origins, then the dead ones, then the slow ones, each
    on its own host; the "alone" crawl asks only the healthy ones, the others add one kind of
    troubled origin. What each run reports is completed with what the servers received.
    """
    h, t = args.troubled_healthy, args.troubled_origins
    robots = [ROBOTS_OK] * h + [ROBOTS_DEAD] * t + [ROBOTS_SLOW] * t
    concurrency = TROUBLED_SETTINGS["CONCURRENT_REQUESTS"]
    servers = Servers(len(robots), len(robots), concurrency, False, 0, robots, args.slow_delay)
    try:
        netlocs = servers.netlocs
        healthy = netlocs[:h]
        troubled = {ALONE: [], ROBOTS_DEAD: netlocs[h : h + t], ROBOTS_SLOW: netlocs[h + t :]}
        runs: dict[str, list[dict[str, Any]]] = {case: [] for case in CASES}
        for repeat in range(args.repeats):
            for case in rotated(CASES, repeat):
                print(
                    f"troubled origins, repeat {repeat + 1}/{args.repeats}: {case} ...", flush=True
                )
                servers.reset()
                config = {
                    "healthy": healthy,
                    "troubled": troubled[case],
                    "pages": args.troubled_pages,
                    "log_level": args.log_level,
                    "guard": TROUBLED_GUARD,
                }
                what = f"the troubled-origins crawl ({case})"
                run = run_child("--troubled-child", config, what, TROUBLED_CHILD_TIMEOUT)
                per_site = servers.per_site()
                asked = per_site[h : h + t] if case == ROBOTS_DEAD else per_site[h + t :]
                run["healthy_pages_at_servers"] = sum(c[1] for c in per_site[:h])
                # Every troubled site: those of the other case must stay untouched as well.
                run["troubled_pages_at_servers"] = sum(c[1] for c in per_site[h:])
                run["robots_per_healthy_origin"] = _span([c[0] for c in per_site[:h]])
                run["robots_per_troubled_origin"] = (
                    None if case == ALONE else _span([c[0] for c in asked])
                )
                runs[case].append(run)
                seconds = run["seconds"]
                print(
                    "  healthy pages in "
                    + ("(not all in)" if seconds is None else f"{seconds:.2f} s")
                    + f", closed at {run['closed_seconds']:.2f} s, "
                    f"{run['troubled_pages_at_servers']} troubled pages at the servers",
                    flush=True,
                )
    finally:
        servers.stop()
    return runs


# --- report -----------------------------------------------------------------------------------


def _ratio(value: float, base: float) -> float:
    return value / base if base else float("nan")


def _fmt(value: int | None) -> str:
    return "varies" if value is None else f"{value:,}"


def _span(values: Sequence[int]) -> list[int]:
    return [min(values), max(values)]


def _fmt_span(span: Sequence[int] | None) -> str:
    if span is None:
        return "n/a"
    low, high = span
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"


def summary(results: dict[str, WayResult], extra: dict[str, Any]) -> dict[str, Any]:
    """Everything the report says, as plain data (``--json``)."""
    ways: dict[str, Any] = {}
    for way, r in results.items():
        ways[way] = {
            "pages_per_second": r.pages_per_second,
            "pages_per_cpu_second": r.pages_per_cpu_second,
            "cpu_share": r.cpu_share,
            "cpu_per_1000_requests": r.cpu_per_1000,
            "gc_cpu_per_1000_requests": r.gc_cpu_per_1000,
            "gc_collections": r.gc_collections,
            "wall_seconds": r.median("wall"),
            "requests": r.same("requests"),
            "pages": r.same("pages"),
            "blocked": r.same("blocked"),
            "ignored": r.same("ignored"),
            "errors": sum(run["errors"] for run in r.runs),
            "disallowed_pages_fetched": max(run["disallowed_pages"] for run in r.runs),
            "robots_downloads": r.same("robots_downloads"),
            "connections": r.median("connections"),
            "middleware_us_per_request": (
                None if r.timed is None else 1e6 * r.timed["middleware_cpu"] / r.timed["requests"]
            ),
            "middleware_share": (
                None if r.timed is None else r.timed["middleware_cpu"] / r.timed["cpu"]
            ),
            "middleware_calls": None if r.timed is None else r.timed["middleware_calls"],
            "robots_max_per_origin": max(run["robots_max_per_origin"] for run in r.runs),
            "robots_origins": r.same("robots_origins"),
            "cache_origins": r.same("cache_origins"),
            "cache_bytes_per_origin": (
                statistics.median(run["cache_bytes"] / run["cache_origins"] for run in r.runs)
                if all(run["cache_origins"] for run in r.runs)
                else None
            ),
            "runs": r.runs,
        }
    ratios: dict[str, float] = {}
    paired: dict[str, list[float]] = {}
    # The Addon's keys are unprefixed; the robots.txt layer alone (page directives off) has its
    # own, "robots_...": issue 25's goal was set on that path, before page directives existed.
    for way, prefix in ((RERP, ""), (RERP_ROBOTS, "robots_")):
        if way not in results:
            continue
        rerp = results[way]
        for base in (OFF, SCRAPY):
            if base not in results:
                continue
            b = results[base]
            ratios[f"{prefix}throughput_vs_{base}"] = _ratio(
                rerp.pages_per_second, b.pages_per_second
            )
            ratios[f"{prefix}cpu_throughput_vs_{base}"] = _ratio(
                rerp.pages_per_cpu_second, b.pages_per_cpu_second
            )
            ratios[f"{prefix}cpu_vs_{base}"] = _ratio(rerp.cpu_per_1000, b.cpu_per_1000)
            # Paired: the two ways' runs of one repeat ran minutes apart at most, so the
            # machine's load changed less between them than over the whole benchmark.
            pairs = list(zip(rerp.runs, b.runs, strict=True))
            paired[f"{prefix}throughput_vs_{base}"] = [
                (x["pages"] / x["wall"]) / (y["pages"] / y["wall"]) for x, y in pairs
            ]
            paired[f"{prefix}cpu_throughput_vs_{base}"] = [
                (x["pages"] / x["cpu"]) / (y["pages"] / y["cpu"]) for x, y in pairs
            ]
            paired[f"{prefix}cpu_vs_{base}"] = [
                (x["cpu"] / x["requests"]) / (y["cpu"] / y["requests"]) for x, y in pairs
            ]
    return {**extra, "ways": ways, "ratios": ratios, "paired_ratios": paired}


def render(data: dict[str, Any], args: argparse.Namespace) -> str:
    ways: dict[str, Any] = data["ways"]
    ratios: dict[str, float] = data["ratios"]
    out: list[str] = []
    if args.one_host:
        hosts = "127.0.0.1: one Scrapy download slot"
    else:
        last = host_of(args.origins - 1, False)
        hosts = f"127.0.0.1 to {last}: a Scrapy download slot each"
    out.append(
        f"Crawl: {args.pages:,} URLs over {args.origins} origins (HTTP servers on {hosts}, "
        "each on its own port, in one separate asyncio process), "
        f"{data['expected_disallowed']:,} of them disallowed by "
        f"robots.txt; each crawl in a fresh process; median of {args.repeats} repeat(s), the "
        + (
            "order of the ways reversed every other repeat (ABBA)."
            if getattr(args, "order", "rotate") == "abba"
            else "order of the ways rotating per repeat."
        )
    )
    out.append(
        f"Settings: CONCURRENT_REQUESTS {args.concurrency}, CONCURRENT_REQUESTS_PER_DOMAIN "
        f"{CRAWL_SETTINGS['CONCURRENT_REQUESTS_PER_DOMAIN']}, DOWNLOAD_DELAY 0, AutoThrottle "
        f"off, LOG_LEVEL {args.log_level}; the spider yields every URL from start()."
    )
    out.append(
        "Window: spider_opened to the first spider_idle. pages/s: pages downloaded for the "
        "spider per wall-clock second. CPU: the crawler process's user + system time "
        "(getrusage RUSAGE_SELF) per 1,000 of the spider's requests (downloaded or blocked)."
    )
    out.append(
        "Throughput is judged per page downloaded, so a way that blocks a request pays for "
        "deciding it and gets no page for it; CPU share is CPU time over wall time (below "
        "about 0.9 the crawler waited, mostly for a CPU held by other processes)."
    )
    out.append("")
    out.append(
        "| way | pages/s | vs off | vs Scrapy's | pages per CPU s | vs off | vs Scrapy's "
        "| CPU s / 1,000 requests | vs off | vs Scrapy's | CPU share | wall s |"
    )
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")

    def vs(way: str, key: str, base: str) -> str:
        if base not in ways:
            return "n/a"
        return f"{_ratio(ways[way][key], ways[base][key]):.3f}x"

    for way, w in ways.items():
        cells = [WAYS[way], f"{w['pages_per_second']:,.0f}"]
        cells += [vs(way, "pages_per_second", OFF), vs(way, "pages_per_second", SCRAPY)]
        cells += [f"{w['pages_per_cpu_second']:,.0f}"]
        cells += [vs(way, "pages_per_cpu_second", OFF), vs(way, "pages_per_cpu_second", SCRAPY)]
        cells += [f"{w['cpu_per_1000_requests']:.3f}"]
        cells += [vs(way, "cpu_per_1000_requests", OFF), vs(way, "cpu_per_1000_requests", SCRAPY)]
        cells += [f"{w['cpu_share']:.2f}", f"{w['wall_seconds']:.2f}"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append(
        "| way | requests | pages downloaded | blocked by robots.txt "
        "| disallowed pages at the servers | robots.txt downloads | TCP connections | errors |"
    )
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    for way, w in ways.items():
        out.append(
            f"| {WAYS[way]} | {_fmt(w['requests'])} | {_fmt(w['pages'])} | {_fmt(w['blocked'])} "
            f"| {w['disallowed_pages_fetched']:,} | {_fmt(w['robots_downloads'])} "
            f"| {w['connections']:,.0f} | {w['errors']} |"
        )
    out.append("")
    out.append(
        "The garbage collector in the window (CPU time of its runs, timed by gc.callbacks, and "
        "its collections per generation; medians):"
    )
    out.append("")
    out.append(
        "| way | GC CPU s / 1,000 requests | share of the CPU | collections (gen 0 / 1 / 2) |"
    )
    out.append("|---|--:|--:|--:|")
    for way, w in ways.items():
        gc_share = w["gc_cpu_per_1000_requests"] / w["cpu_per_1000_requests"]
        collections = " / ".join(f"{n:,.0f}" for n in w["gc_collections"])
        out.append(
            f"| {WAYS[way]} | {w['gc_cpu_per_1000_requests']:.3f} | {100 * gc_share:.1f}% "
            f"| {collections} |"
        )
    timed = [way for way in ways if ways[way]["middleware_us_per_request"] is not None]
    if timed:
        out.append("")
        out.append(
            "The robots.txt middleware's own CPU time: the thread CPU time of every step of its "
            "process_request (waits for robots.txt not included; scrapy_rerp parses robots.txt "
            "in a background task, left out: one parse per origin), per request of the spider "
            "and as a share of the crawler's CPU time in the window, from one more run per way "
            "(timing costs CPU time of its own, so the runs above do not time it). Thread CPU "
            "time is little disturbed by other processes:"
        )
        out.append("")
        out.append("| way | µs per request | share of the crawl's CPU |")
        out.append("|---|--:|--:|")
        for way in timed:
            w = ways[way]
            out.append(
                f"| {WAYS[way]} | {w['middleware_us_per_request']:.1f} "
                f"| {100 * w['middleware_share']:.2f}% |"
            )
    instructions = data.get("instructions") or {}
    if instructions:
        counted = instructions["ways"]
        out.append("")
        out.append(
            "Instructions per request (valgrind callgrind): each way crawls "
            f"{instructions['urls']:,} URLs and twice as many, and the difference is divided by "
            "the extra URLs, which leaves start-up and shutdown out; every run has the same hash "
            "seed (PYTHONHASHSEED=0). The count hardly depends on the machine's load, unlike CPU "
            "time, but moves by a few tenths of a percent from one pair of crawls to the next: "
            "the figure is the median of the pairs, each of which is listed:"
        )
        out.append("")
        out.append("| way | instructions per request | vs off | each pair |")
        out.append("|---|--:|--:|---|")
        base = counted.get(OFF, {}).get("per_request")
        for way, count in counted.items():
            ratio = "n/a" if not base else f"{count['per_request'] / base:.4f}x"
            pairs = ", ".join(f"{run:,.0f}" for run in count.get("runs", [count["per_request"]]))
            out.append(f"| {WAYS[way]} | {count['per_request']:,.0f} | {ratio} | {pairs} |")
    out.append("")
    out.append("Every run (pages/s; pages per CPU s; CPU s per 1,000 requests; CPU share):")
    out.append("")
    for way, w in ways.items():
        runs = ", ".join(
            f"{run['pages'] / run['wall']:,.0f}; {run['pages'] / run['cpu']:,.0f}; "
            f"{1000 * run['cpu'] / run['requests']:.3f}; {run['cpu'] / run['wall']:.2f}"
            for run in w["runs"]
        )
        out.append(f"- {WAYS[way]}: {runs}")

    compared = (
        ("", "scrapy_rerp against the others"),
        ("robots_", "The robots.txt layer alone (the Addon, page directives off)"),
    )
    for prefix, heading in compared:
        if f"{prefix}throughput_vs_{OFF}" not in ratios and (
            f"{prefix}throughput_vs_{SCRAPY}" not in ratios
        ):
            continue
        out.append("")
        out.append(f"{heading} (ratios of the medians):")
        out.append("")
        goals = (
            (OFF, THROUGHPUT_VS_OFF, "at most 2% lost"),
            (SCRAPY, THROUGHPUT_VS_SCRAPY, "never slower"),
        )
        for base, goal, words in goals:
            if f"{prefix}throughput_vs_{base}" not in ratios:
                continue
            wall = ratios[f"{prefix}throughput_vs_{base}"]
            cpu = ratios[f"{prefix}cpu_throughput_vs_{base}"]
            per_request = ratios[f"{prefix}cpu_vs_{base}"]
            verdict = ", ".join(
                f"{name} {'met' if value >= goal else 'NOT met'}"
                for name, value in (("by wall clock", wall), ("by CPU time", cpu))
            )
            out.append(
                f"- vs {WAYS[base]}: pages/s {wall:.3f}x, pages per CPU s {cpu:.3f}x, "
                f"CPU per request {per_request:.3f}x (goal: throughput >= {goal:g}x, {words}: "
                f"{verdict})"
            )
            pairs = [
                (name, data["paired_ratios"][f"{prefix}{key}_vs_{base}"])
                for name, key in (
                    ("pages/s", "throughput"),
                    ("pages per CPU s", "cpu_throughput"),
                    ("CPU per request", "cpu"),
                )
            ]
            out.append(
                "  - per repeat (the same repeat's runs compared): "
                + "; ".join(
                    f"{name} median {statistics.median(values):.3f}x, "
                    f"from {min(values):.3f}x to {max(values):.3f}x"
                    for name, values in pairs
                )
            )

    out.append("")
    out.append("Facts (every run):")
    out.append("")
    for way, w in ways.items():
        facts = [
            f"{_fmt(w['pages'])} pages downloaded of {_fmt(w['requests'])} requests",
            f"{_fmt(w['blocked'])} blocked (expected {data['expected_disallowed']:,} or 0)",
            f"{w['disallowed_pages_fetched']:,} disallowed pages reached a server",
            f"{_fmt(w['robots_downloads'])} robots.txt downloads "
            f"(at most {w['robots_max_per_origin']} per origin)",
            f"{w['errors']} errors",
        ]
        out.append(f"- {WAYS[way]}: " + "; ".join(facts))

    memory: dict[str, float] = data["memory"]
    cached = {way: ways[way]["cache_bytes_per_origin"] for way in (RERP, SCRAPY) if way in ways}
    if memory or any(v is not None for v in cached.values()):
        out.append("")
        out.append(
            "Memory per cached origin (robots.txt of "
            f"{memory.get('robots_bytes', 0):,.0f} bytes on average):"
        )
        out.append("")
        out.append("| way | retained (tracemalloc) bytes | crawl's cache (deep size) bytes |")
        out.append("|---|--:|--:|")
        for way in (RERP, SCRAPY):
            if way not in ways:
                continue
            traced = memory.get(way)
            deep = cached.get(way)
            out.append(
                f"| {WAYS[way]} | {'n/a' if traced is None else f'{traced:,.0f}'} "
                f"| {'n/a' if deep is None else f'{deep:,.0f}'} |"
            )
        out.append("")
        out.append(
            "Retained: a fresh process parses every origin's robots.txt as the middleware does, "
            "keeps it as the middleware does (scrapy_rerp: a RobotsEntry in a MemoryOriginCache; "
            "Scrapy: a ProtegoRobotParser in a dict), checks one URL per origin, and divides what "
            "tracemalloc still sees allocated by the origins. Deep size: after the crawl, the sum "
            "of sys.getsizeof over every object reachable from the middleware's cache (classes, "
            "modules and functions left out), divided by the origins in it."
        )
    return "\n".join(out) + "\n"


def summary_troubled(
    runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace
) -> dict[str, Any]:
    """Everything the troubled-origins section says, as plain data (``--json``)."""

    def median_seconds(case: str) -> float | None:
        seconds = [run["seconds"] for run in runs[case]]
        return None if None in seconds else statistics.median(seconds)

    alone = median_seconds(ALONE)
    cases: dict[str, Any] = {}
    for case, case_runs in runs.items():
        seconds = median_seconds(case)
        ratio = None if seconds is None or not alone else seconds / alone
        ledger = [run["ledger"] for run in case_runs]
        cases[case] = {
            "seconds": seconds,
            "vs_alone": ratio,
            "goal_met": None if case == ALONE or ratio is None else ratio <= TROUBLED_GOAL,
            "closed_seconds": statistics.median(run["closed_seconds"] for run in case_runs),
            "healthy_requests": case_runs[0]["healthy_requests"],
            "troubled_requests": case_runs[0]["troubled_requests"],
            "healthy_pages": _span([run["healthy_pages"] for run in case_runs]),
            "healthy_pages_at_servers": _span(
                [run["healthy_pages_at_servers"] for run in case_runs]
            ),
            "troubled_pages": max(run["troubled_pages"] for run in case_runs),
            "troubled_pages_at_servers": max(run["troubled_pages_at_servers"] for run in case_runs),
            "robots_per_healthy_origin": _span(
                [n for run in case_runs for n in run["robots_per_healthy_origin"]]
            ),
            "robots_per_troubled_origin": (
                None
                if case == ALONE
                else _span([n for run in case_runs for n in run["robots_per_troubled_origin"]])
            ),
            "parked": _span([counts.get("parked", 0) for counts in ledger]),
            "released": _span([counts.get("released", 0) for counts in ledger]),
            "dropped_closing": _span([counts.get("dropped/crawl_closing", 0) for counts in ledger]),
            "dropped_other": sum(
                value
                for counts in ledger
                for name, value in counts.items()
                if name.startswith("dropped/") and name != "dropped/crawl_closing"
            ),
            "errors": sum(run["errors"] for run in case_runs),
            "finish_reasons": sorted({str(run["finish_reason"]) for run in case_runs}),
            # Paired: the crawls of one repeat ran seconds apart, under much the same load.
            "per_repeat_vs_alone": [
                None
                if run["seconds"] is None or base["seconds"] is None
                else run["seconds"] / base["seconds"]
                for run, base in zip(case_runs, runs[ALONE], strict=True)
            ],
            "runs": case_runs,
        }
    return {
        "healthy_origins": args.troubled_healthy,
        "troubled_origins": args.troubled_origins,
        "pages_per_origin": args.troubled_pages,
        "slow_delay": args.slow_delay,
        "repeats": args.repeats,
        "goal": TROUBLED_GOAL,
        "hosts": [
            host_of(0, False),
            host_of(args.troubled_healthy + 2 * args.troubled_origins - 1, False),
        ],
        "cases": cases,
    }


def case_name(case: str, data: dict[str, Any]) -> str:
    t = data["troubled_origins"]
    if case == ROBOTS_DEAD:
        return f"with {t} dead origins (robots.txt 503)"
    if case == ROBOTS_SLOW:
        return f"with {t} slow origins (robots.txt after {data['slow_delay']:g} s)"
    return "healthy origins alone"


def render_troubled(data: dict[str, Any], provenance: Sequence[str]) -> str:
    """The troubled-origins section of the report, headed by its own provenance."""
    cases: dict[str, Any] = data["cases"]
    h, t, pages = data["healthy_origins"], data["troubled_origins"], data["pages_per_origin"]
    before, before_alone = TROUBLED_BEFORE
    out = [f"{TROUBLED_HEADING}: dead or slow robots.txt do not stall a broad crawl", ""]
    out += [f"- {line}" for line in provenance]
    out.append("")
    out.append(
        f"Crawl: scrapy_rerp (Addon), {h} healthy origins with {pages} URLs each "
        f"({h * pages:,} pages) round-robin; two of the three crawls add, to every round, the "
        f"URLs of {t} troubled origins ({pages} each): dead (robots.txt answers 503) or slow "
        f"(robots.txt answers after {data['slow_delay']:g} s). Every origin is an HTTP server on "
        f"its own host ({data['hosts'][0]} to {data['hosts'][1]}: a Scrapy download slot each), "
        "in one separate asyncio process; each crawl in a fresh process; median of "
        f"{data['repeats']} repeat(s), the order of the crawls rotating per repeat."
    )
    out.append(
        f"Settings: CONCURRENT_REQUESTS {TROUBLED_SETTINGS['CONCURRENT_REQUESTS']}, "
        f"CONCURRENT_REQUESTS_PER_DOMAIN {TROUBLED_SETTINGS['CONCURRENT_REQUESTS_PER_DOMAIN']}, "
        f"RERP_UNREACHABLE_MAX_WAIT {TROUBLED_SETTINGS['RERP_UNREACHABLE_MAX_WAIT']}, "
        "DOWNLOAD_DELAY 0, AutoThrottle off."
    )
    out.append(
        "Time: spider_opened to the spider's callback for the last healthy page. The spider "
        "then closes the crawl (engine.close_spider_async), which drops the requests still "
        "parked for the troubled origins, so no crawl waits out RERP_UNREACHABLE_MAX_WAIT or a "
        f"slow robots.txt (guard: CLOSESPIDER_TIMEOUT {TROUBLED_GUARD:g} s). Crawl closed: "
        "spider_opened to spider_closed; Scrapy finishes the downloads in flight before it "
        "closes, a slow robots.txt among them, so the slow crawl closes once that answers."
    )
    out.append(
        "Why: a request waiting for its origin's robots.txt used to hold its place in the "
        "downloader (CONCURRENT_REQUESTS), so a few dead origins stalled the whole crawl: "
        f"before parking, this crawl with the dead origins took {before:g} s against "
        f"{before_alone:g} s alone. Such requests now wait parked, outside the downloader. "
        f"Goal: at most {data['goal']:g}x the time alone, both measured in the same run."
    )
    out.append(
        "The times are a few seconds at most, so a busy machine moves them (see the load "
        "average; every run is listed): the verdict is on the ratio of the medians, and single "
        "repeats scatter around it both ways."
    )
    out.append("")
    out.append(
        f"| crawl | healthy pages in, s (median) | vs alone | goal: at most {data['goal']:g}x "
        "| crawl closed, s | every run, s |"
    )
    out.append("|---|--:|--:|---|--:|---|")
    for case, c in cases.items():
        seconds = "not all in" if c["seconds"] is None else f"{c['seconds']:.2f}"
        ratio = "n/a" if c["vs_alone"] is None else f"{c['vs_alone']:.3f}x"
        verdict = {None: "", True: "met", False: "NOT met"}[c["goal_met"]]
        if case != ALONE and c["goal_met"] is None:
            verdict = "NOT met (not all healthy pages in)"
        every = ", ".join(
            "-" if run["seconds"] is None else f"{run['seconds']:.2f}" for run in c["runs"]
        )
        out.append(
            f"| {case_name(case, data)} | {seconds} | {ratio} | {verdict} "
            f"| {c['closed_seconds']:.2f} | {every} |"
        )
    out.append("")
    out.append("Per repeat (the same repeat's crawls compared, vs alone):")
    out.append("")
    for case, c in cases.items():
        if case == ALONE:
            continue
        ratios = ", ".join("-" if r is None else f"{r:.3f}x" for r in c["per_repeat_vs_alone"])
        out.append(f"- {case_name(case, data)}: {ratios}")
    out.append("")
    out.append(
        "| crawl | healthy pages downloaded | pages of troubled origins at the servers "
        "| robots.txt requests per healthy origin | per troubled origin | parked | released "
        "| dropped at closing | errors |"
    )
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for case, c in cases.items():
        out.append(
            f"| {case_name(case, data)} | {_fmt_span(c['healthy_pages'])} "
            f"| {c['troubled_pages_at_servers']:,} | {_fmt_span(c['robots_per_healthy_origin'])} "
            f"| {_fmt_span(c['robots_per_troubled_origin'])} | {_fmt_span(c['parked'])} "
            f"| {_fmt_span(c['released'])} | {_fmt_span(c['dropped_closing'])} | {c['errors']} |"
        )
    out.append("")
    out.append(
        "Parked: the requests that waited for robots.txt, the healthy origins' first ones too "
        "(released when their rules came); dropped at closing: the troubled origins' requests "
        "(a few may not have been yielded by the spider yet at the close). A dead origin's "
        "robots.txt is asked again after a backoff (retries of the 503), a slow one's once."
    )
    out.append("")
    out.append("Facts (every run):")
    out.append("")
    for case, c in cases.items():
        facts = [
            f"{_fmt_span(c['healthy_pages'])} healthy pages downloaded of "
            f"{c['healthy_requests']:,} requests",
            f"{c['troubled_pages_at_servers']:,} pages of troubled origins reached a server "
            f"(must be 0: {'met' if c['troubled_pages_at_servers'] == 0 else 'NOT met'})",
            f"robots.txt requests: {_fmt_span(c['robots_per_healthy_origin'])} per healthy origin"
            + (
                ""
                if c["robots_per_troubled_origin"] is None
                else f", {_fmt_span(c['robots_per_troubled_origin'])} per troubled origin"
            ),
            f"{c['dropped_other']:,} requests dropped for another reason than the close",
            f"{c['errors']} errors",
            f"close reason {', '.join(c['finish_reasons'])}",
        ]
        out.append(f"- {case_name(case, data)}: " + "; ".join(facts))
    return "\n".join(out) + "\n"


def provenance(argv: Sequence[str], load: str) -> list[str]:
    """Date, machine, load, versions and the command: the troubled section may be written alone."""
    shown = Path(__file__).resolve()
    try:
        shown = shown.relative_to(Path.cwd())
    except ValueError:
        pass
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = shlex.join(["python", str(shown), *argv])
    return [
        f"Date: {now}",
        f"Machine: {machine_description()}",
        f"Load average (1 min) before and after: {load}",
        f"Versions: {versions()}",
        f"Command (from the repository root): `{command}`",
    ]


def save_results(
    path: Path,
    argv: Sequence[str],
    report: str | None,
    facts: Sequence[str],
    section: str | None,
) -> None:
    """Write the main report and/or the troubled-origins section (the file's last) to ``path``.

    A run that measured only one of the two keeps the other from the file, so that
    ``--troubled-only --write-results`` does not lose the main results, nor a main run without
    the troubled origins (``--quick``, ``--no-troubled``) the troubled section.
    """
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    cut = old.find("\n" + TROUBLED_HEADING)
    old_main, old_section = (old, "") if cut < 0 else (old[: cut + 1], old[cut + 1 :])
    if report is not None:
        write_results(path, RESULTS_TITLE, __file__, report, argv, facts)
        main_text = path.read_text(encoding="utf-8")
    else:
        main_text = old_main or f"# {RESULTS_TITLE}\n"
    section = old_section if section is None else section
    text = main_text.rstrip("\n") + "\n" + (f"\n{section}" if section else "")
    path.write_text(text, encoding="utf-8")


def revision() -> str:
    """The commit of the scrapy_rerp package that is imported, marked when its files differ."""
    import scrapy_rerp

    directory = Path(scrapy_rerp.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(directory), *args], capture_output=True, text=True, check=True
            )
        except (OSError, subprocess.CalledProcessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    if commit is None:
        return "?"
    return commit + ("+uncommitted" if git("status", "--porcelain", "--", ".") else "")


def versions() -> str:
    names = ("scrapy", "twisted", "protego", "scrapy-rerp")
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} ?")
    return ", ".join(parts) + f" (scrapy_rerp at {revision()})"


# --- command line -----------------------------------------------------------------------------


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=None, help=f"URLs (default {DEFAULT_PAGES})")
    parser.add_argument(
        "--origins", type=int, default=None, help=f"origins (default {DEFAULT_ORIGINS})"
    )
    parser.add_argument("--repeats", type=int, default=None, help="crawls per way (default 3)")
    parser.add_argument(
        "--order",
        choices=ORDERS,
        default="rotate",
        help="the ways' order in each repeat: rotate (A B C, B C A, ...) or abba (A B, B A, "
        "...: each way first equally often with an even --repeats; default %(default)s)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_PAGES} URLs over {QUICK_ORIGINS} origins, 1 repeat",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=CRAWL_SETTINGS["CONCURRENT_REQUESTS"],
        help="CONCURRENT_REQUESTS (default %(default)s)",
    )
    parser.add_argument(
        "--disallow-every",
        type=int,
        default=DISALLOW_EVERY,
        metavar="N",
        help="one URL in N is disallowed by robots.txt (default %(default)s; 0: none)",
    )
    parser.add_argument(
        "--one-host",
        action="store_true",
        help="every origin on 127.0.0.1 (one Scrapy download slot for the whole crawl)",
    )
    parser.add_argument("--log-level", default=CRAWL_SETTINGS["LOG_LEVEL"], help="LOG_LEVEL")
    parser.add_argument(
        "--way", action="append", choices=list(WAYS), help="run only this way (repeatable)"
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the memory-per-origin measurement"
    )
    parser.add_argument(
        "--troubled-only",
        action="store_true",
        help="run only the troubled-origins crawls (part of a full run; not of --quick)",
    )
    parser.add_argument(
        "--no-troubled", action="store_true", help="skip the troubled-origins crawls"
    )
    parser.add_argument(
        "--troubled-healthy",
        type=int,
        default=TROUBLED_HEALTHY,
        metavar="N",
        help="healthy origins of the troubled-origins crawls (default %(default)s)",
    )
    parser.add_argument(
        "--troubled-origins",
        type=int,
        default=TROUBLED_ORIGINS,
        metavar="N",
        help="dead origins, and slow ones, added to them (default %(default)s)",
    )
    parser.add_argument(
        "--troubled-pages",
        type=int,
        default=TROUBLED_PAGES,
        metavar="N",
        help="URLs per origin in the troubled-origins crawls (default %(default)s)",
    )
    parser.add_argument(
        "--slow-delay",
        type=float,
        default=SLOW_ROBOTS_DELAY,
        metavar="S",
        help="seconds before a slow origin's robots.txt answers (default %(default)s)",
    )
    add_write_results_argument(parser, DEFAULT_RESULTS)
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="URLS",
        help="also count instructions per request under valgrind's callgrind, from crawls of "
        "URLS and 2 x URLS (slow: about 50 times the crawl's CPU time)",
    )
    parser.add_argument(
        "--instruction-repeats",
        type=int,
        default=1,
        metavar="N",
        help="with --instructions: count each way N times, the median is the figure (default 1)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the data as JSON")
    parser.add_argument("--crawl-child", help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--troubled-child", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_arg_parser().parse_args(argv)
    if args.crawl_child:
        crawl_child(json.loads(Path(args.crawl_child).read_text()))
        return 0
    if args.memory_child:
        memory_child(json.loads(Path(args.memory_child).read_text()))
        return 0
    if args.troubled_child:
        troubled_child(json.loads(Path(args.troubled_child).read_text()))
        return 0

    quick = args.quick
    if args.troubled_only and args.no_troubled:
        raise SystemExit("--troubled-only and --no-troubled exclude each other")
    run_main = not args.troubled_only
    run_troubled = args.troubled_only or not (quick or args.no_troubled)
    if args.pages is None:
        args.pages = QUICK_PAGES if quick else DEFAULT_PAGES
    if args.origins is None:
        args.origins = QUICK_ORIGINS if quick else DEFAULT_ORIGINS
    if args.repeats is None:
        args.repeats = 1 if quick else 3
    if args.repeats < 1 or args.origins < 1 or args.pages < args.origins:
        raise SystemExit("need --repeats >= 1, --origins >= 1 and --pages >= --origins")
    if args.disallow_every < 0:
        raise SystemExit("need --disallow-every >= 0")
    if min(args.troubled_healthy, args.troubled_origins, args.troubled_pages) < 1:
        raise SystemExit("need --troubled-healthy, --troubled-origins and --troubled-pages >= 1")
    if args.slow_delay <= 0:
        raise SystemExit("need --slow-delay > 0")
    if not args.way:
        args.way = list(WAYS)
    args.way = [way for way in WAYS if way in args.way]

    print(f"machine: {machine_description()}", flush=True)
    data: dict[str, Any] = {}
    report: str | None = None
    facts: list[str] = []
    if run_main:
        load_before = os.getloadavg()[0]
        results, extra = measure(args)
        load = f"{load_before:.2f}, {os.getloadavg()[0]:.2f}"
        data = summary(results, extra)
        report = render(data, args)
        facts = [f"Load average (1 min) before and after: {load}", f"Versions: {versions()}"]
        print()
        print(report, end="")
    section: str | None = None
    if run_troubled:
        load_before = os.getloadavg()[0]
        runs = measure_troubled(args)
        load = f"{load_before:.2f}, {os.getloadavg()[0]:.2f}"
        data["troubled"] = summary_troubled(runs, args)
        section = render_troubled(data["troubled"], provenance(argv, load))
        print()
        print(section, end="")
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")
    if args.write_results is not None:
        save_results(args.write_results, argv, report, facts, section)
        print(f"\nwritten to {args.write_results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
