"""StoredRules: stored copies to entries and back, on a real store file."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from scrapy_rerp.core.body import MAX_SIZE, parse_body, read_body
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry
from scrapy_rerp.core.recall import WRITES_AT_ONCE, StoredRules, stored_body
from scrapy_rerp.core.store import RobotsStore, StoredCopy
from scrapy_rerp.engine import RFC9309, RobotsTxt

ORIGIN = "https://example.com"
BODY = b"User-agent: *\nDisallow: /private\n"


class Stats:
    """The stats collector's calls StoredRules makes."""

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
        outcome,
        robots,
        status=200 if outcome == Outcome.PARSED else 404,
        url=f"{ORIGIN}/robots.txt",
        body=body,
        response=Response(),
    )
    entry = RobotsEntry(robots, now, now + 3600, fetched.status, fetched.url, outcome)
    return fetched, entry


def test_a_parsed_copy_comes_back_as_the_same_rules(tmp_path: Path) -> None:
    collector = stats()
    rules = StoredRules(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, collector)
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    assert rules.remember(ORIGIN, entry, fetched)
    recalled = rules.recall(ORIGIN)
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
    rules = StoredRules(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, collector)
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    origins = [f"https://site{i}.example" for i in range(WRITES_AT_ONCE + 1)]

    def written() -> int:
        return len(RobotsStore(tmp_path / "s.sqlite", read_only=True))

    for origin in origins[: WRITES_AT_ONCE - 1]:
        assert rules.remember(origin, entry, fetched)
    assert written() == 0  # not yet
    assert rules.recall(origins[0]) is not None  # recalled meanwhile all the same
    assert rules.remember(origins[WRITES_AT_ONCE - 1], entry, fetched)  # a full batch: written
    assert written() == WRITES_AT_ONCE
    assert rules.remember(origins[-1], entry, fetched)
    assert written() == WRITES_AT_ONCE
    rules.close()  # and the rest
    assert written() == WRITES_AT_ONCE + 1
    assert collector.get_value("robotstxt/store/stored") == WRITES_AT_ONCE + 1


def test_allow_all_is_stored_as_such_and_an_outage_never(tmp_path: Path) -> None:
    rules = StoredRules(RobotsStore(tmp_path / "s.sqlite"), RFC9309, MAX_SIZE, stats())
    fetched, entry = fetched_entry(Outcome.ALLOW_ALL, RobotsTxt.allow_all(RFC9309), None)
    assert rules.remember(ORIGIN, entry, fetched)
    recalled = rules.recall(ORIGIN)
    assert recalled is not None
    assert recalled.outcome == Outcome.ALLOW_ALL
    assert not rules.remember(
        "https://other.example", entry, Fetched(Outcome.UNREACHABLE, status=503)
    )
    assert rules.recall("https://other.example") is None


def test_an_unusable_store_is_counted_once(tmp_path: Path) -> None:
    collector = stats()
    (tmp_path / "dir").mkdir()
    rules = StoredRules(RobotsStore(tmp_path / "dir"), RFC9309, MAX_SIZE, collector)
    assert rules.recall(ORIGIN) is None
    assert rules.recall(ORIGIN) is None
    assert collector.get_value("robotstxt/store/unavailable") == 1


def test_a_stored_body_over_the_cap_is_read_capped_as_a_download_is(tmp_path: Path) -> None:
    # A store written under a larger RERP_MAX_SIZE: this crawl reads the first max_size bytes,
    # as it reads a download, so a rule past the cap is not applied.
    head = b"User-agent: *\nDisallow: /a\n"
    body = head + b"#" * 200 + b"\nDisallow: /b\n"
    cap = len(head) + 100
    now = time.time()
    store = RobotsStore(tmp_path / "s.sqlite")
    copy = StoredCopy(f"{ORIGIN}/robots.txt", 200, Outcome.PARSED, now, now + 3600, body)
    assert store.put(ORIGIN, copy)
    rules = StoredRules(store, RFC9309, cap, stats())
    recalled = rules.recall(ORIGIN)
    assert recalled is not None and recalled.robots is not None
    downloaded = read_body(body, None, None, cap)
    assert downloaded.truncated
    assert stored_body(copy, cap) == downloaded
    for path, allowed in (("/a", False), ("/b", True), ("/c", True)):
        assert recalled.robots.allowed(f"{ORIGIN}{path}", "bot") is allowed
        assert downloaded.rules(RFC9309).allowed(f"{ORIGIN}{path}", "bot") is allowed
    # Under a cap that holds it all, the same copy's last rule applies.
    whole = StoredRules(store, RFC9309, MAX_SIZE, stats()).recall(ORIGIN)
    assert whole is not None and whole.robots is not None
    assert not whole.robots.allowed(f"{ORIGIN}/b", "bot")
    rules.close()


def test_a_304_keeps_the_rules_recalled_unless_a_later_copy_was_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    rules = StoredRules(RobotsStore(path), RFC9309, MAX_SIZE, stats())
    fetched, entry = fetched_entry(Outcome.PARSED, parse_body(BODY, RFC9309), BODY)
    rules.remember(ORIGIN, entry.with_(expires_at=entry.fetched_at + 1), fetched)
    rules.close()
    rules = StoredRules(RobotsStore(path), RFC9309, MAX_SIZE, stats())
    recalled = rules.recall(ORIGIN)
    assert recalled is not None and recalled.robots is not None
    now = time.time()
    not_modified = Fetched(Outcome.UNREACHABLE, status=304, not_modified=True)
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
