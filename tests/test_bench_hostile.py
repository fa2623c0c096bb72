"""benchmarks/bench_hostile.py end to end on small files: every shape, every peer, the report.

No timing is asserted: only the report's structure and the files' shapes.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import load_script

bench = load_script("bench_hostile")


def test_shapes_are_whole_lines_within_their_size() -> None:
    for shape in bench.SHAPES:
        text = bench.generate(shape, 40 * 1024)
        assert 0 < len(text.encode()) <= 40 * 1024, shape
        assert text.endswith("\n") and text.count("\n") > 1, shape


def test_small_run_reports_every_shape_and_writes_results(tmp_path: Path) -> None:
    results = tmp_path / "HOSTILE.md"
    argv = ["--kib", "16", "--repeats", "1", "--write-results", str(results)]
    assert bench.main(argv) == 0
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Hostile robots.txt benchmark results\n")
    assert "- Command " in text and "--kib 16" in text
    for shape in bench.SHAPES:
        rows = [line for line in text.splitlines() if line.startswith(f"| {shape} |")]
        assert [row.split(" | ")[2] for row in rows] == ["parse", "parse, 1 check"], shape
        for row in rows:
            assert row.count("x |") == 2, row  # a ratio to protego per engine syntax
    assert "Worst ratio to protego: " in text
