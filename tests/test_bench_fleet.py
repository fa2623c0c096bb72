"""benchmarks/bench_fleet.py end to end on a small site: the report and its facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripts import load_script


def test_small_fleet_run_writes_its_report(tmp_path: Path) -> None:
    bench = load_script("bench_fleet")
    results = tmp_path / "FLEET.md"
    argv = ["--origins", "3", "--pages", "4", "--crawl-delay", "0.1", "--workers", "2"]
    argv += ["--idle-check", "0.1"]  # the workers close 2 s after the crawl, not up to 10 s
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    report = results.read_text()
    rows = [line for line in report.splitlines() if line.startswith("| 2 |")]
    assert len(rows) == 1
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == "12/12"  # every page, once
        assert cells[4] == "exactly 1 each"  # robots.txt once per origin for the fleet
        assert float(cells[5]) >= 0.1 * 0.95  # Crawl-delay held by the fleet
    assert "One robots.txt download per origin for the whole fleet: yes." in report


def test_idle_fed_fleet_reports_the_servers_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--feed redis_key``: a baseline and a fleet of 2 idle RedisSpiders on one key, each
    page received once, and figures that are the server's timestamps'. No timing goal here:
    those live in the benchmark."""
    bench = load_script("bench_fleet")
    floor, pages = 0.1, 4
    figures = tmp_path / "fleet.json"
    argv = ["--feed", "redis_key", "--workers", "2", "--pages", str(pages), "--idle-check", "0.1"]
    assert bench.main([*argv, "--crawl-delay", str(floor), "--json", str(figures)]) == 0
    data = json.loads(figures.read_text())
    assert [run["run"] for run in data["runs"]] == [1]
    crawls = data["runs"][0]["crawls"]
    assert [crawl["setup"] for crawl in crawls] == ["baseline", "2 workers"]
    report = capsys.readouterr().out
    for crawl in crawls:
        hits = crawl["hits"]  # [arrived, answered, path, worker], by arrival
        page_hits = [hit for hit in hits if hit[2] != "/robots.txt"]
        assert sorted(hit[2] for hit in page_hits) == sorted(f"/p{i}" for i in range(pages))
        assert crawl["pages"] == pages and crawl["every_page_once"] is True
        assert [hit[2] for hit in hits].count("/robots.txt") == crawl["robots_downloads"] == 1
        assert sum(crawl["pages_per_worker"].values()) == pages
        assert all(hit[3] in crawl["pages_per_worker"] for hit in hits)  # each named its worker
        # The gaps under the floor are the server's: consecutive arrivals, robots.txt included.
        gaps = [b[0] - a[0] for a, b in zip(hits, hits[1:], strict=False)]
        short = [gap for gap in gaps if gap < floor - 0.010]
        assert type(crawl["gaps_under_floor"]) is int
        assert crawl["gaps_under_floor"] == len(short) == len(crawl["short_gaps"])
        assert [gap["gap"] for gap in crawl["short_gaps"]] == pytest.approx(short)
        span = page_hits[-1][0] - page_hits[0][0]
        assert crawl["pace"] == pytest.approx(pages * floor / span)
        robots_answered = next(hit[1] for hit in hits if hit[2] == "/robots.txt")
        assert crawl["robots_to_first_page"] == pytest.approx(page_hits[0][0] - robots_answered)
        row = f"| 1 | {crawl['setup']} | {pages}/{pages} |"
        assert row in report
        zero = int(crawl["gaps_under_floor"] == 0)
        assert f"| {crawl['setup']} | {zero}/1 | {crawl['gaps_under_floor']} |" in report
    assert crawls[0]["plugin_commands_per_page"] is None  # the baseline has no scrapy_rerp
    assert crawls[1]["plugin_commands_per_page"] > 0
    assert data["summary"][1]["runs_without_gaps_under_floor"] in (0, 1)
