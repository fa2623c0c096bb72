"""robots.txt downloaded as a crawl would, without Scrapy: for the command line.

The same rules as the crawl (:mod:`scrapy_rerp.crawl.transport`), over urllib: what each status
means is :func:`scrapy_rerp.core.status.status_outcome`; redirects are followed here (up to
``RERP_MAX_REDIRECTS``, to any host, to http and https URLs only, as
:func:`scrapy_rerp.core.urls.redirect_target` says for the crawl); the body is read by
:func:`scrapy_rerp.core.body.read_body` (Content-Encoding undone and capped at ``RERP_MAX_SIZE``,
charset from Content-Type) and its lifetime comes from the same header readers. One download,
no retry: an unreachable robots.txt is reported as such (a crawl would park its requests and
retry).

Every download the command line makes (robots.txt here, a page and a tdmrep.json in
:mod:`scrapy_rerp.cli._page`) runs :func:`within` its ``--timeout``: a deadline for the whole
download, never a timeout between two reads.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, TypeVar
from urllib.parse import urlsplit

from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.body import Body, read_body
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.status import (
    ALLOW_ALL,
    DISALLOW_ALL,
    PARSED,
    REDIRECT,
    TIMED_OUT,
    UNREACHABLE,
    download_failure,
)
from scrapy_rerp.core.urls import redirect_target, without_userinfo
from scrapy_rerp.core.wording import duration
from scrapy_rerp.engine import RobotsTxt

__all__ = [
    "Deadline",
    "Download",
    "Headers",
    "InvalidUrl",
    "check_url",
    "download",
    "network_reason",
    "timed_out",
    "within",
]

T = TypeVar("T")


class InvalidUrl(ValueError):
    """A URL no request can be made of."""


@dataclass
class Download:
    """What one robots.txt download (redirects followed) tells a crawler."""

    url: str
    outcome: str  # ladder.PARSED, ALLOW_ALL, DISALLOW_ALL or UNREACHABLE
    reason: str  # "HTTP 200", "HTTP 503", "connection refused", ...
    final_url: str | None = None
    status: int | None = None
    redirects: list[str] = field(default_factory=list)
    body: Body | None = None  # for PARSED
    lifetime: float | None = None  # seconds the answer is used before a refetch
    fetched_at: float = 0.0
    retry_after: str | None = None  # the last answer's Retry-After header, as sent
    retry_after_seconds: float | None = None  # what a crawl reads in it (None: no usable wait)
    from_store: bool = False  # read from a robots.txt store (fetch --store), not downloaded

    def rules(self, syntax: int) -> RobotsTxt:
        """The rules a crawler applies, in ``syntax``."""
        if self.outcome == PARSED and self.body is not None:
            return self.body.rules(syntax)
        if self.outcome == ALLOW_ALL:
            return RobotsTxt.allow_all(syntax)
        return RobotsTxt.disallow_all(syntax)  # disallow all; unreachable: nothing for now

    @property
    def expires(self) -> str | None:
        """When a crawl fetches it again (UTC, ISO 8601), if it keeps the answer at all."""
        return None if self.lifetime is None else _iso(self.fetched_at + self.lifetime)

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "outcome": self.outcome,
            "reason": self.reason,
            "redirects": list(self.redirects),
            "truncated": bool(self.body and self.body.truncated),
            "bytes": len(self.body.data) if self.body is not None else None,
            "lifetime": self.lifetime,
            "expires": self.expires,
            "retry_after": None
            if self.retry_after is None
            else {"value": self.retry_after, "seconds": self.retry_after_seconds},
            "from_store": self.from_store,
        }


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL a request can be made of, else :class:`InvalidUrl`."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise InvalidUrl(f"{url!r} is not a valid URL: {exc}") from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidUrl(f"{url!r} is not an http:// or https:// URL")
    return url


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Every 3xx comes back as an HTTPError, its Location unread: redirects are followed below
    (urllib's own handler would resolve a malformed Location, and raise)."""

    def http_error_302(self, *args: Any, **kwargs: Any) -> None:
        return None

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """urllib's redirects, each target first put to *may_follow* (a crawl asks robots.txt about
    every hop, RedirectMiddleware's request going through the robots.txt middleware again): a
    target it refuses is not requested, and the 3xx comes back as an HTTPError."""

    def __init__(self, may_follow: Callable[[str], bool]) -> None:
        self.may_follow = may_follow

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        if not self.may_follow(newurl):
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Headers:
    """urllib's headers as Scrapy's ``Headers.get`` reads them (bytes keys and values)."""

    def __init__(self, message: Message) -> None:
        self._message = message

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Headers:
        """Headers kept as (name, value) pairs, read the same way."""
        message = Message()
        for name, value in pairs:
            message[name] = value
        return cls(message)

    def get(self, key: bytes, def_val: bytes | None = None) -> bytes | None:
        value = self._message.get(key.decode("latin-1"))
        return def_val if value is None else value.encode("latin-1", "replace")

    def getlist(self, key: bytes) -> list[bytes]:
        values = self._message.get_all(key.decode("latin-1")) or []
        return [v.encode("latin-1", "replace") for v in values]


class Deadline:
    """When a whole download must be over: the seconds left, and the sockets to shut when the
    time is up (a server that sends a byte a second never trips a per-read timeout)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.passed = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []

    def left(self) -> float:
        """Seconds left, never 0 (a socket timeout of 0 would make it non-blocking)."""
        return max(self.end - time.monotonic(), 0.001)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            passed = self.passed
        if passed:
            _shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.passed = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def opener(
        self, follow_redirects: bool, may_follow: Callable[[str], bool] | None = None
    ) -> urllib.request.OpenerDirector:
        """urllib's opener for http and https whose connections this deadline watches; without
        *follow_redirects*, a 3xx comes back as an HTTPError (followed by the caller); with
        *may_follow*, a redirect is followed only to a target it accepts."""
        handlers: list[Any] = [_HTTPHandler(self), _HTTPSHandler(self)]
        if not follow_redirects:
            handlers.insert(0, _NoRedirects)
        elif may_follow is not None:
            handlers.insert(0, _CheckedRedirects(may_follow))
        return urllib.request.build_opener(*handlers)


def within(seconds: float, work: Callable[[Deadline], T]) -> T | None:
    """``work(deadline)``, the deadline *seconds* from now, run in a thread of its own so that
    nothing (a DNS lookup neither) outlasts it: what it returns, or None when it is not done
    by then (its sockets are then shut, and it ends soon after). What it raises is raised here.
    """
    deadline = Deadline(seconds)
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work(deadline))
        except BaseException as error:  # noqa: BLE001 - raised again below, in the caller
            failed.append(error)

    worker = threading.Thread(target=run, name="scrapy-rerp download", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        deadline.expire()
        return None
    if failed:
        raise failed[0]
    return done[0]


def _shut(sock: socket.socket) -> None:
    """Wake whatever waits on ``sock``: its reads end, and so does the download."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # not connected, or closed already


class _Watched:
    """urllib's handlers for http and https, with connections whose sockets the deadline
    watches and whose connect waits no longer than the time left."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class: Any, request: Any, **kwargs: Any) -> Any:
        deadline = self.deadline

        class Connection(http_class):  # type: ignore[misc, valid-type]
            def connect(self) -> None:
                self.timeout = deadline.left()
                super().connect()
                deadline.watch(self.sock)

        return super().do_open(Connection, request, **kwargs)  # type: ignore[misc]


class _HTTPHandler(_Watched, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_Watched, urllib.request.HTTPSHandler):
    pass


def download(url: str, settings: RerpSettings, user_agent: str, timeout: float = 30.0) -> Download:
    """Download ``url`` (a robots.txt URL) once, as the middleware would.

    ``timeout`` is a deadline for the whole download, every redirect included, from the DNS
    lookup to the last byte of the body: past it robots.txt is unreachable ("timed out"),
    however slowly the server keeps sending (:func:`within`).
    """
    check_url(url)
    result = Download(url, UNREACHABLE, "", fetched_at=time.time())
    followed = within(
        timeout, lambda deadline: _follow(url, settings, user_agent, deadline, result)
    )
    if followed is None:
        return Download(
            url,
            UNREACHABLE,
            timed_out(timeout),
            final_url=result.final_url or url,
            status=result.status,
            redirects=list(result.redirects),
            fetched_at=result.fetched_at,
        )
    return followed


def _follow(
    url: str, settings: RerpSettings, user_agent: str, deadline: Deadline, result: Download
) -> Download:
    """The download itself, redirects followed, into ``result``."""
    opener = deadline.opener(follow_redirects=False)
    current = url
    for hop in range(settings.max_redirects + 1):
        request = urllib.request.Request(
            current,
            headers={"User-Agent": user_agent, "Accept-Encoding": "gzip, deflate"},
        )
        try:
            response = opener.open(request, timeout=deadline.left())
        except urllib.error.HTTPError as error:
            response = error  # a status outside 2xx: its headers still count
        except (OSError, http.client.HTTPException, ValueError) as error:
            result.final_url = current
            result.reason = network_reason(error, deadline)
            return result  # unreachable
        with response:
            status = response.status if response.status is not None else 0
            headers = Headers(response.headers)
            result.final_url = current
            result.status = status
            result.reason = f"HTTP {status}"
            retry_after = headers.get(b"Retry-After")
            wait = ladder.retry_after(headers)  # as a crawl reads it
            if retry_after is not None:
                result.retry_after = retry_after.decode("latin-1")
                result.retry_after_seconds = wait
            location = headers.get(b"Location")
            outcome = ladder.status_outcome(
                status, legacy=settings.legacy, has_location=bool(location)
            )
            if outcome == REDIRECT:
                assert location is not None
                if hop == settings.max_redirects:
                    return _ends(
                        result, ALLOW_ALL, f"more than {settings.max_redirects} redirects", settings
                    )
                target = location.decode("latin-1")
                try:
                    current = redirect_target(current, target)
                except ValueError as exc:
                    why = f"bad redirect target {without_userinfo(target)[:200]!r}: {exc}"
                    return _ends(result, ALLOW_ALL, why, settings)
                result.redirects.append(current)
                continue
            if outcome == PARSED:
                try:
                    raw = response.read(settings.max_size + 1)
                except (OSError, http.client.HTTPException) as error:
                    result.reason = network_reason(error, deadline)
                    return result  # unreachable
                body = read_body(
                    raw,
                    headers.getlist(b"Content-Encoding"),
                    headers.get(b"Content-Type"),
                    settings.max_size,
                )
                if body.undecodable is not None:
                    return _ends(result, ALLOW_ALL, body.undecodable, settings)
                result.body = body
                result.outcome = PARSED
                result.lifetime = ladder.entry_lifetime(
                    PARSED, ladder.lifetime_from_headers(headers), settings
                )
                return result
            if outcome == UNREACHABLE:
                if wait is not None:
                    result.reason += f", Retry-After {duration(wait)}"
                return result
            if outcome == DISALLOW_ALL:
                return _ends(result, DISALLOW_ALL, result.reason, settings)
            if 300 <= status < 400:
                return _ends(result, ALLOW_ALL, f"{status} without Location", settings)
            return _ends(result, ALLOW_ALL, result.reason, settings)
    raise AssertionError("unreachable")  # pragma: no cover


def _ends(result: Download, outcome: str, reason: str, settings: RerpSettings) -> Download:
    """ "Allow all" or "disallow all", kept for RERP_ERROR_LIFETIME."""
    result.outcome = outcome
    result.reason = reason
    result.lifetime = ladder.entry_lifetime(outcome, None, settings)
    return result


def network_reason(error: BaseException, deadline: Deadline) -> str:
    """Why the download got no answer (:func:`scrapy_rerp.core.status.download_failure`), a
    timeout saying how long it was given."""
    words = download_failure(error)
    if deadline.passed or words == TIMED_OUT:
        return timed_out(deadline.seconds)
    return words


def timed_out(seconds: float) -> str:
    """``timed out: not downloaded within N s``: a download over its deadline."""
    return f"{TIMED_OUT}: not downloaded within {duration(seconds)}"


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
