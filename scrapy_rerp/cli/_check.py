"""``scrapy-rerp check ROBOTS URL...``: the verdict a crawl gets for each URL and the line that
decided; with ``--usage CATEGORY``, the site's usage preference for it too.

Only a robots.txt gets a verdict: ROBOTS that is an HTML or XML page or binary data is an
error unless ``--read-anyway`` asks for the verdict a crawler reading it gets (and each verdict
then says what it rests on); a URL that is neither an absolute path nor an absolute URL is an
error with a hint, never a guess.

Exit status 0 when every URL may be crawled (and no usage asked about is disallowed), 1 when
one may not (or a usage is disallowed), 2 when a URL is not one a crawler can request, or ROBOTS
is no robots.txt.

With ``--usage`` naming a purpose TDMRep speaks to (train-ai, ai-input) and ROBOTS a URL, the
origin's ``/.well-known/tdmrep.json`` is downloaded too (when robots.txt allows one of the URLs:
a crawl downloads it for such a page only) and each URL's TDMRep decision from it is
shown under its usage lines (the pages themselves are not downloaded: their headers and meta
tags are ``page``'s business); a reservation makes the exit status 1 as a disallowed usage
does. With ``--usage`` and a robots.txt that names licence files (RSL ``License:`` lines), the
same for each file (:mod:`scrapy_rerp.cli._rsl`): each URL's RSL decision per category, a
refusal making the exit status 1."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from scrapy_rerp.cli._output import EXIT_ERROR, EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._problems import ABSOLUTE_URL
from scrapy_rerp.cli._rsl import (
    FetchDocument,
    LicenceFile,
    decisions_dict,
    licence_files,
    rsl_decisions,
    rsl_lines,
)
from scrapy_rerp.cli._source import Source, is_url, outcome_reason
from scrapy_rerp.core.settings import syntax_name
from scrapy_rerp.core.status import ALLOW_ALL
from scrapy_rerp.core.urls import crawl_decision, origin_of, request_url, rules_url
from scrapy_rerp.core.wording import counted
from scrapy_rerp.engine import (
    TDMREP_PATH,
    TDMREP_PURPOSES,
    USAGE_CATEGORIES,
    RobotsTxt,
    RslDecision,
    TdmRepDecision,
    TdmRepFile,
    UsageDecision,
    tdm_reservation,
    usage_category,
)


def check_url_argument(url: str, command: str) -> None:
    """A URL to check or explain is an absolute path (``/x``) or an absolute URL
    (``https://host/x``): anything else is a CliError with a hint, before anything is read."""
    if url.startswith("/") or ABSOLUTE_URL.match(url):
        return
    if url == "-" or url.lower().endswith("robots.txt"):
        urls = "URL..." if command == "check" else "URL"
        hint = (
            "it looks like a robots.txt: the robots.txt comes first "
            f"(scrapy-rerp {command} ROBOTS {urls})"
        )
    else:
        hint = f"write /{url} for a path, or the URL with its scheme"
    raise CliError(
        f"{url!r} is neither an absolute path (/...) nor an absolute URL (https://...): {hint}"
    )


def refuse_unless_read_anyway(source: Source, read_anyway: bool) -> str | None:
    """For ROBOTS that is no robots.txt, a CliError, or with *read_anyway* what a verdict
    read from it rests on ("an HTML (or XML) page, not a robots.txt"); None for a robots.txt."""
    found = source.not_robots_txt
    if found is None:
        return None
    if not read_anyway:
        raise CliError(f"{source.what_it_is()}; no verdict on it without --read-anyway")
    return found.summary


@dataclass(frozen=True, kw_only=True)
class Usage:
    """What a site says about one usage of a URL, and the line that says so."""

    preference: str | None  # "allowed", "disallowed", "unknown"; None: the URL is invalid
    line: int | None = None
    statement: str | None = None  # the Content-Usage or Content-Signal line, as written
    reason: str

    @classmethod
    def of(cls, decision: UsageDecision) -> Usage:
        return cls(**decision._asdict())

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class Verdict:
    """The crawl verdict for one URL, the line that decided, and its usage preferences."""

    url: str
    allowed: bool | None  # None: not a URL a crawler can request
    line: int | None = None
    rule: str | None = None
    reason: str
    usage: dict[str, Usage]  # by category, in the order asked
    #: TDMRep's decision from the origin's file, per category it speaks to (None: not read).
    tdmrep: dict[str, TdmRepDecision] | None = None
    #: What the licence files robots.txt names say, per category (None: none was read).
    rsl: dict[str, RslDecision] | None = None

    @classmethod
    def of(
        cls, robots: RobotsTxt, source: Source, url: str, agent: str, categories: Sequence[str]
    ) -> Verdict:
        """The crawl verdict for *url*, and its usage preference for each of *categories*."""
        try:
            request_url(url)
        except ValueError as error:
            reason = not_a_request(error)
            usage = dict.fromkeys(categories, Usage(preference=None, reason=reason))
            return cls(url=url, allowed=None, reason=reason, usage=usage)
        if not source.parsed:
            assert source.fetched is not None
            reason = outcome_reason(source.fetched)
            nothing = Usage(preference="unknown", reason=f"no rules were parsed: {reason}")
            return cls(
                url=url,
                allowed=source.fetched.outcome == ALLOW_ALL,
                reason=reason,
                usage=dict.fromkeys(categories, nothing),
            )
        decision = crawl_decision(robots, url, agent)
        usage = {
            category: Usage.of(robots.usage(rules_url(url), agent, category))
            for category in categories
        }
        return cls(url=url, **decision._asdict(), usage=usage)

    @property
    def disallows_a_usage(self) -> bool:
        """Whether the site says "not for this purpose" for one of the categories asked about."""
        stated = [*self.usage.values(), *(self.tdmrep or {}).values()]
        refused = any(d.refused for d in (self.rsl or {}).values())
        return refused or any(found.preference == "disallowed" for found in stated)

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            **{key: getattr(self, key) for key in ("allowed", "line", "rule", "reason")},
            "usage": {category: found.as_dict() for category, found in self.usage.items()},
            **({} if self.tdmrep is None else {"tdmrep": _tdmrep_dict(self.tdmrep)}),
            **({} if self.rsl is None else {"rsl": decisions_dict(self.rsl)}),
        }


def _tdmrep_dict(decisions: dict[str, TdmRepDecision]) -> dict[str, Any]:
    return {
        category: {
            "preference": d.preference,
            "licensable": d.licensable,
            "policy": d.policy,
            "entry": None
            if d.statement is None or d.statement.entry is None
            else d.statement.entry.position,
            "reason": d.reason,
        }
        for category, d in decisions.items()
    }


def not_a_request(error: ValueError) -> str:
    return f"not a URL a crawler can request: {error}"


_CATEGORY_WIDTH = max(map(len, USAGE_CATEGORIES))
#: ``_tdmrep.origin_file``, given by the command line (the page command, which it downloads
#: with, imports this module): (URL, agent, timeout) -> (what was found, the parsed file).
OriginFile = Callable[[str, str, float], tuple[str, "TdmRepFile | None"]]


def usage_lines(usage: dict[str, Usage], width: int = _CATEGORY_WIDTH) -> list[str]:
    """``train-ai  DISALLOWED  line 7: Content-Usage: /a/ train-ai=n`` per category, the
    category padded to *width*."""
    lines = []
    for category, found in usage.items():
        preference = (found.preference or "invalid").upper()
        if found.preference in ("allowed", "disallowed"):
            why = f"line {found.line}: {found.statement}"
        else:  # nothing stated, or the URL may not be crawled (its rule is shown above)
            why = f"({found.reason})"
        lines.append(f"{category:<{width}}  {preference:<10}  {why}")
    return lines


@dataclass(kw_only=True)
class CheckReport:
    source: Source
    syntax: int
    agent: str
    categories: list[str]  # the usage categories asked about, in order, each once
    results: list[Verdict]
    notes: list[str] = field(default_factory=list)
    read_from: str | None = None  # --read-anyway: what ROBOTS is, when it is no robots.txt
    tdmrep_found: str | None = None  # the origin's tdmrep.json, as found (None: not read)
    rsl_files: list[LicenceFile] | None = None  # the licence files named (None: not read)

    @classmethod
    def build(
        cls,
        source: Source,
        urls: Sequence[str],
        syntax: int,
        agent: str,
        categories: Sequence[str] = (),
        read_anyway: bool = False,
        timeout: float = 10.0,
        origin_file: OriginFile | None = None,
        fetch_document: FetchDocument | None = None,
    ) -> CheckReport:
        """The verdict for each of *urls*; CliError for ROBOTS that is no robots.txt, unless
        *read_anyway*. *origin_file* downloads the origin's tdmrep.json (within *timeout*) when a
        category asked about is one TDMRep speaks to; None: TDMRep is not read. With a category
        asked about, *fetch_document* downloads the licence files robots.txt names (RSL) when it
        allows one of the URLs; None: RSL is not read."""
        read_from = refuse_unless_read_anyway(source, read_anyway)
        robots = source.rules(syntax)
        asked = list(dict.fromkeys(categories))
        results = [Verdict.of(robots, source, url, agent, asked) for url in urls]
        notes = [f"{source.what_it_is()}; read anyway (--read-anyway)"] if read_from else []
        notes += [f"error: {r.url!r}: {r.reason}" for r in results if r.allowed is None]
        if source.fetched is not None:
            origin = origin_of(source.fetched.url)
            for url in urls:
                try:
                    elsewhere = is_url(url) and origin_of(url) != origin
                except ValueError:
                    continue
                if elsewhere:
                    notes.append(
                        f"{url}: not on {origin}, so this robots.txt does not apply to it "
                        "(RFC 9309 section 2.3)"
                    )
        tdmrep_found = None
        speaks_to = [c for c in asked if usage_category(c) in TDMREP_PURPOSES]
        fetched = source.fetched
        if speaks_to and origin_file is not None and fetched is not None and fetched.url:
            if any(result.allowed for result in results):
                tdmrep_found, file = origin_file(fetched.url, agent, timeout)
                for result in results:
                    if result.allowed is not None:
                        result.tdmrep = _tdmrep_of(result.url, fetched.url, file, speaks_to)
            else:  # as in a crawl, where a page robots.txt forbids never causes its download
                parts = urllib.parse.urlsplit(fetched.url)
                tdmrep_found = (
                    f"{parts.scheme}://{parts.netloc}{TDMREP_PATH}: not downloaded: robots.txt "
                    "allows none of the URLs, and a crawl reads it for a page robots.txt allows"
                )
        report = cls(
            source=source,
            syntax=syntax,
            agent=agent,
            categories=asked,
            results=results,
            notes=notes,
            read_from=read_from,
            tdmrep_found=tdmrep_found,
        )
        licences = robots.licenses if source.parsed else ()
        if asked and licences and fetch_document is not None:
            report.read_licences(licences, fetch_document)
        return report

    def read_licences(self, licences: Sequence[str], fetch_document: FetchDocument) -> None:
        """Each URL's RSL decisions, from the licence files robots.txt names: downloaded only
        when robots.txt allows one of the URLs, as a crawl reads them for such a page only."""
        allowed = [result for result in self.results if result.allowed]
        if not allowed:
            self.notes.append(
                f"{counted(len(licences), 'licence file')} (RSL) not downloaded: robots.txt "
                "allows none of the URLs, and a crawl reads them for a page robots.txt allows"
            )
            return
        self.rsl_files = licence_files([(url, "robots.txt") for url in licences], fetch_document)
        fetched = self.source.fetched
        for result in allowed:
            url = result.url
            if not is_url(url) and fetched is not None:
                url = urllib.parse.urljoin(fetched.url, url)
            result.rsl = rsl_decisions(url, self.rsl_files, self.categories)

    @property
    def status(self) -> int:
        if any(r.allowed is None for r in self.results):
            return EXIT_ERROR
        if all(r.allowed and not r.disallows_a_usage for r in self.results):
            return EXIT_OK
        return EXIT_FLAGGED

    def to_dict(self) -> dict[str, Any]:
        return {
            "robots": self.source.as_dict(),
            "syntax": syntax_name(self.syntax),
            "agent": self.agent,
            "usage_categories": self.categories,
            "results": [result.as_dict() for result in self.results],
            "notes": self.notes,
            **({} if self.tdmrep_found is None else {"tdmrep_file": self.tdmrep_found}),
            **(
                {}
                if self.rsl_files is None
                else {"rsl_files": [found.as_dict() for found in self.rsl_files]}
            ),
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        read_from = f"read from {self.read_from}" if self.read_from else None
        # One column of labels for the usage lines and TDMRep's, wider than either alone.
        labels = {f"TDMRep {c}" for r in self.results for c in (r.tdmrep or {})}
        labels |= {f"RSL {c}" for r in self.results for c in (r.rsl or {})}
        width = max([_CATEGORY_WIDTH, *map(len, labels)])
        for result in self.results:
            verdict = {True: "ALLOWED", False: "DISALLOWED", None: "INVALID"}[result.allowed]
            if result.line is not None:
                why = f"line {result.line}: {result.rule}"
                why += f" ({read_from})" if read_from else ""
            else:
                why = f"({result.reason}; {read_from})" if read_from else f"({result.reason})"
            out(f"{verdict:<10}  {result.url}  {why}")
            for line in usage_lines(result.usage, width):
                out(f"  {line}")
            for category, d in (result.tdmrep or {}).items():
                out(f"  {'TDMRep ' + category:<{width}}  {d.preference.upper():<10}  ({d.reason})")
            for line in rsl_lines(result.rsl or {}, width):
                out(f"  {line}")
        if self.tdmrep_found is not None:
            out(f"tdmrep.json {self.tdmrep_found}")
        for found in self.rsl_files or ():
            out(found.line)


def _tdmrep_of(
    url: str, robots_url: str, file: TdmRepFile | None, categories: Sequence[str]
) -> dict[str, TdmRepDecision]:
    """TDMRep's decision for *url* (a path is taken on robots.txt's origin) from the file."""
    absolute = url if is_url(url) else urllib.parse.urljoin(robots_url, url)
    reservation = tdm_reservation(absolute, file)
    return {category: reservation.usage(category) for category in categories}
