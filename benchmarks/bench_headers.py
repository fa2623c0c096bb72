"""What a site that says too much costs a crawl: huge headers and a robots.txt of thousands of
``Content-Usage`` lines, against the same crawl with ``ROBOTSTXT_OBEY`` off.

Two cases (``--case``, both by default), each ``--repeats`` pairs of crawls alternating which
runs first (A B, B A, ...), each crawl in a fresh process with the Addon and
``RERP_USAGE = "train-ai"``, ``LOG_LEVEL = "INFO"``, against one origin served by threads of this
process (scrapy_rerp's demo server), so that serving costs the crawler no CPU time:

* ``headers``: ``--pages`` pages, half answering ``--lines`` ``Content-Usage`` lines of
  ``--line-bytes`` bytes each (``train-ai=n`` first: the page is dropped by its header), half as
  many ``X-Robots-Tag`` lines (``noai, nofollow`` first);
* ``robots``: ``--robots-pages`` small pages of an origin whose robots.txt has ``--robots-lines``
  ``Content-Usage`` lines (path-scoped, none of them matching: every page is allowed), read
  whole (``RERP_MAX_SIZE`` raised to :data:`ROBOTS_MAX_SIZE`: 28,000 such lines are 1.1 MB).

Per crawl: the crawler's CPU time (``getrusage``, the whole process from the crawl's start to
its end), the pages the spider got and the requests dropped (with their reasons from the
stats: every request is either a page or a drop with its reason), the requests parked for
robots.txt or tdmrep.json and parked again (each parking is one more trip through Scrapy's
scheduler and downloader middlewares: how many depends on how many start requests reach the
middleware before the origin's files are read, and moves the CPU time with it), the longest
line of its log file and the largest evidence record (``RERP_EVIDENCE``, on with robots.txt).
One origin holds at most ``RERP_MAX_PARKED_PER_ORIGIN`` (1,000) requests waiting: with more
``--robots-pages`` than that, the start requests past it that reach the middleware before robots.txt
is read are dropped (``dropped/park_limit``), as in any crawl. Goal: the crawl that
obeys within :data:`CPU_GOAL` times the CPU of the one that does not, and nothing logged or
recorded beyond the documented bounds (docs/usage.rst and docs/evidence.rst, "Bounds").

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_headers.py --write-results
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The shared report helpers sit beside the script, which also runs as a child process.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _children import paired_main, paired_parser, run_child, send_result  # noqa: E402
from _spiders import counted_crawl  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "HEADERS_RESULTS.md"
RESULTS_TITLE = "Huge headers and usage lines benchmark results"
#: Goal: obeying robots.txt costs a crawl of such a site at most 1.2 times its CPU without.
CPU_GOAL = 1.2
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl
CASES = ("headers", "robots")
#: The issue's figures: 2,000 header lines of 14 KB; a robots.txt of 28,000 usage lines.
LINES, LINE_BYTES, ROBOTS_LINES = 2_000, 14 * 1024, 28_000
#: Pages of the robots case: more than RERP_MAX_PARKED_PER_ORIGIN, so that a run whose start
#: requests all arrive before robots.txt is read shows the limit's drops.
ROBOTS_PAGES = 1_006
#: RERP_MAX_SIZE of the robots case, so that all its lines are read.
ROBOTS_MAX_SIZE = 4 * 1024 * 1024
CRAWL_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "DOWNLOAD_TIMEOUT": 120,
    "RETRY_ENABLED": False,
    "COOKIES_ENABLED": False,
    "ADDONS": {"scrapy_rerp.Addon": 100},
    "RERP_USAGE": "train-ai",
}


def padded(first: str, filler: str, size: int) -> str:
    """A header line of about *size* bytes: *first*, then numbered *filler* items."""
    items = [first]
    length = len(first)
    while length + len(filler) + 8 < size:
        item = f"{filler}{len(items)}"
        items.append(item)
        length += len(item) + 2
    return ", ".join(items)


def many_lines(name: str, line: str, count: int) -> dict[str, str]:
    """*count* ``name: line`` header lines: the demo server writes a value as given, so the line
    breaks in it start the other lines on the wire."""
    return {name: f"\r\n{name}: ".join([line] * count)}


def robots_txt(lines: int) -> str:
    """A ``*`` group that allows everything, with *lines* path-scoped Content-Usage lines that
    match none of the crawled pages."""
    rules = "".join(f"Content-Usage: /scoped/{n}/ train-ai=n\n" for n in range(lines))
    return "User-agent: *\nAllow: /\n" + rules


def start_site(case: str, args: argparse.Namespace) -> Any:
    """The origin of *case*, started: its server (``.url(path)``, ``.stop()``)."""
    from scrapy_rerp.demo.local_server import Reply, Server

    server = Server()
    if case == "headers":
        server.robots("User-agent: *\nAllow: /\n")
        usage = padded("train-ai=n", "category-", args.line_bytes)
        robots_tag = padded("noai, nofollow", "noarchive-", args.line_bytes)
        usage_reply = Reply(
            body="<html><body>u</body></html>",
            content_type="text/html",
            headers=many_lines("Content-Usage", usage, args.lines),
        )
        robots_tag_reply = Reply(
            body="<html><body>r</body></html>",
            content_type="text/html",
            headers=many_lines("X-Robots-Tag", robots_tag, args.lines),
        )
        server.default = lambda hit: usage_reply if hit.path.startswith("/u") else robots_tag_reply
    else:
        server.robots(robots_txt(args.robots_lines))
    return server.start()


def pages_of(case: str, args: argparse.Namespace) -> int:
    """The pages crawled in *case*: ``--robots-pages`` for robots (``--pages`` if not given)."""
    if case == "robots" and args.robots_pages is not None:
        return int(args.robots_pages)
    return int(args.pages)


def paths_of(case: str, pages: int) -> list[str]:
    if case == "headers":
        return [f"/{'u' if n % 2 == 0 else 'r'}/{n}" for n in range(pages)]
    return [f"/page/{n}" for n in range(pages)]


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    settings = {**CRAWL_SETTINGS, "ROBOTSTXT_OBEY": config["obey"], "LOG_FILE": config["log"]}
    if config["obey"]:
        settings["RERP_EVIDENCE"] = config["evidence"]
    if config["case"] == "robots":
        settings["RERP_MAX_SIZE"] = ROBOTS_MAX_SIZE
    figures, stats = counted_crawl(settings, config["urls"])
    send_result(
        {
            **figures,
            "header_cuts": stats.get("robotstxt/usage/header_cut", 0)
            + stats.get("robotstxt/page/header_cut", 0),
            # Why requests were dropped (robotstxt/dropped/<reason>, a usage preference's
            # robotstxt/usage/dropped/<reason>) and how often they waited: every request the
            # spider did not get is in the first, and the parkings say how much of the crawl's
            # CPU went to trips back through the scheduler.
            "drops": {
                key.removeprefix("robotstxt/"): value
                for key, value in stats.items()
                if key.startswith(("robotstxt/dropped/", "robotstxt/usage/dropped/"))
            },
            "parked": stats.get("robotstxt/parked", 0),
            "reparked": stats.get("robotstxt/reparked", 0),
        }
    )


def _sizes(path: Path) -> tuple[int, int]:
    """The longest line of a file, and its size, in bytes (0, 0 when there is none)."""
    if not path.exists():
        return 0, 0
    longest = size = 0
    with path.open("rb") as file:
        for line in file:
            longest = max(longest, len(line.rstrip(b"\r\n")))
            size += len(line)
    return longest, size


def _within_bounds(path: Path) -> bool:
    """Whether every field of every record in an evidence file is within its bound."""
    from scrapy_rerp.core.lengths import MAX_ENTRIES, MAX_FIELD_CHARS

    def within(value: Any) -> bool:
        if isinstance(value, str):
            return len(value) <= MAX_FIELD_CHARS
        if isinstance(value, dict):
            return all(within(v) for k, v in value.items() if k != "body")
        if isinstance(value, list):
            return len(value) <= MAX_ENTRIES and all(within(v) for v in value)
        return True

    if not path.exists():
        return True
    with path.open("rb") as file:
        return all(within(json.loads(line)) for line in file if line.strip())


def run_crawl(case: str, urls: Sequence[str], obey: bool) -> dict[str, Any]:
    """One crawl in a fresh process; its RESULT, with what it logged and recorded."""
    with tempfile.TemporaryDirectory(prefix="bench-headers-") as tmp:
        log, evidence = Path(tmp) / "crawl.log", Path(tmp) / "evidence.jsonl"
        config = {
            "case": case,
            "urls": list(urls),
            "obey": obey,
            "log": str(log),
            "evidence": str(evidence),
        }
        result = run_child(str(Path(__file__).resolve()), config, f"a {case} crawl", CHILD_TIMEOUT)
        result["log_longest"], result["log_bytes"] = _sizes(log)
        result["record_largest"], result["evidence_bytes"] = _sizes(evidence)
        result["records_within_bounds"] = _within_bounds(evidence)
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    for case in args.case or CASES:
        server = start_site(case, args)
        try:
            urls = [server.url(path) for path in paths_of(case, pages_of(case, args))]
            for repeat in range(args.repeats):
                pair = [("robots.txt obeyed", True), ("robots.txt off", False)]
                for name, obey in pair if repeat % 2 == 0 else pair[::-1]:
                    result = run_crawl(case, urls, obey)
                    result.update(case=case, name=name, order=repeat)
                    runs.append(result)
                    print(f"{case:8} {name:18} cpu {result['cpu']:.2f}", file=sys.stderr)
        finally:
            server.stop()
    return {
        "origins": 1,
        "pages": {case: pages_of(case, args) for case in args.case or CASES},
        "lines": args.lines,
        "line_bytes": args.line_bytes,
        "robots_lines": args.robots_lines,
        "runs": runs,
    }


def summary(data: dict[str, Any]) -> dict[str, Any]:
    from scrapy_rerp.core.lengths import MAX_FIELD_CHARS

    # A log line quotes at most three bounded values beside its own words, and its prefix.
    log_bound = 4 * MAX_FIELD_CHARS + 200
    cases: dict[str, Any] = {}
    for case in dict.fromkeys(run["case"] for run in data["runs"]):
        of_case = [run for run in data["runs"] if run["case"] == case]
        obeyed = [run for run in of_case if run["name"] == "robots.txt obeyed"]
        off = [run for run in of_case if run["name"] == "robots.txt off"]
        ratios = [a["cpu"] / b["cpu"] for a, b in zip(obeyed, off, strict=False)]
        cases[case] = {
            "cpu_obeyed": statistics.median(run["cpu"] for run in obeyed),
            "cpu_off": statistics.median(run["cpu"] for run in off),
            "cpu_ratio": statistics.median(ratios),
            "cpu_ratios": ratios,
            "log_longest": max(run["log_longest"] for run in obeyed),
            "record_largest": max(run["record_largest"] for run in obeyed),
            "within_bounds": all(
                run["records_within_bounds"] and run["log_longest"] <= log_bound for run in obeyed
            ),
            "no_errors": all(run["errors"] == 0 for run in of_case),
            "accounted": all(_accounted(run) for run in of_case),
        }
    return {"log_bound": log_bound, "cases": cases}


def _accounted(run: dict[str, Any]) -> bool:
    """Whether every request of a crawl is accounted for: the spider got its page, or its
    errback an error or a drop, and each drop has its reason in the stats."""
    dropped = sum(run["drops"].values())
    return (
        run["pages"] + run["ignored"] + run["errors"]
        == run["requests"]
        == (run["pages"] + dropped + run["errors"])
    )


def _drops(run: dict[str, Any]) -> str:
    """The requests dropped, with their reasons: ``2 (dropped/park_limit 2)``."""
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(run["drops"].items()))
    return f"{run['ignored']} ({reasons})" if reasons else str(run["ignored"])


def render(data: dict[str, Any]) -> str:
    s = summary(data)
    pages = data["pages"]
    lines = [
        f"One origin. headers: {pages.get('headers', 0):,} pages per crawl, half answering "
        f"{data['lines']:,} Content-Usage lines of {data['line_bytes']:,} bytes (train-ai=n "
        f"first), half {data['lines']:,} X-Robots-Tag lines (noai, nofollow first). robots: a "
        f"robots.txt of {data['robots_lines']:,} path-scoped Content-Usage lines (read "
        f"whole), {pages.get('robots', 0):,} small pages per crawl. RERP_USAGE = 'train-ai', "
        "LOG_LEVEL INFO; the evidence on with robots.txt.",
        "",
        "| Case | Crawl | pages | dropped (why) | parked, again | CPU s | wall s "
        "| longest log line bytes | log bytes | largest record bytes | header cuts |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for run in data["runs"]:
        lines.append(
            f"| {run['case']} | {run['name']} | {run['pages']} | {_drops(run)} "
            f"| {run['parked']}, {run['reparked']} | {run['cpu']:.2f} | {run['wall']:.2f} "
            f"| {run['log_longest']:,} | {run['log_bytes']:,} | {run['record_largest']:,} "
            f"| {run['header_cuts']} |"
        )
    lines.append("")
    for case, figures in s["cases"].items():
        met = figures["cpu_ratio"] <= CPU_GOAL
        ratios = ", ".join(f"{ratio:.2f}x" for ratio in figures["cpu_ratios"])
        lines.append(
            f"- {case}: CPU with robots.txt {figures['cpu_ratio']:.2f}x without (median of the "
            f"pairs: {ratios}; goal at most {CPU_GOAL}x: {'met' if met else 'NOT met'}); "
            f"longest log line {figures['log_longest']:,} bytes, largest record "
            f"{figures['record_largest']:,} bytes; within the documented bounds (log lines "
            f"under {s['log_bound']:,} bytes, every record field bounded): "
            f"{'yes' if figures['within_bounds'] else 'NO'}; errors: "
            f"{'none' if figures['no_errors'] else 'SOME'}; every request accounted for "
            f"(a page, or an errback with its reason in the stats): "
            f"{'yes' if figures['accounted'] else 'NO'}."
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = paired_parser(
        __doc__.split("\n\n")[0],
        DEFAULT_RESULTS,
        origins=1,
        pages=40,
        repeats=6,
        compared="robots.txt obeyed",
    )
    parser.add_argument("--case", action="append", choices=CASES, help="run only this case")
    parser.add_argument("--lines", type=int, default=LINES, help="header lines per page")
    parser.add_argument("--line-bytes", type=int, default=LINE_BYTES, help="bytes per line")
    parser.add_argument(
        "--robots-lines", type=int, default=ROBOTS_LINES, help="Content-Usage lines in robots.txt"
    )
    parser.add_argument(
        "--robots-pages",
        type=int,
        default=ROBOTS_PAGES,
        help="pages of the robots case (--pages for the headers case)",
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
        facts=lambda args: [
            f"1 origin; headers {pages_of('headers', args)} pages, robots "
            f"{pages_of('robots', args)} pages; {args.repeats} pairs with and without "
            "robots.txt obeyed"
        ],
    )


if __name__ == "__main__":
    raise SystemExit(main())
