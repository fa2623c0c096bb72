"""``scrapy-rerp page URL``: a page's own robots directives, where each was stated, and what a
crawl with each purpose does with the page.

The page is downloaded once with urllib (redirects followed, a timeout, the first
``MAX_HTML_BYTES`` read after undoing a Content-Encoding), its ``X-Robots-Tag`` and
``Robots-Tag`` headers and, for HTML, its head's meta tags (the engine's ``robots_meta_tags``:
no Scrapy needed) are combined for the user agent by ``page_directives``, and each purpose is
asked of ``PageDirectives.usage`` for the page's content and for its images, as
``PageDirectivesMiddleware`` asks in a crawl. Exit status 0 when every purpose may use the page,
1 when one may not, 2 when the page cannot be downloaded (raised as :class:`PageError`).
"""

from __future__ import annotations

import datetime
import http.client
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy_rerp import __version__
from scrapy_rerp._body import charset_from_content_type
from scrapy_rerp._decompress import decode
from scrapy_rerp.cli._download import InvalidUrl, check_url, network_reason
from scrapy_rerp.engine import (
    USAGE_CATEGORIES,
    PageDirectives,
    PageUsageDecision,
    page_directives,
    robots_meta_tags,
)
from scrapy_rerp.engine._html_meta import MAX_HTML_BYTES

__all__ = ["PageError", "Page", "fetch_page", "report", "text_page"]

EXIT_OK = 0
EXIT_FLAGGED = 1

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_FLAGS = (
    "noindex",
    "nofollow",
    "noarchive",
    "nosnippet",
    "noimageindex",
    "notranslate",
    "noai",
    "noimageai",
    "indexifembedded",
)


class PageError(ValueError):
    """A page that cannot be downloaded: a bad URL, or no answer."""


@dataclass
class Page:
    """One downloaded page: what page directives are read from."""

    url: str
    final_url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    truncated: bool

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    @property
    def content_type(self) -> str:
        return (self.header("Content-Type") or "").split(";")[0].strip().lower()

    @property
    def is_html(self) -> bool:
        """HTML as Scrapy makes an ``HtmlResponse`` of it: by Content-Type, or, without one, by
        an ``<html`` near the top."""
        if self.header("Content-Type") is None:
            return b"<html" in self.body[:5000].lower()
        return self.content_type in _HTML_TYPES

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")


def _user_agent_header(agent: str) -> str:
    return agent if agent != "*" else f"scrapy-rerp/{__version__}"


def fetch_page(url: str, agent: str, timeout: float) -> Page:
    """GET *url* as *agent*; a 4xx or 5xx answer is a page too (its headers count)."""
    try:
        check_url(url)
    except InvalidUrl as error:
        raise PageError(str(error)) from error
    request = urllib.request.Request(
        url,
        headers={"User-Agent": _user_agent_header(agent), "Accept-Encoding": "gzip, deflate"},
    )
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        response = error
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise PageError(f"{url}: {network_reason(error)}") from error
    with response:
        try:
            raw = response.read(MAX_HTML_BYTES + 1)
        except (OSError, http.client.HTTPException) as error:
            raise PageError(f"{url}: {network_reason(error)}") from error
        headers = list(response.headers.items())
        final_url = response.geturl()
        status = response.status if response.status is not None else 0
    encodings = [
        v.encode("latin-1", "replace") for k, v in headers if k.lower() == "content-encoding"
    ]
    try:
        body, truncated = decode(raw, encodings, MAX_HTML_BYTES)
    except ValueError as error:
        raise PageError(f"{url}: {error}") from error
    truncated = truncated or (not encodings and len(raw) > MAX_HTML_BYTES)
    return Page(url, final_url, status, headers, body[:MAX_HTML_BYTES], truncated)


def _decision_dict(decision: PageUsageDecision) -> dict[str, Any]:
    statement = decision.statement
    return {
        "allowed": decision.allowed,
        "source": None if statement is None else statement.source,
        "statement": None if statement is None else statement.text,
        "reason": decision.reason,
    }


def _value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime.datetime) else value


def _directives_dict(directives: PageDirectives) -> dict[str, Any]:
    found: dict[str, Any] = {flag: getattr(directives, flag) for flag in _FLAGS}
    for name in ("unavailable_after", "max_snippet", "max_image_preview", "max_video_preview"):
        found[name] = _value(getattr(directives, name))
    return found


def report(url: str, agent: str, timeout: float) -> tuple[dict[str, Any], int]:
    """The ``page`` document and its exit status."""
    page = fetch_page(url, agent, timeout)
    meta = None
    if page.is_html:
        meta = robots_meta_tags(page.body, charset_from_content_type(page.header("Content-Type")))
    directives = page_directives(page.headers, meta, agent)
    now = datetime.datetime.now(datetime.timezone.utc)
    usage = {
        purpose: {
            "page": _decision_dict(directives.usage(purpose, image=page.is_image, now=now)),
            "images": _decision_dict(directives.usage(purpose, image=True, now=now)),
        }
        for purpose in USAGE_CATEGORIES
    }
    nofollow = next((s for s in directives.statements if "nofollow" in s.rule.restricts), None)
    notes = []
    if page.final_url != page.url:
        notes.append(f"{page.url}: redirected to {page.final_url}")
    if not 200 <= page.status < 300:
        notes.append(
            f"HTTP {page.status}: a crawl's callbacks do not get this response (Scrapy's "
            "HttpErrorMiddleware), so a crawl applies none of its directives"
        )
    if not page.is_html:
        kind = page.content_type or "no Content-Type"
        notes.append(f"not HTML ({kind}): only its headers are read, no meta tags")
    if page.truncated:
        notes.append(f"only the first {MAX_HTML_BYTES:,} bytes are read")
    document = {
        "url": page.url,
        "final_url": page.final_url,
        "status": page.status,
        "content_type": page.header("Content-Type"),
        "html": page.is_html,
        "image": page.is_image,
        "bytes": len(page.body),
        "truncated": page.truncated,
        "agent": agent,
        "matched_agent": directives.agent,
        "directives": _directives_dict(directives),
        "restrictions": sorted(directives.restrictions(now)),
        "statements": [
            {
                "rule": s.rule.name,
                "value": _value(s.value),
                "source": s.source,
                "agent": s.agent,
                "text": s.text,
            }
            for s in directives.statements
        ],
        "warnings": [w._asdict() for w in directives.warnings],
        "follow": {
            "allowed": nofollow is None,
            "source": None if nofollow is None else nofollow.source,
            "statement": None if nofollow is None else nofollow.text,
            "reason": "no page directive says nofollow"
            if nofollow is None
            else f"nofollow by {nofollow.source}: {nofollow.text}",
        },
        "usage": usage,
        "notes": notes,
    }
    refused = any(not found[kind]["allowed"] for found in usage.values() for kind in found)
    return document, EXIT_FLAGGED if refused else EXIT_OK


_ROW = max(map(len, USAGE_CATEGORIES)) + len(" (images)")


def _verdict_line(label: str, found: dict[str, Any], yes: str, no: str) -> str:
    verdict = yes if found["allowed"] else no
    why = f"{found['source']}: {found['statement']}" if found["source"] else f"({found['reason']})"
    return f"  {label:<{_ROW}}  {verdict:<12}  {why}"


def text_page(document: dict[str, Any], out: Callable[[str], None]) -> None:
    out(f"page        {document['url']}")
    if document["final_url"] != document["url"]:
        out(f"final URL   {document['final_url']}")
    content_type = document["content_type"] or "no Content-Type"
    cut = ", cut" if document["truncated"] else ""
    out(f"status      {document['status']}, {content_type}, {document['bytes']:,} bytes read{cut}")
    matched = document["matched_agent"]
    whose = f"statements for {matched} and" if matched else "statements"
    out(f"user agent  {document['agent']} ({whose} for every crawler apply)")
    statements = document["statements"]
    out(f"directives: {len(statements)}")
    width = max((len(s["source"]) for s in statements), default=0)
    for statement in statements:
        scope = f" (for {statement['agent']})" if statement["agent"] else ""
        out(f"  {statement['source']:<{width}}  {statement['text']}{scope}")
    restrictions = ", ".join(document["restrictions"]) or "none"
    out(f"restrictions in force: {restrictions}")
    if document["warnings"]:
        out(f"warnings: {len(document['warnings'])}")
        for warning in document["warnings"]:
            out(f"  {warning['source']}: {warning['message']}")
    out("in a crawl:")
    out(_verdict_line("links", document["follow"], "FOLLOWED", "NOT FOLLOWED"))
    for purpose, found in document["usage"].items():
        if not document["image"]:
            out(_verdict_line(purpose, found["page"], "ALLOWED", "DISALLOWED"))
        out(_verdict_line(f"{purpose} (images)", found["images"], "ALLOWED", "DISALLOWED"))
