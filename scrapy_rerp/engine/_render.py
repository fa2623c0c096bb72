"""A parsed robots.txt written back as text: RFC 9309's layout, rerp's, and urllib's.

Every directive is written from the table (``_directives.DIRECTIVES``): a per-group value in its
group, where it was written among the agents, and the file-wide values at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _lines as L
from ._directives import DIRECTIVES, FILE_KINDS
from ._groups import Extra, StoredGroup


def render_value(kind: int, value: Any) -> str:
    """A value of directive *kind* as it is written after its key."""
    return (DIRECTIVES[kind].render_value or str)(value)


def render_extra(kind: int, value: Any) -> str:
    """A per-group line: ``Crawl-delay: 2``."""
    return f"{DIRECTIVES[kind].name}: {render_value(kind, value)}"


def render_rfc(
    groups: tuple[StoredGroup, ...], file_values: Callable[[str], tuple[str, ...]]
) -> str:
    """The groups in file order, each value kept among the agents it was written after, then
    the file-wide values (``file_values(name)`` gives each directive's)."""
    blocks = []
    for group in groups:
        named = len(group.agents)
        lines = []
        # The values for the agents named so far only, kept in place (by how many, at once:
        # asking the group for each agent's would be quadratic in a group of many).
        among_agents: dict[int, list[Extra]] = {}
        for extra in group.extras:
            if extra.agents_before < named:
                among_agents.setdefault(extra.agents_before, []).append(extra)
        for count, agent in enumerate(group.agents, 1):
            lines.append(f"User-agent: {agent}")
            if count in among_agents:
                lines += [render_extra(e.kind, e.value) for e in among_agents[count]]
        lines += [f"{'Allow' if a else 'Disallow'}: {p}" for a, p, _ in group.rules()]
        lines += [render_extra(e.kind, e.value) for e in group.extras if e.agents_before >= named]
        blocks.append("\n".join(lines) + "\n")
    tail = [
        f"{DIRECTIVES[kind].name}: {value}"
        for kind in FILE_KINDS
        for value in file_values(DIRECTIVES[kind].name)
    ]
    if tail:
        blocks.append("\n".join(tail) + "\n")
    return "\n".join(blocks)


def render_rerp(groups: tuple[StoredGroup, ...], sitemaps: tuple[str, ...]) -> str:
    """rerp 1.7.1's layout: ``Sitemaps: [...]``, then the records with rules or a Crawl-delay."""
    text = f"Sitemaps: {list(sitemaps)}\n\n" if sitemaps else ""
    records = []
    for group in groups:
        delay = group.last_extra(L.CRAWL_DELAY)
        if not group.patterns and delay is None:
            continue  # a record with neither rules nor Crawl-delay (rerp drops those)
        record = "".join(f"User-agent: {name}\n" for name in group.agents)
        if delay:
            record += f"Crawl-delay: {delay}\n"
        record += "".join(f"{'Allow' if a else 'Disallow'}: {p}\n" for a, p, _ in group.rules())
        records.append(record)
    return text + "\n".join(records)


def render_urllib(groups: tuple[StoredGroup, ...]) -> str:
    """The records as :class:`urllib.robotparser.RobotFileParser` writes its entries: the
    ``*`` record last (the legacy order), whole numbers without a fraction, no final newline."""
    entries = []
    for group in groups:
        delay = group.last_extra(L.CRAWL_DELAY)
        rate = group.last_extra(L.REQUEST_RATE)
        if not group.patterns and delay is None and rate is None:
            continue  # the standard library keeps an entry only once it has a rule line
        lines = [f"User-agent: {name}" for name in group.agents]
        if delay is not None:
            lines.append(f"Crawl-delay: {delay:g}")
        if rate is not None:
            lines.append(f"Request-rate: {rate.requests}/{rate.seconds:g}")
        # An empty Disallow allows everything: the standard library writes it as "Allow: ".
        lines += [f"{'Allow' if a or not p else 'Disallow'}: {p}" for a, p, _ in group.rules()]
        entries.append("\n".join(lines))
    return "\n\n".join(entries)
