"""What the paired crawl benchmarks (bench_store, bench_evidence, bench_usage) share: a crawl
run in a child process of its own, its configuration through a file (with thousands of origins
it is too long for a command line) and its measurements back as one ``RESULT`` JSON line; and
their command line (:func:`paired_parser`, :func:`paired_main`)."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _results import add_write_results_argument, write_results

RESULT = "RESULT "


def cpu_seconds() -> float:
    """This process's CPU time so far, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def send_result(result: dict[str, Any]) -> None:
    """The child's measurements, as the parent reads them."""
    print(RESULT + json.dumps(result, default=str), flush=True)


def run_child(script: str, config: dict[str, Any], what: str, timeout: float) -> dict[str, Any]:
    """Run ``script --child CONFIG_FILE`` in a fresh process; its result. A child that fails
    or outlives ``timeout`` seconds ends the benchmark, saying ``what`` it was."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="bench-") as file:
        json.dump(config, file)
        file.flush()
        command = [sys.executable, script, "--child", file.name]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"{what} did not end within {timeout:g} s") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    if done.stderr.strip():
        sys.stderr.write(done.stderr)
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT) :])
    return result


def shown_argv(argv: Sequence[str] | None) -> list[str]:
    """The command line a results file shows: the one given, without the smoke tests' own
    ``--results PATH``, so that a reader can run it."""
    shown = list(argv if argv is not None else sys.argv[1:])
    if "--results" in shown:
        at = shown.index("--results")
        del shown[at : at + 2]
    return shown


def paired_parser(
    description: str,
    default_results: Path,
    *,
    origins: int,
    pages: int,
    repeats: int,
    compared: str,
) -> argparse.ArgumentParser:
    """The options every paired benchmark takes (a benchmark adds its own to the parser)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--origins", type=int, default=origins, help="origins crawled")
    parser.add_argument("--pages", type=int, default=pages, help="allowed pages per origin")
    parser.add_argument(
        "--repeats", type=int, default=repeats, help=f"pairs of crawls with and without {compared}"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    parser.add_argument("--results", type=Path, default=None, help=argparse.SUPPRESS)
    add_write_results_argument(parser, default_results)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.set_defaults(compared=compared)  # what the results file says the pairs differ by
    return parser


def paired_main(
    argv: Sequence[str] | None,
    parser: argparse.ArgumentParser,
    *,
    script: str,
    title: str,
    crawl_child: Callable[[dict[str, Any]], None],
    measure: Callable[[argparse.Namespace], dict[str, Any]],
    render: Callable[[dict[str, Any]], str],
    summary: Callable[[dict[str, Any]], dict[str, Any]],
    facts: Callable[[argparse.Namespace], list[str]] | None = None,
) -> int:
    """A paired benchmark's ``main``: as a child (``--child``), one crawl; else the pairs
    measured, the report printed, and the figures and results file written as asked (with
    ``facts(args)`` as the run's facts, origins and pages and pairs by default)."""
    args = parser.parse_args(argv)
    if args.child:
        crawl_child(json.loads(Path(args.child).read_text()))
        return 0
    data = measure(args)
    report = render(data)
    print(report)
    if args.json:
        args.json.write_text(json.dumps({**data, "summary": summary(data)}, indent=1))
    if args.write_results:
        shown_facts = (
            facts(args)
            if facts is not None
            else [
                f"{args.origins:,} origins, {args.pages} allowed page(s) each, "
                f"{args.repeats} pairs with and without {args.compared}"
            ]
        )
        write_results(
            args.results or args.write_results,
            title,
            script,
            report,
            shown_argv(argv),
            facts=shown_facts,
        )
    return 0
