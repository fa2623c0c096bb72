"""benchmarks/bench_evidence.py end to end on a few origins: the same work with and without
evidence, the evidence's size, and the report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripts import load_script


def test_small_evidence_run_reports_both_crawls(tmp_path: Path) -> None:
    bench = load_script("bench_evidence")
    origins, pages = 3, 2
    results, figures = tmp_path / "EVIDENCE.md", tmp_path / "evidence.json"
    argv = ["--origins", str(origins), "--pages", str(pages), "--repeats", "1"]
    argv += ["--json", str(figures)]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    data = json.loads(figures.read_text())
    runs = {run["name"]: run for run in data["runs"]}
    assert sorted(runs) == ["with evidence", "without"]
    for run in runs.values():
        assert run["served"] == {
            "robots": origins,
            "robots_full": origins,
            "robots_conditional": 0,
            "robots_304": 0,
            "tdmrep": 0,  # no RERP_USAGE: no tdmrep.json
            "rsl": 0,  # nor RSL licences
            "pages": origins * pages,
        }
        assert run["ignored"] == origins and run["errors"] == 0
    # One robots.txt record per origin, one decision per request: all written.
    written = runs["with evidence"]
    assert written["evidence_lines"] == origins + origins * (pages + 1)
    assert written["stats"]["robotstxt/evidence/decision/downloaded"] == origins * pages
    assert written["stats"]["robotstxt/evidence/decision/refused"] == origins
    assert runs["without"]["stats"] == {} and runs["without"]["evidence_cpu"] == 0
    assert 0 < written["evidence_cpu"] < written["cpu"]
    assert data["summary"]["same_work"] and data["summary"]["no_errors"]
    report = results.read_text()
    assert "Both crawls did the same work (the servers' counts): yes" in report
    assert "KiB per 1,000 pages" in report and "--results" not in report
