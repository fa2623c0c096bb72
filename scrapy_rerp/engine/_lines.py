"""Tokenizer: robots.txt bytes or text in, one directive kind and value per line out.

RFC9309 text is split into lines and each line's key is looked up whole in a table of the
spellings files use (``Disallow``, ``User-agent``...), with the loops in C (``map``); only the
lines the table does not know (comments, odd spacing, misspellings, colon-less lines) go
through the line regular expression. MK1996/GYM2008 run one multi-line regular expression
over the text. Lines that are neither a directive, a comment nor blank become warnings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import compress, repeat
from operator import itemgetter
from typing import NamedTuple

from ._constants import MAX_LINE_BYTES, RFC9309
from ._directives import (  # noqa: F401 - the kinds, read here as _lines.ALLOW...
    ALLOW,
    CLEAN_PARAM,
    CRAWL_DELAY,
    DIRECTIVES,
    DISALLOW,
    HOST,
    REQUEST_RATE,
    SITEMAP,
    USER_AGENT,
    VISIT_TIME,
)
from ._patterns import to_utf8

# Line kinds: a directive's position in DIRECTIVES, or one of these, above any of them.
IGNORED = 251  # RFC9309: a blank line, a comment, or a line that is not a directive

KIND_NAMES = {kind: directive.name for kind, directive in enumerate(DIRECTIVES)}

# Keys google/robotstxt accepts, misspellings included; it matches them as prefixes of the key.
_RFC_KEYS = {key: kind for kind, d in enumerate(DIRECTIVES) for key in d.google_keys}
# Keys matched whole, in every syntax.
_EXTENSION_KEYS = {key: kind for kind, d in enumerate(DIRECTIVES) for key in d.keys}
# rerp 1.7.1's keys (its regex: ``user[-]?agent``), plus the extensions.
_LEGACY_KEYS = {
    **{key: kind for kind, d in enumerate(DIRECTIVES) for key in d.legacy_keys},
    **_EXTENSION_KEYS,
}


def _alternation(keys: Iterable[str]) -> str:
    # Longest first, so that no key is shadowed by a shorter one sharing its start.
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


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
    """A line the parser skipped or only partly understood.

    ``code`` names the kind of problem, for programs (the message is for people): one of
    :data:`WARNING_CODES`.
    """

    line: int
    text: str
    message: str
    code: str = "ignored-line"


#: Every ParseWarning code, with what it means.
WARNING_CODES: dict[str, str] = {
    "line-too-long": "a line longer than google's limit, cut to it",
    "unknown-directive": "a line that is no directive the syntax knows",
    "rule-outside-group": "an Allow or Disallow before any User-agent line",
    "outside-group": "a per-group directive (Crawl-delay, Content-Usage...) outside a group",
    "invalid-value": "a value the directive cannot read (a Crawl-delay that is no number...)",
    "unknown-usage-category": "a Content-Usage label the vocabulary does not define",
    "malformed-content-usage": "a Content-Usage value or member that states no preference",
    "no-usage-preference": "a Content-Usage or Content-Signal line that states nothing",
    "unknown-content-signal": "a Content-Signal key or answer that is not known",
    "conflicting-content-signal": "a Content-Signal key given both yes and no",
    "relative-license": "a License (RSL) that is no absolute URL: kept, not among licenses",
    "invalid-license": "a License (RSL) that is no http(s) URL with a host: kept, not used",
    "ignored-line": "any other line skipped",
}


def decode(content: str | bytes | bytearray | memoryview, syntax: int) -> str:
    """Turn a robots.txt body into text with ``\\n`` line ends and no byte order mark.

    RFC9309 reads UTF-8 and keeps undecodable bytes as surrogate escapes, so that a rule
    written in another encoding is %-escaped byte for byte, as google/robotstxt does.
    MK1996/GYM2008 read ISO-8859-1, as rerp does.
    """
    if isinstance(content, str):
        text = content.removeprefix(_BOM)
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
            text = raw.removeprefix(b"\xef\xbb\xbf").decode("iso-8859-1")
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


LegacyRow = tuple[str, str, str]


def _cut_long_lines(lines: list[str], warnings: list[ParseWarning]) -> list[str]:
    """Cut lines to google's limit of MAX_LINE_BYTES bytes (UTF-8), warning for each: a copy
    of *lines*, or *lines* itself when none is that long."""
    # A line can only exceed MAX_LINE_BYTES bytes if it has more than a quarter as many chars.
    if max(map(len, lines)) <= MAX_LINE_BYTES // 4:
        return lines
    lines = list(lines)
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_BYTES // 4:
            raw = to_utf8(line)
            if len(raw) > MAX_LINE_BYTES:
                lines[index] = raw[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
                message = f"line longer than {MAX_LINE_BYTES} bytes"
                warnings.append(ParseWarning(index + 1, line[:80], message, "line-too-long"))
    return lines


def scan_legacy(text: str) -> tuple[list[LegacyRow], list[ParseWarning]]:
    """Split decoded MK1996/GYM2008 *text* into rows, one per line (row ``i`` is line ``i + 1``).

    Rows are ``(key, value, other)``, as ``_LEGACY_LINE`` captures them; ``legacy_kind`` names
    a row's key. Over-long lines are cut first, each with a warning.
    """
    warnings: list[ParseWarning] = []
    if len(text) > MAX_LINE_BYTES // 4:
        lines = text.split("\n")
        cut = _cut_long_lines(lines, warnings)
        if cut is not lines:
            text = "\n".join(cut)
    return _LEGACY_LINE.findall(text), warnings


def junk_warnings(lines: list[str], numbers: list[int]) -> list[ParseWarning]:
    """Warnings for the lines *numbers* (1-based) of *lines*, which are not directives."""
    return [
        ParseWarning(
            n, lines[n - 1].strip()[:200], "not a robots.txt directive", "unknown-directive"
        )
        for n in numbers
    ]


def tokenize_rfc(
    text: str, warnings: list[ParseWarning]
) -> tuple[bytearray, list[str], list[str], dict[int, str], list[int]]:
    """Read decoded RFC9309 *text*: ``(kinds, read, lines, bare_values, junk)``.

    ``kinds[i]`` is line ``i + 1``'s directive kind: ``IGNORED`` for blank lines, comments and
    junk, ``STD_DISALLOW`` for a Disallow written ``Disallow:`` at the line start. ``read`` are
    the lines to read values from (``value_of``), ``lines`` the lines as written (before
    over-long lines are cut) for warnings, ``bare_values`` the values of colon-less lines
    (``Disallow /x``) by index, and ``junk`` the 1-based numbers of lines that are not directives.
    """
    lines = text.split("\n")
    read = _cut_long_lines(lines, warnings) if len(text) > MAX_LINE_BYTES // 4 else lines
    # Most lines are ``Disallow:`` lines: one C-level pass finds them; only the others are cut
    # at their colon and looked up.
    kinds = bytearray(map(_STARTS, read, repeat(_STD_DISALLOW_KEY))).translate(_STD_OR_UNSET)
    bare_values: dict[int, str] = {}
    junk: list[int] = []
    if _UNSET_KIND not in kinds:
        return kinds, read, lines, bare_values, junk
    # A line up to its first colon: a line without one, even one that is only a key
    # (``Disallow``), is looked up as "" and not found. (A loop: the lines left are few, and
    # chained C-level passes cost more to build than they save.)
    get = _FAST_RFC_KIND.get
    match = _RFC_LINE.match
    for index in compress(range(len(kinds)), kinds.translate(_IS_UNSET)):
        line = read[index]
        if not line or line[0] == "#":  # a third of the lines left
            kinds[index] = IGNORED
            continue
        kind = get(line[: line.find(":") + 1])
        if kind is not None:
            kinds[index] = kind
        else:
            key, _, bare_key, bare_value, other = match(line).groups("")  # type: ignore[union-attr]
            if key:  # what follows the first colon, as value_of reads it
                kinds[index] = rfc_kind(key)
            elif bare_key:
                kinds[index] = rfc_kind(bare_key)
                bare_values[index] = bare_value
            else:
                kinds[index] = IGNORED
                if other and other != "#":
                    junk.append(index + 1)
    return kinds, read, lines, bare_values, junk


def value_of(read: list[str], bare_values: dict[int, str], index: int) -> str:
    """The cleaned value of line *index* (0-based) as tokenize_rfc read it."""
    if bare_values and index in bare_values:
        return bare_values[index]
    return clean_value(read[index].partition(":")[2])


STD_DISALLOW = 252  # RFC9309: a Disallow line that starts ``Disallow:``; its value is line[9:]
STD_DISALLOW_VALUE = itemgetter(slice(9, None))
_STD_DISALLOW_KEY = "Disallow:"
_UNSET_KIND = 253
_STARTS = str.startswith
_STD_OR_UNSET = bytes([_UNSET_KIND, STD_DISALLOW] + [0] * 254)
_IS_UNSET = bytes(1 if i == _UNSET_KIND else 0 for i in range(256))


_VALUE_SPACE = " \t\v\f"


def clean_value(value: str) -> str:
    """A directive's value: up to a ``#``, without the blanks google trims."""
    if "#" in value:
        value = value[: value.index("#")]
    return value.strip(_VALUE_SPACE)


def _with_casings(keys: dict[str, int]) -> dict[str, int]:
    # Keys as files usually write them, so that most look-ups need no lower().
    table = dict(keys)
    for key, kind in keys.items():
        table[key.capitalize()] = kind
        table[key.upper()] = kind
        table["-".join(part.capitalize() for part in key.split("-"))] = kind
    return table


RFC_KIND = _with_casings({**_RFC_KEYS, **_EXTENSION_KEYS})
# The keys, colon included, that tokenize_rfc reads without the regular expression: a key written
# exactly so (no blank before the colon) is read by _RFC_LINE as the same kind, with the same
# value. A blank line takes the short way in tokenize_rfc; any other line takes the regular
# expression.
_FAST_RFC_KIND = {key + ":": kind for key, kind in RFC_KIND.items()}
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
