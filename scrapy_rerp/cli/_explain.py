"""Why a URL is allowed or not: the group chosen, the rules that match, the one that decides.

Everything here is asked of the engine through its public API (``parse``, ``groups``,
``allowed``, ``decide``, ``usage``), never re-implemented: whether a ``User-agent`` value names
the crawler, or a rule matches a URL, is found by parsing a one-group robots.txt made of just
that value or rule and asking the engine. The answers are therefore the engine's own, in every
syntax, and stay so when the engine changes how it matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp._urls import crawl_decision, rules_url
from scrapy_rerp.engine import (
    RFC9309,
    USAGE_CATEGORIES,
    Group,
    RobotsTxt,
    UsageDecision,
    parse,
)
from scrapy_rerp.engine._directives import DIRECTIVES, FILE_KINDS, VALUE_KINDS

__all__ = [
    "Explanation",
    "MatchedRule",
    "explain",
    "file_values",
    "group_values",
    "rule_matches",
    "usage_dict",
]

_PROBE_URL = "http://probe.invalid/p"


@dataclass(frozen=True)
class MatchedRule:
    line: int
    rule: str  # "Disallow: /private"
    allow: bool
    decides: bool = False


@dataclass
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
    usage: dict[str, UsageDecision] = field(default_factory=dict)
    # The per-group values that apply to the crawler (Crawl-delay...), as group_values gives.
    values: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "line": self.line,
            "rule": self.rule,
            "reason": self.reason,
            "groups": [
                {"line": g.line, "agents": list(g.agents), "rules": len(g.rules)}
                for g in self.groups
            ],
            "group_reason": self.why,
            "matching_rules": [
                {"line": m.line, "rule": m.rule, "allow": m.allow, "decides": m.decides}
                for m in self.matched
            ],
            "usage": {category: usage_dict(found) for category, found in self.usage.items()},
            "values": self.values,
        }


# The values of the directives the engine's table lists, for reports: every directive is shown
# without a line of its own here (a test adds one to the table and finds it in the reports).


def json_key(name: str) -> str:
    """A directive's name as a report's key: ``Crawl-delay`` -> ``crawl_delay``."""
    return name.lower().replace("-", "_")


def _json_value(text: str) -> Any:
    """A value as written back; one written as a number is a number (Crawl-delay: 2.0)."""
    try:
        return float(text)
    except ValueError:
        return text


def group_values(robots: RobotsTxt, user_agent: str) -> dict[str, Any]:
    """Each per-group value (``crawl_delay``, ``request_rate``, ``visit_time``...) that applies
    to ``user_agent``, None where there is none, by report key."""
    values: dict[str, Any] = {}
    for kind in VALUE_KINDS:
        directive = DIRECTIVES[kind]
        value = robots.group_value(directive.name, user_agent)
        if value is not None and directive.render_value is not None:
            value = directive.render_value(value)
        values[json_key(directive.name)] = None if value is None else _json_value(str(value))
    return values


def file_values(robots: RobotsTxt) -> dict[str, Any]:
    """Each file-wide directive's values by report key: a list (``sitemaps``,
    ``clean_params``), or for one of which only the first value counts, that value or None
    (``host``)."""
    values: dict[str, Any] = {}
    for kind in FILE_KINDS:
        directive = DIRECTIVES[kind]
        found = robots.file_values(directive.name)
        if directive.first_only:
            values[json_key(directive.name)] = found[0] if found else None
        else:
            values[json_key(directive.name) + "s"] = list(found)
    return values


def usage_dict(decision: UsageDecision) -> dict[str, Any]:
    """A usage decision as JSON: ``preference``, ``line``, ``statement``, ``reason``."""
    return {
        "preference": decision.preference,
        "line": decision.line,
        "statement": decision.statement,
        "reason": decision.reason,
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
    values: list[str] = []
    for group in groups:
        values += [v for v in group.agents if v not in values]
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
        names = ", ".join(sorted(chosen))
        return found, f"User-agent: {names} names this crawler"
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
    if syntax == RFC9309:
        groups, why = _rfc_groups(robots, user_agent)
    else:
        groups, why = _legacy_group(robots, user_agent)
    target = rules_url(url)
    matched = []
    for group in groups:
        for allow, pattern, line in group.rules:
            if rule_matches(allow, pattern, target, syntax):
                text = _rule_text(allow, pattern)
                decides = line == decision.line and text == decision.rule
                matched.append(MatchedRule(line, text, allow, decides))
    usage = {category: robots.usage(target, user_agent, category) for category in USAGE_CATEGORIES}
    return Explanation(
        syntax,
        decision.allowed,
        decision.line,
        decision.rule,
        decision.reason,
        groups,
        why,
        matched,
        usage,
        group_values(robots, user_agent),
    )
