"""``scrapy-rerp page URL``: a page's own robots directives, where each was stated, and what a
crawl with each purpose does with the page.

As in a crawl, the site's robots.txt comes first: it is downloaded as the middleware downloads
it and its verdict for the page is shown. The page is downloaded once with urllib (redirects
followed, within ``--timeout`` as a deadline for the whole download, the first
``MAX_HTML_BYTES`` read after undoing a Content-Encoding), its
``X-Robots-Tag`` and ``Robots-Tag`` headers and, for HTML, its head's meta tags (the engine's
``robots_meta_tags``: no Scrapy needed) are combined for the user agent by ``page_directives``,
and each purpose is asked of ``PageDirectives.usage`` for the page's content and for its images,
as ``PageDirectivesMiddleware`` asks in a crawl.

What a crawl does follows from both: a page robots.txt disallows (or whose robots.txt is
unreachable) is never downloaded, and neither is it here, unless ``--ignore-robots-txt`` asks
for it (the report then says robots.txt was overridden); a 429 or 503 answer makes the crawl
wait (its ``Retry-After``, else a raised delay floor) and ask again; another answer outside 2xx
never reaches the spider. Only a page the spider gets has its links followed and its content
used, as its directives say.

TDMRep (docs/usage.rst) is read for a page the spider gets: the origin's
``/.well-known/tdmrep.json`` is downloaded after the page (a 2xx is parsed; any other answer,
or none, is no file), then the page's ``tdm-reservation`` and ``tdm-policy`` headers and meta
tags are combined with it by ``tdm_reservation``, and ``train-ai`` and ``ai-input`` are asked
of it. RSL is read for such a page too: the licence files its robots.txt names, its ``Link``
header lines and its head's ``<link>`` tags name (:mod:`scrapy_rerp.cli._rsl`), each downloaded
once, decided for every purpose. Exit status 0 when every purpose may use the page, 1 when one
may not (a page directive, a TDMRep reservation, a licence), 2 when the page cannot be
downloaded (a :class:`CliError`).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from scrapy_rerp.cli._check import Verdict
from scrapy_rerp.cli._download import (
    Headers,
    Unanswered,
    check_url,
    follow,
    timed_out,
    within,
)
from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._rsl import PageLicences
from scrapy_rerp.cli._source import (
    IGNORE_ROBOTS_TXT,
    Source,
    load,
    override_note,
    user_agent_header,
)
from scrapy_rerp.core.body import charset_from_content_type
from scrapy_rerp.core.decompress import decode
from scrapy_rerp.core.documents import tdmrep_json
from scrapy_rerp.core.download import PAGE_MAX_REDIRECTS, PAGE_REDIRECTS, Course
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.slowdown import SlowAnswer, slow_answer
from scrapy_rerp.core.urls import robots_url_of
from scrapy_rerp.core.wording import counted, duration
from scrapy_rerp.engine import (
    MAX_HTML_BYTES,
    RFC9309,
    TDMREP_PURPOSES,
    USAGE_CATEGORIES,
    PageDirectives,
    PageStatement,
    PageUsageDecision,
    TdmRepDecision,
    TdmRepFile,
    TdmReservation,
    license_link_tags,
    license_links,
    page_directives,
    parse_tdmrep,
    robots_meta_tags,
    tdm_reservation,
)

_HTML_TYPES = ("text/html", "application/xhtml+xml")
# The page's yes-or-no directives, as the engine's PageDirectives names them, then its values.
_FLAGS = tuple(field.name for field in fields(PageDirectives) if field.type == "bool")
_VALUES = ("unavailable_after", "max_snippet", "max_image_preview", "max_video_preview")


@dataclass(kw_only=True)
class Page:
    """One downloaded page: what page directives are read from."""

    url: str
    final_url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    truncated: bool

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key.lower() == name.lower()), None)

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

    @property
    def charset(self) -> str | None:
        return charset_from_content_type(self.header("Content-Type"))


def fetch_page(
    url: str,
    agent: str,
    timeout: float,
    may_follow: Callable[[str], bool] | None = None,
    document: bool = False,
) -> Page:
    """GET *url* as *agent*, redirects followed as a crawl follows a page's or a *document*'s
    (tdmrep.json), with *may_follow* only to a target it accepts, all within *timeout* seconds
    (:func:`~scrapy_rerp.cli._download.within`); a 3xx not followed, a 4xx or a 5xx answer is a
    page too (its headers count). CliError: no page."""
    check_url(url)
    if document:  # as a crawl's transport: any 3xx, up to RERP_MAX_REDIRECTS
        course = Course(url, RerpSettings.max_redirects, MAX_HTML_BYTES)
    else:
        course = Course(url, PAGE_MAX_REDIRECTS, MAX_HTML_BYTES, redirects=PAGE_REDIRECTS)
    ua = user_agent_header(agent)
    try:
        answer = within(timeout, lambda deadline: follow(course, ua, deadline, may_follow, True))
    except Unanswered as error:
        raise CliError(f"{url}: {error}") from error
    if answer is None:
        raise CliError(f"{url}: {timed_out(timeout)}")
    encodings = answer.headers.getlist(b"Content-Encoding")
    try:
        body, more = decode(answer.body, encodings, MAX_HTML_BYTES)
    except ValueError as error:
        raise CliError(f"{url}: {error}") from error
    return Page(
        url=url,
        final_url=answer.ended.url,
        status=answer.status,
        headers=answer.headers.pairs(),
        body=body[:MAX_HTML_BYTES],
        truncated=answer.cut or more,
    )


@dataclass(frozen=True, kw_only=True)
class TdmRepReport:
    """What TDMRep says of the page: its origin's file, as found, and the techniques combined."""

    file_url: str
    file_found: str  # what the download of the file gave, in a few words
    file: TdmRepFile | None
    reservation: TdmReservation

    @classmethod
    def of(
        cls, page: Page, meta: list[tuple[str, str]] | None, agent: str, timeout: float
    ) -> TdmRepReport:
        file_url = tdmrep_json().url_of(page.url)
        file: TdmRepFile | None = None
        try:
            found = fetch_page(file_url, agent, timeout, document=True)
        except CliError as error:
            file_found = f"unreachable ({error})"
        else:
            if 200 <= found.status < 300:
                file = parse_tdmrep(found.body)
                kind = "valid" if file.valid else "not read: no reservation from the file"
                file_found = (
                    f"{found.status}, {counted(len(file.entries), 'entry', 'entries')}, {kind}"
                )
            else:
                file_found = f"{found.status}: no file"
        reservation = tdm_reservation(page.url, file, page.headers, meta)
        return cls(file_url=file_url, file_found=file_found, file=file, reservation=reservation)

    @property
    def decisions(self) -> dict[str, TdmRepDecision]:
        return {purpose: self.reservation.usage(purpose) for purpose in sorted(TDMREP_PURPOSES)}

    def as_dict(self) -> dict[str, Any]:
        file = self.file
        statement = self.reservation.statement
        return {
            "file": {
                "url": self.file_url,
                "found": self.file_found,
                "valid": None if file is None else file.valid,
                "entries": None if file is None else len(file.entries),
                "warnings": [] if file is None else [w._asdict() for w in file.warnings],
            },
            "reserved": self.reservation.reserved,
            "policy": self.reservation.policy,
            "technique": None if statement is None else statement.technique,
            "source": None if statement is None else statement.source,
            "warnings": [w._asdict() for w in self.reservation.warnings],
            "usage": {
                purpose: {
                    "preference": decision.preference,
                    "licensable": decision.licensable,
                    "reason": decision.reason,
                }
                for purpose, decision in self.decisions.items()
            },
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        out(f"tdmrep.json {self.file_url} ({self.file_found})")
        for purpose, decision in self.decisions.items():
            verdict = decision.preference.upper()
            out(f"  {'TDMRep ' + purpose:<{_ROW}}  {verdict:<12}  {decision.reason}")
        for warning in self.reservation.warnings:
            out(f"  {warning.source}: {warning.message}")


@dataclass(frozen=True, kw_only=True)
class Answer:
    """Whether a crawl does something with the page (follows its links, uses it for a
    purpose), and the statement that says it may not, if one does."""

    allowed: bool
    source: str | None = None  # where the statement was written: "meta tag 1 (robots)"
    statement: str | None = None  # the statement as written
    reason: str

    @classmethod
    def of(cls, decision: PageUsageDecision) -> Answer:
        statement = decision.statement
        return cls(
            allowed=decision.allowed,
            source=None if statement is None else statement.source,
            statement=None if statement is None else statement.text,
            reason=decision.reason,
        )

    @classmethod
    def follow(cls, nofollow: PageStatement | None) -> Answer:
        """Whether a crawl follows the page's links: unless a statement says nofollow."""
        if nofollow is None:
            return cls(allowed=True, reason="no page directive says nofollow")
        reason = f"nofollow by {nofollow.source}: {nofollow.text}"
        return cls(allowed=False, source=nofollow.source, statement=nofollow.text, reason=reason)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime.datetime) else value


@dataclass(frozen=True)
class RobotsTxtVerdict:
    """The site's robots.txt, as a crawl downloads it, and its verdict for the page."""

    source: Source
    verdict: Verdict

    @classmethod
    def of(cls, url: str, agent: str, timeout: float) -> RobotsTxtVerdict:
        source = load(robots_url_of(url), RFC9309, agent, timeout, None)
        verdict = Verdict.of(source.rules(RFC9309), source, url, agent, ())
        return cls(source, verdict)

    @property
    def licenses(self) -> tuple[str, ...]:
        """The licence files (RSL) the robots.txt names: none when it gave no rules."""
        return self.source.rules(RFC9309).licenses if self.source.parsed else ()

    @property
    def why(self) -> str:
        """``DISALLOWED by line 2: Disallow: /private/``, ``ALLOWED (no rule matched)``."""
        verdict = self.verdict
        word = "ALLOWED" if verdict.allowed else "DISALLOWED"
        found = self.source.not_robots_txt
        read_from = f"; read from {found.summary}" if found else ""
        if verdict.line is not None:
            return f"{word} by line {verdict.line}: {verdict.rule}{read_from}"
        return f"{word} ({verdict.reason}{read_from})"

    def as_dict(self) -> dict[str, Any]:
        fetched = self.source.fetched
        assert fetched is not None
        found = self.source.not_robots_txt
        return {
            "url": fetched.url,
            "fetch": fetched.as_dict(),
            "not_robots_txt": found and found.as_dict(),
            **{key: getattr(self.verdict, key) for key in ("allowed", "line", "rule", "reason")},
        }


class _RedirectHops:
    """Each redirect's target put to its site's robots.txt before it is requested, as a crawl's
    RedirectMiddleware sends its request through the robots.txt middleware again: a target
    robots.txt disallows is not requested (``refused`` says why)."""

    def __init__(self, agent: str, timeout: float, first: RobotsTxtVerdict) -> None:
        self.agent = agent
        self.timeout = timeout
        self.refused: str | None = None
        # Each site's robots.txt downloaded once, as a crawl keeps it per origin.
        self._sources: dict[str, Source] = {first.source.name: first.source}

    def may_follow(self, target: str) -> bool:
        robots_url = robots_url_of(target)
        if robots_url not in self._sources:
            self._sources[robots_url] = load(robots_url, RFC9309, self.agent, self.timeout, None)
        source = self._sources[robots_url]
        verdict = Verdict.of(source.rules(RFC9309), source, target, self.agent, ())
        if verdict.allowed:
            return True
        why = f"line {verdict.line}: {verdict.rule}" if verdict.line is not None else verdict.reason
        self.refused = (
            f"redirected to {target}, which robots.txt disallows ({why}): a crawl does not "
            "follow it"
        )
        return False


@dataclass(frozen=True)
class CrawlDecision:
    """Whether a crawl's spider gets the page: robots.txt first, then the page's answer."""

    gets_page: bool
    decision: str  # "given to the spider", "not downloaded", "not now", "not given to the spider"
    reason: str | None  # why not

    @classmethod
    def of(cls, robots: Verdict, status: int, slow: SlowAnswer | None) -> CrawlDecision:
        if not robots.allowed:
            if robots.line is not None:
                why = f"robots.txt disallows it (line {robots.line}: {robots.rule})"
            else:  # no rules: the download's outcome decides
                why = robots.reason
            return cls(False, "not downloaded", why)
        if slow is not None:
            if slow.wait is not None:
                waits = (
                    f"asks for {duration(slow.wait)} (Retry-After): nothing more is sent to this "
                    "site until then,"
                )
            else:
                waits = "without a usable Retry-After: the site's delay floor is raised,"
            again = "and the page is asked for again (RetryMiddleware)"
            return cls(False, "not now", f"HTTP {slow.status} {waits} {again}")
        if not 200 <= status < 300:
            return cls(
                False,
                "not given to the spider",
                f"HTTP {status}: Scrapy's HttpErrorMiddleware keeps it from the spider's "
                "callbacks, so none of its directives apply",
            )
        return cls(True, "given to the spider", None)

    def refuses(self) -> Answer:
        """The answer for each link and use of a page the spider does not get."""
        return Answer(allowed=False, reason=f"{self.decision}: {self.reason}")

    def as_dict(self) -> dict[str, Any]:
        return {"gets_page": self.gets_page, "decision": self.decision, "reason": self.reason}


@dataclass(kw_only=True)
class PageReport:
    url: str
    page: Page | None  # None: not downloaded, as a crawl would not download it
    agent: str
    directives: PageDirectives  # combined for the agent
    now: datetime.datetime  # when the report was made: unavailable_after is read against it
    follow: Answer
    usage: dict[str, tuple[Answer, Answer]]  # purpose -> (the page, its images)
    robots: RobotsTxtVerdict
    slow: SlowAnswer | None  # a 429 or 503 answer, and its Retry-After
    crawl: CrawlDecision
    tdmrep: TdmRepReport | None = None  # for a page the spider gets
    licences: PageLicences | None = None  # RSL, for a page the spider gets that names a file
    overridden: bool = False  # downloaded although robots.txt does not let a crawl download it

    @classmethod
    def fetch(
        cls, url: str, agent: str, timeout: float, ignore_robots_txt: bool = False
    ) -> PageReport:
        """Download the site's robots.txt, then *url* if robots.txt lets a crawl download it
        (or *ignore_robots_txt*), as *agent*, and read the page's directives (CliError: the
        page does not answer)."""
        check_url(url)
        robots = RobotsTxtVerdict.of(url, agent, timeout)
        now = datetime.datetime.now(datetime.timezone.utc)
        page = slow = tdmrep = licences = None
        if not robots.verdict.allowed and not ignore_robots_txt:
            # As a crawl: a page robots.txt disallows (or whose robots.txt is unreachable) is
            # never downloaded, so nothing of it is read.
            crawl = CrawlDecision.of(robots.verdict, 0, None)
            directives = page_directives([], None, agent)
        else:
            hops = _RedirectHops(agent, timeout, robots)
            page = fetch_page(url, agent, timeout, None if ignore_robots_txt else hops.may_follow)
            meta = robots_meta_tags(page.body, page.charset) if page.is_html else None
            directives = page_directives(page.headers, meta, agent)
            slow = slow_answer(page.status, Headers.of(page.headers), now.timestamp())
            crawl = CrawlDecision.of(robots.verdict, page.status, slow)
            if hops.refused is not None:
                crawl = CrawlDecision(False, "not downloaded", hops.refused)
        if page is not None and crawl.gets_page:
            usage = {
                purpose: (
                    Answer.of(directives.usage(purpose, image=page.is_image, now=now)),
                    Answer.of(directives.usage(purpose, image=True, now=now)),
                )
                for purpose in USAGE_CATEGORIES
            }
            nofollows = (s for s in directives.statements if "nofollow" in s.rule.restricts)
            follow = Answer.follow(next(nofollows, None))
            tdmrep = TdmRepReport.of(page, meta, agent, timeout)
            licences = _licences(page, robots, agent, timeout)
        else:
            follow = crawl.refuses()
            usage = {purpose: (follow, follow) for purpose in USAGE_CATEGORIES}
        return cls(
            url=url,
            page=page,
            agent=agent,
            directives=directives,
            now=now,
            follow=follow,
            usage=usage,
            robots=robots,
            slow=slow,
            crawl=crawl,
            tdmrep=tdmrep,
            licences=licences,
            overridden=page is not None and not robots.verdict.allowed,
        )

    @property
    def status(self) -> int:
        refused = any(not answer.allowed for both in self.usage.values() for answer in both)
        refused |= self.tdmrep is not None and bool(self.tdmrep.reservation.reserved)
        refused |= self.licences is not None and self.licences.refused
        return EXIT_FLAGGED if refused else EXIT_OK

    @property
    def override(self) -> str:
        """What the reader is told of a page downloaded although a crawl would not."""
        return override_note(self.crawl.reason or "")

    @property
    def notes(self) -> list[str]:
        page = self.page
        if page is None:
            return []
        notes = [f"{self.url}: {self.override}"] if self.overridden else []
        if page.final_url != page.url:
            notes.append(f"{page.url}: redirected to {page.final_url}")
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
        found = {name: _value(getattr(directives, name)) for name in (*_FLAGS, *_VALUES)}
        return {
            "url": self.url,
            "downloaded": page is not None,
            "robots_txt_overridden": self.overridden,
            "final_url": None if page is None else page.final_url,
            "status": None if page is None else page.status,
            "content_type": None if page is None else page.header("Content-Type"),
            "html": None if page is None else page.is_html,
            "image": None if page is None else page.is_image,
            "bytes": None if page is None else len(page.body),
            "truncated": None if page is None else page.truncated,
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
            "robots_txt": self.robots.as_dict(),
            "retry_after": None
            if self.slow is None or self.slow.retry_after is None
            else {"value": self.slow.retry_after, "seconds": self.slow.wait},
            "crawl": self.crawl.as_dict(),
            "follow": self.follow.as_dict(),
            "usage": {
                purpose: {"page": page_answer.as_dict(), "images": images.as_dict()}
                for purpose, (page_answer, images) in self.usage.items()
            },
            "tdmrep": None if self.tdmrep is None else self.tdmrep.as_dict(),
            "rsl": None if self.licences is None else self.licences.as_dict(),
            "notes": self.notes,
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        page = self.page
        out(f"page        {self.url}")
        if page is not None and page.final_url != page.url:
            out(f"final URL   {page.final_url}")
        fetched = self.robots.source.fetched
        assert fetched is not None
        out(f"robots.txt  {fetched.url} ({fetched.reason}): {self.robots.why}")
        crawl = self.crawl
        if page is None:
            anyway = f"{IGNORE_ROBOTS_TXT} downloads it anyway"
            out(f"status      not downloaded, as in a crawl ({anyway})")
        else:
            if self.overridden:
                out(f"overridden  {self.override}")
            content_type = page.header("Content-Type") or "no Content-Type"
            cut = ", cut" if page.truncated else ""
            out(f"status      {page.status}, {content_type}, {len(page.body):,} bytes read{cut}")
            self._render_directives(page, out)
        if crawl.gets_page:
            out("in a crawl:")
            no_use, why = "DISALLOWED", None
        else:  # nothing of the page reaches the spider, whatever its directives say
            out(f"in a crawl: {crawl.decision}: {crawl.reason}")
            no_use, why = "NOT USED", f"({crawl.decision})"
        out(_verdict_line("links", self.follow, "FOLLOWED", "NOT FOLLOWED", why))
        for purpose, (page_answer, images) in self.usage.items():
            if page is None or not page.is_image:
                out(_verdict_line(purpose, page_answer, "ALLOWED", no_use, why))
            out(_verdict_line(f"{purpose} (images)", images, "ALLOWED", no_use, why))
        if self.tdmrep is not None:
            self.tdmrep.render_text(out)
        if self.licences is not None:
            self.licences.render_text(out, _ROW)

    def _render_directives(self, page: Page, out: Callable[[str], None]) -> None:
        """What the page downloaded says of itself: its Retry-After and its directives."""
        directives = self.directives
        slow = self.slow
        if slow is not None and slow.retry_after is not None:
            asks = "nothing a crawl can hold to" if slow.wait is None else duration(slow.wait)
            out(f"retry-after {slow.retry_after} ({asks})")
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


_ROW = max(map(len, USAGE_CATEGORIES)) + len(" (images)")


def _licences(
    page: Page, robots: RobotsTxtVerdict, agent: str, timeout: float
) -> PageLicences | None:
    """RSL's decisions for *page*: from the licence files its robots.txt names, its ``Link``
    header lines and its head's ``<link>`` tags (None: it names none)."""
    url = page.final_url
    named = [(licence, "robots.txt") for licence in robots.licenses]
    links = [value for key, value in page.headers if key.lower() == "link"]
    named += [(licence, "Link header") for licence in license_links(links, url)]
    if page.is_html:
        named += [
            (licence, "<link>") for licence in license_link_tags(page.body, url, page.charset)
        ]
    if not named:
        return None
    return PageLicences.of(
        url,
        named,
        lambda licence: fetch_page(licence, agent, timeout, document=True),
        USAGE_CATEGORIES,
    )


def _verdict_line(label: str, found: Answer, yes: str, no: str, why: str | None = None) -> str:
    verdict = yes if found.allowed else no
    if why is None:
        why = f"{found.source}: {found.statement}" if found.source else f"({found.reason})"
    return f"  {label:<{_ROW}}  {verdict:<12}  {why}"
