"""The fleet's Redis URL: checked with the other settings at start-up (a bad one stops the crawl
with one ERROR line and exit status 1), and never shown with its password: not in a log line,
a stat, an error or the evidence (``redacted_url``, the one way it is shown)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_rerp.core.settings import RerpSettings, RerpSettingsError, redacted_url
from scrapy_rerp.fleet.store import RedisOriginCache
from tests.support.redis import finish, free_port, start_worker
from tests.support.servers import Server

PASSWORD = "s3cretpw"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"redis://:{PASSWORD}@127.0.0.1:6399/0", "redis://***@127.0.0.1:6399/0"),
        (f"rediss://worker:{PASSWORD}@r.test/2", "rediss://***@r.test/2"),
        (f"redis://r.test/0?password={PASSWORD}&db=1", "redis://r.test/0?password=***&db=1"),
        (f"unix://:{PASSWORD}@/run/redis.sock?db=0", "unix://***@/run/redis.sock?db=0"),
        (f"redis://u:{PASSWORD}@x@r.test:1/0", "redis://***@r.test:1/0"),  # '@' in the password
        (f"u:{PASSWORD}@r.test:6379", "***@r.test:6379"),  # no scheme: still no password
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_a_redis_url_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6379/0",
        "redis://127.0.0.1",
        "rediss://user:pw@r.test:6380/15",
        "redis://r.test/?db=3",
        "unix:///run/redis.sock",
        "unix:///run/redis.sock?db=2",
    ],
)
def test_redis_urls_redis_py_reads_are_accepted(url: str) -> None:
    assert RerpSettings.from_settings({"RERP_REDIS_URL": url}, require_obey=False).redis_url == url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("127.0.0.1:6379", "a redis://[[user]:password@]host[:port][/db] URL"),
        ("http://127.0.0.1:6379/0", "a redis://"),
        ("redis:/127.0.0.1:6379/0", "a redis://"),
        ("redis://127.0.0.1:99999/0", "with a port from 1 to 65535"),
        ("redis://127.0.0.1:0/0", "with a port from 1 to 65535"),
        ("redis://127.0.0.1:port/0", "with a port from 1 to 65535"),
        ("redis://:6379/0", "with a host"),
        ("redis://127.0.0.1:6379/zero", "with a database number"),
        ("redis://127.0.0.1:6379/0?db=-1", "with a database number"),
        ("redis://127.0.0.1:6379/0 ", "without spaces or control characters"),
        ("unix://", "names its socket's path"),
    ],
)
def test_a_bad_redis_url_is_a_settings_error(url: str, expected: str) -> None:
    for name in ("RERP_REDIS_URL", "REDIS_URL"):
        with pytest.raises(RerpSettingsError) as raised:
            RerpSettings.from_settings({name: url}, require_obey=False)
        assert raised.value.setting == name
        assert str(raised.value).startswith(f"{name} = {url!r} is invalid: expected a redis://")
        assert expected in str(raised.value)


def test_a_bad_redis_url_s_error_never_shows_its_password() -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:99999/0"
    with pytest.raises(RerpSettingsError) as raised:
        RerpSettings.from_settings({"RERP_REDIS_URL": url}, require_obey=False)
    assert PASSWORD not in str(raised.value) and PASSWORD not in repr(raised.value.value)
    assert "'redis://***@127.0.0.1:99999/0' is invalid" in str(raised.value)


def test_the_store_s_repr_never_shows_the_password() -> None:
    store = RedisOriginCache(f"redis://:{PASSWORD}@127.0.0.1:6399/0")
    assert repr(store) == "RedisOriginCache('redis://***@127.0.0.1:6399/0', prefix='rerp')"


SPIDER = """
import scrapy

class OneUrl(scrapy.Spider):
    name = "one"
    custom_settings = {{
        "ADDONS": {{"scrapy_rerp.Addon": 100}},
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,  # Scrapy >= 2.19, which warns without asyncio
        "RERP_CACHE": "scrapy_rerp.cache.RedisOriginCache",
    }}
    start_urls = [{url!r}]

    def parse(self, response):
        pass
"""


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("127.0.0.1:6379", "'127.0.0.1:6379'"),
        (f"redis://:{PASSWORD}@127.0.0.1:70000/0", "'redis://***@127.0.0.1:70000/0'"),
    ],
    ids=["no-scheme", "port-out-of-range-with-password"],
)
def test_scrapy_runspider_with_a_bad_redis_url_shows_one_error_and_exits_1(
    server: Server, tmp_path: Path, url: str, shown: str
) -> None:
    spider = tmp_path / "spider.py"
    spider.write_text(SPIDER.format(url=server.url("/a")))
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), "-s", f"RERP_REDIS_URL={url}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    log = done.stderr
    assert done.returncode == 1, log
    (line,) = [
        line
        for line in log.splitlines()
        if any(f"] {level}: " in line for level in ("WARNING", "ERROR", "CRITICAL"))
    ]
    assert f"] ERROR: RERP_REDIS_URL = {shown} is invalid: expected a redis://" in line, line
    assert line.endswith("; the crawl stops before it starts"), line
    assert "Traceback" not in log and "Task exception" not in log, log
    assert "Spider closed (rerp_settings_error)" in log
    assert PASSWORD not in log + done.stdout
    assert server.paths() == []


def test_a_crawl_whose_redis_has_a_password_and_is_down_never_logs_the_password(
    server: Server, tmp_path: Path
) -> None:
    """The WARNING of an unavailable Redis once showed
    ``redis://:s3cretpw@127.0.0.1:6399/0``; it names the host and port, without the userinfo."""
    server.robots("User-agent: *\nDisallow: /private\n")
    port = free_port()  # nothing listens there
    evidence = tmp_path / "evidence.jsonl"
    worker = start_worker(
        {
            "redis": f"redis://:{PASSWORD}@127.0.0.1:{port}/0",
            "urls": [server.url("/a"), server.url("/private/b")],
            "settings": {
                "LOG_LEVEL": "DEBUG",
                "RERP_REDIS_TIMEOUT": 0.5,
                "RERP_EVIDENCE": str(evidence),
            },
        }
    )
    report = finish(worker)
    # The crawl went on alone: robots.txt obeyed.
    assert report["received"] == [server.url("/a")]
    assert sorted(server.paths()) == ["/a", "/robots.txt"]
    assert report["stats"]["robotstxt/redis/errors"] >= 1
    (gone,) = [line for line in report["warnings"] if "is unavailable" in line]
    assert f"Redis at redis://***@127.0.0.1:{port}/0 is unavailable" in gone, gone
    # Nowhere: the whole log (DEBUG), the stats the worker reports, the evidence.
    assert PASSWORD not in report["log"]
    assert PASSWORD not in json.dumps(report["stats"])
    assert evidence.read_text() and PASSWORD not in evidence.read_text()
