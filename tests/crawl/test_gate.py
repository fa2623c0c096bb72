"""The path of one request through ``RobotsGate``, on real parts from Scrapy's ``get_crawler``
(no engine: nothing is downloaded). The crawls through it are tests/crawl/test_middleware.py's."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import pytest
import scrapy
from scrapy.exceptions import IgnoreRequest

from scrapy_rerp.core.admission import ParkingKey, Purpose
from scrapy_rerp.core.data import RobotsEntry
from scrapy_rerp.crawl.assembly import Parts
from scrapy_rerp.crawl.gate import RobotsGate
from scrapy_rerp.engine import RFC9309, parse
from tests.support.parts import build

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

ORIGIN = "http://a.test:80"


GateWith = Callable[[str], RobotsGate]


@pytest.fixture
def gate_with() -> Iterator[GateWith]:
    """A gate whose cache knows ORIGIN's rules; its parts are closed after the test, so that a
    parked request's closing check (a reactor timer) cannot fire in a later test."""
    built: list[Parts] = []

    def factory(robots_txt: str) -> RobotsGate:
        crawler, parts = build({})
        built.append(parts)
        now = time.time()
        entry = RobotsEntry(
            robots=parse(robots_txt, RFC9309), fetched_at=now, expires_at=now + 3600, status=200
        )
        parts.origins.cache.set(ORIGIN, entry)
        return RobotsGate(crawler, parts, lambda request: "MyBot/1.0")

    yield factory
    for parts in built:
        parts.closing()


def test_an_allowed_request_goes_on_and_a_disallowed_one_is_refused_and_counted(
    gate_with: GateWith, caplog: pytest.LogCaptureFixture
) -> None:
    gate = gate_with("User-agent: *\nDisallow: /private\n")
    assert gate.process(scrapy.Request("http://a.test/public")) is None
    with caplog.at_level(logging.DEBUG, logger="scrapy_rerp.robotstxt"):
        with pytest.raises(IgnoreRequest, match="Forbidden by robots.txt"):
            gate.process(scrapy.Request("http://a.test/private/1"))
    assert gate.stats.get_value("robotstxt/forbidden") == 1
    assert "line 2: Disallow: /private" in caplog.text


def test_a_request_of_an_origin_without_rules_waits_for_them(gate_with: GateWith) -> None:
    gate = gate_with("User-agent: *\nAllow: /\n")
    request = scrapy.Request("http://b.test/page")
    assert gate.process(request) is request  # parked: out of the downloader until rules come
    again = scrapy.Request("http://b.test/other")
    assert gate.process(again) is again
    assert gate.lot.count(ParkingKey("http://b.test:80", Purpose.ROBOTS_TXT)) == 2
    assert gate.origins.busy("http://b.test:80") and len(gate.origins) == 1  # one flight
