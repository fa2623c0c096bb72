"""Groups: how a file's lines are read into groups (RFC 9309) or records (MK1996/GYM2008), and
the plain tuples they are stored as."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import itemgetter, not_, or_
from sys import intern
from typing import Any

from . import _lines as L
from ._constants import SHARED_ENTRY_MAX, SHARED_RULES_CHARS
from ._directives import (
    RequestRate,
    VisitTime,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
)
from ._lines import _VALUE_SPACE, ParseWarning
from ._patterns import escape_pattern, has_lower_escape, unquote_path

STAR = ("*",)  # the agents of most groups, shared


def clear_tables() -> None:
    """Empty the tables of rule lines and agent lines read (``clear_shared_tables``)."""
    _GROUP_RULES.clear()
    _ONE_AGENT.clear()


class _Builder:
    """A MK1996/GYM2008 record under construction; ``_from_builder`` freezes it."""

    __slots__ = ("agents", "patterns", "kinds", "lines", "extras", "first_line")

    def __init__(self, line: int) -> None:
        self.agents: list[str] = []
        self.patterns: list[str] = []
        self.kinds = bytearray()  # 1 = Allow, 0 = Disallow, per rule
        self.lines: list[int] = []
        self.extras: list[tuple[int, int, Any]] = []  # (agents declared so far, kind, value)
        self.first_line = line


# A stored group (RFC 9309) or record (MK1996/GYM2008) is a plain tuple, so that the garbage
# collector stops tracking it (and the strings, bytes and ints in it) once it has seen it:
#   (agents, patterns, kinds, lines, extras, first_line, plain)
# kinds: None if every rule is a Disallow, else bytes with 1 for an Allow, per rule;
# lines: an int if the rules are on consecutive lines from there, else an array of them;
# extras: (agents declared so far, kind, value) per Crawl-delay, Request-rate, Visit-time;
# plain: RFC9309, every rule is a Disallow without wildcards, none is empty, and there are few
# enough to try one by one (plain_prefixes).
StoredGroup = tuple[
    tuple[str, ...], tuple[str, ...], "bytes | None", "int | array[int]", tuple[Any, ...], int, bool
]
AGENTS, PATTERNS, KINDS, LINES, EXTRAS, FIRST_LINE, PLAIN = range(7)


def as_groups(entry: Any) -> tuple[StoredGroup, ...]:
    """An index entry (one group, or a tuple of groups) as a tuple of groups."""
    # A group starts with its agents (a tuple of str); a tuple of groups with a group.
    return (entry,) if type(entry[0][0]) is str else entry


def _from_builder(built: _Builder) -> StoredGroup:
    agents = built.agents
    lines = built.lines
    return (
        STAR if agents == ["*"] else tuple(agents),
        tuple(built.patterns),
        bytes(built.kinds) if 1 in built.kinds else None,
        lines[0] if lines and lines[-1] - lines[0] == len(lines) - 1 else array("I", lines),
        tuple(built.extras),
        built.first_line,
        False,
    )


def kind_at(group: StoredGroup, index: int) -> int:
    """1 if rule *index* is an Allow, 0 for a Disallow."""
    kinds = group[KINDS]
    return kinds[index] if kinds is not None else 0


def line_at(group: StoredGroup, index: int) -> int:
    lines = group[LINES]
    return lines + index if isinstance(lines, int) else lines[index]


def group_rules(group: StoredGroup) -> tuple[tuple[bool, str, int], ...]:
    return tuple(
        (kind_at(group, i) == 1, p, line_at(group, i)) for i, p in enumerate(group[PATTERNS])
    )


def group_extra(group: StoredGroup, kind: int, agent_index: int) -> Any:
    for declared, extra_kind, value in group[EXTRAS]:
        if extra_kind == kind and agent_index < declared:
            return value
    return None


def crawl_delay_last(group: StoredGroup) -> float | None:
    """The record's last valid Crawl-delay (rerp: a later line overwrites an earlier one)."""
    for _, kind, value in reversed(group[EXTRAS]):
        if kind == L.CRAWL_DELAY:
            return value  # type: ignore[no-any-return]
    return None


# Disallow prefixes up to this many are tried one by one on each check; a rule set with more gets
# a bisection gate in matching (``_match``).
PREFIX_GATE_MIN = 256


def plain_prefixes(kinds: bytes | None, text: str, patterns: Sequence[str]) -> bool:
    """True if the rules are all non-empty Disallow prefixes without ``*`` or ``$``, which are
    matched as they are: no more than PREFIX_GATE_MIN of them, as more are bisected once they
    have served enough checks (``_Wild.gate``). *text* holds every pattern (more text only makes
    the answer False)."""
    return (
        kinds is None
        and len(patterns) <= PREFIX_GATE_MIN
        and "*" not in text
        and "$" not in text
        and "" not in patterns
    )


def _extension(
    kind: int, value: str, line: int, warnings: list[ParseWarning]
) -> RequestRate | VisitTime | float | None:
    if kind == L.CRAWL_DELAY:
        parsed: Any = parse_crawl_delay(value)
    elif kind == L.REQUEST_RATE:
        parsed = parse_request_rate(value)
    else:
        parsed = parse_visit_time(value)
    if parsed is None:
        warnings.append(
            ParseWarning(line, f"{L.KIND_NAMES[kind]}: {value}", "invalid value, ignored")
        )
    return parsed  # type: ignore[no-any-return]


class FileWide:
    """Directives that belong to the whole file, whatever the group: Sitemap, Host, Clean-param."""

    __slots__ = ("sitemaps", "host", "clean_params")

    def __init__(self) -> None:
        self.sitemaps: list[str] = []
        self.host: str | None = None
        self.clean_params: list[str] = []

    def add(self, kind: int, value: str) -> bool:
        """Record *value* if *kind* is file-wide; False for the other kinds."""
        if kind == L.SITEMAP:
            self.sitemaps.append(value)
        elif kind == L.HOST:
            if self.host is None and value:
                self.host = value  # the first Host wins
        elif kind == L.CLEAN_PARAM:
            self.clean_params.append(value)
        else:
            return False
        return True


# Per-line kinds mapped to one letter, so that the group structure is found with bytes.find:
# U a User-agent, R a rule, E a per-group extension, F a file-wide directive, . anything else.
_COARSE = bytes(
    {
        L.USER_AGENT: ord("U"),
        L.ALLOW: ord("R"),
        L.DISALLOW: ord("R"),
        L.STD_DISALLOW: ord("R"),
        L.CRAWL_DELAY: ord("E"),
        L.REQUEST_RATE: ord("E"),
        L.VISIT_TIME: ord("E"),
        L.SITEMAP: ord("F"),
        L.HOST: ord("F"),
        L.CLEAN_PARAM: ord("F"),
    }.get(i, ord("."))
    for i in range(256)
)
# A letter looked for as an int: ``bytes in bytes`` first tries its argument as an int, and the
# exception it raises and clears inside costs more than the search.
_LETTER_F = ord("F")
_LETTER_E = ord("E")
_IS_RULE = bytes(1 if i in (L.ALLOW, L.DISALLOW, L.STD_DISALLOW) else 0 for i in range(256))
_ALLOW_BIT = bytes(1 if i == L.ALLOW else 0 for i in range(256))
_value_of = L.value_of
_strip = str.strip
_PARTITION = str.partition
_BEFORE_HASH = itemgetter(0)
_AFTER_COLON = itemgetter(2)


def build_rfc(text: str, warnings: list[ParseWarning]) -> tuple[tuple[StoredGroup, ...], FileWide]:
    """RFC 9309 groups: a group starts at a User-agent line that follows a rule line.

    The lines' kinds are a bytearray, so the group boundaries are found with ``bytes.find`` and
    each group's rules are taken with C-level ``compress`` and ``map``: no Python code runs per
    rule line unless a rule needs escaping or is an ``/index.html`` Allow.
    """
    kinds, read, lines, bare_values, junk = L.tokenize_rfc(text, warnings)
    if junk:
        warnings += L.junk_warnings(lines, junk)
    coarse = kinds.translate(_COARSE)
    file_wide = FileWide()
    if _LETTER_F in coarse:
        index = coarse.find(b"F")
        while index != -1:
            file_wide.add(kinds[index], _value_of(read, bare_values, index))
            index = coarse.find(b"F", index + 1)
    start = coarse.find(b"U")
    if start:  # lines before the first User-agent (or no User-agent at all)
        _warn_outside_groups(kinds, read, bare_values, coarse, start, warnings)
    groups: list[StoredGroup] = []
    size = len(coarse)
    has_extras = _LETTER_E in coarse
    while start != -1:
        first_rule = coarse.find(b"R", start)
        if first_rule == -1:
            first_rule = end = size
            following = -1
        else:
            following = coarse.find(b"U", first_rule)
            end = size if following == -1 else following
        groups.append(
            _rfc_group(
                kinds, read, bare_values, coarse, start, first_rule, end, has_extras, warnings
            )
        )
        start = following
    return tuple(groups), file_wide


def _warn_outside_groups(
    kinds: bytearray,
    read: list[str],
    bare_values: dict[int, str],
    coarse: bytes,
    start: int,
    warnings: list[ParseWarning],
) -> None:
    """Warn for each rule and per-group extension before *start*, the first User-agent."""
    before = len(coarse) if start == -1 else start
    for letter, message in ((b"R", "rule before any User-agent, ignored"), (b"E", None)):
        index = coarse.find(letter, 0, before)
        while index != -1:
            if message is None:
                text_of = f"{L.KIND_NAMES[kinds[index]]} outside a group, ignored"
            else:
                text_of = message
            warnings.append(ParseWarning(index + 1, _value_of(read, bare_values, index), text_of))
            index = coarse.find(letter, index + 1, before)


def _rfc_group(
    kinds: bytearray,
    read: list[str],
    bare_values: dict[int, str],
    coarse: bytes,
    start: int,
    first_rule: int,
    end: int,
    has_extras: bool,
    warnings: list[ParseWarning],
) -> StoredGroup:
    """One group: User-agent lines from *start* up to *first_rule*, its lines up to *end*
    (*has_extras*: whether the file has any Crawl-delay, Request-rate or Visit-time)."""
    if first_rule == start + 1:
        # Keyed by the whole line, whose value is read the same way each time.
        line = read[start]
        agents: tuple[str, ...] | None = _ONE_AGENT.get(line)
        if agents is None:
            value = _value_of(read, bare_values, start)
            agents = STAR if value == "*" else (intern(value),)
            if len(_ONE_AGENT) < _ONE_AGENT_MEMO_SIZE and len(line) <= SHARED_ENTRY_MAX:
                _ONE_AGENT[line] = agents
    else:
        names = []
        index = start
        while index != -1:
            names.append(intern(_value_of(read, bare_values, index)))
            index = coarse.find(b"U", index + 1, first_rule)
        agents = tuple(names)
    extras: tuple[tuple[int, int, Any], ...] = ()
    index = coarse.find(b"E", start, end) if has_extras else -1
    if index != -1:
        found = []
        while index != -1:
            kind = kinds[index]
            parsed = _extension(kind, _value_of(read, bare_values, index), index + 1, warnings)
            if parsed is not None:
                found.append((coarse.count(b"U", start, index), kind, parsed))
            index = coarse.find(b"E", index + 1, end)
        extras = tuple(found)
    if first_rule == end:
        return (agents, (), None, 0, extras, start + 1, True)
    last = coarse.rfind(b"R", first_rule, end) + 1
    rule_kinds = kinds[first_rule:last]
    selected = rule_kinds.translate(_IS_RULE)
    if 0 in selected:  # other lines between the rules: keep the rule lines only
        rule_lines = list(compress(read[first_rule:last], selected))
        numbers = list(compress(range(first_rule + 1, last + 1), selected))
        rule_kinds = bytearray(compress(rule_kinds, selected))
    else:
        rule_lines = read[first_rule:last]
        numbers = None
    # A group's rules are a function of its rule lines' text, and many sites serve the same
    # lines (a CMS's defaults): those are read once.
    joined = "\n".join(rule_lines)
    known = _GROUP_RULES.get(joined)
    if known is not None:
        patterns, allow_bits, plain = known
    else:
        patterns, allow_bits, plain, numbers = _rfc_rules_of(
            rule_lines, rule_kinds, joined, bare_values, numbers, first_rule, last
        )
    if numbers is None:
        stored_lines: int | array[int] = first_rule + 1
    elif numbers[-1] - numbers[0] == len(numbers) - 1:
        stored_lines = numbers[0]
    else:
        stored_lines = array("I", numbers)
    return (agents, patterns, allow_bits, stored_lines, extras, start + 1, plain)


def _rfc_rules_of(
    rule_lines: list[str],
    rule_kinds: bytearray,
    joined: str,
    bare_values: dict[int, str],
    numbers: list[int] | None,
    first_rule: int,
    last: int,
) -> tuple[tuple[str, ...], bytes | None, bool, list[int] | None]:
    """(patterns, allow bits, plain, line numbers) of a group's rule lines (*joined*: the
    lines joined with newlines), remembered for the next group with the same lines."""
    values: Iterable[str] | None = _cleanly_written(joined, len(rule_lines))
    if values is None:
        raw: Iterable[str]
        if rule_kinds.count(L.STD_DISALLOW) == len(rule_kinds):
            raw = map(L.STD_DISALLOW_VALUE, rule_lines)
        else:
            raw = map(_AFTER_COLON, map(_PARTITION, rule_lines, repeat(":")))
            if bare_values:
                raw = list(raw)
                for position, number in enumerate(numbers or range(first_rule + 1, last + 1)):
                    if number - 1 in bare_values:
                        raw[position] = bare_values[number - 1]
        # What the values might hold, read off the whole lines (a key holds none of these
        # characters, or only makes a test below look closer): the values stay lazy, so that
        # each rule passes through slice, strip and intern without a list in between.
        if "#" in joined:
            raw = map(_BEFORE_HASH, map(_PARTITION, raw, repeat("#")))
        values = map(_strip, raw, repeat(_VALUE_SPACE))
    if joined.isascii() and ("%" not in joined or not has_lower_escape(joined)):
        patterns = list(map(intern, values))  # nothing to escape
    else:
        patterns = list(values)
        _escape_some(patterns)
        patterns = list(map(intern, patterns))
    allow_bits: bytes | None = None
    remember = len(joined) <= SHARED_RULES_CHARS
    if L.ALLOW in rule_kinds:
        allow_bits = bytes(rule_kinds.translate(_ALLOW_BIT))
        if "/index.htm" in joined:
            patterns, allow_bits, numbers = _with_index_directories(
                patterns, allow_bits, numbers or list(range(first_rule + 1, last + 1))
            )
            remember = False  # rules were added for the directories: the line numbers changed
    # Whether the rules are plain prefixes, seen now while the values are at hand.
    found = (tuple(patterns), allow_bits, plain_prefixes(allow_bits, joined, patterns))
    if remember:
        if len(_GROUP_RULES) >= _GROUP_RULES_MEMO_SIZE:
            _GROUP_RULES.clear()
        _GROUP_RULES[joined] = found
    return (*found, numbers)


def _cleanly_written(joined: str, count: int) -> list[str] | None:
    """The values of *count* rule lines (*joined* with newlines) if every line is written
    ``Disallow: value`` or ``Allow: value``, with one blank after the colon, and no value holds
    a blank or a ``#``; else None.

    Then the values are what lies between the keys: one C-level split reads them all, where
    the general way slices and strips each line.
    """
    if (
        joined.count(" ") != count
        or "#" in joined
        or "\t" in joined
        or "\v" in joined
        or "\f" in joined
    ):
        return None
    text = "\n" + joined
    if "\nAllow: " in text:
        # Every "\nAllow: " starts a line, and so does the "\nDisallow: " put in its place.
        text = text.replace("\nAllow: ", "\nDisallow: ")
    values = text.split("\nDisallow: ")
    # As many keys as newlines, so one at each line start; the first piece is the "" before it.
    if len(values) != count + 1:
        return None
    del values[0]
    return values


# A group's rule lines, joined with newlines -> (patterns, allow bits, plain), for recent groups.
_GROUP_RULES: dict[str, tuple[tuple[str, ...], bytes | None, bool]] = {}
_GROUP_RULES_MEMO_SIZE = 4096


# The agents of one-agent groups by their User-agent line, shared: most files name the same
# few crawlers.
_ONE_AGENT: dict[str, tuple[str, ...]] = {}
_ONE_AGENT_MEMO_SIZE = 4096


def _escape_some(patterns: list[str]) -> None:
    """%-escape, in place, the patterns that have non-ASCII characters or a ``%``."""
    needs = map(or_, map(not_, map(str.isascii, patterns)), map(_HAS, patterns, repeat("%")))
    for index in compress(range(len(patterns)), needs):
        patterns[index] = escape_pattern(patterns[index])


_HAS = str.__contains__


def _with_index_directories(
    patterns: list[str], allow_bits: bytes, numbers: list[int]
) -> tuple[list[str], bytes, list[int]]:
    """google: an Allow ending in ``/index.htm`` or ``/index.html`` also allows the directory."""
    out_patterns: list[str] = []
    out_bits = bytearray()
    out_numbers: list[int] = []
    for pattern, bit, number in zip(patterns, allow_bits, numbers, strict=True):
        out_patterns.append(pattern)
        out_bits.append(bit)
        out_numbers.append(number)
        if bit:
            slash = pattern.rfind("/")
            if slash != -1 and pattern.startswith("/index.htm", slash):
                out_patterns.append(intern(pattern[: slash + 1] + "$"))
                out_bits.append(1)
                out_numbers.append(number)
    return out_patterns, bytes(out_bits), out_numbers


def build_legacy(
    rows: list[L.LegacyRow], warnings: list[ParseWarning], junk: list[int], syntax: int
) -> tuple[tuple[StoredGroup, ...], FileWide]:
    """rerp 1.7.1's record logic: blank lines end records, ``*`` records go last."""
    records: list[_Builder] = []
    current: _Builder | None = None
    previous_was_agent = False
    file_wide = FileWide()

    def close() -> None:
        # rerp keeps records with names and rules; we also keep those with only a Crawl-delay
        # (or other extension), so that get_crawl_delay() sees them.
        if current is not None and current.agents and (current.patterns or current.extras):
            records.append(current)

    line = 0
    for key, value, other in rows:
        line += 1
        if key:
            kind = L.legacy_kind(key)
            value = L.clean_legacy_value(value)
        elif not other:
            kind = L.BLANK
        else:
            if other != "#":
                junk.append(line)
            continue
        if kind == L.BLANK:
            close()
            current = None
            previous_was_agent = False
        elif kind == L.USER_AGENT:
            if previous_was_agent:
                if current is not None and value:
                    current.agents.append(value)
            else:
                close()
                current = _Builder(line)
                if value:
                    current.agents.append(value)
            previous_was_agent = True
        elif kind == L.ALLOW or kind == L.DISALLOW:
            previous_was_agent = False
            if current is None:
                warnings.append(ParseWarning(line, value, "rule outside a record, ignored"))
                continue
            current.patterns.append(unquote_path(value))
            current.lines.append(line)
            current.kinds.append(1 if kind == L.ALLOW else 0)
        elif kind == L.SITEMAP:
            previous_was_agent = False
            file_wide.add(kind, value)
        elif kind == L.CRAWL_DELAY:
            previous_was_agent = False
            if current is not None:
                parsed = _extension(kind, value, line, warnings)
                if parsed is not None:
                    current.extras.append((len(current.agents), kind, parsed))
        elif file_wide.add(kind, value):  # Host, Clean-param: unknown to rerp, no effect
            pass
        elif current is not None:  # Request-rate, Visit-time: unknown to rerp, no effect on records
            parsed = _extension(kind, value, line, warnings)
            if parsed is not None:
                current.extras.append((len(current.agents), kind, parsed))
    close()
    ordered = [r for r in records if "*" not in r.agents] + [r for r in records if "*" in r.agents]
    return tuple(map(_from_builder, ordered)), file_wide
