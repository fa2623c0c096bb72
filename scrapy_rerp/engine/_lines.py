"""Tokenizer: robots.txt bytes or text in, directive events out.

The work is done by one multi-line regular expression per syntax, run over the whole text, so
that the per-line cost stays in C. An event is ``(line_number, kind, value)``; lines that are
neither a directive, a comment nor blank become warnings.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ._constants import MAX_LINE_BYTES, RFC9309
from ._patterns import to_utf8

# Directive kinds, as small ints so that events stay plain tuples.
USER_AGENT = 0
ALLOW = 1
DISALLOW = 2
SITEMAP = 3
CRAWL_DELAY = 4
REQUEST_RATE = 5
VISIT_TIME = 6
HOST = 7
CLEAN_PARAM = 8
BLANK = 9  # only emitted for MK1996/GYM2008, where a blank line ends a record

KIND_NAMES = {
    USER_AGENT: "User-agent",
    ALLOW: "Allow",
    DISALLOW: "Disallow",
    SITEMAP: "Sitemap",
    CRAWL_DELAY: "Crawl-delay",
    REQUEST_RATE: "Request-rate",
    VISIT_TIME: "Visit-time",
    HOST: "Host",
    CLEAN_PARAM: "Clean-param",
}

# Keys google/robotstxt accepts, misspellings included; it matches them as prefixes of the key.
_RFC_KEYS = {
    "user-agent": USER_AGENT,
    "useragent": USER_AGENT,
    "user agent": USER_AGENT,
    "allow": ALLOW,
    "disallow": DISALLOW,
    "dissallow": DISALLOW,
    "dissalow": DISALLOW,
    "disalow": DISALLOW,
    "diasllow": DISALLOW,
    "disallaw": DISALLOW,
    "sitemap": SITEMAP,
    "site-map": SITEMAP,
}
# Extension keys, matched whole, in every syntax.
_EXTENSION_KEYS = {
    "crawl-delay": CRAWL_DELAY,
    "request-rate": REQUEST_RATE,
    "visit-time": VISIT_TIME,
    "host": HOST,
    "clean-param": CLEAN_PARAM,
}
# rerp 1.7.1's keys (its regex: ``user[-]?agent``), plus the extensions.
_LEGACY_KEYS = {
    "user-agent": USER_AGENT,
    "useragent": USER_AGENT,
    "allow": ALLOW,
    "disallow": DISALLOW,
    "sitemap": SITEMAP,
    **_EXTENSION_KEYS,
}


def _alternation(keys: object) -> str:
    # Longest first, so that no key is shadowed by a shorter one sharing its start.
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))  # type: ignore[arg-type]


_WS = r"[ \t\v\f]"
_RFC_PREFIX_KEYS = _alternation(_RFC_KEYS)
_RFC_ONE_WORD_KEYS = _alternation(k for k in _RFC_KEYS if " " not in k)
_EXT_KEYS = _alternation(_EXTENSION_KEYS)

# One match per line (so that a match's ordinal is its line number), with groups:
# 1 key and 2 value of ``key: value`` (google reads any key that starts with a known word;
# extension keys must be whole), 3 key and 4 value of a colon-less two-token line, and 5 the
# first character of any other line ("" for blank lines, "#" for comments).
_RFC_LINE = re.compile(
    rf"^{_WS}*(?:"
    rf"({_RFC_PREFIX_KEYS}|(?:{_EXT_KEYS})(?={_WS}*:))[^:#\n]*:{_WS}*([^#\n]*)"
    rf"|({_RFC_ONE_WORD_KEYS}|{_EXT_KEYS})[^\s:#]*{_WS}+([^\s:#]+){_WS}*(?:#[^\n]*)?$"
    r"|(\S?))",
    re.IGNORECASE | re.MULTILINE,
)
# rerp: ``key:`` right after the (stripped) line start. Groups: 1 key, 2 value, 3 the first
# character of any other line ("" for a blank line, which ends a record).
_LEGACY_LINE = re.compile(
    rf"^[^\S\n]*(?:({_alternation(_LEGACY_KEYS)}):[ \t]*([^#\n]*)|(\S?))",
    re.IGNORECASE | re.MULTILINE,
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BOM = "\ufeff"
_LEADING_NON_ASCII = re.compile(r"\A[^\x00-\x7f]+")


class ParseWarning(NamedTuple):
    """A line the parser skipped or only partly understood."""

    line: int
    text: str
    message: str


def decode(content: str | bytes | bytearray | memoryview, syntax: int) -> str:
    """Turn a robots.txt body into text with ``\\n`` line ends and no byte order mark.

    RFC9309 reads UTF-8 and keeps undecodable bytes as surrogate escapes, so that a rule
    written in another encoding is %-escaped byte for byte, as google/robotstxt does.
    MK1996/GYM2008 read ISO-8859-1, as rerp does.
    """
    if isinstance(content, str):
        text = content
        if text.startswith(_BOM):
            text = text[1:]
    elif isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
        if syntax == RFC9309:
            # google skips a full or partial UTF-8 BOM at the very start.
            for size in (3, 2, 1):
                if raw[:size] == b"\xef\xbb\xbf"[:size]:
                    raw = raw[size:]
                    break
            text = raw.decode("utf-8", "surrogateescape")
        else:
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            text = raw.decode("iso-8859-1")
    else:
        raise TypeError(f"robots.txt content must be str or bytes, not {type(content).__name__}")
    if syntax != RFC9309 and text[:1] > "\x7f":
        # rerp's unanchored regex read a line whatever preceded its directive; keep that for
        # the BOM-like junk real files start with (a BOM read as ISO-8859-1, or one encoded
        # twice), and nothing else.
        text = _LEADING_NON_ASCII.sub("", text, count=1)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _truncate_long_lines(text: str, warnings: list[ParseWarning]) -> str:
    """Cut lines to google's limit of MAX_LINE_BYTES bytes (UTF-8), warning for each."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_BYTES // 4:
            raw = to_utf8(line)
            if len(raw) > MAX_LINE_BYTES:
                lines[index] = raw[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
                warnings.append(
                    ParseWarning(index + 1, line[:80], f"line longer than {MAX_LINE_BYTES} bytes")
                )
    return "\n".join(lines)


RfcRow = tuple[str, str, str, str, str]
LegacyRow = tuple[str, str, str]


def scan(text: str, syntax: int) -> tuple[list[Any], list[ParseWarning]]:
    """Split decoded *text* into rows, one per line (row ``i`` is line ``i + 1``).

    RFC9309 rows are ``(key, value, bare_key, bare_value, other)`` and MK1996/GYM2008 rows
    ``(key, value, other)``, as the regular expressions above capture them; ``rfc_kind`` and
    ``legacy_kind`` name a row's key. Over-long lines are cut first, each with a warning.
    """
    warnings: list[ParseWarning] = []
    # A line can only exceed MAX_LINE_BYTES bytes if it has more than a quarter as many chars.
    if len(text) > MAX_LINE_BYTES // 4 and max(map(len, text.split("\n"))) > MAX_LINE_BYTES // 4:
        text = _truncate_long_lines(text, warnings)
    pattern = _RFC_LINE if syntax == RFC9309 else _LEGACY_LINE
    return pattern.findall(text), warnings


def junk_warnings(text: str, numbers: list[int]) -> list[ParseWarning]:
    """Warnings for the lines *numbers* of *text*, which are not directives."""
    lines = text.split("\n")
    return [
        ParseWarning(n, lines[n - 1].strip()[:200], "not a robots.txt directive") for n in numbers
    ]


def _with_casings(keys: dict[str, int]) -> dict[str, int]:
    # Keys as files usually write them, so that most look-ups need no lower().
    table = dict(keys)
    for key, kind in keys.items():
        table[key.capitalize()] = kind
        table[key.upper()] = kind
        table["-".join(part.capitalize() for part in key.split("-"))] = kind
    return table


RFC_KIND = _with_casings({**_RFC_KEYS, **_EXTENSION_KEYS})
_LEGACY_KIND = _with_casings(_LEGACY_KEYS)


def rfc_kind(key: str) -> int:
    """The kind of a key as ``_RFC_LINE`` captures it (a known word in any case)."""
    kind = RFC_KIND.get(key)
    if kind is not None:
        return kind
    key = key.lower()
    kind = RFC_KIND.get(key)
    if kind is not None:
        return kind
    for known, kind in _RFC_KEYS.items():  # a colon-less key only starts with a known word
        if key.startswith(known):
            return kind
    raise AssertionError(key)


def legacy_kind(key: str) -> int:
    return _LEGACY_KIND.get(key) or _LEGACY_KIND[key.lower()]


def clean_legacy_value(value: str) -> str:
    """rerp's scrubbing: control characters removed (DEL too, which rerp missed), stripped."""
    if not value.isprintable():
        value = _CONTROL.sub("", value)
    return value.strip()
