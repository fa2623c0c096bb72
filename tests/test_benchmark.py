"""The benchmark harness runs end to end on a tiny corpus (no timing is asserted)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from tests.support.scripts import load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
HARNESS = REPO_ROOT / "benchmarks" / "bench_engine.py"

FILES = {
    "a.example.txt": b"User-agent: *\nDisallow: /private\n",
    "b.example.txt": b"\xef\xbb\xbfUser-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
    "c.example.txt": b"",
}
CHECKS = [
    ("a.example.txt", "Scrapy", "https://a.example/private/1"),
    ("a.example.txt", "Scrapy", "https://a.example/public"),
    ("b.example.txt", "Googlebot", "https://b.example/x"),
    ("b.example.txt", "bingbot", "https://b.example/x"),
    ("c.example.txt", "Scrapy", "https://c.example/"),
    ("unknown.example.txt", "Scrapy", "https://unknown.example/"),  # no such file: skipped
]


def write_corpus(root: Path) -> None:
    (root / "robots").mkdir(parents=True)
    for name, body in FILES.items():
        (root / "robots" / name).write_bytes(body)
    with gzip.open(root / "urls.jsonl.gz", "wt", encoding="utf-8") as out:
        for name, agent, url in CHECKS:
            out.write(json.dumps({"file": name, "agent": agent, "url": url, "kind": "t"}) + "\n")


def test_quick_run_writes_results(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus)
    results = tmp_path / "RESULTS.md"
    command = [
        sys.executable,
        str(HARNESS),
        "--quick",
        "--corpus",
        str(corpus),
        "--write-results",
        str(results),
        "--pathological-url-bytes",
        "4096",
        "--pathological-rules",
        "100",
        # The peers answer in well under a second but robotexclusionrulesparser, which backtracks
        # until the limit stops it: 3 s rather than --quick's 10.
        "--pathological-timeout",
        "3",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr

    text = results.read_text(encoding="utf-8")
    assert "3 robots.txt files" in text and "5 checks" in text
    assert "| scrapy_rerp RFC9309 |" in text
    assert "| scrapy_rerp GYM2008 |" in text
    assert "| urllib.robotparser |" in text
    assert "- Command " in text and "--quick" in text
    assert "nproc" in text
    for goal in ("parse >= 5x", "checks >= 6x", "memory <= 0.3x"):
        assert goal in text
    assert "What the check goal leaves for first checks: 6x protego's first pass is " in text
    assert "Checks/s on a second pass" in text
    assert "- scrapy_rerp RFC9309: " in text.split("Checks/s on a second pass", 1)[1]
    # Protego ships with Scrapy, so it is there whenever the test extra is; on files this plain
    # the two RFC 9309 readers must agree on every check.
    assert "| protego |" in text
    assert "scrapy_rerp RFC9309 and protego: 100.00%" in text
    # The engine answers the pathological input; nothing in it matches, so the URL is allowed.
    rows = [line for line in text.splitlines() if line.startswith("| scrapy_rerp RFC9309 | ")]
    assert len(rows) == 2  # the measurements, and the pathological input
    assert rows[1].endswith("| allowed |")
    # What is printed is what is written, after the heading, the date, the machine and command.
    title, intro, provenance, report = text.split("\n\n", 3)
    assert provenance.startswith("- Date: ")
    assert report in done.stdout


def test_missing_corpus_is_reported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(HARNESS), "--quick", "--corpus", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert done.returncode != 0
    assert "corpus not found" in done.stderr


def test_first_use_budget_is_the_goal_time_less_the_warm_checks() -> None:
    bench = load_script("bench_engine")
    # 1,000 checks over 10 files: protego's first pass at 100 checks/s takes 10 s, so 6x is
    # 1.667 s; warm checks at 1,000/s take 1 s, leaving 0.667 s, 66,666.7 us per file; a first
    # pass at 500/s takes 2 s, 1 s more than the warm checks: 100,000 us per file.
    engine = bench.Measure(check_rates=[500.0], second_pass_rates=[1000.0])
    protego = bench.Measure(check_rates=[100.0], second_pass_rates=[120.0])
    line = bench.first_use_budget(engine, protego, checks=1000, files=10)
    assert "6x protego's first pass is 1.667 s" in line
    assert "take 1.000 s, which leaves 66,666.7 us per file" in line
    assert "its first pass spends 100,000.0 us per file" in line
    # A goal already spent by the warm checks shows as a negative allowance.
    slow = bench.Measure(check_rates=[300.0], second_pass_rates=[500.0])
    assert "leaves -33,333.3 us per file" in bench.first_use_budget(slow, protego, 1000, 10)
    assert bench.first_use_budget(engine, bench.Measure(check_rates=[0.0]), 1000, 10) is None
