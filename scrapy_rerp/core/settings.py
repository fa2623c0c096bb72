"""Every setting of the Scrapy layer, read and validated once, at start-up.

A bad value is an error naming the setting and the value, raised when the crawler is built:
a crawl that silently ignores robots.txt (or hammers a site) because of a typo is worse than
a crawl that does not start. In a crawl, :func:`settings_for` reports it once, as one log
line, and closes the spider before anything is downloaded (``scrapy crawl`` exits with 1); it
also warns about ``RERP_*`` names that no part of the plugin reads (a misspelled setting would
otherwise be ignored).

What the settings choose for each request is here too, so that every layer asks it in one place:
the user agent robots.txt is matched against (:func:`crawler_user_agent`), and the meta of a
robots.txt request (:func:`robotstxt_request_meta`: ``RERP_ROBOTSTXT_META``, then the
middleware's own keys, :data:`ROBOTSTXT_REQUEST_META_KEYS`, which that setting may not name).

Standard library only (Scrapy is imported only when a crawl has to be stopped): the command
line shares the syntax names.
"""

from __future__ import annotations

import copy
import difflib
import json
import logging
import math
import os
import re
import weakref
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp.core import loggers
from scrapy_rerp.core.body import MAX_SIZE, default_charset
from scrapy_rerp.core.store import DEFAULT_MAX_ORIGINS
from scrapy_rerp.core.urls import DONT_OBEY_META
from scrapy_rerp.engine import (
    RFC9309,
    SYNTAX_BY_NAME,
    USAGE_CATEGORIES,
    check_syntax,
    usage_category,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "CLOSE_REASON",
    "REDIS_URL_SCHEMES",
    "ROBOTSTXT_REQUEST_META_KEYS",
    "ROBOTS_ORIGIN_META",
    "SYNTAX_NAMES",
    "RerpSettings",
    "RerpSettingsError",
    "crawler_user_agent",
    "known_settings",
    "redacted_url",
    "robotstxt_request_meta",
    "setting_path",
    "settings_for",
    "syntax_from",
    "syntax_name",
    "unknown_settings",
]

logger = logging.getLogger(loggers.SETTINGS)

#: The engine's one table of syntax names: ``RERP_SYNTAX``, the command line's ``--syntax``,
#: ``RerpRobotParser(syntax=...)`` and ``parse(syntax=...)`` take a name (any case) or the
#: engine constant.
SYNTAX_NAMES: dict[str, int] = SYNTAX_BY_NAME

#: The spider's close reason when a setting is bad (the crawl stops before any download).
CLOSE_REASON = "rerp_settings_error"

#: The ``Request.meta`` key of a robots.txt request that names the origin it is for
#: (``scheme://host:port``): how other download plugins recognise one (docs/plugins.rst).
ROBOTS_ORIGIN_META = "rerp_robots_origin"


def robotstxt_request_meta(
    project: Mapping[str, Any], origin: str, download_maxsize: int
) -> dict[str, Any]:
    """The meta of a robots.txt request for ``origin``: the project's ``RERP_ROBOTSTXT_META``
    (``project``, deep-copied: a plugin may change its request's meta), then the middleware's own
    keys (:data:`ROBOTSTXT_REQUEST_META_KEYS`), which the setting may not name. Robots.txt is not
    obeyed for itself; redirects, retries and the size cap are the middleware's:
    ``download_maxsize`` is the transport's for the URL (0 over HTTP, where it stops the body at
    ``RERP_MAX_SIZE`` itself)."""
    return {
        **copy.deepcopy(dict(project)),
        DONT_OBEY_META: True,
        "dont_redirect": True,
        "dont_retry": True,
        "allow_offsite": True,
        "handle_httpstatus_all": True,
        "download_maxsize": download_maxsize,
        "download_warnsize": 0,
        ROBOTS_ORIGIN_META: origin,
    }


#: The ``Request.meta`` keys the middleware sets on its robots.txt requests, those of
#: :func:`robotstxt_request_meta`: ``RERP_ROBOTSTXT_META`` may add others, not these.
ROBOTSTXT_REQUEST_META_KEYS = frozenset(robotstxt_request_meta({}, "", 0))

DAY = 24 * 3600.0
WEEK = 7 * DAY
#: The longest RERP_SIGNATURE_WINDOW: Web Bot Auth asks for short-lived signatures.
MAX_SIGNATURE_WINDOW = 3600.0

_DEFAULT_CACHE = "scrapy_rerp.cache.MemoryOriginCache"


class RerpSettingsError(ValueError):
    """A RERP_* or ROBOTSTXT_* setting has a value that cannot be used."""

    def __init__(self, name: str, value: object, expected: str) -> None:
        self.setting = name
        self.value = value
        super().__init__(f"{name} = {value!r} is invalid: expected {expected}")


def setting_path(value: str) -> str:
    """Where a path setting points: a relative path is from the current directory, as Scrapy
    reads ``FEEDS``, ``JOBDIR`` and ``LOG_FILE`` (and so ``RERP_EVIDENCE``, which its feed
    storages write), and as the command line reads the same path (``scrapy-rerp store PATH``,
    ``scrapy-rerp audit FILES``). ``RERP_STORE`` is made absolute with it when the crawl
    starts, so that a spider that changes directory does not move it (docs/settings.rst,
    "Paths")."""
    return os.path.abspath(value)


def syntax_from(value: object, name: str = "syntax") -> int:
    """The engine constant for a syntax given by name (``"gym2008"``, any case) or constant.

    Raises :class:`RerpSettingsError` (a ``ValueError``) naming ``name`` otherwise.
    """
    try:
        return check_syntax(value)
    except ValueError:
        expected = "one of " + ", ".join(map(repr, SYNTAX_NAMES)) + " (or the constant)"
        raise RerpSettingsError(name, value, expected) from None


def syntax_name(syntax: int) -> str:
    """``"rfc9309"``, ``"gym2008"`` or ``"mk1996"`` for an engine constant."""
    for name, value in SYNTAX_NAMES.items():
        if value == syntax:
            return name
    raise RerpSettingsError("syntax", syntax, "RFC9309, GYM2008 or MK1996")


def _at_least(name: str, value: float, lower_name: str, lower: float) -> None:
    """A bound read after the one it may not be below: an error for ``name`` when it is."""
    if value < lower:
        raise RerpSettingsError(name, value, f"at least {lower_name} ({lower})")


class _SettingsLike(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class RerpSettings:
    """The validated configuration; build it with :meth:`from_settings`."""

    obey: bool = True  # ROBOTSTXT_OBEY
    syntax: int = RFC9309  # RERP_SYNTAX, as an engine constant
    user_agent: str | None = None  # ROBOTSTXT_USER_AGENT
    default_user_agent: str = "Scrapy"  # USER_AGENT
    max_size: int = MAX_SIZE  # RERP_MAX_SIZE, bytes
    max_redirects: int = 5  # RERP_MAX_REDIRECTS
    unreachable_max_wait: float = 300.0  # RERP_UNREACHABLE_MAX_WAIT, seconds
    retry_backoff_base: float = 1.0  # RERP_RETRY_BACKOFF_BASE, seconds
    retry_backoff_max: float = 60.0  # RERP_RETRY_BACKOFF_MAX, seconds
    lifetime: float = DAY  # RERP_LIFETIME: when the response says nothing
    min_lifetime: float = 3600.0  # RERP_MIN_LIFETIME
    max_lifetime: float = DAY  # RERP_MAX_LIFETIME
    error_lifetime: float = 3600.0  # RERP_ERROR_LIFETIME: 4xx, redirect loops, give-ups
    cache_max_origins: int = 10_000  # RERP_CACHE_MAX_ORIGINS
    cache: str = _DEFAULT_CACHE  # RERP_CACHE, dotted path of the origin cache class
    store: str | None = None  # RERP_STORE: the robots.txt store's path, None = no store
    store_max_origins: int = DEFAULT_MAX_ORIGINS  # RERP_STORE_MAX_ORIGINS
    stale_max_age: float = 30 * DAY  # RERP_STALE_MAX_AGE: oldest copy used in an outage, 0 = none
    evidence: str | None = None  # RERP_EVIDENCE: where evidence records go (a FEEDS-style URI)
    evidence_batch_size: int = 0  # RERP_EVIDENCE_BATCH_SIZE: records per file, 0 = one file
    evidence_on_failure: str = "stop"  # RERP_EVIDENCE_ON_FAILURE: "stop" or "continue"
    evidence_item_field: str | None = None  # RERP_EVIDENCE_ITEM_FIELD: an item's provenance field
    evidence_warc: str | None = None  # RERP_EVIDENCE_WARC: the same records as WARC (a URI)
    crawl_delay: bool = True  # RERP_CRAWL_DELAY
    max_crawl_delay: float = 30.0  # RERP_MAX_CRAWL_DELAY, seconds
    sitemap_discovery: bool = False  # RERP_SITEMAP_DISCOVERY
    max_parked_per_origin: int = 1000  # RERP_MAX_PARKED_PER_ORIGIN
    redis_url: str | None = None  # RERP_REDIS_URL, else scrapy-redis's REDIS_URL
    redis_prefix: str = "rerp"  # RERP_REDIS_PREFIX
    redis_timeout: float = 2.0  # RERP_REDIS_TIMEOUT, seconds per Redis call
    redis_lock_timeout: float = 30.0  # RERP_REDIS_LOCK_TIMEOUT, seconds
    slowdown: bool = True  # RERP_SLOWDOWN: 429 and 503 answers heard (cool-downs, floors)
    slowdown_max_wait: float = DAY  # RERP_SLOWDOWN_MAX_WAIT: longest cool-down, seconds
    slowdown_start_floor: float = 0.5  # RERP_SLOWDOWN_START_FLOOR: first raised floor, seconds
    slowdown_max_floor: float = 60.0  # RERP_SLOWDOWN_MAX_FLOOR: highest raised floor, seconds
    slowdown_decay_after: int = 10  # RERP_SLOWDOWN_DECAY_AFTER: good answers before halving
    usage: tuple[str, ...] = ()  # RERP_USAGE: the crawl's purposes (usage categories)
    # RERP_DOCUMENTS: dotted paths of the factories of the crawl's own document kinds
    documents: tuple[str, ...] = ()
    usage_deny_unknown: bool = False  # RERP_USAGE_DEFAULT = "deny"
    usage_drop: bool = True  # RERP_USAGE_DROP: False marks response.meta only
    page_header: bool = True  # RERP_PAGE_HEADER: X-Robots-Tag and Robots-Tag read
    page_meta: bool = True  # RERP_PAGE_META: robots meta tags of HTML heads read
    page_nofollow: bool = True  # RERP_PAGE_NOFOLLOW: requests from nofollow pages dropped
    page_strict_nofollow: bool = False  # RERP_PAGE_STRICT_NOFOLLOW: rel="nofollow" links too
    # RERP_SIGNATURE_KEY: the Ed25519 key file (a JWK), None = unsigned
    signature_key: str | None = None
    # RERP_SIGNATURE_AGENT: the key directory's URL (Signature-Agent)
    signature_agent: str | None = None
    signature_window: float = 60.0  # RERP_SIGNATURE_WINDOW: seconds from created to expires
    # RERP_ROBOTSTXT_META: added to the meta of every robots.txt request
    robotstxt_meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def legacy(self) -> bool:
        """True in the mk1996/gym2008 modes (rerp's behaviour for statuses, charset, lifetime)."""
        return self.syntax != RFC9309

    @property
    def floors(self) -> bool:
        """Crawl-delay floors are applied: ``RERP_CRAWL_DELAY`` on and a cap above 0
        (``RERP_MAX_CRAWL_DELAY = 0`` turns them off, as documented)."""
        return self.crawl_delay and self.max_crawl_delay > 0

    @property
    def syntax_name(self) -> str:
        return syntax_name(self.syntax)

    @property
    def default_charset(self) -> str:
        return default_charset(self.syntax)

    @classmethod
    def from_settings(
        cls, settings: _SettingsLike | Mapping[str, Any], *, require_obey: bool = True
    ) -> RerpSettings:
        """Read and check every setting.

        ``settings`` is a :class:`scrapy.settings.Settings` or any mapping. Raises
        :class:`RerpSettingsError` for a bad value and, when ``require_obey`` is true,
        :class:`scrapy.exceptions.NotConfigured` if ``ROBOTSTXT_OBEY`` is off (after the
        checks, so a typo never hides behind a disabled middleware).
        """
        return cls._read(_Reader(settings), require_obey)

    @classmethod
    def _read(cls, r: _Reader, require_obey: bool) -> RerpSettings:
        syntax = r.syntax("RERP_SYNTAX")
        legacy_default = WEEK if syntax != RFC9309 else DAY
        lifetime = r.seconds("RERP_LIFETIME", legacy_default)
        batched = r.integer("RERP_EVIDENCE_BATCH_SIZE", 0, minimum=0)
        min_lifetime = r.seconds("RERP_MIN_LIFETIME", min(3600.0, lifetime))
        max_lifetime = r.seconds("RERP_MAX_LIFETIME", max(legacy_default, lifetime))
        if min_lifetime > max_lifetime:
            raise RerpSettingsError(
                "RERP_MIN_LIFETIME", min_lifetime, f"at most RERP_MAX_LIFETIME ({max_lifetime})"
            )
        backoff_base = r.seconds("RERP_RETRY_BACKOFF_BASE", 1.0, positive=True)
        backoff_max = r.seconds("RERP_RETRY_BACKOFF_MAX", 60.0)
        _at_least("RERP_RETRY_BACKOFF_MAX", backoff_max, "RERP_RETRY_BACKOFF_BASE", backoff_base)
        start_floor = r.seconds("RERP_SLOWDOWN_START_FLOOR", 0.5, positive=True)
        max_floor = r.seconds("RERP_SLOWDOWN_MAX_FLOOR", 60.0)
        _at_least("RERP_SLOWDOWN_MAX_FLOOR", max_floor, "RERP_SLOWDOWN_START_FLOOR", start_floor)
        signature_key = r.optional_path("RERP_SIGNATURE_KEY")
        signature_agent = r.signature_agent("RERP_SIGNATURE_AGENT")
        if signature_agent is not None and signature_key is None:
            raise RerpSettingsError(
                "RERP_SIGNATURE_KEY", None, "a key file when RERP_SIGNATURE_AGENT is set"
            )
        signature_window = r.seconds("RERP_SIGNATURE_WINDOW", 60.0, positive=True)
        if not 1 <= signature_window <= MAX_SIGNATURE_WINDOW:
            raise RerpSettingsError(
                "RERP_SIGNATURE_WINDOW",
                signature_window,
                f"a number of seconds from 1 to {MAX_SIGNATURE_WINDOW:.0f} (a signature can be"
                " replayed until it expires)",
            )
        result = cls(
            obey=r.boolean("ROBOTSTXT_OBEY", False),
            syntax=syntax,
            user_agent=r.optional_text("ROBOTSTXT_USER_AGENT"),
            default_user_agent=r.optional_text("USER_AGENT") or "Scrapy",
            max_size=r.integer("RERP_MAX_SIZE", MAX_SIZE, minimum=1),
            max_redirects=r.integer("RERP_MAX_REDIRECTS", 5, minimum=0),
            unreachable_max_wait=r.seconds("RERP_UNREACHABLE_MAX_WAIT", 300.0),
            retry_backoff_base=backoff_base,
            retry_backoff_max=backoff_max,
            lifetime=lifetime,
            min_lifetime=min_lifetime,
            max_lifetime=max_lifetime,
            error_lifetime=r.seconds("RERP_ERROR_LIFETIME", min(3600.0, lifetime)),
            cache_max_origins=r.integer("RERP_CACHE_MAX_ORIGINS", 10_000, minimum=1),
            cache=r.dotted_path("RERP_CACHE", _DEFAULT_CACHE),
            store=r.optional_path("RERP_STORE"),
            evidence=r.evidence_uri("RERP_EVIDENCE", batched),
            evidence_batch_size=batched,
            evidence_on_failure=r.choice("RERP_EVIDENCE_ON_FAILURE", ("stop", "continue"), "stop"),
            evidence_item_field=r.optional_text("RERP_EVIDENCE_ITEM_FIELD"),
            evidence_warc=r.evidence_uri("RERP_EVIDENCE_WARC", batched),
            store_max_origins=r.integer("RERP_STORE_MAX_ORIGINS", DEFAULT_MAX_ORIGINS, minimum=1),
            stale_max_age=r.seconds("RERP_STALE_MAX_AGE", 30 * DAY),
            crawl_delay=r.boolean("RERP_CRAWL_DELAY", True),
            max_crawl_delay=r.seconds("RERP_MAX_CRAWL_DELAY", 30.0),
            sitemap_discovery=r.boolean("RERP_SITEMAP_DISCOVERY", False),
            max_parked_per_origin=r.integer("RERP_MAX_PARKED_PER_ORIGIN", 1000, minimum=1),
            redis_url=r.redis_url("RERP_REDIS_URL") or r.redis_url("REDIS_URL"),
            redis_prefix=r.optional_text("RERP_REDIS_PREFIX") or "rerp",
            redis_timeout=r.seconds("RERP_REDIS_TIMEOUT", 2.0, positive=True),
            redis_lock_timeout=r.seconds("RERP_REDIS_LOCK_TIMEOUT", 30.0, positive=True),
            slowdown=r.boolean("RERP_SLOWDOWN", True),
            slowdown_max_wait=r.seconds("RERP_SLOWDOWN_MAX_WAIT", DAY, positive=True),
            slowdown_start_floor=start_floor,
            slowdown_max_floor=max_floor,
            slowdown_decay_after=r.integer("RERP_SLOWDOWN_DECAY_AFTER", 10, minimum=1),
            usage=r.usage_categories("RERP_USAGE"),
            documents=r.callables("RERP_DOCUMENTS"),
            usage_deny_unknown=r.choice("RERP_USAGE_DEFAULT", ("allow", "deny"), "allow") == "deny",
            usage_drop=r.boolean("RERP_USAGE_DROP", True),
            page_header=r.boolean("RERP_PAGE_HEADER", True),
            page_meta=r.boolean("RERP_PAGE_META", True),
            page_nofollow=r.boolean("RERP_PAGE_NOFOLLOW", True),
            page_strict_nofollow=r.boolean("RERP_PAGE_STRICT_NOFOLLOW", False),
            robotstxt_meta=r.request_meta("RERP_ROBOTSTXT_META", ROBOTSTXT_REQUEST_META_KEYS),
            signature_key=signature_key,
            signature_agent=signature_agent,
            signature_window=signature_window,
        )
        if require_obey and not result.obey:
            from scrapy.exceptions import NotConfigured

            raise NotConfigured("ROBOTSTXT_OBEY is off")
        return result

    def clamp_lifetime(self, seconds: float | None) -> float:
        """The lifetime of a fetched robots.txt: ``seconds`` (from HTTP headers) within bounds."""
        if seconds is None:
            seconds = self.lifetime
        return min(max(seconds, self.min_lifetime), self.max_lifetime)


#: The schemes of a Redis URL (``RERP_REDIS_URL``), as redis-py reads them.
REDIS_URL_SCHEMES = ("redis", "rediss", "unix")

_REDIS_URL_EXPECTED = (
    "a redis://[[user]:password@]host[:port][/db] URL (or rediss://, or unix:///path)"
)

#: Query parameters of a Redis URL whose value is a secret (redis-py reads them as credentials).
_SECRET_QUERY = re.compile(r"(?i)((?:^|&)(?:password|username)=)[^&]*")


def redacted_url(url: str) -> str:
    """``url`` as it may be shown (a log line, a stat, an error, the evidence): its userinfo
    and any ``password=`` or ``username=`` of its query replaced by ``***``. The one way a
    Redis URL is ever shown."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    netloc, slash, path = rest.partition("/")
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    path, question, query = f"{slash}{path}".partition("?")
    if question:
        query = _SECRET_QUERY.sub(r"\1***", query)
    return f"{scheme}{sep}{netloc}{path}{question}{query}"


def _redis_url_problem(url: str) -> str | None:
    """What makes ``url`` no Redis URL (the expected form), or None when redis-py can use it:
    a scheme of :data:`REDIS_URL_SCHEMES`, a host and a port in range (a socket path for
    ``unix://``), a database number."""
    from urllib.parse import parse_qs, urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return _REDIS_URL_EXPECTED + ", with a port from 1 to 65535"
    if parts.scheme not in REDIS_URL_SCHEMES or not url.startswith(f"{parts.scheme}://"):
        return _REDIS_URL_EXPECTED
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return _REDIS_URL_EXPECTED + ", without spaces or control characters"
    db = parse_qs(parts.query).get("db", [])
    if parts.scheme == "unix":
        if not parts.path:
            return _REDIS_URL_EXPECTED + ": a unix:// URL names its socket's path"
    else:
        if not parts.hostname:
            return _REDIS_URL_EXPECTED + ", with a host"
        if port == 0:
            return _REDIS_URL_EXPECTED + ", with a port from 1 to 65535"
        if parts.path not in ("", "/"):
            db.append(parts.path[1:])
    if any(not number.isdigit() or not number.isascii() for number in db):
        return _REDIS_URL_EXPECTED + ", with a database number (0, 1, ...)"
    return None


class _Reader:
    """Typed access with messages that name the setting; ``None`` means "use the default"."""

    def __init__(self, settings: _SettingsLike | Mapping[str, Any]) -> None:
        self._settings = settings
        self.names: set[str] = set()  # every setting asked for: what the plugin knows

    def raw(self, name: str) -> Any:
        self.names.add(name)
        return self._settings.get(name)

    def syntax(self, name: str) -> int:
        value = self.raw(name)
        return RFC9309 if value is None else syntax_from(value, name)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            # The strings Scrapy's Settings.getbool() accepts (values from the command line).
            found = {"1": True, "true": True, "0": False, "false": False}.get(value.strip().lower())
            if found is not None:
                return found
        raise RerpSettingsError(name, value, "a boolean (True/False)")

    def _number(self, name: str, value: object) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            with suppress(ValueError):
                return float(value.strip())
        raise RerpSettingsError(name, value, "a number")

    def seconds(self, name: str, default: float, *, positive: bool = False) -> float:
        value = self.raw(name)
        if value is None:
            return default
        number = self._number(name, value)
        if math.isnan(number) or math.isinf(number) or number < 0 or (positive and number == 0):
            raise RerpSettingsError(
                name,
                value,
                "a positive number of seconds" if positive else "a number of seconds >= 0",
            )
        return number

    def integer(self, name: str, default: int, *, minimum: int) -> int:
        value = self.raw(name)
        if value is None:
            return default
        number = self._number(name, value)
        if not number.is_integer() or number < minimum:
            raise RerpSettingsError(name, value, f"an integer >= {minimum}")
        return int(number)

    def optional_text(self, name: str) -> str | None:
        value = self.raw(name)
        if value is None or value == "":
            return None
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        if isinstance(value, str):
            return value
        raise RerpSettingsError(name, value, "a string")

    def redis_url(self, name: str) -> str | None:
        """A Redis URL as redis-py reads it, checked here so that a bad one is a settings error
        (redis-py's own is an asyncio traceback at the first call); its password never shown."""
        value = self.optional_text(name)
        if value is not None:
            problem = _redis_url_problem(value)
            if problem is not None:
                raise RerpSettingsError(name, redacted_url(value), problem)
        return value

    def signature_agent(self, name: str) -> str | None:
        """The URL a ``Signature-Agent`` header names: http(s), with a host, and nothing that
        cannot stand in a quoted structured-field string (printable ASCII, no ``"`` or ``\\``)."""
        from urllib.parse import urlsplit

        value = self.optional_text(name)
        if value is None:
            return None
        expected = "an https:// (or http://) URL of the crawler's key directory, in printable ASCII"
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises for a port out of range
        except ValueError:
            raise RerpSettingsError(name, value, expected) from None
        if (
            parts.scheme not in ("https", "http")
            or not parts.hostname
            or any(not " " < c < "\x7f" or c in '"\\' for c in value)
        ):
            raise RerpSettingsError(name, value, expected)
        return value

    def evidence_uri(self, name: str, batched: int) -> str | None:
        """Where evidence goes: a path or a URI as ``FEEDS`` keys are written (its scheme is
        checked against Scrapy's feed storages when the crawl starts); in batches, with
        ``%(batch_id)d`` or ``%(batch_time)s`` to tell the files apart."""
        value = self.optional_path(name)
        if value is None:
            return None
        if batched and not re.search(r"%\(batch_time\)s|%\(batch_id\)", value):
            raise RerpSettingsError(
                name,
                value,
                "a URI with %(batch_id)d or %(batch_time)s, as RERP_EVIDENCE_BATCH_SIZE"
                f" = {batched} writes several files",
            )
        return value

    def optional_path(self, name: str) -> str | None:
        """A file path: a string or an ``os.PathLike`` (users write ``Path(...)``)."""
        value = self.raw(name)
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if value is None or value == "":
            return None
        if isinstance(value, str):
            return value
        raise RerpSettingsError(name, value, "a path (a string)")

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.raw(name)
        if value is None or value == "":
            return default
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        raise RerpSettingsError(name, value, "one of " + ", ".join(map(repr, choices)))

    def usage_categories(self, name: str) -> tuple[str, ...]:
        """Usage categories: one name, a comma-separated string or a list; Content-Signal's
        names are read as the vocabulary's (``ai-train`` is ``train-ai``)."""
        value = self.raw(name)
        if value is None or value == "" or value == [] or value == ():
            return ()
        names = value.split(",") if isinstance(value, str) else value
        expected = (
            "a usage category or a list of them: "
            + ", ".join(map(repr, USAGE_CATEGORIES))
            + " (Content-Signal's 'ai-train' is read as 'train-ai')"
        )
        if not isinstance(names, (list, tuple)):
            raise RerpSettingsError(name, value, expected)
        try:  # each category once, in the order given
            return tuple(dict.fromkeys(usage_category(item) for item in names))
        except (TypeError, ValueError):
            raise RerpSettingsError(name, value, expected) from None

    def request_meta(self, name: str, reserved: frozenset[str]) -> Mapping[str, Any]:
        """A dict of ``Request.meta`` keys (or its JSON text, from the command line) that sets
        none of the ``reserved`` keys."""
        given = value = self.raw(name)
        if value is None or value == "":
            return MappingProxyType({})
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise RerpSettingsError(name, given, "a dict, or its JSON text") from None
        if hasattr(value, "copy_to_dict"):  # a Scrapy BaseSettings given as the dict
            value = value.copy_to_dict()
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise RerpSettingsError(name, given, "a dict of Request.meta keys (str) and values")
        taken = sorted(reserved & value.keys())
        if taken:
            raise RerpSettingsError(
                name,
                given,
                "meta keys other than those the middleware sets itself on robots.txt requests "
                f"({', '.join(taken)})",
            )
        return MappingProxyType(dict(value))

    def callables(self, name: str) -> tuple[str, ...]:
        """Dotted import paths of callables (or the callables): a list, or one path."""
        given = value = self.raw(name)
        if value is None or value == "" or value == [] or value == ():
            return ()
        expected = "a list of callables or their dotted import paths"
        items = [value] if isinstance(value, str) or callable(value) else value
        if not isinstance(items, (list, tuple)):
            raise RerpSettingsError(name, given, expected)
        paths: dict[str, None] = {}  # each path once, in the order given
        for item in items:
            if callable(item) and hasattr(item, "__qualname__"):
                item = f"{item.__module__}.{item.__qualname__}"
            path, found = _imported(name, given, item, expected, "importable callables")
            if not callable(found):
                raise RerpSettingsError(name, given, f"callables, not {type(found).__name__}")
            paths[path] = None
        return tuple(paths)

    def dotted_path(self, name: str, default: str) -> str:
        value = self.raw(name)
        if value is None or value == "":
            return default
        if isinstance(value, type):
            return f"{value.__module__}.{value.__qualname__}"
        expected = "a class or its dotted import path"
        path, found = _imported(name, value, value, expected, "an importable class")
        if not isinstance(found, type):
            raise RerpSettingsError(name, value, f"a class, not {type(found).__name__}")
        return path


def _imported(
    name: str, given: object, value: object, expected: str, importable: str
) -> tuple[str, Any]:
    """The dotted import path ``value`` (stripped) and what it names; else the error of ``name``
    (its value ``given``): ``expected`` for no path, ``importable`` (and why) for one that
    names nothing."""
    if not isinstance(value, str) or "." not in value.strip():
        raise RerpSettingsError(name, given, expected)
    path = value.strip()
    module, _, attribute = path.rpartition(".")
    try:
        return path, getattr(import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise RerpSettingsError(name, given, f"{importable} ({exc})") from exc


@lru_cache(maxsize=1)
def known_settings() -> frozenset[str]:
    """Every ``RERP_*`` setting the plugin reads (those :meth:`RerpSettings.from_settings`
    asks for, with every default in place)."""
    reader = _Reader({})
    RerpSettings._read(reader, require_obey=False)
    return frozenset(name for name in reader.names if name.startswith("RERP_"))


def unknown_settings(settings: Any) -> list[tuple[str, str | None]]:
    """``RERP_*`` names set in ``settings`` that the plugin does not read, each with what it
    may have meant (or None): the closest known name, or the settings a prefix begins
    (``RERP_PAGE``: ``"one of RERP_PAGE_HEADER, RERP_PAGE_META, ..."``)."""
    known = known_settings()
    # Compared without the common prefix, which would make any two names look alike. Every
    # known name is a candidate, and so is every word prefix of one, standing for the names it
    # begins.
    begun: dict[str, list[str]] = {}
    for known_name in sorted(known):
        words = known_name.removeprefix("RERP_").split("_")
        for count in range(1, len(words) + 1):
            begun.setdefault("_".join(words[:count]), []).append(known_name)
    found = []
    for name in sorted(n for n in settings if isinstance(n, str) and n.startswith("RERP_")):
        if name not in known:
            tail = name.removeprefix("RERP_").rstrip("_")
            close = difflib.get_close_matches(tail, begun, n=1, cutoff=0.6)
            if not close:
                found.append((name, None))
                continue
            meant = f"RERP_{close[0]}"
            names = [meant] if meant in known else begun[close[0]]
            found.append((name, names[0] if len(names) == 1 else "one of " + ", ".join(names)))
    return found


# Per crawler: its validated settings, or the error, reported once whatever asks.
_CHECKED: weakref.WeakKeyDictionary[Crawler, RerpSettings | RerpSettingsError] = (
    weakref.WeakKeyDictionary()
)


def settings_for(
    crawler: Crawler, close_when_opened: Callable[[Crawler, str], None]
) -> RerpSettings | None:
    """The crawler's validated settings (``ROBOTSTXT_OBEY`` not required), or None when one
    is bad.

    The first call for a crawler logs a WARNING for every unknown ``RERP_*`` name and, for a
    bad value, the error as one ERROR line; the crawl is then closed when the spider opens
    (``close_when_opened(crawler, CLOSE_REASON)``: Scrapy's way differs between versions),
    before any request is downloaded, as a crawl that could not start (``scrapy crawl`` exits
    with status 1). Later calls say nothing more. Call it once the settings
    are final (from a component's ``from_crawler``).
    """
    checked = _CHECKED.get(crawler)
    if checked is None:
        for name, close in unknown_settings(crawler.settings):
            logger.warning(
                "Unknown setting %s: scrapy_rerp has no such setting, it is ignored%s",
                name,
                f"; did you mean {close}?" if close else "",
                extra={"crawler": crawler},
            )
        try:
            checked = RerpSettings.from_settings(crawler.settings, require_obey=False)
        except RerpSettingsError as error:
            checked = error
            logger.error("%s; the crawl stops before it starts", error, extra={"crawler": crawler})
            close_when_opened(crawler, CLOSE_REASON)
        _CHECKED[crawler] = checked
    return checked if isinstance(checked, RerpSettings) else None


def crawler_user_agent(settings: RerpSettings, header: bytes | None) -> str:
    """The user agent robots.txt and a page's directives are matched against:
    ``ROBOTSTXT_USER_AGENT``, else the request's ``User-Agent`` header (``header``, as Scrapy's
    ``Headers.get`` gives it), else ``USER_AGENT``.

    The one choice of it: ``RobotsTxtMiddleware.user_agent_for`` (which the gate and the new-rules
    listener are given) and the page layer both ask here."""
    if settings.user_agent:
        return settings.user_agent
    return header.decode("utf-8", "replace") if header else settings.default_user_agent
