"""What Web Bot Auth signing (``RERP_SIGNATURE_KEY``) costs a crawl: CPU per request.

The same crawl, with and without ``RERP_SIGNATURE_KEY`` (and ``RERP_SIGNATURE_AGENT``),
``--repeats`` pairs, the order reversed every other pair, each crawl in a fresh process with the
Addon, against ``--origins`` HTTP servers on 127/8 (one origin and one download slot each, served
by a separate process: ``bench_store.py``'s servers), each crawled for ``--pages`` allowed pages
and one disallowed URL. Measured: the crawl process's CPU time (user + system, around the whole
crawl) per request of the spider, and the signing middleware's own ``process_request`` timed on
the reactor thread (``time.thread_time``): the Ed25519 signature, the nonce, the headers set.
Goal: signing adds under :data:`CPU_GOAL` of CPU per request, whole crawls compared in the same
run (the median of each side's CPU per request), with the middleware's own share beside it (the
finer measure: a difference of two whole crawls' CPU times carries their noise). The servers'
counts show that both crawls did the same work; ``robotstxt/signed`` that every request sent
(robots.txt included) was signed.

Usage::

    pip install -e ".[bench,identity]"
    python benchmarks/bench_signing.py --write-results
"""

from __future__ import annotations

import argparse
import json
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

DEFAULT_RESULTS = Path(__file__).resolve().parent / "SIGNING_RESULTS.md"
RESULTS_TITLE = "Web Bot Auth signing benchmark results"
#: Goal: signing adds under 3 % of CPU per request.
CPU_GOAL = 0.03
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl
AGENT = "https://crawler.example/.well-known/http-message-signatures-directory"


def _time_signing(totals: list[float]) -> None:
    """Add the CPU time of the signing middleware's ``process_request`` to ``totals[0]``,
    timed on the calling thread (``time.thread_time``)."""
    from scrapy_rerp.crawl.signing import SigningMiddleware

    method = SigningMiddleware.process_request

    def timed(self: Any, request: Any, spider: Any = None) -> None:
        started = time.thread_time()
        try:
            method(self, request, spider)
        finally:
            totals[0] += time.thread_time() - started

    SigningMiddleware.process_request = timed  # type: ignore[method-assign]


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    urls = urls_of(config["netlocs"], config["pages"])
    settings = {**CRAWL_SETTINGS}
    signing_cpu = [0.0]
    if config["key"]:
        settings["RERP_SIGNATURE_KEY"] = config["key"]
        settings["RERP_SIGNATURE_AGENT"] = AGENT
        _time_signing(signing_cpu)
    figures, stats = counted_crawl(settings, urls)
    send_result(
        {
            **figures,
            "signing_cpu": signing_cpu[0],
            "signed": int(stats.get("robotstxt/signed", 0)),
        }
    )


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from scrapy_rerp.core.identity import write_new_key

    servers = Servers(args.origins)
    runs: list[dict[str, Any]] = []
    script = str(Path(__file__).resolve())
    try:
        with tempfile.TemporaryDirectory(prefix="bench-signing-") as tmp:
            key = str(Path(tmp) / "crawler.jwk")
            write_new_key(key)
            kinds = [("signed", key), ("unsigned", None)]
            for repeat in range(args.repeats):
                for name, key_path in kinds if repeat % 2 == 0 else kinds[::-1]:
                    config = {"netlocs": servers.netlocs, "pages": args.pages, "key": key_path}
                    result = run_child(script, config, "a crawl", CHILD_TIMEOUT)
                    result["name"] = name
                    result["served"] = servers.counts()
                    runs.append(result)
                    print(f"{name:9} cpu {result['cpu']:.2f}", file=sys.stderr)
    finally:
        servers.stop()
    return {"origins": args.origins, "pages": args.pages, "runs": runs}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    runs = data["runs"]
    signed = [run for run in runs if run["name"] == "signed"]
    unsigned = [run for run in runs if run["name"] == "unsigned"]
    per_request = {
        name: statistics.median(run["cpu"] / run["requests"] for run in group)
        for name, group in (("signed", signed), ("unsigned", unsigned))
    }
    shares = [run["signing_cpu"] / run["cpu"] for run in signed]
    sent = [run["served"]["robots"] + run["served"]["pages"] for run in signed]
    return {
        "cpu_per_request_signed": per_request["signed"],
        "cpu_per_request_unsigned": per_request["unsigned"],
        "cpu_ratio": per_request["signed"] / per_request["unsigned"],
        "signing_share": statistics.median(shares),
        "signing_share_max": max(shares),
        "signing_us_per_signature": statistics.median(
            run["signing_cpu"] / run["signed"] * 1e6 for run in signed
        ),
        "every_request_signed": all(
            run["signed"] == n for run, n in zip(signed, sent, strict=True)
        ),
        "same_work": len({json.dumps(run["served"], sort_keys=True) for run in runs}) == 1,
        "no_errors": all(run["errors"] == 0 for run in runs),
    }


def render(data: dict[str, Any]) -> str:
    origins, pages = data["origins"], data["pages"]
    s = summary(data)
    added = s["cpu_ratio"] - 1
    lines = [
        f"{origins:,} origins (one server each, on 127/8), {pages} allowed page"
        f"{'s' if pages > 1 else ''} and one disallowed URL each: "
        f"{(pages + 1) * origins:,} requests per crawl. Counts are the servers'.",
        "",
        "| Crawl | robots.txt | pages | signatures | CPU s | CPU ms per request "
        "| signing CPU s | signing share |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        served = run["served"]
        lines.append(
            f"| {run['name']} | {served['robots']} | {served['pages']} | {run['signed']} "
            f"| {run['cpu']:.2f} | {run['cpu'] / run['requests'] * 1000:.3f} "
            f"| {run['signing_cpu']:.3f} | {run['signing_cpu'] / run['cpu']:.2%} |"
        )
    lines += [
        "",
        f"Both crawls did the same work (the servers' counts): "
        f"{'yes' if s['same_work'] else 'NO'}; errors: {'none' if s['no_errors'] else 'SOME'}; "
        f"every request sent was signed (robots.txt included): "
        f"{'yes' if s['every_request_signed'] else 'NO'}.",
        f"Whole crawls, CPU per request, median: signed {s['cpu_per_request_signed'] * 1000:.3f}"
        f" ms, unsigned {s['cpu_per_request_unsigned'] * 1000:.3f} ms: {s['cpu_ratio']:.4f}x "
        f"({added:+.2%}); goal under {CPU_GOAL:.0%} more: "
        f"{'met' if added < CPU_GOAL else 'NOT met'}.",
        "The signing middleware's own process_request, share of the signed crawl's CPU: median "
        f"{s['signing_share']:.2%}, at most {s['signing_share_max']:.2%} "
        f"({s['signing_us_per_signature']:.1f} µs per signature); goal under {CPU_GOAL:.0%}: "
        f"{'met' if s['signing_share_max'] < CPU_GOAL else 'NOT met'}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = paired_parser(
        __doc__.split("\n\n")[0],
        DEFAULT_RESULTS,
        origins=500,
        pages=10,
        repeats=3,
        compared="signing",
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
