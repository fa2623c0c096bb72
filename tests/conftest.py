"""Test configuration: the reactor of ``SCRAPY_RERP_TEST_REACTOR`` (Scrapy's default, asyncio,
unless told), local servers.

``asyncio`` and ``epoll``: pytest-twisted installs the reactor and runs the async tests in it.
``none`` (Scrapy's reactorless mode): pytest runs with ``-p no:twisted`` (noxfile.py passes
it), no Twisted reactor is ever installed, and the async tests run on an asyncio loop here.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable, Iterator

import pytest

# The shared conformance check asserts for the test that calls it: with pytest's messages.
pytest.register_assert_rewrite("tests.support.conformance")

from tests.support.servers import TEST_REACTOR, Server  # noqa: E402

#: pytest-twisted's --reactor for each test reactor.
_PYTEST_TWISTED_REACTOR = {"asyncio": "asyncio", "epoll": "default"}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # pytest-twisted installs its reactor in its own pytest_configure, which runs after this
    # one, so plain `pytest` works without `--reactor=asyncio` on the command line. Its
    # "default" reactor is Twisted's default for the platform: epoll on Linux.
    twisted_loaded = config.pluginmanager.has_plugin("twisted")
    if TEST_REACTOR == "none":
        if twisted_loaded:
            raise pytest.UsageError(
                "SCRAPY_RERP_TEST_REACTOR=none runs without a Twisted reactor: "
                "run pytest with -p no:twisted"
            )
        return
    if hasattr(config.option, "reactor"):
        config.option.reactor = _PYTEST_TWISTED_REACTOR[TEST_REACTOR]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Without a reactor, an async test runs on a fresh asyncio loop (pytest-twisted, which
    would run it in the reactor, is not loaded)."""
    if TEST_REACTOR != "none" or not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # An empty run must not pass for a green one: pytest exits 5, and says why.
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and not hasattr(
        session.config, "workerinput"
    ):
        sys.stderr.write("no test ran: pytest collected nothing (exit status 5)\n")


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
