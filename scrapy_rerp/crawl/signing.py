"""Web Bot Auth in a crawl: every request signed (``RERP_SIGNATURE_KEY``, docs/identity.rst).

:class:`SigningMiddleware` signs each HTTP(S) request as it leaves for the downloader, with the
headers :class:`scrapy_rerp.core.identity.RequestSigner` makes: ``Signature-Input`` and
``Signature`` over ``@authority`` (and ``Signature-Agent``, sent when ``RERP_SIGNATURE_AGENT``
names the key directory). It sits closest to the downloader
(:data:`SIGNING_MIDDLEWARE_PRIORITY`), after every middleware that may change what it covers,
so it signs what is sent: a redirect hop comes back through it and is signed for its own
authority, and so are the per-origin documents (robots.txt, tdmrep.json) and the media
pipelines' downloads, which pass through the same chain.

The key is loaded once, as the crawl is built; one that cannot sign (missing, unreadable,
malformed, not Ed25519, readable by others), or ``cryptography`` missing, stops the crawl
before anything is sent, with one ERROR line that never shows the key. The key stays inside
:class:`~scrapy_rerp.core.identity.SigningKey` (whose ``repr`` is its keyid): what a request
carries in its meta (:data:`SIGNED_META`) is the keyid and the URL signed, which the evidence's
decision records show.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest, NotConfigured

from scrapy_rerp.core import loggers
from scrapy_rerp.core.identity import RequestSigner, SigningKey, SigningKeyError, load_key
from scrapy_rerp.core.settings import CLOSE_REASON, RerpSettingsError, settings_for
from scrapy_rerp.crawl.compat import close_when_opened, component_priorities, loaded

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_rerp.core.settings import RerpSettings

__all__ = [
    "SIGNED_META",
    "SIGNING_MIDDLEWARE_PRIORITY",
    "SigningMiddleware",
    "check_signing_enabled",
    "signed_with",
]

logger = logging.getLogger(loggers.IDENTITY)

#: The signing middleware's place: after UserAgent (500), DefaultHeaders (400), HttpCompression
#: (590), Redirect (600), HttpCache (900) and the answers middleware (950); lower runs first on
#: the way out, so this one runs last.
SIGNING_MIDDLEWARE_PRIORITY = 990
#: ``Request.meta`` key of a signed request: ``{"keyid": ..., "url": ...}``, the key and the URL
#: its signature was made for (a redirect's copy keeps its meta until it is signed again).
SIGNED_META = "rerp_signed"
_SCHEMES = ("http://", "https://")


def signed_with(request: Request) -> str | None:
    """The keyid that signed ``request`` as it was sent, or None when it was not signed (not
    yet, as a redirect refused before it reached the signing middleware)."""
    signed = request.meta.get(SIGNED_META)
    if isinstance(signed, dict) and signed.get("url") == request.url:
        keyid = signed.get("keyid")
        return keyid if isinstance(keyid, str) else None
    return None


def check_signing_enabled(crawler: Crawler, settings: RerpSettings) -> None:
    """Raise :class:`RerpSettingsError` when ``RERP_SIGNATURE_KEY`` is set and no
    ``SigningMiddleware`` is enabled (middlewares listed by hand, without the Addon): the crawl
    would send every request unsigned."""
    if settings.signature_key is None:
        return
    middlewares = component_priorities(crawler.settings, "DOWNLOADER_MIDDLEWARES")
    if any(p is not None and loaded(key) is SigningMiddleware for key, p in middlewares.items()):
        return
    raise RerpSettingsError(
        "RERP_SIGNATURE_KEY",
        settings.signature_key,
        "a key with scrapy_rerp.SigningMiddleware enabled in DOWNLOADER_MIDDLEWARES (the Addon"
        " enables it at 990); without it no request is signed",
    )


class SigningMiddleware:
    """Signs every HTTP(S) request the crawl sends (its settings: ``RERP_SIGNATURE_*``, its stat
    ``robotstxt/signed``). ``scrapy_rerp.Addon`` enables it at
    :data:`SIGNING_MIDDLEWARE_PRIORITY`; without ``RERP_SIGNATURE_KEY`` it is not built."""

    def __init__(
        self,
        key: SigningKey,
        agent: str | None,
        window: float,
        *,
        stats: StatsCollector | None = None,
    ) -> None:
        self.key = key
        self.agent = agent
        self.window = window
        self.stats = stats
        self.signer = RequestSigner(key, agent, window)

    def __repr__(self) -> str:
        return f"<scrapy_rerp.SigningMiddleware keyid={self.key.keyid!r}>"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SigningMiddleware | _NotSigning:
        settings = settings_for(crawler, close_when_opened)
        if settings is None:
            # A bad setting, logged once: the crawl closes as the spider opens, and nothing
            # leaves unsigned that may have been meant to be signed.
            return _NotSigning()
        if settings.signature_key is None:
            # Without a message: Scrapy logs a WARNING for one, and no key is the usual case.
            raise NotConfigured
        try:
            key = load_key(settings.signature_key)
        except SigningKeyError as error:
            problem = str(error)
        except ImportError:
            problem = "signing needs cryptography: pip install -e './scrapy-rerp[identity]'"
        else:
            logger.info(
                "Web Bot Auth: requests signed with keyid %(keyid)s%(agent)s",
                {
                    "keyid": key.keyid,
                    "agent": f", Signature-Agent {settings.signature_agent}"
                    if settings.signature_agent
                    else "",
                },
                extra={"crawler": crawler},
            )
            return cls(
                key, settings.signature_agent, settings.signature_window, stats=crawler.stats
            )
        logger.error(
            "RERP_SIGNATURE_KEY: %(problem)s; the crawl stops before it starts",
            {"problem": problem},
            extra={"crawler": crawler},
        )
        close_when_opened(crawler, CLOSE_REASON)
        return _NotSigning()

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        url = request.url
        if not url.startswith(_SCHEMES):  # data:, file:, s3: ... have no authority to sign
            return
        headers = request.headers
        if self.agent is None:
            # A copy (a redirect, a retry) may carry an earlier hop's header.
            headers.pop(b"Signature-Agent", None)
        for name, value in self.signer.headers(url).items():
            headers[name] = value
        request.meta[SIGNED_META] = {"keyid": self.key.keyid, "url": url}
        if self.stats is not None:
            self.stats.inc_value("robotstxt/signed")


class _NotSigning:
    """Stands in for the middleware when the crawl cannot start (a bad setting or key, logged):
    the spider closes as it opens, and a request that comes before is not sent unsigned."""

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        raise IgnoreRequest(f"the request cannot be signed ({CLOSE_REASON})")

    def __repr__(self) -> str:
        return "<scrapy_rerp.SigningMiddleware: not configured>"
