"""The robots.txt layer's signals, sent through the crawler's signal manager as Scrapy's own
are: their keyword arguments, and which handlers may refuse (``IgnoreRequest``), are in
docs/signals.rst. Plain objects, as Scrapy's: this module imports nothing."""

from __future__ import annotations

__all__ = [
    "document_received",
    "page_read",
    "request_admitted",
    "request_answered",
    "request_failed",
    "request_refused",
]

document_received = object()  # an origin's robots.txt or tdmrep.json became known
request_refused = object()  # a request not downloaded, or its answer kept from the spider
request_admitted = object()  # a request let through to its download, after a wait or not
request_answered = object()  # a request let through was answered
request_failed = object()  # a request let through failed to download
page_read = object()  # what a page said of itself
