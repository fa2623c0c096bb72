"""Evidence records: what a crawl read and decided, as JSON lines (docs/evidence.rst).

Plain data and the standard library only: the builders make one record (a ``dict`` ready for
``json.dumps``) each, and :func:`read_records` reads a file of them back. Writing them to a
storage is the crawl's part. Only the headers named in :data:`ROBOTS_HEADERS` are ever copied
into a record, so request headers (cookies, ``Authorization``, proxy credentials) never are, and
URLs lose any ``user:password@``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from scrapy_rerp.core.lengths import bounded_record

__all__ = [
    "FORMAT_VERSION",
    "ROBOTS_HEADERS",
    "SOURCES",
    "EvidenceRead",
    "DOCUMENTS",
    "decision_record",
    "item_provenance",
    "page_record",
    "read_records",
    "robots_record",
    "utc_time",
]

#: The records' format; a reader refuses a version it does not know.
FORMAT_VERSION = 1
#: The response headers kept in a robots.txt record: those that decide its meaning (type,
#: encoding) and its lifetime. No other header is ever written.
ROBOTS_HEADERS: tuple[str, ...] = (
    "Content-Type",
    "Content-Encoding",
    "Date",
    "Cache-Control",
    "Expires",
    "ETag",
    "Last-Modified",
    "Retry-After",
)
#: The per-origin documents a ``robots``-shaped record can hold (its ``kind``): robots.txt, and
#: the origin's ``/.well-known/tdmrep.json`` when the crawl reads TDMRep.
DOCUMENTS = frozenset({"robots", "tdmrep"})
#: Where a crawl got a robots.txt: downloaded, its run's robots.txt store, its fleet's Redis.
SOURCES = frozenset({"download", "store", "fleet"})
#: The verdicts of a decision record.
#: ``failed``: robots.txt allowed it, and its download failed (no answer: a timeout, a refused
#: connection, a DNS error).
VERDICTS = frozenset({"downloaded", "refused", "dropped", "failed"})
#: What became of the items of a page that refuses a purpose (``RERP_USAGE_DROP``); None when
#: it refuses none.
PAGE_ITEMS = frozenset({"dropped", "marked", None})


def utc_time(timestamp: float) -> str:
    """``timestamp`` (``time.time()``) as RFC 3339 UTC with milliseconds."""
    moment = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _without_credentials(url: str) -> str:
    # A URL's userinfo is a secret like a header's; the host and the rest stay.
    if "@" not in url:  # most URLs: no parse (urlsplit was a tenth of the evidence's cost)
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


#: ``user:password@`` as it appears in a URL or in a message that quotes a host.
_USERINFO = re.compile(r"[^\s:/@\"'<>]+:[^\s/@\"'<>]*@")


def _without_userinfo(text: str) -> str:
    """``text`` (a reason, which may quote an exception's message) without ``user:password@``."""
    return _USERINFO.sub("", text) if "@" in text else text


def _one_of(name: str, value: object, allowed: frozenset[Any]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed, key=str)}, not {value!r}")


def _text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else value


def robots_record(
    *,
    origin: str,
    url: str,
    final_url: str | None,
    status: int | None,
    fetched_at: float,
    outcome: str,
    body: bytes | None,
    headers: Mapping[str, bytes | str | None] | None = None,
    syntax: str | None = "rfc9309",
    agent: str | None = None,
    plugin_version: str,
    source: str = "download",
    sha256: str | None = None,
    kind: str = "robots",
    matched: Iterable[str] | None = None,
) -> dict[str, Any]:
    """One robots.txt as read (or, with ``kind="tdmrep"``, an origin's tdmrep.json: then
    ``syntax`` and ``agent`` are None, as none applies to it). ``headers`` may hold any
    response headers (by name, any case): only :data:`ROBOTS_HEADERS` are kept. ``body`` is
    the body as parsed (decoded, capped); its sha256 is what decision records point to.
    ``matched`` is the agents, as the file writes them, that match ``agent``
    (``RobotsTxt.matched_agents``). ``source`` says where this crawl got it
    (:data:`SOURCES`): a copy from the store or the fleet comes without its body (``body``
    None) but with the ``sha256`` of the body it was read from, whose record is in the
    evidence of the run, or the worker, that downloaded it."""
    _one_of("source", source, SOURCES)
    _one_of("kind", kind, DOCUMENTS)
    wanted = {name.lower(): name for name in ROBOTS_HEADERS}
    kept: dict[str, str] = {}
    for name, value in (headers or {}).items():
        canonical = wanted.get(name.lower())
        text = _text(value)
        if canonical is not None and text is not None:
            kept[canonical] = text
    data = body if body is not None else b""
    record = {
        "v": FORMAT_VERSION,
        "kind": kind,
        "origin": origin,
        "url": _without_credentials(url),
        "final_url": _without_credentials(final_url) if final_url else None,
        "status": status,
        "fetched_at": utc_time(fetched_at),
        "outcome": outcome,
        "headers": kept,
        "sha256": sha256
        if body is None and sha256 is not None
        else hashlib.sha256(data).hexdigest(),
        "body": data.decode("utf-8", "replace") if body is not None else None,
        "syntax": syntax,
        "agent": agent,
        "matched": list(matched) if matched is not None else None,
        "plugin_version": plugin_version,
        "source": source,
    }
    # Every field bounded (core/lengths.py) but the body, which RERP_MAX_SIZE bounds.
    return bounded_record(record, unbounded=("body",))


def decision_record(
    *,
    url: str,
    at: float,
    verdict: str,
    reason: str | None = None,
    robots_sha256: str | None = None,
    line: int | None = None,
    rule: str | None = None,
    group: str | None = None,
    usage: Mapping[str, Any] | None = None,
    page_directives: Iterable[str] = (),
    tdmrep_sha256: str | None = None,
) -> dict[str, Any]:
    """One request decided: ``verdict`` is ``downloaded``, ``refused`` (by robots.txt),
    ``dropped`` (``reason`` says why) or ``failed`` (allowed, its download failed:
    ``reason``); ``line``, ``rule`` and ``group`` are the robots.txt line that decided,
    ``usage`` the usage decision (``{"purpose", "allowed", "source", "value"}``),
    ``tdmrep_sha256`` the origin's tdmrep.json the request went on with (TDMRep read)."""
    _one_of("verdict", verdict, VERDICTS)
    record = {
        "v": FORMAT_VERSION,
        "kind": "decision",
        "url": _without_credentials(url),
        "at": utc_time(at),
        "verdict": verdict,
        "reason": _without_userinfo(reason) if reason is not None else None,
        "robots_sha256": robots_sha256,
        "line": line,
        "rule": rule,
        "group": group,
        "usage": dict(usage) if usage is not None else None,
        "page_directives": list(page_directives),
        "tdmrep_sha256": tdmrep_sha256,
    }
    return bounded_record(record)


def page_record(
    *,
    url: str,
    at: float,
    directives: Iterable[tuple[str, str]] = (),
    refused: Iterable[Mapping[str, Any]] = (),
    items: str | None = None,
    nofollow: bool = False,
    tdmrep: Mapping[str, Any] | None = None,
    tdmrep_sha256: str | None = None,
) -> dict[str, Any]:
    """What a page said of itself, read when its answer reached the spider: ``directives``
    (``(source, text)``: the header or meta tag, and the directive as written, for the
    crawler), ``refused`` (one ``{"purpose", "images_only", "rule", "source", "statement",
    "reason"}`` per purpose the page refuses, from its own directives or TDMRep), what
    became of its items then (``items``: ``dropped`` or ``marked``), whether its links were
    dropped (``nofollow``), and the TDMRep statement that decided (``{"technique",
    "reservation", "policy", "source"}``) with the tdmrep.json it came from."""
    _one_of("items", items, PAGE_ITEMS)
    record = {
        "v": FORMAT_VERSION,
        "kind": "page",
        "url": _without_credentials(url),
        "at": utc_time(at),
        "directives": [{"source": source, "text": text} for source, text in directives],
        "refused": [dict(refusal) for refusal in refused],
        "items": items,
        "nofollow": nofollow,
        "tdmrep": dict(tdmrep) if tdmrep is not None else None,
        "tdmrep_sha256": tdmrep_sha256,
    }
    return bounded_record(record)


def item_provenance(
    *,
    robots_sha256: str | None,
    fetched_at: float | None,
    line: int | None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The compact provenance put in an item's ``RERP_EVIDENCE_ITEM_FIELD``."""
    record = {
        "v": FORMAT_VERSION,
        "robots_sha256": robots_sha256,
        "robots_fetched_at": utc_time(fetched_at) if fetched_at is not None else None,
        "line": line,
        "usage": dict(usage) if usage is not None else None,
    }
    return bounded_record(record)


@dataclass(frozen=True, slots=True)
class EvidenceRead:
    """What :func:`read_records` found: the whole records, and where the file ends early (the
    1-based line of a record cut short, as a crash mid-write leaves it), if it does."""

    records: list[dict[str, Any]]
    cut_at_line: int | None = None
    unknown_version_lines: tuple[int, ...] = ()


def read_records(lines: Iterable[bytes]) -> EvidenceRead:
    """Read an evidence file's lines (``open(path, "rb")`` will do). A line that is not a whole
    JSON object is where the file was cut: counted as such if it is the last, and any record
    after it is read all the same. A record of a version this reader does not know is left
    out and its line listed."""
    records: list[dict[str, Any]] = []
    unknown: list[int] = []
    cut_at: int | None = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            cut_at = cut_at if cut_at is not None else number
            continue
        if not isinstance(record, dict):
            cut_at = cut_at if cut_at is not None else number
            continue
        if record.get("v") != FORMAT_VERSION:
            unknown.append(number)
            continue
        records.append(record)
    return EvidenceRead(records, cut_at, tuple(unknown))
