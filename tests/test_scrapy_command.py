"""``scrapy robots URL...``: the Scrapy command, run as a subprocess in a project of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
