"""The robots.txt layer's signals: what it decided, for any part of a crawl to hear.

Sent through the crawler's signal manager, as Scrapy's own (``crawler.signals.connect(handler,
signal=scrapy_rerp.signals.request_refused)``), with the keyword arguments docs/signals.rst
lists; a handler takes those it needs, and may be a plain function or method (not a
coroutine). Like Scrapy's signals, each is a plain object: this module imports nothing.

The evidence (``RERP_EVIDENCE``), the decision stats and sitemap discovery hear them too.
A handler of ``request_admitted`` may raise ``IgnoreRequest`` to keep the request from its
download, one of ``request_answered`` or ``page_read`` to keep the response from the spider, as
one of Scrapy's ``headers_received`` raises ``StopDownload``.
"""

from __future__ import annotations

__all__ = [
    "document_received",
    "page_read",
    "request_admitted",
    "request_answered",
    "request_failed",
    "request_refused",
]

#: An origin's robots.txt or tdmrep.json became known: ``origin``, ``kind``, ``entry``,
#: ``fetched``, ``user_agent``.
document_received = object()
#: A request is not downloaded, or its response not handed to the spider: ``request``,
#: ``reason``, ``message``, ``decision``.
request_refused = object()
#: A request is let through to its download, after a wait or not: ``request``, ``decision``,
#: ``waited``.
request_admitted = object()
#: A request the layer let through was answered: ``request``, ``response``, ``decision``.
request_answered = object()
#: A request the layer let through failed to download: ``request``, ``exception``,
#: ``decision``.
request_failed = object()
#: What a page said of itself: ``response``, ``directives``, ``reservation``, ``refused``,
#: ``items``, ``nofollow``.
page_read = object()
