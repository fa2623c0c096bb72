"""robots.txt kept across runs: each origin's last good copy in an SQLite file
(standard library only).

A crawl starts knowing nothing; this store lets the next run (or another process on the same
machine) start from what an earlier one fetched: reuse a copy that is still fresh, revalidate an
expired one with a conditional request, and fall back on the last good copy while a site's
robots.txt is unreachable (issue 38; RFC 9309 2.4 and 2.3.1.4). The store only keeps and returns
copies: when a copy is fresh, how long a stale one may stand in, what a 304 means, are the
caller's (``scrapy_rerp.core.status`` computes lifetimes).

What is kept
------------
Per origin (the key, ``https://example.com``), one :class:`StoredCopy`: the robots.txt URL after
redirects, the HTTP status, the outcome it led to (``parsed``, ``allow-all`` or ``disallow-all``:
an unreachable answer is never a good copy), the wall-clock fetch time, when it is fresh until
(``expires_at``, computed by the caller), the raw values of the headers that decide freshness and
revalidation (``Date``, ``Cache-Control``, ``Expires``, ``ETag``, ``Last-Modified``), the body as
read (decoded from its Content-Encoding, capped by the caller) and its sha256. Rules are never
stored: a reader parses the body again, as a fleet's Redis hash is read
(``scrapy_rerp.fleet.codec``), so a store outlives changes to the parser. A body over
:data:`MAX_BODY` is refused (one WARNING, counted): a store is for robots.txt files, not for
whatever a server sends.

Of two copies of one origin, the one fetched later wins: a :meth:`RobotsStore.put` of a copy
fetched before the stored one is ignored (two processes that fetched the same file keep the
newer), unless the stored one's fetch is more than ``CLOCK_SKEW`` in the future.
:meth:`RobotsStore.renew` records a 304: new fetch and expiry times, the headers the 304 carried
replacing the stored ones (RFC 9111 4.3.4), the body kept.

Why SQLite, and WAL
-------------------
The standard library has it, a store is one file the user can move or delete, and SQLite's
locking lets several crawl processes on one machine share the file. The journal is WAL
(write-ahead log): readers never wait for a writer, and a writer waits only for another writer.
Every operation is one short transaction; a process waits for another's at most the busy timeout
(:data:`BUSY_TIMEOUT`, a constructor argument), past which the store gives up (below).
``synchronous=NORMAL``: a power cut may lose the last writes, never the file's consistency,
which suits a cache. WAL needs shared memory, so the file must be on a local disk (SQLite's own
rule: not on a network file system).

Threads and processes: a store object holds one connection, made with
``check_same_thread=False`` and guarded by a lock, so any thread may call it. The usual caller is
the crawl's reactor thread, but a caller may move store calls to a thread pool to keep disk waits
off the event loop; one connection serialised by a lock keeps one set of file handles, one
:meth:`RobotsStore.close`, and the counters and the "unavailable" switch consistent, at little
cost, since each call is one short transaction and SQLite serialises the file's writers anyway.
A connection belongs to the process that opened it (SQLite's rule: never use one across a
``fork``): a store used in a forked child opens its own, leaving the parent's untouched.

The bound
---------
At most ``max_origins`` origins (a constructor argument, :data:`DEFAULT_MAX_ORIGINS`), least
recently used evicted. Each row has a ``used_at`` tick (one more than the file's highest), set by
:meth:`~RobotsStore.get`, :meth:`~RobotsStore.put` and :meth:`~RobotsStore.renew`, and indexed
(a lookup's use is recorded with the next write, :data:`USES_AT_ONCE` lookups at most later,
or at :meth:`~RobotsStore.close`, so that a lookup is a read alone; :meth:`~RobotsStore.recent`
reads the most recently used copies in one statement, and :meth:`~RobotsStore.used` records the
use of one of them);
triggers keep the number of rows in a one-row table, so that a put that adds an origin knows
whether the store is over its bound without counting, and evicts the excess in one statement
(the oldest ticks, through the index). The rows are counted once per opening, which sets a tally
gone wrong right.

The version
-----------
``PRAGMA application_id`` (:data:`APPLICATION_ID`) marks a file as a store, ``PRAGMA
user_version`` its layout (:data:`SCHEMA_VERSION`). A store of another version is never read: it
is set aside, renamed beside it (``<name>.v<N>.<YYYYmmddTHHMMSS>``), with one WARNING, and a new
one made at the path. It is set aside only when no other process has it open (it is first turned
back to a rollback journal, which SQLite allows only then, so that no write-ahead log is left to
pair with the wrong file); while one has (a crawl of that version, running), this run goes
without the store (one WARNING) and a later run sets it aside. An SQLite file that is not a store
(another application's) is never touched: the store is unavailable.

A store is opened (checked, made, set aside) under a lock on ``<name>.lock`` beside it (``flock``;
made once, never removed): SQLite's own locks cannot keep a process that has just opened the old
file from pairing it, on its first read, with the write-ahead log of the new file made at its
path. Once open, a store needs no lock but SQLite's.

Failures
--------
Everything read back is untrusted: each column's type and size are checked, the times against
``scrapy_rerp.core.bounds`` (a time between 1970 and 9999, a fetch at most ``CLOCK_SKEW`` in the
future), header values for line breaks, and the body's sha256 against the stored hash. SQLite
hands over no value over :data:`MAX_VALUE` (its length limit, set on each connection, Python 3.11
and later): a row holding one is read as failing, never into memory. A row that fails is deleted,
counted (``dropped_bad_rows``, and by reason in ``rejected``: :data:`REJECTED_REASONS`), named in
:attr:`RobotsStore.rejections` and read as absent; the first is logged at WARNING, the next at
DEBUG, an origin quoted cut to :data:`LOGGED_ORIGIN` characters. The file is held to more than its
rows: a path that is not a regular file (a device, a FIFO) is never opened, so that SQLite makes
no journal beside it; a schema holding any object a store has not made (a trigger, a view, an
index, a table, or one of ours changed) makes the store unusable before a statement could run
it (``PRAGMA trusted_schema`` is off as well); and each call runs under a deadline
(:data:`DEADLINE`, SQLite's progress handler), past which it is interrupted and the store
unusable: no file, whatever it holds, keeps the caller's thread. A file that cannot be used
(garbage bytes, a truncated file, a directory at the path, a read-only location, another
application's database, a lock held past the busy timeout, any SQLite error) gives one WARNING,
and from then on
the store is a no-op for the rest of the run: :meth:`~RobotsStore.get` answers None,
:meth:`~RobotsStore.put` ignores its copy. :attr:`RobotsStore.available` and
:attr:`RobotsStore.reason` say so, for the caller to count and report; no call raises into the
caller. A truncated file is seen when it is opened (its header's page count against its size);
other damage when a call meets it. A damaged file is left as it is, for the user to inspect or
delete (the reason says so).

Counters (:class:`StoreCounts`, ``store.counts``) are plain ints for the caller's stats: copies
stored, read, renewed, evicted, bad rows dropped (and by reason), copies refused, errors.

Read only
---------
``RobotsStore(path, read_only=True)`` looks at a store without changing anything (the command
line's ``scrapy-rerp store`` and ``fetch --store``): the file must exist (it is never made), is
opened with SQLite's ``mode=rw`` (which never creates it) and ``PRAGMA query_only`` where it may
be written, else ``mode=ro`` (``immutable`` without a write-ahead log: a read-only mount); it is
never made, set aside nor its tally set right; :meth:`~RobotsStore.get` records no use; a row that
fails its checks is read as absent, not deleted; :meth:`~RobotsStore.put`,
:meth:`~RobotsStore.renew` and :meth:`~RobotsStore.forget` do nothing. The opening lock is taken
when its file exists, never made. A store of another version, an empty file, and any file that
is not a store are unavailable, with the reason.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from scrapy_rerp.core import loggers
from scrapy_rerp.core.bounds import CLOCK_SKEW, moment_problem
from scrapy_rerp.core.data import Outcome

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT",
    "DEADLINE",
    "DEFAULT_MAX_ORIGINS",
    "HEADERS",
    "HeadersLike",
    "LOGGED_ORIGIN",
    "MAX_BODY",
    "MAX_HEADER",
    "MAX_ORIGIN",
    "MAX_URL",
    "MAX_VALUE",
    "REJECTED_REASONS",
    "SCHEMA_VERSION",
    "STORED_OUTCOMES",
    "USES_AT_ONCE",
    "RobotsStore",
    "StoreCounts",
    "StoredCopy",
    "StoredOrigin",
    "header_fields",
    "renewed_copy",
]

logger = logging.getLogger(loggers.STORE)

#: The layout of the file (``PRAGMA user_version``); a store of another is set aside.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a store ("rerp" in ASCII): an SQLite file without it is another
#: application's, never read nor touched.
APPLICATION_ID = 0x72657270
#: The largest body kept, in bytes: above ``RERP_MAX_SIZE``'s default (500 KiB, RFC 9309 2.5).
MAX_BODY = 512 * 1024
#: The longest origin key, URL (characters) and header value (bytes) kept.
MAX_ORIGIN = 2048
MAX_URL = 8192
MAX_HEADER = 8192
#: The most bytes SQLite hands the store of any one value (SQLite's length limit, set on each
#: connection): a row over it is not read at all, so a store's memory is bounded by its caps,
#: never by what a file holds. The largest row a store writes fits (its body, URL, origin and
#: headers at their caps, UTF-8).
MAX_VALUE = MAX_BODY + 4 * (MAX_URL + MAX_ORIGIN) + 5 * MAX_HEADER + 4096
#: Characters of an origin quoted in a log line or a reason; the rest is cut ("...").
LOGGED_ORIGIN = 200
#: Seconds a call waits for another process's transaction before the store gives up.
BUSY_TIMEOUT = 2.0
#: Seconds a call (its statements together, besides waits for a lock) may run before SQLite
#: interrupts it and the store gives up: no file, whatever it holds, keeps a crawl's reactor.
DEADLINE = 5.0
#: Origins kept unless told: ten times the in-memory cache's default (``RERP_CACHE_MAX_ORIGINS``),
#: as a store holds every site of a crawl that runs again.
DEFAULT_MAX_ORIGINS = 100_000
#: The outcomes of a good copy: decided answers. An unreachable one is never stored.
STORED_OUTCOMES = frozenset({Outcome.PARSED, Outcome.ALLOW_ALL, Outcome.DISALLOW_ALL})
#: The headers kept, by field name: those that decide freshness and revalidation.
HEADERS: dict[str, bytes] = {
    "date": b"Date",
    "cache_control": b"Cache-Control",
    "expires": b"Expires",
    "etag": b"ETag",
    "last_modified": b"Last-Modified",
}

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEX = frozenset("0123456789abcdef")
#: Bytes no header value holds: a validator sent back in a conditional request carries none.
_NOT_IN_HEADERS = frozenset(b"\r\n\x00")
_T = TypeVar("_T")


class HeadersLike(Protocol):
    """Response headers as Scrapy's ``Headers`` (or a ``dict[bytes, bytes]``) give them."""

    def get(self, key: bytes, /) -> bytes | None: ...


def header_fields(headers: HeadersLike) -> dict[str, bytes | None]:
    """The raw values of the kept headers (:data:`HEADERS`) of a response, as
    :class:`StoredCopy`'s fields: ``StoredCopy(..., **header_fields(response.headers))``."""
    return {name: headers.get(header) or None for name, header in HEADERS.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredCopy:
    """An origin's last good robots.txt and what it rests on. ``sha256`` is the body's, computed
    here, so that a copy read back can be checked against the hash stored beside it."""

    url: str  # after redirects
    status: int
    outcome: Outcome  # one of STORED_OUTCOMES
    fetched_at: float  # wall clock (time.time())
    expires_at: float  # fresh until (the caller's lifetime rules)
    body: bytes  # as read: decoded from its Content-Encoding, capped
    date: bytes | None = None
    cache_control: bytes | None = None
    expires: bytes | None = None
    etag: bytes | None = None
    last_modified: bytes | None = None
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.body).hexdigest())

    @property
    def headers(self) -> dict[bytes, bytes]:
        """The kept headers that were present, by name: for ``lifetime_from_headers`` and the
        validators of a conditional request."""
        values = {header: getattr(self, name) for name, header in HEADERS.items()}
        return {header: value for header, value in values.items() if value is not None}


def renewed_copy(
    copy: StoredCopy, fetched_at: float, expires_at: float, headers: HeadersLike
) -> StoredCopy:
    """``copy`` as a 304 renews it: new fetch and expiry times, the kept headers the 304
    carried in place of the stored ones (RFC 9111 4.3.4: those it did not carry stay), the
    body kept."""
    carried = {k: v for k, v in header_fields(headers).items() if v is not None}
    return replace(copy, fetched_at=fetched_at, expires_at=expires_at, **carried)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredOrigin:
    """One line of a store's listing: what a copy is, without its body."""

    origin: str
    url: str
    status: int
    outcome: Outcome
    fetched_at: float
    expires_at: float
    sha256: str
    size: int  # the body's bytes


@dataclass(slots=True, kw_only=True)
class StoreCounts:
    """What a store did, for the caller's stats."""

    stored: int = 0  # copies written by put
    read: int = 0  # copies returned by get
    renewed: int = 0  # copies renewed by a 304
    evicted: int = 0  # origins evicted over the bound
    dropped_bad_rows: int = 0  # rows that failed their checks, not used (deleted unless read only)
    refused: int = 0  # copies not stored: a body over MAX_BODY, a bad value
    errors: int = 0  # the file failed (the store is then unavailable)
    #: the rows of dropped_bad_rows by reason (REJECTED_REASONS)
    rejected: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Unusable(Exception):
    """The file cannot be used as a store (the message says why)."""


#: Why a stored row is not used, as ``StoreCounts.rejected`` and the stats
#: (``robotstxt/store/rejected/<reason>``) name it.
REJECTED_REASONS = {
    "future": "fetched in the future, past the clock skew allowed (CLOCK_SKEW)",
    "time": "a time that is not one (not a number, infinite, before 1970, after 9999)",
    "too_large": "a value over its cap (the body, the URL, a header, the origin)",
    "hash": "a body that does not match its sha256",
    "value": "any other value a copy cannot have (status, outcome, a type)",
}


class _BadRow(ValueError):
    """A row that fails its checks: why (a key of :data:`REJECTED_REASONS`), and in words."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# -- the file's layout ---------------------------------------------------------------------------

#: A copy's columns, in the order of ``_write``'s values; a row is its origin, its tick, and these.
_COPY_COLUMNS = ("url", "status", "outcome", "fetched_at", "expires_at", *HEADERS, "sha256", "body")
_SCHEMA = (
    # The body last: the columns before it are read without its overflow pages.
    """CREATE TABLE robots (
        origin TEXT PRIMARY KEY NOT NULL,
        used_at INTEGER NOT NULL,
        url TEXT NOT NULL,
        status INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        fetched_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        date BLOB,
        cache_control BLOB,
        expires BLOB,
        etag BLOB,
        last_modified BLOB,
        sha256 TEXT NOT NULL,
        body BLOB NOT NULL
    )""",
    "CREATE INDEX robots_used_at ON robots (used_at)",
    "CREATE TABLE tally (origins INTEGER NOT NULL)",
    "INSERT INTO tally (origins) VALUES (0)",
    """CREATE TRIGGER robots_added AFTER INSERT ON robots
        BEGIN UPDATE tally SET origins = origins + 1; END""",
    """CREATE TRIGGER robots_removed AFTER DELETE ON robots
        BEGIN UPDATE tally SET origins = origins - 1; END""",
)
_COPY = ", ".join(_COPY_COLUMNS)
#: A listing's columns: the body's type and length, not the body (SQLite reads neither from
#: the body's pages).
_LISTING = (
    "origin, url, status, outcome, fetched_at, expires_at, sha256, typeof(body), length(body)"
)
#: Rows that failed their checks kept by a store (:attr:`RobotsStore.rejections`), to name.
KEPT_REJECTIONS = 100
_NEXT_TICK = "(SELECT coalesce(max(used_at), 0) + 1 FROM robots)"
#: Uses of stored copies recorded in one write (and with every put, and at close): a lookup
#: is then a read alone, without the write lock. Measured on 3,000 stored copies outside a
#: crawl: 79 µs per lookup with a write each, about 20 µs for the read alone (in a crawl, the
#: store's share of a fresh restart fell from 5.1 % to 3.8 %: docs/benchmarks.rst).
USES_AT_ONCE = 64


def _too_large() -> _BadRow:
    return _BadRow("too_large", f"a value over {MAX_VALUE} bytes (not read)")


def _scan(
    conn: sqlite3.Connection, columns: str, tail: str = "", params: tuple[object, ...] = ()
) -> Iterator[tuple[int, tuple[object, ...]]]:
    """``SELECT rowid, {columns} FROM robots {tail}``, row by row, as (rowid, the columns). A
    row with a value over :data:`MAX_VALUE` (SQLite refuses to read it) is (rowid, ()): once
    one is met, the rest are read one by one."""
    seen: set[int] = set()
    with suppress(sqlite3.DataError):
        for rowid, *row in conn.execute(f"SELECT rowid, {columns} FROM robots {tail}", params):
            seen.add(rowid)
            yield rowid, tuple(row)
        return
    for (rowid,) in conn.execute(f"SELECT rowid FROM robots {tail}", params).fetchall():
        if rowid in seen:
            continue
        try:
            found = conn.execute(
                f"SELECT {columns} FROM robots WHERE rowid = ?", (rowid,)
            ).fetchone()
        except sqlite3.DataError:
            found = ()  # a value over MAX_VALUE: the row is not read
        if found is not None:
            yield rowid, tuple(found)


class _Deadline:
    """SQLite's progress handler for a store's connection: a call that runs past its deadline
    is interrupted (``sqlite3.OperationalError: interrupted``)."""

    #: SQLite's virtual machine instructions between two looks at the clock.
    EVERY = 1000

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = 0.0

    def start(self) -> None:
        self.ends = time.monotonic() + self.seconds

    def __call__(self) -> int:
        return int(time.monotonic() > self.ends)

    def why(self, exc: BaseException) -> str:
        """``exc`` in words, naming the deadline when it is the reason."""
        if isinstance(exc, sqlite3.OperationalError) and time.monotonic() > self.ends:
            return f"it ran past the store's deadline ({self.seconds:g}s) and was interrupted"
        return f"{type(exc).__name__}: {exc}"


class RobotsStore:
    """Each origin's last good robots.txt in an SQLite file, shared by the processes that open
    it; see the module's docstring. No method raises on the file's account: a failure makes the
    store unavailable (:attr:`available`, :attr:`reason`) and its calls no-ops."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_origins: int = DEFAULT_MAX_ORIGINS,
        *,
        timeout: float = BUSY_TIMEOUT,
        read_only: bool = False,
        deadline: float = DEADLINE,
    ) -> None:
        if max_origins < 1:
            raise ValueError(f"max_origins must be at least 1, not {max_origins}")
        self.path = Path(path)
        self.max_origins = max_origins
        self.timeout = timeout
        self.read_only = read_only
        self.counts = StoreCounts()
        self.reason = ""
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._closed = False
        self._said: set[str] = set()
        self._used: list[str] = []  # origins whose copies were read, their use not yet recorded
        #: The first rows that failed their checks (:data:`KEPT_REJECTIONS`): the origin as
        #: quoted, the reason (:data:`REJECTED_REASONS`), what was wrong.
        self.rejections: list[tuple[str, str, str]] = []
        self._deadline = _Deadline(deadline)
        with self._lock:
            self._connect()

    # -- state -----------------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """Whether the store works: False once the file failed, or after :meth:`close`."""
        return self._conn is not None

    def __enter__(self) -> RobotsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; the store is then a no-op."""
        with self._lock:
            conn, self._conn = self._conn, None
            self._closed = True
            if not self.reason:
                self.reason = "closed"
            if conn is not None and self._pid == os.getpid():
                with suppress(sqlite3.Error):
                    if self._used and not self.read_only:
                        with _transaction(conn):
                            self._record_uses(conn)
                    conn.close()

    # -- the calls -------------------------------------------------------------------------------

    def get(self, origin: str) -> StoredCopy | None:
        """The copy stored for ``origin``, checked, its use recorded; None if there is none, it
        failed its checks (then it is deleted), or the store is unavailable."""

        def op(conn: sqlite3.Connection) -> StoredCopy | None:
            copy = self._read(conn, origin)  # a read alone: no write lock, no transaction
            if copy is not None:
                self.counts.read += 1
                if not self.read_only:
                    self._used.append(origin)
                    if len(self._used) >= USES_AT_ONCE:
                        with _transaction(conn):
                            self._record_uses(conn)
            return copy

        if not _key_ok(origin):
            return None
        return self._call("get", op, None)

    def put(self, origin: str, copy: StoredCopy) -> bool:
        """Store ``copy`` as ``origin``'s, evicting the least recently used origins over the
        bound. False when it was not stored: refused (a body over :data:`MAX_BODY`, a bad value;
        logged, counted), a copy fetched later is stored already, or the store is unavailable."""
        return bool(self.put_each([(origin, copy)]))

    def put_each(self, copies: Iterable[tuple[str, StoredCopy]]) -> list[str]:
        """:meth:`put` for several origins in one write (one transaction: one commit for all),
        answering the origins whose copies were stored (a write that failed stores none)."""
        items = list(copies)

        def op(conn: sqlite3.Connection) -> list[str]:
            valid = [(origin, copy) for origin, copy in items if not self._refused(origin, copy)]
            if not valid:
                return []
            with _transaction(conn):
                self._record_uses(conn)  # before any eviction, which goes by them
                written = [(origin, _write(conn, origin, copy)) for origin, copy in valid]
                evicted = self._evict(conn) if any(added for _, added in written) else 0
            stored = [origin for origin, added in written if added is not None]
            self.counts.stored += len(stored)
            self.counts.evicted += evicted
            return stored

        return [] if self.read_only else self._call("put", op, [])

    def renew(
        self, origin: str, fetched_at: float, expires_at: float, headers: HeadersLike
    ) -> StoredCopy | None:
        """Record a 304 for ``origin``'s copy: its new fetch and expiry times, the kept headers
        the 304 carried in place of the stored ones (RFC 9111 4.3.4: those it did not carry
        stay), the body kept. The renewed copy; the stored one unchanged if it was fetched
        after ``fetched_at``; None when there is none (or it failed its checks), the renewed
        copy is refused, or the store is unavailable."""

        def op(conn: sqlite3.Connection) -> StoredCopy | None:
            with _transaction(conn):
                self._record_uses(conn)  # earlier uses first: the ticks keep their order
                copy = self._read(conn, origin)
                if copy is None:
                    return None
                renewed = renewed_copy(copy, fetched_at, expires_at, headers)
                if self._refused(origin, renewed):
                    return None
                if copy.fetched_at > renewed.fetched_at:
                    return copy  # fetched after this 304, by another process
                conn.execute(
                    "UPDATE robots SET fetched_at = ?, expires_at = ?,"
                    f" {', '.join(f'{name} = ?' for name in HEADERS)},"
                    f" used_at = {_NEXT_TICK} WHERE origin = ?",
                    (
                        float(fetched_at),
                        float(expires_at),
                        *(getattr(renewed, name) for name in HEADERS),
                        origin,
                    ),
                )
            self.counts.renewed += 1
            return renewed

        if self.read_only or not _key_ok(origin):
            return None
        return self._call("renew", op, None)

    def forget(self, origin: str) -> bool:
        """Delete ``origin``'s copy; whether there was one."""

        def op(conn: sqlite3.Connection) -> bool:
            with _transaction(conn):
                return conn.execute("DELETE FROM robots WHERE origin = ?", (origin,)).rowcount > 0

        if self.read_only or not _key_ok(origin):
            return False
        return self._call("forget", op, False)

    def origins(self) -> list[StoredOrigin]:
        """What the store holds, by origin, without the bodies (their hashes are checked when a
        copy is read); rows that fail their checks are deleted. Empty when unavailable."""

        def op(conn: sqlite3.Connection) -> list[StoredOrigin]:
            listing: list[StoredOrigin] = []
            bad: list[tuple[int, object, _BadRow]] = []
            now = time.time()
            # One statement, one read snapshot: no write lock, however long the listing (in
            # WAL, the writers of other processes go on meanwhile).
            for rowid, row in list(_scan(conn, _LISTING, "ORDER BY origin")):
                try:
                    listing.append(_listed(row, now))
                except _BadRow as exc:
                    bad.append((rowid, row[0] if row else f"(row {rowid})", exc))
            dropped = bad if self.read_only else []  # read only: read as absent, left in the file
            if bad and not self.read_only:
                with _transaction(conn):
                    for rowid, key, exc in bad:  # unless replaced since
                        try:
                            for _, row in _scan(conn, _LISTING, "WHERE rowid = ?", (rowid,)):
                                _listed(row, now)
                        except _BadRow:
                            conn.execute("DELETE FROM robots WHERE rowid = ?", (rowid,))
                            dropped.append((rowid, key, exc))
            for _, key, exc in dropped:
                self._dropped(key, exc)
            return listing

        return self._call("origins", op, [])

    def recent(self, most: int, max_bytes: int) -> dict[str, StoredCopy]:
        """The most recently used copies, checked, read in one statement: at most ``most``
        copies and ``max_bytes`` of bodies. Their use is recorded only when :meth:`used` says
        so. Rows that fail their checks are dropped as :meth:`get` drops them."""

        def op(conn: sqlite3.Connection) -> dict[str, StoredCopy]:
            copies: dict[str, StoredCopy] = {}
            bad: list[tuple[int, object, _BadRow]] = []
            size = 0
            now = time.time()
            rows = _scan(conn, f"origin, {_COPY}", "ORDER BY used_at DESC LIMIT ?", (most,))
            for rowid, found in rows:
                origin, *row = found or (None,)
                body = row[-1] if row else None
                size += len(body) if isinstance(body, bytes) else 0
                if size > max_bytes:
                    break
                try:
                    if not row:
                        raise _too_large()
                    problem = _text_reason("origin", origin, MAX_ORIGIN)
                    if problem is not None:
                        raise _BadRow(*problem)
                    copies[origin] = _copy(tuple(row), now)  # type: ignore[index]
                except _BadRow as exc:
                    bad.append((rowid, origin if row else f"(row {rowid})", exc))
            rows.close()
            if bad and not self.read_only:
                with _transaction(conn):
                    for rowid, _, _ in bad:
                        conn.execute("DELETE FROM robots WHERE rowid = ?", (rowid,))
            for _, origin, exc in bad:
                self._dropped(origin, exc)
            return copies

        return self._call("recent", op, {})

    def used(self, origin: str) -> None:
        """Record, with the next write, the use of a copy :meth:`recent` read."""
        with self._lock:
            if self._conn is not None:
                self.counts.read += 1
                if not self.read_only and _key_ok(origin):
                    self._used.append(origin)

    def origin_keys(self) -> set[str]:
        """The origins stored, without their copies (one read; empty when unavailable)."""

        def op(conn: sqlite3.Connection) -> set[str]:
            return {found[0] for _, found in _scan(conn, "origin") if found and _key_ok(found[0])}

        return self._call("origin_keys", op, set())

    def __len__(self) -> int:
        """The origins stored (0 when unavailable)."""

        def op(conn: sqlite3.Connection) -> int:
            return int(conn.execute("SELECT count(*) FROM robots").fetchone()[0])

        return self._call("len", op, 0)

    def __iter__(self) -> Iterator[StoredOrigin]:
        return iter(self.origins())

    # -- inside ----------------------------------------------------------------------------------

    def _call(self, what: str, op: Callable[[sqlite3.Connection], _T], default: _T) -> _T:
        """Run ``op`` on the connection under the lock; a failure of the file makes the store
        unavailable (one WARNING) and answers ``default``."""
        with self._lock:
            if self._pid != os.getpid():
                # A forked child: the parent's connection is never used (nor closed) here; a
                # store that worked opens its own.
                self._pid = os.getpid()
                if self._conn is not None:
                    self._conn = None
                    self._connect()
            conn = self._conn
            if conn is None:
                return default
            self._deadline.start()
            try:
                return op(conn)
            except (sqlite3.Error, OSError) as exc:
                self._fail(f"{what} failed: {self._deadline.why(exc)}")
                return default

    def _connect(self) -> None:
        self._deadline.start()
        try:
            self._conn = _open(self.path, self.timeout, self.read_only, self._deadline)
        except _Unusable as exc:
            self._fail(str(exc))
        except (sqlite3.Error, OSError) as exc:
            self._fail(self._deadline.why(exc))

    def _fail(self, reason: str) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(sqlite3.Error):
                conn.close()
        self.counts.errors += 1
        self.reason = reason
        logger.warning(
            "robots.txt store %(path)s is not used for the rest of this run: %(reason)s",
            {"path": str(self.path), "reason": reason},
        )

    def _read(self, conn: sqlite3.Connection, origin: str) -> StoredCopy | None:
        """The checked copy of ``origin`` (in the caller's transaction); a row that fails its
        checks is deleted."""
        try:
            row = conn.execute(f"SELECT {_COPY} FROM robots WHERE origin = ?", (origin,)).fetchone()
            if row is None:
                return None
            return _copy(row, time.time())
        except (_BadRow, sqlite3.DataError) as exc:
            bad = exc if isinstance(exc, _BadRow) else _too_large()
            if not self.read_only:
                conn.execute("DELETE FROM robots WHERE origin = ?", (origin,))
            self._dropped(origin, bad)
            return None

    def _record_uses(self, conn: sqlite3.Connection) -> None:
        """Record, in the caller's transaction, the uses of the copies read since the last time:
        their order is the eviction's (least recently used first out)."""
        if self._used:
            used, self._used = self._used, []
            conn.executemany(
                f"UPDATE robots SET used_at = {_NEXT_TICK} WHERE origin = ?",
                [(origin,) for origin in used],
            )

    def _evict(self, conn: sqlite3.Connection) -> int:
        (count,) = conn.execute("SELECT origins FROM tally").fetchone()
        if not isinstance(count, int) or count < 0:  # the tally was damaged: count again
            (count,) = conn.execute("SELECT count(*) FROM robots").fetchone()
            conn.execute("UPDATE tally SET origins = ?", (count,))
        excess = count - self.max_origins
        if excess <= 0:
            return 0
        return conn.execute(
            "DELETE FROM robots WHERE origin IN"
            " (SELECT origin FROM robots ORDER BY used_at LIMIT ?)",
            (excess,),
        ).rowcount

    def _dropped(self, origin: object, bad: _BadRow) -> None:
        self.counts.dropped_bad_rows += 1
        rejected = self.counts.rejected
        rejected[bad.reason] = rejected.get(bad.reason, 0) + 1
        if len(self.rejections) < KEPT_REJECTIONS:
            self.rejections.append((quoted(origin), bad.reason, str(bad)))
        self._say("bad row", "robots.txt store %s: dropped the row of %s: %s", origin, str(bad))

    def _refused(self, origin: object, copy: StoredCopy) -> bool:
        """Whether ``copy`` cannot be stored as ``origin``'s (then logged, counted)."""
        found = _text_reason("origin", origin, MAX_ORIGIN) or _copy_reason(copy, time.time())
        if found is not None:
            self.counts.refused += 1
            self._say("refused", "robots.txt store %s: not storing %s: %s", origin, found[1])
        return found is not None

    def _say(self, kind: str, message: str, origin: object, problem: str) -> None:
        """The first of a kind at WARNING (saying later ones are at DEBUG), the rest at DEBUG."""
        level = logging.DEBUG if kind in self._said else logging.WARNING
        if level == logging.WARNING:
            self._said.add(kind)
            message += " (others like it are logged at DEBUG, and counted)"
        logger.log(level, message, self.path, quoted(origin), problem)


# -- opening -------------------------------------------------------------------------------------


def _open(path: Path, timeout: float, read_only: bool, deadline: _Deadline) -> sqlite3.Connection:
    """A connection to a store of this version at ``path``, made if absent, another version's set
    aside first (read only: neither, and no write). Raises :class:`_Unusable`, ``sqlite3.Error``
    or ``OSError``."""
    _check_kind(path)
    if read_only:
        if not path.exists():
            raise _Unusable("no such file")
        with _opening(path, timeout, make=False):
            return _open_read_only(path, timeout, deadline)
    with _opening(path, timeout):
        for _ in range(2):  # once more after setting a store of another version aside
            with _connection(path, timeout, deadline) as conn:
                if _made(conn):
                    return conn
                _set_aside(conn, path)
    raise _Unusable("a store of another version came back after being set aside")


def _check_kind(path: Path) -> None:
    """Refuse anything but a regular file at ``path`` (a symbolic link is followed) before SQLite
    opens it: on a device (``/dev/zero``) or a FIFO, SQLite would make its journal beside it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return  # made, unless read only
    if stat.S_ISDIR(mode):
        raise _Unusable("a directory is in its place")
    if not stat.S_ISREG(mode):
        raise _Unusable("it is not a regular file (a device, a FIFO or a socket): never opened")


@contextmanager
def _connection(
    path: Path, timeout: float, deadline: _Deadline, uri: str | None = None
) -> Iterator[sqlite3.Connection]:
    """A connection to the store at ``path`` (opened through ``uri`` when given), once the file
    is seen not to be truncated. What every connection of a store runs under: text that is not
    UTF-8 (a tampered row) read, then refused by the checks, rather than failing the whole call;
    no value over :data:`MAX_VALUE` read (Python 3.11 and later); no function with side effects
    run from the file's schema; each call under the deadline. Closed if what runs inside fails;
    a file SQLite cannot read is damaged (:class:`_Unusable`), a locked or unreachable one stays
    an ``OperationalError``."""
    _check_truncated(path)
    conn = sqlite3.connect(
        uri or path,
        timeout=timeout,
        isolation_level=None,
        check_same_thread=False,
        uri=uri is not None,
    )
    try:
        conn.text_factory = _text
        if hasattr(conn, "setlimit"):  # Python 3.11
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE)
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.set_progress_handler(deadline, deadline.EVERY)
        yield conn
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError):
            raise
        raise _Unusable(f"the file is damaged ({exc}); move or delete it") from exc
    except BaseException:
        conn.close()
        raise


@lru_cache(maxsize=1)
def _our_schema() -> frozenset[tuple[object, ...]]:
    """The objects of a store's schema, as ``sqlite_master`` lists them once made."""
    conn = sqlite3.connect(":memory:")
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        return frozenset(conn.execute(_SCHEMA_OBJECTS).fetchall())
    finally:
        conn.close()


_SCHEMA_OBJECTS = "SELECT type, name, tbl_name, sql FROM sqlite_master"


def _check_application(application_id: int) -> None:
    """Refuse another application's SQLite file."""
    if application_id != APPLICATION_ID:
        raise _Unusable(
            f"it is not a robots.txt store (an SQLite file with application_id {application_id})"
        )


def _check_schema(conn: sqlite3.Connection) -> None:
    """Refuse a schema holding what is not a store's: a trigger, a view, an index or a table
    added, or one of ours changed, would run (or change what runs) with our statements. The
    statistics tables of an ``ANALYZE`` are SQLite's own."""
    found = set(conn.execute(_SCHEMA_OBJECTS).fetchall())
    foreign = sorted(
        (str(kind), str(name))
        for kind, name, _, _ in found - _our_schema()
        if not (kind == "table" and str(name).startswith("sqlite_stat"))
    )
    missing = _our_schema() - found
    if foreign:
        named = ", ".join(f"{kind} {quoted(name)}" for kind, name in foreign[:5])
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        raise _Unusable(
            f"its schema holds objects that are not a store's ({named}{more}); move or delete it"
        )
    if missing:
        raise _Unusable(
            f"its tables are not those of version {SCHEMA_VERSION}: damaged; move or delete it"
        )


def _read_only_mode(path: Path) -> str:
    """How a read-only store opens ``path``. Where it may write: ``mode=rw`` rather than ``ro``,
    which never creates the file either, and whose last connection to close removes the -wal
    and -shm files it opened (a read-only one leaves them); ``query_only`` stops writes. Where
    it may not (a read-only mount, a file or folder without write permission): ``mode=ro``, and
    ``immutable`` when there is no write-ahead log, which SQLite could neither read without its
    -shm file nor make (no process can then be writing the file)."""
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return "mode=rw"
    if os.access(path.parent, os.W_OK) or Path(f"{path}-wal").exists():
        return "mode=ro"
    return "mode=ro&immutable=1"


def _open_read_only(path: Path, timeout: float, deadline: _Deadline) -> sqlite3.Connection:
    """A connection that reads the store at ``path`` and can write nothing; never makes it."""
    uri = f"{path.absolute().as_uri()}?{_read_only_mode(path)}"
    with _connection(path, timeout, deadline, uri) as conn:
        conn.execute("PRAGMA query_only = ON")
        application_id, version, objects = _identify(conn)
        if (application_id, version, objects) == (0, 0, 0):
            raise _Unusable("it is empty, not a robots.txt store")
        _check_application(application_id)
        if version != SCHEMA_VERSION:
            raise _Unusable(f"it is a store of version {version}, not {SCHEMA_VERSION}")
        _check_schema(conn)
    return conn


def _made(conn: sqlite3.Connection) -> bool:
    """Whether ``conn``'s file is a store of this version, made if empty, ready to use; False
    when it is another version's (to set aside)."""
    application_id, version, objects = _identify(conn)
    if (application_id, version, objects) == (0, 0, 0):
        # An empty file: made under the write lock, unless another process made it first.
        conn.execute("PRAGMA journal_mode = WAL")
        with _transaction(conn):
            application_id, version, objects = _identify(conn)
            if (application_id, version, objects) == (0, 0, 0):
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                application_id, version = APPLICATION_ID, SCHEMA_VERSION
    _check_application(application_id)
    if version != SCHEMA_VERSION:
        return False
    _check_schema(conn)  # before any statement could run what is not ours
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # The tally is counted again once per run (a count of the index: milliseconds for the
    # default bound), so that a tally gone wrong cannot evict too many or too few for long.
    (tally,) = conn.execute("SELECT origins FROM tally").fetchone()
    (count,) = conn.execute("SELECT count(*) FROM robots").fetchone()
    if tally != count or type(tally) is not int:
        with _transaction(conn):
            conn.execute("UPDATE tally SET origins = (SELECT count(*) FROM robots)")
    return True


def _identify(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """The file's application id, version and number of schema objects, read at one moment."""
    (row,) = conn.execute(
        "SELECT a.application_id, v.user_version, (SELECT count(*) FROM sqlite_master)"
        " FROM pragma_application_id AS a, pragma_user_version AS v"
    ).fetchall()
    return int(row[0]), int(row[1]), int(row[2])


def _set_aside(conn: sqlite3.Connection, path: Path) -> None:
    """Rename the store of another version at ``path`` beside it, and close ``conn``. Raises
    :class:`_Unusable` when another process has it open."""
    version = _identify(conn)[1]
    try:
        # Only possible when no other connection has the file: then it has no -wal or -shm
        # file left to pair with the wrong database once renamed.
        mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
    except sqlite3.OperationalError as exc:
        mode = str(exc)
    if str(mode).lower() != "delete":
        raise _Unusable(
            f"it is a store of version {version}, not {SCHEMA_VERSION}, and another process has"
            " it open: it is set aside when a run finds it free"
        )
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.v{version}.{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.v{version}.{stamp}.{n}")
    conn.execute("BEGIN EXCLUSIVE")  # no process of that version reads it as it goes
    try:
        os.rename(path, aside)
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    logger.warning(
        "robots.txt store %(path)s was of version %(version)d, not %(current)d: set aside as"
        " %(aside)s, a new store made",
        {"path": str(path), "version": version, "current": SCHEMA_VERSION, "aside": str(aside)},
    )


@contextmanager
def _opening(path: Path, timeout: float, make: bool = True) -> Iterator[None]:
    """Held while a store is opened: a lock on ``<path>.lock`` (made if absent, never removed),
    so that no store opens the file while another sets it aside or makes it. SQLite's own locks
    do not do: a process that has only opened a file may, on its first read, pair it with the
    write-ahead log of the new file made at its path. Waits at most ``timeout``. Without
    ``make`` (read only), no lock when the lock file is absent."""
    try:
        fd = os.open(f"{path}.lock", (os.O_RDWR | os.O_CREAT) if make else os.O_RDONLY, 0o644)
    except FileNotFoundError:
        if make:
            raise
        yield
        return
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise _Unusable(f"another process held {path}.lock past the busy timeout")
            time.sleep(0.005)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if os.name == "nt":  # pragma: no cover - not tested on Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _check_truncated(path: Path) -> None:
    """Refuse the file when its header says it is longer than it is: a truncated file, seen
    before SQLite reads past its end. Not when a write-ahead log holds pages yet to be copied."""
    try:
        with open(path, "rb") as file:
            header = file.read(100)
            size = os.fstat(file.fileno()).st_size
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return
    except (FileNotFoundError, IsADirectoryError):
        return
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        return  # empty (a new store), or not SQLite: SQLite says
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]  # the page count is valid (SQLite's rule)
    if valid and pages and size < pages * page_size:
        raise _Unusable(
            f"the file is damaged (truncated: {size} bytes where its header says"
            f" {pages * page_size}); move or delete it"
        )


def _write(conn: sqlite3.Connection, origin: str, copy: StoredCopy) -> bool | None:
    """Write ``copy`` as ``origin``'s in the caller's transaction: True when the origin is new,
    False when its copy was replaced, None when a copy fetched later is stored already."""
    values = (  # those of _COPY_COLUMNS
        copy.url,
        copy.status,
        copy.outcome.value,
        float(copy.fetched_at),
        float(copy.expires_at),
        *(getattr(copy, name) for name in HEADERS),
        copy.sha256,
        copy.body,
    )
    updated = conn.execute(
        f"UPDATE robots SET {', '.join(f'{c} = ?' for c in _COPY_COLUMNS)},"
        f" used_at = {_NEXT_TICK} WHERE origin = ?"
        # a copy fetched later, stored by another process, stays (a damaged time, or one
        # past the clock skew, does not keep it)
        " AND NOT (typeof(fetched_at) = 'real' AND fetched_at > ? AND fetched_at <= ?)",
        (*values, origin, copy.fetched_at, time.time() + CLOCK_SKEW),
    ).rowcount
    if updated:
        return False
    if conn.execute("SELECT 1 FROM robots WHERE origin = ?", (origin,)).fetchone():
        return None
    conn.execute(
        f"INSERT INTO robots (origin, used_at, {_COPY}) VALUES"
        f" (?, {_NEXT_TICK}, {', '.join('?' * len(_COPY_COLUMNS))})",
        (origin, *values),
    )
    return True


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: the write lock taken at the start (waiting at most the busy
    timeout), so that a read in it is never turned into a write that must give up."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# -- checks --------------------------------------------------------------------------------------


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _is_utf8(value: str) -> bool:
    """Whether SQLite can take ``value`` as text (no lone surrogates), and did give it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _key_ok(origin: object) -> bool:
    return _text_reason("origin", origin, MAX_ORIGIN) is None


def _text_reason(what: str, value: object, cap: int) -> tuple[str, str] | None:
    """What keeps ``value`` (the origin, the URL) from being ``what`` as stored: text of at most
    ``cap`` characters."""
    if not isinstance(value, str) or not value or not _is_utf8(value):
        return "value", f"the {what} is not a string"
    if len(value) > cap:
        return "too_large", f"the {what} is over {cap} characters"
    return None


def quoted(origin: object) -> str:
    """``origin`` as a log line or a reason quotes it: its ``repr``, cut to
    :data:`LOGGED_ORIGIN` characters."""
    if isinstance(origin, (str, bytes)) and len(origin) > LOGGED_ORIGIN:
        return f"{origin[:LOGGED_ORIGIN]!r}... ({len(origin):,} long)"
    return repr(origin)


def _status_reason(status: object) -> tuple[str, str] | None:
    if type(status) is not int or not 100 <= status <= 599:
        return "value", f"status {status!r} is not an HTTP status"
    return None


def _times_reason(fetched_at: object, expires_at: object, now: float) -> tuple[str, str] | None:
    """The times of a copy, to store or read back (``scrapy_rerp.core.bounds``)."""
    problem = moment_problem("fetched_at", fetched_at, now) or moment_problem(
        "expires_at", expires_at, now, past=False
    )
    if problem is None:
        return None
    return ("future" if problem.startswith("future") else "time"), problem


def _copy_reason(copy: StoredCopy, now: float) -> tuple[str, str] | None:
    """What is wrong with ``copy`` for the store, if anything (a copy to store, or read back),
    and its reason (:data:`REJECTED_REASONS`)."""
    if not isinstance(copy, StoredCopy):
        return "value", f"not a StoredCopy: {type(copy).__name__}"
    found = _text_reason("URL", copy.url, MAX_URL) or _status_reason(copy.status)
    if found is not None:
        return found
    if copy.outcome not in STORED_OUTCOMES or not isinstance(copy.outcome, Outcome):
        return "value", f"outcome {copy.outcome!r} is not a good copy's"
    found = _times_reason(copy.fetched_at, copy.expires_at, now)
    if found is not None:
        return found
    for name in HEADERS:
        value = getattr(copy, name)
        if value is not None and not isinstance(value, bytes):
            return "value", f"{name} is not bytes"
        if value is not None and not _NOT_IN_HEADERS.isdisjoint(value):
            return "value", f"{name} holds a line break or a NUL: no header value"
        if value is not None and len(value) > MAX_HEADER:
            return "too_large", f"{name} is over {MAX_HEADER} bytes"
    if not isinstance(copy.body, bytes):
        return "value", "the body is not bytes"
    if len(copy.body) > MAX_BODY:
        return "too_large", f"its body is {len(copy.body)} bytes, over the store's cap ({MAX_BODY})"
    return None


def _copy(row: tuple[object, ...], now: float) -> StoredCopy:
    """A row's copy, every value checked, the body against its hash. Raises :class:`_BadRow`."""
    # SQLite's values, of any type until checked: the checks below (and StoredCopy's) say why
    # one is refused.
    values: dict[str, Any] = dict(zip(_COPY_COLUMNS, row, strict=True))
    sha256, body = values.pop("sha256"), values["body"]
    if not isinstance(body, bytes):
        raise _BadRow("value", f"the body is {type(body).__name__}, not bytes")
    if len(body) > MAX_BODY:
        raise _BadRow("too_large", f"the body is {len(body)} bytes, over {MAX_BODY}")
    if not _is_sha256(sha256):
        raise _BadRow("value", "the stored sha256 is not a sha256")
    found = _times_reason(values["fetched_at"], values["expires_at"], now)
    if found is not None:
        raise _BadRow(*found)
    values["outcome"] = _outcome(values["outcome"])
    try:
        copy = StoredCopy(**values)
    except TypeError as exc:
        raise _BadRow("value", str(exc)) from exc
    found = _copy_reason(copy, now)
    if found is not None:
        raise _BadRow(*found)
    if copy.sha256 != sha256:
        raise _BadRow("hash", "the body does not match its sha256")
    return copy


def _listed(row: tuple[object, ...], now: float) -> StoredOrigin:
    """A listing row, every value checked but the body's hash. Raises :class:`_BadRow`."""
    if not row:
        raise _too_large()
    values: tuple[Any, ...] = row  # SQLite's values, of any type until checked below
    origin, url, status, outcome, fetched_at, expires_at, sha256, body_type, size = values
    found = (
        _text_reason("origin", origin, MAX_ORIGIN)
        or (None if body_type == "blob" else ("value", "the body is not bytes"))
        or (
            None
            if type(size) is int and size <= MAX_BODY
            else ("too_large", f"the body is over {MAX_BODY} bytes")
        )
        or (None if _is_sha256(sha256) else ("value", "the stored sha256 is not a sha256"))
        or _text_reason("URL", url, MAX_URL)
        or _status_reason(status)
        or _times_reason(fetched_at, expires_at, now)
    )
    if found is not None:
        raise _BadRow(*found)
    return StoredOrigin(
        origin=origin,
        url=url,
        status=status,
        outcome=_outcome(outcome),
        fetched_at=fetched_at,
        expires_at=expires_at,
        sha256=sha256,
        size=size,
    )


def _outcome(value: object) -> Outcome:
    try:
        outcome = Outcome(value)
    except ValueError:
        raise _BadRow("value", f"outcome {value!r} is unknown") from None
    if outcome not in STORED_OUTCOMES:
        raise _BadRow("value", f"outcome {value!r} is not a good copy's")
    return outcome


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX
