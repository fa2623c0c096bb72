"""The engine over the real corpus: every file parses, and the fast and explaining paths agree.

The corpus lives outside the repository (most of its files carry no license): the directory
named by ``$SCRAPY_RERP_CORPUS``, else ``../shared/corpus`` beside the repository root. It holds
``robots/`` (real robots.txt files), ``junk/`` (bodies served as robots.txt that are not) and
``urls.jsonl.gz``, the check workload (JSON lines ``{"file", "agent", "url", "kind"}``). Without
it these tests are skipped, with the place they looked in.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rerp.engine import GYM2008, RFC9309, RobotsTxt, parse
from tests.support.syntaxes import ALL

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SCRAPY_RERP_CORPUS") or REPO.parent / "shared" / "corpus")

# One check in WORKLOAD_STEP is run (deterministically: every n-th record), to stay fast.
WORKLOAD_STEP = 3
# One file in PICKLE_STEP is pickled.
PICKLE_STEP = 40


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"corpus not found: {path} (set SCRAPY_RERP_CORPUS to the corpus directory)")
    return path


@pytest.fixture(scope="module")
def bodies() -> dict[str, bytes]:
    """``robots/<name>`` and ``junk/<name>`` -> the file's bytes, in name order."""
    found: dict[str, bytes] = {}
    for folder in ("robots", "junk"):
        directory = require(CORPUS / folder)
        for path in sorted(directory.iterdir()):
            if path.is_file():
                found[f"{folder}/{path.name}"] = path.read_bytes()
    assert found, f"no files in {CORPUS}"
    return found


@pytest.fixture(scope="module")
def workload() -> list[dict[str, str]]:
    with gzip.open(require(CORPUS / "urls.jsonl.gz"), "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    assert records
    return records


class Parsed:
    """Files parsed from bytes, per syntax, kept for the module's later tests."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        self.bodies = bodies
        self.by_syntax: dict[int, dict[str, RobotsTxt]] = {}

    def get(self, syntax: int) -> dict[str, RobotsTxt]:
        if syntax not in self.by_syntax:
            self.by_syntax[syntax] = {
                name: parse(data, syntax) for name, data in self.bodies.items()
            }
        return self.by_syntax[syntax]


@pytest.fixture(scope="module")
def parsed(bodies: dict[str, bytes]) -> Iterator[Parsed]:
    cache = Parsed(bodies)
    yield cache
    cache.by_syntax.clear()


def line_count(text: str) -> int:
    return text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1


@pytest.mark.parametrize("syntax", ALL)
def test_every_file_parses_as_bytes_and_str(syntax: int, parsed: Parsed) -> None:
    failures: list[str] = []
    results: dict[str, RobotsTxt] = {}
    for name, data in parsed.bodies.items():
        text = data.decode("utf-8", "replace")
        for content in (data, text):
            try:
                robots = parse(content, syntax)
            except Exception as error:  # noqa: BLE001 - collected, reported below
                failures.append(f"{name} ({type(content).__name__}): {error!r}")
                continue
            assert isinstance(robots, RobotsTxt)
            assert robots.syntax == syntax
            if robots.warnings:
                lines = [w.line for w in robots.warnings]
                if min(lines) < 1 or max(lines) > line_count(text):
                    failures.append(f"{name}: warning lines outside 1..{line_count(text)}")
            if isinstance(content, bytes):
                results[name] = robots
    assert not failures, f"{len(failures)} failures, first: {failures[:5]}"
    if syntax in (RFC9309, GYM2008):  # kept for the workload test below
        parsed.by_syntax.setdefault(syntax, results)


def test_junk_files_are_in_the_corpus(bodies: dict[str, bytes]) -> None:
    assert any(name.startswith("junk/") for name in bodies)
    assert any(name.startswith("robots/") for name in bodies)


@pytest.mark.parametrize(
    "syntax", [pytest.param(RFC9309, id="RFC9309"), pytest.param(GYM2008, id="GYM2008")]
)
def test_allowed_agrees_with_decide_on_the_workload(
    syntax: int, parsed: Parsed, workload: list[dict[str, str]]
) -> None:
    files = parsed.get(syntax)
    disagreements: list[str] = []
    checked = 0
    for record in workload[::WORKLOAD_STEP]:
        robots = files.get("robots/" + record["file"])
        if robots is None:
            continue
        url, agent = record["url"], record["agent"]
        verdict = robots.allowed(url, agent)
        decision = robots.decide(url, agent)
        checked += 1
        if decision.allowed is not verdict:
            disagreements.append(f"{record['file']} {agent!r} {url!r}: allowed={verdict}")
        elif decision.rule is not None and decision.line is None:
            disagreements.append(f"{record['file']} {agent!r} {url!r}: a rule without a line")
    assert checked > len(workload) // WORKLOAD_STEP // 2
    assert not disagreements, f"{len(disagreements)} disagreements, first: {disagreements[:5]}"


@pytest.mark.parametrize("syntax", ALL)
def test_pickled_files_give_the_same_verdicts(
    syntax: int, parsed: Parsed, workload: list[dict[str, str]]
) -> None:
    names = [n for n in parsed.bodies if n.startswith("robots/")][::PICKLE_STEP]
    checks: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    for record in workload:
        key = "robots/" + record["file"]
        if key in checks:
            checks[key].append((record["url"], record["agent"]))
    compared = 0
    for name in names:
        robots = parse(parsed.bodies[name], syntax)
        clone = pickle.loads(pickle.dumps(robots))
        assert str(clone) == str(robots), name
        assert clone.sitemaps == robots.sitemaps, name
        assert clone.warnings == robots.warnings, name
        for url, agent in checks[name]:
            assert clone.allowed(url, agent) is robots.allowed(url, agent), (name, url, agent)
            assert clone.crawl_delay(agent) == robots.crawl_delay(agent), (name, agent)
            compared += 1
    assert compared > 0
