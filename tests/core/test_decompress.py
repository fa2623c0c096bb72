"""Decompression of robots.txt bodies: every coding, the cap that holds inside the decoder, and a
gzip bomb in a real crawl costing no more than the cap."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import brotli
import pytest

from scrapy_rerp.core.decompress import SUPPORTED, decode
from tests.support.servers import Reply, Server

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd  # type: ignore[import-not-found,no-redef]

RULES = b"User-agent: *\nDisallow: /private\n"
MIB = 1 << 20


def gzip_bomb(size_mib: int) -> bytes:
    """``RULES`` then ``size_mib`` MiB of '#': concatenated gzip members (a valid gzip stream,
    as several members are), about 1 KiB per MiB inflated."""
    member = gzip.compress(b"#" * MIB)
    return gzip.compress(RULES) + member * size_mib


ENCODERS = {
    b"gzip": gzip.compress,
    b"x-gzip": gzip.compress,
    b"deflate": zlib.compress,
    b"br": brotli.compress,
    b"zstd": zstd.compress,
}


def test_every_supported_coding_has_a_test() -> None:
    assert set(ENCODERS) == SUPPORTED


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_decode_small_bodies_whole(coding: bytes) -> None:
    body = RULES * 10
    assert decode(ENCODERS[coding](body), [coding], 10_000) == (body, False)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_decode_stops_at_the_cap(coding: bytes) -> None:
    body = RULES + b"#" * (8 * MIB)
    decoded, truncated = decode(ENCODERS[coding](body), [coding], 1000)
    assert decoded == body[:1000]
    assert truncated


def test_decode_a_body_of_exactly_the_cap_is_not_truncated() -> None:
    body = b"x" * 1000
    assert decode(gzip.compress(body), [b"gzip"], 1000) == (body, False)


def test_decode_raw_deflate_and_chained_codings() -> None:
    raw = zlib.compressobj(wbits=-15)
    data = raw.compress(RULES) + raw.flush()
    assert decode(data, [b"deflate"], 1000) == (RULES, False)
    # Content-Encoding: deflate, gzip means deflate first, then gzip.
    assert decode(gzip.compress(zlib.compress(RULES)), [b"deflate", b" GZIP "], 1000) == (
        RULES,
        False,
    )
    assert decode(RULES, [b"identity"], 1000) == (RULES, False)


def test_decode_keeps_what_a_cut_gzip_stream_gave() -> None:
    # The download stops at the cap: the compressed stream ends early.
    data = gzip.compress(RULES + os.urandom(4000))[:-200]
    decoded, _ = decode(data, [b"gzip"], 10_000)
    assert decoded.startswith(RULES)


@pytest.mark.parametrize(
    ("data", "coding", "message"),
    [
        (b"not gzip at all", b"gzip", "corrupt gzip body"),
        (b"not deflate", b"deflate", "corrupt deflate body"),
        (b"not brotli", b"br", "corrupt br body"),
        (b"not zstd", b"zstd", "corrupt zstd body"),
        (b"whatever", b"compress", "unsupported Content-Encoding 'compress'"),
    ],
)
def test_decode_errors_are_value_errors(data: bytes, coding: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode(data, [coding], 1000)


def test_brotli_bomb_is_cut_without_inflating_it() -> None:
    data = brotli.compress(b"\0" * (64 * MIB), quality=1)
    assert len(data) < MIB
    decoded, truncated = decode(data, [b"br"], 500 * 1024)
    assert len(decoded) == 500 * 1024 and truncated


# -- in a crawl ---------------------------------------------------------------------------------

CRAWL = textwrap.dedent(
    """
    import json, sys
    from twisted.internet import asyncioreactor
    asyncioreactor.install()
    from twisted.internet import defer, reactor
    from tests.support.servers import crawl
    from tests.support.crawls import rerp

    async def main():
        crawler = await crawl(settings=rerp(LOG_LEVEL="INFO"), urls=sys.argv[1:])
        report = {k: v for k, v in crawler.stats.get_stats().items()
                  if k.startswith(("robotstxt/", "httpcompression/"))}
        # VmHWM, not ru_maxrss: the latter keeps the forked parent's size across exec.
        with open("/proc/self/status") as status:
            hwm = next(line for line in status if line.startswith("VmHWM:"))
        report["peak_rss_kib"] = int(hwm.split()[1])
        print(json.dumps(report))
        reactor.stop()

    reactor.callWhenRunning(lambda: defer.ensureDeferred(main()))
    reactor.run()
    """
)


def test_a_gzip_bomb_costs_the_crawl_no_more_than_the_cap(server: Server) -> None:
    # 1 GiB once inflated. Scrapy's HttpCompressionMiddleware inflated what arrived before the
    # cap stopped the download (about 500 MiB): a peak RSS of 616 MiB.
    bomb = gzip_bomb(1024)
    server.route("/robots.txt", Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    root = Path(__file__).resolve().parents[2]
    process = subprocess.run(
        [sys.executable, "-c", CRAWL, server.url("/private/x"), server.url("/ok")],
        cwd=root,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert process.returncode == 0, process.stderr.decode()[-3000:]
    stats = json.loads(process.stdout.decode().strip().splitlines()[-1])
    assert sorted(server.paths()) == ["/ok", "/robots.txt"]  # the rules before the padding hold
    assert stats["robotstxt/truncated"] == 1
    assert "httpcompression/response_count" not in stats  # Scrapy's middleware inflated nothing
    assert stats["peak_rss_kib"] < 200 * 1024
