"""What parsed files leave behind once they are dropped: the tables they share stay bounded.

Each test parses many distinct files, checks them, drops every object, and measures with
tracemalloc what is still allocated: the shared tables' contents, and anything else that
outlives the objects (interned strings never die on CPython 3.12).

The issue's workloads are 60,000 small files and 9,000 files of 230 wildcard rules. Traced, they
take minutes, so by default these tests run a tenth of them, which still fills every shared
table several times over (each test checks that the tables dropped entries, so that the bound,
not the count, is what holds the memory); ``SCRAPY_RERP_MEMORY_SCALE=1`` runs them whole.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from collections.abc import Callable

from scrapy_rerp.engine import GYM2008, RFC9309, _groups, _match, parse
from scrapy_rerp.engine._robots import clear_shared_tables

MIB = 1024 * 1024
SCALE = float(os.environ.get("SCRAPY_RERP_MEMORY_SCALE", "0.1"))


def _retained(work: Callable[[], None]) -> int:
    """Bytes still allocated after *work* ran and dropped everything it made."""
    clear_shared_tables()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _name(number: int) -> str:
    """A product token made of letters only (google cuts a User-agent value at a digit)."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += chr(ord("a") + digit)
        if not number:
            return letters


def _small_file(number: int) -> str:
    name = _name(number)
    return (
        f"# site {number}\n"
        f"User-agent: crawler-{name}\n"
        f"Disallow: /private/{number}/\n"
        f"Allow: /private/{number}/open\n"
        f"Crawl-delay: {number % 7}\n"
        "\n"
        "User-agent: *\n"
        f"Disallow: /tmp/{number}/\n"
        f"Disallow: /*.{name}$\n"
        f"Sitemap: https://site{number}.example/sitemap.xml\n"
    )


def test_small_distinct_files_leave_little_behind() -> None:
    files = int(60_000 * SCALE)

    def work() -> None:
        for number in range(files):
            text = _small_file(number)
            site = f"https://site{number}.example"
            for syntax in (RFC9309, GYM2008):
                robots = parse(text, syntax)
                robots.allowed(f"{site}/private/{number}/x", f"crawler-{_name(number)}")
                robots.allowed(f"{site}/tmp/{number}/", "OtherBot/2.0")
                robots.allowed(f"{site}/a.{_name(number)}", "Mozilla/5.0 (compatible; x/1)")
                robots.crawl_delay(f"crawler-{_name(number)}")

    retained = _retained(work)
    assert retained <= 8 * MIB, f"{retained / MIB:.1f} MiB retained"
    # The tables were full: they dropped entries (each file puts in two groups, two rule sets).
    assert 0 < len(_groups._GROUP_RULES) < files
    assert 0 < len(_match._COMPILED) < files


def _wildcard_file(number: int) -> str:
    rules = "".join(f"Disallow: /{number * 230 + rule:012x}*z\n" for rule in range(230))
    return f"User-agent: *\n{rules}Allow: /{number:x}/open\n"


def test_files_of_many_wildcard_rules_leave_little_behind() -> None:
    files = int(9_000 * SCALE)

    def work() -> None:
        for number in range(files):
            robots = parse(_wildcard_file(number), RFC9309)
            robots.allowed(f"https://site{number}.example/{number * 230:012x}/z", "bot")

    retained = _retained(work)
    assert retained <= 32 * MIB, f"{retained / MIB:.1f} MiB retained"
    assert 0 < len(_groups._GROUP_RULES) < files
    assert 0 < len(_match._COMPILED) < files
