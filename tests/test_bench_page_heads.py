"""benchmarks/bench_page_heads.py end to end, quickly: every reader finds the same robots meta
tags on every page, and the report has a row per page (no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import load_script


def test_quick_run_writes_a_row_per_page(tmp_path: Path) -> None:
    bench = load_script("bench_page_heads")
    results = tmp_path / "PAGE_HEADS.md"
    assert bench.main(["--quick", "--write-results", "--results", str(results)]) == 0
    report = results.read_text(encoding="utf-8")
    rows = [line for line in report.splitlines() if line.startswith("| head ")]
    assert len(rows) == len(bench.pages()) == 12
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 2 + len(bench.READERS)
        assert all(float(cell) > 0 for cell in cells[1:])


def test_every_reader_finds_the_robots_meta_tag_where_there_is_one() -> None:
    bench = load_script("bench_page_heads")
    for label, html in bench.pages():
        found = {name: bench.robots_tags(read(html)) for name, read in bench.READERS.items()}
        expected = (
            [("robots", "noindex, nofollow")] if "robots meta" in label.split(", ")[2:] else []
        )
        assert all(answer == expected for answer in found.values()), label
