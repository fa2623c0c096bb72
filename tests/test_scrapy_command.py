"""``scrapy robots URL...``: the Scrapy command, run as a subprocess in a project of its own."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from scrapy import Request
from scrapy import exceptions as scrapy_errors
from twisted.internet import error as twisted_errors

from scrapy_rerp.cli._download import download
from scrapy_rerp.cli._output import CliError
from scrapy_rerp.cli._page import fetch_page
from scrapy_rerp.commands import _Answer
from scrapy_rerp.core.settings import ROBOTS_ORIGIN_META, RerpSettings
from scrapy_rerp.core.status import CONNECTION_REFUSED, DNS_FAILED, TIMED_OUT
from tests.support.servers import Server

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

ROBOTS = """\
User-agent: *
Disallow: /

User-agent: ProjectBot
Disallow: /private
Crawl-delay: 2
Sitemap: https://example.com/sitemap.xml
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Scrapy project whose settings name the crawler ProjectBot."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    package = tmp_path / "proj"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        'BOT_NAME = "proj"\n'
        'USER_AGENT = "Mozilla/5.0 (compatible; ProjectBot/1.0; +https://example.com/bot)"\n'
        "ROBOTSTXT_OBEY = False  # the command obeys robots.txt all the same\n"
    )
    return tmp_path


def scrapy(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
    )


def test_robots_command_with_the_projects_user_agent(server: Server, project: Path) -> None:
    server.robots(ROBOTS)
    done = scrapy(project, server.url("/private/x"), server.url("/public"))
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert f"DISALLOWED  {server.url('/private/x')}" in out
    assert "decided by   line 5: Disallow: /private (longest match)" in out
    assert f"ALLOWED     {server.url('/public')}" in out
    assert "crawl-delay  2 s" in out
    assert "sitemap      https://example.com/sitemap.xml" in out
    assert "ProjectBot/1.0" in out
    # robots.txt once, through Scrapy with the project's User-Agent; no page downloaded.
    (hit,) = server.hits()
    assert hit.path == "/robots.txt" and "ProjectBot/1.0" in (hit.header("User-Agent") or "")


def test_robots_command_json(server: Server, project: Path) -> None:
    server.robots(ROBOTS)
    done = scrapy(project, server.url("/public"), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (result,) = doc["results"]
    assert result["decision"] == "allowed" and result["status"] == 200
    assert result["outcome"] == "parsed" and result["crawl_delay"] == 2
    assert doc["exit_status"] == 0


def test_robots_command_unreachable_robots_txt_says_why(project: Path) -> None:
    with Server() as gone:
        url = gone.url("/page")
    done = scrapy(project, url)
    assert done.returncode == 1
    assert done.stdout.splitlines()[:3] == [
        f"DROPPED     {url}",
        f"  robots.txt   {gone.url('/robots.txt')} (HTTP -, unreachable)",
        f"  why          robots.txt of {gone.origin} unreachable (connection refused): a crawl "
        "downloads nothing from this site until it answers",
    ]
    assert "Traceback" not in done.stderr
    (result,) = json.loads(scrapy(project, url, "--format", "json").stdout)["results"]
    assert result["decision"] == "dropped" and result["outcome"] == "unreachable"
    assert result["message"].startswith(
        f"robots.txt of {gone.origin} unreachable (connection refused)"
    )


def test_robots_command_unreachable_robots_txt_http_status(server: Server, project: Path) -> None:
    server.robots("", status=503)
    done = scrapy(project, server.url("/page"))
    assert done.returncode == 1
    assert (
        f"  why          robots.txt of {server.origin} unreachable (HTTP 503): a crawl "
        "downloads nothing from this site until it answers"
    ) in done.stdout.splitlines()


def test_robots_command_with_a_bad_setting(server: Server, project: Path) -> None:
    done = scrapy(project, server.url("/page"), "-s", "RERP_SYNTAX=rfc")
    assert done.returncode == 2
    assert done.stdout == ""  # no verdict on a crawl that did not start
    (line,) = [line for line in done.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert "ERROR: RERP_SYNTAX = 'rfc' is invalid" in line
    assert server.paths() == []


def test_robots_command_usage_error(project: Path) -> None:
    done = scrapy(project, "not-a-url")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_robots_command_unknown_option_is_a_usage_error(server: Server, project: Path) -> None:
    done = scrapy(project, "--bogus", server.url("/x"), "--format", "json")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    # Scrapy's own usage error: the command's usage, then the error.
    assert "scrapy robots [options] <url>..." in done.stderr
    assert done.stderr.splitlines()[-1].endswith("error: unrecognized arguments: --bogus")
    assert server.hits() == []  # not read as a URL, and no crawl started


@pytest.mark.parametrize(
    ("url", "why"),
    [("http://[::1", "Invalid IPv6 URL"), ("http://h:99999/", "Port out of range 0-65535")],
)
def test_robots_command_url_no_request_can_be_made_of(project: Path, url: str, why: str) -> None:
    done = scrapy(project, "https://example.com/", url)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert f"error: not a URL a crawler can request: {url} ({why})" in done.stderr


def test_robots_command_skips_a_bad_sitemap_line_only(server: Server, project: Path) -> None:
    server.robots(
        "User-agent: *\nDisallow:\n"
        "Sitemap: https://example.com/one.xml\n"
        "Sitemap: http://[::1/sitemap.xml\n"
        "Sitemap: /two.xml\n"
    )
    done = scrapy(project, server.url("/page"), "--format", "json")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["sitemaps"] == ["https://example.com/one.xml", server.url("/two.xml")]
    assert result["invalid_sitemaps"] == [
        {"sitemap": "http://[::1/sitemap.xml", "reason": "malformed URL (Invalid IPv6 URL)"}
    ]
    text = scrapy(project, server.url("/page")).stdout
    assert "  sitemap      https://example.com/one.xml\n" in text
    assert f"  sitemap      {server.url('/two.xml')}\n" in text
    assert "  sitemap      skipped 'http://[::1/sitemap.xml': malformed URL" in text


# -- a robots.txt that got no answer: the command's words are the command line's -------------

URL = "http://example.com/robots.txt"


#: Each cause, with what a crawl's download raises for it (Twisted's and Scrapy's errors, which
#: only the command meets) and what urllib raises for it (Python's, which both meet).
def scrapy_s(name: str, *args: str) -> list[Exception]:
    """Scrapy's own download error ``name`` (Scrapy 2.14 and later), else none: Scrapy 2.13
    raises Twisted's."""
    error = getattr(scrapy_errors, name, None)
    return [] if error is None else [error(*args)]


NO_ANSWER = [
    (
        CONNECTION_REFUSED,
        [
            twisted_errors.ConnectionRefusedError(),
            *scrapy_s("DownloadConnectionRefusedError"),
        ],
        [urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))],
    ),
    (
        TIMED_OUT,
        [
            twisted_errors.TimeoutError(),
            twisted_errors.TCPTimedOutError(),
            *scrapy_s("DownloadTimeoutError", f"Getting {URL} took longer than 5 seconds."),
        ],
        [urllib.error.URLError(TimeoutError("timed out")), TimeoutError("read timed out")],
    ),
    (
        DNS_FAILED,
        [twisted_errors.DNSLookupError("address 'example.com' not found")],
        [urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, ""))],
    ),
]


def command_says(error: Exception) -> str:
    """Why ``scrapy robots`` says robots.txt was not downloaded."""
    answer = _Answer()
    answer.process_exception(
        Request(URL, meta={ROBOTS_ORIGIN_META: "http://example.com:80"}), error
    )
    return answer.causes["http://example.com:80"]


def fetch_says(error: Exception, monkeypatch: pytest.MonkeyPatch) -> str:
    """Why ``scrapy-rerp fetch`` (``check``, ``explain``, ``lint``) says it was not."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", refuse)
    return download(URL, RerpSettings(), "bot", timeout=5).reason


def page_says(error: Exception, monkeypatch: pytest.MonkeyPatch) -> str:
    """Why ``scrapy-rerp page`` says a page was not downloaded."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", refuse)
    with pytest.raises(CliError) as raised:
        fetch_page(URL, "bot", timeout=5)
    return str(raised.value).removeprefix(f"{URL}: ")


@pytest.mark.parametrize(
    ("words", "crawl_errors", "urllib_errors"), NO_ANSWER, ids=[w for w, _, _ in NO_ANSWER]
)
def test_the_command_and_the_command_line_say_the_same_words(
    monkeypatch: pytest.MonkeyPatch,
    words: str,
    crawl_errors: list[Exception],
    urllib_errors: list[Exception],
) -> None:
    assert {command_says(error) for error in crawl_errors + urllib_errors} == {words}
    # the command line's deadline says how long it was given
    given = f"{words}: not downloaded within 5 s" if words == TIMED_OUT else words
    assert {fetch_says(error, monkeypatch) for error in urllib_errors} == {given}
    assert {page_says(error, monkeypatch) for error in urllib_errors} == {given}


def test_a_dns_failure_with_the_resolver_s_words_reads_the_same_in_both() -> None:
    error = urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    assert command_says(error) == f"{DNS_FAILED} (Name or service not known)"
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert page_says(error, monkeypatch) == command_says(error)
        assert fetch_says(error, monkeypatch) == command_says(error)
