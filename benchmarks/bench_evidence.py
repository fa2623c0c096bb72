"""What evidence records (``RERP_EVIDENCE``) cost a crawl: CPU per request, memory, file size.

The same crawl, with and without ``RERP_EVIDENCE``, ``--repeats`` pairs alternating, each in a
fresh process with the Addon, against ``--origins`` HTTP servers on 127/8 (one origin and one
download slot each, served by a separate process: ``bench_store.py``'s servers), each crawled
for ``--pages`` allowed pages and one disallowed URL. Measured: the crawl process's CPU time
(user + system, around the whole crawl) per request, its peak resident memory
(``ru_maxrss``), and the evidence file's size per 1,000 pages. The servers' counts show that
both crawls did the same work. The evidence's own calls are timed on the reactor thread
(``time.thread_time``): the check that names the deciding line, the records built and
written. Goal: they take under :data:`CPU_GOAL` of the crawl's CPU (per request alike), and
memory stays bounded (the peaks of the two crawls do not differ by the number of records).
Whole crawls with and without evidence are compared beside it, a difference of noisy totals.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_evidence.py --write-results
"""

from __future__ import annotations

import argparse
import inspect
import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The shared report helpers and bench_store's servers sit beside the script, which also runs as
# a child process.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _children import paired_main, paired_parser, run_child, send_result  # noqa: E402
from _spiders import counted_crawl  # noqa: E402
from bench_store import CRAWL_SETTINGS, Servers, urls_of  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "EVIDENCE_RESULTS.md"
RESULTS_TITLE = "Evidence records benchmark results"
#: Goal: evidence adds under 5 % of CPU per request.
CPU_GOAL = 0.05
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl


def _time_evidence_calls(totals: list[float]) -> None:
    """Add the CPU time of the evidence's own work to ``totals[0]``: the check that names the
    deciding line (in place of ``allowed``), the records built and written. Timed on the calling
    thread (``time.thread_time``), the outermost calls only."""
    from scrapy_rerp.crawl.evidence import EvidenceLog
    from scrapy_rerp.crawl.gate import RobotsGate
    from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware

    def timed(method: Any) -> Any:
        # A signal's handler is called with the arguments its signature names, and this
        # wrapper's names all of them (and the signal and its sender): it passes on the method's.
        names = set(inspect.signature(method).parameters)

        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return method(*args, **{k: v for k, v in kwargs.items() if k in names})
            finally:
                totals[0] += time.thread_time() - started

        return call

    # The gate's and the middleware's senders, and the log's own document handler.
    for cls, name in (
        (EvidenceLog, "document_received"),
        (RobotsGate, "_decided"),
        (RobotsGate, "_admitted"),
        (RobotsGate, "tell_refused"),
        (RobotsTxtMiddleware, "_answered"),
        (RobotsTxtMiddleware, "_failed"),
    ):
        setattr(cls, name, timed(getattr(cls, name)))


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    urls = urls_of(config["netlocs"], config["pages"])
    settings = {**CRAWL_SETTINGS}
    evidence_cpu = [0.0]
    if config["evidence"]:
        settings["RERP_EVIDENCE"] = config["evidence"]
        if config.get("warc"):
            settings["RERP_EVIDENCE_WARC"] = config["evidence"] + ".warc.gz"
        _time_evidence_calls(evidence_cpu)
    figures, stats = counted_crawl(settings, urls)
    result = {
        **figures,
        "evidence_cpu": evidence_cpu[0],
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/evidence/")},
    }
    send_result(result)


def run_crawl(
    netlocs: Sequence[str], pages: int, evidence: Path | None, warc: bool = False
) -> dict[str, Any]:
    """One crawl in a fresh process; its RESULT, with the evidence's size."""
    config = {
        "netlocs": list(netlocs),
        "pages": pages,
        "evidence": str(evidence or "") or None,
        "warc": warc,
    }
    result = run_child(str(Path(__file__).resolve()), config, "a crawl", CHILD_TIMEOUT)
    if evidence is not None:
        result["evidence_bytes"] = evidence.stat().st_size
        result["evidence_lines"] = len(evidence.read_bytes().splitlines())
        if warc:
            result["warc_bytes"] = Path(f"{evidence}.warc.gz").stat().st_size
    return result


def measure(args: argparse.Namespace) -> dict[str, Any]:
    servers = Servers(args.origins)
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
            for repeat in range(args.repeats):
                kinds = [("with evidence", Path(tmp) / f"e{repeat}.jsonl", False)]
                kinds.append(("without", None, False))
                if args.warc:
                    kinds.append(("with evidence and WARC", Path(tmp) / f"w{repeat}.jsonl", True))
                for name, evidence, warc in kinds if repeat % 2 == 0 else kinds[::-1]:
                    result = run_crawl(servers.netlocs, args.pages, evidence, warc)
                    result["name"] = name
                    result["served"] = servers.counts()
                    runs.append(result)
                    print(f"{name:14} cpu {result['cpu']:.2f}", file=sys.stderr)
    finally:
        servers.stop()
    return {"origins": args.origins, "pages": args.pages, "runs": runs}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    runs = data["runs"]
    with_ = [run for run in runs if run["name"] == "with evidence"]
    warc_runs = [run for run in runs if run["name"] == "with evidence and WARC"]
    without = [run for run in runs if run["name"] == "without"]
    per_request = {
        name: statistics.median(run["cpu"] / run["requests"] for run in group)
        for name, group in (("with", with_), ("without", without))
    }
    pages = data["origins"] * data["pages"]
    shares = [run["evidence_cpu"] / run["cpu"] for run in with_]
    return {
        "evidence_share": statistics.median(shares),
        "evidence_share_max": max(shares),
        "cpu_per_request_with": per_request["with"],
        "cpu_per_request_without": per_request["without"],
        "cpu_ratio": per_request["with"] / per_request["without"],
        "rss_with": statistics.median(run["max_rss_kib"] for run in with_),
        "rss_without": statistics.median(run["max_rss_kib"] for run in without),
        "bytes_per_1000_pages": statistics.median(run["evidence_bytes"] for run in with_)
        * 1000
        / pages,
        "warc_share": statistics.median(run["evidence_cpu"] / run["cpu"] for run in warc_runs)
        if warc_runs
        else None,
        "same_work": len({json.dumps(run["served"], sort_keys=True) for run in runs}) == 1,
        "no_errors": all(run["errors"] == 0 for run in runs),
    }


def render(data: dict[str, Any]) -> str:
    origins, pages = data["origins"], data["pages"]
    s = summary(data)
    lines = [
        f"{origins:,} origins (one server each, on 127/8), {pages} allowed page"
        f"{'s' if pages > 1 else ''} and one disallowed URL each: "
        f"{(pages + 1) * origins:,} requests per crawl. Counts are the servers'.",
        "",
        "| Crawl | robots.txt | pages | CPU s | CPU ms per request | evidence CPU s "
        "| evidence share | peak RSS MiB | evidence lines | evidence bytes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        served = run["served"]
        lines.append(
            f"| {run['name']} | {served['robots']} | {served['pages']} | {run['cpu']:.2f} "
            f"| {run['cpu'] / run['requests'] * 1000:.3f} | {run['evidence_cpu']:.3f} "
            f"| {run['evidence_cpu'] / run['cpu']:.2%} | {run['max_rss_kib'] / 1024:.1f} "
            f"| {run.get('evidence_lines', '-')} | {run.get('evidence_bytes', '-')} |"
        )
    lines += [
        "",
        f"Both crawls did the same work (the servers' counts): "
        f"{'yes' if s['same_work'] else 'NO'}; errors: {'none' if s['no_errors'] else 'SOME'}.",
        "The evidence's own calls (the check that names the deciding line, the records built "
        f"and written), share of the crawl's CPU: median {s['evidence_share']:.2%}, at most "
        f"{s['evidence_share_max']:.2%}; goal under {CPU_GOAL:.0%}: "
        f"{'met' if s['evidence_share_max'] < CPU_GOAL else 'NOT met'}.",
        f"Whole crawls, CPU per request, median: with evidence "
        f"{s['cpu_per_request_with'] * 1000:.3f} ms, without "
        f"{s['cpu_per_request_without'] * 1000:.3f} ms: {s['cpu_ratio']:.4f}x (the difference "
        "of two noisy totals; the calls' own time is the finer measure).",
        *(
            [
                "With WARC as well (RERP_EVIDENCE_WARC), the evidence's own calls' share: "
                f"median {s['warc_share']:.2%} (warcio compresses and digests every record)."
            ]
            if s["warc_share"] is not None
            else []
        ),
        f"Peak RSS, median: with evidence {s['rss_with'] / 1024:.1f} MiB, without "
        f"{s['rss_without'] / 1024:.1f} MiB.",
        f"Evidence size: {s['bytes_per_1000_pages'] / 1024:.1f} KiB per 1,000 pages "
        "(with one disallowed URL per origin, and one robots.txt record per origin).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = paired_parser(
        __doc__.split("\n\n")[0],
        DEFAULT_RESULTS,
        origins=500,
        pages=10,
        repeats=3,
        compared="evidence",
    )
    parser.add_argument(
        "--warc", action="store_true", help="also crawls writing WARC (RERP_EVIDENCE_WARC)"
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
