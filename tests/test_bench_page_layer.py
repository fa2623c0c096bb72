"""benchmarks/bench_page_layer.py's child, quickly and without valgrind: the responses go
through the page directives middleware when it is on, and past it when it is off."""

from __future__ import annotations

import pytest
from scrapy.core.spidermw import SpiderMiddlewareManager

from tests.support.scripts import child_result, load_script

pytestmark = [
    pytest.mark.scrapy,  # Scrapy's API (markers: pyproject.toml)
    pytest.mark.skipif(
        not hasattr(SpiderMiddlewareManager, "scrape_response_async"),
        reason="the benchmark scrapes with scrape_response_async (Scrapy 2.14 and later)",
    ),
]


def child(way: str, responses: int) -> dict[str, int]:
    result: dict[str, int] = child_result("bench_page_layer", way, str(responses))
    return result


def test_the_page_layer_reads_every_response_only_when_on() -> None:
    off, on, usage = load_script("bench_page_layer").WAYS
    assert child(on, 150) == {"read": 150}
    assert child(usage, 150) == {"read": 150}
    assert child(off, 150) == {"read": 0}
