"""The lint benchmark runs end to end (``--quick``) and reports every shape at every size.

No timing is asserted: only the report's structure and what lint did on each file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.scripts import load_script

REPO_ROOT = Path(__file__).resolve().parent.parent
HARNESS = REPO_ROOT / "benchmarks" / "bench_lint.py"
bench = load_script("bench_lint")


def test_shapes_are_cut_to_their_size() -> None:
    for shape in bench.SHAPES:
        data = bench.generate(shape, 8 * 1024)
        assert len(data) == 8 * 1024, shape
        assert data.count(b"\n") > 0, shape


def test_quick_run_writes_results(tmp_path: Path) -> None:
    results = tmp_path / "LINT_RESULTS.md"
    command = [sys.executable, str(HARNESS), "--quick", "--write-results", str(results)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Lint benchmark results\n")
    assert "- Command " in text and "--quick" in text and "nproc" in text
    assert "- Sizes: 1x 8 KiB, 2x 16 KiB, 4x 32 KiB" in text
    for shape in bench.SHAPES:
        for factor, kib in ((1, 8), (2, 16), (4, 32)):
            [row] = [
                line for line in text.splitlines() if line.startswith(f"| {shape} | {factor}x")
            ]
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            assert cells[1] == f"{factor}x, {kib} KiB"
            comparisons, budget = (int(cells[i].replace(",", "")) for i in (3, 5))
            assert 0 < comparisons <= budget == 2_000_000 + 40 * kib * 1024, row
        assert any(
            line.startswith(f"| {shape} | ") and line.count("|") == 4 for line in text.splitlines()
        )
    assert "Largest growth from 1x to 4x: " in text
