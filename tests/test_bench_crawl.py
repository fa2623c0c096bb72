"""The crawl benchmark runs end to end (``--quick``, smaller still) and its crawls say what they
should.

No timing is asserted: only the report's structure and the facts of each crawl (what was
blocked, what reached the servers, how often robots.txt was downloaded).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripts import load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
HARNESS = REPO_ROOT / "benchmarks" / "bench_crawl.py"
TIMEOUT = 240  # seconds; a guard against a hung crawl, not a timing assertion
# Smaller than --quick's 500 URLs over 10 origins: each of the eight crawls and the memory child
# is a fresh process, and the run is a smoke test. A lower concurrency shortens the warm-up (see
# warmup_rounds), so that a few of the 150 URLs are still disallowed.
QUICK_ORIGINS = 5
QUICK_PAGES = 150
QUICK_CONCURRENCY = 16


def quick_run(tmp: str) -> tuple[subprocess.CompletedProcess[str], str, dict[str, Any]]:
    results = Path(tmp) / "CRAWL_RESULTS.md"
    data = Path(tmp) / "crawl.json"
    command = [
        sys.executable,
        str(HARNESS),
        "--quick",
        "--pages",
        str(QUICK_PAGES),
        "--origins",
        str(QUICK_ORIGINS),
        "--concurrency",
        str(QUICK_CONCURRENCY),
        "--write-results",
        str(results),
        "--json",
        str(data),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return done, results.read_text(encoding="utf-8"), json.loads(data.read_text("utf-8"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict[str, Any]]:
    done, text, data = quick_run(str(tmp_path_factory.mktemp("bench_crawl")))
    return done.stdout, text, data


def test_report_structure(run: tuple[str, str, dict[str, Any]]) -> None:
    stdout, text, _ = run
    title, intro, provenance, report = text.split("\n\n", 3)
    assert title == "# Crawl benchmark results"
    assert provenance.startswith("- Date: ")
    assert "nproc" in provenance and "- Versions: scrapy " in provenance
    assert "- Command " in provenance and "--quick" in provenance
    assert report in stdout  # what is printed is what is written
    assert f"{QUICK_PAGES} URLs over {QUICK_ORIGINS} origins" in report
    for name in (
        "ROBOTSTXT_OBEY off",
        "Scrapy's RobotsTxtMiddleware + Protego",
        "scrapy_rerp (Addon)",
        "scrapy_rerp (Addon), page directives off",
        "an idle downloader middleware",
    ):
        # Speed, facts, every run, and memory for the two robots-aware ways.
        assert sum(line.startswith(f"| {name} | ") for line in report.splitlines()) >= 2
        assert f"- {name}: " in report
    assert "goal: throughput >= 0.98x, at most 2% lost" in report
    assert "goal: throughput >= 1x, never slower" in report
    assert "Memory per cached origin" in report
    assert "| way | GC CPU s / 1,000 requests |" in report
    assert "CPU per request median " in report  # the goal's ratio, repeat by repeat
    # The robots.txt layer alone is compared too, under a heading of its own.
    assert "scrapy_rerp against the others (ratios of the medians):" in report
    assert "The robots.txt layer alone (the Addon, page directives off) (ratios" in report


def test_facts(run: tuple[str, str, dict[str, Any]]) -> None:
    _, _, data = run
    ways = data["ways"]
    expected = data["expected_disallowed"]
    assert expected > 0
    off, scrapy, rerp = ways["off"], ways["scrapy"], ways["scrapy_rerp"]
    robots_only = ways["scrapy_rerp_robots"]  # the Addon without page directives
    idle = ways["idle"]
    for way in (off, scrapy, rerp, robots_only, idle):
        assert way["requests"] == QUICK_PAGES
        assert way["errors"] == 0
        assert way["pages_per_second"] > 0 and way["cpu_per_1000_requests"] > 0
        # The collector ran in the window (a crawl of 150 pages makes ~50 young collections),
        # and took part of the window's CPU time.
        assert way["gc_collections"][0] > 0
        assert 0 < way["gc_cpu_per_1000_requests"] < way["cpu_per_1000_requests"]
    # Without robots.txt every URL is downloaded, the disallowed ones too; so with the idle
    # middleware (the floor), which sees every request and lets it through.
    assert "IdleMiddleware" in idle["runs"][0]["downloader_middlewares"]
    assert "IdleMiddleware" not in off["runs"][0]["downloader_middlewares"]
    for way in (off, idle):
        assert way["pages"] == QUICK_PAGES
        assert way["blocked"] == 0 and way["robots_downloads"] == 0
        assert way["disallowed_pages_fetched"] == expected
    # Both robots-aware ways block the same URLs, and only those; the rest are all fetched.
    for way in (scrapy, rerp, robots_only):
        assert way["blocked"] == way["ignored"] == expected
        assert way["pages"] == QUICK_PAGES - expected
        assert way["disallowed_pages_fetched"] == 0
    # scrapy_rerp: one robots.txt download per origin, every origin in its cache.
    assert rerp["robots_downloads"] == robots_only["robots_downloads"] == QUICK_ORIGINS
    assert rerp["robots_origins"] == QUICK_ORIGINS
    assert rerp["robots_max_per_origin"] == 1
    assert rerp["cache_origins"] == QUICK_ORIGINS
    assert rerp["cache_bytes_per_origin"] > 0
    assert data["memory"]["scrapy_rerp"] > 0 and data["memory"]["scrapy"] > 0
    # The middleware's own CPU time is measured for both robots-aware ways, in a run of its
    # own: the runs whose CPU time is compared do not pay for the timing.
    for way in (scrapy, rerp):
        assert way["middleware_us_per_request"] > 0
        assert way["middleware_calls"] >= QUICK_PAGES
        assert all(run["middleware_calls"] == 0 for run in way["runs"])
    assert set(data["ratios"]) >= {"throughput_vs_off", "throughput_vs_scrapy", "cpu_vs_off"}
    assert len(data["paired_ratios"]["cpu_vs_off"]) == len(rerp["runs"])
    assert set(data["ratios"]) >= {"robots_throughput_vs_off", "robots_cpu_vs_off"}
    assert data["ratios"]["robots_cpu_vs_off"] != data["ratios"]["cpu_vs_off"]
    assert len(data["paired_ratios"]["robots_cpu_vs_off"]) == len(robots_only["runs"])


def test_plan_labels_agree_with_both_parsers() -> None:
    """Each URL's "disallowed" label is what Protego and scrapy_rerp both decide."""
    from protego import Protego
    from scrapy.settings.default_settings import USER_AGENT

    from scrapy_rerp.engine import RFC9309, parse

    bench = load_script("bench_crawl")
    netlocs = [f"{bench.host_of(i, False)}:{8000 + i}" for i in range(12)]
    assert len(set(netlocs)) == len({n.split(":")[0] for n in netlocs}) == 12
    urls = bench.plan(netlocs, 3_000, 64)
    assert len(urls) == 3_000
    disallowed = sum(label for _, label in urls)
    assert 0.01 * len(urls) < disallowed < 0.05 * len(urls)
    # The first rounds over the origins are all allowed (see warmup_rounds).
    warmup = len(netlocs) * bench.warmup_rounds(len(netlocs), 64)
    assert not any(label for _, label in urls[:warmup])
    rules = {netloc: bench.robots_txt(i, netloc) for i, netloc in enumerate(netlocs)}
    protego = {netloc: Protego.parse(text) for netloc, text in rules.items()}
    rerp = {netloc: parse(text, RFC9309) for netloc, text in rules.items()}
    for url, label in urls:
        netloc = url.split("/")[2]
        assert protego[netloc].can_fetch(url, USER_AGENT) is not label, url
        assert rerp[netloc].allowed(url, USER_AGENT) is not label, url


def test_troubled_origins_section(tmp_path: Path) -> None:
    """``--troubled-only`` on a small crawl: the section and its facts; the main results kept."""
    results = tmp_path / "CRAWL_RESULTS.md"
    main_part = "# Crawl benchmark results\n\nThe main run's report.\n"
    results.write_text(main_part + "\n## Troubled origins: a stale run\n\nOld.\n", "utf-8")
    data_file = tmp_path / "troubled.json"
    healthy, troubled, pages = 6, 2, 3
    # A slow robots.txt answers after 1.5 s: long after the 18 healthy pages are in, and the
    # slow crawl ends soon after (Scrapy lets that download finish before it closes).
    command = [
        sys.executable,
        str(HARNESS),
        "--troubled-only",
        "--troubled-healthy",
        str(healthy),
        "--troubled-origins",
        str(troubled),
        "--troubled-pages",
        str(pages),
        "--slow-delay",
        "1.5",
        "--repeats",
        "1",
        "--write-results",
        str(results),
        "--json",
        str(data_file),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr

    # The file: the main part as it was, then this run's section in place of the stale one.
    text = results.read_text(encoding="utf-8")
    assert text.startswith(main_part)
    section = text[len(main_part) + 1 :]
    assert section.startswith("## Troubled origins: dead or slow robots.txt")
    assert "stale" not in text and text.count("## Troubled origins") == 1
    assert section in done.stdout  # what is printed is what is written
    assert "\n- Date: " in section and "- Load average (1 min) before and after: " in section
    assert "- Command " in section and "--troubled-only" in section
    assert f"{healthy} healthy origins with {pages} URLs each (18 pages)" in section
    assert "| goal: at most 1.3x |" in section
    names = (
        "healthy origins alone",
        f"with {troubled} dead origins (robots.txt 503)",
        f"with {troubled} slow origins (robots.txt after 1.5 s)",
    )
    for name in names:
        # Time, facts table, facts list.
        assert sum(line.startswith(f"| {name} | ") for line in section.splitlines()) == 2
        assert f"- {name}: " in section
    assert section.count("(must be 0: met)") == 3
    assert "Per repeat (the same repeat's crawls compared, vs alone):" in section

    # The facts (no timing is asserted: the 1.3x goal is the benchmark's to report).
    data = json.loads(data_file.read_text("utf-8"))
    assert set(data) == {"troubled"}
    cases = data["troubled"]["cases"]
    assert list(cases) == ["alone", "dead", "slow"]
    for case, c in cases.items():
        assert c["healthy_pages"] == c["healthy_pages_at_servers"] == [18, 18], case
        assert c["troubled_pages"] == c["troubled_pages_at_servers"] == 0, case
        assert c["robots_per_healthy_origin"] == [1, 1], case
        assert c["errors"] == c["dropped_other"] == 0, case
        assert c["finish_reasons"] == ["healthy_done"], case
        assert c["seconds"] > 0 and c["closed_seconds"] >= c["seconds"], case
        for run in c["runs"]:  # the parking ledger balances
            ledger = run["ledger"]
            dropped = sum(v for k, v in ledger.items() if k.startswith("dropped/"))
            assert ledger["parked"] == ledger["released"] + dropped, (case, ledger)
    alone, dead, slow = cases["alone"], cases["dead"], cases["slow"]
    assert alone["troubled_requests"] == 0 and alone["dropped_closing"] == [0, 0]
    assert alone["robots_per_troubled_origin"] is None
    assert alone["vs_alone"] == 1.0 and alone["goal_met"] is None
    for c in (dead, slow):
        assert c["troubled_requests"] == troubled * pages
        # Every troubled request that was yielded was parked, then dropped at the close.
        assert 1 <= c["dropped_closing"][0] <= c["dropped_closing"][1] <= troubled * pages
        assert c["robots_per_troubled_origin"][0] >= 1
        assert isinstance(c["vs_alone"], float) and isinstance(c["goal_met"], bool)
        assert len(c["per_repeat_vs_alone"]) == 1
    assert slow["robots_per_troubled_origin"] == [1, 1]  # asked once, answered after the close


def test_instruction_totals_are_read_from_callgrind_output(tmp_path: Path) -> None:
    bench = load_script("bench_crawl")
    out = tmp_path / "callgrind.out"
    out.write_text("# callgrind format\nevents: Ir\nfn=main\n1 5\nsummary: 123456789\n")
    assert bench.callgrind_total(out) == 123456789


def test_each_repeat_starts_with_the_next_way() -> None:
    bench = load_script("bench_crawl")
    ways = ["off", "scrapy", "scrapy_rerp"]
    assert [bench.rotated(ways, r) for r in range(4)] == [
        ["off", "scrapy", "scrapy_rerp"],
        ["scrapy", "scrapy_rerp", "off"],
        ["scrapy_rerp", "off", "scrapy"],
        ["off", "scrapy", "scrapy_rerp"],
    ]
    assert bench.rotated([], 2) == []


def test_abba_order_runs_each_way_first_and_after_the_other_equally_often() -> None:
    bench = load_script("bench_crawl")
    ways = ["scrapy", "scrapy_rerp"]
    orders = [bench.ordered(ways, r, "abba") for r in range(4)]
    assert orders == [ways, ways[::-1], ways, ways[::-1]]
    assert [bench.ordered(ways, r) for r in range(2)] == [bench.rotated(ways, r) for r in range(2)]
    parsed = bench.build_arg_parser().parse_args(["--order", "abba"])
    assert parsed.order == "abba"
    assert bench.build_arg_parser().parse_args([]).order == "rotate"


def test_a_child_gets_a_config_too_long_for_a_command_line() -> None:
    # 10,000 origins failed with "OSError: [Errno 7] Argument list too long": one argument of
    # a command line may hold 128 KiB on Linux. The memory child reads robots.txt bodies it
    # makes itself, so nothing is served here.
    harness = load_script("bench_crawl")
    # Long host names (149 characters of labels), so that a few hundred origins make a config
    # that long: the child's work grows with the origins.
    labels = ".".join(["a-rather-long-host-name-label"] * 5)
    netlocs = [f"origin-{i:05d}.{labels}.test:8000" for i in range(800)]
    assert len(json.dumps(netlocs)) > 128 * 1024
    result = harness.run_child(
        "--memory-child", {"netlocs": netlocs}, "the memory measurement", TIMEOUT
    )
    assert len(result) == 3 and all(value > 0 for value in result.values()), result
