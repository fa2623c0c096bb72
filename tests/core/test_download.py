"""One download's course (core/download), driven with plain data: each answer's status and
Location in, the next hop or the end out. The drivers (the crawl's transport, the command
line's robots.txt, page and tdmrep.json downloads) are held to the same decisions against
loopback servers in tests/crawl/test_transport.py, tests/crawl/test_middleware.py,
tests/cli/test_download.py and tests/cli/test_page.py."""

from __future__ import annotations

import pytest

from scrapy_rerp.core.data import Outcome, Validators
from scrapy_rerp.core.download import (
    INVALID,
    LIMIT,
    PAGE_MAX_REDIRECTS,
    PAGE_REDIRECTS,
    Course,
    Ended,
    Hop,
)

ROBOTS = "http://h.test/robots.txt"


def course(url: str = ROBOTS, **kwargs: object) -> Course:
    settings: dict[str, object] = {"max_redirects": 5, "max_size": 100, **kwargs}
    return Course(url, **settings)  # type: ignore[arg-type]


def ended(step: Hop | Ended) -> Ended:
    assert isinstance(step, Ended), step
    return step


@pytest.mark.parametrize(
    ("status", "location", "legacy", "outcome", "reason"),
    [
        (200, None, False, Outcome.PARSED, "HTTP 200"),
        (204, "/x", False, Outcome.PARSED, "HTTP 204"),
        (404, None, False, Outcome.ALLOW_ALL, "HTTP 404"),
        (403, None, False, Outcome.ALLOW_ALL, "HTTP 403"),
        (403, None, True, Outcome.DISALLOW_ALL, "HTTP 403"),
        (429, None, False, Outcome.UNREACHABLE, "HTTP 429"),
        (503, None, False, Outcome.UNREACHABLE, "HTTP 503"),
        (999, None, False, Outcome.UNREACHABLE, "HTTP 999"),
        (301, None, False, Outcome.ALLOW_ALL, "301 without Location"),
        (302, "", False, Outcome.ALLOW_ALL, "302 without Location"),
        (304, None, False, Outcome.ALLOW_ALL, "304 without Location"),  # not conditional
    ],
)
def test_an_answer_ends_with_the_ladder_s_outcome(
    status: int, location: str | None, legacy: bool, outcome: Outcome, reason: str
) -> None:
    end = ended(course(legacy=legacy).answer(status, location))
    assert (end.outcome, end.reason, end.status, end.url) == (outcome, reason, status, ROBOTS)
    assert end.redirect is None and not end.not_modified


def test_redirects_are_followed_up_to_the_limit_then_allow_all() -> None:
    download = course()
    assert download.hop == Hop(ROBOTS, 0)
    for number in range(1, 6):
        hop = download.answer(301, f"/r{number}")
        assert hop == Hop(f"http://h.test/r{number}", number)
    end = ended(download.answer(307, b"/r6"))
    assert (end.outcome, end.reason, end.redirect) == (
        Outcome.ALLOW_ALL,
        "more than 5 redirects",
        LIMIT,
    )
    assert (end.url, end.status) == ("http://h.test/r5", 307)
    assert download.redirects == [f"http://h.test/r{n}" for n in range(1, 6)]


def test_no_redirect_with_a_limit_of_zero() -> None:
    end = ended(course(max_redirects=0).answer(302, "/elsewhere"))
    assert end.redirect == LIMIT and end.reason == "more than 0 redirects"


def test_a_redirect_goes_to_any_host_resolved_against_the_answer_s_url() -> None:
    download = course()
    # The URL the driver's client wrote (Scrapy escapes a space) is the base.
    hop = download.answer(301, "rules.txt", url="http://h.test/a%20b/robots.txt")
    assert hop == Hop("http://h.test/a%20b/rules.txt", 1)
    assert download.answer(302, "https://cdn.test:8443/r") == Hop("https://cdn.test:8443/r", 2)
    assert download.answer(303, "//other.test/r") == Hop("https://other.test/r", 3)


def test_a_location_is_read_as_utf8() -> None:
    hop = course().answer(301, "http://\u00e9.test/r".encode())
    assert isinstance(hop, Hop) and hop.url == "http://\u00e9.test/r"


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("file:///etc/passwd", "file scheme: only http and https are followed"),
        ("ftp://h.test/robots.txt", "ftp scheme: only http and https are followed"),
        ("http://[::1", "malformed URL (Invalid IPv6 URL)"),
        ("http://h.test:99999/", "malformed URL (Port out of range 0-65535)"),
        ("https://:80/robots.txt", "no host"),
    ],
)
def test_a_redirect_that_cannot_be_followed_is_allow_all(location: str, why: str) -> None:
    end = ended(course().answer(301, location))
    assert (end.outcome, end.redirect) == (Outcome.ALLOW_ALL, INVALID)
    assert end.reason == f"bad redirect target {location!r}: {why}"
    assert (end.url, end.status) == (ROBOTS, 301)


def test_a_redirect_with_credentials_fails_and_keeps_them_secret() -> None:
    download = course()
    end = ended(download.answer(302, "http://user:s3cret@h.test/elsewhere.txt"))
    assert (end.outcome, end.redirect) == (Outcome.ALLOW_ALL, INVALID)  # not unreachable
    assert end.reason == (
        "bad redirect target 'http://***@h.test/elsewhere.txt': user:password@ in the URL: "
        "credentials are not followed"
    )
    assert "s3cret" not in repr(end) and download.redirects == []


def test_a_target_the_driver_cannot_request_fails_as_a_bad_redirect() -> None:
    download = course()
    download.answer(301, "/moved")
    end = download.refused("the client refuses it")
    assert (end.outcome, end.redirect, end.status) == (Outcome.ALLOW_ALL, INVALID, None)
    assert end.reason == "bad redirect target 'http://h.test/moved': the client refuses it"


def test_a_long_target_is_quoted_up_to_200_characters() -> None:
    end = ended(course().answer(301, "mailto:" + "x" * 500))
    assert end.reason == f"bad redirect target {'mailto:' + 'x' * 193!r}: " + (
        "mailto scheme: only http and https are followed"
    )


def test_the_request_for_a_stored_copy_s_url_is_conditional_and_its_304_keeps_the_copy() -> None:
    validators = Validators("http://h.test/rules.txt", {b"If-None-Match": b'"v1"'})
    download = course(validators=validators)
    assert download.hop.headers == {}  # robots.txt itself: not the copy's URL
    hop = download.answer(301, "/rules.txt")
    assert isinstance(hop, Hop) and hop.headers == {b"If-None-Match": b'"v1"'}
    end = ended(download.answer(304, None))
    assert (end.outcome, end.not_modified, end.reason) == (
        Outcome.UNREACHABLE,
        True,
        "HTTP 304",
    )


def test_a_304_with_a_location_to_a_conditional_request_still_keeps_the_copy() -> None:
    download = course(validators=Validators(ROBOTS, {b"If-Modified-Since": b"x"}))
    assert ended(download.answer(304, "/elsewhere")).not_modified


def test_a_page_follows_the_redirects_scrapy_follows_as_many_times() -> None:
    page = course("http://h.test/p", max_redirects=PAGE_MAX_REDIRECTS, redirects=PAGE_REDIRECTS)
    for status in sorted(PAGE_REDIRECTS):
        assert isinstance(page.answer(status, "/next"), Hop)
    end = ended(page.answer(300, "/next"))  # Multiple Choices: Scrapy leaves it to the spider
    assert end.redirect is None and end.status == 300
    assert PAGE_MAX_REDIRECTS == 20


def test_a_page_s_redirect_limit_is_scrapy_s() -> None:
    from scrapy.settings.default_settings import REDIRECT_MAX_TIMES

    assert PAGE_MAX_REDIRECTS == REDIRECT_MAX_TIMES
    page = course(max_redirects=PAGE_MAX_REDIRECTS, redirects=PAGE_REDIRECTS)
    hops = [page.answer(302, f"/r{n}") for n in range(PAGE_MAX_REDIRECTS + 1)]
    assert all(isinstance(hop, Hop) for hop in hops[:-1])
    assert ended(hops[-1]).redirect == LIMIT


def test_the_body_is_cut_past_the_cap_and_each_hop_counts_anew() -> None:
    download = course(max_size=100)
    assert download.received(60) is False
    assert download.received(40) is False  # exactly the cap: whole
    assert download.received(1) is True and download.cut
    assert download.received(10) is True  # stays cut
    download.answer(301, "/next")
    assert download.cut is False
    assert download.received(100) is False
    assert download.received(0) is False
