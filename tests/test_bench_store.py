"""benchmarks/bench_store.py end to end on a few origins: the servers' counts and the report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripts import load_script


def test_small_store_run_reports_the_servers_counts(tmp_path: Path) -> None:
    bench = load_script("bench_store")
    origins = 3
    results, figures = tmp_path / "STORE.md", tmp_path / "store.json"
    argv = ["--origins", str(origins), "--repeats", "1", "--json", str(figures)]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    data = json.loads(figures.read_text())
    runs = {run["name"]: run for run in data["runs"]}
    assert list(runs) == [
        "first",
        "restarted fresh",
        "restarted expired",
        "with store",
        "without store",
    ]
    assert runs["first"]["served"]["robots_full"] == origins
    assert runs["restarted fresh"]["served"]["robots"] == 0  # every copy fresh in the store
    assert runs["restarted fresh"]["stats"]["robotstxt/store/reused"] == origins
    expired = runs["restarted expired"]["served"]
    assert expired["robots_conditional"] == expired["robots_304"] == origins
    assert expired["robots_full"] == 0
    assert runs["restarted expired"]["stats"]["robotstxt/store/revalidated"] == origins
    assert runs["without store"]["store_calls"] == 0
    for run in runs.values():
        assert run["served"]["pages"] == origins  # the allowed page of each origin, once
        assert run["ignored"] == origins  # the disallowed one refused
        assert run["errors"] == 0
        assert 0 <= run["store_cpu"] < run["cpu"]
    summary = data["summary"]
    assert summary["fresh_ok"] and summary["expired_ok"] and summary["all_pages"]
    report = results.read_text()
    assert "Restarted within freshness, robots.txt downloads: 0 (yes" in report
    assert f"{origins} 304s, 0 full bodies (yes" in report
    assert "--results" not in report  # the command shown is one a reader can run
    assert report.count("| restarted ") == 2
