"""The fleet tests' Redis: a real redis-server on loopback (tests/support/redis.py), one per
test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.redis import RedisServer


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.stop()
