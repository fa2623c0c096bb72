"""The parsed robots.txt (``RobotsTxt``, built by ``parse``) and the queries on it."""

from __future__ import annotations

import itertools
import pickle
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from . import _lines as L
from ._agents import caller_tokens, group_token, is_global_value, unicode_name
from ._constants import GYM2008, MK1996, RFC9309, SYNTAX_NAMES, check_syntax
from ._directives import (
    CONTENT_SIGNAL,
    DIRECTIVES,
    FILE,
    GROUP,
    KIND_OF_NAME,
    USAGE_KINDS,
    RequestRate,
    VisitTime,
)
from ._groups import (
    STAR,
    Extra,
    StoredGroup,
    build_legacy,
    build_rfc,
)
from ._lines import ParseWarning
from ._match import (
    ROBOTS_PATH,
    Rules,
    compile_rules,
    gym2008_globs,
    legacy_first_match,
    longest,
    rfc_allows,
)
from ._patterns import (
    ABSOLUTE_URL,
    Glob,
    escape_pattern,
    path_params_query,
    pattern_matches,
    unquote_path,
)
from ._pickling import PICKLE_FORMAT, parts_from_state, pickled_state
from ._render import render_extra, render_rerp, render_rfc, render_urllib
from ._shared import SharedTable, clear_shared_tables, str_bytes
from ._usage import UNKNOWN, UsageDecision, combined, preference, usage_category

__all__ = ["Decision", "Group", "RobotsTxt", "UsageDecision", "clear_shared_tables", "parse"]

_ABSOLUTE_URL = ABSOLUTE_URL.match
# RobotsTxt._origin before the first query: any scheme://authority/ would do, since every URL
# that starts with one has its path from that last "/"; this one names no real site.
_NO_ORIGIN = "x://\x00/"
# What a parsed object remembers of its queries (RobotsTxt._memo) is dropped past this many
# entries: a crawl asks each site with a few user agents.
_MEMO_SIZE = 64
_NO_INDEX: dict[str, tuple[int, ...]] = {}  # the index of a file naming no crawler
_ALLOW_EVERYTHING = Rules(())  # what applies when no group does (RFC 9309)

_KIND_OF_NAME = KIND_OF_NAME


def _kind_named(name: object, scope: str) -> int:
    """The kind of the directive called *name* (any case), which must be of *scope*."""
    if not isinstance(name, str):
        raise TypeError(f"name must be str, not {type(name).__name__}")
    kind = _KIND_BY_LOWER_NAME.get(name.lower())
    if kind is None or DIRECTIVES[kind].scope != scope:
        names = [d.name for d in DIRECTIVES if d.scope == scope]
        raise ValueError(f"{name!r} is not one of the directives {', '.join(names)}")
    return kind


_KIND_BY_LOWER_NAME = {name.lower(): kind for name, kind in KIND_OF_NAME.items()}


def _agent_key(value: str) -> str:
    """The token a User-agent value names: "*" for the global group, "" for none."""
    key = _AGENT_KEYS.get(value)
    if key is None:
        key = "*" if is_global_value(value) else group_token(value)
        _AGENT_KEYS.put(value, key, str_bytes(value) + str_bytes(key))
    return key


# User-agent value -> the token it names (most files name the same few crawlers): the tokens,
# kept in every index, are shared strings.
_AGENT_KEYS: SharedTable[str, str] = SharedTable(0.1)


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


class _LegacyRules(NamedTuple):
    """rerp's record for an agent (MK1996/GYM2008), with its wildcard rules split (GYM2008)."""

    record: StoredGroup | None  # None: no record applies
    globs: dict[int, Glob] | None


_NO_RECORD = _LegacyRules(None, None)


class RobotsTxt:
    """An immutable parsed robots.txt. Build one with :func:`parse`.

    Queries take the URL first, then the user agent. In RFC9309 the user agent may be a bare
    product token (``MyBot``) or a whole User-Agent header; URLs are matched as given, without
    %-decoding (pass them %-encoded, as Scrapy does).

    Threads may share one: what queries remember (``_memo``, ``_origin``) is only ever added to
    or replaced whole, never iterated, and a lost update only costs the work again.
    """

    __slots__ = (
        "_syntax",
        "_groups",
        "_index",
        "_global",
        "_global_rules",
        "_file_values",
        "_warnings",
        "_origin",
        "_memo",
    )

    def __init__(self) -> None:
        raise TypeError("use scrapy_rerp.parse() or RobotsTxt.allow_all()/disallow_all()")

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    def _from_parts(
        syntax: int,
        groups: tuple[StoredGroup, ...],
        file_values: dict[int, tuple[str, ...]],
        warnings: tuple[ParseWarning, ...],
    ) -> RobotsTxt:
        self = object.__new__(RobotsTxt)
        store = object.__setattr__  # past this class's own __setattr__, which refuses
        store(self, "_syntax", syntax)
        store(self, "_groups", groups)
        # FILE directive kind -> its values in file order (only the kinds with values).
        store(self, "_file_values", file_values)
        store(self, "_warnings", warnings)
        # RFC 9309: each product token named in the file -> its groups' positions in _groups,
        # and the * groups' positions.
        index, global_positions = _index_groups(syntax, groups)
        store(self, "_index", index)
        store(self, "_global", global_positions)
        # The * groups' rules, compiled on the first query that needs them.
        store(self, "_global_rules", None)
        # The scheme://authority/ of the last URL asked about, so that the next URL of the
        # same site needs no parsing.
        store(self, "_origin", _NO_ORIGIN)
        # Created on the first query: user agent -> the rules that apply to it (RFC9309, in a
        # file that names crawlers: its compiled Rules, also kept under the token that picked
        # them; MK1996/GYM2008: rerp's record, also kept under the record's position).
        store(self, "_memo", None)
        return self

    @classmethod
    def allow_all(cls, syntax: int = RFC9309) -> RobotsTxt:
        """A robots.txt that allows everything (what RFC 9309 says a 4xx means)."""
        return RobotsTxt._from_parts(check_syntax(syntax), (), {}, ())

    @classmethod
    def disallow_all(cls, syntax: int = RFC9309) -> RobotsTxt:
        """A robots.txt that disallows everything (``User-agent: *`` / ``Disallow: /``)."""
        return parse("User-agent: *\nDisallow: /\n", syntax)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("RobotsTxt objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("RobotsTxt objects are immutable")

    # -- pickling ---------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as PICKLE_FORMAT and the parsed content in plain, documented terms (README,
        "Pickles"), not the stored layout: a later version reads it or says it cannot."""
        state = pickled_state(self._syntax, self._groups, self._file_values, self._warnings)
        return (_unpickle, (PICKLE_FORMAT, state))

    @staticmethod
    def _build(*state: Any) -> RobotsTxt:
        # What pickles made before PICKLE_FORMAT call: their stored layout is gone.
        raise pickle.UnpicklingError(
            "this RobotsTxt was pickled by an older scrapy_rerp (before pickle format 1) and "
            "cannot be read: parse its robots.txt again"
        )

    # -- plain properties -----------------------------------------------------------------

    @property
    def syntax(self) -> int:
        return self._syntax  # type: ignore[no-any-return]

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order, as written."""
        return self._file_values.get(L.SITEMAP, ())  # type: ignore[no-any-return]

    @property
    def host(self) -> str | None:
        """The first ``Host:`` value (a preferred host name), if any."""
        return next(iter(self.file_values("Host")), None)

    @property
    def clean_params(self) -> tuple[str, ...]:
        """``Clean-param:`` values, kept but not applied."""
        return self._file_values.get(L.CLEAN_PARAM, ())  # type: ignore[no-any-return]

    def file_values(self, name: str) -> tuple[str, ...]:
        """The values of the file-wide directive *name* (``"Sitemap"``, ``"Host"``...), in file
        order; for a directive of which only the first non-empty value counts (Host), that one.

        Raises ValueError for a name that is no file-wide directive.
        """
        kind = _kind_named(name, FILE)
        values = self._file_values.get(kind, ())
        if DIRECTIVES[kind].first_only:
            return tuple(itertools.islice(filter(None, values), 1))
        return values  # type: ignore[no-any-return]

    def group_value(self, name: str, user_agent: str) -> Any:
        """The value of the per-group directive *name* (``"Crawl-delay"``...) that applies to
        *user_agent*, as the directive reads it, or None: what :meth:`crawl_delay` and its
        siblings answer, for any directive of the table.

        Raises ValueError for a name that is no per-group directive.
        """
        return self._extra(user_agent, _kind_named(name, GROUP))

    @property
    def warnings(self) -> tuple[ParseWarning, ...]:
        """Lines skipped or partly understood, with 1-based line numbers."""
        return self._warnings  # type: ignore[no-any-return]

    @property
    def groups(self) -> tuple[Group, ...]:
        """The groups (records) as parsed, in file order (legacy: rerp's order, ``*`` last)."""
        return tuple(Group(g.agents, g.rules(), g.first_line) for g in self._groups)

    # -- what queries remember --------------------------------------------------------------

    def _memo_for_update(self) -> dict[str | int, Any]:
        """The memo, to add to: created on first use, emptied when full (never iterated, so
        that other threads may read and add to it meanwhile)."""
        memo: dict[str | int, Any] | None = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        elif len(memo) >= _MEMO_SIZE:
            memo.clear()
        return memo

    # -- resolving the user agent ---------------------------------------------------------

    def _rfc_token(self, user_agent: str) -> str | None:
        """The token whose groups apply, or None for the ``*`` groups."""
        if not self._index:
            return None
        for token in caller_tokens(user_agent):
            if token in self._index:
                return token
        return None

    def _rfc_groups(self, user_agent: str) -> tuple[StoredGroup, ...]:
        token = self._rfc_token(user_agent)
        positions = self._global if token is None else self._index[token]
        return tuple(self._groups[position] for position in positions)

    def _rfc_rules(self, user_agent: str) -> Rules:
        """The compiled rules for *user_agent*, compiled on its first query."""
        index = self._index
        token = self._rfc_token(user_agent) if index else None
        if token is None:
            rules = self._global_rules
            if rules is None:
                rules = self._compile(self._global)
                object.__setattr__(self, "_global_rules", rules)
            if not index:
                return rules  # type: ignore[no-any-return]
            memo = self._memo_for_update()
        else:
            memo = self._memo_for_update()
            rules = memo.get(token)
            if rules is None:
                rules = memo[token] = self._compile(index[token])
        memo[user_agent] = rules  # which groups apply depends on the user agent
        return rules  # type: ignore[no-any-return]

    def _compile(self, positions: tuple[int, ...]) -> Rules:
        if not positions:
            return _ALLOW_EVERYTHING
        return compile_rules(tuple(self._groups[position] for position in positions))

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
        object.__setattr__(self, "_origin", url[: match.start(1) + 1])
        return path

    def _legacy_rules(self, user_agent: str) -> _LegacyRules:
        """rerp's record for *user_agent* and its split wildcard rules, remembered."""
        memo = self._memo_for_update()
        position = self._legacy_position(user_agent, with_rules=True)
        if position is None:
            found = _NO_RECORD
        else:
            # Agents that share a record share its split wildcard rules.
            found = memo.get(position)
            if found is None:
                record = self._groups[position]
                globs = gym2008_globs(record) if self._syntax == GYM2008 else None
                found = memo[position] = _LegacyRules(record, globs)
        memo[user_agent] = found
        return found  # type: ignore[no-any-return]

    def _legacy_position(
        self, user_agent: str, with_rules: bool, extra: tuple[int, ...] = ()
    ) -> int | None:
        """The position of rerp's first matching record; records without rules count only when
        they carry one of the *extra* directives asked for (rerp dropped them: a
        Crawl-delay-only record was lost)."""
        agent = user_agent.lower()
        for position, group in enumerate(self._groups):
            if not group.patterns and (
                with_rules or not any(e.kind in extra for e in group.extras)
            ):
                continue
            if _legacy_agent_index(group, agent) is not None:
                return position
        return None

    # -- queries --------------------------------------------------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        """True if *user_agent* may fetch *url*."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        if self._syntax != RFC9309:
            return self._legacy_allowed(url, user_agent)
        if self._index:
            memo = self._memo
            rules = memo.get(user_agent) if memo is not None else None
        else:  # no group names a crawler: the * groups apply to all
            rules = self._global_rules
        if rules is None:
            rules = self._rfc_rules(user_agent)
        origin = self._origin
        if url.startswith(origin):  # a URL of the site asked about before
            path = url[len(origin) - 1 :]
            if "#" in path:
                path = path[: path.index("#")]
        else:
            path = self._path(url)
        if not rules.prefixes_only:
            return rfc_allows(rules, path)
        disallow = rules.disallow
        if not path.startswith(disallow):
            return True
        allow = rules.allow
        if allow and path.startswith(allow) and longest(allow, path) >= longest(disallow, path):
            return True
        return path == ROBOTS_PATH

    def _legacy_allowed(self, url: str, user_agent: str) -> bool:
        memo = self._memo
        found = memo.get(user_agent) if memo is not None else None
        record, globs = found if found is not None else self._legacy_rules(user_agent)
        if record is None:
            return True
        path = unquote_path(path_params_query(url))
        if globs is None and not path.startswith(record.patterns):
            return True  # no rule is a prefix of the path
        return legacy_first_match(record, globs, path)[0]

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
        longest = {True: 0, False: 0}  # a rule no longer than these cannot change the verdict
        for group in groups:
            for index, pattern in enumerate(group.patterns):
                is_allow = group.is_allow(index)
                priority = len(pattern)
                if priority <= longest[is_allow] or not pattern_matches(path, pattern):
                    continue  # (an empty pattern has priority 0: it never matches)
                longest[is_allow] = priority
                best[is_allow] = (priority, pattern, group.line_of(index))
        allow, disallow = best.get(True), best.get(False)
        if disallow is not None and (allow is None or disallow[0] > allow[0]):
            return Decision(False, disallow[2], f"Disallow: {disallow[1]}", "longest match")
        if allow is not None:
            return Decision(True, allow[2], f"Allow: {allow[1]}", "longest match")
        return Decision(True, None, None, "no rule matched")

    def _decide_legacy(self, path: str, user_agent: str) -> Decision:
        group, globs = self._legacy_rules(user_agent)  # its split wildcard rules remembered
        if group is None:
            return Decision(True, None, None, "no record applies to this user agent")
        verdict, index = legacy_first_match(group, globs, path)
        if index is None:
            return Decision(True, None, None, "no rule matched")
        keyword = "Allow" if group.is_allow(index) else "Disallow"
        rule = f"{keyword}: {group.patterns[index]}"
        return Decision(verdict, group.line_of(index), rule, "first match")

    def _rfc_agent_indexes(self, user_agent: str) -> list[tuple[StoredGroup, int]]:
        """The groups that apply to *user_agent*, each with the position among its agents of
        the one that names it (per-group values apply to the agents named before them)."""
        key = self._rfc_token(user_agent) or "*"
        found = []
        for group in self._rfc_groups(user_agent):
            for agent_index, value in enumerate(group.agents):
                if _agent_key(value) == key or (not value.isascii() and unicode_name(value) == key):
                    found.append((group, agent_index))
                    break
        return found

    def _extra(self, user_agent: str, kind: int) -> Any:
        """The per-group value of directive *kind* that applies to *user_agent*, or None."""
        if type(user_agent) is not str:
            _, user_agent = _coerce("", user_agent)
        if self._syntax == RFC9309:
            for group, agent_index in self._rfc_agent_indexes(user_agent):
                found = group.extra(kind, agent_index)
                if found is not None:
                    return found
            return None
        position = self._legacy_position(user_agent, with_rules=False, extra=(kind,))
        if position is None:
            return None
        return self._groups[position].last_extra(kind)  # rerp: the last Crawl-delay wins

    def crawl_delay(self, user_agent: str) -> float | None:
        """Seconds to wait between requests, from the group that applies, or None."""
        return self._extra(user_agent, L.CRAWL_DELAY)  # type: ignore[no-any-return]

    def request_rate(self, user_agent: str) -> RequestRate | None:
        return self._extra(user_agent, L.REQUEST_RATE)  # type: ignore[no-any-return]

    def visit_time(self, user_agent: str) -> VisitTime | None:
        return self._extra(user_agent, L.VISIT_TIME)  # type: ignore[no-any-return]

    def usage(self, url: str, user_agent: str, category: str) -> UsageDecision:
        """What the site says about using *url* for *category* (``"train-ai"``, ``"search"``,
        ``"ai-input"``; Content-Signal's ``"ai-train"`` is read as ``"train-ai"``).

        The groups that apply to *user_agent* are the ones Allow/Disallow use. Their
        ``Content-Usage`` rules are matched like Allow/Disallow paths, the longest path winning
        (a rule without a path counts as the shortest); their ``Content-Signal`` lines apply to
        the whole group. The statements chosen are combined as draft-ietf-aipref-vocab says:
        ``disallowed`` if any disallows, else ``allowed`` if any allows, else ``unknown``. A URL
        that may not be crawled has no usage preference (``unknown``, with the rule that
        disallows it), as draft-ietf-aipref-attach says.
        """
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        category = usage_category(category)
        path = path_params_query(url)
        if self._syntax == RFC9309:
            crawl = self._decide_rfc(path, user_agent)
        else:
            path = unquote_path(path)
            crawl = self._decide_legacy(path, user_agent)
        if not crawl.allowed:
            return UsageDecision(
                UNKNOWN, crawl.line, crawl.rule, "may not be crawled: no usage preference applies"
            )
        if self._syntax == RFC9309:
            statements = [
                extra
                for group, agent_index in self._rfc_agent_indexes(user_agent)
                for extra in group.extras_of(USAGE_KINDS, agent_index)
            ]
        else:
            position = self._legacy_position(user_agent, with_rules=False, extra=USAGE_KINDS)
            if position is None:
                statements = []
            else:
                record = self._groups[position]
                # Lines between two User-agent lines apply to the agents named before them.
                statements = record.extras_of(
                    USAGE_KINDS, _legacy_agent_index(record, user_agent.lower())
                )
        if not statements:
            return UsageDecision(UNKNOWN, None, None, "no usage preference for this user agent")
        return _usage_decision(self._chosen_statements(statements, path), category)

    def _chosen_statements(self, statements: list[Extra], path: str) -> list[Extra]:
        """The Content-Usage rules with the longest path matching *path*, and every
        Content-Signal line."""
        chosen: list[Extra] = []
        longest_match = -1
        for extra in statements:
            if extra.kind == CONTENT_SIGNAL:
                continue
            length = self._usage_path_match(extra.value.path, path)
            if length > longest_match:
                chosen, longest_match = [extra], length
            elif length == longest_match and length >= 0:
                chosen.append(extra)
        chosen += [extra for extra in statements if extra.kind == CONTENT_SIGNAL]
        return sorted(chosen, key=attrgetter("line"))  # a decision names the first line

    def _usage_path_match(self, pattern: str | None, path: str) -> int:
        """How long a match *pattern* (a Content-Usage rule's path) is for *path*: its length
        in the syntax's reading of rules, 0 for a rule without a path, -1 for no match."""
        if pattern is None:
            return 0
        if self._syntax == RFC9309:
            pattern = escape_pattern(pattern)
            return len(pattern) if pattern_matches(path, pattern) else -1
        pattern = unquote_path(pattern)
        if self._syntax == MK1996:
            return len(pattern) if path.startswith(pattern) else -1
        return len(pattern) if pattern_matches(path, pattern) else -1

    # -- rendering ------------------------------------------------------------------------

    def __str__(self) -> str:
        if self._syntax != RFC9309:
            return render_rerp(self._groups, self.sitemaps)
        return render_rfc(self._groups, self.file_values)

    def _render_urllib(self) -> str:
        return render_urllib(self._groups)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt {SYNTAX_NAMES[self._syntax]} groups={len(self._groups)} "
            f"sitemaps={len(self.sitemaps)}>"
        )


def _index_groups(
    syntax: int, groups: tuple[StoredGroup, ...]
) -> tuple[dict[str, tuple[int, ...]], tuple[int, ...]]:
    """Map each product token to the positions of the groups that apply to it (RFC 9309), once
    per parse.

    Returns ``(index, global positions)``: the index maps a token to its groups' positions in
    file order, merged as RFC 9309 section 2.2.1 asks; the global ones are the ``*`` groups'.
    """
    if syntax != RFC9309 or not groups:
        return _NO_INDEX, ()
    if len(groups) == 1 and groups[0].agents is STAR:
        return _NO_INDEX, _ONE_POSITION[0]
    by_token: dict[str, tuple[int, ...]] = {}
    global_positions: tuple[int, ...] = ()
    known_key = _AGENT_KEYS.recent.get
    for position, group in enumerate(groups):
        # Most tokens name one group, among a file's first: their tuples are shared (most files
        # are parsed to be kept, and one tuple per token would be a fifth of what a group costs).
        one = _ONE_POSITION[position] if position < 256 else (position,)
        for value in group.agents:
            key = known_key(value) or _agent_key(value)
            if key == "*":
                if not global_positions or global_positions[-1] != position:
                    global_positions += one
                continue
            if not key:
                continue
            found = by_token.get(key)
            if found is None:
                by_token[key] = one
            elif found[-1] != position:
                by_token[key] = found + one
            if not value.isascii():
                name = unicode_name(value)
                if name is not None:
                    found = by_token.get(name)
                    if found is None:
                        by_token[name] = one
                    elif found[-1] != position:
                        by_token[name] = found + one
    return by_token or _NO_INDEX, global_positions


_ONE_POSITION = tuple((position,) for position in range(256))


def _legacy_agent_index(record: StoredGroup, agent: str) -> int | None:
    """The position in *record* of rerp's first name for the lower-cased *agent* (``*``, or a
    name the agent contains), or None."""
    for index, name in enumerate(record.agents):
        if name == "*" or name.lower() in agent:
            return index
    return None


def _usage_decision(statements: list[Extra], category: str) -> UsageDecision:
    """The statements' combined preference for *category* (draft-ietf-aipref-vocab 5.1), with
    the first statement that decided it."""
    decisions = []
    for extra in statements:
        outcome = preference(dict(extra.value.preferences), category)
        line_text = render_extra(extra.kind, extra.value)
        decisions.append(UsageDecision(outcome, extra.line, line_text, f"{category} {outcome}"))
    decision = combined(decisions)
    if decision is None or decision.preference == UNKNOWN:
        return UsageDecision(UNKNOWN, None, None, f"no statement that applies names {category}")
    return decision


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
    syntax = check_syntax(syntax)
    text = L.decode(content, syntax)
    warnings: list[ParseWarning] = []
    if syntax == RFC9309:
        groups, file_wide = build_rfc(text, warnings)
    else:
        rows, warnings = L.scan_legacy(text)
        junk: list[int] = []
        groups, file_wide = build_legacy(rows, warnings, junk)
        if junk:
            warnings += L.junk_warnings(text.split("\n"), junk)
    if warnings:
        warnings.sort()
    return RobotsTxt._from_parts(syntax, groups, file_wide.stored(), tuple(warnings))


def _unpickle(pickle_format: object, state: Any) -> RobotsTxt:
    """A RobotsTxt from what ``RobotsTxt.__reduce__`` gave (pickles name this function)."""
    return RobotsTxt._from_parts(*parts_from_state(pickle_format, state))
