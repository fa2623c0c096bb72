"""``RobotsTxt`` as rerp 1.7.1 reads MK1996 and GYM2008: the first record with rules whose
User-agent the agent contains, then ``*``; the first matching rule wins; paths %-decoded. GYM2008
adds google's wildcards (``*`` and ``$``), MK1996 matches prefixes only."""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _lines as L
from ._constants import GYM2008, MK1996
from ._directives import USAGE_KINDS
from ._groups import Extra, StoredGroup, build_legacy
from ._lines import ParseWarning
from ._match import RuleTable, gym2008_globs, legacy_first_match
from ._patterns import Glob, path_params_query, unquote_path
from ._render import render_rerp
from ._robots import WALKS_BEFORE_TABLE, Decision, RobotsTxt, _coerce


class _Record(NamedTuple):
    """rerp's record for an agent, with its wildcard rules split (GYM2008)."""

    record: StoredGroup | None  # None: no record applies
    globs: dict[int, Glob] | None


_NO_RECORD = _Record(None, None)
# Records of up to this many rules are walked on each decide(), as _rfc9309's groups are.
_WALKED_RULES = 16


class LegacyRobotsTxt(RobotsTxt, syntaxes=(MK1996, GYM2008)):
    """A robots.txt read as rerp reads MK1996 and GYM2008 (its records in rerp's order, ``*``
    last). ``_memo``: user agent -> its ``_Record``, also kept under the record's position,
    beside what the other queries of a user agent remember (``RobotsTxt._queries``)."""

    __slots__ = ()

    @staticmethod
    def _read(
        text: str,
    ) -> tuple[tuple[StoredGroup, ...], dict[int, tuple[str, ...]], tuple[ParseWarning, ...]]:
        rows, warnings = L.scan_legacy(text)
        junk: list[int] = []
        groups, file_wide = build_legacy(rows, warnings, junk)
        if junk:
            warnings += L.junk_warnings(text.split("\n"), junk)
        return groups, file_wide.stored(), tuple(sorted(warnings))

    # -- resolving the user agent ---------------------------------------------------------

    def _record(self, user_agent: str) -> _Record:
        """rerp's record for *user_agent* and its split wildcard rules, remembered."""
        memo = self._memo_for_update()
        position = self._position(user_agent)
        if position is None:
            found = _NO_RECORD
        else:
            # Agents that share a record share its split wildcard rules.
            found = memo.get(position)
            if found is None:
                record = self._groups[position]
                globs = gym2008_globs(record) if self._syntax == GYM2008 else None
                found = memo[position] = _Record(record, globs)
        memo[user_agent] = found
        return found

    def _position(self, user_agent: str, extra: tuple[int, ...] = ()) -> int | None:
        """The position of rerp's first matching record; records without rules count only when
        they carry one of the *extra* directives asked for (rerp dropped them: a
        Crawl-delay-only record was lost)."""
        agent = user_agent.lower()
        for position, group in enumerate(self._groups):
            if not group.patterns and not any(e.kind in extra for e in group.extras):
                continue
            if _agent_index(group, agent) is not None:
                return position
        return None

    def _applying_groups(self, user_agent: str) -> tuple[StoredGroup, ...]:
        record = self._record(user_agent).record
        return () if record is None else (record,)

    # -- queries --------------------------------------------------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        memo = self._memo
        found = memo.get(user_agent) if memo is not None else None
        record, globs = found if found is not None else self._record(user_agent)
        if record is None:
            return True
        path = unquote_path(path_params_query(url))
        if globs is None and not path.startswith(record.patterns):
            return True  # no rule is a prefix of the path
        return legacy_first_match(record, globs, path)[0]

    def _rules_path(self, url: str) -> str:
        return unquote_path(path_params_query(url))

    def _decide(self, path: str, user_agent: str) -> Decision:
        queries = self._queries(user_agent)
        decider = queries.decider
        if decider is None:
            decider = queries.decider = self._record(user_agent)
        if type(decider) is _Record:  # no record, or one asked of few times: tried in order
            record, globs = decider
            if record is None:
                return Decision(True, None, None, "no record applies to this user agent")
            verdict, index = legacy_first_match(record, globs, path)
            queries.walks += 1
            if queries.walks == WALKS_BEFORE_TABLE:
                queries.decider = self._decider(decider)
            if index is None:
                return Decision(True, None, None, "no rule matched")
            found = (verdict, record.line_of(index), record.is_allow(index), record.patterns[index])
        else:
            found = decider.best(path)
            if found is None:
                return Decision(True, None, None, "no rule matched")
        verdict, line, is_allow, pattern = found
        rule = f"{'Allow' if is_allow else 'Disallow'}: {pattern}"
        return Decision(verdict, line, rule, "first match")

    def _decider(self, found: _Record) -> _Record | RuleTable:
        """The record's rules for decide(): a RuleTable ranked by file order (the first that
        matches wins), or its _Record when it has few enough rules to try one by one."""
        record = found.record
        if record is None or len(record.patterns) <= _WALKED_RULES:
            return found
        wildcards = self._syntax == GYM2008
        rules = []
        for index, pattern in enumerate(record.patterns):
            is_allow = record.is_allow(index)
            wild = wildcards and ("*" in pattern or pattern[-1:] == "$")
            # rerp: an empty Disallow allows everything, an empty Allow forbids everything.
            verdict = is_allow if pattern else not is_allow
            payload = (verdict, record.line_of(index), is_allow, pattern)
            rules.append((-index, pattern, wild, payload))
        return RuleTable(rules)

    def _extra(self, user_agent: str, kind: int) -> Any:
        position = self._position(user_agent, (kind,))
        if position is None:
            return None
        return self._groups[position].last_extra(kind)  # rerp: the last Crawl-delay wins

    def _usage_statements(self, user_agent: str) -> list[Extra]:
        position = self._position(user_agent, USAGE_KINDS)
        if position is None:
            return []
        record = self._groups[position]
        # Lines between two User-agent lines apply to the agents named before them.
        return record.extras_of(USAGE_KINDS, _agent_index(record, user_agent.lower()))

    def _usage_pattern(self, path: str) -> tuple[str, bool]:
        pattern = unquote_path(path)
        wild = self._syntax != MK1996 and ("*" in pattern or pattern.endswith("$"))
        return pattern, wild

    def __str__(self) -> str:
        return render_rerp(self._groups, self.sitemaps)


def _agent_index(record: StoredGroup, agent: str) -> int | None:
    """The position in *record* of rerp's first name for the lower-cased *agent* (``*``, or a
    name the agent contains), or None."""
    for index, name in enumerate(record.agents):
        if name == "*" or name.lower() in agent:
            return index
    return None
