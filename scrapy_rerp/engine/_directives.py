"""The directives the engine reads, in one table, and the values of the extension directives
(Crawl-delay, Request-rate, Visit-time, Content-Usage, Content-Signal).

Both syntaxes' parse paths read ``DIRECTIVES``: the key spellings each syntax accepts, where a
line's value belongs (``scope``), how a per-group value is read and written back. Adding a
directive is one entry here (and its tests); a per-group value is then kept in each group's
``extras`` and read with ``RobotsTxt``'s per-group look-up.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from ._usage import read_content_signal, read_content_usage, split_content_usage_rule

Note = tuple[str, str]  # what a reader says about a value: a ParseWarning code and a message


class RequestRate(NamedTuple):
    """``Request-rate: requests/seconds`` with an optional ``HHMM-HHMM`` window (UTC)."""

    requests: int
    seconds: float
    start_time: datetime.time | None = None
    end_time: datetime.time | None = None

    @property
    def interval(self) -> float:
        """Seconds between two requests that this rate implies."""
        return self.seconds / self.requests


class VisitTime(NamedTuple):
    """``Visit-time: HHMM-HHMM``: the window (UTC) in which the site asks to be crawled."""

    start_time: datetime.time
    end_time: datetime.time


_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(
    r"(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*([smhd]?)(?:\s+(\d{4})\s*-\s*(\d{4}))?", re.IGNORECASE
)
_WINDOW = re.compile(r"(\d{4})\s*(?:-|\s)\s*(\d{4})")


def parse_crawl_delay(value: str) -> float | None:
    """Seconds, finite and non-negative; anything else is None."""
    try:
        delay = float(value)
    except ValueError:
        return None
    if not math.isfinite(delay) or delay < 0 or "_" in value:
        return None
    return delay


def _window(start: str, end: str) -> tuple[datetime.time, datetime.time] | None:
    """``HHMM``-``HHMM`` as two times; None for an hour past 23 or a minute past 59."""
    clocks = [(int(hhmm[:2]), int(hhmm[2:])) for hhmm in (start, end)]
    if any(hours > 23 or minutes > 59 for hours, minutes in clocks):
        return None
    return datetime.time(*clocks[0]), datetime.time(*clocks[1])


def parse_request_rate(value: str) -> RequestRate | None:
    match = _RATE.fullmatch(value.strip())
    if match is None:
        return None
    requests, seconds, unit, start, end = match.groups()
    count = int(requests)
    span = float(seconds) * _UNITS[unit.lower()]
    if count <= 0 or span <= 0 or not math.isfinite(span):
        return None
    if start is None:
        return RequestRate(count, span)
    window = _window(start, end)
    return None if window is None else RequestRate(count, span, *window)


def parse_visit_time(value: str) -> VisitTime | None:
    match = _WINDOW.fullmatch(value.strip())
    if match is None:
        return None
    window = _window(*match.groups())
    return None if window is None else VisitTime(*window)


class UsageStatement(NamedTuple):
    """A ``Content-Usage`` or ``Content-Signal`` line: what it says about usage categories.

    ``path`` is a Content-Usage rule's path (None: the whole group, and for Content-Signal);
    ``preferences`` are ``(category, allowed)`` pairs, categories absent being unknown;
    ``text`` is the statement as written (after the path), for messages and ``str()``.
    """

    path: str | None
    preferences: tuple[tuple[str, bool], ...]
    text: str


def read_content_usage_rule(value: str) -> tuple[UsageStatement, tuple[Note, ...]]:
    """A Content-Usage rule (draft-ietf-aipref-attach): an optional path, then a Structured
    Fields dictionary. One that says nothing usable still counts: for its path, every usage is
    unknown (draft-ietf-aipref-vocab: a value that does not parse states no preference)."""
    path, statement = split_content_usage_rule(value)
    preferences, notes = _read_statement(statement)
    return UsageStatement(path, preferences, statement), notes


@functools.lru_cache(maxsize=64)
def _read_statement(statement: str) -> tuple[tuple[tuple[str, bool], ...], tuple[Note, ...]]:
    """read_content_usage, for recent statements: a file's rules for many paths often say the
    same (``train-ai=n``), and each read is a Structured Fields parse. (Kept few: a statement
    may be as long as a line.)"""
    preferences, notes = read_content_usage(statement)
    return tuple(preferences.items()), tuple(notes)


def read_content_signal_line(value: str) -> tuple[UsageStatement, tuple[Note, ...]]:
    """A Content-Signal line (contentsignals.org): ``search=yes, ai-train=no``, for the group."""
    preferences, notes = read_content_signal(value)
    return UsageStatement(None, tuple(preferences.items()), value), tuple(notes)


def read_license(value: str) -> tuple[str, tuple[Note, ...]]:
    """A ``License:`` value (RSL 1.0, "robots.txt License directive"): kept as written; one that
    is not an absolute http(s) URL is kept too (written back), with a warning, and is not among
    ``RobotsTxt.licenses``."""
    if is_license_url(value):
        return value, ()
    if not value or "://" not in value:
        return value, (("relative-license", f"{_LICENSE_RULE}an absolute URL{_NOT_FETCHED}"),)
    return value, (("invalid-license", f"{_LICENSE_RULE}an http(s) URL with a host{_NOT_FETCHED}"),)


_LICENSE_RULE = "a License must be "
_NOT_FETCHED = " (RSL 1.0): crawlers do not fetch it"


def is_license_url(value: str) -> bool:
    """An absolute http(s) URL with a host and no blank: what a ``License:`` line must name."""
    if not value or any(char.isspace() for char in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port  # (a port that is no number raises)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and port != 0


def _without_notes(parse: Callable[[str], Any]) -> Callable[[str], tuple[Any, tuple[Note, ...]]]:
    """A reader for a value whose directive has nothing to say beyond valid or not."""
    return lambda value: (parse(value), ())


def _render_usage(statement: UsageStatement) -> str:
    return statement.text if statement.path is None else f"{statement.path} {statement.text}"


def _render_request_rate(rate: RequestRate) -> str:
    text = f"{rate.requests}/{rate.seconds:g}s"
    if rate.start_time is not None and rate.end_time is not None:
        text += f" {rate.start_time:%H%M}-{rate.end_time:%H%M}"
    return text


def _render_visit_time(visit: VisitTime) -> str:
    return f"{visit.start_time:%H%M}-{visit.end_time:%H%M}"


# Where a directive's value belongs. The letters are what the RFC 9309 group reader searches
# the lines' kinds for (``bytes.find``), so that it finds group boundaries in C.
AGENT = "U"  # a User-agent line: names the crawlers of a group
RULE = "R"  # Allow / Disallow: a rule of the group
GROUP = "E"  # a value per group, for the agents named before it (Crawl-delay...)
FILE = "F"  # a value of the whole file, wherever it is written (Sitemap...)


class Directive(NamedTuple):
    """One directive: how it is spelled in each syntax and where its value goes."""

    name: str  # as written back (``str(robots)``) and named in warnings
    scope: str  # AGENT, RULE, GROUP or FILE
    keys: tuple[str, ...] = ()  # lower-case keys read whole, in every syntax
    # RFC9309 only: keys google/robotstxt reads as the start of a key, misspellings included
    # (``Disallowed:`` is a Disallow), and, alone with one value, without a colon.
    google_keys: tuple[str, ...] = ()
    legacy_keys: tuple[str, ...] = ()  # MK1996/GYM2008 only: rerp 1.7.1's spellings
    # rerp 1.7.1 reads the line: it ends a run of User-agent lines (MK1996/GYM2008). Lines rerp
    # does not know leave its record logic as if they were not there.
    rerp_reads: bool = False
    # GROUP values: the value read from the text (None: invalid, ignored with a warning) with
    # what to warn about it (unknown keys, malformed parts...), in one read; and written back.
    # FILE values: only what to warn about (a value is kept as written: License).
    read_value: Callable[[str], tuple[Any, tuple[Note, ...]]] | None = None
    render_value: Callable[[Any], str] | None = None
    # RFC9309: a GROUP line that is also a rule of its group (draft-ietf-aipref-attach adds
    # Content-Usage to RFC 9309's rules), so that a User-agent line after it starts a new group.
    is_rfc_rule: bool = False
    # FILE values: only the first non-empty one counts (Host), the others are kept but unused.
    first_only: bool = False


# A directive's kind is its position here (line kinds are kept in a bytearray, one per line).
DIRECTIVES: tuple[Directive, ...] = (
    Directive(
        "User-agent",
        AGENT,
        google_keys=("user-agent", "useragent", "user agent"),
        legacy_keys=("user-agent", "useragent"),
        rerp_reads=True,
    ),
    Directive("Allow", RULE, google_keys=("allow",), legacy_keys=("allow",), rerp_reads=True),
    Directive(
        "Disallow",
        RULE,
        google_keys=("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"),
        legacy_keys=("disallow",),
        rerp_reads=True,
    ),
    Directive(
        "Sitemap",
        FILE,
        google_keys=("sitemap", "site-map"),
        legacy_keys=("sitemap",),
        rerp_reads=True,
    ),
    Directive(
        "Crawl-delay",
        GROUP,
        keys=("crawl-delay",),
        rerp_reads=True,
        read_value=_without_notes(parse_crawl_delay),
        render_value="{:g}".format,
    ),
    Directive(
        "Request-rate",
        GROUP,
        keys=("request-rate",),
        read_value=_without_notes(parse_request_rate),
        render_value=_render_request_rate,
    ),
    Directive(
        "Visit-time",
        GROUP,
        keys=("visit-time",),
        read_value=_without_notes(parse_visit_time),
        render_value=_render_visit_time,
    ),
    Directive("Host", FILE, keys=("host",), first_only=True),
    Directive("Clean-param", FILE, keys=("clean-param",)),
    Directive(
        "Content-Usage",
        GROUP,
        keys=("content-usage",),
        read_value=read_content_usage_rule,
        render_value=_render_usage,
        is_rfc_rule=True,
    ),
    Directive(
        "Content-Signal",
        GROUP,
        keys=("content-signal",),
        read_value=read_content_signal_line,
        render_value=_render_usage,
    ),
    # RSL 1.0: the URL of an RSL licence file, for the whole file (any number, anywhere).
    Directive("License", FILE, keys=("license",), read_value=read_license),
)
#: A directive's kind by its name.
KIND_OF_NAME = {directive.name: kind for kind, directive in enumerate(DIRECTIVES)}
# The kinds the code names; a directive that the table alone describes needs none.
USER_AGENT = KIND_OF_NAME["User-agent"]
ALLOW = KIND_OF_NAME["Allow"]
DISALLOW = KIND_OF_NAME["Disallow"]
SITEMAP = KIND_OF_NAME["Sitemap"]
CRAWL_DELAY = KIND_OF_NAME["Crawl-delay"]
REQUEST_RATE = KIND_OF_NAME["Request-rate"]
VISIT_TIME = KIND_OF_NAME["Visit-time"]
HOST = KIND_OF_NAME["Host"]
CLEAN_PARAM = KIND_OF_NAME["Clean-param"]
CONTENT_USAGE = KIND_OF_NAME["Content-Usage"]
CONTENT_SIGNAL = KIND_OF_NAME["Content-Signal"]
LICENSE = KIND_OF_NAME["License"]
#: The kinds of the directives that hold a value of the whole file, in table order.
FILE_KINDS = tuple(kind for kind, directive in enumerate(DIRECTIVES) if directive.scope == FILE)
#: The kinds whose values are UsageStatements.
USAGE_KINDS = (CONTENT_USAGE, CONTENT_SIGNAL)
#: The per-group values a group holds for its agents, but the usage statements (which
#: RobotsTxt.usage() answers by path): Crawl-delay, Request-rate...
VALUE_KINDS = tuple(
    kind for kind, d in enumerate(DIRECTIVES) if d.scope == GROUP and kind not in USAGE_KINDS
)
