"""Test configuration: Scrapy's default reactor (asyncio) for every test, local servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.servers import Server


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # Scrapy's default TWISTED_REACTOR is the asyncio one; pytest-twisted installs its
    # reactor in its own pytest_configure, which runs after this one, so plain `pytest`
    # works without `--reactor=asyncio` on the command line.
    if hasattr(config.option, "reactor"):
        config.option.reactor = "asyncio"


@pytest.fixture
def server() -> Iterator[Server]:
    """One local HTTP server (one origin), stopped after the test."""
    with Server() as s:
        yield s


@pytest.fixture
def make_server() -> Iterator[Callable[[], Server]]:
    """A factory for more servers (more origins), all stopped after the test."""
    started: list[Server] = []

    def factory() -> Server:
        s = Server().start()
        started.append(s)
        return s

    yield factory
    for s in started:
        s.stop()
