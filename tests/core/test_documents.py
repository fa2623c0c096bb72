"""The per-origin document kinds (scrapy_rerp.core.documents): where an origin's copy is, what an
answer means, and an origin service of the tdmrep.json kind, with the fakes of test_origins."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace

import pytest

from scrapy_rerp.cache import FailoverCache, MemoryOriginCache
from scrapy_rerp.core.admission import ParkingKey, Purpose, Waiting
from scrapy_rerp.core.body import Body
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators
from scrapy_rerp.core.documents import (
    NO_TDMREP_FILE,
    ROBOTS_TXT_STATS,
    TDMREP_STATS,
    DocumentStats,
    robots_txt,
    tdmrep_json,
)
from scrapy_rerp.core.origins import WAIT, Claim, OriginService
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.engine import RFC9309, TdmRepFile, parse_tdmrep
from tests.support import AsyncioRuntime, Stats
from tests.support.scenarios import scenario

ORIGIN = "http://a.test:80"
URL = "http://a.test/page"
FILE = b'[{"location": "/r/*", "tdm-reservation": 1}]'


def body(data: bytes, charset: str | None = None) -> Body:
    return Body(data=data, charset=charset, truncated=False)


@pytest.mark.parametrize(
    ("url", "robots", "tdmrep"),
    [
        ("http://a.test/x?q", "http://a.test/robots.txt", "http://a.test/.well-known/tdmrep.json"),
        (
            "https://u:p@b.test:8443/x",
            "https://b.test:8443/robots.txt",
            "https://b.test:8443/.well-known/tdmrep.json",
        ),
    ],
)
def test_each_kind_names_the_url_of_an_origin_s_copy(url: str, robots: str, tdmrep: str) -> None:
    assert robots_txt(RFC9309).url_of(url) == robots
    assert tdmrep_json().url_of(url) == tdmrep


def test_the_tdmrep_kind_reads_a_body_as_json_whatever_its_charset() -> None:
    kind = tdmrep_json()
    file = kind.parse(body(FILE, charset="iso-8859-1"))
    assert file == parse_tdmrep(FILE)
    assert file.valid and file.reservation("/r/x") is not None


@pytest.mark.parametrize("data", [b"", b"not json", b'{"location": "/"}', b"[{", b"\xff\xfe["])
def test_a_tdmrep_body_that_is_no_json_array_is_a_file_reserving_nothing(data: bytes) -> None:
    file = tdmrep_json().parse(body(data))
    assert isinstance(file, TdmRepFile)
    assert not file.valid and file.entries == () and file.warnings
    assert file.reservation("/r/x") is None


def test_no_tdmrep_file_reserves_nothing_and_has_no_legacy_reading() -> None:
    kind = tdmrep_json()
    assert kind.absent() is NO_TDMREP_FILE
    assert NO_TDMREP_FILE.entries == () and NO_TDMREP_FILE.reservation("/anything") is None
    assert kind.refused is None  # a 401/403 reads as any 4xx: no file
    assert kind.stats.request_count == "robotstxt/tdmrep/request_count"
    assert (kind.purpose, kind.token, kind.stored) == (Waiting("tdmrep.json"), "tdmrep", False)


def test_the_robots_txt_kind_is_robots_txt_as_before() -> None:
    kind = robots_txt(RFC9309)
    rules = kind.parse(body(b"User-agent: *\nDisallow: /p\n"))
    assert not rules.allowed("http://a.test/p", "bot") and rules.allowed("http://a.test/q", "bot")
    assert kind.absent().allowed("http://a.test/p", "bot")
    assert kind.refused is not None and not kind.refused().allowed("http://a.test/q", "bot")
    assert kind.stats.request_count == "robotstxt/request_count"
    assert (kind.purpose, kind.token, kind.stored) == (Purpose.ROBOTS_TXT, "robots", True)


def test_the_stat_names_written_out_are_those_of_the_rule_for_any_kind() -> None:
    # Written out so that a reader finds each in the source; a kind from elsewhere takes the
    # same names under its own prefix.
    # (robots.txt is always used: no file_invalid.)
    assert ROBOTS_TXT_STATS == replace(DocumentStats.under("robotstxt"), file_invalid=None)
    assert TDMREP_STATS == DocumentStats.under("robotstxt/tdmrep")
    assert TDMREP_STATS.disallow_all.format(403) == "robotstxt/tdmrep/disallow_all/403"
    assert DocumentStats.under("robotstxt/x").unreachable_stale_copy_kept == (
        "robotstxt/x/unreachable/stale_copy_kept"
    )


class Waiters:
    """Requests waiting per key, as numbers."""

    def __init__(self) -> None:
        self.waiting: Counter[ParkingKey] = Counter()
        self.released: list[int] = []

    def count(self, key: ParkingKey) -> int:
        return self.waiting[key]

    def release(self, key: ParkingKey) -> int:
        self.released.append(self.waiting.pop(key, 0))
        return self.released[-1]

    def drop(self, key: ParkingKey, reason: object, message: str) -> int:
        raise AssertionError(f"nothing is dropped here: {message}")


class Listener:
    async def before_sharing(self, origin: str, document: object, trigger: object) -> None:
        pass

    async def rules_known(self, origin: str, *args: object) -> None:
        pass

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        return 0.05


class Transport:
    def __init__(self, *answers: Fetched) -> None:
        self.answers = list(answers)
        self.urls: list[str] = []

    async def fetch(self, url: str, origin: str, validators: Validators | None = None) -> Fetched:
        self.urls.append(url)
        await asyncio.sleep(0.001)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class StoreOfRobotsTxtOnly:
    """A RERP_STORE that fails the test if asked anything."""

    fleet = False

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        raise AssertionError("tdmrep.json is not kept by RERP_STORE")

    async def publish(self, *args: object) -> RobotsEntry:
        raise AssertionError("tdmrep.json is not kept by RERP_STORE")


def tdmrep_service(transport: Transport) -> tuple[OriginService, Waiters, Stats]:
    settings = RerpSettings.from_settings(
        {"RERP_UNREACHABLE_MAX_WAIT": 0.5, "RERP_USAGE": "train-ai"}, require_obey=False
    )
    stats, waiters, listener = Stats(), Waiters(), Listener()
    service = OriginService(
        settings,
        FailoverCache(
            MemoryOriginCache(100), 100, stats=stats, on_evicted=print, on_failover=print
        ),
        transport,
        waiters=waiters,
        listener=listener,
        runtime=AsyncioRuntime(),
        stats=stats,
        store=StoreOfRobotsTxtOnly(),
        kind=tdmrep_json(),
    )
    return service, waiters, stats


@scenario
async def test_a_tdmrep_service_parks_under_its_purpose_and_counts_under_its_prefix() -> None:
    file = parse_tdmrep(FILE)
    transport = Transport(
        Fetched(outcome=Outcome.UNREACHABLE, status=503, reason="HTTP 503"),
        Fetched(
            outcome=Outcome.PARSED,
            robots=file,
            status=200,
            url="http://a.test/.well-known/tdmrep.json",
        ),
    )
    service, waiters, stats = tdmrep_service(transport)
    key = ParkingKey(ORIGIN, Waiting("tdmrep.json"))
    assert str(key) == f"{ORIGIN} (tdmrep.json)"
    assert service.rules(ORIGIN, URL, "trigger") is WAIT
    waiters.waiting[key] += 2
    service.wanted(ORIGIN, URL, "trigger")
    for _ in range(200):
        if not service.busy(ORIGIN):
            break
        await asyncio.sleep(0.01)
    assert transport.urls == ["http://a.test/.well-known/tdmrep.json"] * 2
    assert waiters.released == [2] and waiters.waiting[key] == 0
    assert service.rules(ORIGIN, URL, "trigger") is file
    assert stats.get_value("robotstxt/tdmrep/unreachable/count") == 1
    assert stats.get_value("robotstxt/tdmrep/retry_count") == 1
    assert stats.get_value("robotstxt/retry_count") is None
