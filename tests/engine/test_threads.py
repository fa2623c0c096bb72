"""One parsed object shared by threads gives the answers it gives one thread, and never raises.

Threads switch as often as the interpreter allows (``sys.setswitchinterval(1e-6)``), so that
whatever a query remembers in the object is written by one thread while others read it.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scrapy_rerp.engine import (
    GYM2008,
    MK1996,
    RFC9309,
    RobotExclusionRulesParser,
    RobotFileParserLookalike,
    parse,
)
from tests.support.syntaxes import ALL

THREADS = 8
AGENTS = [f"crawler{chr(ord('a') + i // 26)}{chr(ord('a') + i % 26)}" for i in range(40)]
CALLERS = AGENTS + [f"Mozilla/5.0 (compatible; {a}/1.0)" for a in AGENTS[::3]] + ["other", ""]
SYNTAXES = (MK1996, GYM2008, RFC9309)
PATHS = ["/", "/a", "/a/b", "/x.pdf", "/b/c?q", "/private/1", "/robots.txt", "/z/a/b$"]


def _many_agents_file(seed: int) -> str:
    rng = random.Random(seed)
    blocks = []
    for index, agent in enumerate(AGENTS):
        rules = [
            f"{rng.choice(['Allow', 'Disallow'])}: {rng.choice(PATHS[:6])}"
            + rng.choice(["", "*", "*b", "$"])
            for _ in range(rng.randint(1, 6))
        ]
        delay = f"Crawl-delay: {index % 5}\n" if index % 2 else ""
        blocks.append(f"User-agent: {agent}\n{delay}" + "\n".join(rules) + "\n")
    blocks.append("User-agent: *\nDisallow: /private\nDisallow: /*.pdf$\n")
    return "\n".join(blocks)


@pytest.fixture
def fast_switching() -> Iterator[None]:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _queries(rng: random.Random) -> list[tuple[str, str]]:
    queries = [
        (f"https://e{rng.randrange(3)}.example{path}", agent) for agent in CALLERS for path in PATHS
    ]
    rng.shuffle(queries)
    return queries


def _run_threads(
    ask: Callable[[str, str], Any], seed: int
) -> tuple[list[BaseException], dict[tuple[str, str], set[Any]]]:
    """Ask every query in each of THREADS threads at once: (errors, answers per query)."""
    rng = random.Random(seed)
    per_thread = [_queries(rng) for _ in range(THREADS)]
    errors: list[BaseException] = []
    answers: list[dict[tuple[str, str], Any]] = [{} for _ in range(THREADS)]
    start = threading.Barrier(THREADS)

    def run(number: int) -> None:
        try:
            start.wait()
            for url, agent in per_thread[number]:
                answers[number][url, agent] = ask(url, agent)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged: dict[tuple[str, str], set[Any]] = {}
    for found in answers:
        for query, answer in found.items():
            merged.setdefault(query, set()).add(answer)
    return errors, merged


@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("syntax", ALL)
def test_one_parsed_object_shared_by_threads(syntax: int) -> None:
    for seed in range(6):
        text = _many_agents_file(seed)
        expected = parse(text, syntax)  # asked by this thread alone
        shared = parse(text, syntax)

        def ask(url: str, agent: str, robots: Any = shared) -> Any:
            return (robots.allowed(url, agent), robots.crawl_delay(agent))

        errors, answers = _run_threads(ask, seed)
        assert not errors, errors[:3]
        for (url, agent), found in answers.items():
            assert found == {ask(url, agent, expected)}, (url, agent)
        for url, agent in _queries(random.Random(seed))[:50]:
            assert shared.decide(url, agent) == expected.decide(url, agent)


@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("parser_class", [RobotExclusionRulesParser, RobotFileParserLookalike])
def test_one_rerp_object_shared_by_threads(parser_class: type[RobotExclusionRulesParser]) -> None:
    for seed in range(3):
        text = _many_agents_file(seed)
        expected = parser_class()
        expected.parse(text)
        shared = parser_class()
        shared.parse(text)

        def ask(url: str, agent: str, parser: Any = shared) -> Any:
            return tuple(parser.is_allowed(agent, url, syntax) for syntax in SYNTAXES) + (
                parser.get_crawl_delay(agent),
            )

        errors, answers = _run_threads(ask, seed)
        assert not errors, errors[:3]
        for (url, agent), found in answers.items():
            assert found == {ask(url, agent, expected)}, (url, agent)
