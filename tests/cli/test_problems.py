"""lint's work on a file is bounded by the file's size: counted in rule comparisons, never timed.

The engine's queries are counted as they happen (each ``RobotsTxt.allowed`` and ``decide`` call
weighs the rules of the group it asks about), on the benchmark's adversarial shapes, so the
counts are what lint did, not what it says it did.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scrapy_rerp.cli import _problems
from scrapy_rerp.core.body import MAX_SIZE, read_body
from scrapy_rerp.engine import RFC9309, RobotsTxt
from tests.support.scripts import load_script

bench = load_script("bench_lint")
KIB = 1024


@pytest.fixture
def weighed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The rule comparisons of every engine query made while the test runs."""
    counted = [0]
    for name in ("allowed", "decide"):
        query = getattr(RobotsTxt, name)

        def counting(self: RobotsTxt, url: str, agent: str, query: Any = query) -> Any:
            counted[0] += _problems._weighed(self, agent)
            return query(self, url, agent)

        monkeypatch.setattr(RobotsTxt, name, counting)
    yield counted


def lint_counted(shape: str, size: int, weighed: list[int]) -> tuple[int, _problems.Lint]:
    data = bench.generate(shape, size)
    weighed[0] = 0
    found = _problems.lint(data, read_body(data, None, None, MAX_SIZE), RFC9309)
    return weighed[0], found


@pytest.mark.parametrize("shape", ["wildcards", "stars", "big-groups", "usage"])
def test_comparisons_grow_at_most_linearly_with_the_file(shape: str, weighed: list[int]) -> None:
    counts = {}
    for factor in (1, 4):
        size = 32 * KIB * factor
        made, found = lint_counted(shape, size, weighed)
        # Every comparison made was counted against the budget, which is linear in the size.
        assert made <= found.comparisons <= found.budget
        assert found.budget == _problems.MIN_COMPARISONS + _problems.COMPARISONS_PER_BYTE * size
        counts[factor] = made
    # Linear: 4 times the file, about 4 times the work (a tenth more for paths that only the
    # larger file has); quadratic would be 16.
    assert counts[4] <= 4.4 * counts[1], counts


def test_a_small_file_is_compared_whole(weighed: list[int]) -> None:
    made, found = lint_counted("wildcards", KIB, weighed)
    assert found.skipped_comparisons == 0
    assert 0 < made <= found.comparisons < _problems.MIN_COMPARISONS
    assert found.checked_urls > 150
    assert any(p.code == "syntax-difference" for p in found.problems)


def test_the_checks_made_cover_the_whole_file() -> None:
    # Over the budget (and over MAX_URLS paths), the paths compared are made from rules spread
    # over the file: differences are found in its second half too, not in its first rules only.
    rules = [f"Disallow: /*a*b*c*d*{i}*$" for i in range(12000)]
    data = "\n".join(["User-agent: *", *rules, ""]).encode()
    found = _problems.lint(data, read_body(data, None, None, MAX_SIZE), RFC9309)
    assert found.skipped_comparisons > 0 and found.checked_urls == _problems.MAX_URLS
    lines = [p.line for p in found.problems if p.code == "syntax-difference"]
    assert len(lines) >= 5 and max(lines) > 6000, lines
