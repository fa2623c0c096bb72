"""benchmarks/bench_usage.py end to end on a few origins: one tdmrep.json download per origin
with ``RERP_USAGE = "train-ai"``, none without, the same work otherwise; one more (the licence)
where robots.txt names an RSL file; and the report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripts import load_script


def test_small_usage_run_reports_one_download_per_origin(tmp_path: Path) -> None:
    bench = load_script("bench_usage")
    origins, pages = 3, 2
    results, figures = tmp_path / "USAGE.md", tmp_path / "usage.json"
    argv = ["--origins", str(origins), "--pages", str(pages), "--repeats", "1"]
    argv += ["--json", str(figures)]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    data = json.loads(figures.read_text())
    runs = {run["name"]: run for run in data["runs"]}
    assert sorted(runs) == ["no purpose", "train-ai", "train-ai, RSL"]
    for name, tdmrep, rsl in (
        ("train-ai", origins, 0),
        ("no purpose", 0, 0),
        ("train-ai, RSL", origins, origins),
    ):
        served = runs[name]["served"]
        assert (served["robots"], served["tdmrep"], served["rsl"], served["pages"]) == (
            origins,
            tdmrep,
            rsl,
            origins * pages,
        )
        assert runs[name]["ignored"] == origins and runs[name]["errors"] == 0
        assert runs[name]["read_calls"] == origins * pages  # every page read by the page layer
    assert runs["train-ai"]["usage"] > 0 and runs["no purpose"]["usage"] == 0
    summary = data["summary"]
    assert summary["one_download_each"] and summary["same_otherwise"] and summary["no_errors"]
    assert summary["one_licence_each"] and summary["rsl_ratio"] > 0
    report = results.read_text()
    assert "and the same robots.txt and page requests: yes" in report
    assert "one licence download per origin and the same other requests: yes" in report
    assert "--results" not in report
