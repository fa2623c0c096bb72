"""benchmarks/bench_request_path.py's child, quickly and without valgrind: every request is
answered, and each way has the middlewares it names."""

from __future__ import annotations

import pytest
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager

from tests.support.scripts import child_result

pytestmark = [
    pytest.mark.scrapy,  # Scrapy's API (markers: pyproject.toml)
    pytest.mark.skipif(
        not hasattr(DownloaderMiddlewareManager, "download_async"),
        reason="the benchmark sends requests with download_async (Scrapy 2.14 and later)",
    ),
]


def child(way: str, requests: int) -> dict[str, object]:
    result: dict[str, object] = child_result("bench_request_path", way, str(requests))
    return result


@pytest.mark.parametrize(
    ("way", "present", "absent"),
    [
        ("off", [], ["RobotsTxtMiddleware", "IdleMiddleware", "AnswersMiddleware"]),
        ("idle", ["IdleMiddleware"], ["RobotsTxtMiddleware", "AnswersMiddleware"]),
        ("signal", ["RobotsTxtMiddleware"], ["AnswersMiddleware"]),
        ("addon", ["RobotsTxtMiddleware", "AnswersMiddleware"], []),
        ("quiet", ["RobotsTxtMiddleware", "AnswersMiddleware"], []),
    ],
)
def test_every_request_is_answered_through_the_ways_middlewares(
    way: str, present: list[str], absent: list[str]
) -> None:
    result = child(way, 120)
    assert result["answered"] == 120  # nothing disallowed, nothing parked: rules were given
    middlewares = result["middlewares"]
    assert isinstance(middlewares, list)
    assert all(name in middlewares for name in present)
    assert not any(name in middlewares for name in absent)
