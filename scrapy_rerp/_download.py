"""robots.txt downloaded as a crawl would, without Scrapy: for the command line.

The same rules as the crawl (:mod:`scrapy_rerp._transport`), over urllib: what each status
means is :func:`scrapy_rerp._policy.status_outcome`, redirects are followed here (up to
``RERP_MAX_REDIRECTS``, to any host), the body is read by :func:`scrapy_rerp._body.read_body`
(Content-Encoding undone and capped at ``RERP_MAX_SIZE``, charset from Content-Type) and its
lifetime comes from the same header readers. One download, no retry: an unreachable robots.txt
is reported as such (a crawl would park its requests and retry).
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from email.message import Message
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy_rerp import _policy
from scrapy_rerp._body import Body, read_body
from scrapy_rerp._policy import ALLOW_ALL, DISALLOW_ALL, PARSED, REDIRECT, UNREACHABLE
from scrapy_rerp._settings import RerpSettings
from scrapy_rerp._slowdown import retry_after_wait
from scrapy_rerp.engine import RobotsTxt

__all__ = ["Download", "InvalidUrl", "check_url", "download"]


class InvalidUrl(ValueError):
    """A URL no request can be made of."""


@dataclass
class Download:
    """What one robots.txt download (redirects followed) tells a crawler."""

    url: str
    outcome: str  # _policy.PARSED, ALLOW_ALL, DISALLOW_ALL or UNREACHABLE
    reason: str  # "HTTP 200", "HTTP 503", "connection refused", ...
    final_url: str | None = None
    status: int | None = None
    redirects: list[str] = field(default_factory=list)
    body: Body | None = None  # for PARSED
    lifetime: float | None = None  # seconds the answer is used before a refetch
    fetched_at: float = 0.0
    retry_after: str | None = None  # the last answer's Retry-After header, as sent
    retry_after_seconds: float | None = None  # what a crawl reads in it (None: no usable wait)

    def rules(self, syntax: int) -> RobotsTxt:
        """The rules a crawler applies, in ``syntax``."""
        if self.outcome == PARSED and self.body is not None:
            return self.body.rules(syntax)
        if self.outcome == ALLOW_ALL:
            return RobotsTxt.allow_all(syntax)
        return RobotsTxt.disallow_all(syntax)  # disallow all; unreachable: nothing for now

    def as_dict(self) -> dict[str, Any]:
        expires = None if self.lifetime is None else self.fetched_at + self.lifetime
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
            "expires": None if expires is None else _iso(expires),
            "retry_after": None
            if self.retry_after is None
            else {"value": self.retry_after, "seconds": self.retry_after_seconds},
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
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # every 3xx comes back as an HTTPError; redirects are followed below


class _Headers:
    """urllib's headers as Scrapy's ``Headers.get`` reads them (bytes keys and values)."""

    def __init__(self, message: Message) -> None:
        self._message = message

    def get(self, key: bytes, def_val: bytes | None = None) -> bytes | None:
        value = self._message.get(key.decode("latin-1"))
        return def_val if value is None else value.encode("latin-1", "replace")

    def getlist(self, key: bytes) -> list[bytes]:
        values = self._message.get_all(key.decode("latin-1")) or []
        return [v.encode("latin-1", "replace") for v in values]


def download(url: str, settings: RerpSettings, user_agent: str, timeout: float = 30.0) -> Download:
    """Download ``url`` (a robots.txt URL) once, as the middleware would."""
    check_url(url)
    opener = urllib.request.build_opener(_NoRedirects)
    result = Download(url, UNREACHABLE, "", fetched_at=time.time())
    current = url
    for hop in range(settings.max_redirects + 1):
        request = urllib.request.Request(
            current,
            headers={"User-Agent": user_agent, "Accept-Encoding": "gzip, deflate"},
        )
        try:
            response = opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as error:
            response = error  # a status outside 2xx: its headers still count
        except (OSError, http.client.HTTPException, ValueError) as error:
            result.final_url = current
            result.reason = _network_reason(error)
            return result  # unreachable
        with response:
            status = response.status if response.status is not None else 0
            headers = _Headers(response.headers)
            result.final_url = current
            result.status = status
            result.reason = f"HTTP {status}"
            retry_after = headers.get(b"Retry-After")
            if retry_after is not None:  # read as a crawl reads it on a page (_slowdown)
                result.retry_after = retry_after.decode("latin-1")
                result.retry_after_seconds = retry_after_wait(
                    retry_after, headers.get(b"Date"), time.time()
                )
            location = headers.get(b"Location")
            outcome = _policy.status_outcome(
                status, legacy=settings.legacy, has_location=bool(location)
            )
            if outcome == REDIRECT:
                assert location is not None
                if hop == settings.max_redirects:
                    return _ends(
                        result, ALLOW_ALL, f"more than {settings.max_redirects} redirects", settings
                    )
                target = urljoin(current, location.decode("latin-1"))
                try:
                    current = check_url(target)
                except InvalidUrl as exc:
                    return _ends(result, ALLOW_ALL, f"bad redirect target: {exc}", settings)
                result.redirects.append(current)
                continue
            if outcome == PARSED:
                try:
                    raw = response.read(settings.max_size + 1)
                except (OSError, http.client.HTTPException) as error:
                    result.reason = _network_reason(error)
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
                result.lifetime = _policy.entry_lifetime(
                    PARSED, _policy.lifetime_from_headers(headers), settings
                )
                return result
            if outcome == UNREACHABLE:
                retry = _policy.retry_after(headers)
                if retry is not None:
                    result.reason += f", Retry-After {retry:g}s"
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
    result.lifetime = _policy.entry_lifetime(outcome, None, settings)
    return result


def _network_reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None) or error
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return f"DNS lookup failed ({reason.strerror or reason})"
    text = str(reason) or type(reason).__name__
    return f"{type(reason).__name__}: {text}" if text != type(reason).__name__ else text


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
