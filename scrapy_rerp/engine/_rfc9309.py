"""``RobotsTxt`` as RFC 9309 reads it: the groups of the product token (merged), else the ``*``
groups; the longest matching rule wins, Allow on a tie; ``/robots.txt`` always allowed."""

from __future__ import annotations

from typing import Any

from ._agents import caller_tokens, group_token, is_global_value, unicode_name
from ._constants import RFC9309
from ._directives import USAGE_KINDS
from ._groups import STAR, Extra, StoredGroup, build_rfc
from ._lines import ParseWarning
from ._match import ROBOTS_PATH, Rules, RuleTable, compile_rules, longest, rfc_allows
from ._patterns import ABSOLUTE_URL, escape_pattern, path_params_query, pattern_matches
from ._render import render_rfc
from ._robots import WALKS_BEFORE_TABLE, Decision, RobotsTxt, _coerce
from ._shared import SharedTable, str_bytes

_ABSOLUTE_URL = ABSOLUTE_URL.match
# Rfc9309RobotsTxt._origin before the first query: any scheme://authority/ would do, since every
# URL that starts with one has its path from that last "/"; this one names no real site.
_NO_ORIGIN = "x://\x00/"
_NO_INDEX: dict[str, tuple[int, ...]] = {}  # the index of a file naming no crawler
_ALLOW_EVERYTHING = Rules(())  # what applies when no group does (RFC 9309)


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


class Rfc9309RobotsTxt(RobotsTxt, syntaxes=(RFC9309,)):
    """A robots.txt read as RFC 9309 says."""

    __slots__ = ("_index", "_global", "_global_rules", "_origin")
    _index: dict[str, tuple[int, ...]]
    _global: tuple[int, ...]
    _global_rules: Rules | None
    _origin: str

    @staticmethod
    def _read(
        text: str,
    ) -> tuple[tuple[StoredGroup, ...], dict[int, tuple[str, ...]], tuple[ParseWarning, ...]]:
        warnings: list[ParseWarning] = []
        groups, file_wide = build_rfc(text, warnings)
        return groups, file_wide.stored(), tuple(sorted(warnings))

    def _prepare(self) -> None:
        store = object.__setattr__
        # Each product token named in the file -> its groups' positions in _groups, and the
        # * groups' positions.
        index, global_positions = _index_groups(self._groups)
        store(self, "_index", index)
        store(self, "_global", global_positions)
        # The * groups' rules, compiled on the first query that needs them.
        store(self, "_global_rules", None)
        # The scheme://authority/ of the last URL asked about, so that the next URL of the
        # same site needs no parsing.
        store(self, "_origin", _NO_ORIGIN)
        # _memo, in a file that names crawlers: user agent -> its compiled Rules, also kept
        # under the token that picked them; in every file, what the other queries of a user
        # agent remember (RobotsTxt._queries).

    # -- resolving the user agent ---------------------------------------------------------

    def _token(self, user_agent: str) -> str | None:
        """The token whose groups apply, or None for the ``*`` groups."""
        if not self._index:
            return None
        for token in caller_tokens(user_agent):
            if token in self._index:
                return token
        return None

    def _applying_groups(self, user_agent: str) -> tuple[StoredGroup, ...]:
        token = self._token(user_agent)
        positions = self._global if token is None else self._index[token]
        return tuple(self._groups[position] for position in positions)

    def _rules(self, user_agent: str) -> Rules:
        """The compiled rules for *user_agent*, compiled on its first query."""
        index = self._index
        token = self._token(user_agent) if index else None
        if token is None:
            rules = self._global_rules
            if rules is None:
                rules = self._compile(self._global)
                object.__setattr__(self, "_global_rules", rules)
            if not index:
                return rules
            memo = self._memo_for_update()
        else:
            memo = self._memo_for_update()
            rules = memo.get(token)
            if rules is None:
                rules = memo[token] = self._compile(index[token])
        memo[user_agent] = rules  # which groups apply depends on the user agent
        return rules

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

    # -- queries --------------------------------------------------------------------------

    def allowed(self, url: str, user_agent: str) -> bool:
        if type(url) is not str or type(user_agent) is not str:
            url, user_agent = _coerce(url, user_agent)
        if self._index:
            memo = self._memo
            rules = memo.get(user_agent) if memo is not None else None
        else:  # no group names a crawler: the * groups apply to all
            rules = self._global_rules
        if rules is None:
            rules = self._rules(user_agent)
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

    def _rules_path(self, url: str) -> str:
        return path_params_query(url)  # matched as given: google never decodes

    def _decide(self, path: str, user_agent: str) -> Decision:
        if path == ROBOTS_PATH:
            return Decision(True, None, None, "/robots.txt is always allowed")
        queries = self._queries(user_agent)
        decider = queries.decider
        if decider is None:
            groups = self._applying_groups(user_agent)
            decider = queries.decider = (
                tuple(group for group in groups if group.patterns) if groups else _NO_GROUP
            )
        if decider is _NO_GROUP:
            return Decision(True, None, None, "no group applies to this user agent")
        if type(decider) is tuple:
            allow, disallow = _walk(decider, path)
            queries.walks += 1
            if queries.walks == WALKS_BEFORE_TABLE and decider:
                queries.decider = _decider(decider)
        else:
            allow, disallow = decider[True].best(path), decider[False].best(path)
        if disallow is not None and (allow is None or disallow[0] > allow[0]):
            return Decision(False, disallow[2], f"Disallow: {disallow[1]}", "longest match")
        if allow is not None:
            return Decision(True, allow[2], f"Allow: {allow[1]}", "longest match")
        return Decision(True, None, None, "no rule matched")

    def _agent_indexes(self, user_agent: str) -> list[tuple[StoredGroup, int]]:
        """The groups that apply to *user_agent*, each with the position among its agents of
        the one that names it (per-group values apply to the agents named before them)."""
        queries = self._queries(user_agent)
        if queries.groups is not None:
            return queries.groups
        key = self._token(user_agent) or "*"
        found = []
        for group in self._applying_groups(user_agent):
            for agent_index, value in enumerate(group.agents):
                if _agent_key(value) == key or (not value.isascii() and unicode_name(value) == key):
                    found.append((group, agent_index))
                    break
        queries.groups = found
        return found

    def _extra(self, user_agent: str, kind: int) -> Any:
        for group, agent_index in self._agent_indexes(user_agent):
            found = group.extra(kind, agent_index)
            if found is not None:
                return found
        return None

    def _usage_statements(self, user_agent: str) -> list[Extra]:
        return [
            extra
            for group, agent_index in self._agent_indexes(user_agent)
            for extra in group.extras_of(USAGE_KINDS, agent_index)
        ]

    def _usage_pattern(self, path: str) -> tuple[str, bool]:
        pattern = escape_pattern(path)
        return pattern, "*" in pattern or pattern.endswith("$")

    def __str__(self) -> str:
        return render_rfc(self._groups, self.file_values)


def _decider(groups: tuple[StoredGroup, ...]) -> object:
    """The rules of *groups* (an agent's, merged) for decide(): a RuleTable per verdict, in
    which the longest rule that matches wins, the first in file order among equally long ones
    (an empty rule never matches); the groups with rules, when they have few enough to walk
    (_walk); _NO_GROUP when no group applies."""
    if not groups:
        return _NO_GROUP
    if sum(len(group.patterns) for group in groups) <= _WALKED_RULES:
        return tuple(group for group in groups if group.patterns)
    rules: dict[bool, list[tuple[tuple[int, int], str, bool, tuple[int, str, int]]]] = {
        True: [],
        False: [],
    }
    position = 0
    for group in groups:
        for index, pattern in enumerate(group.patterns):
            position += 1
            if pattern:
                rank = (len(pattern), -position)
                wild = "*" in pattern or pattern[-1] == "$"
                payload = (len(pattern), pattern, group.line_of(index))
                rules[group.is_allow(index)].append((rank, pattern, wild, payload))
    return {is_allow: RuleTable(found) for is_allow, found in rules.items()}


def _walk(
    groups: tuple[StoredGroup, ...], path: str
) -> tuple[tuple[int, str, int] | None, tuple[int, str, int] | None]:
    """The longest Allow and Disallow of *groups* that match *path*, each ``(length, pattern,
    line)`` or None, every rule tried in file order."""
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
    return best.get(True), best.get(False)


_NO_GROUP = object()  # _AgentQueries.decider: no group applies to the agent
# Rule sets up to this many are walked on each decide() (three quarters of the corpus's files
# for the agents of its workload): that costs about as much as the look-ups of a RuleTable,
# which would take some 250 bytes a rule to keep.
_WALKED_RULES = 16


def _index_groups(
    groups: tuple[StoredGroup, ...],
) -> tuple[dict[str, tuple[int, ...]], tuple[int, ...]]:
    """Map each product token to the positions of the groups that apply to it, once per parse.

    Returns ``(index, global positions)``: the index maps a token to its groups' positions in
    file order, merged as RFC 9309 section 2.2.1 asks; the global ones are the ``*`` groups'.
    """
    if not groups:
        return _NO_INDEX, ()
    if len(groups) == 1 and groups[0].agents is STAR:
        return _NO_INDEX, _ONE_POSITION[0]
    # A token's positions are a shared one-position tuple until a second group names it, then a
    # list appended to (a tuple grown by += would make a file of many groups quadratic), made a
    # tuple at the end.
    by_token: dict[str, Any] = {}
    grown: list[str] = []  # the tokens whose positions became a list
    global_positions: list[int] = []
    known_key = _AGENT_KEYS.recent.get
    for position, group in enumerate(groups):
        # Most tokens name one group, among a file's first: their tuples are shared (most files
        # are parsed to be kept, and one tuple per token would be a fifth of what a group costs).
        one = _ONE_POSITION[position] if position < 256 else (position,)
        for value in group.agents:
            key = known_key(value) or _agent_key(value)
            if key == "*":
                if not global_positions or global_positions[-1] != position:
                    global_positions.append(position)
                continue
            if not key:
                continue
            _add_position(by_token, grown, key, position, one)
            if not value.isascii():
                name = unicode_name(value)
                if name is not None:
                    _add_position(by_token, grown, name, position, one)
    for key in grown:
        by_token[key] = tuple(by_token[key])
    if len(global_positions) == 1 and global_positions[0] < 256:
        return by_token or _NO_INDEX, _ONE_POSITION[global_positions[0]]
    return by_token or _NO_INDEX, tuple(global_positions)


def _add_position(
    by_token: dict[str, Any], grown: list[str], key: str, position: int, one: tuple[int]
) -> None:
    """Add *position* (*one*: it as a tuple) to *key*'s positions in *by_token*."""
    found = by_token.get(key)
    if found is None:
        by_token[key] = one
    elif found[-1] != position:
        if type(found) is tuple:
            by_token[key] = [*found, position]
            grown.append(key)
        else:
            found.append(position)


_ONE_POSITION = tuple((position,) for position in range(256))
