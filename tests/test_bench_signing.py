"""benchmarks/bench_signing.py end to end on a few origins: the same work with and without
signing, every request of the signed crawl signed, and the report (no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripts import load_script


def test_small_signing_run_reports_both_crawls(tmp_path: Path) -> None:
    bench = load_script("bench_signing")
    origins, pages = 3, 2
    results, figures = tmp_path / "SIGNING.md", tmp_path / "signing.json"
    argv = ["--origins", str(origins), "--pages", str(pages), "--repeats", "1"]
    argv += ["--json", str(figures)]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    data = json.loads(figures.read_text())
    runs = {run["name"]: run for run in data["runs"]}
    assert sorted(runs) == ["signed", "unsigned"]
    for run in runs.values():
        assert run["served"]["robots"] == origins and run["served"]["pages"] == origins * pages
        assert run["ignored"] == origins and run["errors"] == 0
    # Every request sent, robots.txt included, signed; nothing signed without a key.
    assert runs["signed"]["signed"] == origins + origins * pages
    assert runs["unsigned"]["signed"] == 0 and runs["unsigned"]["signing_cpu"] == 0
    assert 0 < runs["signed"]["signing_cpu"] < runs["signed"]["cpu"]
    summary = data["summary"]
    assert summary["same_work"] and summary["no_errors"] and summary["every_request_signed"]
    report = results.read_text()
    assert "Both crawls did the same work (the servers' counts): yes" in report
    assert "every request sent was signed (robots.txt included): yes" in report
    assert "goal under 3% more: " in report and "--results" not in report
