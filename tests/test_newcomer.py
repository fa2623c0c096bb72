"""What a new user meets: a fresh ``scrapy startproject``, the README's one line, a crawl of a
site, ``scrapy robots`` and the command line, each run as the user runs it (a subprocess), with
assertions on the exit statuses, the lines the user reads and what the site received."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import Reply, Server

pytestmark = pytest.mark.scrapy  # Scrapy's command line (markers: pyproject.toml)

ROOT = Path(__file__).resolve().parent.parent

ROBOTS = "User-agent: *\nDisallow: /private/\n"

HOME = '<html><body><a href="/public">public</a> <a href="/private/x">private</a></body></html>'

#: The spider a newcomer writes: it follows every link of the page it is given (``-a start=``).
SPIDER = """\
import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]

    def parse(self, response):
        yield {"url": response.url}
        yield from response.follow_all(css="a", callback=self.parse)
"""


def readme_line() -> str:
    """The one line README.rst's "Using it with Scrapy" puts in ``settings.py``."""
    text = (ROOT / "README.rst").read_text(encoding="utf-8")
    section = text.split("Using it with Scrapy", 1)[1]
    match = re.search(r"^    (ADDONS = \{.*\})$", section, re.MULTILINE)
    assert match is not None, "README.rst shows no ADDONS line under 'Using it with Scrapy'"
    return match.group(1)


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def start_project(where: Path, name: str) -> Path:
    """``scrapy startproject``: returns the generated settings.py."""
    done = run(where, "scrapy", "startproject", name)
    assert done.returncode == 0, done.stderr
    settings = where / name / name / "settings.py"
    # Scrapy's template has an empty ADDONS already: the README's line must work with it.
    assert re.findall(r"^ADDONS = .*$", settings.read_text(), re.MULTILINE) == ["ADDONS = {}"]
    return settings


def lines(log: str, *levels: str) -> list[str]:
    return [line for line in log.splitlines() if any(f"] {level}: " in line for level in levels)]


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    with Server(host="127.0.0.5") as s:
        s.robots(ROBOTS)
        s.route("/", Reply(body=HOME, content_type="text/html"))
        yield s


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new project whose settings.py has the README's line in place of the template's
    ``ADDONS = {}``, and the newcomer's spider."""
    where = tmp_path_factory.mktemp("newcomer")
    settings = start_project(where, "newbie")
    settings.write_text(settings.read_text().replace("ADDONS = {}", readme_line()))
    (where / "newbie" / "newbie" / "spiders" / "site.py").write_text(SPIDER)
    return where / "newbie"


def test_the_readme_line_added_at_the_end_of_settings_py_works_too(
    tmp_path: Path,
) -> None:
    settings = start_project(tmp_path, "appended")
    settings.write_text(settings.read_text() + "\n" + readme_line() + "\n")
    done = run(tmp_path / "appended", "scrapy", "settings", "--get", "ADDONS")
    assert done.returncode == 0, done.stderr
    assert "scrapy_rerp.Addon" in done.stdout


def test_a_crawl_obeys_robots_txt_and_says_so(project: Path, site: Server) -> None:
    site.clear()
    done = run(project, "scrapy", "crawl", "site", "-a", f"start={site.url('/')}")
    log = done.stderr
    assert done.returncode == 0, log
    assert sorted(site.paths()) == ["/", "/public", "/robots.txt"]
    # The decision, with the line of robots.txt that made it.
    assert (
        f"Forbidden by robots.txt: <GET {site.url('/private/x')}> "
        f"({site.url('/robots.txt')} line 2: Disallow: /private/; longest match)"
    ) in log
    assert "Enabled addons:\n[scrapy_rerp.Addon]" in log
    # The middlewares are listed under the names the docs give.
    assert "'scrapy_rerp.RobotsTxtMiddleware'" in log
    assert "'scrapy_rerp.PageDirectivesMiddleware'" in log
    assert "scrapy_rerp.crawl.page_directives" not in log
    assert lines(log, "WARNING", "ERROR", "CRITICAL") == []
    assert "'robotstxt/forbidden': 1" in log
    assert "Spider closed (finished)" in log


def test_a_bad_setting_stops_the_crawl_with_one_error_and_exit_status_1(
    project: Path, site: Server
) -> None:
    site.clear()
    done = run(
        project, "scrapy", "crawl", "site", "-a", f"start={site.url('/')}", "-s", "RERP_SYNTAX=rfc"
    )
    log = done.stderr
    assert done.returncode == 1, log
    (error,) = lines(log, "WARNING", "ERROR", "CRITICAL")
    assert error.endswith(
        "[scrapy_rerp.settings] ERROR: RERP_SYNTAX = 'rfc' is invalid: expected one of 'rfc9309', "
        "'gym2008', 'mk1996' (or the constant); the crawl stops before it starts"
    )
    assert "Traceback" not in log
    assert site.paths() == []


def test_scrapy_robots_answers_with_the_projects_settings(project: Path, site: Server) -> None:
    site.clear()
    done = run(project, "scrapy", "robots", site.url("/private/x"), site.url("/public"))
    assert done.returncode == 1, done.stderr  # one URL is disallowed
    assert done.stdout.splitlines()[:3] == [
        f"DISALLOWED  {site.url('/private/x')}",
        f"  robots.txt   {site.url('/robots.txt')} (HTTP 200, parsed)",
        "  decided by   line 2: Disallow: /private/ (longest match)",
    ]
    assert f"ALLOWED     {site.url('/public')}" in done.stdout
    assert site.paths() == ["/robots.txt"]  # the pages themselves are not downloaded


@pytest.mark.parametrize(
    ("path", "status", "verdict"),
    [
        ("/private/x", 1, "DISALLOWED  /private/x  line 2: Disallow: /private/"),
        ("/public", 0, "ALLOWED     /public"),
    ],
)
def test_the_command_line_checks_a_site_url(
    project: Path, site: Server, path: str, status: int, verdict: str
) -> None:
    # A site's URL, as a newcomer types it: the command line reads the site's robots.txt.
    site.clear()
    done = run(project, "scrapy_rerp", "check", site.origin, path)
    assert done.returncode == status, (done.stdout, done.stderr)
    assert verdict in done.stdout, done.stdout
    assert site.paths() == ["/robots.txt"]
