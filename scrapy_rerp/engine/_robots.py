"""The parsed robots.txt: groups built from directive events, and the queries on them."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import lru_cache
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
from ._lines import ParseWarning
from ._patterns import (
    ABSOLUTE_URL,
    Glob,
    escape_pattern,
    glob_match,
    path_params_query,
    pattern_matches,
    unquote_path,
)

_ROBOTS_PATH = "/robots.txt"
_UNSET: Any = object()  # a lazily computed field not computed yet
_ABSOLUTE_URL = ABSOLUTE_URL.match
_NO_AGENT = (None, None)  # RobotsTxt._last before the first query
_STAR = ("*",)  # the agents of most groups, shared
_LEGACY_MEMO_SIZE = 16
_NO_INDEX: dict[str, Any] = {}  # RobotsTxt._index of a file with no specific group; never written


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
    """A group under construction; ``_StoredGroup`` freezes it."""

    __slots__ = ("agents", "patterns", "kinds", "lines", "extras", "first_line")

    def __init__(self, line: int) -> None:
        self.agents: list[str] = []
        self.patterns: list[str] = []
        self.kinds = bytearray()  # 1 = Allow, 0 = Disallow, per rule
        self.lines: list[int] = []
        self.extras: list[tuple[int, int, Any]] = []  # (agents declared so far, kind, value)
        self.first_line = line


class _StoredGroup:
    """One group, compact and ready to query without a compile step.

    The rules are kept twice over shared strings: in file order with their line numbers (for
    ``decide`` and rendering), and split for matching: plain prefixes per verdict, checked with
    one C-level ``str.startswith(tuple)``, and wildcard rules as globs, longest first.
    """

    __slots__ = (
        "agents",
        "patterns",
        "kinds",
        "lines",
        "extras",
        "first_line",
        "disallow",
        "allow",
        "wild",
    )

    def __init__(self, built: _Builder, syntax: int) -> None:
        agents = built.agents
        self.agents = _STAR if agents == ["*"] else tuple(agents)
        self.patterns = tuple(built.patterns)
        # Most groups hold only Disallow rules on consecutive lines: store those compactly.
        self.kinds = bytes(built.kinds) if 1 in built.kinds else None
        lines = built.lines
        if lines and lines[-1] - lines[0] == len(lines) - 1:
            self.lines: int | array[int] = lines[0]
        else:
            self.lines = array("I", lines)
        self.extras = tuple(built.extras) if built.extras else ()
        self.first_line = built.first_line
        self._index_rules(syntax)

    def _index_rules(self, syntax: int) -> None:
        # RFC 9309 groups are split for matching on their first query (``split``): many
        # groups name crawlers that never ask.
        self.disallow: tuple[str, ...] | None = None
        self.allow: tuple[str, ...] = ()
        # RFC9309: the wildcard rules as (Disallow globs, Allow globs); GYM2008: the record's
        # globs by rule index, built on its first query (_UNSET until then).
        self.wild: Any = ()
        if syntax == GYM2008:
            self.wild = _UNSET

    def gym2008_globs(self) -> dict[int, Glob] | None:
        """The record's wildcard rules by index (GYM2008), or None if it has none."""
        globs = self.wild
        if globs is _UNSET:
            found = {i: Glob(p) for i, p in enumerate(self.patterns) if "*" in p or p[-1:] == "$"}
            globs = self.wild = found or None
        return globs  # type: ignore[no-any-return]

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.agents, self.patterns, self.kinds, self.lines, self.extras, self.first_line)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (self.agents, self.patterns, self.kinds, self.lines, self.extras, self.first_line) = state

    def split(self) -> tuple[str, ...]:
        """Sort the rules for RFC 9309 matching; return the Disallow prefixes."""
        _index_rfc(self, self.patterns, self.kinds)
        return self.disallow  # type: ignore[return-value]

    def kind_at(self, index: int) -> int:
        """1 if rule *index* is an Allow, 0 for a Disallow."""
        return self.kinds[index] if self.kinds is not None else 0

    def line_at(self, index: int) -> int:
        lines = self.lines
        return lines + index if isinstance(lines, int) else lines[index]

    def rules(self) -> tuple[tuple[bool, str, int], ...]:
        return tuple(
            (self.kind_at(i) == 1, p, self.line_at(i)) for i, p in enumerate(self.patterns)
        )

    def extra(self, kind: int, agent_index: int) -> Any:
        for declared, extra_kind, value in self.extras:
            if extra_kind == kind and agent_index < declared:
                return value
        return None

    def crawl_delay_last(self) -> float | None:
        """The record's last valid Crawl-delay (rerp: a later line overwrites an earlier one)."""
        for _, kind, value in reversed(self.extras):
            if kind == L.CRAWL_DELAY:
                return value  # type: ignore[no-any-return]
        return None


def _index_rfc(target: Any, patterns: tuple[str, ...], kinds: bytes | None) -> None:
    if kinds is None and all(patterns) and not any("*" in p or p[-1] == "$" for p in patterns):
        # Only plain Disallow prefixes: file order serves, since without an Allow to compare
        # with, only whether some prefix matches counts, not which one is longest.
        target.disallow = patterns
        target.allow = target.wild = ()
        return
    disallow: list[str] = []
    allow: list[str] = []
    wild_disallow: list[str] = []
    wild_allow: list[str] = []
    for i, pattern in enumerate(patterns):
        if not pattern:
            continue  # an empty rule matches with priority 0: it never decides
        is_allow = kinds is not None and kinds[i]
        if "*" in pattern or pattern[-1] == "$":
            (wild_allow if is_allow else wild_disallow).append(pattern)
        else:
            (allow if is_allow else disallow).append(pattern)
    # Longest first, so that the first pattern that matches has the highest priority.
    target.disallow = tuple(sorted(disallow, key=len, reverse=True)) if disallow else ()
    target.allow = tuple(sorted(allow, key=len, reverse=True)) if allow else ()
    # Wildcard rules are split into globs now, longest first (see _compile_glob).
    target.wild = (
        (
            tuple(map(_compile_glob, sorted(wild_disallow, key=len, reverse=True))),
            tuple(map(_compile_glob, sorted(wild_allow, key=len, reverse=True))),
        )
        if wild_disallow or wild_allow
        else ()
    )


_CompiledGlob = tuple[int, str, str, "tuple[str, ...] | None", "str | None", bool]


@lru_cache(maxsize=8192)
def _compile_glob(pattern: str) -> _CompiledGlob:
    """Split a wildcard pattern for matching; shared by every file that has the same rule."""
    glob = Glob(pattern)
    head = intern(glob.head)
    if glob.tail is None:  # no '*', only a final '$': the whole path must equal head
        return (len(pattern), "", head, None, None, True)
    middle = tuple(map(intern, glob.middle)) or None
    tail = intern(glob.tail)
    probe = max((*(middle or ()), tail), key=len)
    # ``...*$`` matches what ``...*`` matches.
    anchored = glob.anchored and bool(tail)
    return (len(pattern), probe, head, middle, tail, anchored)


class _Merged:
    """Several groups for one agent, merged as RFC 9309 section 2.2.1 asks."""

    __slots__ = ("groups", "disallow", "allow", "wild")

    def __init__(self, groups: tuple[_StoredGroup, ...]) -> None:
        self.groups = groups
        patterns = tuple(p for g in groups for p in g.patterns)
        kinds = bytes(g.kind_at(i) for g in groups for i in range(len(g.patterns)))
        _index_rfc(self, patterns, kinds if any(kinds) else None)


def _longest(prefixes: tuple[str, ...], path: str) -> int:
    for prefix in prefixes:  # sorted longest first
        if path.startswith(prefix):
            return len(prefix)
    return 0


def _rfc_allows(rules: _StoredGroup | _Merged, path: str) -> bool:
    """RFC 9309 precedence: the longest match wins, Allow wins a tie."""
    disallow = rules.disallow
    if disallow is None:
        disallow = rules.split()  # type: ignore[union-attr]
    if not rules.wild:
        if not disallow or not path.startswith(disallow):
            return True
        allow = rules.allow
        if not allow or not path.startswith(allow):
            return False
        return _longest(allow, path) >= _longest(disallow, path)
    worst = _longest(disallow, path) if disallow and path.startswith(disallow) else 0
    wild_disallow, wild_allow = rules.wild
    # Longest first, so the first wildcard Disallow that matches is the best one.
    for priority, probe, head, middle, tail, anchored in wild_disallow:
        if priority <= worst:
            break
        # The test that rejects most paths first: the anchored tail, or one scan for the
        # literal the path must contain; the head (usually "/") after.
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
        worst = priority
        break
    if not worst:
        return True
    allow = rules.allow
    if allow and path.startswith(allow) and _longest(allow, path) >= worst:
        return True
    for priority, probe, head, middle, tail, anchored in wild_allow:
        if priority < worst:
            break
        if (anchored or probe in path) and glob_match(path, head, middle, tail, anchored):
            return True
    return False


def _legacy_first_match(group: _StoredGroup, path: str) -> tuple[bool, int | None]:
    """rerp: within the record, the first rule in file order that matches decides."""
    globs = group.gym2008_globs()
    kinds = group.kinds
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
        "_last",
        "_legacy_memo",
    )

    def __init__(self) -> None:
        raise TypeError("use scrapy_rerp.parse() or RobotsTxt.allow_all()/disallow_all()")

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def _build(
        cls,
        syntax: int,
        groups: tuple[_StoredGroup, ...],
        sitemaps: tuple[str, ...],
        host: str | None,
        clean_params: tuple[str, ...],
        warnings: tuple[ParseWarning, ...],
    ) -> RobotsTxt:
        self = object.__new__(cls)
        setter = object.__setattr__
        setter(self, "_syntax", syntax)
        setter(self, "_groups", groups)
        setter(self, "_sitemaps", sitemaps)
        setter(self, "_host", host)
        setter(self, "_clean_params", clean_params)
        setter(self, "_warnings", warnings)
        self._index_groups()
        return self

    def _index_groups(self) -> None:
        """Map each product token to the rules that apply to it (RFC 9309), once per parse."""
        index: dict[str, Any] = _NO_INDEX  # shared: most files name no crawler
        global_rules: Any = None
        if self._syntax == RFC9309:
            by_token: dict[str, list[_StoredGroup]] = {}
            global_groups: list[_StoredGroup] = []
            for group in self._groups:
                for value in group.agents:
                    if is_global_value(value):
                        found = global_groups
                    else:
                        token = group_token(value)
                        if not token:
                            continue
                        found = by_token.setdefault(token, [])
                    if not found or found[-1] is not group:
                        found.append(group)
            if by_token:
                index = {t: g[0] if len(g) == 1 else _Merged(tuple(g)) for t, g in by_token.items()}
            if global_groups:
                global_rules = (
                    global_groups[0] if len(global_groups) == 1 else _Merged(tuple(global_groups))
                )
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_global", global_rules)
        # The last user agent asked about and its rules: a crawl asks with one agent.
        object.__setattr__(self, "_last", _NO_AGENT)
        # MK1996/GYM2008 only: finding rerp's record scans every record's names, so a few
        # agents are remembered (created on the first miss, at most _LEGACY_MEMO_SIZE).
        object.__setattr__(self, "_legacy_memo", None)

    @classmethod
    def allow_all(cls, syntax: int = RFC9309) -> RobotsTxt:
        """A robots.txt that allows everything (what RFC 9309 says a 4xx means)."""
        return cls._build(check_syntax(syntax), (), (), None, (), ())

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
        for name, value in zip(
            ("_syntax", "_groups", "_sitemaps", "_host", "_clean_params", "_warnings"),
            state,
            strict=True,
        ):
            object.__setattr__(self, name, value)
        for group in self._groups:
            group._index_rules(self._syntax)
        self._index_groups()

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
        return tuple(Group(g.agents, g.rules(), g.first_line) for g in self._groups)

    # -- resolving the user agent ---------------------------------------------------------

    def _rfc_rules(self, user_agent: str) -> Any:
        """The rules (a group or merged groups) for *user_agent*, or None."""
        index = self._index
        for token in caller_tokens(user_agent):
            rules = index.get(token)
            if rules is not None:
                return rules
        return self._global

    def _rfc_token(self, user_agent: str) -> str | None:
        """The token whose groups apply, or None for the ``*`` groups."""
        for token in caller_tokens(user_agent):
            if token in self._index:
                return token
        return None

    def _rfc_groups(self, user_agent: str) -> tuple[_StoredGroup, ...]:
        rules = self._rfc_rules(user_agent)
        if rules is None:
            return ()
        return rules.groups if isinstance(rules, _Merged) else (rules,)

    def _rules_for(self, user_agent: str) -> Any:
        """The rules for *user_agent*, remembered for the next query (one tuple, swapped whole,
        so that threads sharing the object never see an agent with another agent's rules)."""
        if self._syntax == RFC9309:
            rules = self._rfc_rules(user_agent)
        else:
            memo = self._legacy_memo
            if memo is None:
                memo = {}
                object.__setattr__(self, "_legacy_memo", memo)
            rules = memo.get(user_agent, _UNSET)
            if rules is _UNSET:
                if len(memo) >= _LEGACY_MEMO_SIZE:
                    memo.clear()
                rules = memo[user_agent] = self._legacy_record(user_agent, with_rules=True)
        object.__setattr__(self, "_last", (user_agent, rules))
        return rules

    def _legacy_record(
        self, user_agent: str, with_rules: bool, extra: int | None = None
    ) -> _StoredGroup | None:
        """rerp's first matching record; records without rules count only when they carry the
        *extra* directive asked for (rerp dropped them: a Crawl-delay-only record was lost)."""
        agent = user_agent.lower()
        for group in self._groups:
            if not group.patterns and (
                with_rules or not any(kind == extra for _, kind, _ in group.extras)
            ):
                continue
            for name in group.agents:
                if name == "*" or name.lower() in agent:
                    return group
        return None

    # -- queries --------------------------------------------------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        """True if *user_agent* may fetch *url*."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        last_agent, rules = self._last
        if user_agent != last_agent:
            rules = self._rules_for(user_agent)
        if self._syntax == RFC9309:
            if rules is None:
                return True
            match = _ABSOLUTE_URL(url)  # path_params_query's common case, inlined
            if match is not None:
                path = match.group(1)
                if path is None:
                    path = "/"
                elif path[0] != "/":
                    path = "/" + path
            else:
                path = path_params_query(url)
            if path == _ROBOTS_PATH:
                return True
            # The common case of _rfc_allows, inlined: no wildcard rule in the group.
            disallow = rules.disallow
            if disallow is None:
                disallow = rules.split()
            if rules.wild:
                return _rfc_allows(rules, path)
            if not disallow or not path.startswith(disallow):
                return True
            allow = rules.allow
            if not allow or not path.startswith(allow):
                return False
            return _longest(allow, path) >= _longest(disallow, path)
        group = rules
        if group is None:
            return True
        path = unquote_path(path_params_query(url))
        if group.gym2008_globs() is None and not path.startswith(group.patterns):
            return True  # no rule is a prefix of the path
        return _legacy_first_match(group, path)[0]

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
            for is_allow, pattern, line in group.rules():
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
        verdict, index = _legacy_first_match(group, path)
        if index is None:
            return Decision(True, None, None, "no rule matched")
        keyword = "Allow" if group.kind_at(index) == 1 else "Disallow"
        rule = f"{keyword}: {group.patterns[index]}"
        return Decision(verdict, group.line_at(index), rule, "first match")

    def _extra(self, user_agent: str, kind: int) -> Any:
        if type(user_agent) is not str:
            _, user_agent = _coerce("", user_agent)
        if self._syntax == RFC9309:
            token = self._rfc_token(user_agent)
            for group in self._rfc_groups(user_agent):
                for agent_index, value in enumerate(group.agents):
                    applies = (
                        is_global_value(value) if token is None else group_token(value) == token
                    )
                    if applies:
                        found = group.extra(kind, agent_index)
                        if found is not None:
                            return found
                        break
            return None
        group = self._legacy_record(user_agent, with_rules=False, extra=kind)
        if group is None:
            return None
        for _, extra_kind, value in reversed(group.extras):
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
            lines = [f"User-agent: {agent}" for agent in group.agents]
            lines += [f"{'Allow' if a else 'Disallow'}: {p}" for a, p, _ in group.rules()]
            lines += [_render_extra(kind, value) for _, kind, value in group.extras]
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
            delay = group.crawl_delay_last()
            if not group.patterns and delay is None:
                continue  # a record with neither rules nor Crawl-delay (rerp drops those)
            record = "".join(f"User-agent: {name}\n" for name in group.agents)
            if delay:
                record += f"Crawl-delay: {delay}\n"
            record += "".join(f"{'Allow' if a else 'Disallow'}: {p}\n" for a, p, _ in group.rules())
            records.append(record)
        return text + "\n".join(records)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt {SYNTAX_NAMES[self._syntax]} groups={len(self._groups)} "
            f"sitemaps={len(self._sitemaps)}>"
        )


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
    rows, warnings = L.scan(text, syntax)
    junk: list[int] = []
    if syntax == RFC9309:
        groups, file_wide = _build_rfc(rows, warnings, junk)
    else:
        groups, file_wide = _build_legacy(rows, warnings, junk, syntax)
    if junk:
        warnings += L.junk_warnings(text, junk)
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


def _build_rfc(
    rows: list[L.RfcRow], warnings: list[ParseWarning], junk: list[int]
) -> tuple[tuple[_StoredGroup, ...], _FileWide]:
    built: list[_Builder] = []
    current: _Builder | None = None
    in_rules = False
    file_wide = _FileWide()
    # The current group's lists, held in locals: this loop runs once per line of every file.
    patterns: list[str] = []
    lines: list[int] = []
    kinds = bytearray()
    ALLOW, DISALLOW, USER_AGENT = L.ALLOW, L.DISALLOW, L.USER_AGENT
    kind_of = L.rfc_kind
    known = L.RFC_KIND
    line = 0
    for key, value, bare_key, bare_value, other in rows:
        line += 1
        if key:
            kind = known.get(key)
            if kind is None:
                kind = kind_of(key)
            value = value.rstrip(" \t\v\f")
        elif bare_key:
            kind = kind_of(bare_key)
            value = bare_value
        else:
            if other and other != "#":
                junk.append(line)
            continue
        if kind == DISALLOW or kind == ALLOW:
            if current is None:
                warnings.append(ParseWarning(line, value, "rule before any User-agent, ignored"))
                continue
            in_rules = True
            if not value.isascii() or "%" in value:
                value = escape_pattern(value)
            patterns.append(intern(value))
            lines.append(line)
            if kind == DISALLOW:
                kinds.append(0)
                continue
            kinds.append(1)
            # google: Allow .../index.htm(l) also allows the directory itself.
            slash = value.rfind("/")
            if slash != -1 and value.startswith("/index.htm", slash):
                patterns.append(intern(value[: slash + 1] + "$"))
                lines.append(line)
                kinds.append(1)
        elif kind == USER_AGENT:
            if current is None or in_rules:
                current = _Builder(line)
                built.append(current)
                patterns, lines, kinds = current.patterns, current.lines, current.kinds
                in_rules = False
            current.agents.append(intern(value))
        elif file_wide.add(kind, value):
            pass
        else:  # Crawl-delay, Request-rate, Visit-time: per group, for the agents named so far
            if current is None:
                warnings.append(
                    ParseWarning(line, value, f"{L.KIND_NAMES[kind]} outside a group, ignored")
                )
                continue
            parsed = _extension(kind, value, line, warnings)
            if parsed is not None:
                current.extras.append((len(current.agents), kind, parsed))
    return tuple(_StoredGroup(b, RFC9309) for b in built), file_wide


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
    return tuple(_StoredGroup(r, syntax) for r in ordered), file_wide
