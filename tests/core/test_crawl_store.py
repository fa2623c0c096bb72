"""CrawlStore: stored copies to entries and back, on a real store file."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from scrapy_rerp.core.body import MAX_SIZE, parse_body, read_body
from scrapy_rerp.core.crawl_store import WRITES_AT_ONCE, CrawlStore, stored_body
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry
from scrapy_rerp.core.origins import Claim
from scrapy_rerp.core.store import RobotsStore, StoredCopy
from scrapy_rerp.engine import RFC9309, RobotsTxt
from tests.support.scenarios import scenario

ORIGIN = "https://example.com"
BODY = b"User-agent: *\nDisallow: /private\n"


class Stats:
    """The stats collector's calls CrawlStore makes."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value

    def get_value(self, key: str) -> Any:
        return self.values.get(key)


def stats() -> Stats:
    return Stats()


class Response:
    headers = {b"ETag": b'"v1"'}


def fetched_entry(
    outcome: Outcome, robots: RobotsTxt, body: bytes | None
) -> tuple[Fetched, RobotsEntry]:
    now = time.time()
    fetched = Fetched(
        outcome=outcome,
        robots=robots,
        status=200 if outcome == Outcome.PARSED else 404,
        url=f"{ORIGIN}/robots.txt",
        body=body,
        response=Response(),
    )
    entry = RobotsEntry(
        robots=robots,
        fetched_at=now,
        expires_at=now + 3600,
        status=fetched.status,
        url=fetched.url,
        outcome=outcome,
    )
    return fetched, entry


def test_a_parsed_copy_comes_back_as_the_same_rules(tmp_path: Path) -> None:
    collector = stats()
    rules = CrawlStore(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, stats=collector)
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    assert rules.put(ORIGIN, entry, fetched)
    recalled = rules.get(ORIGIN)
    assert recalled is not None
    assert recalled.robots is not None
    assert not recalled.robots.allowed(f"{ORIGIN}/private/x", "bot")
    assert recalled.robots.allowed(f"{ORIGIN}/a", "bot")
    assert recalled.expires_at == entry.expires_at
    rules.close()  # written at close, with what is left of the batch
    assert collector.get_value("robotstxt/store/stored") == 1
    with RobotsStore(tmp_path / "s.sqlite") as store:
        assert store.get(ORIGIN).etag == b'"v1"'  # type: ignore[union-attr]


def test_copies_are_written_in_batches(tmp_path: Path) -> None:
    collector = stats()
    rules = CrawlStore(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, stats=collector)
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    origins = [f"https://site{i}.example" for i in range(WRITES_AT_ONCE + 1)]

    def written() -> int:
        return len(RobotsStore(tmp_path / "s.sqlite", read_only=True))

    for origin in origins[: WRITES_AT_ONCE - 1]:
        assert rules.put(origin, entry, fetched)
    assert written() == 0  # not yet
    assert rules.get(origins[0]) is not None  # recalled meanwhile all the same
    assert rules.put(origins[WRITES_AT_ONCE - 1], entry, fetched)  # a full batch: written
    assert written() == WRITES_AT_ONCE
    assert rules.put(origins[-1], entry, fetched)
    assert written() == WRITES_AT_ONCE
    rules.close()  # and the rest
    assert written() == WRITES_AT_ONCE + 1
    assert collector.get_value("robotstxt/store/stored") == WRITES_AT_ONCE + 1


def test_allow_all_is_stored_as_such_and_an_outage_never(tmp_path: Path) -> None:
    rules = CrawlStore(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, stats=stats())
    fetched, entry = fetched_entry(Outcome.ALLOW_ALL, RobotsTxt.allow_all(RFC9309), None)
    assert rules.put(ORIGIN, entry, fetched)
    recalled = rules.get(ORIGIN)
    assert recalled is not None
    assert recalled.outcome == Outcome.ALLOW_ALL
    assert not rules.put(
        "https://other.example", entry, Fetched(outcome=Outcome.UNREACHABLE, status=503)
    )
    assert rules.get("https://other.example") is None


def test_an_unusable_store_is_counted_once(tmp_path: Path) -> None:
    collector = stats()
    (tmp_path / "dir").mkdir()
    rules = CrawlStore(RobotsStore(tmp_path / "dir"), RFC9309, MAX_SIZE, stats=collector)
    assert rules.get(ORIGIN) is None
    assert rules.get(ORIGIN) is None
    assert collector.get_value("robotstxt/store/unavailable") == 1


def test_a_stored_body_over_the_cap_is_read_capped_as_a_download_is(tmp_path: Path) -> None:
    # A store written under a larger RERP_MAX_SIZE: this crawl reads the first max_size bytes,
    # as it reads a download, so a rule past the cap is not applied.
    head = b"User-agent: *\nDisallow: /a\n"
    body = head + b"#" * 200 + b"\nDisallow: /b\n"
    cap = len(head) + 100
    now = time.time()
    store = RobotsStore(tmp_path / "s.sqlite")
    copy = StoredCopy(
        url=f"{ORIGIN}/robots.txt",
        status=200,
        outcome=Outcome.PARSED,
        fetched_at=now,
        expires_at=now + 3600,
        body=body,
    )
    assert store.put(ORIGIN, copy)
    rules = CrawlStore(store, RFC9309, cap, stats=stats())
    recalled = rules.get(ORIGIN)
    assert recalled is not None and recalled.robots is not None
    downloaded = read_body(body, None, None, cap)
    assert downloaded.truncated
    assert stored_body(copy, cap) == downloaded
    for path, allowed in (("/a", False), ("/b", True), ("/c", True)):
        assert recalled.robots.allowed(f"{ORIGIN}{path}", "bot") is allowed
        assert downloaded.rules(RFC9309).allowed(f"{ORIGIN}{path}", "bot") is allowed
    # Under a cap that holds it all, the same copy's last rule applies.
    whole = CrawlStore(store, RFC9309, MAX_SIZE, stats=stats()).get(ORIGIN)
    assert whole is not None and whole.robots is not None
    assert not whole.robots.allowed(f"{ORIGIN}/b", "bot")
    rules.close()


def test_a_304_keeps_the_rules_recalled_unless_a_later_copy_was_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    rules.put(ORIGIN, entry.with_(expires_at=entry.fetched_at + 1), fetched)
    rules.close()
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    recalled = rules.get(ORIGIN)
    assert recalled is not None and recalled.robots is not None
    now = time.time()
    not_modified = Fetched(outcome=Outcome.UNREACHABLE, status=304, not_modified=True)
    renewed = rules.renew(ORIGIN, recalled, now + 10, now + 3600, not_modified)
    assert renewed is not None and renewed.robots is recalled.robots  # not parsed again
    assert (renewed.fetched_at, renewed.expires_at) == (now + 10, now + 3600)
    # Another process stores a later copy before this one's next 304: that copy's rules.
    later = b"User-agent: *\nDisallow: /\n"
    with RobotsStore(path) as other:
        copy = other.get(ORIGIN)
        assert copy is not None
        assert other.put(ORIGIN, replace(copy, body=later, fetched_at=now + 100))
    renewed = rules.renew(ORIGIN, recalled, now + 20, now + 3600, not_modified)
    assert renewed is not None and renewed.robots is not None
    assert not renewed.robots.allowed(f"{ORIGIN}/a", "bot")  # the later copy's rules
    rules.close()


def test_only_origins_the_store_holds_are_looked_up(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    first = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    first.put(ORIGIN, entry, fetched)
    first.close()
    store = RobotsStore(path)
    rules = CrawlStore(store, RFC9309, MAX_SIZE, stats=stats())
    assert rules.get(ORIGIN) is not None
    reads = store.counts.read
    assert rules.get("https://not-stored.example") is None
    assert store.counts.read == reads  # no read of the file for an origin it does not hold
    # A copy another process stores once this crawl has opened the store is not seen: the
    # crawl downloads that robots.txt instead.
    with RobotsStore(path) as other:
        other.put(
            "https://later.example",
            replace(other.get(ORIGIN), url="https://later.example/robots.txt"),
        )  # type: ignore[arg-type]
    assert rules.get("https://later.example") is None
    rules.close()


def test_the_origins_known_stay_within_twice_the_store_s_bound(tmp_path: Path) -> None:
    store = RobotsStore(tmp_path / "s.sqlite", max_origins=10)
    rules = CrawlStore(store, RFC9309, MAX_SIZE, stats=stats())
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    for number in range(200):
        rules.put(f"https://{number}.example", entry, fetched)
        assert len(rules._known) <= 2 * store.max_origins + WRITES_AT_ONCE
    rules.close()
    with RobotsStore(tmp_path / "s.sqlite") as reopened:
        assert len(reopened) == 10
        assert reopened.origin_keys() == {f"https://{n}.example" for n in range(190, 200)}


def _stored(path: Path, origins: list[str], expires_in: float = 3600) -> None:
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    for origin in origins:
        rules.put(origin, entry.with_(expires_at=entry.fetched_at + expires_in), fetched)
    rules.close()


def _statements(store: RobotsStore) -> list[str]:
    """The SQL statements ``store``'s connection runs from now on."""
    seen: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(seen.append)
    return seen


def test_a_restart_reads_the_recent_copies_at_once_not_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    origins = [f"https://{n}.example" for n in range(5)]
    _stored(path, origins)
    store = RobotsStore(path)
    rules = CrawlStore(store, RFC9309, MAX_SIZE, stats=stats())
    statements = _statements(store)
    for origin in origins:
        recalled = rules.get(origin)
        assert recalled is not None and recalled.robots is not None
        assert not recalled.robots.allowed(f"{origin}/private/x", "bot")
    assert statements == []  # every copy came from the one read at start
    assert store.counts.read == 5
    rules.close()  # their uses recorded: the least recently used is the first recalled
    with RobotsStore(path) as reopened:
        assert list(reopened.recent(5, 10**6)) == origins[::-1]


def test_the_copies_read_at_once_are_the_most_recent_within_both_bounds(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    origins = [f"https://{n}.example" for n in range(5)]
    _stored(path, origins)
    with RobotsStore(path) as store:
        assert list(store.recent(3, 10**6)) == origins[:1:-1]
        assert list(store.recent(5, 2 * len(BODY))) == origins[:2:-1]
        assert store.recent(5, len(BODY) - 1) == {}


@scenario
async def test_a_304_renews_the_copy_recalled_with_the_next_batch(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _stored(path, [ORIGIN], expires_in=-1)
    store = RobotsStore(path)
    collector = stats()
    rules = CrawlStore(store, RFC9309, MAX_SIZE, stats=collector)
    claim = await rules.claim(ORIGIN, None)
    recalled = claim.previous
    assert recalled is not None and recalled.robots is not None
    assert claim.validators is not None
    statements = _statements(store)

    class NotModified:
        headers = {b"ETag": b'"v2"', b"Cache-Control": b"max-age=60"}

    now = time.time()
    not_modified = Fetched(outcome=Outcome.UNREACHABLE, status=304, not_modified=True)
    not_modified.response = NotModified()
    renewed = rules.renew(ORIGIN, recalled, now, now + 60, not_modified)
    assert renewed is not None and renewed.robots is recalled.robots
    assert (renewed.fetched_at, renewed.expires_at) == (now, now + 60)
    assert statements == []  # not written yet
    assert collector.get_value("robotstxt/store/revalidated") == 1
    assert rules.get(ORIGIN).expires_at == now + 60  # type: ignore[union-attr]
    rules.close()
    with RobotsStore(path) as reopened:
        copy = reopened.get(ORIGIN)
        assert copy is not None
        assert (copy.fetched_at, copy.expires_at, copy.body) == (now, now + 60, BODY)
        assert (copy.etag, copy.cache_control) == (b'"v2"', b"max-age=60")


def test_a_batched_renewal_keeps_a_later_copy_another_process_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _stored(path, [ORIGIN], expires_in=-1)
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    recalled = rules.get(ORIGIN)
    assert recalled is not None
    now = time.time()
    not_modified = Fetched(outcome=Outcome.UNREACHABLE, status=304, not_modified=True)
    assert rules.renew(ORIGIN, recalled, now, now + 60, not_modified) is not None
    later = b"User-agent: *\nDisallow: /\n"
    with RobotsStore(path) as other:
        copy = other.get(ORIGIN)
        assert copy is not None
        assert other.put(ORIGIN, replace(copy, body=later, fetched_at=now + 100))
    rules.close()
    with RobotsStore(path) as reopened:
        assert reopened.get(ORIGIN).body == later  # type: ignore[union-attr]


def test_replaced_counts_only_the_downloads_written(tmp_path: Path) -> None:
    # Two stored copies recalled, both downloaded again: one written in its place (replaced),
    # the other ignored, as another process stored a copy fetched later meanwhile.
    path = tmp_path / "s.sqlite"
    other_origin = "https://other.test"
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    past = entry.with_(fetched_at=entry.fetched_at - 120, expires_at=entry.fetched_at - 60)
    first = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=stats())
    first.put(ORIGIN, past, fetched)
    first.put(other_origin, past, fetched)
    first.close()
    collector = stats()
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=collector)
    assert rules.get(ORIGIN) is not None and rules.get(other_origin) is not None
    with RobotsStore(path) as other:
        copy = other.get(other_origin)
        assert copy is not None
        assert other.put(other_origin, replace(copy, fetched_at=time.time() + 60))
    rules.put(ORIGIN, entry, fetched)
    rules.put(other_origin, entry, fetched)
    rules.close()
    assert collector.values["robotstxt/store/stored"] == 1
    assert collector.values["robotstxt/store/replaced"] == 1


@scenario
async def test_the_origin_service_claims_and_publishes_copies(tmp_path: Path) -> None:
    """``claim``: a fresh copy used as it is, an expired one revalidated, nothing asked of the
    file for an origin the cache knew; ``publish``: a download stored, a 304 renewing the
    copy claimed (its rules not parsed again), an outage not stored."""
    path = tmp_path / "s.sqlite"
    collector = stats()
    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=collector)
    assert (await rules.claim(ORIGIN, None)) == Claim(download=True)
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    assert (await rules.publish(ORIGIN, entry, fetched, Claim(download=True))) is entry
    fresh = await rules.claim(ORIGIN, None)
    assert fresh.reused and not fresh.download and fresh.entry is not None
    assert fresh.entry.robots is not None and not fresh.entry.robots.allowed(
        f"{ORIGIN}/private/x", "bot"
    )
    assert (await rules.claim(ORIGIN, entry)) == Claim(download=True)  # the cache knew it
    await rules.publish(ORIGIN, entry.with_(expires_at=time.time() - 1), fetched, fresh)
    rules.close()
    assert collector.get_value("robotstxt/store/stored") == 1

    rules = CrawlStore(RobotsStore(path), RFC9309, MAX_SIZE, stats=collector)
    expired = await rules.claim(ORIGIN, None)
    assert expired.download and expired.entry is None and expired.previous is not None
    assert expired.validators is not None
    assert expired.validators.headers == {b"If-None-Match": b'"v1"'}
    now = time.time()
    not_modified = Fetched(outcome=Outcome.UNREACHABLE, status=304, not_modified=True)
    confirmed = expired.previous.with_(fetched_at=now, expires_at=now + 3600)
    renewed = await rules.publish(ORIGIN, confirmed, not_modified, expired)
    assert renewed.robots is expired.previous.robots and renewed.expires_at == now + 3600
    outage = RobotsEntry(
        robots=None,
        fetched_at=now,
        expires_at=now + 60,
        status=503,
        url=f"{ORIGIN}/robots.txt",
        outcome=Outcome.UNREACHABLE,
    )
    down = Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")
    assert (await rules.publish(ORIGIN, outage, down, Claim(download=True))) is outage
    rules.close()
    assert collector.get_value("robotstxt/store/revalidated") == 1
    with RobotsStore(path) as store:
        kept = store.get(ORIGIN)
        assert kept is not None and kept.body == BODY and kept.expires_at == now + 3600
