"""Matching: the rules that apply to an agent compiled for checks (RFC 9309: the longest match
wins), and rerp's first match (MK1996/GYM2008)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice, repeat
from sys import intern
from typing import Any

from ._constants import SHARED_ENTRY_MAX, SHARED_RULES_CHARS
from ._groups import (
    KINDS,
    PATTERNS,
    PLAIN,
    PREFIX_GATE_MIN,
    StoredGroup,
    as_groups,
    plain_prefixes,
)
from ._patterns import Glob, glob_match

ROBOTS_PATH = "/robots.txt"


def clear_tables() -> None:
    """Empty the tables of compiled rules and split wildcard rules (``clear_shared_tables``)."""
    _COMPILED.clear()
    _GLOBS.clear()


def gym2008_globs(group: StoredGroup) -> dict[int, Glob] | None:
    """The record's wildcard rules by index (GYM2008), or None if it has none."""
    found = {i: Glob(p) for i, p in enumerate(group[PATTERNS]) if "*" in p or p[-1:] == "$"}
    return found or None


class Rules:
    """The rules that apply to one agent, ready to match (RFC 9309).

    Built on the agent's first query from its group, or its groups merged as RFC 9309 section
    2.2.1 asks: plain prefixes per verdict, checked with one C-level ``str.startswith(tuple)``
    (sorted for bisection when an Allow must be weighed against them), and wildcard rules as
    split globs (``_Wild``). More than PREFIX_GATE_MIN Disallow prefixes also get a ``_Wild``,
    which bisects them once they have served _GATE_AFTER_CHECKS checks.
    """

    __slots__ = ("groups", "disallow", "allow", "wild")

    def __init__(self, entry: Any) -> None:
        self.groups = entry  # the index entry: one group, or a tuple of groups
        groups = as_groups(entry)
        if len(groups) == 1:
            group = groups[0]
            patterns = group[PATTERNS]
            if group[PLAIN]:
                # File order serves: without an Allow to compare with, only whether some
                # prefix matches counts, not which one is longest.
                self.disallow: tuple[str, ...] = patterns
                self.allow: tuple[str, ...] = ()
                self.wild: _Wild | None = None
                return
            kinds = group[KINDS]
        else:
            patterns = tuple(p for g in groups for p in g[PATTERNS])
            allow_bits = b"".join(g[KINDS] or bytes(len(g[PATTERNS])) for g in groups)
            kinds = allow_bits if 1 in allow_bits else None
        # Many sites serve the same rules (a CMS's defaults): their matching form is shared.
        shareable = len(patterns) <= SHARED_ENTRY_MAX
        if shareable:
            found = _COMPILED.get((patterns, kinds))
            if found is not None:
                self.disallow, self.allow, self.wild = found
                return
        joined = "\n".join(patterns)
        self._compile(patterns, kinds, joined)
        if shareable and len(joined) <= SHARED_RULES_CHARS:
            if len(_COMPILED) >= _COMPILED_MEMO_SIZE:
                _COMPILED.clear()
            _COMPILED[(patterns, kinds)] = (self.disallow, self.allow, self.wild)

    def _compile(self, patterns: tuple[str, ...], kinds: bytes | None, joined: str) -> None:
        """*joined*: the patterns joined with newlines."""
        self.allow = ()
        self.wild = None
        if plain_prefixes(kinds, joined, patterns):
            self.disallow = patterns  # plain prefixes of merged groups
            return
        no_allow = kinds is None
        disallow_patterns: Sequence[str]
        allow_patterns: list[str] = []
        wild_disallow: list[str] = []
        wild_allow: list[str] = []
        may_be_wild = "*" in joined or "$" in joined
        if no_allow and not may_be_wild:
            # Disallow prefixes only (more than plain_prefixes takes, or an empty one).
            disallow_patterns = tuple(filter(None, patterns)) if "" in patterns else patterns
        else:
            prefixes: list[str] = []
            disallow_patterns = prefixes
            # One loop: most rule sets are small, too small to pay for C-level passes.
            for pattern, is_allow in zip(patterns, kinds or repeat(0, len(patterns)), strict=True):
                if not pattern:
                    continue  # an empty rule matches with priority 0: it never decides
                if may_be_wild and ("*" in pattern or pattern[-1] == "$"):
                    if is_allow:
                        wild_allow.append(pattern)
                    elif no_allow and (prefix := _as_prefix(pattern)) is not None:
                        prefixes.append(prefix)
                    else:
                        wild_disallow.append(pattern)
                elif is_allow:
                    allow_patterns.append(pattern)
                else:
                    prefixes.append(pattern)
        if wild_disallow or wild_allow:
            self.wild = _Wild(wild_disallow, wild_allow, no_allow)
        if no_allow:
            # No Allow to weigh a Disallow against: whether one matches is all that counts.
            self.disallow = tuple(disallow_patterns)
        else:
            # Sorted, so that the longest prefix of a path is found by bisection (longest).
            self.disallow = tuple(sorted(disallow_patterns))
            self.allow = tuple(sorted(allow_patterns))
        if len(disallow_patterns) > PREFIX_GATE_MIN:
            # Too many prefixes to try one by one on each check, if there are many checks:
            # rfc_allows counts them and bisects a sorted copy after _GATE_AFTER_CHECKS.
            if self.wild is None:
                self.wild = _Wild([], [], no_allow)
            self.wild.checks_before_gate = _GATE_AFTER_CHECKS


def _prefix_free(prefixes: list[str]) -> tuple[str, ...]:
    """The sorted *prefixes* without those that start with another one kept.

    In such a list, a path starts with one of them only if it starts with the last one that
    sorts before it: a prefix of the path sorts before it, and anything sorting between the
    two starts with that prefix.
    """
    kept = [prefixes[0]]
    for prefix in islice(prefixes, 1, None):
        if not prefix.startswith(kept[-1]):
            kept.append(prefix)
    return tuple(kept)


def _as_prefix(pattern: str) -> str | None:
    """The prefix, if *pattern* is one followed by ``*`` (``/private*``, ``/a**$``), else None.

    As a Disallow with no Allow to weigh it against, such a rule matches just what its prefix
    does: only whether a Disallow matches counts, not how long the match is."""
    core = pattern[:-1] if pattern[-1] == "$" and pattern[-2:-1] == "*" else pattern
    core = core.rstrip("*")
    if "*" in core or core[-1:] == "$" or core == pattern:
        return None
    return intern(core)


# (patterns, kinds) -> (disallow, allow, wild) of recently compiled rules.
_COMPILED: dict[tuple[tuple[str, ...], bytes | None], tuple[Any, Any, Any]] = {}
_COMPILED_MEMO_SIZE = 8192
# Above PREFIX_GATE_MIN Disallow prefixes, checks bisect a sorted copy (``_Wild.gate``) instead
# of trying each prefix, once the rules have served _GATE_AFTER_CHECKS checks: a prefix costs
# about 8 ns a check to try and about 250 ns once to sort into the copy, so the copy pays for
# itself after some 30 checks, and a crawl that asks a site a handful of times never builds it.
_GATE_AFTER_CHECKS = 32

_CompiledGlob = tuple[int, str, str, "tuple[str, ...] | None", "str | None", bool]
_GLOBS: dict[str, _CompiledGlob] = {}
_GLOB_MEMO_SIZE = 32768


def _compile_glob(pattern: str) -> _CompiledGlob:
    """Split a wildcard pattern for matching: (priority, probe, head, middle, tail, anchored).

    *probe* is the longest literal a matching path must contain; *tail* None means no ``*``.
    The splits of recent patterns are shared by every file that has the same rule
    (``_compile_globs`` looks there first).
    """
    # split_glob's reading, inlined: this runs for every wildcard rule of a rule set compiled.
    anchored = pattern[-1] == "$"
    parts = (pattern[:-1] if anchored else pattern).split("*")
    head = intern(parts[0])
    if len(parts) == 1:  # no '*', only a final '$': the whole path must equal head
        found = (len(pattern), "", head, None, None, True)
    else:
        tail = intern(parts[-1])
        probe = tail
        middle = None
        if len(parts) > 2:  # (most rules have one '*')
            middle = tuple(map(intern, filter(None, parts[1:-1]))) or None
            if middle:
                probe = max(middle, key=len)
                if len(tail) > len(probe):
                    probe = tail
        # ``...*$`` matches what ``...*`` matches.
        found = (len(pattern), probe, head, middle, tail, anchored and bool(tail))
    if len(pattern) <= SHARED_ENTRY_MAX:
        if len(_GLOBS) >= _GLOB_MEMO_SIZE:
            _GLOBS.clear()
        _GLOBS[pattern] = found
    return found


class _Wild:
    """A group's wildcard rules, split (``_compile_glob``) and sorted by how they can be ruled
    out quickly (longest first when an Allow may weigh against them), and the bisection gate of
    many plain Disallow prefixes.

    Disallow globs whose literal head is longer than ``/`` are only tried when the path starts
    with one of those heads (one C-level ``str.startswith(tuple)``); the others only when the
    path ends with one of their anchored tails or contains one of their literals.
    """

    __slots__ = (
        "long_heads",
        "headed",
        "others",
        "tails",
        "probes",
        "allow",
        "no_allow",
        "gate",
        "checks_before_gate",
    )

    def __init__(self, disallow: list[str], allow: list[str], no_allow: bool) -> None:
        # Longest first, so that the first match is the longest, when an Allow weighs against it;
        # without one, any match decides.
        ordered = disallow if no_allow else sorted(disallow, key=len, reverse=True)
        headed: list[_CompiledGlob] = []
        long_heads: set[str] = set()
        others: list[_CompiledGlob] = []
        tails: set[str] = set()
        probes: set[str] = set()
        # One loop: most groups have a few wildcard rules, too few to pay for C-level passes.
        for glob in _compile_globs(ordered):
            _, probe, head, _, tail, anchored = glob
            if len(head) > 1:
                headed.append(glob)
                long_heads.add(head)
            else:
                # A path that this rule matches ends with its anchored tail (the whole pattern
                # if it has no '*'), or contains its longest literal after the head.
                others.append(glob)
                if tail is None:
                    tails.add(head)
                elif anchored:
                    tails.add(tail)
                else:
                    probes.add(probe)
        self.headed = tuple(headed)
        self.long_heads = tuple(long_heads)
        self.others = tuple(others)
        self.tails = tuple(tails)
        self.probes: tuple[str, ...] | None = None if "" in probes else tuple(probes)
        self.allow = _compile_globs(sorted(allow, key=len, reverse=True))
        self.no_allow = no_allow  # no Allow rule at all: any Disallow that matches decides
        # Many plain Disallow prefixes: checks left until they are bisected, then the sorted
        # prefixes without redundant ones (_prefix_free).
        self.checks_before_gate = 0
        self.gate: tuple[str, ...] | None = None

    def count_toward_gate(self, disallow: tuple[str, ...]) -> None:
        """Count a check of the plain *disallow* prefixes; the last before the gate builds it."""
        self.checks_before_gate -= 1
        if self.checks_before_gate <= 0:  # (below 0 only if threads raced: build it all the same)
            self.checks_before_gate = 0
            self.gate = _prefix_free(sorted(disallow))


def _compile_globs(patterns: Sequence[str]) -> tuple[_CompiledGlob, ...]:
    globs = []
    known = _GLOBS.get
    for pattern in patterns:
        glob = known(pattern)
        globs.append(glob if glob is not None else _compile_glob(pattern))
    return tuple(globs)


def longest(prefixes: tuple[str, ...], path: str) -> int:
    """The length of the longest of the sorted *prefixes* that *path* starts with, or 0.

    The prefixes of a path sort in order of length and none after the path itself, so the
    longest one is the first prefix met walking back from where the path would sort.
    """
    index = bisect_right(prefixes, path)
    while index:
        index -= 1
        prefix = prefixes[index]
        if path.startswith(prefix):
            return len(prefix)
    return 0


def _best_glob(globs: tuple[_CompiledGlob, ...], path: str, floor: int) -> int:
    """The priority of the first (longest) glob in *globs* above *floor* that matches, or 0."""
    for priority, probe, head, middle, tail, anchored in globs:
        if priority <= floor:
            return 0
        # The test that rejects most paths first: the anchored tail, or one scan for the
        # literal the path must contain; the head after.
        if anchored:
            if tail:
                if (
                    not path.endswith(tail)
                    or len(path) - len(tail) < len(head)
                    or not path.startswith(head)
                ):
                    continue
                if middle is not None and not glob_match(path, head, middle, tail, True):
                    continue
            elif path != head:  # no '*': the path must be the pattern itself
                continue
        elif probe not in path or not path.startswith(head):
            continue
        elif middle is None:
            if tail and path.find(tail, len(head)) < 0:
                continue
        elif not glob_match(path, head, middle, tail, False):
            continue
        return priority
    return 0


def rfc_allows(rules: Rules, path: str) -> bool:
    """RFC 9309 precedence with wildcard rules: the longest match wins, Allow wins a tie;
    /robots.txt is always allowed."""
    disallow = rules.disallow
    wild: _Wild = rules.wild  # type: ignore[assignment]
    gate = wild.gate
    if gate is None:
        some_prefix = path.startswith(disallow)
        if wild.checks_before_gate:
            wild.count_toward_gate(disallow)
    else:
        index = bisect_right(gate, path)
        some_prefix = index != 0 and path.startswith(gate[index - 1])
    if wild.no_allow:  # any Disallow that matches decides: the cheapest tests first
        if (
            some_prefix
            or (path.startswith(wild.long_heads) and _best_glob(wild.headed, path, 0))
            or (_others_may_match(wild, path) and _best_glob(wild.others, path, 0))
        ):
            return path == ROBOTS_PATH
        return True
    worst = longest(disallow, path) if some_prefix else 0
    if path.startswith(wild.long_heads):
        worst = max(worst, _best_glob(wild.headed, path, worst))
    if _others_may_match(wild, path):
        worst = max(worst, _best_glob(wild.others, path, worst))
    if not worst:
        return True
    allow = rules.allow
    if allow and path.startswith(allow) and longest(allow, path) >= worst:
        return True
    if _best_glob(wild.allow, path, worst - 1):
        return True
    return path == ROBOTS_PATH


def _others_may_match(wild: _Wild, path: str) -> bool:
    """False if no wildcard rule with a short head can match *path*."""
    if not wild.others:
        return False
    probes = wild.probes
    if probes is None or path.endswith(wild.tails):
        return True
    for probe in probes:  # a few: a loop costs less than building a C-level pass
        if probe in path:
            return True
    return False


def legacy_first_match(
    group: StoredGroup, globs: dict[int, Glob] | None, path: str
) -> tuple[bool, int | None]:
    """rerp: within the record, the first rule in file order that matches decides."""
    kinds = group[KINDS]
    for i, pattern in enumerate(group[PATTERNS]):
        glob = globs.get(i) if globs else None
        if glob is not None:
            if glob.match(path):
                return kinds is not None and kinds[i] == 1, i
        elif path.startswith(pattern):
            is_allow = kinds is not None and kinds[i] == 1
            # rerp: an empty Disallow allows everything, an empty Allow forbids everything.
            return (is_allow if pattern else not is_allow), i
    return True, None
