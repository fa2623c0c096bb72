"""``scrapy-rerp fetch URL``: a robots.txt downloaded as a crawl downloads it (status policy,
redirects, size cap, charset), what a crawler concludes, when it expires, and what it holds. A
site's URL (``http://host/``) stands for its robots.txt; a body that is no robots.txt (an HTML
or XML page, binary data) is said to be none, never "rules parsed". With ``--store PATH``, a
fresh copy of the site's robots.txt in that store (``RERP_STORE``) is used as a crawl uses it,
without a download, and the output says so; an expired or absent one is downloaded as without
it. The store is read only.

Exit status 1 when a crawler may download nothing from the site (robots.txt forbidden or
unreachable), 2 when what was downloaded is no robots.txt, else 0."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp.cli._download import Download
from scrapy_rerp.cli._output import EXIT_ERROR, EXIT_FLAGGED, EXIT_OK
from scrapy_rerp.cli._problems import NotRobotsTxt
from scrapy_rerp.cli._source import Source, outcome_reason
from scrapy_rerp.cli._stored import StoreUse
from scrapy_rerp.cli._summary import Summary
from scrapy_rerp.core.settings import syntax_name
from scrapy_rerp.core.status import DISALLOW_ALL, PARSED, UNREACHABLE
from scrapy_rerp.core.wording import duration
from scrapy_rerp.engine import RobotsTxt


@dataclass(kw_only=True)
class FetchReport:
    fetched: Download
    syntax: int
    agent: str
    crawl_delay: float | None  # for the agent; None without rules too
    summary: Summary  # of the rules, or of "allow all" when the download gave none
    not_robots_txt: NotRobotsTxt | None = None  # what the body is, when it is no robots.txt
    notes: list[str] = field(default_factory=list)
    store: StoreUse | None = None  # with --store: what the store answered
    overridden: bool = False  # downloaded although robots.txt keeps a crawl from it

    @classmethod
    def build(cls, source: Source, syntax: int, agent: str) -> FetchReport:
        fetched = source.fetched
        assert fetched is not None
        parsed = fetched.outcome == PARSED
        robots = source.rules(syntax) if parsed else RobotsTxt.allow_all(syntax)
        found = source.not_robots_txt
        return cls(
            fetched=fetched,
            syntax=syntax,
            agent=agent,
            crawl_delay=robots.crawl_delay(agent) if parsed else None,
            summary=Summary.of(robots, source.robots_url),
            not_robots_txt=found,
            notes=[f"error: {source.what_it_is()}"] if found is not None else [],
            store=source.store,
            overridden=source.overridden is not None,
        )

    @property
    def conclusion(self) -> str:
        if self.not_robots_txt is not None:
            return self.not_robots_txt.message
        return "rules parsed" if self.fetched.outcome == PARSED else outcome_reason(self.fetched)

    @property
    def status(self) -> int:
        if self.not_robots_txt is not None:
            return EXIT_ERROR
        blocked = self.fetched.outcome in (DISALLOW_ALL, UNREACHABLE)
        return EXIT_FLAGGED if blocked else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.fetched.url,
            "syntax": syntax_name(self.syntax),
            "agent": self.agent,
            "fetch": self.fetched.as_dict(),
            "conclusion": self.conclusion,
            "not_robots_txt": self.not_robots_txt and self.not_robots_txt.as_dict(),
            "crawl_delay": self.crawl_delay,
            "store": self.store and self.store.as_dict(),
            "robots_txt_overridden": self.overridden,
            **self.summary.as_dict(),
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        fetched = self.fetched
        out(f"robots.txt  {fetched.url}")
        if self.store is not None:
            out(f"store       {self.store.path}: {self.store.why}")
        for url in fetched.redirects:
            out(f"redirected  {url}")
        status = fetched.status if fetched.status is not None else "-"
        out(f"status      {status} ({fetched.reason})")
        out(f"outcome     {fetched.outcome}: {self.conclusion}")
        body = fetched.body
        if body is not None:
            cut = " (cut at the size cap)" if body.truncated else ""
            out(f"size        {len(body.data):,} bytes read{cut}")
        if fetched.lifetime is not None:
            lifetime = duration(fetched.lifetime)
            out(f"expires     {fetched.expires} (used for {lifetime}, then fetched again)")
        if fetched.retry_after is not None:
            wait = fetched.retry_after_seconds
            asks = "nothing a crawl can hold to" if wait is None else duration(wait)
            out(f"retry-after {fetched.retry_after} ({asks})")
        if fetched.outcome != PARSED:
            return
        delay = self.crawl_delay
        out(f"crawl delay {'none' if delay is None else duration(delay)} for {self.agent}")
        self.summary.render_text(out)
