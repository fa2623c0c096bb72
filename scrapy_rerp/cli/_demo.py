"""``scrapy-rerp demo``: a polite Scrapy crawl of two sites run on 127.0.0.1 for the purpose
(:mod:`scrapy_rerp.demo`), and what each server received. The one command that needs Scrapy: it
is imported when the command runs. Exit status 0 when every check of the crawl holds, else 1."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError, Output

if TYPE_CHECKING:
    from scrapy_rerp.demo import Outcome


@dataclass
class DemoReport:
    outcome: Outcome
    document: dict[str, Any]  # the outcome as plain data, as the demo gives it
    notes: list[str] = field(default_factory=list)

    @classmethod
    def run(cls, pages: int, blog_robots: str, verbose: bool) -> DemoReport:
        try:
            from scrapy_rerp import demo
        except ImportError as error:
            raise CliError(
                f"the demo needs Scrapy ({error}): pip install -e './scrapy-rerp[scrapy]'"
            ) from error
        try:
            outcome = demo.run(pages, blog_robots, verbose)
        except ValueError as error:
            raise CliError(str(error)) from error
        return cls(outcome, demo.as_dict(outcome))

    @property
    def status(self) -> int:
        return EXIT_OK if self.document["ok"] else EXIT_FLAGGED

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def render_text(self, out: Output) -> None:
        from scrapy_rerp import demo

        # The demo prints its own report.
        with contextlib.redirect_stdout(out):  # type: ignore[type-var]
            demo.report(self.outcome)
