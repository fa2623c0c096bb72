"""benchmarks/bench_page_layer.py's child, quickly and without valgrind: the responses go
through the page directives middleware when it is on, and past it when it is off."""

from __future__ import annotations

import pytest
from scrapy.core.spidermw import SpiderMiddlewareManager

from tests.support.scripts import load_script, script_output

pytestmark = [
    pytest.mark.scrapy,  # Scrapy's API (markers: pyproject.toml)
    pytest.mark.skipif(
        not hasattr(SpiderMiddlewareManager, "scrape_response_async"),
        reason="the benchmark scrapes with scrape_response_async (Scrapy 2.14 and later)",
    ),
]


def test_the_page_layer_reads_every_response_only_when_on() -> None:
    off, on, usage = load_script("bench_page_layer").WAYS
    # Every way in one child process, each with a crawler of its own.
    read = script_output("bench_page_layer", "--every-way-child", "150")
    assert read[on] == {"read": 150}
    assert read[usage] == {"read": 150}
    assert read[off] == {"read": 0}
