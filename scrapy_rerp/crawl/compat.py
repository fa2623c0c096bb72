"""What scrapy_rerp needs of Scrapy that Scrapy does not publish, or publishes differently from
one version to the next, in one place.

Supported: Scrapy 2.13.4 to 2.19 (docs/versions.rst). Where those releases
differ, the difference is mended here and nowhere else:

* ``scrapy.utils.asyncio`` (2.14): ``create_looping_call``; its ``sleep`` came in 2.18. Before,
  a Twisted reactor is always installed, and Twisted's own ``LoopingCall`` and ``deferLater``
  work under any of them, the asyncio one included.
* ``engine.download_async`` (2.14); before, ``engine.download`` returns a Deferred.
* ``AsyncCrawlerProcess`` (2.14); ``CrawlerProcess`` before, the same under a reactor.
* ``CloseSpider`` raised by a ``spider_opened`` handler closes the spider (2.18); before, it is
  logged as an error and the crawl goes on, so the engine is asked to close instead.
* ``Crawler.engine`` raises ``RuntimeError`` while it is not set (2.19); it is None before:
  :func:`engine_of` answers None either way. ``Crawler.stats`` likewise: :func:`stats_of` binds
  it once, typed (``core.runtime.Stats``), and says plainly when there is none yet.
* ``signals.robots_parsed`` (2.18): not sent before, since no handler can be connected to it.
* Component priority dictionaries (``DOWNLOADER_MIDDLEWARES``): since 2.15 a class and its
  import path are one key (``get_component_priority_dict_with_base``); before, they are two, and
  the ``_BASE`` entry of a component disabled by class stays enabled.
* ``Headers`` is read as the dict it is (name in normal form -> list of values), which no
  release documents; checked once at import, with the public methods as the fallback.
* Download slots: ``Slot.lastseen`` reads ``time.monotonic`` since 2.16 (``time.time`` before);
  ``Slot.jitter`` (a float) replaced ``Slot.randomize_delay`` (a bool, meaning +-50 %) in 2.19;
  the delay of a new slot is ``Downloader._delay`` since 2.18 (AutoThrottle writes its start
  delay there), the spider's ``download_delay`` attribute before.

Scrapy has no public accessor for the engine's scheduler, nor a signal when the engine starts to
close, nor a way to fail a crawl (exit status 1) once its spider has opened (:func:`fail_crawl`
does it as :func:`close_when_opened` does for a crawl that could not start); these functions read
or wrap the engine's private state, and are the only code that does, so that a change upstream is
mended here. :class:`ScrapyRuntime` runs the Scrapy-free services' tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import scrapy
import scrapy.core.downloader as _downloader_module
from pydispatch.dispatcher import getAllReceivers, liveReceivers
from pydispatch.robustapply import robustApply
from scrapy import signals
from scrapy.core.downloader import Slot
from scrapy.exceptions import CloseSpider, IgnoreRequest
from scrapy.http import Headers
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy.utils.signal import logger as _signal_logger
from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Downloader
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser
    from scrapy.settings import BaseSettings

    from scrapy_rerp.core.runtime import Stats

__all__ = [
    "ScrapyRuntime",
    "asyncio_available",
    "close_spider",
    "close_when_opened",
    "component_priorities",
    "configured_jitter",
    "crawler_process",
    "create_looping_call",
    "disable_component",
    "download",
    "engine_closing",
    "engine_of",
    "fail_crawl",
    "header_key",
    "header_value",
    "header_values",
    "loaded",
    "new_slot_delay",
    "no_jitter",
    "open_spider",
    "scheduler_of",
    "heard",
    "send_refusable",
    "send_robots_parsed",
    "set_slot_jitter",
    "sleep",
    "slot_clock",
    "slot_jitter",
    "slot_latercall",
    "stats_of",
    "user_agent_header",
]

#: (major, minor) of the installed Scrapy, for what no attribute tells apart.
SCRAPY_VERSION = tuple(int(part) for part in scrapy.__version__.split(".")[:2])

try:  # Scrapy >= 2.14
    from scrapy.utils.asyncio import call_later as _call_later
except ImportError:  # Scrapy 2.13: a reactor is always installed

    def _call_later(delay: float, call: Callable[..., object], *args: Any) -> Any:
        from twisted.internet import reactor

        return reactor.callLater(delay, call, *args)


# create_looping_call(call): a looping call (``start(interval, now=...)``, ``stop()``,
# ``running``) that works under the crawl's reactor, or without one.
try:  # Scrapy >= 2.14
    from scrapy.utils.asyncio import create_looping_call
except ImportError:  # Scrapy 2.13: a reactor is always installed
    from twisted.internet.task import LoopingCall as create_looping_call

try:  # Scrapy >= 2.18
    from scrapy.utils.asyncio import sleep as _scrapy_sleep
except ImportError:
    _scrapy_sleep = None

# asyncio_available(): True under Scrapy's asyncio reactor, and in its reactorless mode (an
# asyncio loop and no reactor); False under any other reactor, where asyncio code cannot run.
try:  # Scrapy >= 2.14: the asyncio reactor, or no reactor and a running asyncio loop
    from scrapy.utils.asyncio import is_asyncio_available as asyncio_available
except ImportError:  # Scrapy 2.13: only the asyncio reactor
    from scrapy.utils.reactor import is_asyncio_reactor_installed as asyncio_available


def crawler_process(settings: dict[str, Any]) -> Any:
    """The process a script runs one crawl in: ``AsyncCrawlerProcess`` where Scrapy has it."""
    try:
        from scrapy.crawler import AsyncCrawlerProcess
    except ImportError:  # Scrapy 2.13
        from scrapy.crawler import CrawlerProcess

        return CrawlerProcess(settings)
    return AsyncCrawlerProcess(settings)


async def sleep(seconds: float) -> None:
    """Sleep under the crawl's reactor, or without one."""
    if _scrapy_sleep is not None:
        await _scrapy_sleep(seconds)
    elif asyncio_available():
        await asyncio.sleep(seconds)
    else:  # another reactor: the coroutine runs as a Deferred
        from twisted.internet import reactor
        from twisted.internet.task import deferLater

        await deferLater(reactor, seconds)


async def download(crawler: Crawler, request: Request) -> Response:
    """Download ``request`` through the downloader middlewares, not the scheduler."""
    engine = crawler.engine
    assert engine is not None
    download_async = getattr(engine, "download_async", None)
    if download_async is not None:
        return await download_async(request)
    return await maybe_deferred_to_future(engine.download(request))


def close_when_opened(crawler: Crawler, reason: str) -> None:
    """Close the crawl with ``reason`` as the spider opens, quietly (whoever asks has logged
    why), as a crawl that could not start: ``scrapy crawl`` and ``scrapy runspider`` then exit
    with status 1, as they do for a bad Scrapy setting. Until the engine closes, the caller
    must keep requests from being downloaded."""

    def close_at_open(**kwargs: Any) -> None:
        _not_started(crawler)
        if SCRAPY_VERSION >= (2, 18):
            raise CloseSpider(reason)  # the spider closes before start() is read
        # The engine is still opening: paused, it sends nothing to the downloader; closed
        # right after.
        assert crawler.engine is not None
        crawler.engine.pause()
        _call_later(0, _close_engine, crawler, reason)

    crawler.signals.connect(close_at_open, signal=signals.spider_opened, weak=False)


def _not_started(crawler: Crawler) -> None:
    """Have Scrapy's crawler runner count the crawl as one that could not start.

    A runner sets ``bootstrap_failed`` (what ``scrapy crawl``, ``runspider`` and ``robots``
    read for their exit status) when a crawl ends without ``crawler.spider``; no public way
    says so of a spider that opened. So the spider is let go as the engine's last step of
    closing it (its spider-closed callback, after the ``spider_closed`` handlers and the stats,
    which some stats collectors read from ``crawler.spider``), before the runner looks.
    """
    engine = engine_of(crawler)
    closed = getattr(engine, "_spider_closed_callback", None)
    if engine is None or closed is None or getattr(closed, "_rerp_not_started", False):
        return  # a Scrapy without it: the crawl still stops, with exit status 0

    def let_go(spider: Any) -> Any:
        crawler.spider = None
        return closed(spider)

    let_go._rerp_not_started = True  # type: ignore[attr-defined]
    engine._spider_closed_callback = let_go


def _close_engine(crawler: Crawler, reason: str) -> None:
    engine = engine_of(crawler)
    if engine is None or engine.spider is None:
        return  # closed meanwhile
    if not engine.running:
        # Still starting (engine_started handlers run first): a spider closed now would stop
        # an engine that is not running yet, which Scrapy logs as an error.
        _call_later(0.01, _close_engine, crawler, reason)
        return
    close_spider(crawler, reason)


def fail_crawl(crawler: Crawler, reason: str) -> None:
    """Close the running crawl with ``reason`` as one that failed: ``scrapy crawl`` and
    ``scrapy runspider`` then exit with status 1, and a ``CrawlerProcess``'s
    ``bootstrap_failed`` is true, as for a crawl that could not start. Safe to call while the
    spider closes (its ``spider_closed`` handlers), and more than once."""
    _not_started(crawler)
    engine = engine_of(crawler)
    if engine is not None and engine.spider is not None:
        if engine.running or hasattr(engine, "close_spider_async"):
            close_spider(crawler, reason)
        else:
            # Scrapy before 2.14, as the spider opens: the engine is not running yet, and a
            # spider closed now raises "Engine not running" at its close. Closed once it runs.
            _close_engine(crawler, reason)


def open_spider(crawler: Crawler, *, close_if_idle: bool = True) -> Deferred[None]:
    """Open the crawler's spider in its engine, without starting the engine (for code that
    drives the crawl's components by hand: the tests, the benchmarks)."""
    engine = crawler.engine
    assert engine is not None and crawler.spider is not None
    open_async = getattr(engine, "open_spider_async", None)
    if open_async is not None:  # Scrapy >= 2.14
        return deferred_from_coro(open_async(close_if_idle=close_if_idle))
    return engine.open_spider(crawler.spider, close_if_idle=close_if_idle)


def close_spider(crawler: Crawler, reason: str) -> Deferred[None]:
    """Close the running spider with ``reason``, as ``CloseSpider`` would; fires when closed."""
    engine = crawler.engine
    assert engine is not None and engine.spider is not None
    close_async = getattr(engine, "close_spider_async", None)
    if close_async is not None:  # Scrapy >= 2.14
        return deferred_from_coro(close_async(reason=reason))
    return engine.close_spider(engine.spider, reason=reason)


_ROBOTS_PARSED = getattr(signals, "robots_parsed", None)  # Scrapy >= 2.18


async def send_robots_parsed(
    crawler: Crawler, robotparser: Callable[[], RobotParser], request: Any
) -> None:
    """Send Scrapy's ``robots_parsed`` signal (handlers awaited), where Scrapy has it; the
    parser is made only then."""
    if _ROBOTS_PARSED is not None:
        await crawler.signals.send_catch_log_async(
            signal=_ROBOTS_PARSED, robotparser=robotparser(), request=request
        )


def send_refusable(crawler: Crawler, signal: object, **arguments: Any) -> None:
    """Send ``signal`` as ``crawler.signals.send_catch_log`` does (every handler called with the
    arguments it names; any other exception logged by Scrapy's logger, as Scrapy logs it, and
    the next handler called); an ``IgnoreRequest`` a handler raised is raised here once every
    handler has run (not logged), as Scrapy's downloader raises a handler's ``StopDownload``.

    The layer sends two or three such signals per request (``request_admitted``,
    ``request_answered``, ``page_read``) when something hears them. Scrapy's send also builds
    a list of results, and a ``Failure`` (a traceback) for each refusal, to be looked through
    here: with one handler, 63,500 instructions a send against 52,600 for this loop
    (callgrind), most of the rest being pydispatch's look-up of the receivers."""
    sender = crawler.signals.sender
    refusal: IgnoreRequest | None = None
    for receiver in liveReceivers(getAllReceivers(sender, signal)):
        try:
            result = robustApply(receiver, signal=signal, sender=sender, **arguments)
        except IgnoreRequest as refused:
            if refusal is None:
                refusal = refused
        except Exception:
            _signal_logger.error(
                "Error caught on signal handler: %(receiver)s",
                {"receiver": receiver},
                exc_info=True,
                extra={"spider": crawler.spider},
            )
        else:
            if isinstance(result, Deferred):
                _signal_logger.error(
                    "Cannot return deferreds from signal handler: %(receiver)s",
                    {"receiver": receiver},
                    extra={"spider": crawler.spider},
                )
    if refusal is not None:
        raise refusal


def heard(crawler: Crawler, signal: object) -> bool:
    """Whether a handler is connected to ``signal`` (Scrapy's dispatcher, pydispatch, keeps
    them): a signal costs a send per response only when someone hears it."""
    return any(True for _ in liveReceivers(getAllReceivers(crawler.signals.sender, signal)))


def component_priorities(settings: BaseSettings, name: str) -> BaseSettings:
    """A component priority dictionary setting (``DOWNLOADER_MIDDLEWARES``) merged with its
    ``_BASE`` counterpart."""
    with_base = getattr(settings, "get_component_priority_dict_with_base", None)
    if with_base is not None:  # Scrapy >= 2.15: import paths and classes deduplicated
        return with_base(name)
    return settings.getwithbase(name)


def disable_component(settings: BaseSettings, name: str, cls: type) -> None:
    """Disable ``cls`` in the component priority dictionary setting ``name``, however the
    project or the ``_BASE`` setting names it."""
    if hasattr(settings, "get_component_priority_dict_with_base"):
        # Scrapy >= 2.15: a class and its import path are one key.
        settings.set_in_component_priority_dict(name, cls, None)
        return
    components = settings.getdict(name)
    keys = [key for key in settings.getwithbase(name) if loaded(key) is cls]
    for key in keys or [cls]:
        components[key] = None
    settings.set(name, components, settings.getpriority(name) or 0)


def loaded(key: Any) -> Any:
    """What a component priority dictionary's key names (a class, or its import path), or None
    when it names nothing that can be loaded."""
    try:
        return load_object(key)
    except (ImportError, NameError, TypeError, ValueError):
        return None


# -- download slots ------------------------------------------------------------------------------

_SLOT_HAS_JITTER = hasattr(Slot, "jitter")  # Scrapy >= 2.19
#: Now, on the clock of ``Slot.lastseen``: the downloader module's ``monotonic`` (2.16+) or
#: ``time``.
slot_clock: Callable[[], float] = getattr(_downloader_module, "monotonic", time.time)


# -- header values ----------------------------------------------------------------------------
# Scrapy's Headers is a dict from a name's normal form (Headers.normkey: title-cased bytes) to
# the list of its values. Its get and getlist normalize the name on every call, 5,000 to 6,000
# instructions each, against under 1,000 for a dict lookup of a name normalized once (callgrind).
# A crawl pays five such reads per page (the gate's user agent; the page layer's Content-Type,
# X-Robots-Tag, Robots-Tag and user agent): about 0.3 % of its instructions (docs/benchmarks.rst).


def header_key(name: str) -> bytes:
    """*name* in the form Scrapy's ``Headers`` keys it, for :func:`header_values`."""
    return bytes(Headers().normkey(name))


def _values_by_getlist(headers: Headers, key: bytes) -> list[bytes] | None:
    return list(headers.getlist(key)) or None


def _headers_are_a_dict() -> bool:
    probe = Headers({"X-Probe": ["a", "b"], "x-probe-too": "c"})
    return (
        isinstance(probe, dict)
        and dict.get(probe, header_key("x-PROBE")) == [b"a", b"b"]
        and dict.get(probe, header_key("X-Probe-Too")) == [b"c"]
    )


#: The values of a header (*key* from :func:`header_key`) as ``Headers.getlist`` gives them, or
#: None (or an empty list) when it has none. Where ``Headers`` is the dict it is, this is
#: ``dict.get`` itself: no Python function in between, which costs about 1,000 instructions a
#: read (callgrind).
header_values: Callable[[Headers, bytes], list[bytes] | None] = (
    dict.get if _headers_are_a_dict() else _values_by_getlist
)


def header_value(headers: Headers, key: bytes) -> bytes | None:
    """The last value of a header, as ``Headers.get`` gives it (None if it has none)."""
    values = header_values(headers, key)
    return values[-1] if values else None


_USER_AGENT = header_key("User-Agent")


def user_agent_header(request: Request) -> bytes | None:
    """The request's ``User-Agent`` header, as ``Headers.get`` gives it."""
    return header_value(request.headers, _USER_AGENT)


def slot_latercall(slot: Slot) -> bool:
    """Whether the slot waits for a timer of its own before it looks at its queue again
    (Scrapy sets one when a request came before the slot's delay had passed). Older Scrapy
    releases (2.13) leave the timer on the slot once it has fired: only an active one counts."""
    call = getattr(slot, "latercall", None)
    if call is None:
        return False
    active = getattr(call, "active", None)
    return bool(active()) if callable(active) else True


def slot_jitter(slot: Slot) -> float:
    """The random spread of the slot's gaps: each is ``delay * (1 +- jitter)``."""
    if _SLOT_HAS_JITTER:
        released: Any = slot  # jitter since 2.19, randomize_delay before
        return float(released.jitter)
    return 0.5 if getattr(slot, "randomize_delay", False) else 0.0


def set_slot_jitter(slot: Slot, jitter: float) -> None:
    """Set the slot's spread (before 2.19 only none or +-50 % can be had: any non-zero
    ``jitter`` means +-50 %)."""
    released: Any = slot  # jitter since 2.19, randomize_delay before
    if _SLOT_HAS_JITTER:
        released.jitter = jitter
    else:
        released.randomize_delay = bool(jitter)


def no_jitter(slot_settings: dict[str, Any]) -> None:
    """Make a ``DOWNLOAD_SLOTS``-style entry ask for no jitter, in this Scrapy's words."""
    slot_settings.pop("randomize_delay", None)
    if _SLOT_HAS_JITTER:
        slot_settings["jitter"] = 0.0
    else:
        slot_settings["randomize_delay"] = False


def configured_jitter(slot_settings: dict[str, Any] | None, downloader: Downloader) -> float:
    """The jitter Scrapy itself gives a slot with ``slot_settings`` (a ``DOWNLOAD_SLOTS``
    entry, or None)."""
    slot_settings = slot_settings or {}
    if _SLOT_HAS_JITTER:
        if "jitter" in slot_settings:
            return float(slot_settings["jitter"])
        if "randomize_delay" in slot_settings:
            return 0.5 if slot_settings["randomize_delay"] else 0.0
        released: Any = downloader  # _jitter since 2.19
        return float(released._jitter)
    randomize = slot_settings.get("randomize_delay", getattr(downloader, "randomize_delay", True))
    return 0.5 if randomize else 0.0


def new_slot_delay(crawler: Crawler) -> float:
    """The delay Scrapy gives a new slot without a ``DOWNLOAD_SLOTS`` entry (AutoThrottle's
    start delay when it is on)."""
    engine = engine_of(crawler)
    downloader = engine.downloader if engine is not None else None
    delay = getattr(downloader, "_delay", None)  # Scrapy >= 2.18
    if delay is None:
        delay = getattr(
            crawler.spider, "download_delay", crawler.settings.getfloat("DOWNLOAD_DELAY")
        )
    return float(delay)


# -- the engine's private state ------------------------------------------------------------------


def engine_of(crawler: Crawler) -> ExecutionEngine | None:
    """The crawler's engine, or None while it has none (before the crawl starts, after it ends)."""
    try:
        return crawler.engine
    except RuntimeError:  # Scrapy >= 2.19: an engine not set is an error to read
        return None


def stats_of(crawler: Crawler) -> Stats:
    """The crawler's stats collector, which a component built for a crawl binds once.

    Raises RuntimeError where the crawler has none yet (its stats are made as the crawl starts,
    before any component is built): Scrapy 2.19 raises that as ``crawler.stats`` is read, older
    releases answer None.
    """
    try:
        stats: Stats | None = crawler.stats
    except RuntimeError:  # Scrapy >= 2.19: stats not set yet are an error to read
        stats = None
    if stats is None:
        raise RuntimeError(
            "scrapy_rerp: the crawler has no stats collector yet; build the robots.txt "
            "components once the crawl starts (from_crawler), not before"
        )
    return stats


def engine_closing(crawler: Crawler) -> bool:
    """True once the engine has started to stop or to close the spider.

    Scrapy sends no signal when closing starts (``spider_closed`` comes after the downloader has
    drained), so this reads the engine's state: ``running`` turns false on ``stop`` (Ctrl-C, a
    crawler stop) and the engine slot's ``closing`` is set by ``close_spider`` (CLOSESPIDER_*).
    """
    engine = engine_of(crawler)
    if engine is None or not engine.running:
        return True
    slot = getattr(engine, "_slot", None)
    return slot is None or getattr(slot, "closing", None) is not None


def scheduler_of(crawler: Crawler) -> Any:
    """The running crawl's scheduler, or None before the spider opens and after it closed."""
    slot = getattr(engine_of(crawler), "_slot", None)
    return getattr(slot, "scheduler", None)


class _Looping:
    def __init__(self, loop: Any) -> None:
        self._loop = loop

    def cancel(self) -> None:
        if self._loop.running:
            self._loop.stop()


class ScrapyRuntime:
    """The :class:`~scrapy_rerp.core.runtime.Runtime` of a crawl: Scrapy's own helpers, which work
    under any reactor, and without one."""

    def spawn(
        self, coro: Coroutine[Any, Any, None], done: Callable[[BaseException | None], None]
    ) -> Deferred[None]:
        task = deferred_from_coro(coro)

        def finished(result: Any) -> None:
            if not isinstance(result, Failure) or result.check(
                CancelledError, asyncio.CancelledError
            ):
                done(None)
                return
            error = result.value
            if error.__traceback__ is None and result.getTracebackObject() is not None:
                error = error.with_traceback(result.getTracebackObject())
            done(error)

        task.addBoth(finished)
        return task

    def sleep(self, seconds: float) -> Awaitable[Any]:
        return sleep(seconds)

    def every(self, seconds: float, call: Callable[[], None]) -> _Looping:
        loop = create_looping_call(call)
        loop.start(seconds, now=False)
        return _Looping(loop)
