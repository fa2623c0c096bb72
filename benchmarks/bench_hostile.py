"""Hostile robots.txt files at the crawl's size cap: this engine's parse against protego's.

Each shape is a file written to make a parser work hard, cut to ``--kib`` KiB (by default 500,
the size Scrapy's crawl reads at most, ``MAX_FILESIZE``): thousands of groups of one agent, of
distinct agents, of 80-character rules, many agents in one group, many rules, many
Content-Usage or Content-Signal lines, lines at the engine's length limit. Each file is parsed
by this engine (RFC9309, GYM2008) and by protego in the same run, and parsed then checked once
(the first check compiles what it needs: the engine's rules, protego's patterns); the report
gives the least CPU time of ``--repeats`` runs of each (the engine's shared tables emptied before
each) and its ratio to protego's. The goal: within GOAL times protego's on every shape.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_hostile.py --write-results
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from protego import Protego

# The shared report helpers sit beside the script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_write_results_argument, write_results  # noqa: E402

from scrapy_rerp.engine import GYM2008, RFC9309, clear_shared_tables, parse  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "HOSTILE_RESULTS.md"
RESULTS_TITLE = "Hostile robots.txt benchmark results"
KIB = 1024
GOAL = 3.0  # at most this many times protego's time
URL = "https://example.com/p77/page.html"
AGENT = "bot77"


def _groups_of_one_agent() -> Iterator[str]:
    while True:
        yield "User-agent: *\nDisallow: /x"


def _groups_of_distinct_agents() -> Iterator[str]:
    for i in range(10**9):
        yield f"User-agent: bot{i}\nDisallow: /p{i}/"


def _groups_of_long_rules() -> Iterator[str]:
    for i in range(10**9):
        yield f"User-agent: *\nDisallow: /{i:010d}/" + "a" * 68


def _agents_in_one_group() -> Iterator[str]:
    for i in range(10**9):
        yield f"User-agent: bot{i}"


def _rules_in_one_group() -> Iterator[str]:
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /p{i}/" if i % 2 else f"Allow: /p{i}/a"


def _wildcard_rules() -> Iterator[str]:
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /*{i}*.php$" if i % 2 else f"Allow: /p{i}/*"


def _content_usage_lines() -> Iterator[str]:
    yield "User-agent: *\nDisallow: /private/"
    for i in range(10**9):
        yield f"Content-Usage: /p{i}/ train-ai=n"


def _content_signal_lines() -> Iterator[str]:
    yield "User-agent: *\nDisallow: /private/"
    while True:
        yield "Content-Signal: search=yes, ai-train=no"


def _long_lines() -> Iterator[str]:
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /{i}/" + "a" * 16000


SHAPES: dict[str, Callable[[], Iterator[str]]] = {
    "groups of one agent": _groups_of_one_agent,
    "groups of distinct agents": _groups_of_distinct_agents,
    "groups of 80-character rules": _groups_of_long_rules,
    "agents in one group": _agents_in_one_group,
    "rules in one group": _rules_in_one_group,
    "wildcard rules": _wildcard_rules,
    "Content-Usage lines": _content_usage_lines,
    "Content-Signal lines": _content_signal_lines,
    "16 KB lines": _long_lines,
}


def generate(shape: str, size: int) -> str:
    """A robots.txt of *shape*, of whole lines, at most *size* bytes."""
    lines, total = [], 0
    for line in SHAPES[shape]():
        total += len(line) + 1
        if total > size:
            break
        lines.append(line)
    return "".join(line + "\n" for line in lines)


def _engine(syntax: int, check: bool) -> Callable[[str], object]:
    def run(text: str) -> object:
        robots = parse(text, syntax)
        return robots.allowed(URL, AGENT) if check else robots

    return run


def _protego(check: bool) -> Callable[[str], object]:
    def run(text: str) -> object:
        robots = Protego.parse(text)
        return robots.can_fetch(URL, AGENT) if check else robots

    return run


PEERS: dict[str, Callable[[bool], Callable[[str], object]]] = {
    "scrapy_rerp RFC9309": lambda check: _engine(RFC9309, check),
    "scrapy_rerp GYM2008": lambda check: _engine(GYM2008, check),
    "protego": _protego,
}


def least_time(run: Callable[[str], object], text: str, repeats: int) -> float:
    """The least CPU time of *repeats* runs of *run* on *text*."""
    best = float("inf")
    for _ in range(repeats):
        clear_shared_tables()  # each run reads the file afresh
        gc.collect()
        started = time.process_time()
        run(text)
        best = min(best, time.process_time() - started)
    return best


def measure(shapes: Sequence[str], size: int, repeats: int) -> list[dict[str, object]]:
    rows = []
    for shape in shapes:
        text = generate(shape, size)
        row: dict[str, object] = {"shape": shape, "bytes": len(text.encode())}
        for check in (False, True):
            for peer, make in PEERS.items():
                row[(peer, check)] = least_time(make(check), text, repeats)  # type: ignore[index]
        rows.append(row)
    return rows


def report(rows: list[dict[str, object]]) -> str:
    engines = [peer for peer in PEERS if peer != "protego"]
    header = ["shape", "KiB", "step", *[f"{peer} ms" for peer in PEERS]]
    header += [f"{peer.split()[-1]} vs protego" for peer in engines]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    worst = 0.0
    for row in rows:
        for check, step in ((False, "parse"), (True, "parse, 1 check")):
            times = [row[(peer, check)] for peer in PEERS]  # type: ignore[index]
            protego = row[("protego", check)]  # type: ignore[index]
            ratios = [row[(peer, check)] / protego for peer in engines]  # type: ignore[index, operator]
            worst = max(worst, *ratios)
            cells = [str(row["shape"]), f"{row['bytes'] / KIB:.0f}", step]  # type: ignore[operator]
            cells += [f"{seconds * 1000:.1f}" for seconds in times]  # type: ignore[operator]
            cells += [f"{ratio:.2f}x" for ratio in ratios]
            lines.append("| " + " | ".join(cells) + " |")
    verdict = "met" if worst <= GOAL else "not met"
    lines += ["", f"Worst ratio to protego: {worst:.2f}x (goal: at most {GOAL:g}x, {verdict})."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kib", type=int, default=500, help="file size, KiB (default 500)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--shape", action="append", choices=SHAPES, help="only these shapes")
    add_write_results_argument(parser, DEFAULT_RESULTS)
    args = parser.parse_args(argv)
    rows = measure(args.shape or list(SHAPES), args.kib * KIB, args.repeats)
    text = report(rows)
    print(text)
    if args.write_results:
        shown = [arg for arg in (argv if argv is not None else sys.argv[1:])]
        facts = [f"Files of {args.kib} KiB, least CPU time of {args.repeats} runs"]
        write_results(args.write_results, RESULTS_TITLE, __file__, text, shown, facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
