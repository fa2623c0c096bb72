"""``scrapy-rerp audit``: what evidence files (``RERP_EVIDENCE``, docs/evidence.rst) show.

* ``audit FILES... URL [--purpose P] [--at TIME]``: the robots.txt in force for URL at TIME (the
  origin's ``robots`` record fetched last at or before it; the latest without ``--at``), URL
  decided against it again with this engine (the line, and with ``--purpose`` the usage
  preference), and the decision records of URL. Exit 0 allowed, 1 not (refused, or the purpose
  disallowed), 3 no decision record of URL in the files (a request the crawl never made), 2 no
  robots.txt of that origin in the files by then, or its body in none of them.
* ``audit FILES... --origin ORIGIN``: that origin's robots.txt over time, one entry per distinct
  body (first and last read, status, outcome), the rules added and removed from one to the next,
  and the pages downloaded under each. Exit 0, or 2 when the files hold none.
* ``audit verify FILES... ITEMS``: every item of a JSON-lines items file decided again against
  the robots.txt in force when its page was fetched (its provenance's, else that of the page's
  ``downloaded`` record, else the origin's latest): the items that should not be there (refused,
  or the purpose disallowed) and those that cannot be verified (no URL, no robots.txt of its
  origin, its body in none of the files). Exit 1 when any is listed, else 0.

FILES are paths, globs (expanded here, so quoting works) or directories (their evidence files,
:func:`expand`), read together: the files of every worker of a fleet, every batch of a crawl.
A file is JSON lines (gzipped or not) or WARC (``RERP_EVIDENCE_WARC``, read with warcio), told
by its first bytes. Files are read one record at a time and only the records the question needs
are kept (:class:`Wanted`): memory follows the origin and URLs asked about, not the files'
size. A robots.txt record without its body (a copy from the store or the fleet) is read through
another record of its origin with the same sha256 that has it. A file cut short at its end (a
crawl killed mid-write), records of a version this reader does not know, and records of a kind
it does not know are counted and said (stderr; keys in JSON), never fatal. A damaged line (no
whole record of its kind: not UTF-8, not JSON, nested too deep, a field of the wrong type or
range, over ``MAX_LINE_BYTES``) is left out, counted and named in one line per file, and makes
the exit status 2 in every form, whatever the answer from the rest.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter
from typing import IO, Any

from scrapy_rerp.cli._output import EXIT_ERROR, EXIT_FLAGGED, EXIT_OK, CliError, Lines
from scrapy_rerp.core.evidence import (
    DOCUMENTS,
    MAX_LINE_BYTES,
    RecordLine,
    bounded_lines,
    iter_records,
)
from scrapy_rerp.core.settings import RerpSettingsError, syntax_from
from scrapy_rerp.core.urls import crawl_decision, origin_of
from scrapy_rerp.engine import RobotsTxt, parse

__all__ = ["AuditReport", "VerifyReport", "OriginReport", "Evidence", "Wanted", "expand"]

#: The key of an item kept, marked, from a page that refuses a purpose (``RERP_USAGE_DROP =
#: False``): the page directives' ``ITEM_KEY``, named here as this command imports no Scrapy.
PAGE_ITEM_KEY = "rerp_page_usage"


#: audit FILES URL: no decision record of URL in the files (a request the crawl never made).
EXIT_NO_DECISION = 3
#: The files read in a directory (and its subdirectories): the names a crawl's evidence URIs
#: are given (docs/evidence.rst). The WARC files only when there are no JSON lines: a crawl that
#: writes both (RERP_EVIDENCE_WARC) writes the same records twice.
JSON_LINES_SUFFIXES = (".jsonl", ".jsonl.gz")
WARC_SUFFIXES = (".warc", ".warc.gz")
#: Damaged lines named per file (all are counted).
NAMED_DAMAGE = 3
#: Lines of records of an unknown version listed per file (all are counted).
LISTED_UNKNOWN = 100


def _record_time(value: str) -> str:
    """An RFC 3339 time (``--at``), as the records write it (UTC, milliseconds), so that it
    compares with theirs as text."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"--at {value!r} is not an RFC 3339 time (2026-11-28T12:00:00Z)") from None
    if moment.tzinfo is None:
        raise CliError(f"--at {value!r} has no time zone (add Z for UTC)")
    try:
        moment = moment.astimezone(timezone.utc)
    except OverflowError:
        raise CliError(f"--at {value!r} is out of range") from None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Wanted:
    """What a form of the command keeps of the records it reads; the others are read, checked
    and let go, so that memory follows what is asked about, not the files' size."""

    origins: frozenset[str] = frozenset()  # their robots and tdmrep records
    urls: frozenset[str] = frozenset()  # their decision and page records
    downloads_of: str | None = None  # an origin: its downloaded decisions counted by sha256


def expand(patterns: Sequence[str], notes: list[str]) -> list[str]:
    """The files of ``patterns``: paths, globs (expanded here), directories (their evidence
    files, :data:`JSON_LINES_SUFFIXES`, else :data:`WARC_SUFFIXES`, in them and below)."""
    files: list[str] = []
    for pattern in patterns:
        paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not paths:
            raise CliError(f"{pattern}: no file matches")
        for path in paths:
            files.extend(_in_directory(path, notes) if os.path.isdir(path) else [path])
    return files


def _in_directory(directory: str, notes: list[str]) -> list[str]:
    found: dict[str, list[str]] = {"jsonl": [], "warc": [], "other": []}
    kinds = (("jsonl", JSON_LINES_SUFFIXES), ("warc", WARC_SUFFIXES), ("other", ""))
    for folder, subfolders, names in os.walk(directory):
        subfolders.sort()
        for name in sorted(names):
            kind = next(kind for kind, suffixes in kinds if name.endswith(suffixes))
            found[kind].append(os.path.join(folder, name))
    files = found["jsonl"] or found["warc"]
    if not files:
        raise CliError(
            f"{directory}: a directory with no evidence file in it (audit reads its *.jsonl "
            "files, else its *.warc.gz files, and those of its subdirectories)"
        )
    left = len(found["other"]) + (len(found["warc"]) if found["jsonl"] else 0)
    if left:
        both = found["jsonl"] and found["warc"]
        why = " (its WARC files hold the records of its JSON lines)" if both else ""
        notes.append(
            f"{directory}: {len(files)} evidence file(s) read, {left} other file(s) not{why}"
        )
    return files


def _records_of(path: str) -> tuple[str, Iterator[RecordLine]]:
    """What the file at ``path`` holds, told by its first bytes, not its name: ``("WARC
    record", ...)`` or ``("line", ...)`` (JSON lines, gzipped or not), and its records."""
    try:
        with open(path, "rb") as file:
            head = file.read(5)
            gzipped = head[:2] == b"\x1f\x8b"
            if gzipped:
                file.seek(0)
                try:
                    head = gzip.GzipFile(fileobj=file).read(5)
                except (OSError, EOFError, zlib.error):
                    head = b""  # damaged: said when its lines are read
    except OSError as error:
        raise CliError(f"{path}: {error.strerror or error}") from None
    if head.startswith(b"WARC/"):
        try:
            from scrapy_rerp.core.evidence_warc import iter_warc_records
        except ImportError:
            raise CliError(
                f"{path} is a WARC file: reading it needs warcio "
                "(pip install -e './scrapy-rerp[warc]'), or give audit the crawl's JSON lines "
                "(RERP_EVIDENCE)"
            ) from None
        return "WARC record", _read(path, iter_warc_records, gzipped=False)
    return "line", _read(path, iter_records, gzipped)


def _read(
    path: str, reader: Callable[[IO[bytes]], Iterator[RecordLine]], gzipped: bool
) -> Iterator[RecordLine]:
    try:
        with open(path, "rb") as file:
            if gzipped:
                with gzip.GzipFile(fileobj=file) as unzipped:
                    yield from reader(unzipped)  # type: ignore[arg-type]
            else:
                yield from reader(file)
    except OSError as error:
        raise CliError(f"{path}: {error.strerror or error}") from None


@dataclass(kw_only=True)
class Evidence:
    """The records of evidence files, read together, one record at a time: those ``wanted``
    are kept, every other one is checked and counted."""

    robots: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by origin, in time
    decisions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by URL, in time
    pages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by URL, in time
    tdmrep: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by origin, in time
    bodies: dict[str, str] = field(default_factory=dict)  # by sha256
    downloaded: dict[str, int] = field(default_factory=dict)  # Wanted.downloads_of, by sha256
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: dict[str, Any] = field(default_factory=dict)
    damaged: int = 0  # lines (or WARC records) that are no whole evidence record

    @classmethod
    def read(cls, patterns: Sequence[str], wanted: Wanted) -> Evidence:
        evidence = cls()
        # The records kept, by kind: the documents by origin, the decisions and pages by URL.
        kept: dict[str, dict[str, list[dict[str, Any]]]] = {
            kind: defaultdict(list) for kind in ("robots", "tdmrep", "decision", "page")
        }
        downloaded: dict[str, int] = defaultdict(int)
        skipped = 0
        evidence.files = expand(patterns, evidence.notes)
        for path in evidence.files:
            unit, lines = _records_of(path)
            damage: list[RecordLine] = []
            unknown: list[int] = []
            for line in lines:
                record = line.record
                if record is None:
                    if line.problem == "cut":
                        evidence.notes.append(
                            f"{path} ends early: {unit} {line.number} is cut short"
                        )
                        evidence.problems.setdefault("cut_at_line", {})[path] = line.number
                    elif line.problem == "unknown_version":
                        unknown.append(line.number)
                    else:
                        damage.append(line)
                    continue
                kind = record["kind"]
                if kind in DOCUMENTS:  # another kind's documents decide nothing audit reads
                    if record["origin"] in wanted.origins:
                        kept[kind][record["origin"]].append(record)
                        if record["body"] is not None:
                            evidence.bodies.setdefault(record["sha256"], record["body"])
                elif kind in kept:  # a decision or a page
                    if record["url"] in wanted.urls:
                        kept[kind][record["url"]].append(record)
                    if (
                        kind == "decision"
                        and wanted.downloads_of is not None
                        and record["verdict"] == "downloaded"
                        and _safe_origin(record["url"]) == wanted.downloads_of
                    ):
                        downloaded[record["robots_sha256"] or ""] += 1
                else:
                    skipped += 1
            evidence._said(path, unit, damage, unknown)
        if skipped:
            evidence.notes.append(
                f"{skipped} record(s) of a kind this reader does not know, left out"
            )
            evidence.problems["skipped_records"] = skipped
        fetched, at = itemgetter("fetched_at"), itemgetter("at")
        evidence.robots = {o: sorted(r, key=fetched) for o, r in kept["robots"].items()}
        evidence.decisions = {u: _distinct(sorted(d, key=at)) for u, d in kept["decision"].items()}
        evidence.pages = {u: sorted(p, key=at) for u, p in kept["page"].items()}
        evidence.tdmrep = {o: sorted(r, key=fetched) for o, r in kept["tdmrep"].items()}
        evidence.downloaded = dict(downloaded)
        return evidence

    def _said(self, path: str, unit: str, damage: list[RecordLine], unknown: list[int]) -> None:
        if unknown:
            self.notes.append(
                f"{path}: {len(unknown)} record(s) of a version this reader does not know, left out"
            )
            self.problems.setdefault("unknown_version_lines", {})[path] = unknown[:LISTED_UNKNOWN]
        if damage:
            self.damaged += len(damage)
            named = "; ".join(
                f"{unit} {line.number}: {line.reason}" for line in damage[:NAMED_DAMAGE]
            )
            more = ", ..." if len(damage) > NAMED_DAMAGE else ""
            self.notes.append(
                f"error: {path}: {len(damage)} damaged {unit}(s), left out ({named}{more})"
            )
            self.problems.setdefault("damaged", {})[path] = {
                "count": len(damage),
                "first": [
                    {unit.split()[-1]: line.number, "reason": line.reason}
                    for line in damage[:NAMED_DAMAGE]
                ],
            }

    def page(self, url: str, at: str | None = None) -> dict[str, Any] | None:
        """The page record of ``url`` read last at or before ``at`` (a record time: what the
        page said of itself then)."""
        return _last(self.pages.get(url, []), "at", at)

    def in_force(self, url: str, at: str | None = None) -> dict[str, Any] | None:
        """The robots.txt record of ``url``'s origin fetched last at or before ``at`` (a record
        time)."""
        return _last(self.robots.get(_origin(url), []), "fetched_at", at)

    def by_sha256(self, url: str, sha256: str) -> dict[str, Any] | None:
        records = reversed(self.robots.get(_origin(url), []))
        return next((record for record in records if record["sha256"] == sha256), None)

    def rules(self, record: dict[str, Any]) -> RobotsTxt | None:
        """The rules of a robots.txt record as this engine reads them; None without a body in
        any file (a record whose outcome says what it means needs none)."""
        syntax = _syntax(record)
        outcome = record.get("outcome")
        if outcome == "allow-all":
            return RobotsTxt.allow_all(syntax)
        if outcome == "disallow-all":
            return RobotsTxt.disallow_all(syntax)
        body = self.bodies.get(record["sha256"])
        return None if body is None else parse(body, syntax)


def _last(records: list[dict[str, Any]], key: str, at: str | None) -> dict[str, Any] | None:
    """The last of ``records`` (in time order) whose time ``key`` is at or before ``at``."""
    if at is not None:
        records = [r for r in records if r[key] <= at]
    return records[-1] if records else None


def _distinct(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in time order, each once: the same decision read from two files (a batch and
    its copy, the JSON lines and the WARC of a crawl) is one."""
    return list({json.dumps(record, sort_keys=True): record for record in records}.values())


def _page_refusal(page: dict[str, Any] | None, purpose: str | None) -> dict[str, Any] | None:
    """What a page record says against ``purpose`` for the page's content (a refusal of its
    images only is not one against the page)."""
    if page is None or purpose is None:
        return None
    for refusal in page["refused"]:
        if refusal.get("purpose") == purpose and not refusal.get("images_only"):
            return refusal
    return None


def _origin(url: str) -> str:
    try:
        return origin_of(url)
    except ValueError:
        raise CliError(f"{url!r} is not an absolute http:// or https:// URL") from None


def _syntax(record: dict[str, Any]) -> int:
    try:
        return syntax_from(record.get("syntax") or "rfc9309")
    except RerpSettingsError:
        return syntax_from("rfc9309")


def _decide(
    evidence: Evidence, record: dict[str, Any], url: str, purpose: str | None
) -> dict[str, Any] | None:
    """URL decided again against ``record``'s robots.txt: verdict, line, rule and usage."""
    rules = evidence.rules(record)
    if rules is None:
        return None
    agent = record.get("agent") or "*"
    decision = crawl_decision(rules, url, agent)
    agents = rules.agents_at(decision.line) if decision.line is not None else None
    result: dict[str, Any] = {
        "allowed": decision.allowed,
        "line": decision.line,
        "rule": decision.rule,
        "group": ", ".join(agents) if agents is not None else None,
        "reason": decision.reason,
    }
    if purpose is not None:
        usage = rules.usage(url, agent, purpose)
        result["usage"] = {
            "purpose": purpose,
            "preference": usage.preference,
            "line": usage.line,
            "statement": usage.statement,
        }
    return result


def _denied(decided: dict[str, Any]) -> bool:
    usage = decided.get("usage")
    return not decided["allowed"] or (usage is not None and usage["preference"] == "disallowed")


def _robots_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {
        key: record.get(key)
        for key in ("origin", "url", "fetched_at", "status", "outcome", "sha256", "source")
    }


@dataclass(kw_only=True)
class AuditReport:
    """``audit FILES URL``."""

    url: str
    evidence: Evidence
    purpose: str | None
    at: str | None
    robots: dict[str, Any] | None = None
    decided: dict[str, Any] | None = None
    page: dict[str, Any] | None = None  # what the page said of itself, as last read by then

    @classmethod
    def build(
        cls, files: Sequence[str], url: str, purpose: str | None, at: str | None
    ) -> AuditReport:
        moment = _record_time(at) if at is not None else None
        origin = _origin(url)  # an error before any file is read
        evidence = Evidence.read(files, Wanted(frozenset({origin}), frozenset({url})))
        report = cls(url=url, evidence=evidence, purpose=purpose, at=at)
        report.robots = evidence.in_force(url, moment)
        if report.robots is not None:
            report.decided = _decide(evidence, report.robots, url, purpose)
        report.page = evidence.page(url, moment)
        return report

    @property
    def recorded(self) -> bool:
        """Whether the files hold a decision record of URL (a request the crawl made)."""
        return bool(self.evidence.decisions.get(self.url))

    @property
    def notes(self) -> list[str]:
        notes = list(self.evidence.notes)
        if self.robots is None:
            when = f" by {self.at}" if self.at else ""
            notes.append(f"error: no robots.txt of {_origin(self.url)} in these files{when}")
        elif self.decided is None:
            notes.append(
                f"error: the body of robots.txt {self.robots['sha256'][:12]} is in none of these "
                "files (read from the store or the fleet: add the files of the run or worker "
                "that downloaded it)"
            )
        return notes

    @property
    def status(self) -> int:
        if self.decided is None or self.evidence.damaged:
            return EXIT_ERROR
        if not self.recorded:
            return EXIT_NO_DECISION
        refused_by_page = _page_refusal(self.page, self.purpose) is not None
        return EXIT_FLAGGED if _denied(self.decided) or refused_by_page else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "at": self.at,
            "purpose": self.purpose,
            "robots": _robots_summary(self.robots) if self.robots else None,
            "decision": self.decided,
            "decision_recorded": self.recorded,
            "records": [
                {k: r.get(k) for k in ("at", "verdict", "reason", "robots_sha256", "line")}
                for r in self.evidence.decisions.get(self.url, [])
            ],
            "page": self.page,
            "page_refused": _page_refusal(self.page, self.purpose),
            "files": self.evidence.files,
            **self.evidence.problems,
        }

    def render_text(self, out: Lines) -> None:
        if self.robots is None or self.decided is None:
            return
        robots = self.robots
        out(
            f"robots.txt in force: {robots.get('url')} fetched {robots['fetched_at']} "
            f"(HTTP {robots.get('status')}, {robots.get('outcome')}, sha256 "
            f"{robots['sha256'][:12]}, {robots.get('source', 'download')})"
        )
        decided = self.decided
        verdict = "allowed" if decided["allowed"] else "disallowed"
        where = f"line {decided['line']}: {decided['rule']}" if decided["line"] else "no rule"
        out(f"{self.url}: {verdict} ({where})")
        usage = decided.get("usage")
        if usage is not None:
            said = f" (line {usage['line']}: {usage['statement']})" if usage["line"] else ""
            out(f"  {usage['purpose']}: {usage['preference']}{said}")
        for record in self.evidence.decisions.get(self.url, []):
            reason = f" ({record['reason']})" if record.get("reason") else ""
            out(f"  recorded {record['at']}: {record['verdict']}{reason}")
        if not self.recorded:
            out(
                f"  no decision was recorded for {self.url} in these files (a request the crawl "
                "never made, or one that did not obey robots.txt)"
            )
        page = self.page
        if page is not None:
            said = [f"{d['source']}: {d['text']}" for d in page.get("directives") or []]
            tdmrep = page.get("tdmrep")
            if tdmrep:
                said.append(f"TDMRep ({tdmrep['technique']}): {tdmrep['source']}")
            out(f"  the page said ({page['at']}): {'; '.join(said) or 'nothing'}")
            for refusal in page["refused"]:
                which = " (its images)" if refusal.get("images_only") else ""
                out(
                    f"    {refusal['purpose']}{which} refused: {refusal.get('statement')} "
                    f"({refusal.get('source')}); items {page.get('items')}"
                )


def _rule_lines(rules: RobotsTxt | None) -> set[str]:
    """A file's rules as comparable lines: ``agent, agent: Disallow: /x``."""
    if rules is None:
        return set()
    return {
        f"{', '.join(group.agents)}: {'Allow' if is_allow else 'Disallow'}: {pattern}"
        for group in rules.groups
        for is_allow, pattern, _ in group.rules
    }


@dataclass
class OriginReport:
    """``audit FILES --origin ORIGIN``."""

    origin: str
    evidence: Evidence
    versions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(cls, files: Sequence[str], origin: str) -> OriginReport:
        key = _origin(origin)
        evidence = Evidence.read(files, Wanted(frozenset({key}), downloads_of=key))
        report = cls(key, evidence)
        previous: set[str] = set()
        for record in evidence.robots.get(key, []):
            if report.versions and report.versions[-1]["sha256"] == record["sha256"]:
                report.versions[-1]["last_read"] = record["fetched_at"]
                continue
            rules = _rule_lines(evidence.rules(record))
            report.versions.append(
                {
                    **_robots_summary(record),
                    "first_read": record["fetched_at"],
                    "last_read": record["fetched_at"],
                    "body_known": record["sha256"] in evidence.bodies,
                    "added": sorted(rules - previous),
                    "removed": sorted(previous - rules),
                    "pages_downloaded": evidence.downloaded.get(record["sha256"], 0),
                }
            )
            previous = rules
        return report

    @property
    def notes(self) -> list[str]:
        notes = list(self.evidence.notes)
        if not self.versions:
            notes.append(f"error: no robots.txt of {self.origin} in these files")
        return notes

    @property
    def status(self) -> int:
        return EXIT_OK if self.versions and not self.evidence.damaged else EXIT_ERROR

    def to_dict(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "versions": self.versions,
            "files": self.evidence.files,
            **self.evidence.problems,
        }

    def render_text(self, out: Lines) -> None:
        for number, version in enumerate(self.versions, start=1):
            out(
                f"{number}. sha256 {version['sha256'][:12]}: read {version['first_read']} to "
                f"{version['last_read']}, HTTP {version['status']}, {version['outcome']}, "
                f"{version['pages_downloaded']} page(s) downloaded under it"
            )
            if not version["body_known"] and version["outcome"] == "parsed":
                out("   its body is in none of these files")
            for line in version["added"]:
                out(f"   + {line}")
            for line in version["removed"]:
                out(f"   - {line}")


def _safe_origin(url: str) -> str | None:
    try:
        return origin_of(url)
    except ValueError:
        return None


@dataclass(kw_only=True)
class VerifyReport:
    """``audit verify FILES ITEMS``."""

    items_path: str
    evidence: Evidence
    purpose: str | None
    items: int = 0
    listed: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        files: Sequence[str],
        items_path: str,
        purpose: str | None,
        url_field: str,
        provenance_field: str,
    ) -> VerifyReport:
        # The items are read twice, one at a time: for the URLs whose records to keep, then
        # to verify each against them.
        urls = {url for _, item in _items(items_path) if (url := _url_of(item, url_field))}
        origins = {origin for url in urls if (origin := _safe_origin(url))}
        evidence = Evidence.read(files, Wanted(frozenset(origins), frozenset(urls)))
        report = cls(items_path=items_path, evidence=evidence, purpose=purpose)
        for number, item in _items(items_path):
            report.items += 1
            report._verify(number, item, url_field, provenance_field)
        return report

    def _verify(self, number: int, item: Any, url_field: str, provenance_field: str) -> None:
        def listed(why: str, **facts: Any) -> None:
            self.listed.append({"line": number, "problem": why, **facts})

        if isinstance(item, _NotAnItem):
            listed("unverifiable", reason=item.reason)
            return
        url = _url_of(item, url_field)
        if not isinstance(url, str) or _safe_origin(url) is None:
            listed("unverifiable", reason=f"no absolute URL in its {url_field!r} field")
            return
        record = self._robots_of(item, url, provenance_field)
        if record is None:
            listed("unverifiable", url=url, reason="no robots.txt of its origin in these files")
            return
        decided = _decide(self.evidence, record, url, self.purpose)
        if decided is None:
            listed("unverifiable", url=url, reason="its robots.txt's body is in none of the files")
            return
        if _denied(decided):
            listed(
                "refused by robots.txt" if not decided["allowed"] else f"{self.purpose} disallowed",
                url=url,
                robots_sha256=record["sha256"],
                robots_fetched_at=record["fetched_at"],
                **decided,
            )
            return
        page = self.evidence.page(url)
        refusal = _page_refusal(page, self.purpose)
        if refusal is None or page is None:
            return
        # A page that refuses the purpose: its items were dropped, or kept marked
        # (RERP_USAGE_DROP = False): an unmarked one should not be there.
        marks = item.get(PAGE_ITEM_KEY)
        if page.get("items") == "marked" and isinstance(marks, dict) and self.purpose in marks:
            return
        listed(
            f"{self.purpose} refused by the page",
            url=url,
            page_at=page["at"],
            rule=None,
            source=refusal.get("source"),
            statement=refusal.get("statement"),
            reason=refusal.get("reason"),
        )

    def _robots_of(self, item: dict[str, Any], url: str, provenance_field: str) -> Any:
        provenance = item.get(provenance_field)
        if isinstance(provenance, dict) and isinstance(provenance.get("robots_sha256"), str):
            found = self.evidence.by_sha256(url, provenance["robots_sha256"])
            if found is not None:
                return found
        downloaded = [
            r for r in self.evidence.decisions.get(url, []) if r["verdict"] == "downloaded"
        ]
        if downloaded:
            sha256 = downloaded[-1].get("robots_sha256")
            found = self.evidence.by_sha256(url, sha256) if isinstance(sha256, str) else None
            return found or self.evidence.in_force(url, downloaded[-1]["at"])
        return self.evidence.in_force(url)

    @property
    def notes(self) -> list[str]:
        return list(self.evidence.notes)

    @property
    def status(self) -> int:
        if self.evidence.damaged:
            return EXIT_ERROR
        return EXIT_FLAGGED if self.listed else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "items_file": self.items_path,
            "purpose": self.purpose,
            "items": self.items,
            "listed": self.listed,
            "files": self.evidence.files,
            **self.evidence.problems,
        }

    def render_text(self, out: Lines) -> None:
        for entry in self.listed:
            if entry.get("statement"):  # refused by the page
                where = f" ({entry['source']}: {entry['statement']}, read {entry['page_at']})"
            elif entry.get("rule"):
                where = f" (line {entry['line']} of robots.txt: {entry['rule']})"
            else:
                where = ""
            subject = entry.get("url") or f"item at line {entry['line']}"
            reason = f": {entry['reason']}" if entry["problem"] == "unverifiable" else ""
            out(f"{subject}: {entry['problem']}{where}{reason}")
        out(
            f"{self.items} item(s) checked, {len(self.listed)} listed"
            + ("" if self.listed else ": every item's page was allowed when it was fetched")
        )


@dataclass(frozen=True)
class _NotAnItem:
    reason: str


def _items(path: str) -> Iterator[tuple[int, Any]]:
    """The items of a JSON-lines file, one line at a time: ``(line, item)``, the item a
    :class:`_NotAnItem` when the line is none."""
    try:
        with open(path, "rb") as file:
            for number, raw, _ in bounded_lines(file):
                if raw is None:
                    yield number, _NotAnItem(f"a line over {MAX_LINE_BYTES:,} bytes")
                elif raw.strip():
                    yield number, _item(raw)
    except OSError as error:
        raise CliError(f"{path}: {error.strerror or error}") from None


def _item(raw: bytes) -> Any:
    try:
        item = json.loads(raw)
    except (ValueError, RecursionError):
        return _NotAnItem("not a JSON object")
    return item if isinstance(item, dict) else _NotAnItem("not a JSON object")


def _url_of(item: Any, url_field: str) -> str | None:
    url = item.get(url_field) if isinstance(item, dict) else None
    return url if isinstance(url, str) else None


def split_arguments(arguments: Iterable[str], origin: str | None) -> tuple[str, ...]:
    """The command's form from its arguments: ``("verify", files..., items)``,
    ``("origin", files...)`` or ``("url", files..., url)``."""
    args = list(arguments)
    if args and args[0] == "verify":
        if len(args) < 3:
            raise CliError("audit verify needs evidence FILES and an ITEMS file")
        return ("verify", *args[1:])
    if origin is not None:
        if not args:
            raise CliError("audit --origin needs evidence FILES")
        return ("origin", *args)
    if len(args) < 2 or "://" not in args[-1]:
        raise CliError("audit needs evidence FILES and then a URL (or --origin, or verify)")
    return ("url", *args)
