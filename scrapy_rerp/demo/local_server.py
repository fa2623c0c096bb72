"""Local HTTP servers with programmable replies that record every request they receive.

``scrapy-rerp demo`` (:mod:`scrapy_rerp.demo`) runs its two web sites on them, and the test
suite its crawls (``tests/support/servers.py`` re-exports these names). Standard library only.

Each :class:`Server` listens on a loopback address (``127.0.0.1`` by default; ``127.0.0.N``
is another host, so another Scrapy download slot) on its own free port, and answers from a
background thread, so a crawl in the caller's event loop talks to it over real sockets. What
the server received is what callers check: :meth:`Server.hits` lists every request with its
arrival time, path and headers, and, for replies streamed in chunks, how many body bytes went
out before the client hung up.

Typical use::

    with Server() as site:
        site.robots("User-agent: *\\nDisallow: /private\\n")
        site.route("/slow", Reply(body="ok", delay=0.5))
        site.route("/moved", Reply.redirect("http://elsewhere/robots.txt"))
        ... crawl site.url("/private/x") ...
        assert site.paths() == ["/robots.txt"]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Hit", "Reply", "Route", "Server", "gaps", "servers", "urlset"]


@dataclass(kw_only=True)
class Reply:
    """What the server sends back for one request.

    ``delay`` waits before the status line (a slow server); ``chunk_size`` and
    ``chunk_delay`` stream the body in pieces (so a client that closes early leaves part of
    it unsent); ``close`` drops the connection without any reply (a network error);
    ``content_length`` sends that Content-Length instead of the body's, then closes;
    ``head_byte_delay`` sends the status line and headers one byte at a time, that many seconds
    apart (a server that trickles: no single read ever waits long).
    """

    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/plain"
    delay: float = 0.0
    chunk_size: int | None = None
    chunk_delay: float = 0.0
    close: bool = False
    content_length: int | None = None  # a Content-Length that lies (the connection then closes)
    head_byte_delay: float = 0.0

    @classmethod
    def redirect(cls, location: str, status: int = 301) -> Reply:
        return cls(status=status, headers={"Location": location}, content_type=None)

    @classmethod
    def error(cls) -> Reply:
        """No reply at all: the connection is closed as soon as the request is read."""
        return cls(close=True)

    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


def urlset(urls: Iterable[str]) -> Reply:
    """A sitemap (``<urlset>``) that lists *urls*."""
    body = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return Reply(
        body=f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>',
        content_type="application/xml",
    )


@dataclass(kw_only=True)
class Hit:
    """One request as the server received it."""

    time: float  # time.monotonic() when the request line was read
    method: str
    path: str  # path and query, as sent
    headers: dict[str, str]
    status: int | None = None  # None when the connection was dropped on purpose
    body_size: int = 0  # bytes the reply's body should have had
    bytes_sent: int = 0  # body bytes written before the client went away (or all of them)
    completed: bool = False  # the whole body was written

    def header(self, name: str) -> str | None:
        """The value of the header ``name``, whatever its case, or None."""
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


#: A route answers with a fixed Reply, a sequence of Replies used in turn (the last one
#: repeats), or a callable that receives the Hit and returns the Reply.
Route = Reply | Sequence[Reply] | Callable[[Hit], Reply]


class Server:
    """A threaded HTTP/1.1 server on a loopback address with programmable routes.

    ``host`` is the address it listens on (``127.0.0.1``, ``127.0.0.2``, ...); ``host_name``,
    if given, is the name its URLs use instead (``localhost`` reaches ``127.0.0.1`` under
    another name: another origin, and another Scrapy download slot, for the same socket).

    Paths without a route get ``default(hit)``: ``200`` with a small HTML page; ``/robots.txt``
    without a route gets ``404`` until :meth:`robots` or :meth:`route` sets it.
    """

    def __init__(self, host: str = "127.0.0.1", host_name: str | None = None) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, Route] = {}
        self._counters: dict[str, int] = {}
        self._hits: list[Hit] = []
        self.default: Callable[[Hit], Reply] = _default_page
        self._httpd = _HTTPServer((host, 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.host = host
        self.host_name = host_name or host
        self.port: int = self._httpd.server_address[1]

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> Server:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for serve_forever(), started or not
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (``host_name`` in place of the address, if given)"""
        return f"http://{self.host_name}:{self.port}"

    @property
    def netloc(self) -> str:
        return f"{self.host_name}:{self.port}"

    def url(self, path: str = "/", host: str | None = None) -> str:
        """An absolute URL on this server; ``host`` (e.g. ``"localhost"``) names it differently."""
        return f"http://{host or self.host_name}:{self.port}{path}"

    # -- programming ----------------------------------------------------------------------
    def route(self, path: str, reply: Route) -> None:
        """Answer requests for ``path`` with ``reply``: an exact match of path and query first,
        else of the path alone."""
        with self._lock:
            self._routes[path] = reply
            self._counters[path] = 0

    def robots(
        self,
        body: bytes | str | None = "",
        status: int = 200,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Shorthand for ``route("/robots.txt", Reply(status=status, body=body,
        headers=headers, ...))``."""
        self.route(
            "/robots.txt", Reply(status=status, body=body or b"", headers=headers or {}, **kwargs)
        )

    # -- what was received ----------------------------------------------------------------
    def hits(self, path: str | None = None) -> list[Hit]:
        """Every request received so far, in arrival order (only those for ``path`` if given)."""
        with self._lock:
            return [h for h in self._hits if path is None or h.path == path]

    def paths(self) -> list[str]:
        return [h.path for h in self.hits()]

    def count(self, path: str) -> int:
        return len(self.hits(path))

    def clear(self) -> None:
        with self._lock:
            self._hits.clear()

    # -- internals ------------------------------------------------------------------------
    def _record(self, hit: Hit) -> Reply:
        with self._lock:
            self._hits.append(hit)
            route = self._routes.get(hit.path, self._routes.get(urlsplit(hit.path).path))
            index = self._counters.get(hit.path, 0)
            self._counters[hit.path] = index + 1
        if route is None:
            if urlsplit(hit.path).path == "/robots.txt":
                return Reply(status=404, body="not found")
            return self.default(hit)
        if isinstance(route, Reply):
            return route
        if callable(route):
            return route(hit)
        return route[min(index, len(route) - 1)]


class _HTTPServer(ThreadingHTTPServer):
    # Hundreds of concurrent connections: the default backlog (5) would drop SYNs and
    # make clients wait for TCP retransmits.
    request_queue_size = 1024


def _default_page(hit: Hit) -> Reply:
    return Reply(body=f"<html><body>{hit.path}</body></html>", content_type="text/html")


def _make_handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real sites
        # Headers and body go out in separate writes; with Nagle's algorithm and delayed
        # ACKs each response on a kept-alive connection would stall ~40 ms.
        disable_nagle_algorithm = True

        head_byte_delay = 0.0

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # keep the caller's output clean

        def flush_headers(self) -> None:
            if not self.head_byte_delay:
                super().flush_headers()
                return
            head = b"".join(getattr(self, "_headers_buffer", []))
            self._headers_buffer: list[bytes] = []
            for index in range(len(head)):
                self.wfile.write(head[index : index + 1])
                self.wfile.flush()
                time.sleep(self.head_byte_delay)

        def _serve(self) -> None:
            hit = Hit(
                time=time.monotonic(),
                method=self.command,
                path=self.path,
                headers=dict(self.headers.items()),
            )
            # Drain a request body so the connection stays usable.
            if length := int(self.headers.get("Content-Length") or 0):
                self.rfile.read(length)
            reply = server._record(hit)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.close:
                self.close_connection = True
                return
            body = reply.body_bytes() if self.command != "HEAD" else b""
            hit.status = reply.status
            hit.body_size = len(body)
            self.head_byte_delay = reply.head_byte_delay
            try:
                self.send_response(reply.status)
                if reply.content_type is not None:
                    self.send_header("Content-Type", reply.content_type)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                declared = len(body) if reply.content_length is None else reply.content_length
                self.send_header("Content-Length", str(declared))
                if reply.content_length is not None:  # a lie: the connection then closes
                    self.close_connection = True
                self.end_headers()
                step = reply.chunk_size or len(body) or 1
                for start in range(0, len(body), step):
                    chunk = body[start : start + step]
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    hit.bytes_sent += len(chunk)
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                hit.completed = True
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                self.close_connection = True

        do_GET = do_HEAD = do_POST = _serve

    return Handler


@contextmanager
def servers(n: int) -> Iterator[list[Server]]:
    """Start ``n`` servers (``n`` origins) for the duration of a ``with`` block:
    ``with servers(3) as (a, b, c):``."""
    started = [Server().start() for _ in range(n)]
    try:
        yield started
    finally:
        for s in started:
            s.stop()


def gaps(hits: Iterable[Hit]) -> list[float]:
    """Seconds between consecutive hits (for measuring delays at the server)."""
    times = [h.time for h in hits]
    return [b - a for a, b in zip(times, times[1:], strict=False)]
