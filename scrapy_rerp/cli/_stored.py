"""A robots.txt store (``RERP_STORE``, :mod:`scrapy_rerp.core.store`) read from the command line:
opened read only (never made, never changed: a missing path is an error before anything is
opened), an origin argument reduced to its origin as a crawl keys the store, and a stored copy as
the :class:`~scrapy_rerp.cli._download.Download` a crawl would have had from it (``fetch
--store``)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy_rerp.cli._download import Download, InvalidUrl, check_url, iso
from scrapy_rerp.cli._output import CliError
from scrapy_rerp.core import loggers
from scrapy_rerp.core.bounds import bounded_expiry, longest_lifetime
from scrapy_rerp.core.crawl_store import stored_body
from scrapy_rerp.core.settings import RerpSettings, setting_path
from scrapy_rerp.core.status import PARSED
from scrapy_rerp.core.store import RobotsStore, StoredCopy
from scrapy_rerp.core.urls import origin_of, robots_url_of

__all__ = ["StoreUse", "from_store", "iso", "open_store", "origin_argument", "stored_download"]


@contextmanager
def open_store(path: str) -> Iterator[RobotsStore]:
    """The store at ``path``, read only; :class:`CliError` when there is none or it cannot be
    read (its reason, in one line). The store's own log lines are not shown: its reason is."""
    if not Path(path).exists():
        raise CliError(_missing(path))
    logger = logging.getLogger(loggers.STORE)
    quiet = logging.NullHandler()
    logger.addHandler(quiet)
    propagate, logger.propagate = logger.propagate, False
    try:
        store = RobotsStore(path, read_only=True)
        try:
            if store.available:
                yield store
            if not store.available:  # unusable, or damage met by a read
                raise CliError(f"{path}: not a usable robots.txt store: {store.reason}")
        finally:
            store.close()
    finally:
        logger.removeHandler(quiet)
        logger.propagate = propagate


def _missing(path: str) -> str:
    """No store at ``path``: where a crawl with ``RERP_STORE = path`` keeps it, and the store
    an earlier version's crawl kept under the project's data directory, when there is one."""
    message = (
        f"{path}: no such file (no robots.txt store there; none is made): a crawl with"
        f" RERP_STORE = {path!r} keeps it at {setting_path(path)} when started in this directory"
    )
    if not os.path.isabs(path):
        from scrapy.utils.project import data_path

        earlier = os.path.abspath(data_path(path))
        if os.path.isfile(earlier):
            message += f"; earlier versions kept it at {earlier}"
    return message


def origin_argument(value: str) -> str:
    """The store's key for ``value``: an origin (``https://example.com``) or any URL of it,
    reduced as the crawl reduces it; :class:`CliError` for anything else."""
    try:
        check_url(value)
    except InvalidUrl as error:
        raise CliError(f"{error}: give an origin such as https://example.com, or a URL") from error
    return origin_of(value)


def from_store(url: str, copy: StoredCopy, settings: RerpSettings) -> Download:
    """What a crawl has from ``copy`` for the robots.txt ``url``, as a download gives it: the
    body read as the crawl reads a stored one (:func:`~scrapy_rerp.core.crawl_store.stored_body`),
    fresh until the copy's ``expires_at``."""
    outcome = copy.outcome
    expires_at = bounded_expiry(copy.fetched_at, copy.expires_at, longest_lifetime(settings))
    body = stored_body(copy, settings.max_size) if outcome == PARSED else None
    return Download(
        url=url,
        outcome=outcome,
        reason=f"HTTP {copy.status}",
        final_url=copy.url,
        status=copy.status,
        redirects=[copy.url] if copy.url != url else [],
        body=body,
        lifetime=max(expires_at - copy.fetched_at, 0.0),
        fetched_at=copy.fetched_at,
        from_store=True,
    )


@dataclass(kw_only=True)
class StoreUse:
    """What ``fetch --store`` made of the store: whether it answered, and why (not)."""

    path: str
    origin: str
    used: bool
    why: str  # "fresh until ...", "expired at ...: downloaded", "no copy: downloaded"

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "origin": self.origin, "used": self.used, "why": self.why}


def stored_download(
    url: str, path: str, settings: RerpSettings
) -> tuple[Download | None, StoreUse]:
    """For the robots.txt ``url``, the store's fresh copy as a crawl would use it (no download),
    or None (expired, absent, or ``url`` is not the site's robots.txt), and why."""
    origin = origin_of(url)

    def unused(why: str) -> tuple[None, StoreUse]:
        return None, StoreUse(path=path, origin=origin, used=False, why=why)

    if url != robots_url_of(url):
        return unused("not the site's robots.txt: not looked up")
    with open_store(path) as store:
        copy = store.get(origin)
        rejections = list(store.rejections)
    if copy is None and rejections:
        _, reason, problem = rejections[0]
        return unused(f"the stored copy is not used ({reason}: {problem}): downloaded")
    if copy is None:
        return unused("no stored copy: downloaded")
    expires_at = bounded_expiry(copy.fetched_at, copy.expires_at, longest_lifetime(settings))
    if expires_at <= time.time():
        return unused(f"the stored copy expired at {iso(expires_at)}: downloaded")
    why = (
        f"from the store, fetched {iso(copy.fetched_at)}, fresh until {iso(expires_at)}"
        " (not downloaded)"
    )
    return from_store(url, copy, settings), StoreUse(path=path, origin=origin, used=True, why=why)
