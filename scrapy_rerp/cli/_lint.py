"""``scrapy-rerp lint ROBOTS``: the problems in a robots.txt (found by
:mod:`scrapy_rerp.cli._problems`, within a budget of comparisons), with line numbers and a
severity, then its groups, values and sitemaps. Exit status 0 when there is no problem, 1 when
there is one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._problems import Lint, lint
from scrapy_rerp.cli._source import Source, outcome_reason
from scrapy_rerp.cli._summary import Summary
from scrapy_rerp.core.settings import syntax_name


@dataclass(kw_only=True)
class LintReport:
    source: Source
    syntax: int
    found: Lint
    summary: Summary
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, source: Source, syntax: int) -> LintReport:
        if not source.parsed:
            assert source.fetched is not None
            reason = outcome_reason(source.fetched)
            raise CliError(f"{source.fetched.url}: {reason}; nothing to lint")
        return cls(
            source=source,
            syntax=syntax,
            found=lint(source.raw, source.body, syntax),
            summary=Summary.of(source.rules(syntax), source.robots_url),
        )

    @property
    def status(self) -> int:
        return EXIT_FLAGGED if self.found.problems else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        found = self.found
        return {
            "robots": self.source.as_dict(),
            "syntax": syntax_name(self.syntax),
            "problems": [problem.as_dict() for problem in found.problems],
            "compared": {
                "urls": found.checked_urls,
                "agents": found.checked_agents,
                "comparisons": found.comparisons,
                "skipped_comparisons": found.skipped_comparisons,
                "budget": found.budget,
            },
            **self.summary.as_dict(),
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        out(f"{self.source.label} (syntax {syntax_name(self.syntax)})")
        found = self.found
        out(f"problems: {len(found.problems)}")
        if found.skipped_comparisons:
            out(
                f"  ({found.skipped_comparisons:,} comparisons skipped: syntax differences "
                f"and usage grants were looked for within {found.budget:,} comparisons, "
                "this file's budget)"
            )
        for problem in found.problems:
            where = f"line {problem.line}" if problem.line is not None else "file"
            text = f": {problem.text}" if problem.text else ""
            out(f"  {where}: {problem.severity}: {problem.message}{text}")
        self.summary.render_text(out)
