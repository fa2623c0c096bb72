"""The robots.txt store (``RERP_STORE``) across restarts of a broad crawl: what the servers
receive, and the CPU time the store costs.

One run starts ``--origins`` HTTP servers on loopback addresses (127.0.0.1, 127.0.0.2, ...,
each on its own port: distinct origins and distinct Scrapy download slots) in a separate
process, so that serving costs the crawler no CPU time. Each origin's robots.txt has an
``ETag``, a ``Last-Modified`` and ``Cache-Control: max-age=3600``, and the server answers a
conditional request whose validator matches with a 304 and no body. Each origin has
``--pages`` allowed pages in the crawl (default 1) and a disallowed one: the fewer pages per
origin, the larger the robots.txt work's share of the crawl.

Each crawl runs in a fresh process (Scrapy's reactor cannot restart in-process), with the Addon,
round-robin over the origins:

* ``first``: with a new store file: every robots.txt downloaded, every copy stored;
* ``restarted fresh``: the same store, right after: every stored copy fresh, no robots.txt
  downloaded;
* ``restarted expired``: the same store after every copy's times were moved back a day (as
  yesterday's run left them; the store then holds copies that expired an hour after they were
  fetched): every origin revalidated with ``If-None-Match``/``If-Modified-Since``, every answer
  a 304;
* ``--repeats`` pairs of ``with store`` (a new store file, as ``first``) and ``without store``
  (the same crawl, ``RERP_STORE`` unset), alternating, for the CPU time the store costs.

The servers count robots.txt requests, full answers (200 with a body), conditional requests and
304s. The crawler process's CPU time (user + system, ``resource.getrusage(RUSAGE_SELF)``) is
taken around the whole crawl (from before ``crawl()`` to after the reactor stops: the store is
opened and closed inside), and so is the CPU time spent inside the store's calls (opening the
file, and :class:`~scrapy_rerp.core.crawl_store.CrawlStore`' ``get``, ``renew``, ``put`` and
``close``, each timed by ``time.thread_time``: the reactor thread's CPU time, as SQLite lets
go of the GIL and other threads run meanwhile). ``get`` parses the stored rules, work a
downloaded robots.txt needs as well: that parse is timed apart and reported beside the rest.
Goal: in every crawl with a store (first, restarted fresh, restarted expired, and the paired
ones), the store's calls without that parse take under :data:`CPU_GOAL` of the crawl's CPU
time; the comparison of whole crawls with and without the store is reported beside it (the
difference of two medians of noisy totals, the calls' own time is the finer measure).

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_store.py --write-results
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# The shared report helpers sit beside the script, which also runs as a child process.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _children import paired_main, paired_parser, run_child, send_result  # noqa: E402
from _spiders import counted_crawl  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "STORE_RESULTS.md"
RESULTS_TITLE = "Robots.txt store benchmark results"

#: Goal: the store's calls take under 2 % of the crawl's CPU time.
CPU_GOAL = 0.02
#: How far back the expired run's copies are moved (a day: yesterday's crawl).
AGED_BY = 86400.0
MAX_AGE = 3600  # the robots.txt's Cache-Control max-age, seconds
LAST_MODIFIED = b"Mon, 02 Nov 2026 10:00:00 GMT"
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl

CRAWL_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 64,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_TIMEOUT": 60,
    "RETRY_ENABLED": False,
    "ADDONS": {"scrapy_rerp.Addon": 100},
}


def host_of(index: int) -> str:
    """The loopback address of origin ``index``: 127.0.0.1, 127.0.0.2, ... (all on 127/8)."""
    return f"127.0.{index // 250}.{index % 250 + 1}"


def robots_txt(index: int) -> bytes:
    return (
        "User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\n"
        f"Disallow: /origin-{index}/\n\nUser-agent: otherbot\nDisallow: /\n"
    ).encode()


def urls_of(netlocs: Sequence[str], pages: int) -> list[str]:
    """``pages`` allowed URLs per origin, then a disallowed one, round-robin over the origins."""
    allowed = [f"http://{n}/page-{p}" for p in range(pages) for n in netlocs]
    return allowed + [f"http://{n}/private/x" for n in netlocs]


# --- the servers (a process of their own) ----------------------------------------------------


COUNTS = ("robots", "robots_full", "robots_conditional", "robots_304", "tdmrep", "rsl", "pages")
#: Every origin's /.well-known/tdmrep.json (read by a crawl whose RERP_USAGE names train-ai or
#: ai-input): its /reserved/ pages reserved for text and data mining.
TDMREP_JSON = b'[{"location": "/reserved/*", "tdm-reservation": 1}]'
#: With ``licences``, every robots.txt names the origin's own RSL file, which permits every use
#: of every page for free (so that a crawl with a purpose downloads the same pages).
LICENSE_XML = (
    b'<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>'
    b'<permits type="usage">all</permits><payment type="free"/></license></content></rsl>'
)


class _Site(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, enough for Scrapy: robots.txt (200 or 304) and a small page."""

    def __init__(self, index: int, counts: dict[str, int], licences: bool = False) -> None:
        self.robots = robots_txt(index)
        self.licences = licences
        self.etag = f'"r{index}"'.encode()
        self.counts = counts
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self._answer(head)

    def _answer(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        path = lines[0].split(b" ")[1] if len(lines[0].split(b" ")) > 1 else b"/"
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if path == b"/robots.txt":
            self.counts["robots"] += 1
            conditional = b"if-none-match" in headers or b"if-modified-since" in headers
            self.counts["robots_conditional"] += conditional
            cache = [b"ETag: " + self.etag, b"Last-Modified: " + LAST_MODIFIED]
            cache.append(b"Cache-Control: max-age=%d" % MAX_AGE)
            if headers.get(b"if-none-match") == self.etag:
                self.counts["robots_304"] += 1
                self._send(b"304 Not Modified", cache, b"")
            else:
                self.counts["robots_full"] += 1
                robots = self.robots
                if self.licences:
                    robots += b"\nLicense: http://" + headers.get(b"host", b"") + b"/license.xml\n"
                self._send(b"200 OK", [b"Content-Type: text/plain", *cache], robots)
        elif path == b"/license.xml":
            self.counts["rsl"] += 1
            self._send(b"200 OK", [b"Content-Type: application/rsl+xml"], LICENSE_XML)
        elif path == b"/.well-known/tdmrep.json":
            self.counts["tdmrep"] += 1
            self._send(b"200 OK", [b"Content-Type: application/json"], TDMREP_JSON)
        else:
            self.counts["pages"] += 1
            body = b"<html><head><title>page</title></head><body>a page</body></html>"
            self._send(b"200 OK", [b"Content-Type: text/html"], body)

    def _send(self, status: bytes, headers: list[bytes], body: bytes) -> None:
        assert self.transport is not None
        head = [b"HTTP/1.1 " + status, *headers]
        if not status.startswith(b"304"):
            head.append(b"Content-Length: %d" % len(body))
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)


def serve(conn: Connection, origins: int, licences: bool = False) -> None:
    """The server process: ``origins`` servers, their netlocs sent, then commands from ``conn``
    ("counts": the counts since the last call, then zeroed; "stop")."""

    async def main() -> None:
        counts = dict.fromkeys(COUNTS, 0)
        loop = asyncio.get_running_loop()
        netlocs = []
        servers = []
        for i in range(origins):
            host = host_of(i)
            server = await loop.create_server(lambda i=i: _Site(i, counts, licences), host, 0)
            servers.append(server)
            netlocs.append(f"{host}:{server.sockets[0].getsockname()[1]}")
        conn.send(netlocs)
        while True:
            command = await loop.run_in_executor(None, conn.recv)
            if command == "stop":
                break
            conn.send(dict(counts))
            counts.update(dict.fromkeys(COUNTS, 0))
        for server in servers:
            server.close()

    asyncio.run(main())


class Servers:
    def __init__(self, origins: int, licences: bool = False) -> None:
        self.conn, child = multiprocessing.Pipe()
        self.process = multiprocessing.Process(
            target=serve, args=(child, origins, licences), daemon=True
        )
        self.process.start()
        self.netlocs: list[str] = self.conn.recv()

    def counts(self) -> dict[str, int]:
        """What the servers received since the last call."""
        self.conn.send("counts")
        counts: dict[str, int] = self.conn.recv()
        return counts

    def stop(self) -> None:
        self.conn.send("stop")
        self.process.join(10)


# --- one crawl (a child process) ----------------------------------------------------------------


def _time_store_calls(totals: list[float]) -> None:
    """Add the CPU time of every store call to ``totals[0]``, their number to ``totals[1]``,
    and the time spent parsing stored rules (inside ``get``) to ``totals[2]``. The calling
    thread's time: SQLite lets go of the GIL, and the process's other threads (Scrapy's DNS
    resolver pool among them) run meanwhile."""
    from scrapy_rerp.core.crawl_store import CrawlStore
    from scrapy_rerp.core.store import RobotsStore

    def timed(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                totals[0] += time.thread_time() - started
                totals[1] += 1

        return call

    def timed_parse(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                totals[2] += time.thread_time() - started

        return call

    CrawlStore._rules = timed_parse(CrawlStore._rules)  # type: ignore[method-assign]
    RobotsStore.__init__ = timed(RobotsStore.__init__)  # type: ignore[method-assign]
    for name in ("__init__", "get", "renew", "put", "close"):
        setattr(CrawlStore, name, timed(getattr(CrawlStore, name)))


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    urls = urls_of(config["netlocs"], config["pages"])
    settings = {**CRAWL_SETTINGS}
    if config["store"]:
        settings["RERP_STORE"] = config["store"]
    store_calls = [0.0, 0, 0.0]
    _time_store_calls(store_calls)

    figures, stats = counted_crawl(settings, urls)
    result = {
        **figures,
        "store_cpu": store_calls[0],
        "store_calls": store_calls[1],
        "store_parse_cpu": store_calls[2],
        "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
    }
    send_result(result)


def run_crawl(netlocs: Sequence[str], pages: int, store: Path | None, what: str) -> dict[str, Any]:
    """One crawl in a fresh process; its RESULT."""
    config = {"netlocs": list(netlocs), "pages": pages, "store": str(store) if store else None}
    return run_child(str(Path(__file__).resolve()), config, what, CHILD_TIMEOUT)


def age_store(path: Path, seconds: float) -> int:
    """Move every stored copy ``seconds`` back (fetched and expiry times alike), as a run that
    long ago left them; how many were moved."""
    from scrapy_rerp.core.store import RobotsStore

    moved = 0
    with RobotsStore(path) as store:
        for origin in [entry.origin for entry in store.origins()]:
            copy = store.get(origin)
            if copy is None:
                continue
            store.forget(origin)
            aged = replace(
                copy, fetched_at=copy.fetched_at - seconds, expires_at=copy.expires_at - seconds
            )
            moved += store.put(origin, aged)
    return moved


# --- the runs and the report -------------------------------------------------------------------


def measure(args: argparse.Namespace) -> dict[str, Any]:
    servers = Servers(args.origins)
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
            path = Path(tmp) / "robots.sqlite"

            def crawl(name: str, store: Path | None) -> dict[str, Any]:
                result = run_crawl(servers.netlocs, args.pages, store, name)
                result["name"] = name
                result["served"] = servers.counts()
                runs.append(result)
                print(f"{name:18} {result['served']} cpu {result['cpu']:.2f}", file=sys.stderr)
                return result

            crawl("first", path)
            crawl("restarted fresh", path)
            aged = age_store(path, AGED_BY)
            crawl("restarted expired", path)
            for repeat in range(args.repeats):
                fresh = Path(tmp) / f"repeat-{repeat}.sqlite"
                pair = [("with store", fresh), ("without store", None)]
                for name, store in pair if repeat % 2 == 0 else pair[::-1]:
                    crawl(name, store)
    finally:
        servers.stop()
    return {"origins": args.origins, "pages": args.pages, "aged": aged, "runs": runs}


def _median(runs: Sequence[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _own_share(run: dict[str, Any]) -> float:
    """The store's calls' share of the crawl's CPU, without parsing the stored rules (the
    parse a downloaded robots.txt needs as well)."""
    return (run["store_cpu"] - run.get("store_parse_cpu", 0.0)) / run["cpu"]


def summary(data: dict[str, Any]) -> dict[str, Any]:
    runs = data["runs"]
    by_name = {run["name"]: run for run in runs}
    paired = [run for run in runs if run["name"] == "with store"]
    without = [run for run in runs if run["name"] == "without store"]
    shares = [_own_share(run) for run in runs if run["store_calls"]]
    fresh, expired = by_name["restarted fresh"]["served"], by_name["restarted expired"]["served"]
    origins, pages = data["origins"], data["origins"] * data["pages"]
    return {
        "fresh_downloads": fresh["robots"],
        "expired_conditional": expired["robots_conditional"],
        "expired_304": expired["robots_304"],
        "expired_full": expired["robots_full"],
        "store_share": statistics.median(shares),
        "store_share_max": max(shares),
        "cpu_with": _median(paired, "cpu") if paired else None,
        "cpu_without": _median(without, "cpu") if without else None,
        "fresh_ok": fresh["robots"] == 0 and fresh["pages"] == pages,
        "expired_ok": expired["robots_304"] == expired["robots"] == origins
        and expired["robots_full"] == 0,
        "all_pages": all(run["served"]["pages"] == pages for run in runs),
        "no_errors": all(run["errors"] == 0 for run in runs),
    }


def render(data: dict[str, Any]) -> str:
    origins, pages = data["origins"], data["pages"]
    s = summary(data)
    lines = [
        f"{origins:,} origins (one server each, on 127/8), {pages} allowed "
        f"page{'s' if pages > 1 else ''} and one disallowed URL each: "
        f"{(pages + 1) * origins:,} requests per crawl. Counts are the servers'.",
        "",
        "| Crawl | robots.txt requests | full (200) | conditional | 304 | pages | wall s "
        "| CPU s | store calls | store CPU s | of which parsing | store share | without parsing |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        served = run["served"]
        share = f"{run['store_cpu'] / run['cpu']:.2%}" if run["store_calls"] else "-"
        own = f"{_own_share(run):.2%}" if run["store_calls"] else "-"
        lines.append(
            f"| {run['name']} | {served['robots']} | {served['robots_full']} "
            f"| {served['robots_conditional']} | {served['robots_304']} | {served['pages']} "
            f"| {run['wall']:.2f} | {run['cpu']:.2f} | {run['store_calls']} "
            f"| {run['store_cpu']:.3f} | {run.get('store_parse_cpu', 0.0):.3f} | {share} "
            f"| {own} |"
        )
    lines += [
        "",
        f"Restarted within freshness, robots.txt downloads: {s['fresh_downloads']} "
        f"({'yes' if s['fresh_ok'] else 'NO'}: none, every allowed page crawled).",
        f"Restarted after expiry ({data['aged']:,} copies moved back {AGED_BY / 3600:g} h): "
        f"{s['expired_conditional']:,} conditional requests, {s['expired_304']:,} 304s, "
        f"{s['expired_full']} full bodies ({'yes' if s['expired_ok'] else 'NO'}: one 304 per "
        "origin, no body).",
        f"Every allowed page downloaded in every crawl: {'yes' if s['all_pages'] else 'NO'}; "
        f"errors: {'none' if s['no_errors'] else 'SOME'}.",
        "",
        "The store's calls, share of the crawl's CPU time without parsing the stored rules "
        "(which a downloaded robots.txt needs as well), every crawl with a store: median "
        f"{s['store_share']:.2%}, at most {s['store_share_max']:.2%}; goal under "
        f"{CPU_GOAL:.0%}: {'met' if s['store_share_max'] < CPU_GOAL else 'NOT met'}.",
    ]
    if s["cpu_with"] and s["cpu_without"]:
        ratio = s["cpu_with"] / s["cpu_without"]
        lines.append(
            f"Whole crawls, median CPU s: with a new store {s['cpu_with']:.2f}, without a store "
            f"{s['cpu_without']:.2f}: {ratio:.4f}x (the difference of two noisy totals)."
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = paired_parser(
        __doc__.split("\n\n")[0],
        DEFAULT_RESULTS,
        origins=3000,
        pages=1,
        repeats=5,
        compared="a store",
    )
    return paired_main(
        argv,
        parser,
        script=__file__,
        title=RESULTS_TITLE,
        crawl_child=crawl_child,
        measure=measure,
        render=render,
        summary=summary,
    )


if __name__ == "__main__":
    raise SystemExit(main())
