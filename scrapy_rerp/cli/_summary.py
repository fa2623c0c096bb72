"""What a robots.txt holds besides its verdicts, as ``lint`` and ``fetch`` show it: the groups
with their per-group values, the file-wide values, and the sitemaps a crawl fetches (resolved
against the robots.txt URL) with those it skips.

The values are those of the directives the engine's table lists, by report key: a directive
added to the table is in every report without a line of its own here (a test adds one and
finds it in the reports)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy_rerp.core.urls import sitemap_url
from scrapy_rerp.engine import DIRECTIVES, FILE_KINDS, SITEMAP, VALUE_KINDS, Group, RobotsTxt


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


def render_values(values: dict[str, Any], out: Callable[[str], None]) -> None:
    """The per-group values of a report, one line each, under their group: ``Crawl-delay: 2``."""
    for kind in VALUE_KINDS:
        name = DIRECTIVES[kind].name
        value = values.get(json_key(name))
        if value is not None:
            shown = f"{value:g}" if isinstance(value, float) else value
            out(f"    {name}: {shown}")


@dataclass(kw_only=True)
class GroupSummary:
    """One group: where it starts, its agents, its rules, and its per-group values as a
    crawler named after its first agent gets them (asked of the engine: merged groups, rerp's
    record choice)."""

    line: int
    agents: list[str]
    rules: list[tuple[int, str]]  # (line, "Disallow: /private")
    values: dict[str, Any]  # by report key, as group_values gives them

    @classmethod
    def of(cls, robots: RobotsTxt, group: Group) -> GroupSummary:
        agent = next((a for a in group.agents if a.strip()), "*")
        return cls(
            line=group.line,
            agents=list(group.agents),
            rules=[
                (line, f"{'Allow' if allow else 'Disallow'}: {pattern}")
                for allow, pattern, line in group.rules
            ],
            values=group_values(robots, agent),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "agents": self.agents,
            "rules": [{"line": line, "rule": rule} for line, rule in self.rules],
            **self.values,
        }


@dataclass(kw_only=True)
class Summary:
    groups: list[GroupSummary]
    # Every file-wide value by report key, as file_values gives them; "sitemaps" among them as
    # written (the resolved ones below stand in for them in the report, in their place).
    file_values: dict[str, Any]
    sitemaps: list[str]  # as the crawl fetches them: resolved against the robots.txt URL
    invalid_sitemaps: list[dict[str, str]]  # {"sitemap", "reason"}: each skipped on its own

    @classmethod
    def of(cls, robots: RobotsTxt, robots_url: str | None) -> Summary:
        """The summary of *robots*, its sitemaps resolved against *robots_url* (None: a file,
        whose relative sitemaps resolve against nothing)."""
        sitemaps, invalid = [], []
        for value in robots.sitemaps:
            try:
                sitemaps.append(sitemap_url(robots_url, value))
            except ValueError as error:
                invalid.append({"sitemap": value, "reason": str(error)})
        return cls(
            groups=[GroupSummary.of(robots, group) for group in robots.groups],
            file_values=file_values(robots),
            sitemaps=sitemaps,
            invalid_sitemaps=invalid,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "groups": [group.as_dict() for group in self.groups],
            **self.file_values,
            "sitemaps": self.sitemaps,
            "invalid_sitemaps": self.invalid_sitemaps,
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        out(f"groups: {len(self.groups)}")
        for group in self.groups:
            agents = ", ".join(group.agents) or "(empty)"
            plural = "" if len(group.rules) == 1 else "s"
            out(f"  line {group.line}: User-agent: {agents} ({len(group.rules)} rule{plural})")
            render_values(group.values, out)
        out(f"sitemaps: {len(self.sitemaps)}")
        for sitemap in self.sitemaps:
            out(f"  {sitemap}")
        for invalid in self.invalid_sitemaps:
            out(f"  skipped {invalid['sitemap']!r}: {invalid['reason']}")
        for kind in FILE_KINDS:
            if kind == SITEMAP:
                continue
            name = DIRECTIVES[kind].name
            key = json_key(name)
            values = (
                [self.file_values[key]] if key in self.file_values else self.file_values[key + "s"]
            )
            for value in values:
                if value is not None:
                    out(f"{name.lower()}: {value}")
