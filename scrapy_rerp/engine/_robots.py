"""The parsed robots.txt (``RobotsTxt``, built by ``parse``): what every syntax answers alike.

How a file is read depends on its syntax family, and each family is a subclass of its own:
``_rfc9309.Rfc9309RobotsTxt`` (RFC 9309: groups merged per product token, the longest rule
wins) and ``_legacy.LegacyRobotsTxt`` (rerp's MK1996 and GYM2008: the first matching record,
the first matching rule). Subclasses, not readers that ``RobotsTxt`` calls: a delegated call would
cost every ``allowed()`` a Python call, and a subclass costs nothing (docs/design.rst).
"""

from __future__ import annotations

import itertools
import pickle
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, ClassVar, NamedTuple

from . import _lines as L
from ._agents import caller_tokens
from ._constants import RFC9309, SYNTAX_NAMES, as_text, check_syntax
from ._directives import (
    CONTENT_SIGNAL,
    DIRECTIVES,
    FILE,
    GROUP,
    KIND_OF_NAME,
    LICENSE,
    USAGE_KINDS,
    RequestRate,
    VisitTime,
    is_license_url,
)
from ._groups import Extra, StoredGroup
from ._lines import ParseWarning
from ._patterns import pattern_matches
from ._pickling import PICKLE_FORMAT, parts_from_state, pickled_state
from ._render import render_extra, render_urllib
from ._shared import clear_shared_tables
from ._usage import ALLOWED, DISALLOWED, UNKNOWN, UsageDecision, preference, usage_category

__all__ = ["Decision", "Group", "RobotsTxt", "UsageDecision", "clear_shared_tables", "parse"]

# What a parsed object remembers of its queries (RobotsTxt._memo) is dropped past this many
# entries: a crawl asks each site with a few user agents.
_MEMO_SIZE = 64


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


#: :meth:`RobotsTxt.usage` of a URL that may be crawled, when the groups that apply state no
#: usage preference.
NO_USAGE_STATED = UsageDecision(UNKNOWN, None, None, "no usage preference for this user agent")


class RobotsTxt:
    """An immutable parsed robots.txt. Build one with :func:`parse`.

    Queries take the URL first, then the user agent. In RFC9309 the user agent may be a bare
    product token (``MyBot``) or a whole User-Agent header; URLs are matched as given, without
    %-decoding (pass them %-encoded, as Scrapy does).

    Threads may share one: what queries remember (``_memo``, and RFC9309's ``_origin``) is only
    ever added to or replaced whole, never iterated, and a lost update only costs the work again.
    """

    __slots__ = ("_syntax", "_groups", "_file_values", "_warnings", "_memo", "_states_usage")
    # The slots' types (set once, past __setattr__, by _from_parts and _prepare).
    _syntax: int
    _groups: tuple[StoredGroup, ...]
    _file_values: dict[int, tuple[str, ...]]
    _warnings: tuple[ParseWarning, ...]
    _memo: dict[object, Any] | None
    _states_usage: bool

    # Syntax -> the subclass that reads it; each subclass names its syntaxes when defined.
    _FAMILY_OF_SYNTAX: ClassVar[dict[int, type[RobotsTxt]]] = {}

    def __init_subclass__(cls, syntaxes: tuple[int, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for syntax in syntaxes:
            RobotsTxt._FAMILY_OF_SYNTAX[syntax] = cls

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
        self = object.__new__(RobotsTxt._FAMILY_OF_SYNTAX[syntax])
        store = object.__setattr__  # past this class's own __setattr__, which refuses
        store(self, "_syntax", syntax)
        store(self, "_groups", groups)
        # FILE directive kind -> its values in file order (only the kinds with values).
        store(self, "_file_values", file_values)
        store(self, "_warnings", warnings)
        # Created on the first query: what the family remembers of its queries.
        store(self, "_memo", None)
        store(
            self,
            "_states_usage",
            any(extra.kind in USAGE_KINDS for group in groups for extra in group.extras),
        )
        self._prepare()
        return self

    def _prepare(self) -> None:
        """What the syntax family builds once per parse, on top of the parts."""

    @staticmethod
    def _read(
        text: str,
    ) -> tuple[tuple[StoredGroup, ...], dict[int, tuple[str, ...]], tuple[ParseWarning, ...]]:
        """The groups, file-wide values and warnings of a decoded file, as the family reads
        it."""
        raise NotImplementedError

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
        return self._syntax

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order, as written."""
        return self._file_values.get(L.SITEMAP, ())

    @property
    def licenses(self) -> tuple[str, ...]:
        """RSL licence file URLs (``License:`` lines, wherever written), in file order: the
        absolute http(s) ones; any other is a warning (``relative-license``...) and not here."""
        values = self._file_values.get(LICENSE, ())
        return tuple(filter(is_license_url, values)) if values else ()

    @property
    def host(self) -> str | None:
        """The first ``Host:`` value (a preferred host name), if any."""
        return next(iter(self.file_values("Host")), None)

    @property
    def clean_params(self) -> tuple[str, ...]:
        """``Clean-param:`` values, kept but not applied."""
        return self._file_values.get(L.CLEAN_PARAM, ())

    def file_values(self, name: str) -> tuple[str, ...]:
        """The values of the file-wide directive *name* (``"Sitemap"``, ``"Host"``...), in file
        order; for a directive of which only the first non-empty value counts (Host), that one.

        Raises ValueError for a name that is no file-wide directive.
        """
        kind = _kind_named(name, FILE)
        values = self._file_values.get(kind, ())
        if DIRECTIVES[kind].first_only:
            return tuple(itertools.islice(filter(None, values), 1))
        return values

    def group_value(self, name: str, user_agent: str) -> Any:
        """The value of the per-group directive *name* (``"Crawl-delay"``...) that applies to
        *user_agent*, as the directive reads it, or None: what :meth:`crawl_delay` and its
        siblings answer, for any directive of the table.

        Raises ValueError for a name that is no per-group directive.
        """
        return self._group_value(user_agent, _kind_named(name, GROUP))

    @property
    def states_usage(self) -> bool:
        """Whether any group states a usage preference (``Content-Usage``, ``Content-Signal``):
        without one, :meth:`usage` of a URL that may be crawled is :data:`NO_USAGE_STATED`
        for every user agent and category, and a crawl need not ask (most files state none)."""
        return self._states_usage

    @property
    def warnings(self) -> tuple[ParseWarning, ...]:
        """Lines skipped or partly understood, with 1-based line numbers."""
        return self._warnings

    @property
    def groups(self) -> tuple[Group, ...]:
        """The groups (records) as parsed, in file order (legacy: rerp's order, ``*`` last)."""
        return tuple(Group(g.agents, g.rules(), g.first_line) for g in self._groups)

    # -- what queries remember --------------------------------------------------------------

    def _queries(self, user_agent: str) -> _AgentQueries:
        """What *user_agent*'s queries other than allowed() and usage() remember, in the memo
        (beside its compiled rules, under the agent, and usage statements, under the agent and
        category)."""
        memo = self._memo
        key = (user_agent, _QUERIES)
        queries = memo.get(key) if memo is not None else None
        if queries is None:
            queries = self._memo_for_update()[key] = _AgentQueries()
        return queries

    def _memo_for_update(self) -> dict[object, Any]:
        """The memo, to add to: created on first use, emptied when full (never iterated, so
        that other threads may read and add to it meanwhile)."""
        memo: dict[object, Any] | None = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        elif len(memo) >= _MEMO_SIZE:
            memo.clear()
        return memo

    # -- queries: each syntax family answers them its own way ------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        """True if *user_agent* may fetch *url*."""
        raise NotImplementedError

    def matched_agents(self, user_agent: str) -> tuple[str, ...]:
        """The user agents, as the file writes them, by which *user_agent* is matched: of each
        group (record) its rules are checked against, the agents naming one of its product
        tokens, else ``*``; () when no group applies (everything is allowed)."""
        if type(user_agent) is not str:
            user_agent = as_text(user_agent, "user_agent")
        queries = self._queries(user_agent)
        if queries.matched is not None:
            return queries.matched
        tokens = caller_tokens(user_agent)
        matched: dict[str, None] = {}
        for group in self._applying_groups(user_agent):
            named = [agent for agent in group.agents if agent.lower() in tokens]
            for agent in (
                named or [agent for agent in group.agents if agent == "*"] or group.agents[:1]
            ):
                matched[agent] = None
        queries.matched = tuple(matched)
        return queries.matched

    def agents_at(self, line: int) -> tuple[str, ...] | None:
        """The user agents of the group (record) whose rule is on *line* (a :class:`Decision`'s
        line), or None when no rule is on it."""
        memo = self._memo
        found = memo.get(_RULE_STARTS) if memo is not None else None
        if found is None:
            # Each group's rules are on lines of its own, after those of the groups before it
            # in the file: the group a line may belong to is the last that starts before it.
            found = sorted(
                (group.first_rule_line, position)
                for position, group in enumerate(self._groups)
                if group.patterns
            )
            self._memo_for_update()[_RULE_STARTS] = found
        index = bisect_right(found, (line, len(self._groups))) - 1
        if index >= 0:
            group = self._groups[found[index][1]]
            if group.has_rule_on(line):
                return group.agents
        return None

    def decide(self, url: str, user_agent: str) -> Decision:
        """The verdict for *url* and the line that decided it (slower than :meth:`allowed`)."""
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        return self._decide(self._rules_path(url), user_agent)

    def _rules_path(self, url: str) -> str:
        """The path, params and query of *url* as the family's rules are matched against."""
        raise NotImplementedError

    def _decide(self, path: str, user_agent: str) -> Decision:
        """The verdict for *path* (from :meth:`_rules_path`) and the line that decided it."""
        raise NotImplementedError

    def _applying_groups(self, user_agent: str) -> tuple[StoredGroup, ...]:
        """The groups (RFC 9309) or the record (rerp) whose rules *user_agent* is checked
        against."""
        raise NotImplementedError

    def _extra(self, user_agent: str, kind: int) -> Any:
        """The per-group value of directive *kind* that applies to *user_agent*, or None."""
        raise NotImplementedError

    def _usage_statements(self, user_agent: str) -> list[Extra]:
        """The Content-Usage and Content-Signal lines that apply to *user_agent*."""
        raise NotImplementedError

    def _usage_pattern(self, path: str) -> tuple[str, bool]:
        """A Content-Usage rule's *path* as the family matches it against a URL's path (its
        length is the match's), and whether it has wildcards (else it is a prefix)."""
        raise NotImplementedError

    def _group_value(self, user_agent: str, kind: int) -> Any:
        if type(user_agent) is not str:
            user_agent = as_text(user_agent, "user_agent")
        values = self._queries(user_agent).values
        value = values.get(kind, _NOT_READ)
        if value is _NOT_READ:
            value = values[kind] = self._extra(user_agent, kind)
        return value

    def crawl_delay(self, user_agent: str) -> float | None:
        """Seconds to wait between requests, from the group that applies, or None."""
        return self._group_value(user_agent, L.CRAWL_DELAY)

    def request_rate(self, user_agent: str) -> RequestRate | None:
        return self._group_value(user_agent, L.REQUEST_RATE)

    def visit_time(self, user_agent: str) -> VisitTime | None:
        return self._group_value(user_agent, L.VISIT_TIME)

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
        path = self._rules_path(url)
        if not self.allowed(url, user_agent):  # (its compiled rules: decide() reads them all)
            crawl = self._decide(path, user_agent)
            return UsageDecision(
                UNKNOWN, crawl.line, crawl.rule, "may not be crawled: no usage preference applies"
            )
        memo = self._memo
        key = (user_agent, category)
        statements = memo.get(key) if memo is not None else None
        if statements is None:
            # Compiled once per agent and category: a call then costs the same however many
            # statements the file has (a file may hold tens of thousands).
            found = self._usage_statements(user_agent)
            statements = (
                _UsageStatements(found, category, self._usage_pattern) if found else _NO_STATEMENTS
            )
            self._memo_for_update()[key] = statements
        if statements is _NO_STATEMENTS:
            return NO_USAGE_STATED
        return statements.decision(path, category)  # type: ignore[union-attr]  # not the sentinel

    # -- rendering ------------------------------------------------------------------------

    def __str__(self) -> str:
        raise NotImplementedError

    def _render_urllib(self) -> str:
        return render_urllib(self._groups)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt {SYNTAX_NAMES[self._syntax]} groups={len(self._groups)} "
            f"sitemaps={len(self.sitemaps)}>"
        )


class _AgentQueries:
    """What one user agent's queries other than allowed() and usage() read, each part built on
    the first query that needs it: a query after the first then costs the same however many
    groups and rules the file has (a file may hold tens of thousands)."""

    __slots__ = ("decider", "walks", "groups", "matched", "values")

    def __init__(self) -> None:
        self.decider: Any = None  # the family's rules for decide(): walked, then a table
        self.walks = 0  # decide() calls answered by walking the rules
        self.groups: Any = None  # RFC9309: the groups that apply, with the agent that names it
        self.matched: tuple[str, ...] | None = None  # matched_agents()
        self.values: dict[int, Any] = {}  # directive kind -> its per-group value, or None


_QUERIES = object()  # the memo key of an agent's _AgentQueries, after the agent
#: decide() walks an agent's rules on this many calls before it files them in a table: most
#: origins of a broad crawl are asked a few times, and filing costs about two walks.
WALKS_BEFORE_TABLE = 4
_NOT_READ = object()  # _AgentQueries.values: a kind not asked about yet
_RULE_STARTS = object()  # the memo key of (first rule line, position) of the groups, sorted


# A statement's preference for a category, as a rank: the strongest wins (vocab-07 5.1).
_RANK = {UNKNOWN: 0, ALLOWED: 1, DISALLOWED: 2}
_OUTCOME = (UNKNOWN, ALLOWED, DISALLOWED)
# The statements of one path (or every Content-Signal line) for one category, reduced to the
# one a decision would name: (rank of the strongest preference, minus the line of the first
# statement with it, that statement). max() of several is what they combine to.
_Strongest = tuple[int, int, Extra]
_NO_STATEMENTS = object()  # memo: no usage statement applies to the agent


class _UsageStatements:
    """The usage statements that apply to one agent, compiled for one category.

    Content-Usage rules are grouped by their path as the family matches it: plain paths in a
    dictionary, looked up by the prefixes of a URL's path of the lengths that occur (at most
    one look-up per character of the path), longest first; wildcard paths tried longest first.
    The Content-Signal lines apply to the whole group: they are reduced once.
    """

    __slots__ = ("signals", "plain", "lengths", "wild")

    def __init__(
        self, statements: list[Extra], category: str, read_path: Callable[[str], tuple[str, bool]]
    ) -> None:
        signals: _Strongest | None = None
        plain: dict[str, _Strongest] = {}
        wild: dict[str, _Strongest] = {}
        ranks: dict[tuple[tuple[str, bool], ...], int] = {}  # most statements say the same
        for extra in statements:
            preferences = extra.value.preferences
            strength = ranks.get(preferences)
            if strength is None:
                strength = ranks[preferences] = _RANK[preference(dict(preferences), category)]
            candidate = (strength, -extra.line, extra)
            if extra.kind == CONTENT_SIGNAL:
                signals = candidate if signals is None else max(signals, candidate)
                continue
            path = extra.value.path
            pattern, is_wild = ("", False) if path is None else read_path(path)
            table = wild if is_wild else plain  # a rule without a path: the empty prefix
            known = table.get(pattern)
            table[pattern] = candidate if known is None else max(known, candidate)
        self.signals = signals
        self.plain = plain
        self.lengths = sorted({len(pattern) for pattern in plain})
        self.wild = sorted(
            ((len(pattern), pattern, found) for pattern, found in wild.items()),
            key=itemgetter(0),
            reverse=True,
        )

    def decision(self, path: str, category: str) -> UsageDecision:
        """What the statements with the longest path matching *path*, and the Content-Signal
        lines, combine to (draft-ietf-aipref-vocab 5.1), naming the first line that decided."""
        chosen: list[_Strongest] = []
        longest = -1
        plain, lengths = self.plain, self.lengths
        for position in range(bisect_right(lengths, len(path)) - 1, -1, -1):
            found = plain.get(path[: lengths[position]])
            if found is not None:
                longest = lengths[position]
                chosen.append(found)
                break
        for length, pattern, found in self.wild:
            if length < longest:
                break
            if pattern_matches(path, pattern):
                if length > longest:
                    longest, chosen = length, [found]
                else:
                    chosen.append(found)
        if self.signals is not None:
            chosen.append(self.signals)
        strength, _, extra = max(chosen) if chosen else (0, 0, None)
        if extra is None or not strength:
            return UsageDecision(UNKNOWN, None, None, f"no statement that applies names {category}")
        outcome = _OUTCOME[strength]
        statement = render_extra(extra.kind, extra.value)
        return UsageDecision(outcome, extra.line, statement, f"{category} {outcome}")


def _coerce(url: object, user_agent: object) -> tuple[str, str]:
    return as_text(url, "url"), as_text(user_agent, "user_agent")


def parse(content: str | bytes, syntax: int = RFC9309) -> RobotsTxt:
    """Parse a robots.txt body. Never raises on content; bad lines become ``warnings``.

    Raises TypeError if *content* is neither str nor bytes and ValueError for an unknown syntax.
    """
    syntax = check_syntax(syntax)
    text = L.decode(content, syntax)
    groups, file_values, warnings = RobotsTxt._FAMILY_OF_SYNTAX[syntax]._read(text)
    return RobotsTxt._from_parts(syntax, groups, file_values, warnings)


def _unpickle(pickle_format: object, state: Any) -> RobotsTxt:
    """A RobotsTxt from what ``RobotsTxt.__reduce__`` gave (pickles name this function)."""
    return RobotsTxt._from_parts(*parts_from_state(pickle_format, state))
