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
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from scrapy_rerp.core.lengths import bounded_record

__all__ = [
    "FORMAT_VERSION",
    "MAX_LINE_BYTES",
    "ROBOTS_HEADERS",
    "SOURCES",
    "EvidenceRead",
    "DOCUMENTS",
    "bounded_lines",
    "is_document",
    "decision_record",
    "kept_headers",
    "item_provenance",
    "page_record",
    "iter_records",
    "read_records",
    "record_line",
    "record_problem",
    "RecordLine",
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
_HEADER_NAMES = {name.lower(): name for name in ROBOTS_HEADERS}
#: The per-origin documents a ``robots``-shaped record holds whatever the crawl registers (its
#: ``kind``): robots.txt, and the origin's ``/.well-known/tdmrep.json`` when the crawl reads
#: TDMRep. A kind registered by a project (``RERP_DOCUMENTS``) writes its own token
#: (:func:`is_document`).
DOCUMENTS = frozenset({"robots", "tdmrep"})
#: The records that are no document's.
_NOT_DOCUMENTS = frozenset({"decision", "page"})
_TOKEN = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")


def is_document(kind: object) -> bool:
    """Whether a record of ``kind`` holds a per-origin document (a ``robots``-shaped record):
    robots.txt's, tdmrep.json's, or a registered kind's (its token, a lowercase word)."""
    return isinstance(kind, str) and kind not in _NOT_DOCUMENTS and _TOKEN.match(kind) is not None


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


def kept_headers(headers: Mapping[Any, Any] | None) -> dict[str, Any]:
    """The headers of ``headers`` (by name, any case) that a ``robots`` record keeps, by their
    names in :data:`ROBOTS_HEADERS`, and not None; no other header is ever read."""
    return {
        _HEADER_NAMES[str(name).lower()]: value
        for name, value in (headers or {}).items()
        if str(name).lower() in _HEADER_NAMES and value is not None
    }


def _text(value: bytes | str) -> str:
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
    """One robots.txt as read (or, with another ``kind``, an origin's document of that kind,
    ``"tdmrep"`` for its tdmrep.json: then ``syntax`` and ``agent`` are None, as none applies to
    it). ``headers`` may hold any
    response headers (by name, any case): only :data:`ROBOTS_HEADERS` are kept. ``body`` is
    the body as parsed (decoded, capped); its sha256 is what decision records point to.
    ``matched`` is the agents, as the file writes them, that match ``agent``
    (``RobotsTxt.matched_agents``). ``source`` says where this crawl got it
    (:data:`SOURCES`): a copy from the store or the fleet comes without its body (``body``
    None) but with the ``sha256`` of the body it was read from, whose record is in the
    evidence of the run, or the worker, that downloaded it."""
    _one_of("source", source, SOURCES)
    if not is_document(kind):
        raise ValueError(f"kind must be a document's token (a lowercase word), not {kind!r}")
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
        "headers": {name: _text(value) for name, value in kept_headers(headers).items()},
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
    documents: Mapping[str, Any] | None = None,
    signed: bool | None = None,
    keyid: str | None = None,
) -> dict[str, Any]:
    """One request decided: ``verdict`` is ``downloaded``, ``refused`` (by robots.txt),
    ``dropped`` (``reason`` says why) or ``failed`` (allowed, its download failed:
    ``reason``); ``line``, ``rule`` and ``group`` are the robots.txt line that decided,
    ``usage`` the usage decision (``{"purpose", "allowed", "source", "value"}``),
    ``tdmrep_sha256`` the origin's tdmrep.json the request went on with (TDMRep read), and
    ``documents`` the sha256 of each document besides robots.txt it went on with, by kind
    (tdmrep.json's among them: written only when there is one). ``signed`` (in a crawl that
    signs its requests, else absent) says whether it was sent signed, and ``keyid`` (when it
    was) with which key."""
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
    if documents:
        record["documents"] = dict(documents)
    if signed is not None:
        record["signed"] = signed
        if signed and keyid is not None:
            record["keyid"] = keyid
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


#: The longest evidence line a reader reads (8 MiB): a ``robots`` record holds a body of up to
#: ``RERP_MAX_SIZE`` bytes (500 KiB by default), which JSON escapes grow at most sixfold. A
#: longer line is damaged input, never read whole into memory.
MAX_LINE_BYTES = 8 * 1024 * 1024

#: A record time as the builders write it (:func:`utc_time`).
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z", re.ASCII)
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")

#: What a field of a record must be: a test of its value and, for a message, what it says.
_Check = Callable[[Any], bool]


def _is_time(value: Any) -> bool:
    if not isinstance(value, str) or _TIME.match(value) is None:
        return False
    try:  # the pattern passes 9999-99-99: the date must be one
        datetime.fromisoformat(value[:-1])
    except ValueError:
        return False
    return True


def _is_sha256(value: Any) -> bool:
    return isinstance(value, str) and _SHA256.match(value) is not None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_line(value: Any) -> bool:
    return _is_int(value) and value >= 1


def _of_type(kind: type) -> _Check:
    return lambda value: isinstance(value, kind)


def _or_null(check: _Check) -> _Check:
    return lambda value: value is None or check(value)


def _one_in(allowed: Iterable[Any]) -> _Check:
    choices = frozenset(allowed)
    return lambda value: isinstance(value, (str, type(None))) and value in choices


def _list_of(check: _Check) -> _Check:
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


def _object(
    fields: Mapping[str, tuple[_Check, str]],
    optional: Mapping[str, tuple[_Check, str]] | None = None,
) -> _Check:
    """An object with ``fields``, and ``optional`` ones checked when present."""
    return lambda value: isinstance(value, dict) and _field_problem(value, fields, optional) is None


_STRING = (_of_type(str), "a string")
_OPTIONAL_STRING = (_or_null(_of_type(str)), "a string or null")
_OPTIONAL_SHA256 = (_or_null(_is_sha256), "a sha256 (64 hex digits) or null")
_OPTIONAL_LINE = (_or_null(_is_line), "a line number (1 or more) or null")
_USAGE = _object(
    {
        "purpose": _STRING,
        "allowed": (_or_null(_of_type(bool)), "true, false or null"),
        "source": (
            _one_in(("robots.txt", "header", "page", "default", "license")),
            "a usage source",
        ),
    },
    optional={"value": _OPTIONAL_STRING},
)
_REFUSAL = _object(
    {
        "purpose": _STRING,
        "images_only": (_of_type(bool), "true or false"),
        "rule": _STRING,
        "source": _STRING,
        "statement": _STRING,
        "reason": _STRING,
    }
)
_TDMREP = _object(
    {
        "technique": (_one_in(("tdmrep.json", "header", "meta")), "a TDMRep technique"),
        "reservation": (_or_null(_is_int), "an integer or null"),
        "policy": _OPTIONAL_STRING,
        "source": _STRING,
    }
)
#: The fields of each kind of record, as docs/evidence.schema.json defines them (a test holds the
#: two together), with the ranges the schema cannot say: a time is a real date and time.
_FIELDS: dict[str, dict[str, tuple[_Check, str]]] = {
    "robots": {
        "origin": _STRING,
        "url": _STRING,
        "final_url": _OPTIONAL_STRING,
        "status": (_or_null(_is_int), "an HTTP status or null"),
        "fetched_at": (_is_time, "an RFC 3339 UTC time"),
        "outcome": (_one_in(("parsed", "allow-all", "disallow-all", "unreachable")), "an outcome"),
        "headers": (
            lambda value: (
                isinstance(value, dict)
                and all(k in ROBOTS_HEADERS and isinstance(v, str) for k, v in value.items())
            ),
            "an object of kept headers",
        ),
        "sha256": (_is_sha256, "a sha256 (64 hex digits)"),
        "body": _OPTIONAL_STRING,
        "syntax": _OPTIONAL_STRING,
        "agent": _OPTIONAL_STRING,
        "matched": (_or_null(_list_of(_of_type(str))), "a list of strings or null"),
        "plugin_version": _STRING,
        "source": (_one_in(SOURCES), "a source (download, store, fleet)"),
    },
    "decision": {
        "url": _STRING,
        "at": (_is_time, "an RFC 3339 UTC time"),
        "verdict": (_one_in(VERDICTS), "a verdict"),
        "reason": _OPTIONAL_STRING,
        "robots_sha256": _OPTIONAL_SHA256,
        "line": _OPTIONAL_LINE,
        "rule": _OPTIONAL_STRING,
        "group": _OPTIONAL_STRING,
        "usage": (_or_null(_USAGE), "a usage decision or null"),
        "page_directives": (_list_of(_of_type(str)), "a list of strings"),
        "tdmrep_sha256": _OPTIONAL_SHA256,
    },
    "page": {
        "url": _STRING,
        "at": (_is_time, "an RFC 3339 UTC time"),
        "directives": (
            _list_of(_object({"source": _STRING, "text": _STRING})),
            "a list of directives",
        ),
        "refused": (_list_of(_REFUSAL), "a list of refusals"),
        "items": (_one_in(PAGE_ITEMS), "dropped, marked or null"),
        "nofollow": (_of_type(bool), "true or false"),
        "tdmrep": (_or_null(_TDMREP), "a TDMRep statement or null"),
        "tdmrep_sha256": _OPTIONAL_SHA256,
    },
}


def _hashes(value: Any) -> bool:
    """A document's sha256 (or null), or a list of them (a located kind's, an RSL licence's)."""
    check = _OPTIONAL_SHA256[0]
    return check(value) or (isinstance(value, list) and all(check(item) for item in value))


#: Fields a kind of record may have, checked when present (a record of an earlier release may
#: lack them): the documents a decision went on with, and its signature (a crawl that signs its
#: requests, docs/identity.rst).
_OPTIONAL_FIELDS: dict[str, dict[str, tuple[_Check, str]]] = {
    "decision": {
        "documents": (
            lambda value: (
                isinstance(value, dict)
                and all(_TOKEN.match(str(k)) and _hashes(v) for k, v in value.items())
            ),
            "sha256 (or a list of them) by document kind",
        ),
        "signed": (_of_type(bool), "true or false"),
        "keyid": _STRING,
    },
}


def _field_problem(
    record: Mapping[str, Any],
    fields: Mapping[str, tuple[_Check, str]],
    optional: Mapping[str, tuple[_Check, str]] | None = None,
) -> str | None:
    """What is wrong with ``record``'s ``fields``, then with those of ``optional`` it has."""
    present = {name: field for name, field in (optional or {}).items() if name in record}
    for name, (check, what) in {**fields, **present}.items():
        if name not in record:
            return f"no {name!r}"
        if not check(record[name]):
            return f"{name!r} is {_shown(record[name])}, not {what}"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def record_problem(record: Mapping[str, Any]) -> str | None:
    """What makes ``record`` (one JSON object of an evidence file, ``"v": 1``) no evidence
    record of its kind: a field missing, or of the wrong type or range (``'agent' is 7, not a
    string or null``); None when it is one. A kind this reader does not know has no problem
    here (a later release may add kinds). A field a kind does not have is not read, and not
    checked."""
    found = record.get("kind")
    kind = found if isinstance(found, str) else ""  # no kind: no fields, no problem here
    fields = _FIELDS.get(kind) or (_FIELDS["robots"] if is_document(kind) else None)
    if fields is None:
        return None
    return _field_problem(record, fields, _OPTIONAL_FIELDS.get(kind))


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordLine:
    """One line of an evidence file as :func:`iter_records` read it: ``record`` a whole record
    of this version, else ``problem`` says what the line is: ``"cut"`` (the file's last line,
    cut short as a crash mid-write leaves it), ``"unknown_version"`` (a record of a version
    this reader does not know), or ``"damaged"`` (``reason`` says how)."""

    number: int
    record: dict[str, Any] | None = None
    problem: str | None = None
    reason: str | None = None


def bounded_lines(
    file: IO[bytes], max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes | None, bool]]:
    """``(number, line, whole)`` for each line, read ``max_line_bytes`` at most at a time; a
    longer line is ``None``, the rest of it read and dropped. ``whole`` is False for a last
    line without its newline."""
    number = 0
    while True:
        raw = file.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = file.readline(65_536)
            yield number, None, True
            continue
        yield number, raw, raw.endswith(b"\n")


def iter_records(
    file: IO[bytes] | Iterable[bytes], max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[RecordLine]:
    """Read an evidence file one line at a time (``open(path, "rb")``), in bounded memory: a
    :class:`RecordLine` per line that is not blank. A line that is no whole record of its kind
    is said, never raised: not UTF-8, not JSON, nested too deep, not an object, a field of the
    wrong type or range (:func:`record_problem`), over ``max_line_bytes``; a file that cannot
    be read on (a damaged gzip stream) ends with one such line. Every line after a damaged one
    is read all the same."""
    if hasattr(file, "readline"):
        lines: Iterator[tuple[int, bytes | None, bool]] = bounded_lines(file, max_line_bytes)  # type: ignore[arg-type]
    else:
        lines = (
            (n, raw if len(raw) <= max_line_bytes else None, raw.endswith(b"\n"))
            for n, raw in enumerate(file, start=1)
        )
    number = 0
    try:
        for number, raw, whole in lines:
            if raw is None:
                yield RecordLine(
                    number=number, problem="damaged", reason=f"over {max_line_bytes:,} bytes"
                )
                continue
            if not raw.strip():
                continue
            yield record_line(number, raw, whole)
    except (OSError, EOFError, zlib.error) as error:
        yield RecordLine(number=number + 1, problem="damaged", reason=f"cannot be read: {error}")


def record_line(
    number: int,
    raw: bytes,
    whole: bool = True,
    complete: Callable[[dict[str, Any]], None] | None = None,
) -> RecordLine:
    """One record's bytes (a line, a WARC record's content) read as :func:`iter_records` reads
    them: ``whole`` False when the file ends in them without a newline (not JSON then means cut
    short); ``complete`` adds what the bytes leave out (a WARC record's body) before the check."""
    try:
        record = json.loads(raw)
    except UnicodeDecodeError:
        return RecordLine(number=number, problem="damaged", reason="not UTF-8")
    except ValueError:
        if not whole:
            return RecordLine(number=number, problem="cut", reason="cut short")
        return RecordLine(number=number, problem="damaged", reason="not JSON")
    except RecursionError:
        return RecordLine(number=number, problem="damaged", reason="JSON nested too deep")
    if not isinstance(record, dict):
        return RecordLine(number=number, problem="damaged", reason="not a JSON object")
    if record.get("v") != FORMAT_VERSION:
        return RecordLine(number=number, problem="unknown_version")
    if complete is not None:
        complete(record)
    problem = record_problem(record)
    if problem is not None:
        return RecordLine(number=number, problem="damaged", reason=problem)
    return RecordLine(number=number, record=record)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceRead:
    """What :func:`read_records` found: the whole records, and where the file ends early (the
    1-based line of a record cut short, as a crash mid-write leaves it), if it does; the lines
    of records of a version this reader does not know, and those that are damaged (no whole
    record of their kind)."""

    records: list[dict[str, Any]]
    cut_at_line: int | None = None
    unknown_version_lines: tuple[int, ...] = ()
    damaged_lines: tuple[int, ...] = ()


def read_records(lines: IO[bytes] | Iterable[bytes]) -> EvidenceRead:
    """Read an evidence file's lines (``open(path, "rb")`` will do) whole: every record of
    :func:`iter_records`, with where the file ends early. A record of a version this reader
    does not know is left out and its line listed; a damaged line is left out and listed."""
    records: list[dict[str, Any]] = []
    found: dict[str, list[int]] = {"cut": [], "unknown_version": [], "damaged": []}
    for line in iter_records(lines):
        if line.record is not None:
            records.append(line.record)
        else:
            found[line.problem or "damaged"].append(line.number)
    cut = found["cut"]
    return EvidenceRead(
        records=records,
        cut_at_line=cut[0] if cut else None,
        unknown_version_lines=tuple(found["unknown_version"]),
        damaged_lines=tuple(found["damaged"]),
    )
