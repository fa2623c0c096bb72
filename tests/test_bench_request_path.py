"""benchmarks/bench_request_path.py's child, quickly and without valgrind: every request is
answered, and each way has the middlewares it names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.scripts import BENCHMARKS

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)


def child(way: str, requests: int) -> dict[str, object]:
    script = BENCHMARKS / "bench_request_path.py"
    command = [sys.executable, str(script), "--child", way, str(requests)]
    done = subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)
    result: dict[str, object] = json.loads(done.stdout)
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
