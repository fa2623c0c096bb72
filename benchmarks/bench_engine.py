"""Speed and memory of scrapy_rerp's engine next to protego, rerp 1.7.1 and urllib.robotparser.

One process, one run: every peer parses the same robots.txt bodies from the corpus and answers the
same check workload (``urls.jsonl.gz``), and the report gives, per peer, the median over
``--repeats`` runs of

* parse rate: files parsed per second (the whole corpus, one pass);
* check rate: checks per second against the already-parsed objects (the first checks after a parse
  are included, so lazily compiled state is paid for here);
* retained memory: what ``tracemalloc`` still sees allocated after all files are parsed and the
  whole workload is checked, measured once per peer before any timing, so that caches warmed by
  earlier runs do not hide allocations;

and each as a ratio to protego. Each run starts cold: the tables scrapy_rerp shares between
parsed files (compiled rules, split wildcard rules, agents read) are emptied first, so that a
repeat never reuses what an earlier one built from the same files. Rates are timed by the
process's CPU time unless ``--clock wall``: on a shared machine, time spent waiting for the CPU
would otherwise land on whichever peer was running. A pathological input (a 64 KiB URL against
10,000 wildcard rules) is run per peer in a subprocess with a time limit, because a backtracking
matcher never finishes it.

Every peer gets the same ``str`` per file: the raw bytes decoded as UTF-8 with ``errors="replace"``
and a leading byte-order mark removed (``utf-8-sig``). Decoding happens before timing.

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_engine.py --write-results
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
import urllib.robotparser
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# The shared report helpers sit beside the script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import (  # noqa: E402
    add_write_results_argument,
    machine_description,
    write_results,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
DEFAULT_RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BASELINE = "protego"
# The engine's targets, as ratios to protego (issue 2): higher is better for the two rates,
# lower is better for memory.
GOALS: dict[str, tuple[str, float]] = {
    "parse": (">=", 5.0),
    "checks": (">=", 6.0),
    "memory": ("<=", 0.3),
}
ENGINE_ROW = "scrapy_rerp RFC9309"
QUICK_FILES = 500
DECODING = 'UTF-8, errors="replace", leading BOM removed (the same str for every peer)'
MIB = 1024 * 1024
# CPU time leaves out the time other processes hold the CPU, so the ratios stay meaningful on a
# shared machine; wall-clock time is what an idle machine would show.
CLOCKS: dict[str, tuple[Callable[[], float], str]] = {
    "cpu": (time.process_time, "CPU time of the process (time.process_time)"),
    "wall": (time.perf_counter, "wall-clock time (time.perf_counter)"),
}

# A check is (bound method, first argument, second argument): peers disagree on the argument
# order, so each peer arranges its own and the timed loop stays the same for all of them.
Check = tuple[Callable[[str, str], bool], str, str]


@dataclass(frozen=True)
class Peer:
    name: str
    version: str
    parse: Callable[[str], Any]
    bind: Callable[[Any, str, str], Check]  # (parsed, url, agent) -> check
    pathological: bool = True  # whether it understands `*` and `$` at all
    # Empties what the peer shares between parsed files, so that each run starts cold.
    reset: Callable[[], None] = lambda: None


@dataclass
class Measure:
    parse_rates: list[float] = field(default_factory=list)
    check_rates: list[float] = field(default_factory=list)
    second_pass_rates: list[float] = field(default_factory=list)
    memory: int | None = None
    parse_errors: int = 0
    check_errors: int = 0
    verdicts: list[bool | None] = field(default_factory=list)

    @property
    def parse_rate(self) -> float:
        return statistics.median(self.parse_rates)

    @property
    def check_rate(self) -> float:
        return statistics.median(self.check_rates)

    @property
    def second_pass_rate(self) -> float:
        return statistics.median(self.second_pass_rates)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def _git(directory: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def engine_revision() -> str:
    """The commit of the engine that is imported, marked when its files differ from it."""
    import scrapy_rerp.engine

    directory = Path(scrapy_rerp.engine.__file__).resolve().parent
    commit = _git(directory, "rev-parse", "--short", "HEAD")
    if commit is None:
        return "?"
    # Numbers for a half-edited engine must not pass for the commit's.
    changed = _git(directory, "status", "--porcelain", "--", ".")
    return commit + ("+uncommitted" if changed else "")


def load_peers(names: Sequence[str] | None = None) -> tuple[list[Peer], list[str]]:
    """Return the peers that can be imported, and a note for each one that cannot."""
    peers: list[Peer] = []
    missing: list[str] = []

    from scrapy_rerp.engine import GYM2008, RFC9309, clear_shared_tables
    from scrapy_rerp.engine import parse as rerp_parse

    engine_version = _version("scrapy-rerp") + "@" + engine_revision()
    peers.append(
        Peer(
            ENGINE_ROW,
            engine_version,
            lambda text: rerp_parse(text, RFC9309),
            lambda robots, url, agent: (robots.allowed, url, agent),
            reset=clear_shared_tables,
        )
    )
    peers.append(
        Peer(
            "scrapy_rerp GYM2008",
            engine_version,
            lambda text: rerp_parse(text, GYM2008),
            lambda robots, url, agent: (robots.allowed, url, agent),
            reset=clear_shared_tables,
        )
    )

    try:
        from protego import Protego
    except ImportError:
        missing.append("protego (pip install -e '.[bench]')")
    else:
        peers.append(
            Peer(
                "protego",
                _version("protego"),
                Protego.parse,
                lambda robots, url, agent: (robots.can_fetch, url, agent),
            )
        )

    try:
        from robotexclusionrulesparser import RobotExclusionRulesParser
    except ImportError:
        missing.append("robotexclusionrulesparser (pip install -e '.[bench]')")
    else:

        def parse_rerp(text: str) -> Any:
            parser = RobotExclusionRulesParser()
            parser.parse(text)
            return parser

        peers.append(
            Peer(
                "robotexclusionrulesparser",
                _version("robotexclusionrulesparser"),
                parse_rerp,
                lambda robots, url, agent: (robots.is_allowed, agent, url),
            )
        )

    def parse_stdlib(text: str) -> Any:
        parser = urllib.robotparser.RobotFileParser()
        parser.parse(text.splitlines())
        return parser

    peers.append(
        Peer(
            "urllib.robotparser",
            "Python " + platform.python_version(),
            parse_stdlib,
            lambda robots, url, agent: (robots.can_fetch, agent, url),
            pathological=False,
        )
    )
    if names:
        wanted = set(names)
        unknown = wanted - {p.name for p in peers}
        if unknown:
            raise SystemExit(f"unknown or unavailable peer(s): {', '.join(sorted(unknown))}")
        peers = [p for p in peers if p.name in wanted]
    return peers, missing


# --- corpus -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    names: list[str]
    texts: list[str]
    checks: list[tuple[int, str, str]]  # (index into texts, url, agent)
    total_bytes: int


def decode(body: bytes) -> str:
    return body.decode("utf-8-sig", errors="replace")


def load_corpus(root: Path, max_files: int | None) -> Corpus:
    robots_dir = root / "robots"
    urls_file = root / "urls.jsonl.gz"
    if not robots_dir.is_dir() or not urls_file.is_file():
        raise SystemExit(
            f"corpus not found at {root} (needs robots/ and urls.jsonl.gz); "
            "pass --corpus DIR or set SCRAPY_RERP_CORPUS"
        )
    names = sorted(p.name for p in robots_dir.iterdir() if p.is_file())
    if max_files is not None and len(names) > max_files:
        # An evenly spaced sample, so that the subset looks like the whole.
        step = len(names) / max_files
        names = [names[int(i * step)] for i in range(max_files)]
    bodies = [(robots_dir / name).read_bytes() for name in names]
    index = {name: i for i, name in enumerate(names)}
    checks: list[tuple[int, str, str]] = []
    with gzip.open(urls_file, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            i = index.get(record["file"])
            if i is not None:
                checks.append((i, record["url"], record["agent"]))
    return Corpus(names, [decode(b) for b in bodies], checks, sum(map(len, bodies)))


# --- measurement --------------------------------------------------------------------------------


def parse_all(peer: Peer, texts: Sequence[str]) -> tuple[list[Any], int]:
    parse = peer.parse
    parsed: list[Any] = []
    errors = 0
    for text in texts:
        try:
            parsed.append(parse(text))
        except Exception:
            errors += 1
            parsed.append(parse(""))  # a failed parse still answers, as an empty file would
    return parsed, errors


def bind_all(
    peer: Peer, parsed: Sequence[Any], checks: Sequence[tuple[int, str, str]]
) -> list[Check]:
    bind = peer.bind
    return [bind(parsed[i], url, agent) for i, url, agent in checks]


def check_all(work: Sequence[Check]) -> tuple[list[bool | None], int]:
    verdicts: list[bool | None] = []
    errors = 0
    for check, a, b in work:
        try:
            verdicts.append(check(a, b))
        except Exception:
            errors += 1
            verdicts.append(None)
    return verdicts, errors


def measure_memory(peer: Peer, corpus: Corpus) -> int:
    """Bytes still allocated once every file is parsed and every check has run."""
    re.purge()  # compiled patterns left in re's cache by other peers are not this peer's
    peer.reset()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        parsed, _ = parse_all(peer, corpus.texts)
        work = bind_all(peer, parsed, corpus.checks)
        check_all(work)
        del work
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # The list holding the parsed objects is the harness's, not the peer's.
    return after - before - sys.getsizeof(parsed)


def measure_once(peer: Peer, corpus: Corpus, result: Measure, clock: Callable[[], float]) -> None:
    peer.reset()  # what an earlier run compiled and shared is not this run's
    gc.collect()
    start = clock()
    parsed, parse_errors = parse_all(peer, corpus.texts)
    parse_seconds = clock() - start

    work = bind_all(peer, parsed, corpus.checks)
    gc.collect()
    start = clock()
    verdicts, check_errors = check_all(work)
    check_seconds = clock() - start
    # The same checks again: what each check costs once the first ones have built what a peer
    # builds lazily (reported apart; the goal is on the first pass).
    start = clock()
    check_all(work)
    second_seconds = clock() - start

    result.parse_rates.append(len(corpus.texts) / parse_seconds)
    result.check_rates.append(len(work) / check_seconds if work else 0.0)
    result.second_pass_rates.append(len(work) / second_seconds if work else 0.0)
    result.parse_errors = max(result.parse_errors, parse_errors)
    result.check_errors = max(result.check_errors, check_errors)
    result.verdicts = verdicts


# --- pathological input -------------------------------------------------------------------------


def _letters(i: int) -> str:
    """A distinct lower-case word per integer, without the letters a and b."""
    alphabet = "cdefghijklmnopqrstuvwxyz"
    word = ""
    while True:
        i, digit = divmod(i, len(alphabet))
        word += alphabet[digit]
        if i == 0:
            return word


def pathological_input(url_bytes: int, rules: int) -> tuple[str, str]:
    """A robots.txt of distinct ``/*a*a*a*<word>b$`` rules and a URL path of ``a``s.

    No rule matches, and a backtracking matcher tries every way of spreading the ``a``s over
    the ``*``s before it gives up: polynomial in the URL length, per rule.
    """
    lines = ["User-agent: *"]
    lines += [f"Disallow: /*a*a*a*{_letters(i)}b$" for i in range(rules)]
    url = "https://example.com/" + "a" * (url_bytes - len("https://example.com/"))
    return "\n".join(lines) + "\n", url


def run_pathological_child(peer_name: str, url_bytes: int, rules: int) -> None:
    """Subprocess side: parse and check once, print the timings as JSON."""
    (peer,), _ = load_peers([peer_name])
    text, url = pathological_input(url_bytes, rules)
    start = time.perf_counter()
    parsed = peer.parse(text)
    parsed_at = time.perf_counter()
    check, a, b = peer.bind(parsed, url, "ExampleBot")
    verdict = check(a, b)
    done = time.perf_counter()
    json.dump(
        {"parse": parsed_at - start, "check": done - parsed_at, "allowed": verdict}, sys.stdout
    )


@dataclass(frozen=True)
class Pathological:
    peer: str
    parse: float | None
    check: float | None
    note: str


def run_pathological(
    peers: Sequence[Peer], url_bytes: int, rules: int, timeout: float
) -> list[Pathological]:
    results = []
    for peer in peers:
        if not peer.pathological:
            results.append(Pathological(peer.name, None, None, "no wildcards: not applicable"))
            continue
        command = [sys.executable, __file__, "--pathological-child", peer.name]
        command += ["--pathological-url-bytes", str(url_bytes), "--pathological-rules", str(rules)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            results.append(Pathological(peer.name, None, None, f"did not finish in {timeout:g} s"))
            continue
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            results.append(Pathological(peer.name, None, None, f"failed: {tail[0]}"))
            continue
        out = json.loads(done.stdout)
        verdict = "allowed" if out["allowed"] else "DISALLOWED (wrong: no rule matches)"
        results.append(Pathological(peer.name, out["parse"], out["check"], verdict))
    return results


# --- report -------------------------------------------------------------------------------------


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return value / base


def _fmt_ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def _goal_line(metric: str, ratio: float | None) -> str:
    op, target = GOALS[metric]
    if ratio is None:
        return f"{metric} {op} {target:g}x: n/a (no {BASELINE} measurement)"
    met = ratio >= target if op == ">=" else ratio <= target
    return f"{metric} {op} {target:g}x: {ratio:.2f}x, {'met' if met else 'NOT met'}"


def _agreement(a: Measure | None, b: Measure | None) -> str:
    if a is None or b is None or not a.verdicts:
        return "n/a"
    same = sum(x == y for x, y in zip(a.verdicts, b.verdicts, strict=True))
    return f"{same / len(a.verdicts):.2%}"


def first_use_budget(engine: Measure, base: Measure, checks: int, files: int) -> str | None:
    """What the check goal leaves for a file's first checks, beyond warm checks.

    The goal times the first pass, which includes what the first checks of each file build
    (the agent's group found, the site's origin read, the rules compiled). The second pass
    shows what the warm checks alone cost; the difference between the goal's time and that is
    all the goal leaves for the rest.
    """
    if not (engine.check_rate and engine.second_pass_rate and base.check_rate and files):
        return None
    goal_seconds = checks / (GOALS["checks"][1] * base.check_rate)
    warm_seconds = checks / engine.second_pass_rate
    first_use_seconds = checks / engine.check_rate - warm_seconds
    return (
        f"What the check goal leaves for first checks: {GOALS['checks'][1]:g}x {BASELINE}'s "
        f"first pass is {goal_seconds:.3f} s for the workload; the warm checks of "
        f"{ENGINE_ROW} (its second pass) take {warm_seconds:.3f} s, which leaves "
        f"{(goal_seconds - warm_seconds) / files * 1e6:,.1f} us per file for what a file's "
        f"first checks build; its first pass spends {first_use_seconds / files * 1e6:,.1f} us "
        "per file on that."
    )


def render(
    corpus: Corpus,
    peers: Sequence[Peer],
    measures: dict[str, Measure],
    pathological: Sequence[Pathological],
    args: argparse.Namespace,
    missing: Sequence[str],
) -> str:
    base = measures.get(BASELINE)
    out: list[str] = []
    out.append(
        f"Corpus: {len(corpus.texts):,} robots.txt files ({corpus.total_bytes / MIB:.1f} MiB), "
        f"{len(corpus.checks):,} checks; median of {args.repeats} repeat(s); "
        f"rates from {CLOCKS[args.clock][1]}."
    )
    out.append(f"Text given to every peer: {DECODING}.")
    out.append(
        "Memory: tracemalloc, bytes still allocated after parsing every file and running every "
        "check (lazily compiled state included)."
    )
    out.append("")
    out.append(
        "| peer | version | parse files/s | vs protego | checks/s | vs protego "
        "| memory MiB | vs protego | errors (parse/check) |"
    )
    out.append("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for peer in peers:
        m = measures[peer.name]
        memory = None if m.memory is None else m.memory / MIB
        base_memory = None if base is None or base.memory is None else base.memory / MIB
        out.append(
            f"| {peer.name} | {peer.version} "
            f"| {m.parse_rate:,.0f} | {_fmt_ratio(_ratio(m.parse_rate, base and base.parse_rate))} "
            f"| {m.check_rate:,.0f} | {_fmt_ratio(_ratio(m.check_rate, base and base.check_rate))} "
            f"| {'n/a' if memory is None else f'{memory:,.1f}'} "
            f"| {_fmt_ratio(_ratio(memory, base_memory))} "
            f"| {m.parse_errors}/{m.check_errors} |"
        )
    if missing:
        out.append("")
        out.append("Not measured (not installed): " + "; ".join(missing) + ".")

    engine = measures.get(ENGINE_ROW)
    if engine is not None:
        out.append("")
        out.append(f"Goals for {ENGINE_ROW}, as ratios to {BASELINE}:")
        out.append("")
        base_memory = None if base is None else base.memory
        ratios = {
            "parse": _ratio(engine.parse_rate, base and base.parse_rate),
            "checks": _ratio(engine.check_rate, base and base.check_rate),
            "memory": _ratio(engine.memory, base_memory) if engine.memory is not None else None,
        }
        out += [f"- {_goal_line(metric, ratios[metric])}" for metric in GOALS]
        budget = (
            None
            if base is None
            else first_use_budget(engine, base, len(corpus.checks), len(corpus.texts))
        )
        if budget is not None:
            out.append("")
            out.append(budget)

    out.append("")
    out.append(
        "Checks/s on a second pass over the same workload (whatever a peer builds on the first "
        "checks already built; not what the goal measures):"
    )
    out.append("")
    for peer in peers:
        m = measures[peer.name]
        ratio = _ratio(m.second_pass_rate, base and base.second_pass_rate)
        out.append(f"- {peer.name}: {m.second_pass_rate:,.0f} ({_fmt_ratio(ratio)})")

    out.append("")
    out.append("Same verdict on the check workload (share of checks):")
    out.append("")
    out.append(f"- {ENGINE_ROW} and protego: {_agreement(engine, base)}")
    gym = _agreement(measures.get("scrapy_rerp GYM2008"), measures.get("robotexclusionrulesparser"))
    out.append(f"- scrapy_rerp GYM2008 and robotexclusionrulesparser: {gym}")

    if pathological:
        out.append("")
        out.append(
            f"Pathological input: one check of a {args.pathological_url_bytes / 1024:g} KiB URL "
            f"against {args.pathological_rules:,} rules like `/*a*a*a*cb$`, wall-clock seconds "
            f"(each peer in a subprocess, limit {args.pathological_timeout:g} s):"
        )
        out.append("")
        out.append("| peer | parse s | check s | result |")
        out.append("|---|--:|--:|---|")
        for p in pathological:
            parse = "-" if p.parse is None else f"{p.parse:.3f}"
            check = "-" if p.check is None else f"{p.check:.4f}"
            out.append(f"| {p.peer} | {parse} | {check} | {p.note} |")
    return "\n".join(out) + "\n"


# --- command line -------------------------------------------------------------------------------


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=Path(os.environ.get("SCRAPY_RERP_CORPUS") or DEFAULT_CORPUS),
        help="directory with robots/ and urls.jsonl.gz (default: $SCRAPY_RERP_CORPUS, "
        "else ../shared/corpus beside the repository)",
    )
    parser.add_argument("--repeats", type=int, default=None, help="runs per peer (default 3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_FILES} files, 1 repeat, a smaller pathological input",
    )
    parser.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="cpu",
        help="time rates by the process's CPU time (default) or by the wall clock",
    )
    parser.add_argument("--max-files", type=int, default=None, help="use a sample of the corpus")
    parser.add_argument("--peer", action="append", help="measure only this peer (repeatable)")
    add_write_results_argument(parser, DEFAULT_RESULTS)
    parser.add_argument(
        "--no-pathological", action="store_true", help="skip the pathological input"
    )
    parser.add_argument("--pathological-url-bytes", type=int, default=None)
    parser.add_argument("--pathological-rules", type=int, default=None)
    parser.add_argument("--pathological-timeout", type=float, default=None, help="seconds")
    parser.add_argument("--pathological-child", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_arg_parser().parse_args(argv)
    quick = args.quick
    if args.repeats is None:
        args.repeats = 1 if quick else 3
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    if args.pathological_url_bytes is None:
        args.pathological_url_bytes = 8 * 1024 if quick else 64 * 1024
    if args.pathological_rules is None:
        args.pathological_rules = 1_000 if quick else 10_000
    if args.pathological_timeout is None:
        args.pathological_timeout = 10.0 if quick else 60.0

    if args.pathological_child:
        run_pathological_child(
            args.pathological_child, args.pathological_url_bytes, args.pathological_rules
        )
        return 0

    peers, missing = load_peers(args.peer)
    max_files = args.max_files if args.max_files is not None else (QUICK_FILES if quick else None)
    corpus = load_corpus(args.corpus, max_files)
    print(f"machine: {machine_description()}", flush=True)

    measures = {peer.name: Measure() for peer in peers}
    for peer in peers:
        print(f"memory: {peer.name} ...", flush=True)
        measures[peer.name].memory = measure_memory(peer, corpus)
    clock = CLOCKS[args.clock][0]
    for repeat in range(args.repeats):
        # Each repeat starts with another peer, so that a slow spell does not hit one peer only.
        shift = repeat % len(peers)
        for peer in peers[shift:] + peers[:shift]:
            print(f"repeat {repeat + 1}/{args.repeats}: {peer.name} ...", flush=True)
            measure_once(peer, corpus, measures[peer.name], clock)

    pathological: list[Pathological] = []
    if not args.no_pathological:
        print("pathological input ...", flush=True)
        pathological = run_pathological(
            peers, args.pathological_url_bytes, args.pathological_rules, args.pathological_timeout
        )

    report = render(corpus, peers, measures, pathological, args, missing)
    print()
    print(report, end="")
    if args.write_results is not None:
        write_results(args.write_results, "Benchmark results", __file__, report, argv)
        print(f"\nwritten to {args.write_results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
