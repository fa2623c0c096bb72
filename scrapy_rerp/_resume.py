"""Requests parked when a crawl closes, kept where the crawl that resumes it finds them.

Stock Scrapy finishes the downloads in flight when a crawl is paused (Ctrl-C with ``JOBDIR``).
A parked request is one Scrapy would have had in flight, and the dupefilter has its fingerprint:
dropped at a pause, it would never be crawled. Where the crawl can be resumed, the requests
parked when it closes are therefore kept:

* a scheduler that keeps its queue (``persist`` true: scrapy-redis with ``SCHEDULER_PERSIST``)
  takes them back into that queue, for this worker or another of the fleet;
* with ``JOBDIR`` they are written to the job's directory (:data:`JOB_FILE`, in Scrapy's own
  request serialization, as its disk queues), and scheduled first when the job resumes;
* elsewhere nothing persists: the parking lot drops them as the crawl closes, each signalled
  with ``request_dropped`` (:meth:`scrapy_rerp._parking.ParkingLot.close`).

Either way the request goes back with ``dont_filter`` set for the trip (the dupefilter has seen
it), restored when it comes back through the middleware, as for any parked request. The ledger
counts kept requests in ``robotstxt/persisted``; the resumed crawl counts those it scheduled in
``robotstxt/resumed``. A request that cannot be serialized (its callback is no spider method)
is dropped like the others, and logged.

The requests parked for a site's cool-down (a 429 or 503 with ``Retry-After``) are kept like the
others, and with ``JOBDIR`` the cool-downs themselves too (:data:`COOL_DOWN_FILE`, each origin
with the Unix time it ends): the resumed job restores those not over yet before it schedules
the kept requests, so they still wait for the time the site asked for. (A fleet keeps its
cool-downs in Redis.)
"""

from __future__ import annotations

import json
import logging
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.job import job_dir
from scrapy.utils.request import request_from_dict

from scrapy_rerp._compat import scheduler_of
from scrapy_rerp._parking import CRAWL_CLOSING, prepare_for_return

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["COOL_DOWN_FILE", "JOB_FILE", "ResumeStore"]

logger = logging.getLogger("scrapy_rerp.middleware")

#: The file, in ``JOBDIR``, of the requests parked when the job was paused.
JOB_FILE = "robotstxt-parked.pickle"
#: The file, in ``JOBDIR``, of the cool-downs running when the job was paused.
COOL_DOWN_FILE = "robotstxt-cooldowns.json"


class ResumeStore:
    """Keeps requests parked at a pause for the resumed crawl, and gives them back to it."""

    def __init__(
        self, crawler: Crawler, cool_down: Callable[[str, float], object] | None = None
    ) -> None:
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self._cool_down = cool_down  # restores a cool-down: (origin, seconds left)
        jobdir = job_dir(crawler.settings)
        self.job_file = Path(jobdir, JOB_FILE) if jobdir else None
        self.cool_down_file = Path(jobdir, COOL_DOWN_FILE) if jobdir else None
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)

    @property
    def persists(self) -> bool:
        """Whether requests kept at a close reach a resumed crawl (asked while the spider is
        open: the scheduler is known then)."""
        return self._persistent_scheduler() is not None or self.job_file is not None

    def _persistent_scheduler(self) -> Any:
        scheduler = scheduler_of(self.crawler)
        return scheduler if getattr(scheduler, "persist", False) is True else None

    def keep(self, requests: list[Request]) -> None:
        """Keep ``requests`` (parked when the crawl closed) for the resumed crawl."""
        scheduler = self._persistent_scheduler()
        saved: list[dict[str, Any]] = []
        for request in requests:
            prepare_for_return(request)
            try:
                if scheduler is not None:
                    scheduler.enqueue_request(request)
                else:
                    saved.append(request.to_dict(spider=self.crawler.spider))
            except Exception as exc:  # unserializable, or the scheduler's store failed
                self._not_kept(request, f"{type(exc).__name__}: {exc}")
                continue
            self.stats.inc_value("robotstxt/persisted")
        if saved and self.job_file is not None:
            with self.job_file.open("wb") as file:
                pickle.dump(saved, file, protocol=4)
        kept = len(saved) if scheduler is None else len(requests)
        logger.info(
            "Crawl closing: %(n)d request(s) waiting for robots.txt kept in %(where)s for the "
            "resumed crawl",
            {
                "n": kept,
                "where": "the scheduler's queue" if scheduler is not None else self.job_file,
            },
            extra={"spider": self.crawler.spider},
        )

    def keep_cool_downs(self, cool_downs: dict[str, float]) -> None:
        """Keep the cool-downs running at a pause (origin: Unix time it ends) for the resumed
        job (``JOBDIR`` only)."""
        if self.cool_down_file is None or not cool_downs:
            return
        self.cool_down_file.write_text(json.dumps(cool_downs), encoding="utf-8")
        logger.info(
            "Crawl closing: %(n)d cool-down(s) kept in %(file)s for the resumed crawl",
            {"n": len(cool_downs), "file": self.cool_down_file},
            extra={"spider": self.crawler.spider},
        )

    def _restore_cool_downs(self, spider: Any) -> None:
        if self.cool_down_file is None or not self.cool_down_file.exists():
            return
        try:
            cool_downs = json.loads(self.cool_down_file.read_text(encoding="utf-8"))
            ends = {str(o): float(until) for o, until in cool_downs.items()}
        except (ValueError, TypeError, AttributeError, OSError) as exc:
            logger.warning(
                "Could not read %(file)s (%(exc)s): the cool-downs it held are not resumed",
                {"file": self.cool_down_file, "exc": exc},
                extra={"spider": spider},
            )
            ends = {}
        self.cool_down_file.unlink()
        now = time.time()
        for origin, until in ends.items():
            if until > now and self._cool_down is not None:
                self._cool_down(origin, until - now)
                logger.info(
                    "Resumed the cool-down of %(origin)s: nothing is sent to it for %(left).3g s",
                    {"origin": origin, "left": until - now},
                    extra={"spider": spider},
                )

    def _not_kept(self, request: Request, why: str) -> None:
        self.stats.inc_value(f"robotstxt/dropped/{CRAWL_CLOSING}")
        logger.warning(
            "Crawl closing: dropped %(request)s, waiting for robots.txt: it cannot be saved for "
            "the resumed crawl (%(why)s)",
            {"request": request, "why": why},
            extra={"spider": self.crawler.spider},
        )
        self.crawler.signals.send_catch_log(
            signal=signals.request_dropped, request=request, spider=self.crawler.spider
        )

    def _spider_opened(self, spider: Any) -> None:
        """A resumed job: restore its cool-downs, schedule the requests its pause kept, then
        forget them."""
        self._restore_cool_downs(spider)
        if self.job_file is None or not self.job_file.exists():
            return
        try:
            with self.job_file.open("rb") as file:
                saved = pickle.load(file)  # noqa: S301 - the job's own file, as Scrapy's queues
        except Exception as exc:  # a file cut short by a crash: nothing to resume from it
            logger.warning(
                "Could not read %(file)s (%(exc)s): the requests it held are not resumed",
                {"file": self.job_file, "exc": exc},
                extra={"spider": spider},
            )
            saved = []
        self.job_file.unlink()
        engine = self.crawler.engine
        assert engine is not None
        for data in saved:
            try:
                request = request_from_dict(data, spider=spider)
            except Exception as exc:  # e.g. its callback is no longer a method of the spider
                logger.warning(
                    "Could not resume a request waiting for robots.txt (%(exc)s): %(url)s",
                    {"exc": exc, "url": data.get("url")},
                    extra={"spider": spider},
                )
                continue
            engine.crawl(request)
            self.stats.inc_value("robotstxt/resumed")
        logger.info(
            "Resumed %(n)d request(s) that were waiting for robots.txt when the job paused",
            {"n": len(saved)},
            extra={"spider": spider},
        )
