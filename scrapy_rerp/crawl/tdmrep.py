"""Each origin's ``/.well-known/tdmrep.json`` in a crawl: the second per-origin document.

With a ``RERP_USAGE`` purpose TDMRep speaks to (train-ai, ai-input: :func:`reads_tdmrep`), the
middleware builds a second origin service, of the :func:`~scrapy_rerp.core.documents.tdmrep_json`
kind (:func:`scrapy_rerp.crawl.assembly.assemble`): one download per origin (per fleet), kept in
memory with robots.txt's lifetime rules, retried through an outage like robots.txt. The gate
parks a page robots.txt allows until its origin's file is known, then hands the file to the
page directives in the request's meta (:data:`FILE_META`), where ``tdm_reservation`` reads it
before the page's headers and meta tags (docs/usage.rst, "TDMRep in a crawl").

:class:`TdmRepListener` is that service's listener: a file that is not valid JSON (or no array)
reserves nothing, and is counted and logged once per origin; each file read is sent as
``scrapy_rerp.signals.document_received`` (the evidence records it).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.engine import TDMREP_PURPOSES, TdmRepFile, usage_category

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.data import Fetched, RobotsEntry
    from scrapy_rerp.core.politeness import Politeness
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["FILE_META", "AttachedFile", "TdmRepListener", "reads_tdmrep"]

logger = logging.getLogger(loggers.USAGE)

#: ``Request.meta`` key: the origin's parsed tdmrep.json (an :class:`AttachedFile`), set by the
#: gate once it is known; the page directives read it.
FILE_META = "_rerp_tdmrep_file"


class AttachedFile:
    """An origin's tdmrep.json as the gate attaches it to a request: never pickled. A JOBDIR
    keeps requests on disk, with their meta (a retried request carries it), and the file may be
    as large as ``RERP_MAX_SIZE``: pickled, it is None, and the gate attaches the file again
    when the request comes back to it."""

    __slots__ = ("file",)

    def __init__(self, file: TdmRepFile) -> None:
        self.file = file

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _detached, ()

    def __copy__(self) -> AttachedFile:
        return self

    def __deepcopy__(self, memo: Any) -> AttachedFile:
        return self


def _detached() -> None:
    return None


def reads_tdmrep(settings: RerpSettings) -> bool:
    """Whether the crawl reads TDMRep: a ``RERP_USAGE`` purpose it speaks to."""
    return any(usage_category(purpose) in TDMREP_PURPOSES for purpose in settings.usage)


class TdmRepListener:
    """What a crawl does with an origin's tdmrep.json (the origin service's ``RulesListener``)."""

    def __init__(self, crawler: Crawler, politeness: Politeness, max_origins: int = 10_000) -> None:
        self.crawler = crawler
        self.politeness = politeness
        self.stats = crawler.stats
        # Origins whose invalid file was logged, the latest max_origins (RERP_CACHE_MAX_ORIGINS,
        # as many as the cache keeps files of): a broad crawl's memory stays bounded.
        self._said: OrderedDict[str, None] = OrderedDict()
        self._max_origins = max_origins

    async def before_sharing(
        self, origin: str, robots: RobotsTxt | TdmRepFile | None, trigger: Any
    ) -> None:
        """Nothing to apply before the fleet gets it."""

    async def rules_known(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, trigger: Any
    ) -> None:
        self.crawler.signals.send_catch_log(
            signals.document_received,
            origin=origin,
            kind="tdmrep.json",
            entry=entry,
            fetched=fetched,
            user_agent=None,
        )
        file = entry.robots
        if not isinstance(file, TdmRepFile) or file.valid:
            return
        self.stats.inc_value("robotstxt/tdmrep/file/invalid")
        if origin in self._said:
            return
        self._said[origin] = None
        if len(self._said) > self._max_origins:
            self._said.popitem(last=False)
        why = "; ".join(warning.message for warning in file.warnings) or "unreadable"
        logger.warning(
            "tdmrep.json of %(origin)s (%(url)s) not used: %(why)s",
            {"origin": origin, "url": entry.url, "why": why},
            extra={"spider": self.crawler.spider},
        )

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """An unreachable tdmrep.json is retried as robots.txt is."""
        return self.politeness.robots_retry_in(failures, retry_after)
