"""The parsed robots.txt: groups built from directive events, and the queries on them."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import itemgetter, not_, or_
from sys import intern
from typing import Any, NamedTuple

from . import _lines as L
from ._agents import caller_tokens, group_token, is_global_value
from ._constants import GYM2008, RFC9309, SYNTAX_NAMES, check_syntax
from ._directives import (
    RequestRate,
    VisitTime,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
)
from ._lines import _VALUE_SPACE, ParseWarning
from ._patterns import (
    ABSOLUTE_URL,
    Glob,
    escape_pattern,
    glob_match,
    has_lower_escape,
    path_params_query,
    pattern_matches,
    unquote_path,
)

_ROBOTS_PATH = "/robots.txt"
_ABSOLUTE_URL = ABSOLUTE_URL.match
# RobotsTxt._origin before the first query: any scheme://authority/ would do, since every URL
# that starts with one has its path from that last "/"; this one names no real site.
_NO_ORIGIN = "x://\x00/"
_STAR = ("*",)  # the agents of most groups, shared
_LEGACY_MEMO_SIZE = 16
_NO_INDEX: dict[str, Any] = {}  # RobotsTxt._index of a file with no specific group; never written
# User agent -> its product token, for agents that have one (or none: ""), as caller_tokens
# reads them; shared by every parsed file, so a crawl's agent is read once.
_TOKEN_OF_AGENT: dict[str, str] = {}
_TOKEN_MEMO_SIZE = 4096
# User-agent value -> the token it names ("*" for the global group, "" for none).
_AGENT_KEYS: dict[str, str] = {}
_AGENT_KEY_MEMO_SIZE = 8192
# The shared tables keep only small entries, so that they stay small whatever the files: a
# table holds at most its SIZE entries of at most _SHARED_ENTRY_MAX characters; _COMPILED
# holds rule sets of at most _SHARED_ENTRY_MAX rules and _SHARED_RULES_CHARS characters.
_SHARED_ENTRY_MAX = 256
_SHARED_RULES_CHARS = 4096


def clear_shared_tables() -> None:
    """Empty the bounded tables that parsed files share (agents read, rules compiled, wildcard
    rules split). Nothing needs it; the benchmark calls it so that a repeat starts cold."""
    _TOKEN_OF_AGENT.clear()
    _AGENT_KEYS.clear()
    _COMPILED.clear()
    _GLOBS.clear()
    _GROUP_RULES.clear()
    _ONE_AGENT.clear()
    caller_tokens.cache_clear()


def _remember_token(user_agent: str, token: str) -> None:
    if len(user_agent) > _SHARED_ENTRY_MAX:
        return
    if len(_TOKEN_OF_AGENT) >= _TOKEN_MEMO_SIZE:
        _TOKEN_OF_AGENT.clear()
    _TOKEN_OF_AGENT[user_agent] = token


def _agent_key(value: str) -> str:
    key = "*" if is_global_value(value) else group_token(value)
    if len(value) > _SHARED_ENTRY_MAX:
        return key
    if len(_AGENT_KEYS) >= _AGENT_KEY_MEMO_SIZE:
        _AGENT_KEYS.clear()
    _AGENT_KEYS[value] = key
    return key


class Decision(NamedTuple):
    """A verdict and the robots.txt line that decided it."""

    allowed: bool
    line: int | None
    rule: str | None
    reason: str


@dataclass(frozen=True)
class Group:
    """One group (RFC 9309) or record (MK1996/GYM2008) as written in the file."""

    agents: tuple[str, ...]
    rules: tuple[tuple[bool, str, int], ...]  # (is_allow, pattern, line)
    line: int  # line of the first User-agent


class _Builder:
    """A MK1996/GYM2008 record under construction; ``_group`` freezes it."""

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
# enough to try one by one (_plain_prefixes).
_StoredGroup = tuple[
    tuple[str, ...], tuple[str, ...], "bytes | None", "int | array[int]", tuple[Any, ...], int, bool
]
_AGENTS, _PATTERNS, _KINDS, _LINES, _EXTRAS, _FIRST_LINE, _PLAIN = range(7)


def _as_groups(entry: Any) -> tuple[_StoredGroup, ...]:
    """An index entry (one group, or a tuple of groups) as a tuple of groups."""
    # A group starts with its agents (a tuple of str); a tuple of groups with a group.
    return (entry,) if type(entry[0][0]) is str else entry


def _from_builder(built: _Builder) -> _StoredGroup:
    agents = built.agents
    lines = built.lines
    return (
        _STAR if agents == ["*"] else tuple(agents),
        tuple(built.patterns),
        bytes(built.kinds) if 1 in built.kinds else None,
        lines[0] if lines and lines[-1] - lines[0] == len(lines) - 1 else array("I", lines),
        tuple(built.extras),
        built.first_line,
        False,
    )


def _kind_at(group: _StoredGroup, index: int) -> int:
    """1 if rule *index* is an Allow, 0 for a Disallow."""
    kinds = group[_KINDS]
    return kinds[index] if kinds is not None else 0


def _line_at(group: _StoredGroup, index: int) -> int:
    lines = group[_LINES]
    return lines + index if isinstance(lines, int) else lines[index]


def _group_rules(group: _StoredGroup) -> tuple[tuple[bool, str, int], ...]:
    return tuple(
        (_kind_at(group, i) == 1, p, _line_at(group, i)) for i, p in enumerate(group[_PATTERNS])
    )


def _group_extra(group: _StoredGroup, kind: int, agent_index: int) -> Any:
    for declared, extra_kind, value in group[_EXTRAS]:
        if extra_kind == kind and agent_index < declared:
            return value
    return None


def _crawl_delay_last(group: _StoredGroup) -> float | None:
    """The record's last valid Crawl-delay (rerp: a later line overwrites an earlier one)."""
    for _, kind, value in reversed(group[_EXTRAS]):
        if kind == L.CRAWL_DELAY:
            return value  # type: ignore[no-any-return]
    return None


def _gym2008_globs(group: _StoredGroup) -> dict[int, Glob] | None:
    """The record's wildcard rules by index (GYM2008), or None if it has none."""
    found = {i: Glob(p) for i, p in enumerate(group[_PATTERNS]) if "*" in p or p[-1:] == "$"}
    return found or None


class _Rules:
    """The rules that apply to one agent, ready to match (RFC 9309).

    Built on the agent's first query from its group, or its groups merged as RFC 9309 section
    2.2.1 asks: plain prefixes per verdict, checked with one C-level ``str.startswith(tuple)``
    (sorted for bisection when an Allow must be weighed against them), and wildcard rules as
    split globs (``_Wild``). More than _PREFIX_GATE_MIN Disallow prefixes also get a ``_Wild``,
    which bisects them once they have served _GATE_AFTER_CHECKS checks.
    """

    __slots__ = ("groups", "disallow", "allow", "wild")

    def __init__(self, entry: Any) -> None:
        self.groups = entry  # the index entry: one group, or a tuple of groups
        groups = _as_groups(entry)
        if len(groups) == 1:
            group = groups[0]
            patterns = group[_PATTERNS]
            if group[_PLAIN]:
                # File order serves: without an Allow to compare with, only whether some
                # prefix matches counts, not which one is longest.
                self.disallow: tuple[str, ...] = patterns
                self.allow: tuple[str, ...] = ()
                self.wild: _Wild | None = None
                return
            kinds = group[_KINDS]
        else:
            patterns = tuple(p for g in groups for p in g[_PATTERNS])
            allow_bits = b"".join(g[_KINDS] or bytes(len(g[_PATTERNS])) for g in groups)
            kinds = allow_bits if 1 in allow_bits else None
        # Many sites serve the same rules (a CMS's defaults): their matching form is shared.
        shareable = len(patterns) <= _SHARED_ENTRY_MAX
        if shareable:
            found = _COMPILED.get((patterns, kinds))
            if found is not None:
                self.disallow, self.allow, self.wild = found
                return
        joined = "\n".join(patterns)
        self._compile(patterns, kinds, joined)
        if shareable and len(joined) <= _SHARED_RULES_CHARS:
            if len(_COMPILED) >= _COMPILED_MEMO_SIZE:
                _COMPILED.clear()
            _COMPILED[(patterns, kinds)] = (self.disallow, self.allow, self.wild)

    def _compile(self, patterns: tuple[str, ...], kinds: bytes | None, joined: str) -> None:
        """*joined*: the patterns joined with newlines."""
        self.allow = ()
        self.wild = None
        if _plain_prefixes(kinds, joined, patterns):
            self.disallow = patterns  # plain prefixes of merged groups
            return
        no_allow = kinds is None
        disallow_patterns: Sequence[str]
        allow_patterns: list[str] = []
        wild_disallow: list[str] = []
        wild_allow: list[str] = []
        may_be_wild = "*" in joined or "$" in joined
        if no_allow and not may_be_wild:
            # Disallow prefixes only (more than _plain_prefixes takes, or an empty one).
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
            # Sorted, so that the longest prefix of a path is found by bisection (_longest).
            self.disallow = tuple(sorted(disallow_patterns))
            self.allow = tuple(sorted(allow_patterns))
        if len(disallow_patterns) > _PREFIX_GATE_MIN:
            # Too many prefixes to try one by one on each check, if there are many checks:
            # _rfc_allows counts them and bisects a sorted copy after _GATE_AFTER_CHECKS.
            if self.wild is None:
                self.wild = _Wild([], [], no_allow)
            self.wild.checks_before_gate = _GATE_AFTER_CHECKS


def _plain_prefixes(kinds: bytes | None, text: str, patterns: Sequence[str]) -> bool:
    """True if the rules are all non-empty Disallow prefixes without ``*`` or ``$``, which are
    matched as they are: no more than _PREFIX_GATE_MIN of them, as more are bisected once they
    have served enough checks (``_Wild.gate``). *text* holds every pattern (more text only makes
    the answer False)."""
    return (
        kinds is None
        and len(patterns) <= _PREFIX_GATE_MIN
        and "*" not in text
        and "$" not in text
        and "" not in patterns
    )


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
# Above this many Disallow prefixes, checks bisect a sorted copy (``_Wild.gate``) instead of
# trying each prefix, once the rules have served _GATE_AFTER_CHECKS checks: a prefix costs about
# 8 ns a check to try and about 250 ns once to sort into the copy, so the copy pays for itself
# after some 30 checks, and a crawl that asks a site a handful of times never builds it.
_PREFIX_GATE_MIN = 256
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
    if len(pattern) <= _SHARED_ENTRY_MAX:
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


def _longest(prefixes: tuple[str, ...], path: str) -> int:
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


def _rfc_allows(rules: _Rules, path: str) -> bool:
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
            return path == _ROBOTS_PATH
        return True
    worst = _longest(disallow, path) if some_prefix else 0
    if path.startswith(wild.long_heads):
        worst = max(worst, _best_glob(wild.headed, path, worst))
    if _others_may_match(wild, path):
        worst = max(worst, _best_glob(wild.others, path, worst))
    if not worst:
        return True
    allow = rules.allow
    if allow and path.startswith(allow) and _longest(allow, path) >= worst:
        return True
    if _best_glob(wild.allow, path, worst - 1):
        return True
    return path == _ROBOTS_PATH


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


def _legacy_first_match(
    group: _StoredGroup, globs: dict[int, Glob] | None, path: str
) -> tuple[bool, int | None]:
    """rerp: within the record, the first rule in file order that matches decides."""
    kinds = group[_KINDS]
    for i, pattern in enumerate(group[_PATTERNS]):
        glob = globs.get(i) if globs else None
        if glob is not None:
            if glob.match(path):
                return kinds is not None and kinds[i] == 1, i
        elif path.startswith(pattern):
            is_allow = kinds is not None and kinds[i] == 1
            # rerp: an empty Disallow allows everything, an empty Allow forbids everything.
            return (is_allow if pattern else not is_allow), i
    return True, None


# ---------------------------------------------------------------------------------------------


class RobotsTxt:
    """An immutable parsed robots.txt. Build one with :func:`parse`.

    Queries take the URL first, then the user agent. In RFC9309 the user agent may be a bare
    product token (``MyBot``) or a whole User-Agent header; URLs are matched as given, without
    %-decoding (pass them %-encoded, as Scrapy does).
    """

    __slots__ = (
        "_syntax",
        "_groups",
        "_index",
        "_global",
        "_sitemaps",
        "_host",
        "_clean_params",
        "_warnings",
        "_origin",
        "_legacy_memo",
    )

    def __init__(self) -> None:
        raise TypeError("use scrapy_rerp.parse() or RobotsTxt.allow_all()/disallow_all()")

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    def _build(
        syntax: int,
        groups: tuple[_StoredGroup, ...],
        sitemaps: tuple[str, ...],
        host: str | None,
        clean_params: tuple[str, ...],
        warnings: tuple[ParseWarning, ...],
    ) -> RobotsTxt:
        # Filled in as a _Writable, whose attribute stores are plain slot stores (each
        # object.__setattr__ call costs about ten of them), then frozen by taking this class.
        self = object.__new__(_Writable)
        self._syntax = syntax
        self._groups = groups
        self._sitemaps = sitemaps
        self._host = host
        self._clean_params = clean_params
        self._warnings = warnings
        self._index, self._global = _index_groups(syntax, groups)
        # The scheme://authority/ of the last URL asked about, so that the next URL of the
        # same site needs no parsing.
        self._origin = _NO_ORIGIN
        # MK1996/GYM2008 only: finding rerp's record scans every record's names, so a few
        # agents are remembered (created on the first miss, at most _LEGACY_MEMO_SIZE).
        self._legacy_memo = None
        self.__class__ = RobotsTxt
        return self  # type: ignore[return-value]

    @classmethod
    def allow_all(cls, syntax: int = RFC9309) -> RobotsTxt:
        """A robots.txt that allows everything (what RFC 9309 says a 4xx means)."""
        return RobotsTxt._build(check_syntax(syntax), (), (), None, (), ())

    @classmethod
    def disallow_all(cls, syntax: int = RFC9309) -> RobotsTxt:
        """A robots.txt that disallows everything (``User-agent: *`` / ``Disallow: /``)."""
        return parse("User-agent: *\nDisallow: /\n", syntax)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("RobotsTxt objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("RobotsTxt objects are immutable")

    def __getstate__(self) -> tuple[Any, ...]:
        return (
            self._syntax,
            self._groups,
            self._sitemaps,
            self._host,
            self._clean_params,
            self._warnings,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        built = RobotsTxt._build(*state)
        for name in RobotsTxt.__slots__:
            object.__setattr__(self, name, getattr(built, name))

    def __reduce__(self) -> tuple[Any, ...]:
        return (object.__new__, (RobotsTxt,), self.__getstate__())

    # -- plain properties -----------------------------------------------------------------

    @property
    def syntax(self) -> int:
        return self._syntax  # type: ignore[no-any-return]

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order, as written."""
        return self._sitemaps  # type: ignore[no-any-return]

    @property
    def host(self) -> str | None:
        """The first ``Host:`` value (a preferred host name), if any."""
        return self._host  # type: ignore[no-any-return]

    @property
    def clean_params(self) -> tuple[str, ...]:
        """``Clean-param:`` values, kept but not applied."""
        return self._clean_params  # type: ignore[no-any-return]

    @property
    def warnings(self) -> tuple[ParseWarning, ...]:
        """Lines skipped or partly understood, with 1-based line numbers."""
        return self._warnings  # type: ignore[no-any-return]

    @property
    def groups(self) -> tuple[Group, ...]:
        """The groups (records) as parsed, in file order (legacy: rerp's order, ``*`` last)."""
        return tuple(Group(g[_AGENTS], _group_rules(g), g[_FIRST_LINE]) for g in self._groups)

    # -- resolving the user agent ---------------------------------------------------------

    def _rfc_token(self, user_agent: str) -> str | None:
        """The token whose groups apply, or None for the ``*`` groups."""
        for token in caller_tokens(user_agent):
            if token in self._index:
                return token
        return None

    def _rfc_groups(self, user_agent: str) -> tuple[_StoredGroup, ...]:
        token = self._rfc_token(user_agent)
        rules = self._global if token is None else self._index[token]
        if rules is None:
            return ()
        return _as_groups(rules.groups if isinstance(rules, _Rules) else rules)

    def _rfc_rules(self, user_agent: str) -> _Rules | None:
        """The compiled rules for *user_agent* (compiling them on first use), or None."""
        tokens = caller_tokens(user_agent)
        if len(tokens) == 1:
            _remember_token(user_agent, tokens[0])
        elif not tokens:
            _remember_token(user_agent, "")  # a blank user agent: no token, the * groups
        index = self._index
        for token in tokens:
            rules = index.get(token)
            if rules is not None:
                if not isinstance(rules, _Rules):
                    rules = index[token] = _Rules(rules)
                return rules
        rules = self._global
        if rules is not None and not isinstance(rules, _Rules):
            rules = _Rules(rules)
            _SET_GLOBAL(self, rules)
        return rules  # type: ignore[no-any-return]

    def _path(self, url: str) -> str:
        """The path, params and query of *url*; remembers its site for the next URL."""
        match = _ABSOLUTE_URL(url)  # path_params_query's common case, inlined
        if match is None:
            return path_params_query(url)
        path = match.group(1)
        if path is None:
            return "/"
        if path[0] != "/":
            return "/" + path
        # A URL that starts with this scheme://authority/ has its path from the same place.
        start = match.start(1)
        _SET_ORIGIN(self, url[: start + 1])
        return path

    def _legacy_rules(self, user_agent: str) -> tuple[_StoredGroup | None, dict[int, Glob] | None]:
        """rerp's record for *user_agent* and its wildcard rules, remembered for a few agents."""
        memo = self._legacy_memo
        if memo is None:
            memo = {}
            _SET_LEGACY_MEMO(self, memo)
        found = memo.get(user_agent)
        if found is None:
            if len(memo) >= _LEGACY_MEMO_SIZE:
                memo.clear()
            group = self._legacy_record(user_agent, with_rules=True)
            globs = None
            if group is not None and self._syntax == GYM2008:
                # Agents that share a record share its split wildcard rules.
                for known, known_globs in memo.values():
                    if known is group:
                        globs = known_globs
                        break
                else:
                    globs = _gym2008_globs(group)
            found = memo[user_agent] = (group, globs)
        return found  # type: ignore[no-any-return]

    def _legacy_record(
        self, user_agent: str, with_rules: bool, extra: int | None = None
    ) -> _StoredGroup | None:
        """rerp's first matching record; records without rules count only when they carry the
        *extra* directive asked for (rerp dropped them: a Crawl-delay-only record was lost)."""
        agent = user_agent.lower()
        for group in self._groups:
            if not group[_PATTERNS] and (
                with_rules or not any(kind == extra for _, kind, _ in group[_EXTRAS])
            ):
                continue
            for name in group[_AGENTS]:
                if name == "*" or name.lower() in agent:
                    return group
        return None

    # -- queries --------------------------------------------------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        """True if *user_agent* may fetch *url*."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        rules = self._global
        index = self._index
        if index:
            token = _TOKEN_OF_AGENT.get(user_agent)
            if token is not None:
                rules = index.get(token, rules)
            else:
                rules = self._rfc_rules(user_agent)
        if type(rules) is not _Rules:
            if rules is None:
                if self._syntax == RFC9309:
                    return True
                return self._legacy_allowed(url, user_agent)
            rules = self._rfc_rules(user_agent)
        origin = self._origin
        if url.startswith(origin):  # a URL of the site asked about before
            path = url[len(origin) - 1 :]
            if "#" in path:
                path = path[: path.index("#")]
        else:
            path = self._path(url)
        if rules.wild is not None:
            return _rfc_allows(rules, path)
        disallow = rules.disallow
        if not path.startswith(disallow):
            return True
        allow = rules.allow
        if allow and path.startswith(allow) and _longest(allow, path) >= _longest(disallow, path):
            return True
        return path == _ROBOTS_PATH

    def _legacy_allowed(self, url: str, user_agent: str) -> bool:
        memo = self._legacy_memo
        found = memo.get(user_agent) if memo is not None else None
        group, globs = found if found is not None else self._legacy_rules(user_agent)
        if group is None:
            return True
        path = unquote_path(path_params_query(url))
        if globs is None and not path.startswith(group[_PATTERNS]):
            return True  # no rule is a prefix of the path
        return _legacy_first_match(group, globs, path)[0]

    def decide(self, url: str, user_agent: str) -> Decision:
        """The verdict for *url* and the line that decided it (slower than :meth:`allowed`)."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        path = path_params_query(url)
        if self._syntax == RFC9309:
            return self._decide_rfc(path, user_agent)
        return self._decide_legacy(unquote_path(path), user_agent)

    def _decide_rfc(self, path: str, user_agent: str) -> Decision:
        if path == _ROBOTS_PATH:
            return Decision(True, None, None, "/robots.txt is always allowed")
        groups = self._rfc_groups(user_agent)
        if not groups:
            return Decision(True, None, None, "no group applies to this user agent")
        best: dict[bool, tuple[int, str, int]] = {}
        for group in groups:
            for is_allow, pattern, line in _group_rules(group):
                if not pattern or not pattern_matches(path, pattern):
                    continue
                priority = len(pattern)
                if is_allow not in best or priority > best[is_allow][0]:
                    best[is_allow] = (priority, pattern, line)
        allow, disallow = best.get(True), best.get(False)
        if disallow is not None and (allow is None or disallow[0] > allow[0]):
            return Decision(False, disallow[2], f"Disallow: {disallow[1]}", "longest match")
        if allow is not None:
            return Decision(True, allow[2], f"Allow: {allow[1]}", "longest match")
        return Decision(True, None, None, "no rule matched")

    def _decide_legacy(self, path: str, user_agent: str) -> Decision:
        group = self._legacy_record(user_agent, with_rules=True)
        if group is None:
            return Decision(True, None, None, "no record applies to this user agent")
        globs = _gym2008_globs(group) if self._syntax == GYM2008 else None
        verdict, index = _legacy_first_match(group, globs, path)
        if index is None:
            return Decision(True, None, None, "no rule matched")
        keyword = "Allow" if _kind_at(group, index) == 1 else "Disallow"
        rule = f"{keyword}: {group[_PATTERNS][index]}"
        return Decision(verdict, _line_at(group, index), rule, "first match")

    def _extra(self, user_agent: str, kind: int) -> Any:
        if type(user_agent) is not str:
            _, user_agent = _coerce("", user_agent)
        if self._syntax == RFC9309:
            key = self._rfc_token(user_agent) or "*"
            for group in self._rfc_groups(user_agent):
                for agent_index, value in enumerate(group[_AGENTS]):
                    if _agent_key(value) == key:
                        found = _group_extra(group, kind, agent_index)
                        if found is not None:
                            return found
                        break
            return None
        group = self._legacy_record(user_agent, with_rules=False, extra=kind)
        if group is None:
            return None
        for _, extra_kind, value in reversed(group[_EXTRAS]):
            if extra_kind == kind:  # rerp: the last Crawl-delay of a record wins
                return value
        return None

    def crawl_delay(self, user_agent: str) -> float | None:
        """Seconds to wait between requests, from the group that applies, or None."""
        return self._extra(user_agent, L.CRAWL_DELAY)  # type: ignore[no-any-return]

    def request_rate(self, user_agent: str) -> RequestRate | None:
        return self._extra(user_agent, L.REQUEST_RATE)  # type: ignore[no-any-return]

    def visit_time(self, user_agent: str) -> VisitTime | None:
        return self._extra(user_agent, L.VISIT_TIME)  # type: ignore[no-any-return]

    # -- rendering ------------------------------------------------------------------------

    def __str__(self) -> str:
        if self._syntax != RFC9309:
            return self._render_rerp()
        blocks = []
        for group in self._groups:
            lines = [f"User-agent: {agent}" for agent in group[_AGENTS]]
            lines += [f"{'Allow' if a else 'Disallow'}: {p}" for a, p, _ in _group_rules(group)]
            lines += [_render_extra(kind, value) for _, kind, value in group[_EXTRAS]]
            blocks.append("\n".join(lines) + "\n")
        tail = [f"Sitemap: {s}" for s in self._sitemaps]
        if self._host is not None:
            tail.append(f"Host: {self._host}")
        tail += [f"Clean-param: {c}" for c in self._clean_params]
        if tail:
            blocks.append("\n".join(tail) + "\n")
        return "\n".join(blocks)

    def _render_rerp(self) -> str:
        text = f"Sitemaps: {list(self._sitemaps)}\n\n" if self._sitemaps else ""
        records = []
        for group in self._groups:
            delay = _crawl_delay_last(group)
            if not group[_PATTERNS] and delay is None:
                continue  # a record with neither rules nor Crawl-delay (rerp drops those)
            record = "".join(f"User-agent: {name}\n" for name in group[_AGENTS])
            if delay:
                record += f"Crawl-delay: {delay}\n"
            record += "".join(
                f"{'Allow' if a else 'Disallow'}: {p}\n" for a, p, _ in _group_rules(group)
            )
            records.append(record)
        return text + "\n".join(records)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt {SYNTAX_NAMES[self._syntax]} groups={len(self._groups)} "
            f"sitemaps={len(self._sitemaps)}>"
        )


# What a query remembers in a parsed object, stored through the slots themselves:
# object.__setattr__ would first look for the class's own __setattr__ (several times the cost).
_SET_GLOBAL = RobotsTxt.__dict__["_global"].__set__
_SET_ORIGIN = RobotsTxt.__dict__["_origin"].__set__
_SET_LEGACY_MEMO = RobotsTxt.__dict__["_legacy_memo"].__set__


class _Writable(RobotsTxt):
    """A RobotsTxt being filled in (``RobotsTxt._build``): the same slots, stored plainly."""

    __slots__ = ()
    # Both, so that the type takes object's C-level slot for stores (one slot serves both).
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


def _index_groups(syntax: int, groups: tuple[_StoredGroup, ...]) -> tuple[dict[str, Any], Any]:
    """Map each product token to the groups that apply to it (RFC 9309), once per parse.

    Returns ``(index, global)``: the index maps a token, and global stands for ``*``, to its
    group, or a tuple of its groups, until the first query for it compiles them into ``_Rules``
    in place.
    """
    index: dict[str, Any] = _NO_INDEX  # shared: most files name no crawler
    global_rules: Any = None
    if syntax != RFC9309 or not groups:
        return index, global_rules
    if len(groups) == 1 and groups[0][_AGENTS] is _STAR:
        return index, groups[0]
    by_token: dict[str, Any] = {}
    merged: dict[str, list[_StoredGroup]] = {}  # tokens with more than one group
    global_groups: list[_StoredGroup] = []
    key_of = _AGENT_KEYS.get
    for group in groups:
        for value in group[_AGENTS]:
            key = key_of(value)
            if key is None:
                key = _agent_key(value)
            if key == "*":
                if not global_groups or global_groups[-1] is not group:
                    global_groups.append(group)
            elif key:
                found = by_token.get(key)
                if found is None:
                    by_token[key] = group
                elif found is not group:
                    more = merged.setdefault(key, [found])
                    if more[-1] is not group:
                        more.append(group)
    if by_token:
        for key, more in merged.items():
            by_token[key] = tuple(more)
        index = by_token
    if global_groups:
        global_rules = global_groups[0] if len(global_groups) == 1 else tuple(global_groups)
    return index, global_rules


def _render_extra(kind: int, value: Any) -> str:
    name = L.KIND_NAMES[kind]
    if kind == L.REQUEST_RATE:
        text = f"{value.requests}/{value.seconds:g}s"
        if value.start_time is not None:
            text += f" {value.start_time:%H%M}-{value.end_time:%H%M}"
        return f"{name}: {text}"
    if kind == L.VISIT_TIME:
        return f"{name}: {value.start_time:%H%M}-{value.end_time:%H%M}"
    return f"{name}: {value:g}"


def _coerce(url: object, user_agent: object) -> tuple[str, str]:
    if isinstance(url, bytes):
        url = url.decode("utf-8", "surrogateescape")
    if isinstance(user_agent, bytes):
        user_agent = user_agent.decode("utf-8", "surrogateescape")
    if not isinstance(url, str):
        raise TypeError(f"url must be str or bytes, not {type(url).__name__}")
    if not isinstance(user_agent, str):
        raise TypeError(f"user_agent must be str or bytes, not {type(user_agent).__name__}")
    return url, user_agent


# ---------------------------------------------------------------------------------------------
# Building


def parse(content: str | bytes, syntax: int = RFC9309) -> RobotsTxt:
    """Parse a robots.txt body. Never raises on content; bad lines become ``warnings``.

    Raises TypeError if *content* is neither str nor bytes and ValueError for an unknown syntax.
    """
    check_syntax(syntax)
    text = L.decode(content, syntax)
    warnings: list[ParseWarning] = []
    if syntax == RFC9309:
        groups, file_wide = _build_rfc(text, warnings)
    else:
        rows, warnings = L.scan_legacy(text)
        junk: list[int] = []
        groups, file_wide = _build_legacy(rows, warnings, junk, syntax)
        if junk:
            warnings += L.junk_warnings(text.split("\n"), junk)
    if warnings:
        warnings.sort()
    return RobotsTxt._build(
        syntax,
        groups,
        tuple(file_wide.sitemaps),
        file_wide.host,
        tuple(file_wide.clean_params),
        tuple(warnings),
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


class _FileWide:
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


def _build_rfc(
    text: str, warnings: list[ParseWarning]
) -> tuple[tuple[_StoredGroup, ...], _FileWide]:
    """RFC 9309 groups: a group starts at a User-agent line that follows a rule line.

    The lines' kinds are a bytearray, so the group boundaries are found with ``bytes.find`` and
    each group's rules are taken with C-level ``compress`` and ``map``: no Python code runs per
    rule line unless a rule needs escaping or is an ``/index.html`` Allow.
    """
    kinds, read, lines, bare_values, junk = L.tokenize_rfc(text, warnings)
    if junk:
        warnings += L.junk_warnings(lines, junk)
    coarse = kinds.translate(_COARSE)
    file_wide = _FileWide()
    if _LETTER_F in coarse:
        index = coarse.find(b"F")
        while index != -1:
            file_wide.add(kinds[index], _value_of(read, bare_values, index))
            index = coarse.find(b"F", index + 1)
    start = coarse.find(b"U")
    if start:  # lines before the first User-agent (or no User-agent at all)
        _warn_outside_groups(kinds, read, bare_values, coarse, start, warnings)
    groups: list[_StoredGroup] = []
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
) -> _StoredGroup:
    """One group: User-agent lines from *start* up to *first_rule*, its lines up to *end*
    (*has_extras*: whether the file has any Crawl-delay, Request-rate or Visit-time)."""
    if first_rule == start + 1:
        # Keyed by the whole line, whose value is read the same way each time.
        line = read[start]
        agents: tuple[str, ...] | None = _ONE_AGENT.get(line)
        if agents is None:
            value = _value_of(read, bare_values, start)
            agents = _STAR if value == "*" else (intern(value),)
            if len(_ONE_AGENT) < _ONE_AGENT_MEMO_SIZE and len(line) <= _SHARED_ENTRY_MAX:
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
    remember = len(joined) <= _SHARED_RULES_CHARS
    if L.ALLOW in rule_kinds:
        allow_bits = bytes(rule_kinds.translate(_ALLOW_BIT))
        if "/index.htm" in joined:
            patterns, allow_bits, numbers = _with_index_directories(
                patterns, allow_bits, numbers or list(range(first_rule + 1, last + 1))
            )
            remember = False  # rules were added for the directories: the line numbers changed
    # Whether the rules are plain prefixes, seen now while the values are at hand.
    found = (tuple(patterns), allow_bits, _plain_prefixes(allow_bits, joined, patterns))
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


def _build_legacy(
    rows: list[L.LegacyRow], warnings: list[ParseWarning], junk: list[int], syntax: int
) -> tuple[tuple[_StoredGroup, ...], _FileWide]:
    """rerp 1.7.1's record logic: blank lines end records, ``*`` records go last."""
    records: list[_Builder] = []
    current: _Builder | None = None
    previous_was_agent = False
    file_wide = _FileWide()

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
