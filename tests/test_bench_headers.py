"""benchmarks/bench_headers.py end to end, small: the page refused by its huge Content-Usage
header is dropped, the other downloaded, each cut counted, nothing logged or recorded beyond the
bounds, and the report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripts import load_script


def test_small_headers_run_reports_the_decisions_and_the_bounds(tmp_path: Path) -> None:
    bench = load_script("bench_headers")
    results, figures = tmp_path / "HEADERS.md", tmp_path / "headers.json"
    argv = ["--pages", "2", "--robots-pages", "3", "--repeats", "1", "--lines", "50"]
    argv += ["--robots-lines", "200"]
    argv += ["--json", str(figures)]
    assert bench.main([*argv, "--write-results", "--results", str(results)]) == 0
    data = json.loads(figures.read_text())
    runs = {(run["case"], run["name"]): run for run in data["runs"]}
    obeyed = runs["headers", "robots.txt obeyed"]
    # /u/0 refused by its Content-Usage header, /r/1 kept; both headers cut at the cap.
    assert (obeyed["pages"], obeyed["ignored"], obeyed["header_cuts"]) == (1, 1, 2)
    assert obeyed["drops"] == {"usage/dropped/header": 1}  # each drop with its reason
    assert (
        runs["headers", "robots.txt off"]["pages"],
        runs["robots", "robots.txt off"]["pages"],
    ) == (2, 3)
    assert runs["robots", "robots.txt obeyed"]["pages"] == 3  # no scoped line matches a page
    for case in ("headers", "robots"):
        figures_of = data["summary"]["cases"][case]
        assert figures_of["within_bounds"] and figures_of["no_errors"]
        assert figures_of["accounted"]
    # At INFO a drop is summed up at close (its own line is DEBUG): no header is quoted.
    assert 0 < obeyed["log_longest"] < 4_096
    report = results.read_text()
    assert "every record field bounded): yes" in report
    assert "| 1 (usage/dropped/header 1) |" in report
    accounted = "every request accounted for (a page, or an errback with its reason in the stats)"
    assert f"{accounted}: yes" in report
    assert "--results" not in report
    assert "headers: 2 pages per crawl" in report and "3 small pages per crawl" in report
    assert "headers 2 pages, robots 3 pages; 1 pairs" in report


def test_a_request_dropped_at_the_park_limit_is_shown_with_its_reason() -> None:
    bench = load_script("bench_headers")
    run = {"requests": 1006, "pages": 1004, "ignored": 2, "errors": 0}
    run["drops"] = {"dropped/park_limit": 2}
    assert bench._drops(run) == "2 (dropped/park_limit 2)"
    assert bench._accounted(run)
    # A request the spider never heard of, or a drop without its reason, is not accounted for.
    assert not bench._accounted({**run, "ignored": 1})
    assert not bench._accounted({**run, "drops": {}})
