"""The origin service's link to the robots.txt store (standard library only).

:class:`CrawlStore` turns a :class:`~scrapy_rerp.core.store.RobotsStore`'s copies into
:class:`~scrapy_rerp.core.data.RobotsEntry` objects and back, so that the origin service
(:mod:`scrapy_rerp.core.origins`) knows the store only through its small ``Store`` protocol
(:meth:`CrawlStore.claim`, :meth:`CrawlStore.publish`), as it knows a fleet's Redis. Rules
are parsed again from the stored body with the crawl's syntax, as a download's body is: a store
outlives changes to the parser and to ``RERP_SYNTAX``. The charset a body was parsed with is not
stored (the store keeps no ``Content-Type``): a stored body is read in the syntax's default
charset. :func:`stored_body` is the one reader of a stored body, for the crawl and the command
line alike: capped at the crawl's ``RERP_MAX_SIZE`` as a download is (a store written
under a larger cap is read as this crawl reads).

The store is read and written in bulk where it can be, as each call into SQLite costs a crawl
200 to 350 µs of CPU (caches cold between two; about 20 µs in a loop): when it opens, the
origins it holds and its most recently used copies (:data:`PRELOADED`) are read in one statement
each, so that an origin it does not hold and, on a restart over the same sites, most that it
does are answered from memory; copies and 304 renewals are written 64 to a transaction
(:data:`WRITES_AT_ONCE`). The remaining calls are short and rare (a lookup beyond the preloaded
copies, a batch), so they are made inline on the reactor thread rather than in a thread pool.

The store keeps every stored document kind (:attr:`~scrapy_rerp.core.documents.DocumentKind.
stored`): robots.txt under its origin (``https://example.com``), another kind under its origin
and path (``https://example.com/.well-known/security.txt``), a located one (an RSL licence) under
its URL. :meth:`CrawlStore.for_kind` is the
same file's store for another kind, with its own batch of writes.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from scrapy_rerp.core.body import Body, read_body
from scrapy_rerp.core.bounds import bounded_expiry
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators, body_sha256
from scrapy_rerp.core.documents import DocumentKind, robots_txt
from scrapy_rerp.core.origins import Claim
from scrapy_rerp.core.runtime import Stats
from scrapy_rerp.core.store import (
    STORED_OUTCOMES,
    RobotsStore,
    StoredCopy,
    header_fields,
    renewed_copy,
)

__all__ = [
    "PRELOADED",
    "PRELOADED_BYTES",
    "REVALIDATING",
    "WRITES_AT_ONCE",
    "CrawlStore",
    "stored_body",
]


def stored_body(copy: StoredCopy, max_size: int) -> Body:
    """The body of ``copy`` as a crawl reads a downloaded one: its first ``max_size`` bytes,
    in the syntax's default charset (the store keeps no Content-Type)."""
    return read_body(copy.body, None, None, max_size)


#: The most recently used copies read in one statement when the store opens (at most this many,
#: and :data:`PRELOADED_BYTES` of bodies): a crawl that runs again over the same sites then reads
#: none of them one by one. In a crawl a lookup costs 200 to 300 µs of CPU (caches cold between
#: two), a copy read with the others a few (docs/benchmarks.rst).
PRELOADED = 4096
PRELOADED_BYTES = 8 * 1024 * 1024
#: Expired copies kept, between their recall and the answer to their conditional refetch, so that
#: a 304 renews them without reading the file (past this many, a 304 reads it).
REVALIDATING = 4096

#: Copies written in one transaction, as a commit is most of a write's cost (1,000 copies:
#: 94 ms one by one, 14 to 24 ms in batches of 64, measured on this project's machine). A crawl
#: killed outright loses at most this many, fetched again by the next run.
WRITES_AT_ONCE = 64


class CrawlStore:
    """Each origin's last good robots.txt, read from and written to a store, with stats under
    ``robotstxt/store/``. A copy recalled is fresh at most ``max_lifetime`` after its fetch
    (:func:`~scrapy_rerp.core.bounds.longest_lifetime` of the crawl's settings), whatever
    expiry an earlier run (or a tampered file) gave it. The origin service's ``Store``."""

    fleet = False

    def __init__(
        self,
        store: RobotsStore,
        syntax: int,
        max_size: int,
        *,
        stats: Stats,
        max_lifetime: float = math.inf,
        kind: DocumentKind | None = None,
    ) -> None:
        self.store = store
        self.syntax = syntax
        self.max_size = max_size
        self.stats = stats
        self.max_lifetime = max_lifetime
        self.kind = kind if kind is not None else robots_txt(syntax)
        # Another kind's rows are keyed by origin and path; this store's own kind closes the file.
        self._suffix = "" if self.kind.meta_key is None else self.kind.path
        self._owner = self.kind.meta_key is None
        self._unavailable_counted = False
        self._validators: dict[str, Validators] = {}  # of the expired copies recalled
        self._revalidating: dict[str, StoredCopy] = {}  # expired copies recalled
        self._unwritten: dict[str, StoredCopy] = {}  # copies to write with the next batch
        self._renewed: dict[str, StoredCopy] = {}  # copies renewed, to write with it
        self._recalled: set[str] = set()  # origins recalled whose download is not yet written
        preloaded = store.recent(PRELOADED, PRELOADED_BYTES) if self._owner else {}
        self._preloaded = {key: preloaded[key] for key in self._own(set(preloaded))}
        # The origins stored when the crawl opened the store, and those it stored since: an
        # origin not among them is not looked up. A lookup that finds nothing costs a read of
        # the file (50 to 350 µs of CPU in a crawl, most of the store's cost on a first crawl:
        # docs/benchmarks.rst); a copy another process stores meanwhile is not seen, and its
        # robots.txt downloaded instead. Bounded by the store's own bound.
        self._known = self._own(store.origin_keys())

    def for_kind(self, kind: DocumentKind) -> CrawlStore:
        """The same file's store of the documents of another stored ``kind``."""
        return CrawlStore(
            self.store,
            self.syntax,
            self.max_size,
            stats=self.stats,
            max_lifetime=self.max_lifetime,
            kind=kind,
        )

    def _own(self, keys: set[str]) -> set[str]:
        """Of the store's ``keys``, this kind's."""
        if self._owner:
            return {key for key in keys if key.count("/") == 2}  # an origin: no path
        if self.kind.locate is not None:
            return {key for key in keys if key.count("/") > 2}  # a URL
        return {key for key in keys if key.endswith(self._suffix)}

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        """An origin the cache knew nothing of: its stored copy, used when fresh, revalidated
        when expired; else (or when the cache knew of it) a download."""
        origin += self._suffix
        recalled = self.get(origin) if known is None else None
        if recalled is None:
            return Claim(download=True)
        if recalled.expires_at > time.time():
            return Claim(entry=recalled, reused=True)
        validators = self._validators.pop(origin, None)  # None without ETag, Last-Modified
        return Claim(download=True, previous=recalled, validators=validators)

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched, claim: Claim
    ) -> RobotsEntry:
        """A good copy stored (:meth:`put`), a 304's renewal recorded (:meth:`renew`)."""
        origin += self._suffix
        if fetched.not_modified and entry.robots is not None:
            renewed = self.renew(origin, entry, entry.fetched_at, entry.expires_at, fetched)
            return renewed if renewed is not None else entry
        self.put(origin, entry, fetched)
        return entry

    def get(self, origin: str) -> RobotsEntry | None:
        """The stored copy of ``origin`` as an entry (fresh or expired: the caller decides), or
        None when there is none or the store is unavailable."""
        copy = self._unwritten.get(origin) or self._renewed.get(origin)
        if copy is None:
            copy = self._preloaded.pop(origin, None)
            if copy is not None:
                self.store.used(origin)
            elif origin in self._known:
                copy = self.store.get(origin)
        self._check()
        if copy is None:
            return None
        if len(self._recalled) < self.store.max_origins:
            self._recalled.add(origin)
        expires_at = bounded_expiry(copy.fetched_at, copy.expires_at, self.max_lifetime)
        if expires_at < copy.expires_at:
            copy = replace(copy, expires_at=expires_at)  # its lifetime by today's settings
        if copy.expires_at <= time.time():
            validators = Validators.of(copy.url, copy.etag, copy.last_modified)
            if validators is not None:
                self._validators[origin] = validators
            if len(self._revalidating) >= REVALIDATING:  # those whose refetch never answered
                del self._revalidating[next(iter(self._revalidating))]
            self._revalidating[origin] = copy
        return self._entry(copy)

    def _entry(self, copy: StoredCopy, robots: Any = None) -> RobotsEntry:
        """``copy`` as an entry, its rules ``robots`` when they are at hand, else parsed."""
        return RobotsEntry(
            robots=robots if robots is not None else self._rules(copy),
            fetched_at=copy.fetched_at,
            expires_at=copy.expires_at,
            status=copy.status,
            url=copy.url,
            outcome=copy.outcome,
            sha256=copy.sha256 if copy.outcome == Outcome.PARSED else body_sha256(None),
        )

    def _rules(self, copy: StoredCopy) -> Any:
        if copy.outcome == Outcome.PARSED:
            return self.kind.parse(stored_body(copy, self.max_size))
        if copy.outcome == Outcome.DISALLOW_ALL and self.kind.refused is not None:
            return self.kind.refused()
        return self.kind.absent()

    def renew(
        self,
        origin: str,
        previous: RobotsEntry,
        fetched_at: float,
        expires_at: float,
        fetched: Fetched,
    ) -> RobotsEntry | None:
        """Record a 304 for ``origin``'s stored copy, recalled as ``previous``: the renewed copy
        as an entry, or None when the store no longer has it (the caller keeps the copy it
        recalled). The rules are ``previous``'s, not parsed again. The copy recalled is renewed
        and written with the next batch; past :data:`REVALIDATING` copies, the store renews it
        at once, and answers with a later copy if another process stored one meanwhile."""
        recalled = self._revalidating.pop(origin, None)
        headers = getattr(fetched.response, "headers", None) or {}
        if recalled is not None and previous.robots is not None:
            renewed = renewed_copy(recalled, fetched_at, expires_at, headers)
            self._renewed[origin] = renewed
            self.stats.inc_value("robotstxt/store/revalidated")
            self._write_when_due()
            return self._entry(renewed, previous.robots)
        if origin in self._unwritten:
            self._write()  # the copy renewed is the one stored
        copy = self.store.renew(origin, fetched_at, expires_at, headers)
        self._check()
        if copy is None:
            return None
        self.stats.inc_value("robotstxt/store/revalidated")
        # The copy recalled, renewed, keeps its rules; one another process stored is parsed.
        return self._entry(copy, previous.robots if copy.fetched_at == fetched_at else None)

    def put(self, origin: str, entry: RobotsEntry, fetched: Fetched) -> bool:
        """Store what ``fetched`` brought (a good copy only: never an outage), with the next
        batch of writes (:data:`WRITES_AT_ONCE`, or at :meth:`close`); whether it will be."""
        if fetched.outcome not in STORED_OUTCOMES or entry.robots is None:
            return False
        self._unwritten[origin] = StoredCopy(
            url=fetched.url or entry.url or origin,
            status=fetched.status if fetched.status is not None else 0,
            outcome=fetched.outcome,
            fetched_at=entry.fetched_at,
            expires_at=entry.expires_at,
            body=fetched.body or b"",
            **header_fields(getattr(fetched.response, "headers", None) or {}),
        )
        self._renewed.pop(origin, None)
        self._revalidating.pop(origin, None)
        self._known.add(origin)
        if len(self._known) > 2 * self.store.max_origins + WRITES_AT_ONCE:
            # The store evicted some of them: what it holds now, and the batch not yet written
            # (at most once per bound's worth of origins stored).
            self._known = self._own(self.store.origin_keys()) | self._unwritten.keys()
        self._write_when_due()
        return self.store.available

    def _write_when_due(self) -> None:
        if len(self._unwritten) + len(self._renewed) >= WRITES_AT_ONCE:
            self._write()

    def _write(self) -> None:
        batch, self._unwritten = self._unwritten, {}
        renewed, self._renewed = self._renewed, {}
        if batch:
            stored = self.store.put_each(batch.items())
            if stored:
                self.stats.inc_value("robotstxt/store/stored", len(stored))
            # A copy recalled, replaced by a new download: counted once the download is
            # written (not when the store ignored or failed the write).
            replaced = sum(origin in self._recalled for origin in stored)
            self._recalled.difference_update(stored)
            if replaced:
                self.stats.inc_value("robotstxt/store/replaced", replaced)
        if renewed:
            # A copy fetched later by another process stays (put_each keeps the later one).
            self.store.put_each(renewed.items())
        self._check()

    def close(self) -> None:
        """Write what is left, close the store, its counts into the stats (failures among
        them)."""
        if self._unwritten or self._renewed:
            self._write()
        if not self._owner:  # robots.txt's store closes the file
            return
        counts = self.store.counts
        self.store.close()
        for stat, value in (
            ("robotstxt/store/evicted", counts.evicted),
            ("robotstxt/store/refused", counts.refused),
            ("robotstxt/store/errors", counts.errors),
            *((f"robotstxt/store/rejected/{why}", n) for why, n in counts.rejected.items()),
        ):
            if value:
                self.stats.set_value(stat, value)

    def _check(self) -> None:
        """Count once that the store failed (it logged its WARNING itself)."""
        if not self.store.available and not self._unavailable_counted:
            self._unavailable_counted = True
            self.stats.inc_value("robotstxt/store/unavailable")
