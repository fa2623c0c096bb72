"""``scrapy-rerp lint`` on adversarial robots.txt files: its time grows with the file, not faster.

Each shape is a file written to make lint work hard (thousands of wildcard rules in one group,
the same rules over and over, a group per agent, Content-Usage grants over disallowed paths,
misspelled directives, lines at the engine's length limit, a dozen agents with large groups),
generated at three sizes: 1x, 2x and 4x the base size (by default 125, 250 and 500 KiB, the last
the size cap crawlers read). Each file is linted as the command line lints it
(``scrapy_rerp.cli.main(["lint", FILE, "--format", "json"])``, in this process, its output
discarded), and the report gives, per shape and size, the median time over ``--repeats`` runs,
the comparisons lint made against its budget (``_problems.MIN_COMPARISONS`` plus
``_problems.COMPARISONS_PER_BYTE`` per byte) and the comparisons it skipped, then the time at 2x
and 4x as a ratio to the time at 1x: linear growth is 2 and 4, quadratic 4 and 16.

Times are CPU time of the process unless ``--clock wall``. There is no peer: lint exists only
here, and its goal is the shape of the growth.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_lint.py --write-results
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The shared report helpers sit beside the script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import (  # noqa: E402
    add_write_results_argument,
    write_results,
)

from scrapy_rerp import cli  # noqa: E402
from scrapy_rerp.cli import _problems  # noqa: E402
from scrapy_rerp.engine import clear_shared_tables  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "LINT_RESULTS.md"
RESULTS_TITLE = "Lint benchmark results"
KIB = 1024
BASE_KIB = 125
FACTORS = (1, 2, 4)
CLOCKS: dict[str, tuple[Callable[[], float], str]] = {
    "cpu": (time.process_time, "CPU time of the process (time.process_time)"),
    "wall": (time.perf_counter, "wall-clock time (time.perf_counter)"),
}


# --- the shapes ---------------------------------------------------------------------------------


def _wildcards(rng: random.Random) -> Iterator[str]:
    """One group of wildcard rules, Disallow and Allow, many ending in ``$``: every path made
    from them is answered differently by the three syntaxes."""
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /*a*b*c*d*e*f*{i}*$" if i % 2 else f"Allow: /{i}*x*y$"


def _stars(rng: random.Random) -> Iterator[str]:
    """Rules of up to 30 ``*a`` segments each, a third anchored with ``$``."""
    yield "User-agent: *"
    for i in range(10**9):
        keyword = "Allow" if i % 2 else "Disallow"
        yield f"{keyword}: /" + "*a" * rng.randrange(1, 30) + ("$" if i % 3 == 0 else "")


def _duplicates(rng: random.Random) -> Iterator[str]:
    """The same 50 wildcard rules again and again."""
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /p{i % 50}*"


def _agents(rng: random.Random) -> Iterator[str]:
    """A group per agent, each with one wildcard rule."""
    for i in range(10**9):
        yield f"User-agent: bot{i}"
        yield f"Disallow: /{i}*"


def _big_groups(rng: random.Random) -> Iterator[str]:
    """A dozen named agents, each with a large group of wildcard rules (lint compares up to 12
    agents: each of its checks weighs a whole group)."""
    count = 0
    while True:
        for agent in range(12):
            yield f"User-agent: bot{agent}"
            for _ in range(400):
                count += 1
                yield f"Disallow: /{count}*q*{agent}$" if count % 2 else f"Allow: /{count}*"


def _usage(rng: random.Random) -> Iterator[str]:
    """Content-Usage grants, each for a path the group disallows."""
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Content-Usage: /p{i}/ train-ai=y"
        yield f"Disallow: /p{i}"


def _misspelled(rng: random.Random) -> Iterator[str]:
    """Misspelled and colon-less directives: each line is looked into on its own."""
    spellings = ("Dissallow: /", "Disalow: /", "Allow /", "Useragent: b", "Site-map: /")
    for i in range(10**9):
        yield f"{spellings[i % len(spellings)]}{i}"


def _segments(rng: random.Random) -> Iterator[str]:
    """Rules of 150 ``*``-separated parts each: a wildcard rule is matched part by part."""
    yield "User-agent: *"
    for i in range(10**9):
        yield f"{'Allow' if i % 2 else 'Disallow'}: /{i}" + "*a" * 150 + ("$" if i % 3 else "")


def _long_lines(rng: random.Random) -> Iterator[str]:
    """Wildcard rules as long as the engine reads a line (16 KiB)."""
    yield "User-agent: *"
    for i in range(10**9):
        yield f"Disallow: /{i}" + "*a" * 8000 + ("$" if i % 2 else "")


SHAPES: dict[str, tuple[Callable[[random.Random], Iterator[str]], str]] = {
    "wildcards": (_wildcards, _wildcards.__doc__ or ""),
    "stars": (_stars, _stars.__doc__ or ""),
    "duplicates": (_duplicates, _duplicates.__doc__ or ""),
    "agents": (_agents, _agents.__doc__ or ""),
    "big-groups": (_big_groups, _big_groups.__doc__ or ""),
    "segments": (_segments, _segments.__doc__ or ""),
    "usage": (_usage, _usage.__doc__ or ""),
    "misspelled": (_misspelled, _misspelled.__doc__ or ""),
    "long-lines": (_long_lines, _long_lines.__doc__ or ""),
}


def generate(shape: str, size: int, seed: int = 1) -> bytes:
    """A robots.txt of ``shape``, cut to ``size`` bytes."""
    lines, total = [], 0
    for line in SHAPES[shape][0](random.Random(seed)):
        lines.append(line)
        total += len(line) + 1
        if total >= size:
            break
    return "".join(line + "\n" for line in lines).encode()[:size]


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Measure:
    shape: str
    factor: int
    size: int
    times: list[float] = field(default_factory=list)
    comparisons: int = 0
    skipped: int = 0
    budget: int = 0
    problems: int = 0

    @property
    def time(self) -> float:
        return statistics.median(self.times)


def lint_once(path: Path, clock: Callable[[], float]) -> tuple[float, dict[str, object]]:
    """One ``scrapy-rerp lint FILE --format json`` in this process: the time it took and its
    document."""
    clear_shared_tables()  # what an earlier run compiled and shared is not this run's
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        started = clock()
        status = cli.main(["lint", str(path), "--format", "json"])
        took = clock() - started
    if status not in (0, 1):
        raise RuntimeError(f"lint {path} exited {status}")
    return took, json.loads(out.getvalue())


def measure(
    shapes: Sequence[str], base: int, repeats: int, clock: Callable[[], float], folder: Path
) -> list[Measure]:
    found = []
    for shape in shapes:
        for factor in FACTORS:
            data = generate(shape, base * factor)
            path = folder / f"{shape}-{factor}x.txt"
            path.write_bytes(data)
            result = Measure(shape, factor, len(data))
            for _ in range(repeats):
                took, document = lint_once(path, clock)
                result.times.append(took)
            compared = document["compared"]
            assert isinstance(compared, dict)
            result.comparisons = compared["comparisons"]
            result.skipped = compared["skipped_comparisons"]
            result.budget = compared["budget"]
            problems = document["problems"]
            assert isinstance(problems, list)
            result.problems = len(problems)
            found.append(result)
            print(
                f"{shape:<11} {factor}x {len(data) // KIB:>4} KiB  {result.time:7.2f} s  "
                f"{result.comparisons:>11,} comparisons, {result.skipped:>13,} skipped",
                file=sys.stderr,
            )
    return found


def growth(found: Sequence[Measure]) -> dict[str, dict[int, float]]:
    """Per shape, the time at each factor as a ratio to the time at 1x."""
    ratios: dict[str, dict[int, float]] = {}
    for result in found:
        first = next(m for m in found if m.shape == result.shape and m.factor == 1)
        ratios.setdefault(result.shape, {})[result.factor] = result.time / max(first.time, 1e-9)
    return ratios


def render(found: Sequence[Measure], repeats: int, clock_name: str) -> str:
    ratios = growth(found)
    lines = [
        f"Median of {repeats} run(s) per file; times are {CLOCKS[clock_name][1]}, of "
        '`scrapy_rerp.cli.main(["lint", FILE, "--format", "json"])` (read, parse, every check, '
        "the JSON document). Budget: "
        f"{_problems.MIN_COMPARISONS:,} + {_problems.COMPARISONS_PER_BYTE} per byte comparisons "
        "(one rule, or one `*`-separated part of a wildcard rule, weighed against one path; "
        f"{_problems.EXPLAIN_WEIGHT} for an explained verdict). Problems are what lint found "
        "within it.",
        "",
        "| shape | size | time (s) | comparisons | skipped | budget | problems |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in found:
        lines.append(
            f"| {m.shape} | {m.factor}x, {m.size // KIB} KiB | {m.time:.2f} | "
            f"{m.comparisons:,} | {m.skipped:,} | {m.budget:,} | {m.problems:,} |"
        )
    lines += [
        "",
        "Growth of the time with the file (linear: 2.0 and 4.0; quadratic: 4 and 16):",
        "",
        "| shape | 2x / 1x | 4x / 1x |",
        "|---|---:|---:|",
    ]
    for shape, by_factor in ratios.items():
        lines.append(f"| {shape} | {by_factor[2]:.2f} | {by_factor[4]:.2f} |")
    worst = max(ratios.values(), key=lambda r: r[4])
    slowest = max(found, key=lambda m: m.time)
    lines += [
        "",
        f"Largest growth from 1x to 4x: {worst[4]:.2f}. Slowest file: {slowest.shape} at "
        f"{slowest.size // KIB} KiB, {slowest.time:.2f} s.",
        "",
        "Shapes:",
        "",
        *(f"- {name}: {' '.join(doc.split())}" for name, (_, doc) in SHAPES.items()),
        "",
    ]
    return "\n".join(lines)


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per file (default 3)")
    parser.add_argument(
        "--base-kib", type=int, default=BASE_KIB, help=f"the 1x size (default {BASE_KIB})"
    )
    parser.add_argument(
        "--shape", action="append", choices=list(SHAPES), help="only this shape (repeatable)"
    )
    parser.add_argument("--clock", choices=list(CLOCKS), default="cpu")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 8 KiB base, one run per file"
    )
    add_write_results_argument(parser, DEFAULT_RESULTS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_arg_parser().parse_args(argv)
    base = (8 if args.quick else args.base_kib) * KIB
    repeats = 1 if args.quick else args.repeats
    shapes = args.shape or list(SHAPES)
    with tempfile.TemporaryDirectory() as folder:
        found = measure(shapes, base, repeats, CLOCKS[args.clock][0], Path(folder))
    report = render(found, repeats, args.clock)
    print(report)
    if args.write_results is not None:
        facts = [f"Sizes: {', '.join(f'{f}x {base * f // KIB} KiB' for f in FACTORS)}"]
        write_results(args.write_results, RESULTS_TITLE, __file__, report, argv, facts)
        print(f"written to {args.write_results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
