"""A public path a project's settings name (``RERP_CACHE``): re-exports ``core/cache``, the
cache, and names the fleet's store of ``fleet/store`` (``RERP_CACHE =
"scrapy_rerp.cache.RedisOriginCache"``) when asked for it, for its public path alone."""

from __future__ import annotations

from scrapy_rerp.core.cache import FailoverCache, MemoryOriginCache, OriginCache, RobotsEntry

__all__ = [
    "FailoverCache",
    "MemoryOriginCache",
    "OriginCache",
    "RedisOriginCache",  # noqa: F822 (named by __getattr__)
    "RobotsEntry",
    "SharedOriginCache",  # noqa: F822
]


def __getattr__(name: str) -> object:
    # Imported when named: its client, redis-py, is the [redis] extra.
    if name in ("RedisOriginCache", "SharedOriginCache"):
        from scrapy_rerp.fleet.store import RedisOriginCache, SharedOriginCache

        return RedisOriginCache if name == "RedisOriginCache" else SharedOriginCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
