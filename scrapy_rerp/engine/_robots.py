"""The parsed robots.txt (``RobotsTxt``, built by ``parse``) and the queries on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from . import _groups, _match
from . import _lines as L
from ._agents import caller_tokens, group_token, is_global_value
from ._constants import GYM2008, RFC9309, SHARED_ENTRY_MAX, SYNTAX_NAMES, check_syntax
from ._directives import RequestRate, VisitTime
from ._groups import (
    AGENTS,
    EXTRAS,
    FIRST_LINE,
    PATTERNS,
    STAR,
    StoredGroup,
    as_groups,
    build_legacy,
    build_rfc,
    crawl_delay_last,
    group_extra,
    group_rules,
    kind_at,
    line_at,
)
from ._lines import ParseWarning
from ._match import ROBOTS_PATH, Rules, gym2008_globs, legacy_first_match, longest, rfc_allows
from ._patterns import (
    ABSOLUTE_URL,
    Glob,
    path_params_query,
    pattern_matches,
    unquote_path,
)

_ABSOLUTE_URL = ABSOLUTE_URL.match
# RobotsTxt._origin before the first query: any scheme://authority/ would do, since every URL
# that starts with one has its path from that last "/"; this one names no real site.
_NO_ORIGIN = "x://\x00/"
_LEGACY_MEMO_SIZE = 16
_NO_INDEX: dict[str, Any] = {}  # RobotsTxt._index of a file with no specific group; never written
# User agent -> its product token, for agents that have one (or none: ""), as caller_tokens
# reads them; shared by every parsed file, so a crawl's agent is read once.
_TOKEN_OF_AGENT: dict[str, str] = {}
_TOKEN_MEMO_SIZE = 4096
# User-agent value -> the token it names ("*" for the global group, "" for none).
_AGENT_KEYS: dict[str, str] = {}
_AGENT_KEY_MEMO_SIZE = 8192


def clear_shared_tables() -> None:
    """Empty the bounded tables that parsed files share (agents read, rules compiled, wildcard
    rules split). Nothing needs it; the benchmark calls it so that a repeat starts cold."""
    _TOKEN_OF_AGENT.clear()
    _AGENT_KEYS.clear()
    _groups.clear_tables()
    _match.clear_tables()
    caller_tokens.cache_clear()


def _remember_token(user_agent: str, token: str) -> None:
    if len(user_agent) > SHARED_ENTRY_MAX:
        return
    if len(_TOKEN_OF_AGENT) >= _TOKEN_MEMO_SIZE:
        _TOKEN_OF_AGENT.clear()
    _TOKEN_OF_AGENT[user_agent] = token


def _agent_key(value: str) -> str:
    key = "*" if is_global_value(value) else group_token(value)
    if len(value) > SHARED_ENTRY_MAX:
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
        groups: tuple[StoredGroup, ...],
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

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt as parse() builds it; the token index and what queries remember are not kept.
        state = (
            self._syntax,
            self._groups,
            self._sitemaps,
            self._host,
            self._clean_params,
            self._warnings,
        )
        return (RobotsTxt._build, state)

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
        return tuple(Group(g[AGENTS], group_rules(g), g[FIRST_LINE]) for g in self._groups)

    # -- resolving the user agent ---------------------------------------------------------

    def _rfc_token(self, user_agent: str) -> str | None:
        """The token whose groups apply, or None for the ``*`` groups."""
        for token in caller_tokens(user_agent):
            if token in self._index:
                return token
        return None

    def _rfc_groups(self, user_agent: str) -> tuple[StoredGroup, ...]:
        token = self._rfc_token(user_agent)
        rules = self._global if token is None else self._index[token]
        if rules is None:
            return ()
        return as_groups(rules.groups if isinstance(rules, Rules) else rules)

    def _rfc_rules(self, user_agent: str) -> Rules | None:
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
                if not isinstance(rules, Rules):
                    rules = index[token] = Rules(rules)
                return rules
        rules = self._global
        if rules is not None and not isinstance(rules, Rules):
            rules = Rules(rules)
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

    def _legacy_rules(self, user_agent: str) -> tuple[StoredGroup | None, dict[int, Glob] | None]:
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
                    globs = gym2008_globs(group)
            found = memo[user_agent] = (group, globs)
        return found  # type: ignore[no-any-return]

    def _legacy_record(
        self, user_agent: str, with_rules: bool, extra: int | None = None
    ) -> StoredGroup | None:
        """rerp's first matching record; records without rules count only when they carry the
        *extra* directive asked for (rerp dropped them: a Crawl-delay-only record was lost)."""
        agent = user_agent.lower()
        for group in self._groups:
            if not group[PATTERNS] and (
                with_rules or not any(kind == extra for _, kind, _ in group[EXTRAS])
            ):
                continue
            for name in group[AGENTS]:
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
        if type(rules) is not Rules:
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
            return rfc_allows(rules, path)
        disallow = rules.disallow
        if not path.startswith(disallow):
            return True
        allow = rules.allow
        if allow and path.startswith(allow) and longest(allow, path) >= longest(disallow, path):
            return True
        return path == ROBOTS_PATH

    def _legacy_allowed(self, url: str, user_agent: str) -> bool:
        memo = self._legacy_memo
        found = memo.get(user_agent) if memo is not None else None
        group, globs = found if found is not None else self._legacy_rules(user_agent)
        if group is None:
            return True
        path = unquote_path(path_params_query(url))
        if globs is None and not path.startswith(group[PATTERNS]):
            return True  # no rule is a prefix of the path
        return legacy_first_match(group, globs, path)[0]

    def decide(self, url: str, user_agent: str) -> Decision:
        """The verdict for *url* and the line that decided it (slower than :meth:`allowed`)."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        path = path_params_query(url)
        if self._syntax == RFC9309:
            return self._decide_rfc(path, user_agent)
        return self._decide_legacy(unquote_path(path), user_agent)

    def _decide_rfc(self, path: str, user_agent: str) -> Decision:
        if path == ROBOTS_PATH:
            return Decision(True, None, None, "/robots.txt is always allowed")
        groups = self._rfc_groups(user_agent)
        if not groups:
            return Decision(True, None, None, "no group applies to this user agent")
        best: dict[bool, tuple[int, str, int]] = {}
        for group in groups:
            for is_allow, pattern, line in group_rules(group):
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
        globs = gym2008_globs(group) if self._syntax == GYM2008 else None
        verdict, index = legacy_first_match(group, globs, path)
        if index is None:
            return Decision(True, None, None, "no rule matched")
        keyword = "Allow" if kind_at(group, index) == 1 else "Disallow"
        rule = f"{keyword}: {group[PATTERNS][index]}"
        return Decision(verdict, line_at(group, index), rule, "first match")

    def _extra(self, user_agent: str, kind: int) -> Any:
        if type(user_agent) is not str:
            _, user_agent = _coerce("", user_agent)
        if self._syntax == RFC9309:
            key = self._rfc_token(user_agent) or "*"
            for group in self._rfc_groups(user_agent):
                for agent_index, value in enumerate(group[AGENTS]):
                    if _agent_key(value) == key:
                        found = group_extra(group, kind, agent_index)
                        if found is not None:
                            return found
                        break
            return None
        group = self._legacy_record(user_agent, with_rules=False, extra=kind)
        if group is None:
            return None
        for _, extra_kind, value in reversed(group[EXTRAS]):
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
            lines = [f"User-agent: {agent}" for agent in group[AGENTS]]
            lines += [f"{'Allow' if a else 'Disallow'}: {p}" for a, p, _ in group_rules(group)]
            lines += [_render_extra(kind, value) for _, kind, value in group[EXTRAS]]
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
            delay = crawl_delay_last(group)
            if not group[PATTERNS] and delay is None:
                continue  # a record with neither rules nor Crawl-delay (rerp drops those)
            record = "".join(f"User-agent: {name}\n" for name in group[AGENTS])
            if delay:
                record += f"Crawl-delay: {delay}\n"
            record += "".join(
                f"{'Allow' if a else 'Disallow'}: {p}\n" for a, p, _ in group_rules(group)
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


def _index_groups(syntax: int, groups: tuple[StoredGroup, ...]) -> tuple[dict[str, Any], Any]:
    """Map each product token to the groups that apply to it (RFC 9309), once per parse.

    Returns ``(index, global)``: the index maps a token, and global stands for ``*``, to its
    group, or a tuple of its groups, until the first query for it compiles them into ``Rules``
    in place.
    """
    index: dict[str, Any] = _NO_INDEX  # shared: most files name no crawler
    global_rules: Any = None
    if syntax != RFC9309 or not groups:
        return index, global_rules
    if len(groups) == 1 and groups[0][AGENTS] is STAR:
        return index, groups[0]
    by_token: dict[str, Any] = {}
    merged: dict[str, list[StoredGroup]] = {}  # tokens with more than one group
    global_groups: list[StoredGroup] = []
    key_of = _AGENT_KEYS.get
    for group in groups:
        for value in group[AGENTS]:
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


def parse(content: str | bytes, syntax: int = RFC9309) -> RobotsTxt:
    """Parse a robots.txt body. Never raises on content; bad lines become ``warnings``.

    Raises TypeError if *content* is neither str nor bytes and ValueError for an unknown syntax.
    """
    check_syntax(syntax)
    text = L.decode(content, syntax)
    warnings: list[ParseWarning] = []
    if syntax == RFC9309:
        groups, file_wide = build_rfc(text, warnings)
    else:
        rows, warnings = L.scan_legacy(text)
        junk: list[int] = []
        groups, file_wide = build_legacy(rows, warnings, junk, syntax)
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
