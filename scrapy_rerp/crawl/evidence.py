"""Evidence written during a crawl (``RERP_EVIDENCE``, docs/evidence.rst).

The records are built by :mod:`scrapy_rerp.core.evidence`; this module writes them where the
settings say, through Scrapy's own feed storages (``FEED_STORAGES``: ``file://`` or a plain
path, ``s3://``, ``gs://``, ``ftp://``, built with ``build_from_crawler`` as the feed exporter
builds them), as JSON lines, and as WARC with ``RERP_EVIDENCE_WARC``
(:mod:`scrapy_rerp.core.evidence_warc`).

The log writes what the robots.txt layer's signals tell it (:mod:`scrapy_rerp.signals`):

* A robots.txt (or tdmrep.json, or another registered document's) record per file read
  (``document_received``; one read again is not written again, within a bounded memory of the
  last :data:`REMEMBERED_FILES`).
* A decision record per request decided: refused by robots.txt, dropped (and why), downloaded
  or failed; a page record for what a page said of itself. The line that let a request
  through is in its meta (:data:`~scrapy_rerp.core.admission.DECISION_META`), for an item's
  provenance too (:class:`EvidenceItemsMiddleware`).
* Each record is written whole and flushed: a crawl killed mid-write leaves at most its last
  line cut short, which :func:`~scrapy_rerp.core.evidence.read_records` and ``scrapy-rerp
  audit`` report.
* A storage that fails (a full disk, S3 refusing an upload) is logged at ERROR and counted
  (``robotstxt/evidence/failed``); from then on nothing more is written, and each record is
  counted as lost (``robotstxt/evidence/lost``), never as written. With
  ``RERP_EVIDENCE_ON_FAILURE = "stop"`` (the default) the crawl then stops as one that failed
  (close reason ``rerp_evidence_failed``, exit status 1), as evidence that silently stops is no
  evidence, and no request is sent nor answer handed to the spider after the failure
  (:attr:`EvidenceLog.stopped`): the engine is paused (no request leaves the scheduler), and
  the log's handlers of ``request_admitted``, ``request_answered`` and ``page_read`` raise
  :class:`EvidenceStopped` (Scrapy catches a handler's other exceptions: the refusal, not a
  failed write, is what stops them). With ``"continue"`` it goes on.

The URI's placeholders: ``%(name)s`` (the spider's name), ``%(time)s`` (the crawl's start,
UTC, as Scrapy's feeds write it), ``%(worker)s`` (host name and process id: each worker of a
fleet writes its own files), and with ``RERP_EVIDENCE_BATCH_SIZE`` ``%(batch_id)d`` and
``%(batch_time)s``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import IO, TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from itemadapter import ItemAdapter
from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.core.admission import DECISION_META
from scrapy_rerp.core.body import capped_lines
from scrapy_rerp.core.evidence import (
    ROBOTS_HEADERS,
    decision_record,
    item_provenance,
    page_record,
    robots_record,
)
from scrapy_rerp.core.settings import RerpSettingsError, settings_for
from scrapy_rerp.core.urls import origin_of, robots_url_of
from scrapy_rerp.core.version import __version__
from scrapy_rerp.crawl.compat import engine_of, fail_crawl, header_key, header_values, stats_of
from scrapy_rerp.crawl.signing import signed_with
from scrapy_rerp.engine import RobotsTxt

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_rerp.core.data import Fetched, RobotsEntry
    from scrapy_rerp.core.documents import DocumentKind
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import PageDirectives, PageStatement, TdmReservation

__all__ = [
    "CLOSE_REASON",
    "EVIDENCE_ITEMS_PRIORITY",
    "check_storages",
    "REMEMBERED_FILES",
    "EvidenceItemsMiddleware",
    "EvidenceLog",
    "EvidenceStopped",
]

logger = logging.getLogger(loggers.EVIDENCE)

#: Where the Addon puts :class:`EvidenceItemsMiddleware`: between the spider and it, the page
#: directives' middleware (950) drops the items a page refuses first.
EVIDENCE_ITEMS_PRIORITY = 900
#: The spider's close reason when evidence cannot be written and the crawl stops for it.
CLOSE_REASON = "rerp_evidence_failed"
#: robots.txt files (origin and body) remembered as written: one read again is not written
#: again. Bounded: past it, one read again is written again, which costs a line, never a gap.
REMEMBERED_FILES = 65_536

_X_ROBOTS_TAG = header_key("X-Robots-Tag")
# One encoder for every line: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class EvidenceStopped(IgnoreRequest):
    """A request not downloaded, or a response not handed to the spider, because the evidence
    failed and ``RERP_EVIDENCE_ON_FAILURE`` is ``"stop"``: counted
    (``robotstxt/evidence/stopped/request``, ``.../response``)."""

    def __init__(self) -> None:
        super().__init__(f"evidence cannot be written ({CLOSE_REASON})")


class _Sink(Protocol):
    """What records are written to (a JSON-lines or a WARC writer on an open file)."""

    def write(self, record: Mapping[str, Any]) -> None: ...


class _JsonLines:
    def __init__(self, file: IO[bytes]) -> None:
        self.file = file

    def write(self, record: Mapping[str, Any]) -> None:
        line = _ENCODER.encode(record)
        # Whole lines, flushed one by one: a crash cuts at most the last.
        self.file.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.file.flush()


def _warc_sink(file: IO[bytes]) -> _Sink:
    from scrapy_rerp.core.evidence_warc import WarcEvidenceWriter

    return WarcEvidenceWriter(file, software=f"scrapy_rerp/{__version__}")


class _Output:
    """The files of one URI template: opened through a feed storage, a new one per batch."""

    def __init__(
        self,
        crawler: Crawler,
        template: str,
        make_sink: Callable[[IO[bytes]], _Sink],
        *,
        batch_records: int,
        fail: Callable[[BaseException, str], None],
    ) -> None:
        self.crawler = crawler
        self.fail = fail
        self.template = template
        self.make_sink = make_sink
        self.batch_records = batch_records
        self.storages = _storages(crawler)
        self.batch_id = 0
        self.written = 0
        self.storage: Any = None
        self.file: IO[bytes] | None = None
        self.sink: _Sink | None = None
        self.pending: list[Deferred[Any]] = []
        self.failed = False  # the current file failed: closing it may fail again, for the same

    def open(self, spider: Spider, params: Mapping[str, Any]) -> None:
        self.batch_id += 1
        batch_time = datetime.now(tz=timezone.utc).isoformat().replace(":", "-")
        uri = self.template % {**params, "batch_id": self.batch_id, "batch_time": batch_time}
        self.failed = False
        storage_class = load_object(self.storages.get(urlparse(uri).scheme, self.storages["file"]))
        self.storage = build_from_crawler(storage_class, self.crawler, uri, feed_options={})
        self.file = self.storage.open(spider)
        self.sink = self.make_sink(self.file)
        self.written = 0

    def write(self, record: Mapping[str, Any], spider: Spider, params: Mapping[str, Any]) -> None:
        if self.sink is None:
            self.open(spider, params)
        assert self.sink is not None
        self.sink.write(record)
        self.written += 1
        if self.batch_records and self.written >= self.batch_records:
            self.finish()

    def finish(self) -> None:
        """Hand the current file to its storage (an upload, for remote ones)."""
        file, storage = self.file, self.storage
        self.file = self.sink = self.storage = None
        if file is None:
            return
        stored = storage.store(file)
        if isinstance(stored, Deferred):
            stored.addErrback(
                lambda failure: self.fail(failure.value, f"cannot store {self.template}")
            )
            self.pending.append(stored)


def _storages(crawler: Crawler) -> dict[str, Any]:
    """Scrapy's feed storages by URI scheme (``FEED_STORAGES_BASE`` and ``FEED_STORAGES``)."""
    storages = crawler.settings.getwithbase("FEED_STORAGES")
    return {scheme: path for scheme, path in storages.items() if path is not None}


def check_storages(crawler: Crawler, settings: RerpSettings) -> None:
    """Raise :class:`RerpSettingsError` for an evidence URI no feed storage writes, so that the
    crawl stops before it starts rather than run without its evidence."""
    storages = _storages(crawler)
    for name, uri in (
        ("RERP_EVIDENCE", settings.evidence),
        ("RERP_EVIDENCE_WARC", settings.evidence_warc),
    ):
        if uri is None:
            continue
        scheme = urlparse(uri).scheme
        if len(scheme) > 1 and scheme not in storages:  # one letter: a Windows drive
            raise RerpSettingsError(
                name,
                uri,
                f"a path or a URI of a feed storage ({', '.join(sorted(filter(None, storages)))})",
            )
    if settings.evidence is None and (settings.evidence_warc or settings.evidence_item_field):
        raise RerpSettingsError(
            "RERP_EVIDENCE",
            None,
            "a path or URI when RERP_EVIDENCE_WARC or RERP_EVIDENCE_ITEM_FIELD is set",
        )
    if settings.evidence_warc is not None:
        try:
            import warcio  # noqa: F401
        except ImportError:
            raise RerpSettingsError(
                "RERP_EVIDENCE_WARC", settings.evidence_warc, "warcio installed (the [warc] extra)"
            ) from None


class EvidenceLog:
    """The crawl's evidence: records built and written, failures handled per the settings."""

    def __init__(self, crawler: Crawler, settings: RerpSettings, copies_from: str) -> None:
        assert settings.evidence is not None
        self.crawler = crawler
        self.stats = stats_of(crawler)
        self.stop_on_failure = settings.evidence_on_failure == "stop"
        self.syntax = settings.syntax_name
        self.signs = settings.signature_key is not None  # decisions say whether each was signed
        self.copies_from = copies_from  # where copies not downloaded come from: store, fleet
        sinks: tuple[tuple[str | None, Callable[[IO[bytes]], _Sink]], ...] = (
            (settings.evidence, _JsonLines),
            (settings.evidence_warc, _warc_sink),
        )
        batch = settings.evidence_batch_size
        self.outputs = [
            _Output(crawler, template, make_sink, batch_records=batch, fail=self._fail)
            for template, make_sink in sinks
            if template is not None
        ]
        self._written_files: OrderedDict[tuple[str, str, str | None], None] = OrderedDict()
        self._params: dict[str, Any] = {}
        self._failed = False
        self._closed = False
        self._stopped: dict[str, int] = {}  # requests and responses stopped, for the log
        # Held by the crawl's signal manager, weakly: the middleware's parts hold the log.
        for handler, signal in (
            (self.spider_opened, scrapy_signals.spider_opened),
            (self.document_received, signals.document_received),
            (self.request_admitted, signals.request_admitted),
            (self.request_refused, signals.request_refused),
            (self.request_answered, signals.request_answered),
            (self.request_failed, signals.request_failed),
            (self.page_read, signals.page_read),
        ):
            crawler.signals.connect(handler, signal=signal)

    # -- records, as the layer's signals come ----------------------------------------------------
    def request_admitted(self, request: Request) -> None:
        """Under "stop", once the evidence failed: no request goes on to its download."""
        if self.stopped:
            raise self.stop("request", request.url)

    def request_refused(
        self, request: Request, reason: str, message: str, decision: Mapping[str, Any] | None
    ) -> None:
        if reason == "robots.txt":
            self.decision(request, "refused", decision, reason)
        elif reason != "page":  # a request a page's nofollow dropped is in the page's record
            self.decision(request, "dropped", decision, message)

    def request_answered(
        self, request: Request, response: Response, decision: Mapping[str, Any] | None
    ) -> None:
        """The record of a request the gate decided and a site answered. Under "stop", no page
        reaches the spider without its record: written and flushed here, or the evidence has
        failed (this record or an earlier one), and :class:`EvidenceStopped` keeps it back."""
        if decision is not None:
            said = capped_lines(header_values(response.headers, _X_ROBOTS_TAG) or [])[0]
            directives = tuple(value.decode("latin-1") for value in said)
            self.decision(request, "downloaded", decision, None, directives)
        if self.stopped:
            raise self.stop("response", response.url)

    def request_failed(
        self, request: Request, exception: Exception, decision: Mapping[str, Any]
    ) -> None:
        self.decision(request, "failed", decision, f"{type(exception).__name__}: {exception}"[:500])

    def page_read(
        self,
        response: Response,
        directives: PageDirectives,
        reservation: TdmReservation | None,
        refused: list[dict[str, Any]],
        items: str | None,
        nofollow: PageStatement | None,
    ) -> None:
        """What a page said of itself, read as its answer reaches the spider; under "stop", a
        page whose record (or an earlier one) could not be written goes no further."""
        said = reservation.statement if reservation is not None else None
        keys = ("technique", "reservation", "policy", "source")
        tdmrep = {key: getattr(said, key) for key in keys} if said is not None else None
        record = page_record(
            url=response.url,
            at=time.time(),
            directives=[(statement.source, statement.text) for statement in directives.statements],
            refused=refused,
            items=items,
            nofollow=nofollow is not None,
            tdmrep=tdmrep,
            tdmrep_sha256=_documents(response.meta.get(DECISION_META)).get("tdmrep"),
        )
        if self._write(record):
            self.stats.inc_value("robotstxt/evidence/page")
        if self.stopped:
            raise self.stop("response", response.url)

    def document_received(
        self,
        origin: str,
        entry: RobotsEntry,
        fetched: Fetched | None,
        user_agent: str | None,
        document: DocumentKind | None = None,
    ) -> None:
        """The robots.txt ``entry`` of ``origin`` (or its ``document`` of another kind) became
        known: downloaded (``fetched``), or a copy from the store or the fleet."""
        agent = None  # robots.txt's only
        if document is None or document.meta_key is None:
            token, url, agent = "robots", robots_url_of(origin), user_agent
        elif document.locate is not None:  # known by its URL (an RSL licence): ``origin``
            token, url, origin = document.token, origin, origin_of(origin)
        else:
            token, url = document.token, origin + document.path
        key = (token, origin, entry.sha256)
        if key in self._written_files:
            self._written_files.move_to_end(key)
            return
        self._written_files[key] = None
        if len(self._written_files) > REMEMBERED_FILES:
            self._written_files.popitem(last=False)
        record = robots_record(
            origin=origin,
            url=url,
            final_url=fetched.url if fetched is not None else entry.url,
            status=fetched.status if fetched is not None else entry.status,
            fetched_at=entry.fetched_at,
            outcome=entry.outcome.value,
            # A copy from the store or the fleet comes by its hash: its body is in the evidence
            # of the run, or the worker, that downloaded it.
            body=fetched.body if fetched is not None and entry.outcome.value == "parsed" else None,
            headers=_headers(fetched.response) if fetched is not None else None,
            syntax=self.syntax if token == "robots" else None,
            agent=agent,
            matched=_matched(entry, agent),
            plugin_version=__version__,
            source="download" if fetched is not None else self.copies_from,
            sha256=entry.sha256,
            kind=token,
        )
        if self._write(record):
            self.stats.inc_value(f"robotstxt/evidence/{token}")

    def decision(
        self,
        request: Request,
        verdict: str,
        decided: Mapping[str, Any] | None,
        reason: str | None,
        page_directives: tuple[str, ...] = (),
    ) -> None:
        """A request decided: ``decided`` is its decision (the robots.txt line)."""
        decided = decided or {}
        keyid = signed_with(request) if self.signs else None
        record = decision_record(
            url=request.url,
            at=time.time(),
            verdict=verdict,
            reason=reason,
            robots_sha256=decided.get("robots_sha256"),
            line=decided.get("line"),
            rule=decided.get("rule"),
            group=decided.get("group"),
            usage=usage_of(request.meta),
            page_directives=page_directives,
            tdmrep_sha256=_documents(decided).get("tdmrep"),
            documents=_documents(decided),
            signed=keyid is not None if self.signs else None,
            keyid=keyid,
        )
        if self._write(record):
            # Under decision/: a "failed" verdict is not robotstxt/evidence/failed, a storage's
            # failure.
            self.stats.inc_value(f"robotstxt/evidence/decision/{verdict}")

    # -- writing ---------------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self._params = {
            "name": spider.name,
            "time": datetime.now(tz=timezone.utc).isoformat(timespec="seconds").replace(":", "-"),
            "worker": f"{socket.gethostname()}-{os.getpid()}",
        }
        for output in self.outputs:
            try:
                output.open(spider, self._params)
            except Exception as exc:  # noqa: BLE001 - any storage's failure is one
                output.failed = True
                self._fail(exc, f"cannot open {output.template}")

    def _write(self, record: Mapping[str, Any]) -> bool:
        """Write ``record`` to every file; True when every one took it (each flushed it). A
        record that is not written is counted as lost, and only so: once a file failed, every
        record after is lost (a file with a gap would be no evidence of what it leaves out)."""
        if self._failed or self._closed:
            self.stats.inc_value("robotstxt/evidence/lost")
            return False
        spider = self.crawler.spider
        for output in self.outputs:
            try:
                output.write(record, spider, self._params)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - any storage's failure is one
                output.failed = True
                self._fail(exc, f"cannot write to {output.template}")
                self.stats.inc_value("robotstxt/evidence/lost")
                return False
        return True

    @property
    def stopped(self) -> bool:
        """Whether the evidence failed under ``RERP_EVIDENCE_ON_FAILURE = "stop"``: from then on
        no request is downloaded and no response handed to the spider (:meth:`stop`)."""
        return self._failed and self.stop_on_failure

    def stop(self, what: str, url: str) -> EvidenceStopped:
        """Count a ``request`` not downloaded, or a ``response`` not handed to the spider, for
        :attr:`stopped`: the exception to raise for it."""
        self.stats.inc_value(f"robotstxt/evidence/stopped/{what}")
        self._stopped[what] = self._stopped.get(what, 0) + 1
        logger.debug(
            "Evidence: %(what)s %(url)s dropped: the evidence cannot be written (%(reason)s)",
            {"what": what, "url": url, "reason": CLOSE_REASON},
            extra={"spider": self.crawler.spider},
        )
        return EvidenceStopped()

    def _fail(self, exc: BaseException, what: str) -> None:
        self.stats.inc_value("robotstxt/evidence/failed")
        if self._failed:
            return
        self._failed = True
        logger.error(
            "Evidence: %(what)s: %(error)s; %(then)s",
            {
                "what": what,
                "error": f"{type(exc).__name__}: {exc}",
                "then": "the crawl stops (RERP_EVIDENCE_ON_FAILURE = 'stop')"
                if self.stop_on_failure
                else "the crawl goes on without evidence (RERP_EVIDENCE_ON_FAILURE = 'continue')",
            },
            extra={"spider": self.crawler.spider},
        )
        if self.stop_on_failure:
            # From now on no request leaves the scheduler: the engine, paused, closes.
            engine = engine_of(self.crawler)
            if engine is not None:
                engine.pause()
            # A crawl that stops for its evidence failed: `scrapy crawl` exits with status 1.
            fail_crawl(self.crawler, CLOSE_REASON)

    async def close(self) -> None:
        """The crawl is over: every file handed to its storage, uploads awaited."""
        if self._closed:
            return
        self._closed = True
        for output in self.outputs:
            try:
                output.finish()
            except Exception as exc:  # noqa: BLE001
                if not output.failed:  # else its write's failure again, counted once
                    self._fail(exc, f"cannot close {output.template}")
            for stored in output.pending:  # their failures went to _fail
                await maybe_deferred_to_future(stored)
        if self._stopped:
            logger.info(
                "Evidence: after it failed, %(requests)d requests were not downloaded and "
                "%(responses)d responses downloaded were not handed to the spider (%(reason)s)",
                {
                    "requests": self._stopped.get("request", 0),
                    "responses": self._stopped.get("response", 0),
                    "reason": CLOSE_REASON,
                },
                extra={"spider": self.crawler.spider},
            )


class EvidenceItemsMiddleware:
    """A spider middleware that puts an item's provenance in ``RERP_EVIDENCE_ITEM_FIELD``: the
    robots.txt its page was fetched under (sha256, fetch time), the line that let it through,
    and the usage decision."""

    def __init__(self, crawler: Crawler, field: str) -> None:
        self.crawler = crawler
        self.stats = stats_of(crawler)
        self.field = field
        self._refused_said = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> EvidenceItemsMiddleware:
        from scrapy_rerp.crawl.compat import close_when_opened

        settings = settings_for(crawler, close_when_opened)
        if settings is None or settings.evidence_item_field is None:
            raise NotConfigured  # no message: Scrapy logs a WARNING for one
        return cls(crawler, settings.evidence_item_field)

    def process_spider_output(
        self, response: Response, result: Any, spider: Spider | None = None
    ) -> Any:
        for output in result:
            yield self._marked(response, output)

    async def process_spider_output_async(
        self, response: Response, result: Any, spider: Spider | None = None
    ) -> Any:
        async for output in result:
            yield self._marked(response, output)

    def _marked(self, response: Response, output: Any) -> Any:
        if isinstance(output, Request) or not ItemAdapter.is_item(output):
            return output
        decided = response.meta.get(DECISION_META) or {}
        provenance = item_provenance(
            robots_sha256=decided.get("robots_sha256"),
            fetched_at=decided.get("robots_fetched_at"),
            line=decided.get("line"),
            usage=usage_of(response.meta),
        )
        try:
            ItemAdapter(output)[self.field] = provenance
        except KeyError:  # an Item class without the field
            self.stats.inc_value("robotstxt/evidence/item_field_refused")
            if not self._refused_said:
                self._refused_said = True
                logger.warning(
                    "RERP_EVIDENCE_ITEM_FIELD %r is not a field of %s: its items carry no "
                    "provenance (declare the field)",
                    self.field,
                    type(output).__name__,
                )
        return output


def usage_of(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The usage decision of a request (``RERP_USAGE``) as an evidence record's ``usage``: the
    purpose a preference refused, else the first purpose asked."""
    decisions = meta.get("rerp_usage")
    if not decisions:
        return None
    purpose, decision = next(
        ((p, d) for p, d in decisions.items() if getattr(d, "preference", None) == "disallowed"),
        next(iter(decisions.items())),
    )
    preference = getattr(decision, "preference", None)
    line = getattr(decision, "line", None)
    statement = getattr(decision, "statement", None) or ""
    if preference == "unknown" and line is None:
        source = "default"
    elif line is None and statement.startswith("RSL "):  # crawl/usage.py, LICENCE_STATEMENT
        source = "license"
    elif line is not None:
        source = "robots.txt"
    else:
        source = "header"
    return {
        "purpose": purpose,
        "allowed": {"allowed": True, "disallowed": False}.get(preference or ""),
        "source": source,
        "value": getattr(decision, "statement", None),
    }


def _matched(entry: RobotsEntry, user_agent: str | None) -> tuple[str, ...] | None:
    """The agents of a robots.txt that match the crawler (None for other documents)."""
    robots = entry.robots
    if user_agent is None or not isinstance(robots, RobotsTxt):
        return None
    return robots.matched_agents(user_agent)


def _headers(response: Any) -> dict[str, bytes | None]:
    """The response headers a robots.txt record keeps (no others are ever read)."""
    headers = getattr(response, "headers", None)
    return {name: headers.get(name) for name in ROBOTS_HEADERS} if headers is not None else {}


def _documents(decided: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The hashes of the documents besides robots.txt a request went on with, by kind."""
    return (decided or {}).get("documents") or {}
