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
  with ``request_dropped`` (:meth:`scrapy_rerp.crawl.parking.ParkingLot.close`).

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

What the job's directory holds is read as input, never trusted: a crash may have cut a file
short, a person may have edited it, or something else may stand in its place (a directory).
When the job resumes:

* the cool-downs' file must be a JSON object of origins (``http://host:80``, as the crawl names
  them) to end times (finite Unix times, after 1970). Other entries are skipped. An end further
  away than the resumed crawl's ``RERP_SLOWDOWN_MAX_WAIT`` is cut to it, and the next pause
  writes no end that is not finite or further away than that either;
* the requests' file must be a pickled list of dicts that Scrapy's ``request_from_dict`` turns
  back into requests (with the resumed spider's methods). Other entries are skipped, and the
  good ones are scheduled all the same.

A file that cannot be read at all (a directory, no permission, a pickle cut short, not JSON) or
holds no list (no object) counts as one skipped entry. Skipped entries are counted in
``robotstxt/resume/skipped``; a file with any gives one WARNING naming it, with what was restored
and what was skipped, and no traceback.

Once read, a file leaves the job's way, so that it is not read again and the next pause can
write its own: one read whole is removed, as ever; a damaged one (anything skipped) is renamed
to ``<name>.damaged`` (replacing an earlier one), for a person to look at, or removed when it
cannot be renamed (its WARNING says which). Both files are written under a temporary name and
then renamed, so that a crash while writing leaves no file cut short.

These checks are against damage, not against an attacker: whoever can write to ``JOBDIR`` can
run code in the crawl through any pickle there, Scrapy's own request queues included.
"""

from __future__ import annotations

import json
import logging
import math
import os
import pickle
import reprlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.utils.job import job_dir
from scrapy.utils.request import request_from_dict

from scrapy_rerp.core import loggers
from scrapy_rerp.core.admission import DropReason
from scrapy_rerp.core.settings import RerpSettings, settings_for
from scrapy_rerp.core.urls import origin_of
from scrapy_rerp.core.wording import counted, duration
from scrapy_rerp.crawl.compat import close_when_opened, scheduler_of, stats_of
from scrapy_rerp.crawl.parking import prepare_for_return

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["COOL_DOWN_FILE", "DAMAGED_SUFFIX", "JOB_FILE", "STAT_SKIPPED", "ResumeStore"]

logger = logging.getLogger(loggers.RESUME)

#: The file, in ``JOBDIR``, of the requests parked when the job was paused.
JOB_FILE = "robotstxt-parked.pickle"
#: The file, in ``JOBDIR``, of the cool-downs running when the job was paused.
COOL_DOWN_FILE = "robotstxt-cooldowns.json"
#: Added to the name of a damaged file of the job when it is set aside.
DAMAGED_SUFFIX = ".damaged"
#: Entries of the job's files skipped as damaged when it resumes (a file that cannot be read,
#: or holds no list or object, counts as one).
STAT_SKIPPED = "robotstxt/resume/skipped"

# How many of a file's problems its WARNING names (the count says how many there were).
_REASONS_LOGGED = 3
# Values read from the files, as the log shows them: cut short, since a file can hold anything.
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 80


class _Problems:
    """What was wrong in one file of the job: how many entries were skipped, and why (the
    first few, for its WARNING)."""

    def __init__(self) -> None:
        self.count = 0
        self.reasons: list[str] = []

    def add(self, reason: str) -> None:
        self.count += 1
        if len(self.reasons) < _REASONS_LOGGED:
            self.reasons.append(reason)

    def add_exception(self, what: str, exc: Exception) -> None:
        # An OSError's text repeats the file's name, which the WARNING gives already.
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.add(f"{what}: {type(exc).__name__}: {_short.repr(text)[1:-1]}")

    def __str__(self) -> str:
        more = self.count - len(self.reasons)
        return "; ".join(self.reasons) + (f"; {more} more" if more > 0 else "")


def _is_origin(value: str) -> bool:
    """Whether ``value`` names an origin as the crawl does (:func:`origin_of`'s form,
    ``http://host:80``): nothing else can be the key of a cool-down."""
    try:
        return origin_of(value) == value and bool(urlsplit(value).hostname)
    except ValueError:  # e.g. "http://[::1"
        return False


def _end_time(value: object) -> float | None:
    """``value`` as the Unix time a cool-down ends, or None when it cannot be one: not a number
    (JSON's ``true`` included), not finite (Python's json reads ``Infinity`` and ``NaN``), or
    not after 1970."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        end = float(value)
    except OverflowError:  # an integer of 400 digits
        return None
    return end if math.isfinite(end) and end > 0 else None


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` under a temporary name first: a crash while writing leaves no
    file cut short where the resumed job reads."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_bytes(data)
        partial.replace(path)
    except OSError:
        partial.unlink(missing_ok=True)
        raise


def _clear(path: Path, damaged: bool) -> str:
    """Take a file of the job out of the way once it has been read: removed when it was read
    whole; when ``damaged``, renamed to ``<name>.damaged`` (replacing an earlier one) for a
    person to look at, else removed. Returns what became of it, for the log."""
    not_renamed = ""
    if damaged:
        aside = path.with_name(path.name + DAMAGED_SUFFIX)
        try:
            path.replace(aside)  # a directory in the file's place moves aside as well
        except OSError as exc:
            not_renamed = f"{type(exc).__name__}: {exc}"
        else:
            return f"renamed to {aside}"
    try:
        path.unlink()
    except OSError as exc:
        # Left in place, it is read again at the next resume: the person must know.
        return f"left in place ({type(exc).__name__}: {exc}): remove it by hand"
    return f"removed (not renamed: {not_renamed})" if damaged else "removed"


class ResumeStore:
    """Keeps requests parked at a pause for the resumed crawl, and gives them back to it."""

    def __init__(self, crawler: Crawler, cool_down: Callable[[str, float], object]) -> None:
        self.crawler = crawler
        self.stats = stats_of(crawler)
        self._cool_down = cool_down  # restores a cool-down: (origin, seconds left)
        # The crawl's validated settings, as the middleware building this store got them
        # (checked once per crawler: asking again logs nothing). The defaults only where they
        # are bad, and the crawl closes as the spider opens then.
        settings = settings_for(crawler, close_when_opened) or RerpSettings()
        #: The longest cool-down, in seconds, restored or kept: RERP_SLOWDOWN_MAX_WAIT now,
        #: whatever the job wrote under another.
        self.max_wait = settings.slowdown_max_wait
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

    # -- at a pause ------------------------------------------------------------------------
    def keep(self, requests: list[Request]) -> None:
        """Keep ``requests`` (parked when the crawl closed) for the resumed crawl."""
        scheduler = self._persistent_scheduler()
        saved: list[Request] = []
        serialized: list[dict[str, Any]] = []
        for request in requests:
            prepare_for_return(request)
            try:
                if scheduler is not None:
                    scheduler.enqueue_request(request)
                else:
                    data = request.to_dict(spider=self.crawler.spider)
                    pickle.dumps(data, protocol=4)  # its meta too: one bad request, not all
                    serialized.append(data)
            except Exception as exc:  # unserializable, or the scheduler's store failed
                self._not_kept(request, f"{type(exc).__name__}: {exc}")
                continue
            saved.append(request)
        if scheduler is None and saved and self.job_file is not None:
            try:
                _write_whole(self.job_file, pickle.dumps(serialized, protocol=4))
            except OSError as exc:  # e.g. no space left: none of them is kept
                self._none_kept(saved, f"{self.job_file} cannot be written ({exc})")
                return
        if saved:
            self.stats.inc_value("robotstxt/persisted", len(saved))
        logger.info(
            "Crawl closing: %(n)s kept in %(where)s for the resumed crawl",
            {
                "n": counted(len(saved), "parked request"),
                "where": "the scheduler's queue" if scheduler is not None else self.job_file,
            },
            extra={"spider": self.crawler.spider},
        )

    def keep_cool_downs(self, cool_downs: dict[str, float]) -> None:
        """Keep the cool-downs running at a pause (origin: Unix time it ends) for the resumed
        job (``JOBDIR`` only)."""
        if self.cool_down_file is None:
            return
        # Only ends a resumed job accepts: finite, at most RERP_SLOWDOWN_MAX_WAIT away (one
        # learned from a fleet with another cap may end later).
        now = time.time()
        ends = {
            origin: min(until, now + self.max_wait)
            for origin, until in cool_downs.items()
            if math.isfinite(until) and until > now
        }
        if not ends:
            return
        try:
            _write_whole(self.cool_down_file, json.dumps(ends, allow_nan=False).encode())
        except OSError as exc:
            logger.warning(
                "Crawl closing: %(n)s not kept for the resumed crawl: %(file)s "
                "cannot be written (%(exc)s)",
                {"n": counted(len(ends), "cool-down"), "file": self.cool_down_file, "exc": exc},
                extra={"spider": self.crawler.spider},
            )
            return
        logger.info(
            "Crawl closing: %(n)s kept in %(file)s for the resumed crawl",
            {"n": counted(len(ends), "cool-down"), "file": self.cool_down_file},
            extra={"spider": self.crawler.spider},
        )

    def _not_kept(self, request: Request, why: str) -> None:
        logger.warning(
            "Crawl closing: dropped %(request)s, waiting for robots.txt: it cannot be saved for "
            "the resumed crawl (%(why)s)",
            {"request": request, "why": why},
            extra={"spider": self.crawler.spider},
        )
        self._dropped(request)

    def _none_kept(self, requests: list[Request], why: str) -> None:
        # One line for them all: they share the one cause.
        logger.warning(
            "Crawl closing: dropped %(n)s waiting for robots.txt: %(why)s",
            {"n": counted(len(requests), "request"), "why": why},
            extra={"spider": self.crawler.spider},
        )
        for request in requests:
            self._dropped(request)

    def _dropped(self, request: Request) -> None:
        self.stats.inc_value(DropReason.CRAWL_CLOSING.stat)
        self.crawler.signals.send_catch_log(
            signal=signals.request_dropped, request=request, spider=self.crawler.spider
        )

    # -- when the job resumes --------------------------------------------------------------
    def _spider_opened(self, spider: Any) -> None:
        """A resumed job: restore its cool-downs, schedule the requests its pause kept, then
        forget them."""
        # lexists: a dangling symbolic link is in the way too; and it never raises.
        if self.cool_down_file is not None and os.path.lexists(self.cool_down_file):
            self._restore_cool_downs(self.cool_down_file, spider)
        if self.job_file is not None and os.path.lexists(self.job_file):
            self._resume_requests(self.job_file, spider)

    def _restore_cool_downs(self, file: Path, spider: Any) -> None:
        ends, problems = self._read_cool_downs(file)
        fate = _clear(file, damaged=problems.count > 0)
        now = time.time()
        latest = now + self.max_wait  # the cap of this crawl, whatever the job wrote
        restored = 0
        for origin, until in ends.items():
            if until <= now:
                continue  # over during the pause
            left = min(until, latest) - now
            self._cool_down(origin, left)
            restored += 1
            logger.info(
                "Resumed the cool-down of %(origin)s: nothing is sent to it for %(left)s%(capped)s",
                {
                    "origin": origin,
                    "left": duration(left),
                    "capped": " (cut to RERP_SLOWDOWN_MAX_WAIT)" if until > latest else "",
                },
                extra={"spider": spider},
            )
        self._report(file, problems, f"{counted(restored, 'cool-down')} restored", fate, spider)

    @staticmethod
    def _read_cool_downs(file: Path) -> tuple[dict[str, float], _Problems]:
        """The cool-downs ``file`` holds that can be restored (origin: Unix time it ends), and
        what was wrong in it."""
        problems = _Problems()
        try:
            stored = json.loads(file.read_bytes())
        except Exception as exc:  # a directory, no permission, not JSON, nested too deep...
            problems.add_exception("unreadable", exc)
            return {}, problems
        if not isinstance(stored, dict):
            problems.add(f"no JSON object ({type(stored).__name__})")
            return {}, problems
        ends: dict[str, float] = {}
        for origin, value in stored.items():  # JSON's keys are strings
            until = _end_time(value)
            if not _is_origin(origin):
                problems.add(f"{_short.repr(origin)} is no origin")
            elif until is None:
                problems.add(f"{origin}: {_short.repr(value)} is no end time")
            else:
                ends[origin] = until
        return ends, problems

    def _resume_requests(self, file: Path, spider: Any) -> None:
        requests, problems = self._read_requests(file, spider)
        fate = _clear(file, damaged=problems.count > 0)
        engine = self.crawler.engine
        assert engine is not None
        for request in requests:
            engine.crawl(request)
            self.stats.inc_value("robotstxt/resumed")
        self._report(file, problems, f"{counted(len(requests), 'request')} restored", fate, spider)
        if not problems.count:
            logger.info(
                "Resumed %(n)s that were waiting for robots.txt when the job paused",
                {"n": counted(len(requests), "request")},
                extra={"spider": spider},
            )

    @staticmethod
    def _read_requests(file: Path, spider: Any) -> tuple[list[Request], _Problems]:
        """The requests ``file`` holds that can be rebuilt for ``spider``, and what was wrong
        in it."""
        problems = _Problems()
        try:
            with file.open("rb") as stream:
                saved = pickle.load(stream)  # noqa: S301 - the job's own file, as Scrapy's queues
        except Exception as exc:  # a directory, no permission, cut short, not a pickle...
            problems.add_exception("unreadable", exc)
            return [], problems
        if not isinstance(saved, list):
            problems.add(f"no list ({type(saved).__name__})")
            return [], problems
        requests: list[Request] = []
        for index, data in enumerate(saved):
            if not isinstance(data, dict):
                problems.add(f"entry {index} is no dict ({type(data).__name__})")
                continue
            try:
                request = request_from_dict(data, spider=spider)
            except Exception as exc:  # no URL, a callback no longer on the spider...
                problems.add_exception(f"entry {index} ({_short.repr(data.get('url'))})", exc)
                continue
            if not isinstance(request, Request):  # "_class" names something else
                problems.add(f"entry {index} is no request ({type(request).__name__})")
                continue
            requests.append(request)
        return requests, problems

    def _report(
        self, file: Path, problems: _Problems, restored: str, fate: str, spider: Any
    ) -> None:
        """One WARNING for a damaged file of the job (counted in :data:`STAT_SKIPPED`)."""
        if problems.count:
            self.stats.inc_value(STAT_SKIPPED, problems.count)
            logger.warning(
                "Resuming the job from a damaged %(file)s: %(restored)s, %(skipped)s skipped "
                "(%(problems)s); the file was %(fate)s",
                {
                    "file": file,
                    "restored": restored,
                    "skipped": counted(problems.count, "entry", "entries"),
                    "problems": problems,
                    "fate": fate,
                },
                extra={"spider": spider},
            )
        elif fate != "removed":  # read whole, but still there: it would be read again
            logger.warning(
                "Resumed the job from %(file)s (%(restored)s), but the file was %(fate)s",
                {"file": file, "restored": restored, "fate": fate},
                extra={"spider": spider},
            )
