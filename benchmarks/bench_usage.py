"""What ``RERP_USAGE = "train-ai"`` costs a crawl: the downloads it adds, and its CPU.

The same crawl, with and without ``RERP_USAGE = "train-ai"``, ``--repeats`` pairs alternating,
each in a fresh process with the Addon, against ``--origins`` HTTP servers on 127/8 (one origin
and one download slot each, served by a separate process: ``bench_store.py``'s servers, whose
``/.well-known/tdmrep.json`` reserves ``/reserved/``), each crawled for ``--pages`` allowed pages
and one disallowed URL. The servers count the robots.txt, tdmrep.json and page requests: the
goal is one extra download per origin (its tdmrep.json) and nothing else. A third crawl, with
the purpose, runs against servers whose robots.txt names the origin's RSL licence file (which
permits everything, for free): its goal is one more download per origin (the licence) and under
:data:`CPU_GOAL` more CPU per request than the crawl with the purpose and no licences. CPU: the
work only a crawl with a purpose does, timed on the reactor thread (``time.thread_time``): the usage
checks of robots.txt and the ``Content-Usage`` header (``UsagePolicy``), the lookups of the
origin's tdmrep.json and what follows its download (``OriginService.rules`` and its listener,
for the tdmrep.json kind), and what the page layer's reading of a response costs more than
without a purpose (TDMRep's headers and meta tags, the file's reservation: the per-response
difference of the two crawls' ``PageDirectivesMiddleware._read``). Goal: under
:data:`CPU_GOAL` of the crawl's CPU. Whole crawls are compared beside it, a difference of noisy
totals.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_usage.py --write-results
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
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

DEFAULT_RESULTS = Path(__file__).resolve().parent / "USAGE_RESULTS.md"
RESULTS_TITLE = "AI usage (RERP_USAGE) benchmark results"
#: Goal: a purpose adds under 1 % of CPU per request, beyond its one download per origin.
CPU_GOAL = 0.01
#: The crawl with the purpose against servers whose robots.txt names an RSL licence.
RSL_RUN = "train-ai, RSL"
CHILD_TIMEOUT = 900.0  # seconds; a guard against a hung crawl


def _time_calls(totals: dict[str, float]) -> None:
    """Time, on the calling thread, the usage layer's own calls (``usage``), and the page
    layer's reading of each response (``read``, with its count in ``reads``)."""
    from scrapy_rerp.core.origins import OriginService
    from scrapy_rerp.crawl.documents import DocumentListener
    from scrapy_rerp.crawl.page_directives import PageDirectivesMiddleware
    from scrapy_rerp.crawl.usage import UsagePolicy

    def timed(method: Any, key: str, only: Any = None) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            if only is not None and not only(self):
                return method(self, *args, **kwargs)
            started = time.thread_time()
            try:
                return method(self, *args, **kwargs)
            finally:
                totals[key] += time.thread_time() - started
                totals[f"{key}_calls"] += 1

        return call

    def is_tdmrep(service: Any) -> bool:  # or the RSL licences'
        return getattr(getattr(service, "kind", None), "meta_key", None) is not None

    UsagePolicy.check_request = timed(UsagePolicy.check_request, "usage")  # type: ignore[method-assign]
    UsagePolicy.check_documents = timed(UsagePolicy.check_documents, "usage")  # type: ignore[method-assign]
    UsagePolicy.check_response = timed(UsagePolicy.check_response, "usage")  # type: ignore[method-assign]
    DocumentListener.rules_known = timed(DocumentListener.rules_known, "usage")  # type: ignore[method-assign]
    OriginService.rules = timed(OriginService.rules, "usage", is_tdmrep)  # type: ignore[method-assign]
    PageDirectivesMiddleware._read = timed(PageDirectivesMiddleware._read, "read")  # type: ignore[method-assign]


def crawl_child(config: dict[str, Any]) -> None:
    """Run one crawl; print its measurements as one JSON line."""
    urls = urls_of(config["netlocs"], config["pages"])
    settings = {**CRAWL_SETTINGS}
    if config["usage"]:
        settings["RERP_USAGE"] = config["usage"]
    totals = dict.fromkeys(("usage", "usage_calls", "read", "read_calls"), 0.0)
    _time_calls(totals)
    figures, _ = counted_crawl(settings, urls)
    result = {**figures, **totals}
    send_result(result)


def run_crawl(netlocs: Sequence[str], pages: int, usage: str | None) -> dict[str, Any]:
    """One crawl in a fresh process; its RESULT."""
    config = {"netlocs": list(netlocs), "pages": pages, "usage": usage}
    return run_child(str(Path(__file__).resolve()), config, "a crawl", CHILD_TIMEOUT)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    servers = Servers(args.origins)
    licensed = Servers(args.origins, licences=True)
    runs: list[dict[str, Any]] = []
    try:
        for repeat in range(args.repeats):
            crawls = [
                ("train-ai", "train-ai", servers),
                ("no purpose", None, servers),
                (RSL_RUN, "train-ai", licensed),
            ]
            for name, usage, where in crawls if repeat % 2 == 0 else crawls[::-1]:
                result = run_crawl(where.netlocs, args.pages, usage)
                result["name"] = name
                result["served"] = where.counts()
                runs.append(result)
                print(f"{name:10} cpu {result['cpu']:.2f}", file=sys.stderr)
    finally:
        servers.stop()
        licensed.stop()
    return {"origins": args.origins, "pages": args.pages, "runs": runs}


def _per_read(runs: Sequence[dict[str, Any]]) -> float:
    return statistics.median(run["read"] / max(run["read_calls"], 1) for run in runs)


def summary(data: dict[str, Any]) -> dict[str, Any]:
    licensed = [run for run in data["runs"] if run["name"] == RSL_RUN]
    runs = [run for run in data["runs"] if run["name"] != RSL_RUN]
    with_ = [run for run in runs if run["name"] == "train-ai"]
    without = [run for run in runs if run["name"] == "no purpose"]
    extra_read = _per_read(with_) - _per_read(without)
    shares = [(run["usage"] + extra_read * run["read_calls"]) / run["cpu"] for run in with_]
    origins = data["origins"]
    served_with = {json.dumps(run["served"], sort_keys=True) for run in with_}
    served_without = {json.dumps(run["served"], sort_keys=True) for run in without}
    one_each = all(run["served"]["tdmrep"] == origins for run in with_) and all(
        run["served"]["tdmrep"] == 0 for run in without
    )
    same_otherwise = all(
        {k: v for k, v in a["served"].items() if k != "tdmrep"}
        == {k: v for k, v in b["served"].items() if k != "tdmrep"}
        for a in runs
        for b in runs
    )
    per_request = {
        name: statistics.median(run["cpu"] / run["requests"] for run in group)
        for name, group in (("with", with_), ("without", without))
    }
    # Per request sent, the licence downloads included (the goal's "one extra download"); and
    # the licences' own work (the usage calls' CPU beyond the purpose's without licences).
    rsl_ratio = (
        statistics.median(run["cpu"] / (run["requests"] + run["served"]["rsl"]) for run in licensed)
        / per_request["with"]
        if licensed
        else None
    )
    usage_without_licences = statistics.median(run["usage"] for run in with_)
    rsl_shares = [(run["usage"] - usage_without_licences) / run["cpu"] for run in licensed]
    one_licence_each = all(
        run["served"]["rsl"] == origins and {**run["served"], "rsl": 0} == with_[0]["served"]
        for run in licensed
    )
    return {
        "rsl_ratio": rsl_ratio,
        "rsl_share_max": max(rsl_shares) if rsl_shares else None,
        "one_licence_each": one_licence_each and bool(licensed),
        "usage_share": statistics.median(shares),
        "usage_share_max": max(shares),
        "extra_read_us": extra_read * 1e6,
        "one_download_each": one_each and len(served_with) == 1 and len(served_without) == 1,
        "same_otherwise": same_otherwise,
        "cpu_ratio": per_request["with"] / per_request["without"],
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
        "| Crawl | robots.txt | tdmrep.json | RSL | pages | CPU s | usage calls CPU s "
        "| page reading µs per response |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        served = run["served"]
        per_read = run["read"] / max(run["read_calls"], 1) * 1e6
        lines.append(
            f"| {run['name']} | {served['robots']} | {served['tdmrep']} | {served.get('rsl', 0)} "
            f"| {served['pages']} "
            f"| {run['cpu']:.2f} | {run['usage']:.3f} | {per_read:.1f} |"
        )
    as_said = s["one_download_each"] and s["same_otherwise"]
    lines += [
        "",
        "One tdmrep.json download per origin with the purpose, none without, and the same "
        f"robots.txt and page requests: {'yes' if as_said else 'NO'}; "
        f"errors: {'none' if s['no_errors'] else 'SOME'}.",
        "The purpose's own work (usage checks, tdmrep.json lookups, and the page layer's "
        f"reading {s['extra_read_us']:.1f} µs longer per response), share of the crawl's CPU: "
        f"median {s['usage_share']:.2%}, at most {s['usage_share_max']:.2%}; goal under "
        f"{CPU_GOAL:.0%}: {'met' if s['usage_share_max'] < CPU_GOAL else 'NOT met'}.",
        f"Whole crawls, CPU per request, median: with the purpose {s['cpu_ratio']:.4f}x "
        "without (a difference of two noisy totals; it includes the tdmrep.json downloads).",
    ]
    if s["rsl_ratio"] is not None:
        share = s["rsl_share_max"]
        lines.append(
            f"With an RSL licence named by every robots.txt: one licence download per origin "
            f"and the same other requests: {'yes' if s['one_licence_each'] else 'NO'}; the "
            f"licences' own work (their lookups, decisions and listener, beyond the usage calls "
            f"of the crawl without licences), share of the crawl's CPU: at most {share:.2%}; "
            f"goal under {CPU_GOAL:.0%}: {'met' if share < CPU_GOAL else 'NOT met'}. Whole "
            f"crawls, CPU per request sent (the licence downloads counted): "
            f"{s['rsl_ratio']:.4f}x the crawl with the purpose and no licences."
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = paired_parser(
        __doc__.split("\n\n")[0],
        DEFAULT_RESULTS,
        origins=500,
        pages=10,
        repeats=3,
        compared="RERP_USAGE = 'train-ai'",
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
