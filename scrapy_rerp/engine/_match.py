"""Matching: the rules that apply to an agent compiled for checks (RFC 9309: the longest match
wins), and rerp's first match (MK1996/GYM2008)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import islice, repeat
from operator import itemgetter
from typing import Any

from ._groups import PREFIX_GATE_MIN, StoredGroup, plain_prefixes
from ._patterns import Glob, glob_match, split_glob
from ._shared import SharedTable, str_bytes

ROBOTS_PATH = "/robots.txt"


def gym2008_globs(group: StoredGroup) -> dict[int, Glob] | None:
    """The record's wildcard rules by index (GYM2008), or None if it has none."""
    found = {i: Glob(p) for i, p in enumerate(group.patterns) if "*" in p or p[-1:] == "$"}
    return found or None


class Rules:
    """The rules that apply to one agent, ready to match (RFC 9309).

    Built on the agent's first query from its group, or its groups merged as RFC 9309 section
    2.2.1 asks: plain prefixes per verdict, checked with one C-level ``str.startswith(tuple)``
    (sorted for bisection when an Allow must be weighed against them), and wildcard rules as
    split globs (``wild``). More than PREFIX_GATE_MIN Disallow prefixes are bisected once they
    have served _GATE_AFTER_CHECKS checks (``gate``).
    """

    __slots__ = ("disallow", "allow", "wild", "checks_before_gate", "gate", "prefixes_only")

    def __init__(
        self,
        disallow: tuple[str, ...],
        allow: tuple[str, ...] = (),
        wild: _Wild | None = None,
    ) -> None:
        self.disallow = disallow
        self.allow = allow
        self.wild = wild
        # Many plain Disallow prefixes: checks left until they are bisected, then the sorted
        # prefixes without redundant ones (_prefix_free).
        self.checks_before_gate = _GATE_AFTER_CHECKS if len(disallow) > PREFIX_GATE_MIN else 0
        self.gate: tuple[str, ...] | None = None
        # Whether a check is the prefix tests alone (RobotsTxt.allowed), not rfc_allows.
        self.prefixes_only = wild is None and not self.checks_before_gate

    def count_toward_gate(self) -> None:
        """Count a check of the plain Disallow prefixes; the last before the gate builds it."""
        self.checks_before_gate -= 1
        if self.checks_before_gate <= 0:  # (below 0 only if threads raced: build it all the same)
            self.checks_before_gate = 0
            self.gate = _prefix_free(sorted(self.disallow))


def compile_rules(groups: tuple[StoredGroup, ...]) -> Rules:
    """The rules of *groups* (an agent's groups, merged), ready to match."""
    if len(groups) == 1:
        group = groups[0]
        patterns = group.patterns
        if group.plain:
            # File order serves: without an Allow to compare with, only whether some
            # prefix matches counts, not which one is longest.
            return Rules(patterns)
        allow_bits = group.allow_bits
    else:
        patterns = tuple(p for g in groups for p in g.patterns)
        merged_bits = b"".join(g.allow_bits or bytes(len(g.patterns)) for g in groups)
        allow_bits = merged_bits if 1 in merged_bits else None
    # Many sites serve the same rules (a CMS's defaults): their matching form is shared.
    key = (patterns, allow_bits)
    rules = _COMPILED.recent.get(key) or _COMPILED.get(key)
    if rules is None:
        joined = "\n".join(patterns)
        rules = _compile(patterns, allow_bits, joined)
        _COMPILED.put(key, rules, _rules_bytes(joined, len(patterns), rules))
    return rules


def _compile(patterns: tuple[str, ...], allow_bits: bytes | None, joined: str) -> Rules:
    """*joined*: the patterns joined with newlines."""
    if plain_prefixes(allow_bits, joined, patterns):
        return Rules(patterns)  # plain prefixes of merged groups
    no_allow = allow_bits is None
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
        for pattern, is_allow in zip(patterns, allow_bits or repeat(0, len(patterns)), strict=True):
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
    wild = _Wild(wild_disallow, wild_allow, no_allow) if wild_disallow or wild_allow else None
    if no_allow:
        # No Allow to weigh a Disallow against: whether one matches is all that counts.
        return Rules(tuple(disallow_patterns), (), wild)
    # Sorted, so that the longest prefix of a path is found by bisection (longest).
    return Rules(tuple(sorted(disallow_patterns)), tuple(sorted(allow_patterns)), wild)


def _rules_bytes(joined: str, count: int, rules: Rules) -> int:
    # *count* patterns, *joined* with newlines. The key's patterns are the group's own (shared
    # with it when one group is compiled); the value: its tuples, and per wildcard rule its
    # split (a 6-tuple and two literals).
    wild_rules = len(rules.wild.headed) + len(rules.wild.others) if rules.wild else 0
    return 400 + 16 * count + 200 * wild_rules + len(joined)


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
    return core


# (patterns, allow bits) -> their compiled rules, for recently compiled rule sets.
_COMPILED: SharedTable[tuple[tuple[str, ...], bytes | None], Rules] = SharedTable(0.15)
# Above PREFIX_GATE_MIN Disallow prefixes, checks bisect a sorted copy (``Rules.gate``) instead
# of trying each prefix, once the rules have served _GATE_AFTER_CHECKS checks: a prefix costs
# about 8 ns a check to try and about 250 ns once to sort into the copy, so the copy pays for
# itself after some 30 checks, and a crawl that asks a site a handful of times never builds it.
_GATE_AFTER_CHECKS = 32

# A wildcard rule split for matching: (priority, probe, head, middle, tail, anchored), a plain
# tuple because _best_glob unpacks it in its loop.
_CompiledGlob = tuple[int, str, str, "tuple[str, ...] | None", "str | None", bool]


def _compile_glob(pattern: str) -> _CompiledGlob:
    """A wildcard pattern split for matching (``_split_glob``), shared with the files that
    have the same rule: the same few wildcard rules recur in many rule sets (a CMS's
    ``/*?s=``), and sharing their splits keeps 6 MiB of the corpus's memory."""
    found = _GLOBS.recent.get(pattern) or _GLOBS.get(pattern)
    if found is None:
        found = _split_glob(pattern)
        _GLOBS.put(pattern, found, 3 * str_bytes(pattern) + 104)
    return found


def _split_glob(pattern: str) -> _CompiledGlob:
    """Split a wildcard pattern for matching: (priority, probe, head, middle, tail, anchored).

    *probe* is the longest literal a matching path must contain; *tail* None means no ``*``.
    """
    # split_glob's reading, inlined: this runs for every wildcard rule not shared.
    anchored = pattern[-1] == "$"
    parts = (pattern[:-1] if anchored else pattern).split("*")
    head = parts[0]
    if len(parts) == 1:  # no '*', only a final '$': the whole path must equal head
        return (len(pattern), "", head, None, None, True)
    tail = parts[-1]
    probe = tail
    middle = None
    if len(parts) > 2:  # (most rules have one '*')
        middle = tuple(filter(None, parts[1:-1])) or None
        if middle:
            probe = max(middle, key=len)
            if len(tail) > len(probe):
                probe = tail
    # ``...*$`` matches what ``...*`` matches.
    return (len(pattern), probe, head, middle, tail, anchored and bool(tail))


# A wildcard pattern -> its split, for recent patterns. (A pattern, a 6-tuple, two literals.)
_GLOBS: SharedTable[str, _CompiledGlob] = SharedTable(0.1)


class _Wild:
    """A group's wildcard rules, split (``_compile_glob``) and sorted by how they can be ruled
    out quickly (longest first when an Allow may weigh against them).

    Disallow globs whose literal head is longer than ``/`` are only tried when the path starts
    with one of those heads (one C-level ``str.startswith(tuple)``); the others only when the
    path ends with one of their anchored tails or contains one of their literals.
    """

    __slots__ = ("long_heads", "headed", "others", "tails", "probes", "allow", "no_allow")

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
        for glob in map(_compile_glob, ordered):
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
        self.allow = tuple(map(_compile_glob, sorted(allow, key=len, reverse=True)))
        self.no_allow = no_allow  # no Allow rule at all: any Disallow that matches decides


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
    """RFC 9309 precedence with wildcard rules or a bisection gate: the longest match wins,
    Allow wins a tie; /robots.txt is always allowed."""
    disallow = rules.disallow
    gate = rules.gate
    if gate is None:
        some_prefix = path.startswith(disallow)
        if rules.checks_before_gate:
            rules.count_toward_gate()
    else:
        index = bisect_right(gate, path)
        some_prefix = index != 0 and path.startswith(gate[index - 1])
    wild = rules.wild
    if wild is None:  # many prefixes, no wildcard rule
        if not some_prefix:
            return True
        allow = rules.allow
        if allow and path.startswith(allow) and longest(allow, path) >= longest(disallow, path):
            return True
        return path == ROBOTS_PATH
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
    kinds = group.allow_bits
    for i, pattern in enumerate(group.patterns):
        glob = globs.get(i) if globs else None
        if glob is not None:
            if glob.match(path):
                return kinds is not None and kinds[i] == 1, i
        elif path.startswith(pattern):
            is_allow = kinds is not None and kinds[i] == 1
            # rerp: an empty Disallow allows everything, an empty Allow forbids everything.
            return (is_allow if pattern else not is_allow), i
    return True, None


class RuleTable:
    """Rules ready for ``decide()``, which names the rule that decides: each rule filed under its
    literal head (a plain pattern whole, a wildcard pattern up to its first ``*``), so that the
    rules a path may match are found by the prefixes of the path of the head lengths that occur
    (at most one look-up per character of the path) however many rules there are; of the rules
    filed under one head, the best-ranked first."""

    __slots__ = ("by_head", "lengths")

    def __init__(self, rules: Iterable[tuple[Any, str, bool, Any]]) -> None:
        """*rules*: ``(rank, pattern, wild, payload)``, ranks all different; *wild*: whether the
        pattern has wildcards (``*``, a final ``$``), else it is a prefix."""
        # Of the rules with the same pattern only the best-ranked can decide: it alone is kept
        # (a file may repeat one rule tens of thousands of times).
        kept: dict[str, tuple[Any, bool, Any]] = {}
        for rank, pattern, wild, payload in rules:
            known = kept.get(pattern)
            if known is None or rank > known[0]:
                kept[pattern] = (rank, wild, payload)
        by_head: dict[str, list[tuple[Any, tuple[Any, ...] | None, Any]]] = {}
        for pattern, (rank, wild, payload) in kept.items():
            head, split = pattern, None
            if wild:
                head, middle, tail, anchored = split_glob(pattern)
                split = (middle, tail, anchored)
            by_head.setdefault(head, []).append((rank, split, payload))
        for candidates in by_head.values():
            candidates.sort(key=itemgetter(0), reverse=True)
        self.by_head = by_head
        self.lengths = sorted({len(head) for head in by_head})

    def best(self, path: str) -> Any:
        """The payload of the best-ranked rule that matches *path*, or None."""
        best_rank: Any = None
        best = None
        by_head, lengths = self.by_head, self.lengths
        for position in range(bisect_right(lengths, len(path)) - 1, -1, -1):
            head = path[: lengths[position]]
            for rank, split, payload in by_head.get(head, ()):
                if best_rank is not None and rank <= best_rank:
                    break  # (the others under this head rank lower still)
                if split is None or glob_match(path, head, *split):
                    best_rank, best = rank, payload
                    break
        return best
