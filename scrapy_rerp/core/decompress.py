"""Content-Encoding undone with a size cap that truncates instead of failing.

Scrapy's ``HttpCompressionMiddleware`` bounds decompression by ``download_maxsize`` and raises
``IgnoreRequest`` past it, losing the body. For robots.txt the cap is ``RERP_MAX_SIZE`` and RFC
9309 section 2.5 wants the first bytes parsed, so robots.txt responses are decoded here: the
fetcher takes the ``Content-Encoding`` off the raw response before Scrapy's middleware sees it
(``response_downloaded``, see ``crawl/transport.py``) and calls :func:`decode` with the cap. A
gzip bomb then costs at most the cap plus one chunk.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from gzip import GzipFile
from io import BytesIO
from typing import Any

__all__ = ["SUPPORTED", "decode"]

_CHUNK = 64 * 1024


def _gunzip(data: bytes, limit: int) -> bytes:
    # GzipFile reads concatenated members, as browsers and Scrapy do.
    out = bytearray()
    with GzipFile(fileobj=BytesIO(data)) as stream:
        while len(out) < limit:
            try:
                chunk = stream.read1(min(_CHUNK, limit - len(out)))
            except (OSError, EOFError, zlib.error):
                if out:  # a truncated stream (the download was cut at the cap): keep what came
                    break
                raise
            if not chunk:
                break
            out += chunk
    return bytes(out)


def _inflate(data: bytes, limit: int) -> bytes:
    # "deflate" is zlib-wrapped by the standard, raw deflate from some servers.
    try:
        return _zlib_stream(zlib.decompressobj(), data, limit)
    except zlib.error:
        return _zlib_stream(zlib.decompressobj(-zlib.MAX_WBITS), data, limit)


def _zlib_stream(decompressor: zlib._Decompress, data: bytes, limit: int) -> bytes:
    out = bytearray(decompressor.decompress(data, min(_CHUNK, limit)))
    while len(out) < limit and decompressor.unconsumed_tail and not decompressor.eof:
        out += decompressor.decompress(decompressor.unconsumed_tail, min(_CHUNK, limit - len(out)))
    return bytes(out)


def _unbrotli(data: bytes, limit: int) -> bytes:
    # Either module, the same API; looked up by name, since one of them is there to be typed.
    try:
        brotli: Any = importlib.import_module("brotli")
    except ImportError:  # pragma: no cover - Scrapy installs one of the two
        brotli = importlib.import_module("brotlicffi")

    decompressor = brotli.Decompressor()
    out = bytearray(decompressor.process(data, output_buffer_limit=min(_CHUNK, limit)))
    while len(out) < limit and not decompressor.is_finished():
        chunk = decompressor.process(b"", output_buffer_limit=min(_CHUNK, limit - len(out)))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _unzstd(data: bytes, limit: int) -> bytes:
    # Python >= 3.14 has the module, backports.zstd is it before: looked up by name, since one
    # of them is there to be typed.
    try:
        zstd: Any = importlib.import_module("compression.zstd")
    except ImportError:
        zstd = importlib.import_module("backports.zstd")

    out = bytearray()
    with zstd.ZstdFile(BytesIO(data)) as stream:
        while len(out) < limit:
            try:
                chunk = stream.read(min(_CHUNK, limit - len(out)))
            except EOFError:
                break
            if not chunk:
                break
            out += chunk
    return bytes(out)


_DECODERS: dict[bytes, Callable[[bytes, int], bytes]] = {
    b"gzip": _gunzip,
    b"x-gzip": _gunzip,
    b"deflate": _inflate,
    b"br": _unbrotli,
    b"zstd": _unzstd,
}

#: The content codings :func:`decode` undoes.
SUPPORTED = frozenset(_DECODERS)


def decode(body: bytes, encodings: list[bytes], limit: int) -> tuple[bytes, bool]:
    """Undo ``encodings`` (a Content-Encoding list, in the order applied) on ``body``.

    Returns the decoded bytes, at most ``limit`` of them, and whether more would have come
    (the body was cut). Raises ``ValueError`` for an unknown coding or a corrupt stream.
    """
    truncated = False
    # One header line may list several codings ("gzip, br"), as several lines may.
    codings = [c.strip().lower() for line in encodings for c in line.split(b",")]
    for encoding in reversed([c for c in codings if c]):
        if encoding == b"identity":
            continue
        decoder = _DECODERS.get(encoding)
        if decoder is None:
            raise ValueError(f"unsupported Content-Encoding {encoding.decode('latin-1')!r}")
        try:
            # One byte over the cap tells a body of exactly `limit` bytes from a longer one.
            body = decoder(body, limit + 1)
        except Exception as exc:  # zlib.error, OSError, brotli.error, ZstdError: no common base
            raise ValueError(f"corrupt {encoding.decode('latin-1')} body: {exc}") from exc
        if len(body) > limit:
            body = body[:limit]
            truncated = True
    return body, truncated
