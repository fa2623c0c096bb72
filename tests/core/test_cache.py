"""The origin cache: LRU order and bound."""

from __future__ import annotations

import pytest

from scrapy_rerp.cache import MemoryOriginCache, RobotsEntry
from scrapy_rerp.engine import RobotsTxt


def entry(expires_at: float = 100.0) -> RobotsEntry:
    return RobotsEntry(robots=RobotsTxt.allow_all(), fetched_at=0.0, expires_at=expires_at)


def test_lru_eviction_order() -> None:
    cache = MemoryOriginCache(2)
    assert cache.set("http://a:80", entry()) == []
    assert cache.set("http://b:80", entry()) == []
    assert cache.get("http://a:80") is not None  # a is now the most recent
    assert cache.set("http://c:80", entry()) == ["http://b:80"]
    assert cache.origins() == ["http://a:80", "http://c:80"]
    assert len(cache) == 2 and "http://b:80" not in cache
    assert cache.get("http://b:80") is None


def test_replace_and_delete() -> None:
    cache = MemoryOriginCache(2)
    cache.set("http://a:80", entry(1.0))
    cache.set("http://a:80", entry(2.0))
    assert len(cache) == 1
    got = cache.get("http://a:80")
    assert got is not None and got.expires_at == 2.0
    cache.delete("http://a:80")
    cache.delete("http://missing:80")
    assert len(cache) == 0


def test_entry_expiry() -> None:
    e = entry(10.0)
    assert e.expired(10.0) and not e.expired(9.9)
    assert e.with_(expires_at=20.0).expired(15.0) is False


def test_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_origins"):
        MemoryOriginCache(0)
