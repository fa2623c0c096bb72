"""RSL licence files (docs/usage.rst, "RSL licences") in the command line.

* ``fetch`` of a URL, or ``lint`` of a file or URL, whose body is an RSL document (its root
  element ``<rsl>``) summarises it, or lints it: its content elements, their licences, the
  problems found (:class:`RslFileReport`);
* ``check --usage`` and ``page`` download the licence files a robots.txt names (``License:``)
  and, for ``page``, those the page links to (its ``Link`` header, its head's ``<link>``), each
  once, as a crawl's documents are downloaded (:func:`licence_files`), and show what they say
  of each purpose (:func:`rsl_lines`).

``fetch`` exits 1 when the file is unusable (it states nothing), ``lint`` when it has a problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._source import Source
from scrapy_rerp.core.wording import counted
from scrapy_rerp.engine import RslDecision, RslFile, license_decision, parse_rsl


class FetchedDocument(Protocol):
    """What this module reads of a downloaded licence file (``page``'s ``Page``)."""

    status: int
    final_url: str
    body: bytes


#: ``page``'s download of a document (``fetch_page(url, agent, timeout, document=True)``): the
#: page command, which this module's lines are shown by, gives it.
FetchDocument = Callable[[str], FetchedDocument]

__all__ = [
    "FetchDocument",
    "FetchedDocument",
    "LicenceFile",
    "PageLicences",
    "RslFileReport",
    "decisions_dict",
    "licence_files",
    "looks_like_rsl",
    "rsl_decisions",
    "rsl_lines",
]

# The root element of an RSL document near the top (after an XML declaration, comments or a
# BOM): ``<rsl`` or a prefixed ``<x:rsl``.
_RSL_ROOT = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?rsl[\s>/]")
_SNIFFED_BYTES = 4096
# An XML declaration, processing instructions, comments and a DOCTYPE (which the engine
# refuses, saying so: the file is still an RSL file to lint), before the root element.
_PROLOG = re.compile(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>", re.S)


def looks_like_rsl(raw: bytes) -> bool:
    """Whether *raw* starts as an RSL document (its first element ``<rsl>``): what ``fetch``
    and ``lint`` read as one rather than as a robots.txt."""
    head = raw[:_SNIFFED_BYTES]
    match = _RSL_ROOT.search(head)
    return match is not None and b"<" not in _PROLOG.sub(b"", head[: match.start()])


@dataclass(frozen=True, kw_only=True)
class LicenceFile:
    """One licence file as the command line found it."""

    url: str
    named_by: str  # "robots.txt", "Link header", "<link>"
    found: str  # what its download gave, in a few words
    file: RslFile | None  # None: no file (not 2xx, or no answer)

    @property
    def line(self) -> str:
        """``licence URL (robots.txt): HTTP 200, 2 content elements``, as the text shows it."""
        return f"licence {self.url} ({self.named_by}): {self.found}"

    def as_dict(self) -> dict[str, Any]:
        file = self.file
        return {
            "url": self.url,
            "named_by": self.named_by,
            "found": self.found,
            "valid": None if file is None else file.valid,
            "contents": None if file is None else len(file.contents),
            "problems": [] if file is None else [p._asdict() for p in file.problems],
        }


def licence_files(named: Sequence[tuple[str, str]], fetch: FetchDocument) -> list[LicenceFile]:
    """The files of *named* ((URL, named by) pairs) downloaded with *fetch*, as a crawl
    downloads its per-origin documents (any redirect, the size cap), each URL once."""
    first: dict[str, str] = {}  # each URL once, named by what named it first
    for url, named_by in named:
        first.setdefault(url, named_by)
    return [_licence_file(url, named_by, fetch) for url, named_by in first.items()]


def _licence_file(url: str, named_by: str, fetch: FetchDocument) -> LicenceFile:
    try:
        page = fetch(url)
    except CliError as error:
        return LicenceFile(url=url, named_by=named_by, found=f"unreachable ({error})", file=None)
    if not 200 <= page.status < 300:
        return LicenceFile(
            url=url, named_by=named_by, found=f"HTTP {page.status}, no file", file=None
        )
    file = parse_rsl(page.body, page.final_url)
    state = _contents(file) if file.valid else f"unusable ({_first_problem(file)}): states nothing"
    return LicenceFile(url=url, named_by=named_by, found=f"HTTP {page.status}, {state}", file=file)


def _first_problem(file: RslFile) -> str:
    return file.problems[0].message if file.problems else "unreadable"


def _contents(file: RslFile) -> str:
    return counted(len(file.contents), "content element", "content elements")


def rsl_decisions(
    url: str, files: Sequence[LicenceFile], purposes: Sequence[str]
) -> dict[str, RslDecision]:
    """What the files say together of each of *purposes* for *url* (``license_decision``)."""
    parsed = [found.file for found in files if found.file is not None]
    decided = {purpose: license_decision(url, purpose, parsed) for purpose in purposes}
    return {purpose: d for purpose, d in decided.items() if d is not None}


def rsl_lines(decisions: dict[str, RslDecision], width: int) -> list[str]:
    """``RSL train-ai  DISALLOWED  (https://example.com/license.xml: content '/', ...)``."""
    return [
        f"{'RSL ' + purpose:<{width}}  {d.preference.upper():<10}  ({d.file}: {d.reason})"
        for purpose, d in decisions.items()
    ]


def decisions_dict(decisions: dict[str, RslDecision]) -> dict[str, Any]:
    return {
        purpose: {
            "preference": d.preference,
            "file": d.file,
            "content": None if d.content is None else d.content.url,
            "license": d.license,
            "reason": d.reason,
        }
        for purpose, d in decisions.items()
    }


@dataclass(frozen=True)
class PageLicences:
    """What RSL says of a page (``page``): the files robots.txt names and the page links to,
    and their decision per purpose."""

    files: list[LicenceFile]
    decisions: dict[str, RslDecision]

    @classmethod
    def of(
        cls,
        url: str,
        named: Sequence[tuple[str, str]],
        fetch: FetchDocument,
        purposes: Sequence[str],
    ) -> PageLicences:
        files = licence_files(named, fetch)
        return cls(files, rsl_decisions(url, files, purposes))

    @property
    def refused(self) -> bool:
        return any(decision.refused for decision in self.decisions.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": [found.as_dict() for found in self.files],
            "usage": decisions_dict(self.decisions),
        }

    def render_text(self, out: Callable[[str], None], width: int) -> None:
        for found in self.files:
            out(found.line)
        for line in rsl_lines(self.decisions, width):
            out(f"  {line}")


@dataclass(kw_only=True)
class RslFileReport:
    """``fetch`` or ``lint`` of an RSL file."""

    source: Source
    file: RslFile
    lint: bool  # lint's report (its exit status counts problems), else fetch's
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, source: Source, lint: bool) -> RslFileReport:
        url = source.robots_url or source.name  # after redirects
        return cls(source=source, file=parse_rsl(source.raw, url), lint=lint)

    @property
    def status(self) -> int:
        if self.lint:
            return EXIT_FLAGGED if self.file.problems else EXIT_OK
        return EXIT_OK if self.file.valid else EXIT_FLAGGED

    @property
    def found(self) -> str:
        if not self.file.valid:
            return f"an RSL file that states nothing ({_first_problem(self.file)})"
        return f"an RSL file, {_contents(self.file)}"

    def to_dict(self) -> dict[str, Any]:
        file = self.file
        return {
            "source": self.source.name,
            "fetch": None if self.source.fetched is None else self.source.fetched.as_dict(),
            "rsl": True,
            "found": self.found,
            "valid": file.valid,
            "contents": [
                {
                    "position": content.position,
                    "url": content.url,
                    "server": content.server,
                    "licenses": [
                        {
                            "position": licence.position,
                            "permits": {k: sorted(v) for k, v in licence.permits.items()},
                            "prohibits": {k: sorted(v) for k, v in licence.prohibits.items()},
                            "payments": list(licence.payments),
                            "terms_held": licence.terms_held,
                        }
                        for licence in content.licenses
                    ],
                }
                for content in file.contents
            ],
            "problems": [problem._asdict() for problem in file.problems],
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        out(f"{self.source.label}: {self.found}")
        if not self.lint:
            for content in self.file.contents:
                server = f", licence server {content.server}" if content.server else ""
                out(f"  content {content.position}: {content.url}{server}")
                for licence in content.licenses:
                    out(f"    licence {licence.position}: {_terms(licence)}")
        out(f"problems: {len(self.file.problems)}")
        for problem in self.file.problems:
            where = f"line {problem.line}" if problem.line else "file"
            out(f"  {where}: {problem.code}: {problem.message}")


def _terms(licence: Any) -> str:
    parts = [
        f"{word} {kind} {', '.join(sorted(tokens)) or '(nothing)'}"
        for word, terms in (("permits", licence.permits), ("prohibits", licence.prohibits))
        for kind, tokens in terms.items()
    ]
    parts.append(f"payment {', '.join(licence.payments) or 'free (none written)'}")
    return "; ".join(parts)
