"""``scenario``: an async test run as a plain asyncio task under the test's reactor."""

from __future__ import annotations

import functools
from typing import Any

import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

__all__ = ["scenario"]


def scenario(test: Any) -> Any:
    """Run an async test as an asyncio task under the test's reactor."""

    @pytest_twisted.ensureDeferred
    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> None:
        await deferred_from_coro(test(*args, **kwargs))

    return run
