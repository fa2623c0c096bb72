"""``scrapy-rerp explain ROBOTS URL``: why a URL is allowed or not, in all three syntaxes: the
group chosen, the rules that match, the one that decides, the values and usage preferences
that apply. Exit status 0 when the URL may be crawled in the syntax selected, 1 when not, 2
when ROBOTS is no robots.txt (an HTML or XML page, binary data) and ``--read-anyway`` does not
ask for the verdict a crawler reading it gets.

Everything here is asked of the engine through its public API (``parse``, ``groups``,
``allowed``, ``decide``, ``usage``), never re-implemented: whether a ``User-agent`` value names
the crawler, or a rule matches a URL, is found by parsing a one-group robots.txt made of just
that value or rule and asking the engine. The answers are therefore the engine's own, in every
syntax, and stay so when the engine changes how it matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from scrapy_rerp.cli._check import (
    Usage,
    Verdict,
    not_a_request,
    refuse_unless_read_anyway,
    usage_lines,
)
from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._source import Source
from scrapy_rerp.cli._summary import group_values, render_values
from scrapy_rerp.core.settings import syntax_name
from scrapy_rerp.core.urls import crawl_decision, request_url, rules_url
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, USAGE_CATEGORIES, Group, RobotsTxt, parse

#: The syntaxes explained, in the order shown.
ALL_SYNTAXES = (RFC9309, GYM2008, MK1996)

_PROBE_URL = "http://probe.invalid/p"


@dataclass(frozen=True, kw_only=True)
class MatchedRule:
    line: int
    rule: str  # "Disallow: /private"
    allow: bool
    decides: bool = False


@dataclass(kw_only=True)
class Explanation:
    """One syntax's answer for one URL and user agent."""

    syntax: int
    allowed: bool
    line: int | None
    rule: str | None
    reason: str
    groups: list[Group] = field(default_factory=list)  # the groups (records) that apply
    why: str = ""  # why those groups
    matched: list[MatchedRule] = field(default_factory=list)
    # Each usage category -> what the site says about using the URL for it, and the line that
    # says so (the Content-Usage or Content-Signal line, or the rule that disallows the URL).
    usage: dict[str, Usage] = field(default_factory=dict)
    # The per-group values that apply to the crawler (Crawl-delay...), as group_values gives.
    values: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            **{key: getattr(self, key) for key in ("allowed", "line", "rule", "reason")},
            "groups": [
                {"line": g.line, "agents": list(g.agents), "rules": len(g.rules)}
                for g in self.groups
            ],
            "group_reason": self.why,
            "matching_rules": [asdict(matched) for matched in self.matched],
            "usage": {category: found.as_dict() for category, found in self.usage.items()},
            "values": self.values,
        }


def _rule_text(allow: bool, pattern: str) -> str:
    return f"{'Allow' if allow else 'Disallow'}: {pattern}"


def _names(values: tuple[str, ...] | list[str], user_agent: str, syntax: int) -> bool:
    """Whether a group of these ``User-agent`` values applies to ``user_agent`` (alone)."""
    text = "".join(f"User-agent: {value}\n" for value in values) + "Disallow: /\n"
    return not parse(text, syntax).allowed(_PROBE_URL, user_agent)


def rule_matches(allow: bool, pattern: str, url: str, syntax: int) -> bool:
    """Whether the rule ``pattern`` matches ``url`` (as a crawl writes it), in ``syntax``."""
    text = _rule_text(allow, pattern)
    decision = parse(f"User-agent: *\n{text}\n", syntax).decide(url, "*")
    return decision.line == 2 and decision.rule == text


def _rfc_groups(robots: RobotsTxt, user_agent: str) -> tuple[list[Group], str]:
    groups = robots.groups
    values = list(dict.fromkeys(v for group in groups for v in group.agents))
    # A value names every crawler (the * group) when it names even one without any name.
    universal = {v for v in values if _names([v], "", RFC9309)}
    naming = [v for v in values if v not in universal and _names([v], user_agent, RFC9309)]
    if naming:
        # The engine picks one product token; a probe with one group per value, each with a
        # rule of its own, shows which values stand for it.
        probe = parse(
            "".join(f"User-agent: {v}\nDisallow: /{i}/\n\n" for i, v in enumerate(naming)),
            RFC9309,
        )
        chosen = {
            v for i, v in enumerate(naming) if not probe.allowed(f"/{i}/", user_agent)
        } or set(naming)
        found = [g for g in groups if chosen.intersection(g.agents)]
        return found, f"User-agent: {', '.join(sorted(chosen))} names this crawler"
    found = [g for g in groups if universal.intersection(g.agents)]
    if found:
        return found, "no group names this crawler: the * group applies"
    return [], "no group names this crawler and there is no * group: everything is allowed"


def _legacy_group(robots: RobotsTxt, user_agent: str) -> tuple[list[Group], str]:
    for group in robots.groups:
        if group.rules and _names(group.agents, user_agent, robots.syntax):
            return [group], "the first record (with rules) whose User-agent matches"
    return [], "no record applies to this user agent"


def explain(robots: RobotsTxt, url: str, user_agent: str) -> Explanation:
    """Explain the verdict for ``url`` (as a crawl writes it) and ``user_agent``."""
    decision = crawl_decision(robots, url, user_agent)
    syntax = robots.syntax
    chosen = _rfc_groups if syntax == RFC9309 else _legacy_group
    groups, why = chosen(robots, user_agent)
    target = rules_url(url)
    matched = []
    for group in groups:
        for allow, pattern, line in group.rules:
            if rule_matches(allow, pattern, target, syntax):
                text = _rule_text(allow, pattern)
                decides = line == decision.line and text == decision.rule
                matched.append(MatchedRule(line=line, rule=text, allow=allow, decides=decides))
    return Explanation(
        syntax=syntax,
        **decision._asdict(),
        groups=groups,
        why=why,
        matched=matched,
        usage={
            category: Usage.of(robots.usage(target, user_agent, category))
            for category in USAGE_CATEGORIES
        },
        values=group_values(robots, user_agent),
    )


@dataclass(kw_only=True)
class ExplainReport:
    source: Source
    url: str
    agent: str
    syntax: int  # the syntax selected: its verdict is the exit status
    # Each syntax's answer, in ALL_SYNTAXES' order; a Verdict when no rules were parsed (the
    # download's outcome decides, in every syntax alike).
    syntaxes: dict[int, Explanation | Verdict]
    read_from: str | None = None  # --read-anyway: what ROBOTS is, when it is no robots.txt

    @classmethod
    def build(
        cls, source: Source, url: str, syntax: int, agent: str, read_anyway: bool = False
    ) -> ExplainReport:
        """The explanation for *url*; CliError for a URL no request can be made of, and for
        ROBOTS that is no robots.txt, unless *read_anyway*."""
        try:
            request_url(url)
        except ValueError as error:
            raise CliError(f"{url!r}: {not_a_request(error)}") from error
        read_from = refuse_unless_read_anyway(source, read_anyway)
        syntaxes: dict[int, Explanation | Verdict] = {
            each: explain(source.rules(each), url, agent)
            if source.parsed
            else Verdict.of(source.rules(each), source, url, agent, USAGE_CATEGORIES)
            for each in ALL_SYNTAXES
        }
        return cls(
            source=source,
            url=url,
            agent=agent,
            syntax=syntax,
            syntaxes=syntaxes,
            read_from=read_from,
        )

    @property
    def allowed(self) -> bool | None:
        return self.syntaxes[self.syntax].allowed

    @property
    def status(self) -> int:
        return EXIT_OK if self.allowed else EXIT_FLAGGED

    @property
    def notes(self) -> list[str]:
        if self.read_from is None:
            return []
        return [f"{self.source.what_it_is()}; read anyway (--read-anyway)"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "robots": self.source.as_dict(),
            "url": self.url,
            "agent": self.agent,
            "syntax": syntax_name(self.syntax),
            "allowed": self.allowed,
            "syntaxes": {
                syntax_name(each): found.as_dict() for each, found in self.syntaxes.items()
            },
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        out(f"URL         {self.url}")
        out(f"User agent  {self.agent}")
        if self.read_from is not None:
            out(f"Read from   {self.source.label}: {self.read_from} (--read-anyway)")
        for each, found in self.syntaxes.items():
            out("")
            selected = " (selected)" if each == self.syntax else ""
            verdict = "ALLOWED" if found.allowed else "DISALLOWED"
            by = f" by line {found.line}: {found.rule}" if found.line is not None else ""
            out(f"{syntax_name(each).upper()}{selected}: {verdict}{by}")
            out(f"  {found.reason}")
            if isinstance(found, Explanation):
                _render_explanation(found, out)
            out("  usage (Content-Usage, Content-Signal):")
            for line in usage_lines(found.usage):
                out(f"    {line}")


def _render_explanation(found: Explanation, out: Callable[[str], None]) -> None:
    """The group chosen and why, the values for this crawler, the rules that match."""
    out(f"  group: {found.why}")
    for group in found.groups:
        agents = ", ".join(group.agents) or "(empty)"
        plural = "" if len(group.rules) == 1 else "s"
        out(f"    line {group.line}: User-agent: {agents} ({len(group.rules)} rule{plural})")
    if any(value is not None for value in found.values.values()):
        out("  values for this crawler:")
        render_values(found.values, out)
    if found.matched:
        out("  rules that match:")
        for rule in found.matched:
            mark = "  <- decides" if rule.decides else ""
            out(f"    line {rule.line}: {rule.rule}{mark}")
    else:
        out("  no rule matches")
