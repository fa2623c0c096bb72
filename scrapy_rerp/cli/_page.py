"""``scrapy-rerp page URL``: a page's own robots directives, where each was stated, and what a
crawl with each purpose does with the page.

The page is downloaded once with urllib (redirects followed, a timeout, the first
``MAX_HTML_BYTES`` read after undoing a Content-Encoding), its ``X-Robots-Tag`` and
``Robots-Tag`` headers and, for HTML, its head's meta tags (the engine's ``robots_meta_tags``:
no Scrapy needed) are combined for the user agent by ``page_directives``, and each purpose is
asked of ``PageDirectives.usage`` for the page's content and for its images, as
``PageDirectivesMiddleware`` asks in a crawl. Exit status 0 when every purpose may use the page,
1 when one may not, 2 when the page cannot be downloaded (a :class:`CliError`).
"""

from __future__ import annotations

import datetime
import http.client
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from scrapy_rerp._body import charset_from_content_type
from scrapy_rerp._decompress import decode
from scrapy_rerp.cli._download import InvalidUrl, check_url, network_reason
from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._source import user_agent_header
from scrapy_rerp.engine import (
    USAGE_CATEGORIES,
    PageDirectives,
    PageStatement,
    PageUsageDecision,
    page_directives,
    robots_meta_tags,
)
from scrapy_rerp.engine._html_meta import MAX_HTML_BYTES

_HTML_TYPES = ("text/html", "application/xhtml+xml")
# The page's yes-or-no directives, as the engine's PageDirectives names them.
_FLAGS = tuple(field.name for field in fields(PageDirectives) if field.type == "bool")


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


def fetch_page(url: str, agent: str, timeout: float) -> Page:
    """GET *url* as *agent*; a 4xx or 5xx answer is a page too (its headers count)."""
    try:
        check_url(url)
    except InvalidUrl as error:
        raise CliError(str(error)) from error
    request = urllib.request.Request(
        url,
        headers={"User-Agent": user_agent_header(agent), "Accept-Encoding": "gzip, deflate"},
    )
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        response = error
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise CliError(f"{url}: {network_reason(error)}") from error
    with response:
        try:
            raw = response.read(MAX_HTML_BYTES + 1)
        except (OSError, http.client.HTTPException) as error:
            raise CliError(f"{url}: {network_reason(error)}") from error
        headers = list(response.headers.items())
        final_url = response.geturl()
        status = response.status if response.status is not None else 0
    encodings = [
        v.encode("latin-1", "replace") for k, v in headers if k.lower() == "content-encoding"
    ]
    try:
        body, truncated = decode(raw, encodings, MAX_HTML_BYTES)
    except ValueError as error:
        raise CliError(f"{url}: {error}") from error
    truncated = truncated or (not encodings and len(raw) > MAX_HTML_BYTES)
    return Page(url, final_url, status, headers, body[:MAX_HTML_BYTES], truncated)


@dataclass(frozen=True)
class Answer:
    """Whether a crawl does something with the page (follows its links, uses it for a
    purpose), and the statement that says it may not, if one does."""

    allowed: bool
    source: str | None  # where the statement was written: "meta tag 1 (robots)"
    statement: str | None  # the statement as written
    reason: str

    @classmethod
    def of(cls, decision: PageUsageDecision) -> Answer:
        statement = decision.statement
        if statement is None:
            return cls(decision.allowed, None, None, decision.reason)
        return cls(decision.allowed, statement.source, statement.text, decision.reason)

    @classmethod
    def follow(cls, nofollow: PageStatement | None) -> Answer:
        """Whether a crawl follows the page's links: unless a statement says nofollow."""
        if nofollow is None:
            return cls(True, None, None, "no page directive says nofollow")
        reason = f"nofollow by {nofollow.source}: {nofollow.text}"
        return cls(False, nofollow.source, nofollow.text, reason)

    def as_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "source": self.source,
            "statement": self.statement,
            "reason": self.reason,
        }


def _value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime.datetime) else value


@dataclass
class PageReport:
    page: Page
    agent: str
    directives: PageDirectives  # combined for the agent
    now: datetime.datetime  # when the report was made: unavailable_after is read against it
    follow: Answer
    usage: dict[str, tuple[Answer, Answer]]  # purpose -> (the page, its images)

    @classmethod
    def fetch(cls, url: str, agent: str, timeout: float) -> PageReport:
        """Download *url* as *agent* and read its directives (CliError: no page)."""
        page = fetch_page(url, agent, timeout)
        meta = None
        if page.is_html:
            charset = charset_from_content_type(page.header("Content-Type"))
            meta = robots_meta_tags(page.body, charset)
        directives = page_directives(page.headers, meta, agent)
        now = datetime.datetime.now(datetime.timezone.utc)
        usage = {
            purpose: (
                Answer.of(directives.usage(purpose, image=page.is_image, now=now)),
                Answer.of(directives.usage(purpose, image=True, now=now)),
            )
            for purpose in USAGE_CATEGORIES
        }
        nofollow = next((s for s in directives.statements if "nofollow" in s.rule.restricts), None)
        return cls(page, agent, directives, now, Answer.follow(nofollow), usage)

    @property
    def status(self) -> int:
        refused = any(not answer.allowed for both in self.usage.values() for answer in both)
        return EXIT_FLAGGED if refused else EXIT_OK

    @property
    def notes(self) -> list[str]:
        page = self.page
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
        return notes

    @property
    def restrictions(self) -> list[str]:
        return sorted(self.directives.restrictions(self.now))

    def to_dict(self) -> dict[str, Any]:
        page, directives = self.page, self.directives
        found: dict[str, Any] = {flag: getattr(directives, flag) for flag in _FLAGS}
        for name in ("unavailable_after", "max_snippet", "max_image_preview", "max_video_preview"):
            found[name] = _value(getattr(directives, name))
        return {
            "url": page.url,
            "final_url": page.final_url,
            "status": page.status,
            "content_type": page.header("Content-Type"),
            "html": page.is_html,
            "image": page.is_image,
            "bytes": len(page.body),
            "truncated": page.truncated,
            "agent": self.agent,
            "matched_agent": directives.agent,
            "directives": found,
            "restrictions": self.restrictions,
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
            "follow": self.follow.as_dict(),
            "usage": {
                purpose: {"page": page_answer.as_dict(), "images": images.as_dict()}
                for purpose, (page_answer, images) in self.usage.items()
            },
            "notes": self.notes,
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        page, directives = self.page, self.directives
        out(f"page        {page.url}")
        if page.final_url != page.url:
            out(f"final URL   {page.final_url}")
        content_type = page.header("Content-Type") or "no Content-Type"
        cut = ", cut" if page.truncated else ""
        out(f"status      {page.status}, {content_type}, {len(page.body):,} bytes read{cut}")
        matched = directives.agent
        whose = f"statements for {matched} and" if matched else "statements"
        out(f"user agent  {self.agent} ({whose} for every crawler apply)")
        statements = directives.statements
        out(f"directives: {len(statements)}")
        width = max((len(s.source) for s in statements), default=0)
        for statement in statements:
            scope = f" (for {statement.agent})" if statement.agent else ""
            out(f"  {statement.source:<{width}}  {statement.text}{scope}")
        out(f"restrictions in force: {', '.join(self.restrictions) or 'none'}")
        if directives.warnings:
            out(f"warnings: {len(directives.warnings)}")
            for warning in directives.warnings:
                out(f"  {warning.source}: {warning.message}")
        out("in a crawl:")
        out(_verdict_line("links", self.follow, "FOLLOWED", "NOT FOLLOWED"))
        for purpose, (page_answer, images) in self.usage.items():
            if not page.is_image:
                out(_verdict_line(purpose, page_answer, "ALLOWED", "DISALLOWED"))
            out(_verdict_line(f"{purpose} (images)", images, "ALLOWED", "DISALLOWED"))


_ROW = max(map(len, USAGE_CATEGORIES)) + len(" (images)")


def _verdict_line(label: str, found: Answer, yes: str, no: str) -> str:
    verdict = yes if found.allowed else no
    why = f"{found.source}: {found.statement}" if found.source else f"({found.reason})"
    return f"  {label:<{_ROW}}  {verdict:<12}  {why}"
