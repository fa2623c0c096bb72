"""Tokenizer: robots.txt bytes or text in, directive events out.

The work is done by one multi-line regular expression per syntax, run over the whole text, so
that the per-line cost stays in C. An event is ``(line_number, kind, value)``; lines that are
neither a directive, a comment nor blank become warnings.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ._constants import MAX_LINE_BYTES, RFC9309

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

# RFC 9309 / google: ``key: value`` where the key starts with a known word, or, without a
# colon, exactly two whitespace-separated tokens.  Groups: 1/2/4 key, 3/5 value.
_RFC_LINE = re.compile(
    rf"^{_WS}*(?:"
    rf"(?:({_RFC_PREFIX_KEYS})[^:#\n]*|({_EXT_KEYS}){_WS}*):{_WS}*([^#\n]*)"
    rf"|({_RFC_ONE_WORD_KEYS}|{_EXT_KEYS})[^\s:#]*{_WS}+([^\s:#]+){_WS}*(?:#[^\n]*)?$"
    r")",
    re.IGNORECASE | re.MULTILINE,
)
# rerp: ``key:`` right after the (stripped) line start; blank lines are events too.
_LEGACY_LINE = re.compile(
    rf"^[^\S\n]*(?:({_alternation(_LEGACY_KEYS)}):[ \t]*([^#\n]*)|$)",
    re.IGNORECASE | re.MULTILINE,
)
# A line with content: not blank, not a comment.
_CONTENT_LINE_RFC = re.compile(rf"^{_WS}*[^\s#]", re.MULTILINE)
_CONTENT_LINE_LEGACY = re.compile(r"^[^\S\n]*[^\s#]", re.MULTILINE)
_LONG_LINE = re.compile(r"[^\n]{" + str(MAX_LINE_BYTES // 4 + 1) + ",}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BOM = "\ufeff"
_LATIN1_BOM = "\xef\xbb\xbf"


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
    if syntax != RFC9309 and text.startswith(_LATIN1_BOM):
        text = text[3:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _truncate_long_lines(text: str, warnings: list[ParseWarning]) -> str:
    """Cut lines to google's limit of MAX_LINE_BYTES bytes (UTF-8), warning for each."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_BYTES // 4:
            raw = line.encode("utf-8", "surrogateescape")
            if len(raw) > MAX_LINE_BYTES:
                lines[index] = raw[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
                warnings.append(
                    ParseWarning(index + 1, line[:80], f"line longer than {MAX_LINE_BYTES} bytes")
                )
    return "\n".join(lines)


Event = tuple[int, int, str]


def tokenize(text: str, syntax: int) -> tuple[list[Event], list[ParseWarning]]:
    """Return the directive events of *text* (already decoded) and the skipped lines."""
    warnings: list[ParseWarning] = []
    if len(text) > MAX_LINE_BYTES // 4 and _LONG_LINE.search(text):
        text = _truncate_long_lines(text, warnings)
    events: list[Event] = []
    append = events.append
    line = 1
    last = 0
    count = text.count
    if syntax == RFC9309:
        keys = _RFC_KEYS
        ext = _EXTENSION_KEYS
        for match in _RFC_LINE.finditer(text):
            start = match.start()
            line += count("\n", last, start)
            last = start
            key, ext_key, value, bare_key, bare_value = match.groups()
            if value is None:
                key = bare_key.lower()
                kind = ext.get(key)
                if kind is None:
                    kind = keys[_prefix_key(key)]
                append((line, kind, bare_value))
            else:
                kind = keys[key.lower()] if key is not None else ext[ext_key.lower()]
                append((line, kind, value.rstrip(" \t\v\f")))
        content = _CONTENT_LINE_RFC
    else:
        legacy = _LEGACY_KEYS
        for match in _LEGACY_LINE.finditer(text):
            start = match.start()
            line += count("\n", last, start)
            last = start
            key, value = match.groups()
            if key is None:
                append((line, BLANK, ""))
            else:
                if not value.isprintable():
                    value = _CONTROL.sub("", value)
                append((line, legacy[key.lower()], value.strip()))
        content = _CONTENT_LINE_LEGACY
    directives = len(events) if syntax == RFC9309 else sum(1 for e in events if e[1] != BLANK)
    if len(content.findall(text)) != directives:
        warnings.extend(_unrecognised_lines(text, events))
        warnings.sort()
    return events, warnings


def _prefix_key(key: str) -> str:
    for known in _RFC_KEYS:
        if key.startswith(known):
            return known
    raise AssertionError(key)  # the regex only matches known prefixes


def _unrecognised_lines(text: str, events: list[Event]) -> list[ParseWarning]:
    """Slow path, only for files with junk: name each content line that is not a directive."""
    seen = {line for line, kind, _ in events if kind != BLANK}
    found = []
    for number, raw in enumerate(text.split("\n"), 1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#") and number not in seen:
            found.append(ParseWarning(number, stripped[:200], "not a robots.txt directive"))
    return found
