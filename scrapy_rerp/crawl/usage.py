"""AI usage preferences in a crawl: the purposes named by ``RERP_USAGE`` checked against what
each site says about them.

Two places say it (docs/usage.rst has the forms side by side):

* robots.txt, in ``Content-Usage`` rules (draft-ietf-aipref-attach, path-scoped like
  Allow/Disallow) and ``Content-Signal`` lines (contentsignals.org), checked in
  ``process_request``, before the download: a URL marked ``n`` for a purpose is not
  downloaded;
* the ``Content-Usage`` response header, checked in ``process_response``, before the spider
  sees the page; it combines with what robots.txt said as draft-ietf-aipref-vocab asks (any
  ``disallowed`` wins, then any ``allowed``).

The header is read up to ``MAX_HEADER_BYTES`` (core/body.py); a header cut there never allows a
purpose: what its first statements allow is ``unknown``, what they disallow stays disallowed
(docs/usage.rst, "Bounds").

``unknown`` is allowed unless ``RERP_USAGE_DEFAULT = "deny"``, which drops a page only once its
header is known too. The decisions, per purpose, are in ``response.meta["rerp_usage"]``; with
``RERP_USAGE_DROP = False`` nothing is dropped and the meta is all the crawl gets.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.python import to_unicode

from scrapy_rerp.core import loggers
from scrapy_rerp.core.body import MAX_HEADER_BYTES, capped_lines
from scrapy_rerp.core.documents import RSL_FILES_META
from scrapy_rerp.core.lengths import bounded
from scrapy_rerp.crawl.compat import header_key, header_values, stats_of
from scrapy_rerp.crawl.documents import Attached
from scrapy_rerp.engine import (
    ALLOWED,
    DISALLOWED,
    NO_USAGE_STATED,
    UNKNOWN,
    RslFile,
    UsageDecision,
    combined,
    header_usage,
    license_decision,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.crawl.summary import CrawlSummary
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["USAGE_META", "UsagePolicy", "UsageRefused"]

logger = logging.getLogger(loggers.USAGE)

#: ``request.meta`` / ``response.meta`` key: purpose -> :class:`UsageDecision`.
USAGE_META = "rerp_usage"

_PREFERENCES = (ALLOWED, DISALLOWED, UNKNOWN)
_CONTENT_USAGE = header_key("Content-Usage")


class UsageRefused(IgnoreRequest):
    """A request, or its response, that a usage preference refuses."""


class UsagePolicy:
    """Applies ``RERP_USAGE`` to requests (robots.txt) and responses (the header)."""

    def __init__(self, crawler: Crawler, settings: RerpSettings, summary: CrawlSummary) -> None:
        self.crawler = crawler
        self.summary = summary  # names the drops as the crawl closes (one INFO line)
        self.stats = stats_of(crawler)
        self.purposes = settings.usage
        self.deny_unknown = settings.usage_deny_unknown
        self.drop = settings.usage_drop
        # What a file that states no usage preference (most) says of every purpose.
        self._unstated = dict.fromkeys(self.purposes, NO_USAGE_STATED)
        # robotstxt/usage/<purpose>/<preference>, counted per response in batches: one call
        # to Scrapy's stats collector per purpose was a third of this check's time in a crawl
        # (benchmarks/bench_usage.py). Exact when the spider closes; at most _BATCH - 1
        # responses behind while it runs.
        self._keys = {
            (purpose, preference): f"robotstxt/usage/{purpose}/{preference}"
            for purpose in self.purposes
            for preference in _PREFERENCES
        }
        self._counted: Counter[str] = Counter()
        self._responses = 0
        self._cut_logged = False  # a cut header is logged once, then only counted
        crawler.signals.connect(self._flush_counts, signal=signals.spider_closed)

    def check_request(self, robots: RobotsTxt, request: Request, user_agent: str) -> None:
        """What robots.txt says about the request's URL; raises IgnoreRequest for a purpose
        it disallows (unless ``RERP_USAGE_DROP`` is off)."""
        if not robots.states_usage:
            # Most files: what usage() would say of an allowed URL, without matching it.
            request.meta[USAGE_META] = self._unstated.copy()
            return
        self._decided(
            request,
            {purpose: robots.usage(request.url, user_agent, purpose) for purpose in self.purposes},
        )

    def check_documents(self, request: Request) -> None:
        """What the licence files robots.txt names (RSL, attached by the gate) say of the
        request's URL, combined with robots.txt's own statements: a licence that applies and
        prohibits a purpose, or permits it only on terms the crawl does not hold (a payment, a
        licence server), refuses it (unless ``RERP_USAGE_DROP`` is off)."""
        meta = request.meta
        attached = meta.get(RSL_FILES_META)
        files = attached.document if isinstance(attached, Attached) else None
        if not files or meta.get(_LICENCES_DECIDED) == len(files):
            return  # none, or no more than those decided already (the request's, at its start)
        meta[_LICENCES_DECIDED] = len(files)
        before: Mapping[str, UsageDecision] = request.meta.get(USAGE_META) or {}
        decisions = dict(before)
        for purpose in self.purposes:
            licence = _licence_decision(request.url, purpose, files)
            if licence is None:
                continue
            said = [before[purpose], licence] if purpose in before else [licence]
            decisions[purpose] = combined(said) or licence
        self._decided(request, decisions)

    def _decided(self, request: Request, decisions: dict[str, UsageDecision]) -> None:
        """Keep *decisions* in the request's meta; drop it for the first purpose they refuse."""
        request.meta[USAGE_META] = decisions
        refused = _first(decisions, DISALLOWED)
        if refused is not None and self.drop:
            self._drop(request, *refused)

    def check_response(self, request: Request, response: Response) -> None:
        """Combine the ``Content-Usage`` header, if any, with what robots.txt said; raises
        IgnoreRequest when the result disallows a purpose (or is unknown with
        ``RERP_USAGE_DEFAULT = "deny"``), unless ``RERP_USAGE_DROP`` is off."""
        self.check_documents(request)  # and those the page names (the gate attached them)
        before: Mapping[str, UsageDecision] = request.meta.get(USAGE_META) or {}
        header, unread = _header(response)
        if unread:
            self._cut(request, unread)
        if header is None and len(before) == len(self.purposes):
            # Most responses: no header, and robots.txt's decisions stand as they are.
            decisions = before
        else:
            decisions = {}
            for purpose in self.purposes:
                # What robots.txt said first, then the header: vocab-07 5.1 combines them.
                said = [before[purpose]] if purpose in before else []
                if header is not None:
                    said.append(_header_usage(header, purpose, unread))
                decisions[purpose] = combined(said) or UsageDecision(
                    UNKNOWN, None, None, "nothing said about this usage"
                )
            request.meta[USAGE_META] = decisions
        counted = self._counted
        keys = self._keys
        for purpose, decision in decisions.items():
            preference = decision.preference
            counted[
                keys.get((purpose, preference)) or f"robotstxt/usage/{purpose}/{preference}"
            ] += 1
        self._responses += 1
        if self._responses == _BATCH:
            self._flush_counts()
        refused = _first(decisions, DISALLOWED)
        if refused is None and self.deny_unknown:
            refused = _first(decisions, UNKNOWN)
        if refused is not None and self.drop:
            self._drop(request, *refused)
        elif refused is not None:
            self.stats.inc_value("robotstxt/usage/marked")

    def _drop(self, request: Request, purpose: str, decision: UsageDecision) -> None:
        """Count, log and raise IgnoreRequest for *decision*, which refuses *purpose*."""
        if decision.preference == UNKNOWN:
            reason, where = "unknown", "RERP_USAGE_DEFAULT = 'deny'"
        elif decision.line is None and (decision.statement or "").startswith(LICENCE_STATEMENT):
            reason, where = "license", "an RSL licence"
        elif decision.line is None:
            reason, where = "header", "the Content-Usage header"
        else:
            reason, where = "robots_txt", f"robots.txt line {decision.line}"
        self.stats.inc_value(f"robotstxt/usage/dropped/{reason}")
        self.summary.usage_dropped(reason, request.url)
        said = bounded(decision.statement or decision.reason)
        logger.debug(
            "Dropped %(request)s: %(purpose)s %(preference)s by %(where)s (%(said)s)",
            {
                "request": bounded(str(request)),
                "purpose": purpose,
                "preference": decision.preference,
                "where": where,
                "said": said,
            },
            extra={"spider": self.crawler.spider},
        )
        raise UsageRefused(f"{purpose} {decision.preference} by {where} ({said})")

    def _cut(self, request: Request, unread: int) -> None:
        """Count, and log the first time, a Content-Usage header cut at the cap."""
        self.stats.inc_value("robotstxt/usage/header_cut")
        if not self._cut_logged:
            self._cut_logged = True
            logger.info(
                "Content-Usage header of %(request)s cut at %(cap)s bytes (%(unread)s more not "
                "read): what it allows is unknown, what it disallows stays disallowed; further "
                "cuts are counted in robotstxt/usage/header_cut",
                {"request": bounded(str(request)), "cap": MAX_HEADER_BYTES, "unread": unread},
                extra={"spider": self.crawler.spider},
            )

    def _flush_counts(self) -> None:
        for key, count in self._counted.items():
            self.stats.inc_value(key, count)
        self._counted.clear()
        self._responses = 0


#: Responses whose per-purpose counts are added to the stats at once.
_BATCH = 100


#: ``request.meta``: how many licence files the usage decision has read (a page's own come
#: after robots.txt's).
_LICENCES_DECIDED = "_rerp_licences_decided"
#: How a usage decision an RSL licence made names it: ``RSL <file URL> content <pattern>
#: license <n>`` (the evidence's ``usage`` source is ``license``).
LICENCE_STATEMENT = "RSL "


def _licence_decision(
    url: str, purpose: str, files: tuple[tuple[str, RslFile], ...]
) -> UsageDecision | None:
    """What the licence files say together of ``purpose`` for ``url``, as a usage decision
    (the first refusal, else the first permission; ``unknown`` from every file: None)."""
    decision = license_decision(url, purpose, [file for _, file in files])
    if decision is None or decision.preference == UNKNOWN or decision.content is None:
        return None
    # A file is parsed from its body alone: it is named by the URL it was fetched from, found
    # by the content element that decided (the file's own).
    chosen = decision.content
    where = next(w for w, file in files if any(c is chosen for c in file.contents))
    statement = f"{LICENCE_STATEMENT}{where} content {chosen.url} license {decision.license}"
    return UsageDecision(decision.preference, None, bounded(statement), decision.reason)


def _first(
    decisions: Mapping[str, UsageDecision], outcome: str
) -> tuple[str, UsageDecision] | None:
    return next(((purpose, d) for purpose, d in decisions.items() if d.preference == outcome), None)


def _header(response: Response) -> tuple[str | None, int]:
    """The ``Content-Usage`` field's value, its lines joined (RFC 9651 4.2), or None; and the
    bytes of it left unread past ``MAX_HEADER_BYTES``."""
    lines = header_values(response.headers, _CONTENT_USAGE)
    if not lines:
        return None, 0
    lines, unread = capped_lines(lines)
    return ", ".join(to_unicode(line, errors="replace") for line in lines), unread


def _header_usage(header: str, purpose: str, unread: int) -> UsageDecision:
    """What the header says of *purpose*; of a header cut at the cap (``unread`` bytes left),
    an ``allowed`` is ``unknown``: the part not read may have said otherwise, and the site's
    statements read first cannot be taken for a permission they may not be."""
    decision = header_usage(header, purpose)
    if not unread or decision.preference != ALLOWED:
        return decision
    return decision._replace(
        preference=UNKNOWN,
        reason=f"the header was cut at {MAX_HEADER_BYTES:,} bytes ({unread:,} more not read); "
        f"what its first statements allow is unknown",
    )
