"""Conformance: the peers' own test suites, as data, run against the engine in RFC9309.

``tests/data/*.json`` hold byte-exact records of three test suites (each file names its
source and license, and explains its fields in a ``conventions`` block):

- ``google_robotstxt.json``: google/robotstxt, the reference of RFC9309. Every record passes.
- ``protego.json`` and ``crawler_commons.json``: each peer's own choices. Where we answer
  differently, the record is listed in ``tests/data/divergences.json`` with a category whose
  one-sentence reason is in the same file. The listed set must be exactly the set of records
  we differ on, so the table cannot go stale either way.

Each peer record also carries ``google_oracle``, google/robotstxt's verdict for the same input.
We agree with it everywhere, except on the few records listed under ``not_google`` in
``divergences.json`` (our deliberate departures from google, and inputs the oracle read as a
list of several names).

Run this file as a script to print the records we currently differ on.
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from scrapy_rerp.engine import RFC9309, RequestRate, RobotsTxt, VisitTime, parse
from scrapy_rerp.engine._patterns import escape_pattern, path_params_query

DATA = Path(__file__).resolve().parents[1] / "data"

Record = dict[str, Any]


def load(name: str) -> dict[str, Any]:
    with open(DATA / name, encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


GOOGLE = load("google_robotstxt.json")
PROTEGO = load("protego.json")
CRAWLER_COMMONS = load("crawler_commons.json")
DIVERGENCES = load("divergences.json")
PEERS = {"protego": PROTEGO, "crawler_commons": CRAWLER_COMMONS}


def body(record: Record) -> bytes:
    """The exact bytes of a record's robots.txt (``robots`` as UTF-8, else ``robots_b64``)."""
    if record.get("robots") is not None:
        return record["robots"].encode("utf-8")  # type: ignore[no-any-return]
    return base64.b64decode(record["robots_b64"])


def agent_of(record: Record) -> str:
    """The user agent to pass: the record's ``agent``; when a test passed several names as a
    collection (``agent`` is null), the last of ``agents``, which is the full User-Agent header.
    """
    if record.get("agent") is not None:
        return record["agent"]  # type: ignore[no-any-return]
    agents: list[str] = record.get("agents") or [""]
    return agents[-1]


def verdict(record: Record) -> bool:
    return parse(body(record), RFC9309).allowed(record["url"], agent_of(record))


def ids(records: list[Record]) -> list[str]:
    return [r["id"] for r in records]


# -- google/robotstxt ------------------------------------------------------------------------


def test_google_file_is_whole() -> None:
    assert len(GOOGLE["records"]) == GOOGLE["counts"]["records"] == 145
    assert len(set(ids(GOOGLE["records"]))) == 145
    assert GOOGLE["license"].startswith("Apache-2.0")
    assert "google/robotstxt" in GOOGLE["source"]


@pytest.mark.parametrize("record", GOOGLE["records"], ids=ids(GOOGLE["records"]))
def test_google_record(record: Record) -> None:
    robots = parse(body(record), RFC9309)
    assert robots.allowed(record["url"], record["agent"]) is record["allowed"]
    assert robots.decide(record["url"], record["agent"]).allowed is record["allowed"]


def google_other(kind: str) -> list[Record]:
    return [r for r in GOOGLE["other"] if r["kind"] == kind]


# Kinds of google's ``other`` records with no counterpart in our API, and why.
GOOGLE_UNMAPPED = {
    # RobotsMatcher::IsValidUserAgentToObey judges the caller's string as a bare product
    # token. Our API also accepts a whole User-Agent header (``Foobot/2.1`` names ``foobot``),
    # so validity of the caller's string is not a question it asks.
    "valid_user_agent",
}


def test_google_other_kinds_are_all_covered() -> None:
    mapped = {"get_path_params_query", "maybe_escape_pattern", "sitemaps", "line_metadata"}
    mapped |= {"parse_stats"}
    assert {r["kind"] for r in GOOGLE["other"]} == mapped | GOOGLE_UNMAPPED


@pytest.mark.parametrize(
    "record", google_other("get_path_params_query"), ids=ids(google_other("get_path_params_query"))
)
def test_google_path_params_query(record: Record) -> None:
    assert path_params_query(record["input"]) == record["expected"]


@pytest.mark.parametrize(
    "record", google_other("maybe_escape_pattern"), ids=ids(google_other("maybe_escape_pattern"))
)
def test_google_escape_pattern(record: Record) -> None:
    assert escape_pattern(record["input"]) == record["expected"]


@pytest.mark.parametrize("record", google_other("sitemaps"), ids=ids(google_other("sitemaps")))
def test_google_sitemaps(record: Record) -> None:
    assert list(parse(body(record), RFC9309).sitemaps) == record["expected"]


def warned_lines(robots: RobotsTxt) -> set[int]:
    return {w.line for w in robots.warnings}


def directive_lines(robots: RobotsTxt) -> set[int]:
    """Line numbers of the User-agent and rule lines the parser took in."""
    lines = {group.line for group in robots.groups}
    for group in robots.groups:
        lines.update(line for _, _, line in group.rules)
    return lines


@pytest.mark.parametrize(
    "record", google_other("line_metadata"), ids=ids(google_other("line_metadata"))
)
def test_google_line_metadata(record: Record) -> None:
    """Lines google reads as directives are taken in without a warning; lines it cannot read
    (unknown keys, text without a key) are warnings at their line number, and so are
    over-long lines, which are cut."""
    robots = parse(body(record), RFC9309)
    expected = record["expected"]
    line = record["line_num"]
    tag = expected["tag_name"]
    if expected["is_line_too_long"]:
        assert any(w.line == line and "longer" in w.message for w in robots.warnings)
    elif tag in ("Allow", "Disallow"):
        assert line in directive_lines(robots)
        assert line not in warned_lines(robots)
    elif tag == "UserAgent":
        assert line not in warned_lines(robots)
        agents = {a for g in robots.groups for a in g.agents}
        value = record["line_text"].split("#")[0].replace(":", " ").split()[-1]
        assert value in agents
    elif tag == "Sitemap":
        assert line not in warned_lines(robots)
        value = record["line_text"].split("#")[0].split(":", 1)[1].strip()
        assert value in robots.sitemaps
    elif expected["is_empty"] or expected["is_comment"]:
        assert line not in warned_lines(robots)
    else:  # Unknown / Unused: a key we do not read, or no key at all
        assert tag in ("Unknown", "Unused")
        assert line in warned_lines(robots)


@pytest.mark.parametrize(
    "record", google_other("parse_stats"), ids=ids(google_other("parse_stats"))
)
def test_google_parse_stats(record: Record) -> None:
    """google counts the User-agent, Allow, Disallow and Sitemap lines it read; we take in the
    same lines (a rule before any User-agent is read, then ignored with a warning), and the
    others (unknown directives) are warnings."""
    robots = parse(body(record), RFC9309)
    expected = record["expected"]
    outside = [w for w in robots.warnings if "before any User-agent" in w.message]
    taken = sum(len(g.agents) + len(g.rules) for g in robots.groups) + len(robots.sitemaps)
    assert taken + len(outside) == expected["valid_directives"]
    if "unknown_directives" in expected:
        assert len(robots.warnings) - len(outside) == expected["unknown_directives"]
    if "last_line_seen" in expected:
        # google sometimes also reports the empty line after a final line break; we report
        # lines with content only, counted the same way (\n, \r and \r\n each end a line).
        last = max(directive_lines(robots) | warned_lines(robots))
        assert expected["last_line_seen"] - 1 <= last <= expected["last_line_seen"]


# -- protego and crawler-commons: allowed() --------------------------------------------------


def test_peer_files_are_whole() -> None:
    assert len(PROTEGO["records"]) == PROTEGO["counts"]["records"]
    assert len(CRAWLER_COMMONS["records"]) == CRAWLER_COMMONS["counts"]["records"]
    for peer in PEERS.values():
        assert len(set(ids(peer["records"]))) == len(peer["records"])
        assert peer["license"] and peer["source"]


def test_divergence_table_is_consistent() -> None:
    """Every category used is explained, every explained category is used, every listed id
    is a record of that peer."""
    categories = DIVERGENCES["categories"]
    used: set[str] = set()
    tables = {
        "protego": PROTEGO["records"],
        "crawler_commons": CRAWLER_COMMONS["records"],
        "protego_other": PROTEGO["other"],
        "crawler_commons_other": CRAWLER_COMMONS["other"],
    }
    for table, records in tables.items():
        known = set(ids(records))
        assert set(DIVERGENCES[table]) <= known, table
        used.update(DIVERGENCES[table].values())
    for peer, records in PEERS.items():
        table = DIVERGENCES["not_google"][peer]
        assert set(table) <= set(ids(records["records"])), peer
        used.update(table.values())
    assert used == set(categories)
    for reason in categories.values():
        assert reason.strip() and reason.endswith(".")


def differing(peer: str) -> dict[str, bool]:
    """Record id -> our verdict, for every record of *peer* where we differ from it."""
    return {r["id"]: got for r in PEERS[peer]["records"] if (got := verdict(r)) is not r["allowed"]}


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_divergences_are_exactly_the_documented_ones(peer: str) -> None:
    found = set(differing(peer))
    documented = set(DIVERGENCES[peer])
    assert not (found - documented), f"undocumented divergences: {sorted(found - documented)}"
    assert not (documented - found), f"documented but no longer diverging: {documented - found}"


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_records_agree_with_google_oracle(peer: str) -> None:
    """Where the peer and we disagree, google/robotstxt sides with us; and we agree with google
    on all records except the documented ones."""
    found = {
        r["id"]
        for r in PEERS[peer]["records"]
        if "google_oracle" in r and verdict(r) is not r["google_oracle"]
    }
    assert found == set(DIVERGENCES["not_google"][peer])
    assert all("google_oracle" in r for r in PEERS[peer]["records"])


# -- protego: the other queries ---------------------------------------------------------------


def as_json(value: RequestRate | VisitTime | float | None) -> Any:
    """Our answer in the shape the protego records use."""
    if value is None:
        return None

    def clock(moment: datetime.time | None) -> str | None:
        return None if moment is None else moment.isoformat()

    if isinstance(value, RequestRate):
        return {
            "requests": value.requests,
            "seconds": value.seconds,
            "start_time": clock(value.start_time),
            "end_time": clock(value.end_time),
        }
    if isinstance(value, VisitTime):
        return {"start_time": clock(value.start_time), "end_time": clock(value.end_time)}
    return value


def protego_other_answer(record: Record) -> Any:
    robots = parse(body(record), RFC9309)
    kind = record["kind"]
    if kind == "sitemaps":
        return list(robots.sitemaps)
    if kind == "preferred_host":
        return robots.host
    if kind == "crawl_delay":
        return robots.crawl_delay(record["agent"])
    if kind == "request_rate":
        return as_json(robots.request_rate(record["agent"]))
    if kind == "visit_time":
        return as_json(robots.visit_time(record["agent"]))
    raise AssertionError(kind)


# protego's URL and pattern normalisation (``_quote_path``/``_quote_pattern``) has no
# counterpart: RFC9309 matches URLs as given (see the "google-encoding" category).
PROTEGO_OTHER = [r for r in PROTEGO["other"] if r["kind"] != "protego_quoting"]


def test_protego_other_kinds() -> None:
    assert {r["kind"] for r in PROTEGO["other"]} == {
        "sitemaps",
        "preferred_host",
        "crawl_delay",
        "request_rate",
        "visit_time",
        "protego_quoting",
    }


@pytest.mark.parametrize("record", PROTEGO_OTHER, ids=ids(PROTEGO_OTHER))
def test_protego_other(record: Record) -> None:
    got = protego_other_answer(record)
    if record["id"] in DIVERGENCES["protego_other"]:
        assert got != record["expected"]
    else:
        assert got == record["expected"]


# -- crawler-commons: Crawl-delay and Sitemap --------------------------------------------------

CC_OTHER = [r for r in CRAWLER_COMMONS["other"] if r["kind"] in ("crawl_delay", "sitemaps")]


@pytest.mark.parametrize("record", CC_OTHER, ids=ids(CC_OTHER))
def test_crawler_commons_other(record: Record) -> None:
    robots = parse(body(record), RFC9309)
    if record["kind"] == "sitemaps":
        got: Any = list(robots.sitemaps)
        expected = record["expected"]
    else:
        got = robots.crawl_delay(agent_of(record))
        expected = record["expected_seconds"]
    if record["id"] in DIVERGENCES["crawler_commons_other"]:
        assert got != expected
    else:
        assert got == expected


def main() -> None:  # pragma: no cover - a maintainer's tool
    """Print the records we differ on, with their documented category (or ``?``)."""
    for peer in sorted(PEERS):
        records = {r["id"]: r for r in PEERS[peer]["records"]}
        for record_id, got in differing(peer).items():
            record = records[record_id]
            category = DIVERGENCES[peer].get(record_id, "?")
            print(
                f"{peer}\t{category}\t{record_id}\tagent={agent_of(record)!r}\t"
                f"url={record['url']!r}\tours={got}\tpeer={record['allowed']}\t"
                f"google={record.get('google_oracle')}",
                file=sys.stdout,
            )


if __name__ == "__main__":  # pragma: no cover
    main()
