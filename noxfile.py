"""The test matrix: ``nox`` runs every cell, ``nox -s NAME`` one, ``nox -l`` lists them.

Each cell is a fresh virtual environment with ``pip install -e ".[test]"`` and the Scrapy it
names (the floor pinned, "newest" whatever the installer resolves: the latest release), made
with uv where it is installed (``.ci/run`` installs it: a cell's install then takes seconds,
not half a minute), else with venv and pip. Every supported Python runs one cell; what each
cell runs tells its Scrapy, Python or reactor apart, within ``.ci/run``'s ten minutes on two
cores (markers: pyproject.toml; 6 min 15 s for the whole run on two idle cores, 2026-12-02: 5,290
tests, 11 min of CPU):

* ``tests-3.13(scrapy='newest')``: the whole suite, on the newest Scrapy and Python, but the
  engine's comparison with rerp 1.7.1 over the whole corpus (``corpus``);
* ``oldest-3.10(scrapy='2.13.4')``: what speaks to Scrapy (``-m "crawl or scrapy"``) on the
  oldest supported Scrapy and Python, and that comparison: CPU-bound and Scrapy-free, it
  balances the two lanes of ``.ci/run`` here (the other lane would be the critical path). The
  rest of the engine and the command line, which import no Scrapy, are not repeated;
* ``reactorless-3.12``: the crawls in Scrapy's reactorless mode (``TWISTED_REACTOR_ENABLED =
  False``, an asyncio loop and no Twisted reactor, Scrapy 2.15+);
* ``epoll-3.11``: the crawls under Twisted's epoll reactor, without asyncio.

The reactor cells leave the floors out: the delays between requests are Scrapy's download
slots', the same under every reactor.

``SCRAPY_RERP_TEST_REACTOR`` tells the tests which reactor to run on (tests/support/servers.py).
"""

from __future__ import annotations

import time

import nox

#: The oldest Scrapy supported (docs/versions.rst says why).
FLOOR = "2.13.4"
NEWEST = "newest"

nox.options.default_venv_backend = "uv|venv"
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, scrapy: str) -> None:
    started = time.monotonic()
    pin = f"scrapy=={scrapy}" if scrapy != NEWEST else "scrapy"
    session.install("-q", "-e", ".[test]", pin)
    session.run("python", "-c", "import scrapy; print('Scrapy', scrapy.__version__)")
    session.log(f"installed in {time.monotonic() - started:.0f} s")


def pytest(session: nox.Session, *args: str, reactor: str = "asyncio") -> None:
    # A run that collects nothing exits with status 5, which fails the cell (and says "no test
    # ran": tests/conftest.py).
    started = time.monotonic()
    # The slowest tests named in every cell's output, to keep the matrix within its time.
    session.run(
        "pytest",
        "--durations=20",
        *args,
        *session.posargs,
        env={"SCRAPY_RERP_TEST_REACTOR": reactor},
    )
    session.log(f"tested in {time.monotonic() - started:.0f} s")


@nox.session(python=["3.13"])
@nox.parametrize("scrapy", [NEWEST])
def tests(session: nox.Session, scrapy: str) -> None:
    """The whole suite, on the newest Scrapy and Python, but the comparison with rerp."""
    install(session, scrapy)
    pytest(session, "-m", "not corpus")


@nox.session(python=["3.10"])
@nox.parametrize("scrapy", [FLOOR])
def oldest(session: nox.Session, scrapy: str) -> None:
    """What speaks to Scrapy, on the oldest supported Scrapy and Python; the comparison with
    rerp 1.7.1 over the corpus."""
    install(session, scrapy)
    pytest(session, "-m", "crawl or scrapy or corpus")


@nox.session(python=["3.12"])
def reactorless(session: nox.Session) -> None:
    """The crawls without a reactor (Scrapy's reactorless mode)."""
    install(session, NEWEST)
    # pytest-twisted would install a reactor as pytest starts.
    pytest(session, "-p", "no:twisted", "-m", "crawl and not floors", reactor="none")


@nox.session(python=["3.11"])
def epoll(session: nox.Session) -> None:
    """The crawls under the epoll reactor. The fleet's store talks to Redis with
    redis.asyncio, which needs an asyncio loop: a fleet needs the asyncio reactor
    (docs/fleet.rst), and its tests are left out here."""
    install(session, NEWEST)
    pytest(session, "-m", "crawl and not floors and not needs_asyncio", reactor="epoll")
