"""What Redis holds is input: origins' hashes planted with redis-py (as a person with
``redis-cli``, a tool or a restored dump would leave them) against the real redis-server, then
real crawls by worker processes. Assertions are on what the loopback site received (robots.txt
requested or not, ``/secret`` never downloaded, the conditional headers), what the worker says
(stats, WARNING lines, its peak memory) and what Redis holds afterwards (the key's TTL)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.fleet.bounds import HashBounds
from tests.support.redis import RedisServer, finish, start_worker
from tests.support.servers import Server

ROBOTS = "User-agent: *\nDisallow: /secret\n"


@pytest.fixture
def site() -> Iterator[Server]:
    with Server(host="127.0.0.71") as s:
        s.robots(ROBOTS)
        yield s


def redis_now(redis_server: RedisServer) -> float:
    seconds, micros = redis_server.client().time()
    return float(seconds) + micros / 1_000_000


def plant(redis_server: RedisServer, site: Server, ttl: float | None, **fields: Any) -> str:
    """An origin's hash, as the fleet's format reads it, with ``fields`` over a fresh parsed
    copy of ``ROBOTS``; times given relative to Redis's clock. No TTL when ``ttl`` is None."""
    now = redis_now(redis_server)
    values: dict[str, Any] = {
        "v": "2",
        "syntax": "rfc9309",
        "outcome": "parsed",
        "body": ROBOTS,
        "status": "200",
        "url": site.url("/robots.txt"),
        "fetched_at": 0.0,
        "expires_at": 3600.0,
        "failures": "0",
        **fields,
    }
    for name in ("fetched_at", "expires_at", "outage_since"):
        if name in values:
            values[name] = repr(now + float(values[name]))
    key = f"rerp:robots:{site.origin}"
    client = redis_server.client()
    client.delete(key)
    client.hset(key, mapping=values)
    if ttl is not None:
        client.expire(key, int(ttl))
    return key


def crawl(redis_server: RedisServer, site: Server, **settings: Any) -> dict[str, Any]:
    worker = start_worker(
        {
            "redis": redis_server.url,
            "urls": [site.url("/secret"), site.url("/page")],
            # An outage's requests wait this long before they are dropped (300 s by default).
            "settings": {"RERP_UNREACHABLE_MAX_WAIT": 5, **settings},
        }
    )
    return finish(worker, timeout=60)


def said(report: dict[str, Any]) -> list[str]:
    """The WARNING lines of a worker's log, without their time and logger."""
    return [line.split("] WARNING: ", 1)[1] for line in report["warnings"] if "] WARNING: " in line]


KEEP = HashBounds.of(RerpSettings()).keep


@pytest.mark.parametrize(
    "fields",
    [
        # Every worker crawled /secret for as long as the hash said.
        {"outcome": "allow-all", "body": "", "expires_at": 1e9},
        # Every request of the origin dropped for 31 years, robots.txt never retried.
        {
            "outcome": "unreachable",
            "body": "",
            "expires_at": 1e9,
            "failures": "1",
            "outage_since": 0.0,
        },
        # Rules parsed from another file, "fetched" in a year, fresh until then.
        {"body": "User-agent: *\nAllow: /\n", "fetched_at": 365 * 86400.0, "expires_at": 4e7},
        # Rules kept through an outage, retried in a year.
        {
            "body": "User-agent: *\nAllow: /\n",
            "expires_at": 365 * 86400.0,
            "failures": "3",
            "outage_since": -60.0,
        },
    ],
    ids=["allow-all-for-31-years", "unreachable-for-31-years", "fetched-in-a-year", "outage-year"],
)
def test_a_planted_hash_beyond_the_bounds_is_rejected_and_robots_txt_fetched(
    redis_server: RedisServer, site: Server, fields: dict[str, Any]
) -> None:
    key = plant(redis_server, site, None, **fields)
    report = crawl(redis_server, site)
    assert site.count("/robots.txt") == 1
    assert sorted(site.paths()) == ["/page", "/robots.txt"]  # /secret never downloaded
    assert report["received"] == [site.url("/page")] and report["dropped"] == []
    assert report["stats"]["robotstxt/redis/rejected"] >= 1
    assert report["stats"]["robotstxt/forbidden"] == 1
    (warning,) = said(report)
    assert warning.startswith(f"The fleet's robots.txt for {site.origin} in Redis is not used: ")
    assert warning.endswith(", which this worker's settings never write; it is fetched again")
    # Replaced by the worker's own download, with a TTL.
    client = redis_server.client()
    assert client.hget(key, "outcome") == b"parsed" and client.hget(key, "body") == ROBOTS.encode()
    assert 0 < client.ttl(key) <= KEEP


def test_a_planted_hash_within_the_bounds_without_a_ttl_is_used_and_given_one(
    redis_server: RedisServer, site: Server
) -> None:
    key = plant(redis_server, site, None)
    assert redis_server.client().ttl(key) == -1
    report = crawl(redis_server, site)
    # Used as the fleet's copy: no download, its rules obeyed.
    assert site.paths() == ["/page"]
    assert report["stats"].get("robotstxt/redis/rejected") is None
    assert report["stats"]["robotstxt/redis/repaired"] >= 1
    assert said(report) == []
    # The key no longer outlives what a worker would give it.
    assert 0 < redis_server.client().ttl(key) <= KEEP


def test_a_planted_hash_within_the_bounds_with_a_ttl_is_used_as_it_is(
    redis_server: RedisServer, site: Server
) -> None:
    """The control: an entry a worker could have written is taken, and nothing is repaired."""
    key = plant(redis_server, site, 7200)
    report = crawl(redis_server, site)
    assert site.paths() == ["/page"]
    assert report["stats"]["robotstxt/redis/shared"] >= 1
    assert "robotstxt/redis/repaired" not in report["stats"]
    assert 7000 < redis_server.client().ttl(key) <= 7200


@pytest.mark.parametrize(
    ("etag", "last_modified", "sent"),
    [
        (b'"v1"', b"Sat, 28 Nov 2026 10:00:00 GMT", True),
        (b'W/"v\x01"', b"Sat, 28 Nov 2026 10:00:00 GMT", False),
        (b'"v1"', b"Sat, 28 Nov 2026\x0b10:00:00 GMT", False),
        (b'"v 1"', b"Sat, 28 Nov 2026 10:00:00 GMT\x7f", False),
        (b'"v1"\t', b"yesterday", False),
    ],
    ids=["sendable", "etag-control-byte", "date-vertical-tab", "space-and-del", "tab-not-a-date"],
)
def test_validators_planted_in_redis_go_back_only_as_valid_headers(
    redis_server: RedisServer, site: Server, etag: bytes, last_modified: bytes, sent: bool
) -> None:
    """An expired copy's validators are sent back as ``If-None-Match`` and
    ``If-Modified-Since``: an ``ETag`` only as an entity tag of visible ASCII, a
    ``Last-Modified`` only as an HTTP date (before, anything without CR, LF or NUL went out)."""
    plant(
        redis_server,
        site,
        7200,
        fetched_at=-7200.0,
        expires_at=-3600.0,
        etag=etag,
        last_modified=last_modified,
    )
    report = crawl(redis_server, site)
    (robots,) = [hit for hit in site.hits() if hit.path == "/robots.txt"]
    assert report["received"] == [site.url("/page")]
    if sent:
        assert robots.header("If-None-Match") == etag.decode()
        assert robots.header("If-Modified-Since") == last_modified.decode()
    else:
        ok_etag = etag == b'"v1"'
        ok_date = last_modified == b"Sat, 28 Nov 2026 10:00:00 GMT"
        assert robots.header("If-None-Match") == (etag.decode() if ok_etag else None)
        assert robots.header("If-Modified-Since") == (last_modified.decode() if ok_date else None)


def test_a_planted_body_of_40_mb_is_not_read_and_costs_the_worker_no_memory(
    redis_server: RedisServer, site: Server
) -> None:
    """A 100 MB body once cost a worker 396 MB. Lengths are read first, in Redis: a body
    beyond ``RERP_MAX_SIZE`` never leaves it. Peak RSS, against a worker of the same crawl
    without it, grows by less than twice the cap, not by the body."""
    cap = 4 * 1024 * 1024
    baseline = crawl(redis_server, site, RERP_MAX_SIZE=cap)
    assert baseline["stats"].get("robotstxt/redis/oversized") is None
    body = b"User-agent: *\nAllow: /\n" + b"#" * (40 * 1024 * 1024)
    plant(redis_server, site, 7200, body=body)
    site.clear()
    report = crawl(redis_server, site, RERP_MAX_SIZE=cap)
    # Not read: robots.txt fetched again, its rules obeyed (/secret never downloaded).
    assert sorted(site.paths()) == ["/page", "/robots.txt"]
    assert report["stats"]["robotstxt/redis/oversized"] >= 1
    (warning,) = said(report)
    assert f"in Redis is not used: its 'body' field holds {len(body)} bytes, beyond {cap}," in (
        warning
    ), warning
    grown = (report["max_rss_kb"] - baseline["max_rss_kb"]) * 1024
    assert grown < 2 * cap, (report["max_rss_kb"], baseline["max_rss_kb"])
