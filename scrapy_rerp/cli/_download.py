"""robots.txt downloaded as a crawl would, without Scrapy: for the command line.

The same course as the crawl's (:mod:`scrapy_rerp.crawl.transport`), over urllib: :func:`follow`
makes each request a :class:`~scrapy_rerp.core.download.Course` asks for, which decides the
redirects (up to ``RERP_MAX_REDIRECTS``, to any host, to http and https URLs only), what each
status means (the status ladder) and where the body is cut; the body is read by
:func:`scrapy_rerp.core.body.read_body` (Content-Encoding undone and capped at ``RERP_MAX_SIZE``,
charset from Content-Type) and its lifetime comes from the same header readers. One download,
no retry: an unreachable robots.txt is reported as such (a crawl would park its requests and
retry).

Every download the command line makes (robots.txt here, a page and a tdmrep.json in
:mod:`scrapy_rerp.cli._page`) is :func:`follow`'s, and runs :func:`within` its ``--timeout``: a
deadline for the whole download, never a timeout between two reads.
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

from scrapy_rerp.cli._output import CliError
from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.body import Body, read_body
from scrapy_rerp.core.download import Course, Ended, Hop
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.status import ALLOW_ALL, PARSED, TIMED_OUT, UNREACHABLE, download_failure
from scrapy_rerp.core.wording import duration
from scrapy_rerp.engine import RobotsTxt

__all__ = [
    "Answered",
    "Deadline",
    "Download",
    "Headers",
    "InvalidUrl",
    "Unanswered",
    "check_url",
    "download",
    "follow",
    "iso",
    "network_reason",
    "timed_out",
    "within",
]

T = TypeVar("T")


class InvalidUrl(CliError, ValueError):
    """A URL no request can be made of: an error of the command line's input."""


@dataclass(kw_only=True)
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
        return None if self.lifetime is None else iso(self.fetched_at + self.lifetime)

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

    def pairs(self) -> list[tuple[str, str]]:
        """The headers as (name, value) pairs, in the order sent."""
        return list(self._message.items())

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


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Every 3xx comes back as an HTTPError, its Location unread (urllib's own handler would
    resolve a malformed Location, and raise)."""

    def http_error_302(self, *args: Any, **kwargs: Any) -> None:
        return None

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


class _Watched:
    """urllib's handlers for http and https, with connections whose sockets the deadline
    watches and whose connect waits no longer than the time left."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class: Any, request: Any, **kwargs: Any) -> Any:
        deadline = self.deadline

        class Connection(http_class):
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
    course = Course(url, settings.max_redirects, settings.max_size, legacy=settings.legacy)
    result = Download(
        url=url, outcome=UNREACHABLE, reason=timed_out(timeout), fetched_at=time.time()
    )
    try:
        answer = within(timeout, lambda deadline: follow(course, user_agent, deadline))
    except Unanswered as error:
        answer, result.reason = None, str(error)
    # The redirects copied: a download past its deadline ends in its own thread, soon after.
    result.final_url, result.status = course.hop.url, course.status
    result.redirects = list(course.redirects)
    return result if answer is None else _read(answer, settings, result)


def _read(answer: Answered, settings: RerpSettings, result: Download) -> Download:
    """What the end of a robots.txt download's course says, into ``result``."""
    ended, headers = answer.ended, answer.headers
    result.final_url, result.outcome, result.reason = ended.url, ended.outcome, ended.reason
    retry_after = headers.get(b"Retry-After")
    wait = ladder.retry_after(headers)  # as a crawl reads it
    if retry_after is not None:
        result.retry_after, result.retry_after_seconds = retry_after.decode("latin-1"), wait
    if ended.outcome == UNREACHABLE:
        result.reason += "" if wait is None else f", Retry-After {duration(wait)}"
        return result
    lifetime = None
    if ended.outcome == PARSED:
        encodings, content_type = headers.getlist(b"Content-Encoding"), headers.get(b"Content-Type")
        body = read_body(answer.body, encodings, content_type, settings.max_size, answer.cut)
        if body.undecodable is None:
            result.body, lifetime = body, ladder.lifetime_from_headers(headers)
        else:
            result.outcome, result.reason = ALLOW_ALL, body.undecodable
    # Rules for their headers' lifetime; "allow all" and "disallow all" for RERP_ERROR_LIFETIME.
    result.lifetime = ladder.entry_lifetime(result.outcome, lifetime, settings)
    return result


class Unanswered(Exception):
    """No answer, or no whole body, before an error or the deadline: why, in a few words."""


@dataclass(kw_only=True)
class Answered:
    """The answer a course ended with; its body read up to the cap and a byte more, if read."""

    ended: Ended
    status: int
    headers: Headers
    body: bytes
    cut: bool  # the body is over the cap


def follow(
    course: Course,
    user_agent: str,
    deadline: Deadline,
    may_follow: Callable[[str], bool] | None = None,
    read: bool = False,
) -> Answered:
    """Each request ``course`` asks for, made with urllib within ``deadline``, to its end or to
    a redirect *may_follow* refuses; the body read for PARSED, or always with *read*."""
    # Connections the deadline watches; a 3xx comes back as an HTTPError, for the course.
    opener = urllib.request.build_opener(
        _NoRedirects, _HTTPHandler(deadline), _HTTPSHandler(deadline)
    )
    sent = {"User-Agent": user_agent, "Accept-Encoding": "gzip, deflate"}
    step: Hop | Ended = course.hop
    while True:
        assert isinstance(step, Hop)
        request = urllib.request.Request(step.url, headers=sent)
        try:
            response = opener.open(request, timeout=deadline.left())
        except urllib.error.HTTPError as error:
            response = error  # a status outside 2xx: its headers still count
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise Unanswered(network_reason(error, deadline)) from error
        with response:
            status = response.status if response.status is not None else 0
            headers = Headers(response.headers)
            asked, step = step.url, course.answer(status, headers.get(b"Location"))
            if isinstance(step, Hop):
                if may_follow is None or may_follow(step.url):
                    continue
                step = Ended(
                    outcome=ALLOW_ALL,
                    reason=f"redirect to {step.url} refused",
                    url=asked,
                    status=status,
                )
            body = b""
            if read or step.outcome == PARSED:
                try:
                    body = response.read(course.max_size + 1)
                except (OSError, http.client.HTTPException) as error:
                    raise Unanswered(network_reason(error, deadline)) from error
            return Answered(
                ended=step,
                status=status,
                headers=headers,
                body=body,
                cut=course.received(len(body)),
            )


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


def iso(when: float) -> str:
    """A wall-clock time as UTC, ISO 8601: ``2026-11-28T16:00:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
