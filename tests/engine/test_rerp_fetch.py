"""fetch() and read() against a real HTTP server on 127.0.0.1 (no mocks of urllib)."""

from __future__ import annotations

import calendar
import os
import threading
import time
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scrapy_rerp.engine import GYM2008, MAX_FILESIZE, MK1996, RFC9309, SEVEN_DAYS
from scrapy_rerp.engine.rerp import (
    RobotExclusionRulesParser,
    RobotFileParserLookalike,
    parse_http_date,
)


@dataclass
class Canned:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class Site:
    """A threaded HTTP server answering each path with a canned reply; records requests."""

    def __init__(self) -> None:
        self.replies: dict[str, Canned] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                site.requests.append((self.path, dict(self.headers.items())))
                reply = site.replies.get(self.path, Canned(404, b"not here"))
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str = "/robots.txt") -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def set(self, path: str, status: int = 200, body: bytes | str = b"", **headers: str) -> str:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.replies[path] = Canned(
            status, data, {k.replace("_", "-"): v for k, v in headers.items()}
        )
        return self.url(path)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()
    s.thread.join(5)


ROBOTS = "User-agent: *\nDisallow: /private\nSitemap: http://example.com/s.xml\n"


def test_fetch_200_parses_and_records_url_and_code(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS, Content_Type="text/plain")
    rp = RobotExclusionRulesParser()
    before = time.time()
    rp.fetch(url)
    assert rp.source_url == url
    assert rp.response_code == 200
    assert not rp.is_allowed("bot", "/private/x")
    assert rp.is_allowed("bot", "/public")
    assert rp.sitemaps == ["http://example.com/s.xml"]
    # No Expires header: seven days from now.
    assert before + SEVEN_DAYS <= rp.expiration_date <= time.time() + SEVEN_DAYS
    assert not rp.is_expired


def test_fetch_sends_user_agent_attribute(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS)
    rp = RobotExclusionRulesParser()
    rp.user_agent = "CrunchyFrogBot/1.0"
    rp.fetch(url)
    assert site.requests[-1][0] == "/robots.txt"
    assert site.requests[-1][1]["User-Agent"] == "CrunchyFrogBot/1.0"


def test_fetch_without_user_agent_sends_urllibs(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS)
    RobotExclusionRulesParser().fetch(url)
    assert site.requests[-1][1]["User-Agent"].startswith("Python-urllib/")


def test_fetch_with_timeout(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS)
    rp = RobotExclusionRulesParser()
    rp.fetch(url, timeout=5)
    assert not rp.is_allowed("bot", "/private")


def test_fetch_reads_at_most_max_filesize(site: Site) -> None:
    head = b"User-agent: *\nDisallow: /a\n"
    filler = b"#" * (MAX_FILESIZE - len(head) - 1) + b"\n"
    assert len(head + filler) == MAX_FILESIZE
    # This rule starts exactly at byte MAX_FILESIZE, so it is never read.
    url = site.set("/robots.txt", 200, head + filler + b"Disallow: /b\n")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/a")
    assert rp.is_allowed("bot", "/b")


@pytest.mark.parametrize("status", [401, 403])
def test_fetch_401_403_disallow_all(site: Site, status: int) -> None:
    url = site.set("/robots.txt", status, "User-agent: *\nAllow: /\n")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert rp.response_code == status
    for syntax in (MK1996, GYM2008, RFC9309):
        assert not rp.is_allowed("bot", "/anything", syntax)
    assert str(rp) == "User-agent: *\nDisallow: /\n"


def test_fetch_404_allows_all(site: Site) -> None:
    url = site.url("/robots.txt")  # no reply set: 404
    rp = RobotExclusionRulesParser()
    rp.parse("User-agent: *\nDisallow: /\n")
    rp.fetch(url)
    assert rp.response_code == 404
    assert rp.is_allowed("bot", "/anything")
    assert rp.sitemaps == []


@pytest.mark.parametrize("status", [400, 409, 410, 429, 500, 503])
def test_fetch_other_statuses_raise_url_error(site: Site, status: int) -> None:
    url = site.set("/robots.txt", status, "User-agent: *\nDisallow: /\n")
    rp = RobotExclusionRulesParser()
    with pytest.raises(urllib.error.URLError) as info:
        rp.fetch(url)
    assert info.value.reason == status
    assert rp.response_code == status
    assert rp.source_url == url


def test_fetch_network_error_keeps_its_reason() -> None:
    # A port nobody listens on: the original URLError, not rerp's URLError(0).
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as dead:
        port = dead.server_address[1]
    rp = RobotExclusionRulesParser()
    with pytest.raises(urllib.error.URLError) as info:
        rp.fetch(f"http://127.0.0.1:{port}/robots.txt", timeout=5)
    assert isinstance(info.value.reason, OSError)
    assert rp.response_code == 0


def test_fetch_follows_redirects(site: Site) -> None:
    site.set("/robots.txt", 301, Location=site.url("/real.txt"))
    site.set("/real.txt", 200, ROBOTS)
    rp = RobotExclusionRulesParser()
    rp.fetch(site.url("/robots.txt"))
    assert rp.response_code == 200
    assert not rp.is_allowed("bot", "/private")
    assert [path for path, _ in site.requests] == ["/robots.txt", "/real.txt"]


def test_fetch_charset_from_content_type(site: Site) -> None:
    body = "User-agent: *\nDisallow: /caf\u00e9\n".encode()
    url = site.set("/robots.txt", 200, body, Content_Type='text/plain; charset="UTF-8"')
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/caf\u00e9")
    assert not rp.is_allowed("bot", "/caf%C3%A9")
    assert rp.is_allowed("bot", "/caf\u00c3\u00a9")


def test_fetch_without_charset_reads_iso_8859_1(site: Site) -> None:
    # The UTF-8 bytes of "é" read as ISO-8859-1 are "Ã©", as in rerp.
    body = "User-agent: *\nDisallow: /caf\u00e9\n".encode()
    url = site.set("/robots.txt", 200, body, Content_Type="text/plain")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/caf\u00c3\u00a9")
    assert rp.is_allowed("bot", "/caf\u00e9", MK1996)


def test_fetch_unknown_charset_falls_back_to_iso_8859_1(site: Site) -> None:
    body = b"User-agent: *\nDisallow: /caf\xe9\n"
    url = site.set("/robots.txt", 200, body, Content_Type="text/plain; charset=x-no-such")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/caf\u00e9")
    assert rp.is_allowed("bot", "/other")


def test_fetch_non_text_codec_falls_back_to_iso_8859_1(site: Site) -> None:
    # "rot13" and "base64" are codecs but not text encodings: bytes.decode refuses them.
    url = site.set(
        "/robots.txt",
        200,
        b"User-agent: *\nDisallow: /x\n",
        Content_Type="text/plain; charset=base64",
    )
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/x")


@pytest.mark.parametrize("charset", ["idna", "punycode", "undefined", "IDNA", "x-no-such"])
@pytest.mark.parametrize(
    "body",
    [b"User-agent: *\nDisallow: /private\n", b"User-agent: *\nDisallow: /private\n# caf\xc3\xa9\n"],
    ids=["ascii", "utf-8"],
)
def test_fetch_charset_no_body_is_written_in_falls_back_to_iso_8859_1(
    site: Site, charset: str, body: bytes
) -> None:
    # idna refuses replacement, undefined refuses every byte, and punycode "decodes" ASCII text
    # into other characters without an error: each is read as ISO-8859-1, the rules kept.
    url = site.set("/robots.txt", 200, body, Content_Type=f"text/plain; charset={charset}")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert rp.response_code == 200
    for syntax in (MK1996, GYM2008, RFC9309):
        assert not rp.is_allowed("bot", "/private/x", syntax)
        assert rp.is_allowed("bot", "/public", syntax)
    lookalike = RobotFileParserLookalike(url)
    lookalike.read()
    assert not lookalike.can_fetch("bot", "/private/x")


def test_fetch_undecodable_bytes_are_replaced(site: Site) -> None:
    body = b"User-agent: *\nDisallow: /a\xff\nDisallow: /b\n"
    url = site.set("/robots.txt", 200, body, Content_Type="text/plain; charset=utf-8")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert not rp.is_allowed("bot", "/b")
    assert not rp.is_allowed("bot", "/a\ufffd")
    assert rp.is_allowed("bot", "/c")


RFC1123 = "Sun, 06 Nov 2033 08:49:37 GMT"
RFC850 = "Sunday, 06-Nov-33 08:49:37 GMT"
ASCTIME = "Sun Nov  6 08:49:37 2033"
EXPECTED = calendar.timegm((2033, 11, 6, 8, 49, 37))


@pytest.mark.parametrize("expires", [RFC1123, RFC850, ASCTIME])
@pytest.mark.parametrize("use_local_time", [True, False])
def test_fetch_expires_header_all_three_formats(
    site: Site, expires: str, use_local_time: bool
) -> None:
    url = site.set("/robots.txt", 200, ROBOTS, Expires=expires)
    rp = RobotExclusionRulesParser()
    rp.use_local_time = use_local_time
    rp.fetch(url)
    assert rp.expiration_date == EXPECTED
    assert not rp.is_expired


@pytest.fixture
def far_timezone() -> Iterator[None]:
    """Run in a zone far from UTC (UTC+9), where rerp's local-time conversion shifted the date."""
    saved = os.environ.get("TZ")
    # A POSIX TZ string: needs no zoneinfo files.
    os.environ["TZ"] = "JST-9"
    time.tzset()
    yield
    if saved is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.usefixtures("far_timezone")
def test_expires_is_a_posix_timestamp_in_any_timezone(site: Site) -> None:
    assert time.timezone == -9 * 3600
    url = site.set("/robots.txt", 200, ROBOTS, Expires=RFC1123)
    rp = RobotExclusionRulesParser()
    assert rp.use_local_time
    rp.fetch(url)
    assert rp.expiration_date == EXPECTED


def test_fetch_past_expires_is_expired(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS, Expires="Thu, 01 Jan 1970 00:00:00 GMT")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert rp.expiration_date == 0
    assert rp.is_expired


@pytest.mark.parametrize("expires", ["0", "-1", "garbage", ""])
def test_fetch_bad_expires_means_seven_days(site: Site, expires: str) -> None:
    url = site.set("/robots.txt", 200, ROBOTS, Expires=expires)
    rp = RobotExclusionRulesParser()
    before = time.time()
    rp.fetch(url)
    assert before + SEVEN_DAYS - 1 <= rp.expiration_date <= time.time() + SEVEN_DAYS


def test_fetch_expires_ignored_on_error_status(site: Site) -> None:
    url = site.set("/robots.txt", 403, "", Expires=RFC1123)
    rp = RobotExclusionRulesParser()
    before = time.time()
    rp.fetch(url)
    assert rp.expiration_date >= before + SEVEN_DAYS - 1


def test_parse_http_date_rfc850_two_digit_year_window() -> None:
    now = calendar.timegm((2026, 1, 1, 0, 0, 0))
    # 2076 is exactly 50 years ahead: kept; 2077 is more: read as 1977.
    assert parse_http_date("Friday, 01-Jan-76 00:00:00 GMT", now) == calendar.timegm(
        (2076, 1, 1, 0, 0, 0)
    )
    assert parse_http_date("Friday, 01-Jan-77 00:00:00 GMT", now) == calendar.timegm(
        (1977, 1, 1, 0, 0, 0)
    )
    assert parse_http_date("Sunday, 06-Foo-94 08:49:37 GMT", now) is None
    assert parse_http_date("Sun, 06 Nov 1994 08:49:37 +0100") == calendar.timegm(
        (1994, 11, 6, 7, 49, 37)
    )


def test_is_expired_follows_expiration_date() -> None:
    for use_local_time in (True, False):
        rp = RobotExclusionRulesParser()
        rp.use_local_time = use_local_time
        assert not rp.is_expired
        rp.expiration_date = time.time() - 1
        assert rp.is_expired


# -- RobotFileParserLookalike.read() ------------------------------------------------------


def test_lookalike_read(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS)
    rp = RobotFileParserLookalike(url)
    rp.user_agent = "LookBot"
    assert not rp.can_fetch("bot", "/public")  # not read yet
    before = time.time()
    rp.read()
    assert site.requests[-1][1]["User-Agent"] == "LookBot"
    mtime = rp.mtime()
    assert mtime is not None and mtime >= before
    assert rp.can_fetch("bot", "/public")
    assert not rp.can_fetch("bot", "/private/x")
    assert rp.site_maps() == ["http://example.com/s.xml"]
    assert rp.source_url == url


def test_lookalike_set_url_then_read(site: Site) -> None:
    rp = RobotFileParserLookalike()
    url = site.set("/other/robots.txt", 200, "User-agent: *\nDisallow: /o\n")
    rp.set_url(url)
    assert rp.url == url and rp.path == "/other/robots.txt"
    rp.read()
    assert not rp.can_fetch("bot", "/o")


@pytest.mark.parametrize("status", [401, 403])
def test_lookalike_read_401_403_disallow_all(site: Site, status: int) -> None:
    url = site.set("/robots.txt", status)
    rp = RobotFileParserLookalike(url)
    rp.read()
    assert rp.disallow_all and not rp.allow_all
    assert not rp.can_fetch("bot", "/")
    assert not rp.is_allowed("bot", "/")


@pytest.mark.parametrize("status", [400, 404, 410, 429])
def test_lookalike_read_other_4xx_allow_all(site: Site, status: int) -> None:
    url = site.set("/robots.txt", status, "User-agent: *\nDisallow: /\n")
    rp = RobotFileParserLookalike(url)
    rp.read()
    assert rp.allow_all and not rp.disallow_all
    assert rp.can_fetch("bot", "/x")
    assert rp.response_code == status


def test_lookalike_read_5xx_raises(site: Site) -> None:
    url = site.set("/robots.txt", 503)
    rp = RobotFileParserLookalike(url)
    with pytest.raises(urllib.error.URLError):
        rp.read()
    assert not rp.can_fetch("bot", "/x")


def test_lookalike_read_resets_previous_verdict(site: Site) -> None:
    url = site.set("/robots.txt", 403)
    rp = RobotFileParserLookalike(url)
    rp.read()
    assert not rp.can_fetch("bot", "/x")
    site.set("/robots.txt", 200, "User-agent: *\nDisallow: /y\n")
    rp.read()
    assert not rp.disallow_all
    assert rp.can_fetch("bot", "/x") and not rp.can_fetch("bot", "/y")


def test_lookalike_fetch_sets_mtime(site: Site) -> None:
    url = site.set("/robots.txt", 200, ROBOTS)
    rp = RobotFileParserLookalike()
    rp.fetch(url)
    assert rp.mtime() is not None
    assert rp.can_fetch("bot", "/public")


def test_fetch_with_a_nul_in_the_charset_reads_iso_8859_1(site: Site) -> None:
    # codecs.lookup raises ValueError, not LookupError, on a NUL: an unknown charset all the same.
    body = "User-agent: *\nDisallow: /caf\u00e9\n".encode()
    url = site.set("/robots.txt", 200, body, Content_Type="text/plain; charset=utf\x008")
    rp = RobotExclusionRulesParser()
    rp.fetch(url)
    assert rp.response_code == 200
    assert not rp.is_allowed("bot", "/caf\u00c3\u00a9")
    assert rp.is_allowed("bot", "/caf\u00e9")
