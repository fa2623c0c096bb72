"""benchmarks/bench_fleet.py end to end on a small site: the report and its facts."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import load_script


def test_small_fleet_run_writes_its_report(tmp_path: Path) -> None:
    bench = load_script("bench_fleet")
    results = tmp_path / "FLEET.md"
    argv = ["--origins", "3", "--pages", "4", "--crawl-delay", "0.3", "--workers", "3"]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    report = results.read_text()
    rows = [line for line in report.splitlines() if line.startswith("| 3 |")]
    assert len(rows) == 1
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == "12/12"  # every page, once
        assert cells[4] == "exactly 1 each"  # robots.txt once per origin for the fleet
        assert float(cells[5]) >= 0.3 * 0.95  # Crawl-delay held by the fleet
    assert "One robots.txt download per origin for the whole fleet: yes." in report
