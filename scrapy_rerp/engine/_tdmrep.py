"""TDMRep, the W3C TDM Reservation Protocol (Community Group final report, 10 May 2024): the
origin's ``/.well-known/tdmrep.json``, the ``tdm-reservation`` and ``tdm-policy`` response
headers and meta tags, read and combined in the report's processing order.

- ``tdmrep.json`` is a JSON array of rules ``{"location": pattern, "tdm-reservation": 1 | 0,
  "tdm-policy": URL}``; for a URL, the first rule whose location matches decides ("the most
  specific match is the first in sequence"). Locations are robots.txt patterns (``*`` and a
  final ``$``), compared after the report's normalisation (%-escapes of unreserved characters
  decoded, ``%24`` and ``%2A`` matching a literal ``$`` and ``*``).
- A header or a meta tag supersedes what came before it, property by property: the file, then
  the headers, then the meta tags; a property a technique does not state (or states wrongly)
  leaves the earlier value in force.
- ``tdm-reservation`` is 1 (reserved) or 0 (not reserved); any other value is a protocol error
  and reads as unset. ``tdm-policy`` is recorded, never fetched.

docs/usage.rst, "TDMRep", has the table of techniques and every choice made where the report is
silent. Nothing here raises on content: a body that is not a JSON array is a file that reserves
nothing, with a warning; bad entries, headers and meta tags are warnings too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ._constants import as_text
from ._page import _header_lines, _meta_tags, _warner
from ._patterns import escape_pattern, glob_match, path_params_query, split_glob
from ._usage import ALLOWED, DISALLOWED, UNKNOWN, usage_category

__all__ = [
    "MAX_TDMREP_BYTES",
    "MAX_TDMREP_ENTRIES",
    "MAX_TDMREP_POLICY_CHARS",
    "TDMREP_META_NAMES",
    "TDMREP_PATH",
    "TDMREP_PURPOSES",
    "TDMREP_TECHNIQUES",
    "TDMREP_WARNING_CODES",
    "TdmRepDecision",
    "TdmRepEntry",
    "TdmRepFile",
    "TdmRepStatement",
    "TdmRepWarning",
    "TdmReservation",
    "parse_tdmrep",
    "tdm_reservation",
]

#: Where an origin serves its file (TDMRep, "TDM File on the Origin Server").
TDMREP_PATH = "/.well-known/tdmrep.json"
#: The largest body read, the crawl's download cap (core.body.MAX_SIZE); a bigger one is not
#: parsed (JSON cut short is not JSON) and reserves nothing, with a ``too-large`` warning.
MAX_TDMREP_BYTES = 500 * 1024
#: Rules read from one file; later ones are ignored, with a ``too-many`` warning.
MAX_TDMREP_ENTRIES = 1024
#: The longest ``tdm-policy`` kept; a longer one is ignored, with a ``bad-policy`` warning.
MAX_TDMREP_POLICY_CHARS = 2048
#: The meta tag names (and header names) the protocol reads.
TDMREP_META_NAMES = ("tdm-reservation", "tdm-policy")
#: The techniques, in the report's processing order: each supersedes those before it.
TDMREP_TECHNIQUES = ("tdmrep.json", "header", "meta")
#: The purposes a reservation forbids. TDM, as the DSM Directive defines it, covers training
#: and using content as AI input; TDMRep says nothing about search (its group's note "TDM:
#: what does it mean in practice?": search engines "don't apply TDM techniques").
TDMREP_PURPOSES = frozenset({"train-ai", "ai-input"})

_MAX_LINES = 64  # header lines or meta tags of one name read, as for page directives
_RESERVATION, _POLICY, _LOCATION = "tdm-reservation", "tdm-policy", "location"
_PROPERTIES = (_LOCATION, _RESERVATION, _POLICY)
_RESERVATION_TEXT = {"1": 1, "0": 0}
_SPACE = " \t\r\n\f"

#: Every TdmRepWarning code, with what it means.
TDMREP_WARNING_CODES: dict[str, str] = {
    "too-large": "a tdmrep.json bigger than MAX_TDMREP_BYTES, not read: it reserves nothing",
    "not-json": "a tdmrep.json that does not parse as JSON: it reserves nothing",
    "not-an-array": "a tdmrep.json whose top level is not an array: it reserves nothing",
    "not-utf-8": "bytes that are not UTF-8 in a tdmrep.json, read as U+FFFD",
    "not-an-object": "an entry of tdmrep.json that is not an object, skipped",
    "bad-location": "an entry whose location is missing or no path pattern, skipped",
    "bad-reservation": "a tdm-reservation missing, or not 1 or 0: unset (a protocol error)",
    "bad-policy": "a tdm-policy that is no URL (not a string, empty, spaces, too long): ignored",
    "unknown-property": "a property of an entry other than location, tdm-reservation, tdm-policy",
    "duplicate-property": "a property given twice in one entry; different values are unset",
    "conflicting-values": "header lines or meta tags of one name that disagree: unset",
    "too-many": "more entries, lines or warnings than are read; the rest are ignored",
}


class TdmRepWarning(NamedTuple):
    """Something in a tdmrep.json, a header or a meta tag that was not used: ``code`` says what
    (one of ``TDMREP_WARNING_CODES``), ``source`` where (``tdmrep.json``, ``tdmrep.json entry
    2``, ``tdm-reservation header``, ``meta tag 3 (tdm-policy)``), ``text`` the value concerned."""

    code: str
    source: str
    text: str
    message: str


class TdmRepEntry(NamedTuple):
    """One rule of a tdmrep.json: its 1-based position in the array, its ``location`` as
    written, its ``tdm-reservation`` (1, 0, or None when missing or invalid) and its
    ``tdm-policy`` (None when absent or invalid)."""

    position: int
    location: str
    reservation: int | None
    policy: str | None


class TdmRepStatement(NamedTuple):
    """What one technique says of a resource: ``technique`` is one of ``TDMREP_TECHNIQUES``;
    ``reservation`` 1, 0 or None (unset: not stated, or a protocol error); ``policy`` the
    ``tdm-policy`` URL as written, or None; ``source`` where the statement was read
    (``tdmrep.json entry 2 (location "/directory-b/html/")``, ``tdm-reservation header``,
    ``meta tag 3 (tdm-reservation)``: where its ``tdm-reservation`` is, else its policy), and
    ``policy_source`` where its ``tdm-policy`` is (``tdm-policy header``, ``meta tag 4
    (tdm-policy)``); ``entry`` the tdmrep.json rule, for that technique."""

    technique: str
    reservation: int | None
    policy: str | None
    source: str
    policy_source: str | None = None
    entry: TdmRepEntry | None = None


class TdmRepDecision(NamedTuple):
    """What TDMRep says about one purpose of a URL: ``preference`` is ``"disallowed"`` (TDM
    rights reserved), ``"allowed"`` (not reserved) or ``"unknown"`` (unset, or a purpose TDMRep
    does not speak to), in the terms of ``UsageDecision``. ``policy`` is the ``tdm-policy`` in
    force when rights are reserved: a licence may be offered there (``licensable``); it is never
    fetched. ``statement`` is the statement whose ``tdm-reservation`` decided."""

    preference: str
    purpose: str
    reserved: bool | None
    policy: str | None
    statement: TdmRepStatement | None
    reason: str

    @property
    def licensable(self) -> bool:
        """Reserved, with a TDM policy that says how a licence may be acquired."""
        return self.preference == DISALLOWED and self.policy is not None


# -- locations and paths ----------------------------------------------------------------------

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Any character that cannot stand in a URL as it is (RFC 3986: not unreserved, not reserved,
# not "%"): escaped on both sides, so that "/a b" and "/a%20b" are one path.
_NOT_URL = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
_ESCAPED = re.compile(r"%[0-9A-F]{2}")  # escape_pattern has upper-cased every escape


def _escape_char(match: re.Match[str]) -> str:
    return "".join(f"%{octet:02X}" for octet in match.group().encode("utf-8", "surrogatepass"))


def _unreserved(match: re.Match[str]) -> str:
    char = chr(int(match.group()[1:], 16))
    return char if char in _UNRESERVED else match.group()


def _normal(text: str) -> str:
    """*text* in the one form patterns and paths are compared in: UTF-8 %-escaped, escapes in
    upper case, those of unreserved characters decoded (TDMRep; RFC 3986 6.2.2)."""
    text = escape_pattern(text)
    if _NOT_URL.search(text):
        text = _NOT_URL.sub(_escape_char, text)
    if "%" in text:
        text = _ESCAPED.sub(_unreserved, text)
    return text


def _normal_path(url: str) -> str:
    """The path and query of *url*, normalised, with a literal ``$`` and ``*`` escaped: a
    pattern matches them with ``%24`` and ``%2A`` (TDMRep, "Use of regular expressions")."""
    path = _normal(path_params_query(url))
    if "$" in path or "*" in path:
        path = path.replace("$", "%24").replace("*", "%2A")
    return path


def _compiled(location: str) -> tuple[str, tuple[str, ...], str | None, bool]:
    """A location as glob_match takes it: normalised; a ``$`` before the end is a literal."""
    pattern = _normal(location)
    body = pattern.removesuffix("$").replace("$", "%24")
    return split_glob(body + "$" if pattern.endswith("$") else body)


# -- the file ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TdmRepFile:
    """A parsed ``tdmrep.json``: its usable ``entries`` in order, the ``warnings`` about it,
    and whether it was ``valid`` (a JSON array within the size cap: a file that is not reserves
    nothing). Build it with ``parse_tdmrep``."""

    entries: tuple[TdmRepEntry, ...]
    warnings: tuple[TdmRepWarning, ...]
    valid: bool
    _globs: tuple[tuple[str, tuple[str, ...], str | None, bool], ...] = field(
        default=(), repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if len(self._globs) != len(self.entries):  # built from entries alone
            globs = tuple(_compiled(entry.location) for entry in self.entries)
            object.__setattr__(self, "_globs", globs)

    def reservation(self, url: str) -> TdmRepStatement | None:
        """What the file says of *url* (a URL, or a path with its query): the first entry
        whose location matches, or None when none does (the reservation is then unset)."""
        url = as_text(url, "url")
        if not self.entries:
            return None
        path = _normal_path(url)
        for entry, glob in zip(self.entries, self._globs, strict=True):
            if glob_match(path, *glob):
                source = f"tdmrep.json entry {entry.position} (location {_shown(entry.location)})"
                policy_source = source if entry.policy is not None else None
                return TdmRepStatement(
                    "tdmrep.json", entry.reservation, entry.policy, source, policy_source, entry
                )
        return None


class _Object(dict[str, Any]):
    """A JSON object, with the keys given more than once (``duplicates``) and those given with
    different values (``conflicts``)."""

    duplicates: frozenset[str] = frozenset()
    conflicts: frozenset[str] = frozenset()


def _json_object(pairs: list[tuple[str, Any]]) -> _Object:
    found = _Object()
    duplicates: set[str] = set()
    conflicts: set[str] = set()
    for key, value in pairs:
        if key in found:
            duplicates.add(key)
            old = found[key]
            if type(old) is not type(value) or old != value:
                conflicts.add(key)
        found[key] = value
    if duplicates:
        found.duplicates, found.conflicts = frozenset(duplicates), frozenset(conflicts)
    return found


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # Python's json reads NaN and Infinity; JSON does not


def _shown(value: object) -> str:
    """A JSON value as a warning's text, bounded."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


Warn = Callable[[str, str, str, str], None]


def _policy(value: object, source: str, warn: Warn) -> str | None:
    """A ``tdm-policy`` value as kept, or None (with a warning) for one that is no URL."""
    if not isinstance(value, str):
        warn("bad-policy", source, _shown(value), "tdm-policy is not a string; ignored")
        return None
    policy = value.strip(_SPACE)
    if not policy:
        problem = "is empty"
    elif len(policy) > MAX_TDMREP_POLICY_CHARS:
        problem = f"is longer than {MAX_TDMREP_POLICY_CHARS} characters"
    elif any(char in policy for char in _SPACE) or not policy.isprintable():
        problem = "holds spaces or control characters"
    else:
        return policy
    warn("bad-policy", source, _shown(policy[:80]), f"tdm-policy {problem}: no URL; ignored")
    return None


def _file_reservation(entry: _Object, source: str, warn: Warn) -> int | None:
    if _RESERVATION not in entry:
        warn("bad-reservation", source, "", "no tdm-reservation (it is mandatory): unset")
        return None
    value = entry[_RESERVATION]
    if _RESERVATION in entry.conflicts:
        return None  # warned about as a duplicate
    # JSON has one number type: 1.0 is the number 1. true, "1" and the like are not 1 or 0.
    if type(value) in (int, float) and value in (0, 1):
        return int(value)
    message = "tdm-reservation is not 1 or 0: unset (a protocol error)"
    warn("bad-reservation", source, _shown(value), message)
    return None


def _read_entry(item: object, position: int, warn: Warn) -> TdmRepEntry | None:
    source = f"tdmrep.json entry {position}"
    if not isinstance(item, _Object):
        warn("not-an-object", source, _shown(item), "an entry that is not an object; skipped")
        return None
    for key in item:
        if key not in _PROPERTIES:
            warn("unknown-property", source, key, f"unknown property {key!r}; ignored")
    for key in sorted(item.duplicates):
        differ = key in item.conflicts
        outcome = "different values: unset" if differ else "the same value twice"
        warn("duplicate-property", source, key, f"{key} given more than once, {outcome}")
    location = item.get(_LOCATION)
    if _LOCATION in item.conflicts or not isinstance(location, str):
        what = "no location" if _LOCATION not in item else "a location that is not one string"
        warn("bad-location", source, _shown(location), f"{what}: the entry matches nothing")
        return None
    if not location.startswith(("/", "*")):
        message = "a location that starts with neither / nor *: it matches no path"
        warn("bad-location", source, _shown(location), message)
        return None
    reservation = _file_reservation(item, source, warn)
    policy = None
    if _POLICY in item and _POLICY not in item.conflicts:
        policy = _policy(item[_POLICY], source, warn)
    return TdmRepEntry(position, location, reservation, policy)


def parse_tdmrep(body: bytes | bytearray | memoryview | str) -> TdmRepFile:
    """A ``/.well-known/tdmrep.json`` body (bytes, read as UTF-8 with a BOM skipped; or str),
    parsed. Never raises on content: a body that is not a JSON array (or is bigger than
    ``MAX_TDMREP_BYTES``) is a file with no entries, not ``valid``, and a warning; entries that
    cannot be used are skipped with a warning. TypeError for a body of another type."""
    warnings: list[TdmRepWarning] = []
    warn = _warner(warnings, TdmRepWarning)
    source = "tdmrep.json"

    def unread(code: str, text: str, message: str) -> TdmRepFile:
        warn(code, source, text, message + ": the file reserves nothing")
        return TdmRepFile(entries=(), warnings=tuple(warnings), valid=False)

    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
        if len(raw) > MAX_TDMREP_BYTES:
            return unread("too-large", "", f"{len(raw)} bytes, over {MAX_TDMREP_BYTES}")
        raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            text = raw.decode("utf-8", "replace")
            warn("not-utf-8", source, "", f"not UTF-8 ({error.reason} at byte {error.start})")
    elif isinstance(body, str):
        if len(body) > MAX_TDMREP_BYTES:
            return unread("too-large", "", f"{len(body)} characters, over {MAX_TDMREP_BYTES}")
        text = body.removeprefix("\ufeff")
    else:
        raise TypeError(f"a tdmrep.json body must be bytes or str, not {type(body).__name__}")
    try:
        document = json.loads(text, object_pairs_hook=_json_object, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        return unread("not-json", text[:40], f"not JSON ({str(error)[:120]})")
    if not isinstance(document, list):
        # The report: the brackets "are mandatory even if you express only one rule".
        return unread("not-an-array", _shown(document), "the top level is not an array")
    entries: list[TdmRepEntry] = []
    for position, item in enumerate(document, 1):
        if position > MAX_TDMREP_ENTRIES:
            message = f"more than {MAX_TDMREP_ENTRIES} entries; the rest are ignored"
            warn("too-many", f"tdmrep.json entry {position}", "", message)
            break
        entry = _read_entry(item, position, warn)
        if entry is not None:
            entries.append(entry)
    return TdmRepFile(entries=tuple(entries), warnings=tuple(warnings), valid=True)


# -- headers and meta tags --------------------------------------------------------------------


def _one_value(
    found: list[tuple[str, str]], name: str, warn: Warn
) -> tuple[str | None, str | None]:
    """``(value, source)`` of the lines or tags of one name: their value if they all agree
    (stripped), else None with a ``conflicting-values`` warning; ``(None, None)`` for none."""
    if not found:
        return None, None
    source = found[0][0]
    if len(found) > _MAX_LINES:
        warn("too-many", source, "", f"more than {_MAX_LINES} {name} given; the rest ignored")
        found = found[:_MAX_LINES]
    values = list(dict.fromkeys(value.strip(_SPACE) for _, value in found))
    if len(values) > 1:
        shown = ", ".join(_shown(value[:40]) for value in values[:4])
        warn("conflicting-values", source, shown, f"{name} given as {shown}: unset")
        return None, source
    return values[0], source


def _statement(
    technique: str, said: Iterable[tuple[str, str, str | None]], warn: Warn
) -> TdmRepStatement | None:
    """What the header lines (or meta tags) of one response say, or None if they say nothing:
    *said* holds ``(name, source, value)`` per line (or tag); those of other names, and tags
    without a content, are not read."""
    found: dict[str, list[tuple[str, str]]] = {_RESERVATION: [], _POLICY: []}
    for name, source, value in said:
        if name in found and value is not None:
            found[name].append((source, value))
    if not found[_RESERVATION] and not found[_POLICY]:
        return None
    text, reservation_source = _one_value(found[_RESERVATION], _RESERVATION, warn)
    reservation = None
    if text is not None:
        reservation = _RESERVATION_TEXT.get(text)
        if reservation is None:
            message = "tdm-reservation is not 1 or 0: unset (a protocol error)"
            warn("bad-reservation", reservation_source or "", _shown(text[:80]), message)
    policy_text, policy_source = _one_value(found[_POLICY], _POLICY, warn)
    policy = None if policy_text is None else _policy(policy_text, policy_source or "", warn)
    source = reservation_source or policy_source or ""
    return TdmRepStatement(
        technique, reservation, policy, source, policy_source if policy is not None else None
    )


# -- the combination --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TdmReservation:
    """What TDMRep says of one resource, all techniques combined in the report's order.

    ``reserved`` is True (``tdm-reservation: 1``), False (0) or None (unset); ``statement`` is
    the statement whose ``tdm-reservation`` is in force. ``policy`` is the ``tdm-policy`` in
    force when rights are reserved (None otherwise: the report says not to process it then),
    and ``policy_statement`` where it was stated, which may be another technique than the
    reservation's (each property is superseded on its own). ``statements`` are what each
    technique said, in processing order; ``warnings`` those about the headers and meta tags
    (the file's are on the ``TdmRepFile``).
    """

    reserved: bool | None
    policy: str | None
    statement: TdmRepStatement | None
    policy_statement: TdmRepStatement | None
    statements: tuple[TdmRepStatement, ...]
    warnings: tuple[TdmRepWarning, ...]

    def usage(self, purpose: str) -> TdmRepDecision:
        """May the resource be used for *purpose* (``"train-ai"``, ``"ai-input"``,
        ``"search"``; ``"ai-train"`` reads as ``"train-ai"``)? A reservation disallows the
        purposes of ``TDMREP_PURPOSES``, with or without a policy (a policy offers a licence;
        until one is held, rights stay reserved); ``tdm-reservation: 0`` allows them; unset,
        and any other purpose, is unknown. TypeError or ValueError for an unknown purpose."""
        category = usage_category(purpose)
        if category not in TDMREP_PURPOSES:
            reason = f"TDMRep does not speak to {category}"
            return TdmRepDecision(UNKNOWN, category, self.reserved, None, None, reason)
        if self.statement is None:
            reason = f"{category} unknown: no tdm-reservation stated"
            return TdmRepDecision(UNKNOWN, category, None, None, None, reason)
        if not self.reserved:
            reason = f"{category} allowed: TDM rights not reserved by {self.statement.source}"
            return TdmRepDecision(ALLOWED, category, False, None, self.statement, reason)
        reason = f"{category} disallowed: TDM rights reserved by {self.statement.source}"
        if self.policy is not None and self.policy_statement is not None:
            reason += (
                f"; a licence may be offered by the TDM policy {self.policy}"
                f" ({self.policy_statement.policy_source})"
            )
        return TdmRepDecision(DISALLOWED, category, True, self.policy, self.statement, reason)


def tdm_reservation(
    url: str,
    file: TdmRepFile | None = None,
    headers: object = None,
    meta: object = None,
) -> TdmReservation:
    """What TDMRep says of *url*: its origin's parsed ``tdmrep.json`` (*file*; None when the
    origin has none), then the response's ``tdm-reservation`` and ``tdm-policy`` *headers*
    (a mapping or ``(name, value)`` pairs, as ``page_directives`` takes them), then the page's
    *meta* tags (``(name, content)`` pairs, as ``robots_meta_tags`` returns them), each
    superseding the values before it; a value not stated, or not valid, leaves the earlier one
    in force (the report's "Processing priority").

    Raises TypeError for arguments of the wrong types; never raises on their content.
    """
    url = as_text(url, "url")
    if file is not None and not isinstance(file, TdmRepFile):
        raise TypeError(f"file must be a TdmRepFile or None, not {type(file).__name__}")
    warnings: list[TdmRepWarning] = []
    warn = _warner(warnings, TdmRepWarning)
    lines = _header_lines(headers, TDMREP_META_NAMES)
    said = (
        file.reservation(url) if file is not None else None,
        _statement("header", ((name, f"{name} header", line) for name, line in lines), warn),
        _statement("meta", ((n, f"meta tag {i} ({n})", c) for i, n, c in _meta_tags(meta)), warn),
    )
    statements = tuple(statement for statement in said if statement is not None)
    # Each property is the last technique's that states it.
    reserved_by = next((s for s in reversed(statements) if s.reservation is not None), None)
    policy_by = next((s for s in reversed(statements) if s.policy is not None), None)
    reserved = None if reserved_by is None else reserved_by.reservation == 1
    if not reserved:
        policy_by = None
    return TdmReservation(
        reserved=reserved,
        policy=policy_by.policy if policy_by is not None else None,
        statement=reserved_by,
        policy_statement=policy_by,
        statements=statements,
        warnings=tuple(warnings),
    )
