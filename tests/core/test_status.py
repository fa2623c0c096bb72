"""The status policy as pure functions: every row of the status table
(docs/status-policy.rst), expiry, Retry-After (the one reading of it, for robots.txt and pages),
backoff, and the words for a download that got no answer."""

from __future__ import annotations

import email.utils
import json
import math
import socket
import ssl
import time
import urllib.error

import pytest
from scrapy.http.headers import Headers

from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.status import (
    ALLOW_ALL,
    CONNECTION_REFUSED,
    DISALLOW_ALL,
    DNS_FAILED,
    PARSED,
    REDIRECT,
    TIMED_OUT,
    UNREACHABLE,
    backoff,
    download_failure,
    entry_lifetime,
    lifetime_from_headers,
    retry_after,
    status_outcome,
)

NOW = 1_700_000_000.0


def http_date(seconds: float) -> str:
    return email.utils.formatdate(seconds, usegmt=True)


# -- the status table ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "has_location", "rfc9309", "legacy"),
    [
        # 2xx: the body is parsed
        (200, True, PARSED, PARSED),
        (204, True, PARSED, PARSED),
        (299, True, PARSED, PARSED),
        # 3xx with Location: followed; without: allow all
        (301, True, REDIRECT, REDIRECT),
        (302, True, REDIRECT, REDIRECT),
        (307, True, REDIRECT, REDIRECT),
        (308, True, REDIRECT, REDIRECT),
        (301, False, ALLOW_ALL, ALLOW_ALL),
        (304, False, ALLOW_ALL, ALLOW_ALL),
        # 401/403: allow all by RFC 9309, disallow all by rerp's legacy reading
        (401, True, ALLOW_ALL, DISALLOW_ALL),
        (403, True, ALLOW_ALL, DISALLOW_ALL),
        # other 4xx: allow all
        (400, True, ALLOW_ALL, ALLOW_ALL),
        (404, True, ALLOW_ALL, ALLOW_ALL),
        (410, True, ALLOW_ALL, ALLOW_ALL),
        (451, True, ALLOW_ALL, ALLOW_ALL),
        # 429 and 5xx: unreachable
        (429, True, UNREACHABLE, UNREACHABLE),
        (500, True, UNREACHABLE, UNREACHABLE),
        (503, True, UNREACHABLE, UNREACHABLE),
        (599, True, UNREACHABLE, UNREACHABLE),
        # statuses outside 2xx-5xx: unreachable
        (100, True, UNREACHABLE, UNREACHABLE),
        (600, True, UNREACHABLE, UNREACHABLE),
        (999, True, UNREACHABLE, UNREACHABLE),
    ],
)
def test_status_table(status: int, has_location: bool, rfc9309: str, legacy: str) -> None:
    assert status_outcome(status, has_location=has_location) == rfc9309
    assert status_outcome(status, legacy=True, has_location=has_location) == legacy


# -- expiry -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "lifetime"),
    [
        ({}, None),
        ({"Cache-Control": "max-age=600"}, 600.0),
        ({"Cache-Control": "public, MAX-AGE=60, must-revalidate"}, 60.0),
        ({"Cache-Control": 'max-age="120"'}, 120.0),
        ({"Cache-Control": "no-cache"}, 0.0),
        ({"Cache-Control": "private, no-store"}, 0.0),
        # max-age wins over no-cache and over Expires
        ({"Cache-Control": "no-cache, max-age=30"}, 30.0),
        ({"Cache-Control": "max-age=30", "Expires": http_date(NOW + 999)}, 30.0),
        # an unreadable max-age is ignored, the rest still counts
        ({"Cache-Control": "max-age=soon", "Expires": http_date(NOW + 90)}, 90.0),
        ({"Cache-Control": "public"}, None),
        # Expires, relative to Date (else to now)
        ({"Expires": http_date(NOW + 3600), "Date": http_date(NOW)}, 3600.0),
        ({"Expires": http_date(NOW + 3600), "Date": http_date(NOW + 600)}, 3000.0),
        ({"Expires": http_date(NOW + 100)}, 100.0),
        ({"Expires": http_date(NOW - 100)}, 0.0),
        # an invalid Expires means "already expired" (RFC 9111 5.3)
        ({"Expires": "0"}, 0.0),
        ({"Expires": "tomorrow"}, 0.0),
    ],
)
def test_lifetime_from_headers(headers: dict[str, str], lifetime: float | None) -> None:
    assert lifetime_from_headers(Headers(headers), now=NOW) == lifetime


def test_entry_lifetime_clamps_parsed_files_and_fixes_the_others() -> None:
    settings = RerpSettings(min_lifetime=3600, max_lifetime=86400, lifetime=7200, error_lifetime=60)
    assert entry_lifetime(PARSED, None, settings) == 7200
    assert entry_lifetime(PARSED, 10, settings) == 3600
    assert entry_lifetime(PARSED, 10**9, settings) == 86400
    assert entry_lifetime(PARSED, 5000, settings) == 5000
    for outcome in (ALLOW_ALL, DISALLOW_ALL):
        assert entry_lifetime(outcome, 5000, settings) == 60


# -- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "date", "seconds"),
    [
        # delta-seconds, spaces around them aside
        ("3", None, 3.0),
        ("120", None, 120.0),
        (" 7 ", None, 7.0),
        (" 120 ", None, 120.0),
        # not capped here: backoff and the slow-downs' cool-downs cap it
        ("86400000", None, 86_400_000.0),
        ("9" * 30, None, ladder.LONGEST_RETRY_AFTER),  # ten years: finite, over every cap
        # an HTTP date, against this machine's clock when the answer has no Date...
        (http_date(NOW + 30), None, 30.0),
        (f"  {http_date(NOW + 30)} ", None, 30.0),
        # ...against the server's Date: a crawler whose clock is an hour fast still waits 30 s
        (http_date(NOW + 30 - 3600), http_date(NOW - 3600), 30.0),
        (http_date(NOW + 30), http_date(NOW), 30.0),
        (http_date(NOW + 30), "not a date", 30.0),  # an unreadable Date: this machine's clock
        (http_date(NOW + 30), "", 30.0),
        # No wait a crawler can be held to: None (backoff treats it as no Retry-After at all).
        (None, None, None),
        ("", None, None),
        ("0", None, None),
        ("000", None, None),
        ("-5", None, None),
        ("1.5", None, None),
        ("later", None, None),
        ("soon", None, None),
        ("\xff\xfe", None, None),
        (http_date(NOW - 30), None, None),  # in the past
        (http_date(NOW - 10), http_date(NOW), None),
        (http_date(NOW), http_date(NOW), None),  # now
    ],
)
def test_retry_after(value: str | None, date: str | None, seconds: float | None) -> None:
    fields = {} if value is None else {"Retry-After": value}
    if date is not None:
        fields["Date"] = date
    assert retry_after(Headers(fields), now=NOW) == seconds


def test_retry_after_reads_plain_header_mappings_and_the_clock() -> None:
    # slow_answer gives it a page's headers; any mapping with bytes keys does.
    assert retry_after({b"Retry-After": b"7"}, NOW) == 7.0
    assert retry_after({b"Retry-After": b"\xffx"}, NOW) is None
    # Without ``now``, an HTTP date is read against this machine's clock.
    wait = retry_after(Headers({"Retry-After": http_date(time.time() + 3600)}))
    assert wait is not None and 3590 < wait <= 3600


@pytest.mark.parametrize(
    "value",
    ["0", http_date(NOW - 30), http_date(NOW - 10**9), "later", "-5"],
)
def test_a_retry_after_of_no_wait_backs_off_as_none_does(value: str) -> None:
    # A past date once read as 0 s here; it now reads as None, like "0": the backoff is the same.
    settings = RerpSettings(retry_backoff_base=1.0, retry_backoff_max=60.0)
    wait = retry_after(Headers({"Retry-After": value}), now=NOW)
    assert wait is None
    for failures in range(1, 9):
        assert backoff(failures, wait, settings) == backoff(failures, None, settings)
        assert backoff(failures, wait, settings) == backoff(failures, 0.0, settings)


def test_backoff_doubles_up_to_its_cap() -> None:
    settings = RerpSettings(retry_backoff_base=1.0, retry_backoff_max=60.0)
    assert [backoff(n, None, settings) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff(10**6, None, settings) == 60


def test_backoff_is_never_sooner_than_retry_after() -> None:
    settings = RerpSettings(retry_backoff_base=1.0, retry_backoff_max=60.0)
    assert backoff(1, 0.5, settings) == 1
    assert backoff(1, 30, settings) == 30
    # beyond RERP_RETRY_BACKOFF_MAX: the server's wish wins...
    assert backoff(1, 600, settings) == 600
    # ...up to a day
    assert backoff(1, 10**9, settings) == ladder.RETRY_AFTER_MAX == 24 * 3600
    huge = retry_after(Headers({"Retry-After": "9" * 30}), now=NOW)
    assert backoff(1, huge, settings) == ladder.RETRY_AFTER_MAX


@pytest.mark.parametrize("digits", [11, 400])
def test_a_retry_after_of_many_digits_is_a_long_finite_wait(digits: int) -> None:
    # 309 digits or more would read as infinity, which JSON output cannot carry.
    wait = retry_after(Headers({"Retry-After": "9" * digits}), now=NOW)
    assert wait == ladder.LONGEST_RETRY_AFTER and math.isfinite(wait)
    assert json.loads(json.dumps(wait)) == wait


# -- a download that got no answer ------------------------------------------------------------


class _Refused(ConnectionRefusedError):
    """A class of its own that derives from one the words name."""


@pytest.mark.parametrize(
    ("error", "words"),
    [
        # Python's errors, as urllib raises them (the reason beneath a URLError is read)...
        (ConnectionRefusedError(111, "Connection refused"), CONNECTION_REFUSED),
        (urllib.error.URLError(ConnectionRefusedError(111, "x")), CONNECTION_REFUSED),
        (_Refused(), CONNECTION_REFUSED),
        (TimeoutError("The read operation timed out"), TIMED_OUT),
        (urllib.error.URLError(TimeoutError("timed out")), TIMED_OUT),
        # ...a DNS failure with the resolver's words when it has them
        (
            urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known")),
            f"{DNS_FAILED} (Name or service not known)",
        ),
        (socket.gaierror(), DNS_FAILED),
        # anything else: its class and text
        (OSError("boom"), "OSError: boom"),
        (ValueError(), "ValueError"),
        (ssl.SSLError(1, "[SSL] bad record"), "SSLError: [SSL] bad record"),
        (urllib.error.URLError("no host given"), "URLError: <urlopen error no host given>"),
    ],
)
def test_a_download_that_got_no_answer_in_a_few_words(error: BaseException, words: str) -> None:
    assert download_failure(error) == words


def test_the_words_for_twisted_s_and_scrapy_s_errors() -> None:
    from scrapy import exceptions
    from twisted.internet import error

    assert download_failure(error.ConnectionRefusedError()) == CONNECTION_REFUSED
    assert download_failure(error.TimeoutError()) == TIMED_OUT
    assert download_failure(error.TCPTimedOutError()) == TIMED_OUT
    # Scrapy 2.14 and later raise errors of their own (2.13 Twisted's, above).
    refused = getattr(exceptions, "DownloadConnectionRefusedError", None)
    timeout = getattr(exceptions, "DownloadTimeoutError", None)
    if refused is not None and timeout is not None:
        assert download_failure(refused("x")) == CONNECTION_REFUSED
        assert download_failure(timeout("took longer")) == TIMED_OUT
    assert download_failure(error.DNSLookupError("address 'h' not found")) == DNS_FAILED
    assert download_failure(exceptions.CannotResolveHostError("h")) == DNS_FAILED


# -- header readers: Scrapy's, without importing Scrapy ------------------------------------------

CACHE_CONTROLS = [
    b"",
    b"public, max-age=3600",
    b"no-cache",
    b'max-age="60", No-Store',
    b" , max-age=, ,private",
    b"MAX-AGE=10,max-age=20",
]
DATES = [
    None,
    b"Sun, 06 Nov 1994 08:49:37 GMT",
    b"Sunday, 06-Nov-94 08:49:37 GMT",
    b"Sun Nov  6 08:49:37 1994",
    b"Wed, 21 Oct 2015 07:28:00 +0200",
    b"tomorrow",
    b"",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    b"\xff\xfe",
]


@pytest.mark.parametrize("header", CACHE_CONTROLS)
def test_cache_control_read_as_scrapy_reads_it(header: bytes) -> None:
    from scrapy.extensions.httpcache import parse_cachecontrol

    assert ladder.parse_cachecontrol(header) == parse_cachecontrol(header)


@pytest.mark.parametrize("date", DATES)
def test_http_dates_read_as_scrapy_reads_them(date: bytes | str | None) -> None:
    from scrapy.extensions.httpcache import rfc1123_to_epoch

    assert ladder.rfc1123_to_epoch(date) == rfc1123_to_epoch(date)


def test_policy_does_not_import_scrapy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, scrapy_rerp.core.status, scrapy_rerp.core.body, scrapy_rerp.core.urls\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
