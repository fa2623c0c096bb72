"""benchmarks/bench_slowdown.py end to end on small sites: the report, its header and facts."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import load_script


def rows(report: str, heading: str) -> dict[str, list[str]]:
    """The rows of the table under ``heading``, by way."""
    table = report.split(heading, 1)[1].split("\n\n", 2)[1]
    found = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        found[cells[0]] = cells[1:]
    return found


def test_small_run_writes_its_report(tmp_path: Path) -> None:
    bench = load_script("bench_slowdown")
    results = tmp_path / "SLOWDOWN.md"
    argv = [
        "--pages",
        "4",
        "--rate",
        "10",
        "--retry-after",
        "1",
        "--ways",
        "scrapy",
        "scrapy_rerp",
    ]
    assert bench.main([*argv, "--write-results", str(results)]) == 0
    report = results.read_text()
    assert "- Machine: " in report and "bench_slowdown.py --pages 4" in report
    rate = rows(report, "## A site that accepts 10 requests a second")
    assert set(rate) == {"Scrapy", "scrapy_rerp (Addon)"}
    assert rate["scrapy_rerp (Addon)"][0] == "4/4"  # every page
    maintenance = rows(report, "## A site under maintenance for 1 s")
    ours = maintenance["scrapy_rerp (Addon)"]
    assert ours[0] == "4/4" and ours[4] == "0" and ours[6] == "1"  # none after it knew; 1 cool-down
