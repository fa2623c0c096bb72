"""``scrapy-rerp store PATH [ORIGIN]``: what a robots.txt store (``RERP_STORE``) holds, read only.

Without ORIGIN, one line per origin, sorted: the origin, when its copy was fetched, the status and
outcome, until when it is fresh (or since when expired), its sha256 (the first 12 digits; in
JSON whole) and its size. With ORIGIN (an origin, or any URL of it), that origin's stored
robots.txt on standard output, as text (UTF-8, undecodable bytes replaced), and what it rests on
on standard error; in JSON the record and the body.

Rows that fail the store's checks (a time that is not one, a copy fetched in the future, a value
over its cap) are not shown: each is named on standard error, its origin (cut to
``LOGGED_ORIGIN`` characters) and why, and counted.

Exit status 0 when listed or shown; 1 when ORIGIN is not in the store; 2 when the store cannot be
read (no file at PATH, none is made; a damaged file, another application's, another version's)
or held rows that failed their checks (the others are listed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp.cli._output import EXIT_ERROR, EXIT_FLAGGED, EXIT_OK, Output
from scrapy_rerp.cli._stored import iso, open_store, origin_argument
from scrapy_rerp.core.store import StoredCopy, StoredOrigin

#: The digits of a sha256 shown in the text listing.
SHORT_SHA256 = 12


def _record(entry: StoredOrigin, now: float) -> dict[str, Any]:
    return {
        "origin": entry.origin,
        "url": entry.url,
        "status": entry.status,
        "outcome": entry.outcome.value,
        "fetched_at": iso(entry.fetched_at),
        "expires_at": iso(entry.expires_at),
        "fresh": entry.expires_at > now,
        "sha256": entry.sha256,
        "bytes": entry.size,
    }


def _freshness(expires_at: float, now: float) -> str:
    return f"{'fresh until' if expires_at > now else 'expired at'} {iso(expires_at)}"


@dataclass(kw_only=True)
class StoreReport:
    path: str
    origins: list[StoredOrigin]  # the listing; the one origin asked for, when there is one
    origin: str | None = None  # asked for
    copy: StoredCopy | None = None  # the origin's copy, when it is stored
    dropped: int = 0  # rows that failed their checks (not shown; left in the file)
    #: the first of them: the origin as quoted, the reason, what was wrong
    rejections: list[tuple[str, str, str]] = field(default_factory=list)
    now: float = field(default_factory=time.time)

    @classmethod
    def build(cls, path: str, origin: str | None) -> StoreReport:
        key = None if origin is None else origin_argument(origin)
        with open_store(path) as store:
            if key is None:
                report = cls(path=path, origins=store.origins())
            else:
                copy = store.get(key)
                listed = [entry for entry in store.origins() if entry.origin == key]
                report = cls(
                    path=path, origins=listed if copy is not None else [], origin=key, copy=copy
                )
            report.dropped = store.counts.dropped_bad_rows
            report.rejections = list(store.rejections)
        return report

    @property
    def notes(self) -> list[str]:
        notes = []
        if self.dropped:
            notes.append(
                f"error: {self.path}: {self.dropped} stored row(s) failed their checks: not shown "
                "(left in the file; a crawl drops them)"
            )
            for origin, reason, problem in self.rejections:
                notes.append(f"{self.path}: the row of {origin} is not used ({reason}): {problem}")
        if self.origin is None:
            if not self.origins:
                notes.append(f"{self.path}: the store holds no robots.txt")
        elif self.copy is None:
            notes.append(f"error: {self.origin} is not in the store {self.path}")
        else:
            copy = self.copy
            notes.append(
                f"{self.origin}: {copy.url}, HTTP {copy.status}, {copy.outcome.value}, fetched "
                f"{iso(copy.fetched_at)}, {_freshness(copy.expires_at, self.now)}, "
                f"{len(copy.body):,} bytes, sha256 {copy.sha256}"
            )
        return notes

    @property
    def status(self) -> int:
        if self.dropped:
            return EXIT_ERROR
        return EXIT_FLAGGED if self.origin is not None and self.copy is None else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {"store": self.path}
        if self.origin is None:
            document["origins"] = [_record(entry, self.now) for entry in self.origins]
        else:
            document["origin"] = self.origin
            document["found"] = self.copy is not None
            copy = self.copy
            if copy is not None and self.origins:
                document["record"] = {
                    **_record(self.origins[0], self.now),
                    "headers": {
                        header.decode("ascii"): value.decode("latin-1")
                        for header, value in copy.headers.items()
                    },
                }
                document["body"] = copy.body.decode("utf-8", "replace")
            else:
                document["record"] = document["body"] = None
        document["dropped_rows"] = self.dropped
        document["rejected_rows"] = [
            {"origin": origin, "reason": reason, "problem": problem}
            for origin, reason, problem in self.rejections
        ]
        return document

    def render_text(self, out: Callable[[str], None]) -> None:
        if self.origin is not None:
            if self.copy is not None and isinstance(out, Output):
                out.write(self.copy.body.decode("utf-8", "replace"))
            elif self.copy is not None:
                for line in self.copy.body.decode("utf-8", "replace").splitlines():
                    out(line)
            return
        width = max((len(entry.origin) for entry in self.origins), default=0)
        for entry in self.origins:
            out(
                f"{entry.origin:<{width}}  fetched {iso(entry.fetched_at)}  {entry.status} "
                f"{entry.outcome.value:<12}  {_freshness(entry.expires_at, self.now)}  "
                f"sha256 {entry.sha256[:SHORT_SHA256]}  {entry.size:,} bytes"
            )
