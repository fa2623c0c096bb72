"""Groups: how a file's lines are read into groups (RFC 9309) or records (MK1996/GYM2008), and
how they are stored."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import compress, repeat
from operator import itemgetter, not_, or_
from typing import Any, NamedTuple

from . import _lines as L
from ._directives import AGENT, DIRECTIVES, FILE, RULE, USAGE_KINDS
from ._lines import _VALUE_SPACE, ParseWarning
from ._patterns import escape_pattern, has_lower_escape, unquote_path
from ._shared import SharedStrings, SharedTable, str_bytes

STAR = ("*",)  # the agents of most groups, shared


class Extra(NamedTuple):
    """A per-group value (Crawl-delay...), for the group's agents named before its line."""

    agents_before: int
    kind: int
    value: Any
    line: int


class StoredGroup(NamedTuple):
    """A group (RFC 9309) or record (MK1996/GYM2008) as parsed.

    Rule ``i`` is ``patterns[i]``, an Allow if ``allow_bits[i]`` is 1, on line ``line_of(i)``.
    """

    agents: tuple[str, ...]
    patterns: tuple[str, ...]
    allow_bits: bytes | None  # None when every rule is a Disallow (most groups)
    first_rule_line: int
    # Each rule's line, unless the rules are on consecutive lines (most groups): then None, which
    # costs nothing where an array would cost 64 bytes and more.
    scattered_lines: array[int] | None
    extras: tuple[Extra, ...]
    first_line: int  # the line of the first User-agent
    # RFC9309: every rule is a Disallow without wildcards, none is empty, and there are few
    # enough to try one by one (plain_prefixes), so the patterns are matched as they are.
    plain: bool

    def line_of(self, index: int) -> int:
        lines = self.scattered_lines
        return self.first_rule_line + index if lines is None else lines[index]

    def is_allow(self, index: int) -> bool:
        return self.allow_bits is not None and self.allow_bits[index] == 1

    def has_rule_on(self, line: int) -> bool:
        """Whether one of the group's rules is on *line*."""
        lines = self.scattered_lines
        if lines is None:
            return self.first_rule_line <= line < self.first_rule_line + len(self.patterns)
        return line in lines

    def rules(self) -> tuple[tuple[bool, str, int], ...]:
        """``(is_allow, pattern, line)`` per rule, in file order."""
        return tuple((self.is_allow(i), p, self.line_of(i)) for i, p in enumerate(self.patterns))

    def extra(self, kind: int, agent_index: int) -> Any:
        """The first value of *kind* that applies to the group's agent *agent_index*, or None."""
        for extra in self.extras:
            if extra.kind == kind and agent_index < extra.agents_before:
                return extra.value
        return None

    def last_extra(self, kind: int) -> Any:
        """The record's last value of *kind* (rerp: a later line overwrites an earlier one)."""
        for extra in reversed(self.extras):
            if extra.kind == kind:
                return extra.value
        return None

    def extras_of(self, kinds: tuple[int, ...], agent_index: int | None = None) -> list[Extra]:
        """The values of *kinds*, in file order, for the agent *agent_index* (None: any)."""
        return [
            extra
            for extra in self.extras
            if extra.kind in kinds and (agent_index is None or agent_index < extra.agents_before)
        ]


# A StoredGroup built in C: NamedTuple's own __new__ is a Python function, and one runs per group
# (parse: 761M -> 750M instructions on 2,000 files of the corpus).
_new_group = partial(tuple.__new__, StoredGroup)


def line_fields(numbers: Sequence[int]) -> tuple[int, array[int] | None]:
    """``(first_rule_line, scattered_lines)`` of rules on the lines *numbers* (never decreasing)."""
    if not numbers:
        return 0, None
    # (Two rules may share a line: google's /index.html Allow adds one for the directory.)
    if numbers[-1] - numbers[0] == len(numbers) - 1 and len(set(numbers)) == len(numbers):
        return numbers[0], None
    return numbers[0], array("I", numbers)


# Disallow prefixes up to this many are tried one by one on each check; a rule set with more gets
# a bisection gate in matching (``_match``).
PREFIX_GATE_MIN = 256


def plain_prefixes(kinds: bytes | None, text: str, patterns: Sequence[str]) -> bool:
    """True if the rules are all non-empty Disallow prefixes without ``*`` or ``$``, which are
    matched as they are: no more than PREFIX_GATE_MIN of them, as more are bisected once they
    have served enough checks. *text* holds every pattern (more text only makes the answer
    False)."""
    return (
        kinds is None
        and len(patterns) <= PREFIX_GATE_MIN
        and "*" not in text
        and "$" not in text
        and "" not in patterns
    )


def _extension(
    kind: int,
    value: str,
    line: int,
    warnings: list[ParseWarning],
    read: dict[int, dict[str, tuple[Any, tuple[tuple[str, str], ...]]]],
) -> Any:
    """A per-group value as its directive reads it, or None (with a warning) if invalid; what
    else its directive finds to say about it becomes warnings too. *read*: the values read so
    far in the file, with their notes (a file may repeat one line thousands of times, and a
    Content-Usage value costs a Structured Fields parse)."""
    of_kind = read.get(kind)
    if of_kind is None:
        of_kind = read[kind] = {}
    known = of_kind.get(value)
    if known is None:
        read_value = DIRECTIVES[kind].read_value
        known = of_kind[value] = read_value(value) if read_value is not None else (value, ())
    parsed, notes = known
    if parsed is None or notes:  # (the text only for a warning: most values have none)
        text = f"{DIRECTIVES[kind].name}: {value}"
        if parsed is None:
            warnings.append(ParseWarning(line, text, "invalid value, ignored", "invalid-value"))
        else:
            warnings += (ParseWarning(line, text, note, code) for code, note in notes)
    return parsed


class FileWide:
    """The values of the directives that belong to the whole file (scope FILE), in file order."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[int, list[str]] = {}

    def add(self, kind: int, value: str, line: int, warnings: list[ParseWarning]) -> None:
        self.values.setdefault(kind, []).append(value)
        check = DIRECTIVES[kind].read_value
        if check is not None:  # (License: a value that is no absolute URL is kept, with a note)
            text = f"{DIRECTIVES[kind].name}: {value}"
            warnings += (ParseWarning(line, text, note, code) for code, note in check(value)[1])

    def stored(self) -> dict[int, tuple[str, ...]]:
        """Each FILE directive's values, as RobotsTxt keeps them."""
        return {kind: tuple(values) for kind, values in self.values.items()}


# Each line's kind as the letter of its directive's scope (AGENT "U", RULE "R", GROUP "E",
# FILE "F"; "." for any other line), so that build_rfc finds the groups with bytes.find, in C,
# rather than with a Python loop over the lines.
def _scope_letter(kind: int) -> int:
    if kind == L.STD_DISALLOW:
        return ord(RULE)
    return ord(DIRECTIVES[kind].scope) if kind < len(DIRECTIVES) else ord(".")


_COARSE = bytes(map(_scope_letter, range(256)))
# The same letters, but "R" for the per-group lines that are also rules (Content-Usage): where
# the groups start and end in a file that has such lines.
_BOUNDS = bytes(
    ord(RULE) if kind < len(DIRECTIVES) and DIRECTIVES[kind].is_rfc_rule else letter
    for kind, letter in enumerate(_COARSE)
)
_RULE_LIKE_KINDS = bytes(kind for kind, d in enumerate(DIRECTIVES) if d.is_rfc_rule)
_IS_RULE = bytes(1 if _COARSE[kind] == ord(RULE) else 0 for kind in range(256))
_ALLOW_BIT = bytes(1 if kind == L.ALLOW else 0 for kind in range(256))
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
    # (find, never ``in``: ``b"F" in`` a bytearray first tries b"F" as an int, and raising and
    # clearing that TypeError cost 1 % of a parse.)
    index = coarse.find(b"F")
    while index != -1:
        file_wide.add(kinds[index], _value_of(read, bare_values, index), index + 1, warnings)
        index = coarse.find(b"F", index + 1)
    start = coarse.find(b"U")
    if start:  # lines before the first User-agent (or no User-agent at all)
        _warn_outside_groups(kinds, read, bare_values, coarse, start, warnings)
    groups: list[StoredGroup] = []
    values_read: dict[int, dict[str, tuple[Any, tuple[tuple[str, str], ...]]]] = {}  # (_extension)
    size = len(coarse)
    has_extras = coarse.find(b"E") != -1
    bounds = coarse
    if has_extras and any(kind in kinds for kind in _RULE_LIKE_KINDS):
        bounds = kinds.translate(_BOUNDS)
    while start != -1:
        first_rule = bounds.find(b"R", start)
        if first_rule == -1:
            first_rule = end = size
            following = -1
        else:
            following = bounds.find(b"U", first_rule)
            end = size if following == -1 else following
        groups.append(
            _rfc_group(
                kinds,
                read,
                bare_values,
                coarse,
                start,
                first_rule,
                end,
                has_extras,
                warnings,
                values_read,
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
    for letter, message, code in (
        (b"R", "rule before any User-agent, ignored", "rule-outside-group"),
        (b"E", None, "outside-group"),
    ):
        index = coarse.find(letter, 0, before)
        while index != -1:
            text_of = message or f"{L.KIND_NAMES[kinds[index]]} outside a group, ignored"
            value = _value_of(read, bare_values, index)
            warnings.append(ParseWarning(index + 1, value, text_of, code))
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
    values_read: dict[int, dict[str, tuple[Any, tuple[tuple[str, str], ...]]]],
) -> StoredGroup:
    """One group: User-agent lines from *start* up to *first_rule*, its lines up to *end*
    (*has_extras*: whether the file has any per-group value, such as a Crawl-delay; *values_read*:
    the file's per-group values read so far, for _extension). The first
    rule may be a per-group line that is also a rule (Content-Usage)."""
    if first_rule == start + 1:
        # Keyed by the whole line, whose value is read the same way each time.
        line = read[start]
        agents: tuple[str, ...] | None = _ONE_AGENT.recent.get(line) or _ONE_AGENT.get(line)
        if agents is None:
            value = _value_of(read, bare_values, start)
            agents = STAR if value == "*" else (value,)
            _ONE_AGENT.put(line, agents, 2 * str_bytes(line) + 64)
    else:
        names = []
        index = start
        while index != -1:
            names.append(_value_of(read, bare_values, index))
            index = coarse.find(b"U", index + 1, first_rule)
        agents = tuple(SHARED_STRINGS.share_all(names, sum(map(len, names))))
    extras: tuple[Extra, ...] = ()
    index = coarse.find(b"E", start, end) if has_extras else -1
    if index != -1:
        found = []
        agents_before, counted_to = 0, start  # the User-agent lines before *index*
        while index != -1:
            kind = kinds[index]
            value = _value_of(read, bare_values, index)
            parsed = _extension(kind, value, index + 1, warnings, values_read)
            if parsed is not None:
                # Counted on from the last extension, not from the group's start: a group of
                # many lines would make that quadratic.
                agents_before += coarse.count(b"U", counted_to, index)
                counted_to = index
                found.append(Extra(agents_before, kind, parsed, index + 1))
            index = coarse.find(b"E", index + 1, end)
        extras = tuple(found)
    last = coarse.rfind(b"R", first_rule, end) + 1
    if not last:  # no Allow or Disallow
        return _new_group((agents, (), None, 0, None, extras, start + 1, True))
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
    known = _GROUP_RULES.recent.get(joined) or _GROUP_RULES.get(joined)
    if known is not None:
        patterns, allow_bits, plain = known
    else:
        patterns, allow_bits, plain, numbers = _rfc_rules_of(
            rule_lines, rule_kinds, joined, bare_values, numbers, first_rule, last
        )
    first_line, scattered = (first_rule + 1, None) if numbers is None else line_fields(numbers)
    return _new_group(
        (agents, patterns, allow_bits, first_line, scattered, extras, start + 1, plain)
    )


class _ReadRules(NamedTuple):
    """A group's rules as read from its rule lines (shared by the groups with the same lines)."""

    patterns: tuple[str, ...]
    allow_bits: bytes | None
    plain: bool


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
        # each rule passes through slice and strip without a list in between.
        if "#" in joined:
            raw = map(_BEFORE_HASH, map(_PARTITION, raw, repeat("#")))
        values = map(_strip, raw, repeat(_VALUE_SPACE))
    patterns = list(values)
    if not joined.isascii() or ("%" in joined and has_lower_escape(joined)):
        _escape_some(patterns)
    # Many files write the same rules (/wp-admin/, /cgi-bin/...): they share one string each.
    patterns = SHARED_STRINGS.share_all(patterns, sum(map(len, patterns)))
    allow_bits: bytes | None = None
    remember = True
    if L.ALLOW in rule_kinds:
        allow_bits = bytes(rule_kinds.translate(_ALLOW_BIT))
        if "/index.htm" in joined:
            patterns, allow_bits, numbers = _with_index_directories(
                patterns, allow_bits, numbers or list(range(first_rule + 1, last + 1))
            )
            remember = False  # rules were added for the directories: the line numbers changed
    # Whether the rules are plain prefixes, seen now while the values are at hand.
    found = _ReadRules(tuple(patterns), allow_bits, plain_prefixes(allow_bits, joined, patterns))
    if remember:
        _GROUP_RULES.put(joined, found, _read_rules_bytes(joined, found))
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


def _read_rules_bytes(joined: str, rules: _ReadRules) -> int:
    # The key, then the value: its tuple, one str per pattern (their characters are fewer than
    # the key's) and the allow bits.
    count = len(rules.patterns)
    return 2 * str_bytes(joined) + 64 + 58 * count + (33 + count if rules.allow_bits else 0)


#: Rule patterns, their pieces and agent names, shared between files.
SHARED_STRINGS = SharedStrings(0.35)
# A group's rule lines, joined with newlines -> its rules, for recent groups: many sites serve
# the same lines (a CMS's defaults), and then their parsed objects share the rules' strings.
_GROUP_RULES: SharedTable[str, _ReadRules] = SharedTable(0.15)
# The agents of one-agent groups by their User-agent line: most files name the same few crawlers.
_ONE_AGENT: SharedTable[str, tuple[str, ...]] = SharedTable(0.1)


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
                out_patterns.append(pattern[: slash + 1] + "$")
                out_bits.append(1)
                out_numbers.append(number)
    return out_patterns, bytes(out_bits), out_numbers


class _Record:
    """A MK1996/GYM2008 record being read; ``stored`` freezes it."""

    __slots__ = ("agents", "patterns", "allow_bits", "lines", "extras", "first_line")

    def __init__(self, line: int) -> None:
        self.agents: list[str] = []
        self.patterns: list[str] = []
        self.allow_bits = bytearray()  # 1 for an Allow, 0 for a Disallow, per rule
        self.lines: list[int] = []
        self.extras: list[Extra] = []
        self.first_line = line

    def stored(self) -> StoredGroup:
        return StoredGroup(
            STAR if self.agents == ["*"] else tuple(self.agents),
            tuple(self.patterns),
            bytes(self.allow_bits) if 1 in self.allow_bits else None,
            *line_fields(self.lines),
            tuple(self.extras),
            self.first_line,
            False,
        )


def build_legacy(
    rows: list[L.LegacyRow], warnings: list[ParseWarning], junk: list[int]
) -> tuple[tuple[StoredGroup, ...], FileWide]:
    """rerp 1.7.1's record logic: blank lines end records, ``*`` records go last."""
    records: list[_Record] = []
    current: _Record | None = None
    previous_was_agent = False
    file_wide = FileWide()

    def close() -> None:
        # rerp keeps records with names and rules; we also keep those with only a Crawl-delay
        # (or other per-group value), so that get_crawl_delay() sees them.
        if current is not None and current.agents and (current.patterns or current.extras):
            records.append(current)

    values_read: dict[int, dict[str, tuple[Any, tuple[tuple[str, str], ...]]]] = {}
    line = 0
    for key, value, other in rows:
        line += 1
        if not key:
            if not other:  # a blank line ends a record
                close()
                current = None
                previous_was_agent = False
            elif other != "#":
                junk.append(line)
            continue
        kind = L.legacy_kind(key)
        directive = DIRECTIVES[kind]
        if kind in USAGE_KINDS:
            # A usage rule's path ends at a space or a tab: keep the tab as a blank.
            value = value.replace("\t", " ")
        value = L.clean_legacy_value(value)
        if directive.scope == AGENT:
            if previous_was_agent:
                if current is not None and value:
                    current.agents.append(value)
            else:
                close()
                current = _Record(line)
                if value:
                    current.agents.append(value)
            previous_was_agent = True
            continue
        if directive.rerp_reads:
            previous_was_agent = False
        if directive.scope == RULE:
            if current is None:
                message = "rule outside a record, ignored"
                warnings.append(ParseWarning(line, value, message, "rule-outside-group"))
                continue
            current.patterns.append(unquote_path(value))
            current.lines.append(line)
            current.allow_bits.append(1 if kind == L.ALLOW else 0)
        elif directive.scope == FILE:
            file_wide.add(kind, value, line, warnings)
        elif current is None:  # GROUP, outside a record
            text = f"{directive.name}: {value}"
            message = f"{directive.name} outside a record, ignored"
            warnings.append(ParseWarning(line, text, message, "outside-group"))
        else:  # GROUP
            parsed = _extension(kind, value, line, warnings, values_read)
            if parsed is not None:
                current.extras.append(Extra(len(current.agents), kind, parsed, line))
    close()
    ordered = [r for r in records if "*" not in r.agents] + [r for r in records if "*" in r.agents]
    return tuple(record.stored() for record in ordered), file_wide
