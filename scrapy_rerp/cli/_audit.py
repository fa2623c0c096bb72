"""``scrapy-rerp audit``: what evidence files (``RERP_EVIDENCE``, docs/evidence.rst) show.

* ``audit FILES... URL [--purpose P] [--at TIME]``: the robots.txt in force for URL at TIME (the
  origin's ``robots`` record fetched last at or before it; the latest without ``--at``), URL
  decided against it again with this engine (the line, and with ``--purpose`` the usage
  preference), and the decision records of URL. Exit 0 allowed, 1 not (refused, or the purpose
  disallowed), 2 no robots.txt of that origin in the files by then, or its body in none of them.
* ``audit FILES... --origin ORIGIN``: that origin's robots.txt over time, one entry per distinct
  body (first and last read, status, outcome), the rules added and removed from one to the next,
  and the pages downloaded under each. Exit 0, or 2 when the files hold none.
* ``audit verify FILES... ITEMS``: every item of a JSON-lines items file decided again against
  the robots.txt in force when its page was fetched (its provenance's, else that of the page's
  ``downloaded`` record, else the origin's latest): the items that should not be there (refused,
  or the purpose disallowed) and those that cannot be verified (no URL, no robots.txt of its
  origin, its body in none of the files). Exit 1 when any is listed, else 0.

FILES are paths or globs (expanded here, so quoting works), read together: the files of every
worker of a fleet, every batch of a crawl. A robots.txt record without its body (a copy from the
store or the fleet) is read through another record of the same sha256 that has it. A file cut
short (a crawl killed mid-write), records of a version this reader does not know, and records
that are not whole evidence records are counted and said (stderr; keys in JSON), never fatal.
"""

from __future__ import annotations

import glob
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scrapy_rerp.cli._output import EXIT_ERROR, EXIT_FLAGGED, EXIT_OK, CliError, Lines
from scrapy_rerp.core.evidence import DOCUMENTS, read_records
from scrapy_rerp.core.settings import RerpSettingsError, syntax_from
from scrapy_rerp.core.urls import crawl_decision, origin_of
from scrapy_rerp.engine import RobotsTxt, parse

__all__ = ["AuditReport", "VerifyReport", "OriginReport", "Evidence"]

#: The field of an item holding its provenance (``RERP_EVIDENCE_ITEM_FIELD``), unless told.
DEFAULT_PROVENANCE_FIELD = "rerp_provenance"
#: The key of an item kept, marked, from a page that refuses a purpose (``RERP_USAGE_DROP =
#: False``): the page directives' ``ITEM_KEY``, named here as this command imports no Scrapy.
PAGE_ITEM_KEY = "rerp_page_usage"


def _time(value: str) -> datetime:
    """An RFC 3339 time, as the records write them (``...Z``) or with an offset."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"--at {value!r} is not an RFC 3339 time (2026-11-28T12:00:00Z)") from None
    if moment.tzinfo is None:
        raise CliError(f"--at {value!r} has no time zone (add Z for UTC)")
    return moment


def _is_document(record: dict[str, Any]) -> bool:
    """A ``robots`` or ``tdmrep`` record: an origin's document as read."""
    return (
        record.get("kind") in DOCUMENTS
        and isinstance(record.get("origin"), str)
        and isinstance(record.get("fetched_at"), str)
        and isinstance(record.get("sha256"), str)
        and isinstance(record.get("body"), (str, type(None)))
    )


def _is_decision(record: dict[str, Any]) -> bool:
    return (
        record.get("kind") == "decision"
        and isinstance(record.get("url"), str)
        and isinstance(record.get("at"), str)
        and isinstance(record.get("verdict"), str)
    )


def _is_page(record: dict[str, Any]) -> bool:
    refused = record.get("refused")
    return (
        record.get("kind") == "page"
        and isinstance(record.get("url"), str)
        and isinstance(record.get("at"), str)
        and isinstance(refused, list)
        and all(isinstance(r, dict) and isinstance(r.get("purpose"), str) for r in refused)
    )


@dataclass
class Evidence:
    """The records of evidence files, read together."""

    robots: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by origin, in time
    decisions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by URL, in time
    pages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by URL, in time
    tdmrep: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by origin, in time
    bodies: dict[str, str] = field(default_factory=dict)  # by sha256
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, patterns: Sequence[str]) -> Evidence:
        evidence = cls()
        robots: dict[str, list[dict[str, Any]]] = defaultdict(list)
        decisions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        pages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        tdmrep: dict[str, list[dict[str, Any]]] = defaultdict(list)
        skipped = 0
        for pattern in patterns:
            paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
            if not paths:
                raise CliError(f"{pattern}: no file matches")
            evidence.files.extend(paths)
        for path in evidence.files:
            try:
                with open(path, "rb") as file:
                    read = read_records(file)
            except OSError as error:
                raise CliError(f"{path}: {error.strerror or error}") from None
            if read.cut_at_line is not None:
                evidence.notes.append(f"{path} ends early: line {read.cut_at_line} is cut short")
                evidence.problems.setdefault("cut_at_line", {})[path] = read.cut_at_line
            if read.unknown_version_lines:
                evidence.notes.append(
                    f"{path}: {len(read.unknown_version_lines)} record(s) of a version this "
                    "reader does not know, left out"
                )
                evidence.problems.setdefault("unknown_version_lines", {})[path] = list(
                    read.unknown_version_lines
                )
            for record in read.records:
                if _is_document(record):
                    documents = robots if record["kind"] == "robots" else tdmrep
                    documents[record["origin"]].append(record)
                    if record["body"] is not None:
                        evidence.bodies.setdefault(record["sha256"], record["body"])
                elif _is_decision(record):
                    decisions[record["url"]].append(record)
                elif _is_page(record):
                    pages[record["url"]].append(record)
                else:
                    skipped += 1
        if skipped:
            evidence.notes.append(f"{skipped} record(s) not whole evidence records, left out")
            evidence.problems["skipped_records"] = skipped
        evidence.robots = {o: sorted(r, key=_fetched) for o, r in robots.items()}
        evidence.decisions = {u: sorted(d, key=_at) for u, d in decisions.items()}
        evidence.pages = {u: sorted(p, key=_at) for u, p in pages.items()}
        evidence.tdmrep = {o: sorted(r, key=_fetched) for o, r in tdmrep.items()}
        return evidence

    def page(self, url: str, at: str | None = None) -> dict[str, Any] | None:
        """The page record of ``url`` read last at or before ``at`` (what the page said of
        itself then)."""
        records = self.pages.get(url, [])
        if at is not None:
            moment = _time(at)
            records = [r for r in records if _time(r["at"]) <= moment]
        return records[-1] if records else None

    def in_force(self, url: str, at: str | None = None) -> dict[str, Any] | None:
        """The robots.txt record of ``url``'s origin fetched last at or before ``at``."""
        records = self.robots.get(_origin(url), [])
        if at is not None:
            moment = _time(at)
            records = [r for r in records if _time(r["fetched_at"]) <= moment]
        return records[-1] if records else None

    def by_sha256(self, url: str, sha256: str) -> dict[str, Any] | None:
        for record in reversed(self.robots.get(_origin(url), [])):
            if record["sha256"] == sha256:
                return record
        return None

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
        if body is None:
            return None
        return parse(body, syntax)


def _fetched(record: dict[str, Any]) -> str:
    return record["fetched_at"]


def _at(record: dict[str, Any]) -> str:
    return record["at"]


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


@dataclass
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
        evidence = Evidence.read(files)
        report = cls(url, evidence, purpose, at)
        report.robots = evidence.in_force(url, at)
        if report.robots is not None:
            report.decided = _decide(evidence, report.robots, url, purpose)
        report.page = evidence.page(url, at)
        return report

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
        if self.decided is None:
            return EXIT_ERROR
        refused_by_page = _page_refusal(self.page, self.purpose) is not None
        return EXIT_FLAGGED if _denied(self.decided) or refused_by_page else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "at": self.at,
            "purpose": self.purpose,
            "robots": _robots_summary(self.robots) if self.robots else None,
            "decision": self.decided,
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
        page = self.page
        if page is not None:
            said = "; ".join(f"{d['source']}: {d['text']}" for d in page.get("directives") or [])
            tdmrep = page.get("tdmrep")
            if tdmrep:
                said = "; ".join(
                    filter(None, [said, f"TDMRep ({tdmrep['technique']}): {tdmrep['source']}"])
                )
            out(f"  the page said ({page['at']}): {said or 'nothing'}")
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
    lines = set()
    for group in rules.groups:
        agents = ", ".join(group.agents)
        for is_allow, pattern, _ in group.rules:
            lines.add(f"{agents}: {'Allow' if is_allow else 'Disallow'}: {pattern}")
    return lines


@dataclass
class OriginReport:
    """``audit FILES --origin ORIGIN``."""

    origin: str
    evidence: Evidence
    versions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(cls, files: Sequence[str], origin: str) -> OriginReport:
        evidence = Evidence.read(files)
        key = _origin(origin)
        report = cls(key, evidence)
        downloaded: dict[str, int] = defaultdict(int)
        for records in evidence.decisions.values():
            for record in records:
                if record["verdict"] == "downloaded" and _safe_origin(record["url"]) == key:
                    downloaded[record.get("robots_sha256") or ""] += 1
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
                    "pages_downloaded": downloaded.get(record["sha256"], 0),
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
        return EXIT_OK if self.versions else EXIT_ERROR

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


@dataclass
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
        evidence = Evidence.read(files)
        report = cls(items_path, evidence, purpose)
        try:
            with open(items_path, "rb") as file:
                lines = file.read().splitlines()
        except OSError as error:
            raise CliError(f"{items_path}: {error.strerror or error}") from None
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            report.items += 1
            report._verify(number, raw, url_field, provenance_field)
        return report

    def _verify(self, number: int, raw: bytes, url_field: str, provenance_field: str) -> None:
        def listed(why: str, **facts: Any) -> None:
            self.listed.append({"line": number, "problem": why, **facts})

        try:
            item = json.loads(raw)
        except ValueError:
            listed("unverifiable", reason="not a JSON object")
            return
        url = item.get(url_field) if isinstance(item, dict) else None
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
            refused = not decided["allowed"]
            listed(
                "refused by robots.txt" if refused else f"{self.purpose} disallowed",
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
            where = (
                f" (line {entry['line']} of robots.txt: {entry['rule']})"
                if entry.get("rule")
                else ""
            )
            if entry.get("statement"):  # refused by the page
                where = f" ({entry['source']}: {entry['statement']}, read {entry['page_at']})"
            subject = entry.get("url") or f"item at line {entry['line']}"
            reason = f": {entry['reason']}" if entry["problem"] == "unverifiable" else ""
            out(f"{subject}: {entry['problem']}{where}{reason}")
        out(
            f"{self.items} item(s) checked, {len(self.listed)} listed"
            + ("" if self.listed else ": every item's page was allowed when it was fetched")
        )


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
