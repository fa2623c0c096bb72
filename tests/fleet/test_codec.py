"""An origin's robots.txt entry as the fleet stores it (fleet/codec.py): every kind of entry
through ``encode`` and ``decode``, what a hash of another syntax, a damaged field or a body over
the cap gives, and the same hashes through a real redis-server (fleet/store.py). What a worker
then does with an unreadable hash: test_documents.py."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, RobotsTxt, parse
from scrapy_rerp.fleet.codec import CLOCK_FIELDS, FORMAT_VERSION, Unreadable, decode, encode
from scrapy_rerp.fleet.store import RedisOriginCache
from tests.support.redis import RedisServer
from tests.support.scenarios import scenario

SYNTAXES = {"rfc9309": RFC9309, "gym2008": GYM2008, "mk1996": MK1996}

#: Rules whose decisions tell the three syntaxes apart: the wildcard and end anchor (RFC 9309
#: and gym2008 only), the longest match (RFC 9309 only), and per-agent groups, Crawl-delay,
#: Request-rate and a sitemap in all three.
BODY = (
    b"User-agent: *\n"
    b"Disallow: /*.pdf$\n"
    b"Disallow: /private\n"
    b"Allow: /private/open\n"
    b"Crawl-delay: 2.5\n"
    b"Request-rate: 1/10s\n"
    b"Sitemap: http://a.test/sitemap.xml\n"
    b"\n"
    b"User-agent: special\n"
    b"Disallow: /\n"
)
PATHS = ["/", "/x.pdf", "/*.pdf$", "/private/x", "/private/open", "/privately"]

FETCHED_AT = 1_700_000_000.123456789
EXPIRES_AT = 1_700_086_400.987654321
MAX_SIZE = 500 * 1024


def decisions(robots: RobotsTxt, agent: str = "bot") -> list[bool]:
    return [robots.allowed(f"http://a.test{path}", agent) for path in PATHS]


def entry(**changes: object) -> RobotsEntry:
    """A parsed entry of ``BODY`` in RFC 9309, with ``changes``."""
    fields: dict[str, object] = {
        "robots": parse(BODY, RFC9309),
        "fetched_at": FETCHED_AT,
        "expires_at": EXPIRES_AT,
        "status": 200,
        "url": "http://a.test/robots.txt",
    }
    return RobotsEntry(**{**fields, **changes})  # type: ignore[arg-type]


def fetched(body: bytes = BODY, charset: str | None = "utf-8") -> Fetched:
    return Fetched(outcome=Outcome.PARSED, body=body, charset=charset)


def good_fields(**changes: bytes | None) -> dict[bytes, bytes]:
    """The fields of a parsed RFC 9309 entry of ``BODY``; a None in ``changes`` drops one."""
    fields = encode(entry(), fetched(), "rfc9309")
    for name, value in changes.items():
        if value is None:
            fields.pop(name.encode(), None)
        else:
            fields[name.encode()] = value
    return fields


def read(fields: Mapping[bytes, bytes], max_size: int = MAX_SIZE) -> RobotsEntry:
    decoded = decode(fields, RFC9309, "rfc9309", max_size)
    assert decoded is not None
    return decoded


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SYNTAXES)
def test_parsed_rules_come_back_as_the_downloader_parsed_them_in_each_syntax(name: str) -> None:
    syntax = SYNTAXES[name]
    original = entry(robots=parse(BODY, syntax))
    fields = encode(original, fetched(charset=None), name)
    assert fields[b"syntax"] == name.encode() and fields[b"outcome"] == b"parsed"
    assert fields[b"body"] == BODY and b"charset" not in fields
    back = decode(fields, syntax, name, MAX_SIZE)
    assert back is not None and back.robots is not None
    assert back.robots.syntax == syntax
    assert decisions(back.robots) == decisions(original.robots)  # type: ignore[arg-type]
    assert decisions(back.robots, "special") == [False] * len(PATHS)
    assert back.robots.crawl_delay("bot") == 2.5
    request_rate = back.robots.request_rate("bot")
    assert request_rate is not None
    assert (request_rate.requests, request_rate.seconds) == (1, 10.0)
    assert back.robots.sitemaps == ("http://a.test/sitemap.xml",)
    assert (back.fetched_at, back.expires_at) == (FETCHED_AT, EXPIRES_AT)
    assert (back.status, back.url, back.outcome) == (200, "http://a.test/robots.txt", "parsed")
    assert (back.failures, back.outage_since) == (0, None)


def test_the_syntaxes_decide_apart_so_each_round_trip_above_tells_them_apart() -> None:
    # Parsed in the wrong syntax, the rules of BODY would decide otherwise: the round trips
    # above would catch a decode that ignores its syntax.
    found = {name: tuple(decisions(parse(BODY, syntax))) for name, syntax in SYNTAXES.items()}
    assert len(set(found.values())) == 3


def test_the_charset_the_body_was_parsed_with_comes_back() -> None:
    latin = "User-agent: *\nDisallow: /café\n".encode("iso-8859-1")
    robots = parse(latin.decode("iso-8859-1"), RFC9309)
    fields = encode(entry(robots=robots), fetched(latin, "iso-8859-1"), "rfc9309")
    assert fields[b"charset"] == b"iso-8859-1"
    back = read(fields)
    assert back.robots is not None
    assert not back.robots.allowed("http://a.test/caf%C3%A9", "bot")
    assert back.robots.allowed("http://a.test/caf%E9", "bot")
    # Without it, RFC 9309 reads UTF-8: the byte E9 is another path.
    del fields[b"charset"]
    utf8 = read(fields).robots
    assert utf8 is not None and utf8.allowed("http://a.test/caf%C3%A9", "bot")
    assert not utf8.allowed("http://a.test/caf%E9", "bot")


def test_a_leading_byte_order_mark_hides_no_group() -> None:
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /\n"
    back = read(encode(entry(robots=parse(body)), fetched(body, None), "rfc9309"))
    assert back.robots is not None and not back.robots.allowed("http://a.test/x", "bot")


def test_an_empty_robots_txt_allows_all_and_keeps_its_empty_body() -> None:
    fields = encode(entry(robots=parse(b"")), fetched(b""), "rfc9309")
    assert fields[b"body"] == b""
    back = read(fields)
    assert back.robots is not None and back.outcome == Outcome.PARSED
    assert decisions(back.robots) == [True] * len(PATHS)


@pytest.mark.parametrize(
    ("outcome", "allowed"), [(Outcome.ALLOW_ALL, True), (Outcome.DISALLOW_ALL, False)]
)
@pytest.mark.parametrize("name", SYNTAXES)
def test_allow_all_and_disallow_all_are_stored_without_a_body(
    outcome: Outcome, allowed: bool, name: str
) -> None:
    syntax = SYNTAXES[name]
    robots = (RobotsTxt.allow_all if allowed else RobotsTxt.disallow_all)(syntax)
    # The response's body (a 404 page, a 403 page) is never the rules.
    fields = encode(entry(robots=robots, outcome=outcome, status=403), fetched(), name)
    assert b"body" not in fields and fields[b"outcome"] == outcome.value.encode()
    back = decode(fields, syntax, name, MAX_SIZE)
    assert back is not None and back.robots is not None
    assert back.robots.syntax == syntax and back.outcome == outcome and back.status == 403
    assert decisions(back.robots) == [allowed] * len(PATHS)


def test_an_outage_keeps_its_failures_start_and_next_retry() -> None:
    outage = RobotsEntry(
        robots=None,
        fetched_at=FETCHED_AT,
        expires_at=FETCHED_AT + 8.0,
        status=503,
        url="http://a.test/robots.txt",
        outcome=Outcome.UNREACHABLE,
        failures=4,
        outage_since=FETCHED_AT - 7.5,
    )
    failed = Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")
    fields = encode(outage, failed, "rfc9309")
    assert b"body" not in fields and fields[b"outcome"] == b"unreachable"
    back = read(fields)
    assert back == outage  # robots None: every field compares


def test_rules_kept_through_a_failed_download_keep_the_stored_copy_s_bytes() -> None:
    # A refetch failed (503): the worker keeps the rules it had, with the outage's state, but
    # has no bytes of them; the fleet's hash of that copy has.
    stored = encode(entry(), fetched(), "rfc9309")
    kept = entry(expires_at=EXPIRES_AT + 60, failures=2, outage_since=EXPIRES_AT)
    failed = Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")
    fields = encode(kept, failed, "rfc9309", stored)
    assert fields[b"body"] == BODY and fields[b"charset"] == b"utf-8"
    back = read(fields)
    assert back.robots is not None and decisions(back.robots) == decisions(parse(BODY))
    assert (back.outcome, back.status, back.fetched_at) == (Outcome.PARSED, 200, FETCHED_AT)
    assert (back.expires_at, back.failures, back.outage_since) == (
        EXPIRES_AT + 60,
        2,
        EXPIRES_AT,
    )


@pytest.mark.parametrize(
    "stored",
    [
        None,  # nothing in Redis (FLUSHALL)
        encode(entry(robots=parse(BODY, GYM2008)), fetched(), "gym2008"),  # another syntax's
        encode(  # an outage
            entry(robots=None, outcome=Outcome.UNREACHABLE, failures=1), None, "rfc9309"
        ),
    ],
    ids=["none", "other-syntax", "outage"],
)
def test_rules_kept_through_a_failed_download_without_their_bytes_are_an_outage(
    stored: dict[bytes, bytes] | None,
) -> None:
    kept = entry(expires_at=EXPIRES_AT + 60, failures=2, outage_since=EXPIRES_AT)
    failed = Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503")
    back = read(encode(kept, failed, "rfc9309", stored))
    # Never rules parsed from no bytes, which would allow everything.
    assert back.robots is None and back.outcome == Outcome.UNREACHABLE
    assert (back.status, back.failures, back.outage_since) == (503, 2, EXPIRES_AT)
    assert back.expires_at == EXPIRES_AT + 60


def test_a_parsed_hash_without_its_body_is_unreadable_not_allow_all() -> None:
    with pytest.raises(Unreadable, match="KeyError"):
        read(good_fields(body=None))


def test_an_entry_with_nothing_optional_writes_only_what_it_has() -> None:
    bare = RobotsEntry(
        robots=None, fetched_at=1.0, expires_at=2.0, outcome=Outcome.UNREACHABLE, failures=1
    )
    fields = encode(bare, None, "mk1996")
    assert fields == {
        b"syntax": b"mk1996",
        b"outcome": b"unreachable",
        b"fetched_at": b"1.0",
        b"expires_at": b"2.0",
        b"failures": b"1",
    }
    assert all(isinstance(v, bytes) for v in fields.values())  # a Redis hash's values
    assert decode(fields, MK1996, "mk1996", MAX_SIZE) == bare


def test_a_url_that_is_not_ascii_comes_back() -> None:
    url = "http://exämple.test/robots.txt?q=ü"
    assert read(encode(entry(url=url), fetched(), "rfc9309")).url == url


def test_times_come_back_to_the_last_bit() -> None:
    awkward = 1_700_000_000.1 + 2**-20
    fields = encode(entry(fetched_at=awkward, expires_at=awkward + 0.1), fetched(), "rfc9309")
    back = read(fields)
    assert back.fetched_at == awkward and back.expires_at == awkward + 0.1
    assert {b"fetched_at", b"expires_at"} <= CLOCK_FIELDS


# -- another syntax, damaged fields, sizes --------------------------------------------------


@pytest.mark.parametrize("written", ["gym2008", "mk1996"])
def test_a_hash_of_another_syntax_is_no_entry(written: str) -> None:
    fields = encode(entry(robots=parse(BODY, SYNTAXES[written])), fetched(), written)
    assert decode(fields, RFC9309, "rfc9309", MAX_SIZE) is None
    assert decode(fields, SYNTAXES[written], written, MAX_SIZE) is not None


@pytest.mark.parametrize("field", ["syntax", "outcome", "fetched_at", "expires_at"])
def test_a_hash_missing_a_required_field_is_unreadable(field: str) -> None:
    with pytest.raises(Unreadable, match="KeyError"):
        read(good_fields(**{field: None}))


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("outcome", b"garbage", "ValueError"),
        ("outcome", b"", "ValueError"),
        ("outcome", b"redirect", "never stored"),  # an Outcome, but never an entry's
        ("syntax", b"\xff\xfe", "UnicodeDecodeError"),
        ("fetched_at", b"soon", "ValueError"),
        ("expires_at", b"1.7e", "ValueError"),  # a number cut short
        ("expires_at", b"", "ValueError"),
        ("status", b"two hundred", "ValueError"),
        ("status", b"9" * 5000, "ValueError"),  # longer than int() reads
        ("failures", b"\x00", "ValueError"),
        ("outage_since", b"yesterday", "ValueError"),
        ("charset", b"\xff", "UnicodeDecodeError"),
        ("charset", b"utf\x008", "ValueError"),  # codecs.lookup refuses a NUL
    ],
)
def test_a_damaged_field_is_unreadable_never_another_error(
    field: str, value: bytes, error: str
) -> None:
    with pytest.raises(Unreadable, match=error) as raised:
        read(good_fields(**{field: value}))
    assert isinstance(raised.value, ValueError)  # what the store's callers catch
    assert raised.value.__cause__ is not None  # the error it stands for, kept


@pytest.mark.parametrize("field", ["fetched_at", "expires_at", "outage_since"])
@pytest.mark.parametrize("value", [b"nan", b"inf", b"-inf", b"1e400"])
def test_a_time_that_is_no_moment_is_unreadable(field: str, value: bytes) -> None:
    # float() reads these; an entry expiring at NaN would never expire (now >= nan is false),
    # an outage begun at NaN never reach its end.
    with pytest.raises(Unreadable, match="not finite"):
        read(good_fields(**{field: value}))


def test_optional_fields_may_be_missing() -> None:
    back = read(good_fields(status=None, url=None, charset=None, failures=None, outage_since=None))
    assert (back.status, back.url, back.failures, back.outage_since) == (None, None, 0, None)
    assert back.robots is not None and decisions(back.robots) == decisions(parse(BODY))


def test_fields_that_mean_nothing_here_are_ignored() -> None:
    back = read(good_fields(extra=b"\xff" * 10, v=b"999"))  # the store checks v, not decode
    assert back.robots is not None and decisions(back.robots) == decisions(parse(BODY))


def test_a_url_of_bytes_that_are_not_utf8_is_replaced_not_refused() -> None:
    back = read(good_fields(url=b"http://a.test/\xff/robots.txt"))
    assert back.url == "http://a.test/\ufffd/robots.txt"


def test_an_unknown_charset_reads_the_body_as_utf8() -> None:
    back = read(good_fields(charset=b"no-such-charset"))
    assert back.robots is not None and decisions(back.robots) == decisions(parse(BODY))


@pytest.mark.parametrize(
    "body",
    [
        bytes(range(256)) * 4,
        b"\x00" * 4096,
        b"User-agent: *\nDisallow: /" + b"a" * 100_000,  # one long line
        BODY[: BODY.index(b"/private")] + "/é".encode()[:2],  # cut inside a character
        b"\xff\xfe" + "User-agent: *\nDisallow: /\n".encode("utf-16-le"),
    ],
    ids=["all-bytes", "nuls", "long-line", "cut-character", "utf-16"],
)
def test_any_body_parses_without_an_error(body: bytes) -> None:
    back = read(good_fields(body=body))
    assert back.robots is not None
    assert back.robots.syntax == RFC9309


def test_a_cut_body_keeps_the_rules_before_the_cut() -> None:
    back = read(good_fields(body=BODY[: BODY.index(b"Allow: /private/open")]))
    assert back.robots is not None
    assert not back.robots.allowed("http://a.test/private/open", "bot")  # its Allow was cut
    assert not back.robots.allowed("http://a.test/x.pdf", "bot")


def test_a_body_over_the_reader_s_cap_is_read_up_to_it() -> None:
    head = b"User-agent: *\nDisallow: /first\n"
    body = head + b"#" * 1000 + b"\nDisallow: /last\n"
    back = read(good_fields(body=body), max_size=len(head) + 1000)
    assert back.robots is not None
    assert not back.robots.allowed("http://a.test/first", "bot")
    assert back.robots.allowed("http://a.test/last", "bot")  # beyond the cap: never read
    whole = read(good_fields(body=body), max_size=len(body)).robots
    assert whole is not None and not whole.allowed("http://a.test/last", "bot")


# -- through a real redis-server ---------------------------------------------------------------


@pytest.mark.needs_asyncio  # the store: redis.asyncio
@scenario
async def test_every_kind_of_entry_comes_back_through_redis(redis_server: RedisServer) -> None:
    store = RedisOriginCache(redis_server.url, "c")
    outage = RobotsEntry(
        robots=None,
        fetched_at=FETCHED_AT,
        expires_at=FETCHED_AT + 30,
        status=503,
        outcome=Outcome.UNREACHABLE,
        failures=2,
        outage_since=FETCHED_AT - 60,
    )
    kinds = {
        "parsed": (entry(), fetched(b"\xef\xbb\xbf" + BODY + b"\x00\xff")),
        "allow-all": (entry(robots=RobotsTxt.allow_all(), outcome=Outcome.ALLOW_ALL), None),
        "disallow-all": (
            entry(robots=RobotsTxt.disallow_all(), outcome=Outcome.DISALLOW_ALL, status=401),
            None,
        ),
        "unreachable": (outage, Fetched(outcome=Outcome.UNREACHABLE, status=503)),
    }
    for name, (original, result) in kinds.items():
        origin = f"http://{name}.test:80"
        written = encode(original, result, "rfc9309")
        await store.store(origin, written, 60)
        loaded = await store.load(origin)
        assert loaded is not None
        assert loaded[b"v"] == FORMAT_VERSION
        # Every field but the times byte for byte (the body's NUL and 0xFF too); the times
        # went to Redis's clock and back to this one (the same machine: the same time, give
        # or take the calls' latency).
        assert {k: v for k, v in loaded.items() if k not in CLOCK_FIELDS | {b"v"}} == {
            k: v for k, v in written.items() if k not in CLOCK_FIELDS
        }
        assert loaded.keys() & CLOCK_FIELDS == written.keys() & CLOCK_FIELDS
        back = read(loaded)
        assert back.outcome == original.outcome and back.failures == original.failures
        assert abs(back.expires_at - original.expires_at) < 5
        assert abs(back.fetched_at - original.fetched_at) < 5
        if original.outage_since is not None:
            assert back.outage_since is not None
            assert abs(back.outage_since - original.outage_since) < 5
        if original.robots is None:
            assert back.robots is None
        else:
            assert back.robots is not None
            assert decisions(back.robots) == decisions(original.robots)
    await store.close()


@pytest.mark.needs_asyncio  # the store: redis.asyncio
@scenario
async def test_a_hash_of_another_format_version_is_not_read(redis_server: RedisServer) -> None:
    store = RedisOriginCache(redis_server.url, "c")
    origin = "http://a.test:80"
    await store.store(origin, good_fields(), 60)
    key = store.key("robots", origin)
    for version in (b"1", b"3", b"", b"\xff"):
        redis_server.client().hset(key, "v", version)
        assert await store.load(origin) is None  # ignored: fetched again
    redis_server.client().hdel(key, "v")
    assert await store.load(origin) is None  # no version: none of this format
    redis_server.client().hset(key, "v", FORMAT_VERSION)
    assert await store.load(origin) is not None
    await store.close()


@pytest.mark.needs_asyncio  # the store: redis.asyncio
@scenario
async def test_a_damaged_time_in_redis_reaches_decode_as_it_is(redis_server: RedisServer) -> None:
    store = RedisOriginCache(redis_server.url, "c")
    origin = "http://a.test:80"
    await store.store(origin, good_fields(), 60)
    redis_server.client().hset(store.key("robots", origin), "expires_at", "tomorrow")
    loaded = await store.load(origin)
    assert loaded is not None and loaded[b"expires_at"] == b"tomorrow"  # not converted
    assert float(loaded[b"fetched_at"]) == pytest.approx(FETCHED_AT, abs=5)  # the others are
    with pytest.raises(Unreadable, match="ValueError"):
        read(loaded)
    await store.close()
