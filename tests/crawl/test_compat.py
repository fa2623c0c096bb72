"""What scrapy_rerp reads of Scrapy beyond its published API: header values, the engine."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.http import Headers
from scrapy.utils.test import get_crawler

from scrapy_rerp.crawl import compat
from scrapy_rerp.crawl.compat import (
    engine_closing,
    engine_of,
    header_key,
    header_value,
    header_values,
    scheduler_of,
    stats_of,
    user_agent_header,
)

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

HEADERS = [
    {},
    {"X-Robots-Tag": "noindex"},
    {"x-robots-tag": ["noindex", "googlebot: nofollow"], "Content-Type": "text/html"},
    {"X-ROBOTS-TAG": [b"none", b""], "robots-tag": "noai"},
    {"content-type": ["text/plain", "text/html; charset=latin-1"], "User-Agent": "bot/1"},
    {"user-agent": "\u00e9bot"},
]
NAMES = ["X-Robots-Tag", "x-robots-tag", "Robots-Tag", "Content-Type", "User-Agent", "Date"]


def test_the_headers_of_this_scrapy_are_read_as_a_dict() -> None:
    # Every supported Scrapy keeps Headers as a dict of normalized names; if one stops, the
    # public methods take over (correct, slower), and this says so.
    assert header_values is dict.get


@pytest.mark.parametrize("read", [dict.get, compat._values_by_getlist])
@pytest.mark.parametrize("given", HEADERS)
def test_header_values_are_those_of_getlist_and_get(read: object, given: dict) -> None:
    headers = Headers(given)
    for name in NAMES:
        key = header_key(name)
        values = read(headers, key)  # type: ignore[operator]
        assert (values or []) == headers.getlist(name), name
        assert values is None or isinstance(values, list)
    for name in NAMES:
        assert header_value(headers, header_key(name)) == headers.get(name), name


def test_the_user_agent_header_is_that_of_get() -> None:
    for headers in ({}, {"user-agent": "bot/1"}, {"User-Agent": ["a/1", "b/2"]}):
        request = Request("http://h/", headers=headers)
        assert user_agent_header(request) == request.headers.get("User-Agent")
    assert user_agent_header(Request("http://h/", headers={"USER-AGENT": "x"})) == b"x"


def test_a_crawler_without_an_engine_is_closing_and_has_no_scheduler() -> None:
    # Scrapy 2.19 raises on reading Crawler.engine before it is set (None before 2.19): a
    # timer of the parking lot that fires then must get an answer, not an exception.
    crawler = get_crawler()
    assert engine_of(crawler) is None
    assert engine_closing(crawler) is True
    assert scheduler_of(crawler) is None


def test_a_crawler_s_stats_are_bound_once_its_crawl_is_set_up() -> None:
    crawler = get_crawler()
    stats = stats_of(crawler)
    assert stats is crawler.stats
    stats.inc_value("robotstxt/x", 2)
    stats.max_value("robotstxt/y", 5)
    assert crawler.stats.get_value("robotstxt/x") == 2
    assert crawler.stats.get_value("robotstxt/y") == 5


def test_a_crawler_without_stats_yet_is_a_clear_error() -> None:
    # Scrapy 2.19 raises on reading Crawler.stats before the crawl starts; older releases answer
    # None: either way, what the components would count into is named, not an AttributeError.
    from scrapy import Spider
    from scrapy.crawler import Crawler

    crawler = Crawler(Spider)
    with pytest.raises(RuntimeError, match="no stats collector yet"):
        stats_of(crawler)


def test_a_slot_s_timer_counts_while_it_is_active() -> None:
    from types import SimpleNamespace

    from scrapy_rerp.crawl.compat import slot_latercall

    class Timer:
        def __init__(self, active: bool) -> None:
            self._active = active

        def active(self) -> bool:
            return self._active

    assert slot_latercall(SimpleNamespace(latercall=None)) is False  # type: ignore[arg-type]
    # Scrapy 2.13 leaves a fired timer on the slot; later releases set None once it fires.
    assert slot_latercall(SimpleNamespace(latercall=Timer(False))) is False  # type: ignore[arg-type]
    assert slot_latercall(SimpleNamespace(latercall=Timer(True))) is True  # type: ignore[arg-type]
    assert slot_latercall(SimpleNamespace(latercall=object())) is True  # type: ignore[arg-type]


def test_send_refusable_calls_every_handler_as_scrapy_s_send_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each handler gets the arguments it names, one that fails is logged as Scrapy logs it and
    the next still runs, and the first refusal is raised once all have run: what
    ``send_catch_log`` would give, without its list of results."""
    from pydispatch import dispatcher
    from scrapy.exceptions import IgnoreRequest

    crawler = get_crawler()
    signal = object()
    heard: list[tuple[str, dict[str, object]]] = []

    def by_name(request: object) -> None:
        heard.append(("by_name", {"request": request}))

    def failing(**arguments: object) -> None:
        heard.append(("failing", arguments))
        raise ValueError("a handler's own bug")

    def refusing(request: object, decision: object) -> None:
        heard.append(("refusing", {"request": request, "decision": decision}))
        raise IgnoreRequest("first refusal")

    def refusing_too(request: object) -> None:
        heard.append(("refusing_too", {"request": request}))
        raise IgnoreRequest("second refusal")

    def from_any_sender(decision: object) -> None:
        heard.append(("from_any_sender", {"decision": decision}))

    for handler in (by_name, failing, refusing, refusing_too):
        crawler.signals.connect(handler, signal=signal)
    dispatcher.connect(from_any_sender, signal=signal, sender=dispatcher.Any)
    try:
        with caplog.at_level("ERROR"), pytest.raises(IgnoreRequest, match="first refusal"):
            compat.send_refusable(crawler, signal, request="r", decision="d")
        logged = [(r.name, r.getMessage(), r.exc_info) for r in caplog.records]
        ours, heard[:] = list(heard), []
        crawler.signals.send_catch_log(signal, request="r", decision="d")
    finally:
        dispatcher.disconnect(from_any_sender, signal=signal, sender=dispatcher.Any)
    assert ours == heard
    assert [name for name, _ in ours] == [
        "by_name",
        "failing",
        "refusing",
        "refusing_too",
        "from_any_sender",
    ]
    sender = crawler.signals.sender
    assert ours[1] == (
        "failing",
        {"request": "r", "decision": "d", "signal": signal, "sender": sender},
    )
    # The failure logged by Scrapy's logger, with its traceback; the refusals, the caller's to
    # tell, not at all.
    [(name, message, exc_info)] = logged
    assert (name, message) == ("scrapy.utils.signal", f"Error caught on signal handler: {failing}")
    assert exc_info is not None and exc_info[0] is ValueError
