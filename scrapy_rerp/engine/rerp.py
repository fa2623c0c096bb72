"""rerp-compatible classes: ``RobotExclusionRulesParser`` and ``RobotFileParserLookalike``.

These keep the interface of robotexclusionrulesparser 1.7.1 ("rerp"), so code written for it
keeps working, and answer from this package's engine: the content is kept as given and parsed
lazily, once per syntax, by :func:`scrapy_rerp.engine.parse`.

Deliberate differences from rerp 1.7.1 (its bugs, fixed):

* ``fetch()``: a charset in Content-Type that cannot decode a body (unknown, ``base64``,
  ``idna``, ``punycode``...) falls back to ISO-8859-1 and bytes that do not decode in the
  declared charset are replaced (U+FFFD) instead of raising
  ``UnicodeError``; a network error is re-raised as the original ``URLError`` (with its
  reason) instead of ``URLError(0)``; an Expires header is converted to a POSIX timestamp
  without rerp's shift by the local UTC offset, and a past date (even the epoch) means
  expired; RFC 850 two-digit years follow RFC 9110.
* ``is_allowed()`` accepts ``RFC9309``; str and bytes arguments are accepted, anything else
  is a ``TypeError``.
* ``RobotFileParserLookalike.parse(lines)`` joins lines with newlines, so lines without
  their line endings (``text.splitlines()``) work.

The rule-level fixes (anchored directives, DEL scrubbed, Crawl-delay-only records kept,
invalid Crawl-delay values ignored, URL path extraction, ``%0A``) live in the engine.
"""

from __future__ import annotations

import calendar
import email.utils
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from email.message import Message
from typing import Any, TypeVar
from urllib.parse import urlparse
from urllib.robotparser import RequestRate

# The private modules, not the package: the package imports this module while initialising.
from ._constants import GYM2008, MAX_FILESIZE, SEVEN_DAYS, check_syntax
from ._dates import _MONTHS
from ._robots import RobotsTxt, parse
from ._text_codecs import body_codec

__all__ = ["RobotExclusionRulesParser", "RobotFileParserLookalike"]

_Text = TypeVar("_Text", str, bytes)

# Served in place of the body when the server says 401/403 (MK1996 section 3.1: "access
# restricted"); rerp does the same, so str() shows the same rules.
_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"

# RFC 850 dates ("Sunday, 06-Nov-94 08:49:37 GMT") carry two-digit years, which
# email.utils maps with a fixed 1969 pivot; RFC 9110 section 5.6.7 wants a sliding window.
_RFC850_RE = re.compile(
    r"^\s*[A-Za-z]+,\s*(\d{1,2})-([A-Za-z]{3})-(\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})\s*GMT\s*$"
)


def _text_arg(value: object, name: str) -> str:
    """Return *value* as str: bytes are decoded (UTF-8, else ISO-8859-1, which never fails)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return bytes(value).decode("iso-8859-1")
    raise TypeError(f"{name} must be str or bytes, not {type(value).__name__}")


def parse_http_date(value: str, now: float | None = None) -> float | None:
    """Parse an HTTP date (RFC 1123, RFC 850 or asctime) into a POSIX timestamp, or None.

    A date without a zone (asctime) is UTC, as every HTTP date is. Looser forms that
    :func:`email.utils.parsedate_tz` understands (e.g. numeric zones) are accepted too.
    """
    match = _RFC850_RE.match(value)
    if match is not None:
        day, month_name, yy, hour, minute, second = match.groups()
        month = _MONTHS.get(month_name.lower())
        if month is None:
            return None
        # RFC 9110: a two-digit year more than 50 years in the future is in the past.
        this_year = time.gmtime(time.time() if now is None else now).tm_year
        year = this_year - this_year % 100 + int(yy)
        if year > this_year + 50:
            year -= 100
        try:
            return float(
                calendar.timegm((year, month, int(day), int(hour), int(minute), int(second)))
            )
        except (ValueError, OverflowError):
            return None
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    if parsed[9] is None:
        parsed = (*parsed[:9], 0)
    try:
        return float(email.utils.mktime_tz(parsed))
    except (ValueError, OverflowError):
        return None


def _decode_body(body: bytes, charset: str | None) -> str | bytes:
    """Decode a fetched body with its declared charset; never raises on content.

    Without a charset the bytes are kept, and :func:`parse` decodes them per syntax
    (ISO-8859-1 for MK1996/GYM2008 as rerp and RFC 2616, UTF-8 for RFC 9309). A charset that
    cannot decode a body (unknown, no text encoding such as ``base64``, or one of
    ``NOT_BODY_CHARSETS``: ``idna``, ``punycode``, ``undefined``) falls back to ISO-8859-1;
    undecodable bytes become U+FFFD. rerp raised ``UnicodeError`` in these cases, throwing away
    a usable file.
    """
    if not charset:
        return body
    codec = body_codec(charset)
    if codec is not None:
        try:
            return body.decode(codec, "replace")
        except (LookupError, ValueError, TypeError):
            pass  # a codec that refuses these bytes even with replacement
    return body.decode("iso-8859-1")


class RobotExclusionRulesParser:
    """A parser for robots.txt files with robotexclusionrulesparser 1.7.1's interface.

    ``is_allowed(user_agent, url, syntax)`` answers in MK1996, GYM2008 (the default) or
    RFC9309 semantics; each syntax is parsed on first use and kept.
    """

    def __init__(self) -> None:
        self._source_url = ""
        self.user_agent: str | None = None
        self.use_local_time = True
        self.expiration_date: float = self._now() + SEVEN_DAYS
        self._response_code = 0
        self._content: str | bytes = ""
        self._parsed: dict[int, RobotsTxt] = {}

    # -- pickling: the content is the state; parsed forms are rebuilt on demand -----------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_parsed"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._parsed = {}

    # -- read-only properties ---------------------------------------------------------------
    @property
    def source_url(self) -> str:
        """The URL from which this robots.txt was fetched. Read only."""
        return self._source_url

    @property
    def response_code(self) -> int:
        """The remote server's response code (0 before any fetch). Read only."""
        return self._response_code

    @property
    def sitemap(self) -> None:
        """Deprecated in rerp; raises ``DeprecationWarning`` as rerp does."""
        raise DeprecationWarning("The sitemap property is deprecated. Use 'sitemaps' instead.")

    @property
    def sitemaps(self) -> list[str]:
        """The Sitemap URLs in the file, in order (a new list on each access). Read only."""
        return list(self._robots(GYM2008).sitemaps)

    @property
    def is_expired(self) -> bool:
        """True once ``expiration_date`` has passed. Read only."""
        return self.expiration_date <= self._now()

    def _now(self) -> float:
        # rerp's two clocks; both are POSIX timestamps, the UTC one in whole seconds.
        if self.use_local_time:
            return time.time()
        return float(calendar.timegm(time.gmtime()))

    # -- parsing ----------------------------------------------------------------------------
    def _robots(self, syntax: int) -> RobotsTxt:
        robots = self._parsed.get(syntax)
        if robots is None:
            robots = self._parsed[syntax] = parse(self._content, syntax)
        return robots

    def _set_content(self, content: str | bytes) -> None:
        self._content = content
        self._parsed = {}

    def parse(self, s: str | bytes | bytearray) -> None:
        """Parse *s* (str, or bytes read as ISO-8859-1 like rerp) as robots.txt rules."""
        if isinstance(s, (bytearray, memoryview)):
            s = bytes(s)
        if not isinstance(s, (str, bytes)):
            raise TypeError(f"robots.txt content must be str or bytes, not {type(s).__name__}")
        self._set_content(s)

    # -- queries ----------------------------------------------------------------------------
    def is_allowed(self, user_agent: str | bytes, url: str | bytes, syntax: int = GYM2008) -> bool:
        """True if *user_agent* may fetch *url* (a path or an absolute URL)."""
        user_agent = _text_arg(user_agent, "user_agent")
        url = _text_arg(url, "url")
        return self._robots(check_syntax(syntax)).allowed(url, user_agent)

    def get_crawl_delay(self, user_agent: str | bytes, syntax: int = GYM2008) -> float | None:
        """The Crawl-delay (seconds) of the record that applies to *user_agent*, or None."""
        user_agent = _text_arg(user_agent, "user_agent")
        return self._robots(check_syntax(syntax)).crawl_delay(user_agent)

    def __str__(self) -> str:
        """The parsed rules in rerp's layout: ``Sitemaps: [...]``, then the records."""
        return str(self._robots(GYM2008))

    # -- fetching ---------------------------------------------------------------------------
    def _download(self, url: str, timeout: float | None) -> tuple[int, bytes, Message | None]:
        """GET *url*: (status, at most MAX_FILESIZE body bytes, headers of a 2xx or None)."""
        self._response_code = 0
        self._source_url = url
        headers = {"User-Agent": self.user_agent} if self.user_agent else {}
        request = urllib.request.Request(url, None, headers)
        try:
            # rerp passes the timeout only when it is truthy (0 means "the default").
            with (
                urllib.request.urlopen(request, timeout=timeout)
                if timeout
                else urllib.request.urlopen(request)
            ) as response:
                body = response.read(MAX_FILESIZE)
                # file: URLs have no status; rerp counts them as 200.
                self._response_code = getattr(response, "status", None) or 200
                return self._response_code, body, response.headers
        except urllib.error.HTTPError as error:
            error.close()
            self._response_code = error.code
            return error.code, b"", None

    def _expiration(self, headers: Message | None) -> float:
        """MK1996 section 3.4: the Expires header, else seven days from now."""
        expires = headers.get("Expires") if headers is not None else None
        if expires:
            timestamp = parse_http_date(expires)
            if timestamp is not None:
                return timestamp
        return self._now() + SEVEN_DAYS

    def _fetch(self, url: str, timeout: float | None, any_4xx_allows: bool) -> int:
        """Download and parse *url* under rerp's status policy; return the status.

        With *any_4xx_allows* (the standard library's policy), every 4xx but 401/403 allows
        all, not just 404.
        """
        status, body, headers = self._download(url, timeout)
        self.expiration_date = self._expiration(headers)
        if headers is not None and 200 <= status < 300:
            self._set_content(_decode_body(body, headers.get_content_charset()))
        elif status in (401, 403):
            self._set_content(_DISALLOW_ALL)
        elif status == 404 or (any_4xx_allows and 400 <= status < 500):
            self._set_content("")
        else:
            # rerp's reason is the bare status code; callers compare it.
            raise urllib.error.URLError(status)  # type: ignore[arg-type]
        return status

    def fetch(self, url: str, timeout: float | None = None) -> None:
        """Fetch and parse the robots.txt at *url* (e.g. ``http://example.com/robots.txt``).

        2xx: the body is parsed. 401/403: everything is disallowed. 404: everything is
        allowed. Any other status raises ``urllib.error.URLError(status)``, as rerp does.
        """
        self._fetch(url, timeout, any_4xx_allows=False)


def _strip_line_ending(line: _Text) -> _Text:
    """*line* without its own line ending (``\\r\\n``, ``\\n`` or ``\\r``), if any."""
    if isinstance(line, bytes):
        return line.removesuffix(b"\n").removesuffix(b"\r")
    return line.removesuffix("\n").removesuffix("\r")


class RobotFileParserLookalike(RobotExclusionRulesParser):
    """A drop-in replacement for :class:`urllib.robotparser.RobotFileParser`.

    It keeps everything of :class:`RobotExclusionRulesParser` and adds the standard
    library's methods. As in the standard library, ``can_fetch`` says False until the
    file was read or parsed, ``disallow_all``/``allow_all`` override the rules, and
    ``read()`` treats 401/403 as "disallow all" and any other 4xx as "allow all".
    """

    def __init__(self, url: str = "") -> None:
        super().__init__()
        self.last_checked: float | None = None
        self.disallow_all = False
        self.allow_all = False
        self.set_url(url)

    def set_url(self, url: str) -> None:
        """Set the URL that :meth:`read` fetches."""
        self._user_provided_url = url
        # The standard library exposes these three.
        self.url = url
        self.host, self.path = urlparse(url)[1:3]

    def read(self) -> None:
        """Fetch the robots.txt at the URL given to the constructor or :meth:`set_url`."""
        self.disallow_all = self.allow_all = False
        status = self._fetch(self._user_provided_url, None, any_4xx_allows=True)
        self.disallow_all = status in (401, 403)
        self.allow_all = 400 <= status < 500 and not self.disallow_all
        self.modified()

    def fetch(self, url: str, timeout: float | None = None) -> None:
        super().fetch(url, timeout)
        self.modified()

    def parse(self, lines: Iterable[str | bytes | bytearray] | str | bytes | bytearray) -> None:
        """Parse *lines*, with or without their line endings (or a whole str/bytes)."""
        if isinstance(lines, (str, bytes, bytearray)):
            super().parse(lines)
        else:
            texts: list[str] = []
            raws: list[bytes] = []
            for item in lines:
                if isinstance(item, str):
                    texts.append(_strip_line_ending(item))
                elif isinstance(item, (bytes, bytearray)):
                    raw = _strip_line_ending(bytes(item))
                    raws.append(raw)
                    # Mixed input is read as text; bytes in it as ISO-8859-1, as rerp would.
                    texts.append(raw.decode("iso-8859-1"))
                else:
                    raise TypeError(f"lines must be str or bytes, not {type(item).__name__}")
            if raws and len(raws) == len(texts):
                # Only bytes: the engine decodes them per syntax (UTF-8 for RFC9309).
                super().parse(b"\n".join(raws))
            else:
                super().parse("\n".join(texts))
        self.modified()

    def can_fetch(self, useragent: str | bytes, url: str | bytes, syntax: int = GYM2008) -> bool:
        """True if *useragent* may fetch *url*; False until the file was read or parsed."""
        if self.disallow_all:
            return False
        if self.allow_all:
            return True
        if not self.last_checked:
            # Like the standard library: no answer before read()/parse() is "no".
            _text_arg(useragent, "useragent")
            _text_arg(url, "url")
            check_syntax(syntax)
            return False
        return self.is_allowed(useragent, url, syntax)

    def crawl_delay(self, useragent: str | bytes) -> float | None:
        """Seconds from the applicable record's Crawl-delay, or None."""
        if not self.last_checked:
            return None
        return self.get_crawl_delay(useragent)

    def request_rate(self, useragent: str | bytes) -> RequestRate | None:
        """``RequestRate(requests, seconds)`` from the applicable record, or None."""
        if not self.last_checked:
            return None
        rate = self._robots(GYM2008).request_rate(_text_arg(useragent, "useragent"))
        if rate is None:
            return None
        # The standard library's seconds are ints; keep fractions where there are some.
        seconds = int(rate.seconds) if float(rate.seconds).is_integer() else rate.seconds
        return RequestRate(rate.requests, seconds)  # type: ignore[arg-type]

    def __str__(self) -> str:
        """The records as the standard library writes them (``Crawl-delay: 1``,
        ``Request-rate: 3/15``, the ``*`` record last, no newline at the end)."""
        return self._robots(GYM2008)._render_urllib()

    def site_maps(self) -> list[str] | None:
        """The Sitemap URLs in file order, or None when there are none (as the stdlib)."""
        return self.sitemaps or None

    def mtime(self) -> float | None:
        """When the file was last read or parsed (a POSIX timestamp), or None."""
        return self.last_checked

    def modified(self) -> None:
        """Record now as the time the file was last read."""
        self.last_checked = time.time()
