"""The per-origin documents besides robots.txt, in a crawl: registered, attached, heard.

* :func:`registered_kinds`: the kinds a crawl serves, robots.txt first, then each factory of
  :data:`~scrapy_rerp.core.documents.BASE_DOCUMENTS` and ``RERP_DOCUMENTS`` that returns one
  (a factory that cannot be loaded, fails or returns something else stops the crawl at
  start-up: :class:`~scrapy_rerp.core.settings.RerpSettingsError`);
* :class:`Attached`: an origin's document as the gate attaches it to a request
  (``request.meta[kind.meta_key]``), for the parts that read it (the page directives read
  tdmrep.json's);
* :class:`DocumentListener`: what the crawl does with each new document of a kind other than
  robots.txt (the origin service's ``RulesListener``): it is sent as
  ``scrapy_rerp.signals.document_received`` (the evidence records it), and one the kind does
  not use (:attr:`~scrapy_rerp.core.documents.DocumentKind.problem`) is counted and logged once
  per origin.

Each kind is served like robots.txt (:func:`scrapy_rerp.crawl.assembly.assemble`): one download
per origin (per fleet), kept in memory with robots.txt's lifetime rules, kept by ``RERP_STORE``
when the kind is ``stored``, retried through an outage like robots.txt.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.core.documents import BASE_DOCUMENTS, DocumentKind, problems_of, robots_txt
from scrapy_rerp.core.settings import RerpSettingsError
from scrapy_rerp.core.wording import FirstTimes
from scrapy_rerp.crawl.compat import stats_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.data import Fetched, RobotsEntry
    from scrapy_rerp.core.politeness import Politeness
    from scrapy_rerp.core.settings import RerpSettings

__all__ = ["Attached", "DocumentListener", "registered_kinds"]

logger = logging.getLogger(loggers.ROBOTSTXT)


def registered_kinds(settings: RerpSettings) -> list[DocumentKind]:
    """robots.txt, then the kinds the crawl's factories register, in their order."""
    kinds = [robots_txt(settings.syntax)]
    named = list(settings.documents)
    for path in (*BASE_DOCUMENTS, *named):
        try:
            kind = load_object(path)(settings)
        except Exception as error:
            raise _bad_factory(named, f"{path} failed ({type(error).__name__}: {error})") from error
        if kind is None:
            continue
        if not isinstance(kind, DocumentKind):
            raise _bad_factory(named, f"{path} returned {type(kind).__name__}, not a DocumentKind")
        kinds.append(kind)
    problems = problems_of(kinds)
    if problems:
        raise RerpSettingsError(
            "RERP_DOCUMENTS", named, f"kinds that can be served together: {'; '.join(problems)}"
        )
    return kinds


def _bad_factory(named: list[str], problem: str) -> RerpSettingsError:
    return RerpSettingsError("RERP_DOCUMENTS", named, f"factories of document kinds: {problem}")


class Attached:
    """An origin's document as the gate attaches it to a request: never pickled. A JOBDIR
    keeps requests on disk, with their meta (a retried request carries it), and a document may
    be as large as ``RERP_MAX_SIZE``: pickled, it is None, and the gate attaches the document
    again when the request comes back to it."""

    __slots__ = ("document",)

    def __init__(self, document: Any) -> None:
        self.document = document

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _detached, ()

    def __copy__(self) -> Attached:
        return self

    def __deepcopy__(self, memo: Any) -> Attached:
        return self


def _detached() -> None:
    return None


class DocumentListener:
    """What a crawl does with an origin's document of ``kind`` (its ``RulesListener``)."""

    def __init__(
        self, crawler: Crawler, politeness: Politeness, kind: DocumentKind, *, max_origins: int
    ) -> None:
        self.crawler = crawler
        self.politeness = politeness
        self.kind = kind
        self.stats = stats_of(crawler)
        # Origins whose unused document was logged, the latest max_origins
        # (RERP_CACHE_MAX_ORIGINS, as many as the cache keeps): a broad crawl's memory stays
        # bounded.
        self._said = FirstTimes(max_origins)

    async def before_sharing(self, origin: str, document: Any, trigger: Any) -> None:
        """Nothing to apply before the fleet gets it."""

    async def rules_known(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, trigger: Any
    ) -> None:
        kind = self.kind
        self.crawler.signals.send_catch_log(
            signals.document_received,
            origin=origin,
            kind=kind.name,
            document=kind,
            entry=entry,
            fetched=fetched,
            user_agent=None,
        )
        why = kind.problem(entry.robots) if kind.problem is not None else None
        if why is None:
            return
        if kind.stats.file_invalid is not None:
            self.stats.inc_value(kind.stats.file_invalid)
        if self._said.first(origin):
            logger.warning(
                "%(kind)s of %(origin)s (%(url)s) not used: %(why)s",
                {"kind": kind.name, "origin": origin, "url": entry.url, "why": why},
                extra={"spider": self.crawler.spider},
            )

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """An unreachable document is retried as robots.txt is."""
        return self.politeness.robots_retry_in(failures, retry_after)
