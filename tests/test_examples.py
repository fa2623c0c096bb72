"""The examples run as a user runs them (a subprocess from the repository root) and say what
they should.

``examples/polite_crawl.py`` reports what its two local servers received; these tests read that
report and check scrapy_rerp's promises on it: disallowed URLs never reach a server, robots.txt
is downloaded once per origin before any page, the Crawl-delay gaps measured at the server are
at least the Crawl-delay, a 503 robots.txt is retried, sitemaps from robots.txt are followed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT = 120  # seconds; a guard against a hung crawl, not a timing assertion
CRAWL_DELAY = 0.5
TOLERANCE = 0.02


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


# -- engine_quickstart.py ---------------------------------------------------------------------


@cache
def quickstart() -> subprocess.CompletedProcess[str]:
    return run_example("engine_quickstart.py")


def test_quickstart_exits_0() -> None:
    result = quickstart()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_quickstart_verdicts_name_the_deciding_line() -> None:
    out = quickstart().stdout
    assert re.search(
        r"BLOCKED\s+https://www\.example\.com/search\?q=robots\s+"
        r"line 7: Disallow: /search \(longest match\)",
        out,
    )
    assert re.search(
        r"allowed\s+https://www\.example\.com/search/about\s+"
        r"line 8: Allow: /search/about \(longest match\)",
        out,
    )
    assert re.search(r"BLOCKED\s+https://www\.example\.com/manual\.pdf\s+line 9: Disallow", out)
    # The full User-Agent header selects ExampleBot's group: /cart is only disallowed for '*'.
    assert re.search(r"allowed\s+https://www\.example\.com/cart\s+\(no rule matched\)", out)
    assert re.search(r"BLOCKED\s+https://www\.example\.com/cart\s+line 3: Disallow: /cart", out)


def test_quickstart_extras() -> None:
    out = quickstart().stdout
    assert "crawl_delay  = 1.5" in out
    assert "request_rate = 30 requests per 60 s" in out
    assert (
        "sitemaps     = ['https://www.example.com/sitemap.xml', "
        "'https://www.example.com/news/sitemap.xml']"
    ) in out
    assert "warning: line 12: 'Cache-for: forever'" in out
    assert "crawl_delay('OtherBot/0.9') = 5.0" in out


def test_quickstart_gym2008_first_match_differs() -> None:
    out = quickstart().stdout
    section = out.split("2. ", 1)[1].split("3. ", 1)[0]
    assert "RFC9309: allowed by line 8: Allow: /search/about (longest match)" in section
    assert "GYM2008: BLOCKED by line 7: Disallow: /search (first match)" in section
    assert "1 of 6 verdicts differ" in section


def test_quickstart_rerp_interface() -> None:
    out = quickstart().stdout
    section = out.split("3. ", 1)[1]
    assert "rerp.is_allowed('ExampleBot', '/search/about') = False" in section
    assert "rerp.is_allowed('ExampleBot', '/search/about', syntax=RFC9309) = True" in section
    assert "rerp.is_allowed('ExampleBot', '/index.html') = True" in section
    assert "rerp.get_crawl_delay('ExampleBot') = 1.5" in section
    assert re.search(r"fetch\(http://127\.0\.0\.1:\d+/robots\.txt\): response_code = 200", section)
    assert "is_expired = False" in section
    assert "is_allowed('ExampleBot', '/cart') = True" in section
    assert "is_allowed('OtherBot', '/cart') = False" in section


# -- polite_crawl.py: reading its report ------------------------------------------------------

_ROW = re.compile(r"^\s+(\d+\.\d{3})\s+(-|\d+\.\d{3})\s+(\d{3})\s+(\S+)$")


@dataclass
class Row:
    at: float
    gap: float | None
    status: int
    path: str


@dataclass
class SiteReport:
    name: str
    origin: str
    rows: list[Row] = field(default_factory=list)
    crawl_delay_gaps: list[float] | None = None

    def paths(self) -> list[str]:
        return [row.path for row in self.rows]

    def robots_statuses(self) -> list[int]:
        return [row.status for row in self.rows if row.path == "/robots.txt"]


@dataclass
class Report:
    returncode: int
    stdout: str
    stderr: str
    sites: dict[str, SiteReport]
    blocked: dict[str, str]  # URL -> reason
    stats: dict[str, str]
    checks: list[str]


def parse_report(result: subprocess.CompletedProcess[str]) -> Report:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            current = sections.setdefault(line[3:], [])
        elif current is not None and line.strip():
            current.append(line)
    sites: dict[str, SiteReport] = {}
    blocked: dict[str, str] = {}
    stats: dict[str, str] = {}
    checks: list[str] = []
    for title, lines in sections.items():
        if title.startswith("blocked by robots.txt"):
            for line in lines:
                url, reason = line.strip().split(None, 1)
                blocked[url] = reason
        elif title.startswith("robotstxt/* stats"):
            for line in lines:
                key, value = line.strip().split(" = ", 1)
                stats[key] = value
        elif title == "checks":
            checks = [line.strip() for line in lines]
        else:
            name, origin = title.split()
            site = sites[name] = SiteReport(name, origin)
            for line in lines:
                match = _ROW.match(line)
                if match:
                    at, gap, status, path = match.groups()
                    site.rows.append(
                        Row(float(at), None if gap == "-" else float(gap), int(status), path)
                    )
                elif line.strip().startswith("Crawl-delay ") and "gaps" in line:
                    site.crawl_delay_gaps = [float(g) for g in line.split("gaps", 1)[1].split()]
    return Report(result.returncode, result.stdout, result.stderr, sites, blocked, stats, checks)


@cache
def polite_crawl(*args: str) -> Report:
    return parse_report(run_example("polite_crawl.py", *args))


@pytest.fixture(scope="module")
def flaky() -> Report:
    """The default run: shop with Crawl-delay 0.5, blog whose robots.txt answers 503 twice."""
    return polite_crawl()


@pytest.fixture(scope="module")
def missing() -> Report:
    """The blog without a robots.txt (404), one product page."""
    return polite_crawl("--blog-robots", "missing", "--pages", "1")


# -- polite_crawl.py: what it must show ---------------------------------------------------------


@pytest.mark.scrapy  # the demo crawl, on the Scrapy of the cell
@pytest.mark.parametrize("name", ["flaky", "missing"])
def test_polite_crawl_exits_0_with_every_check_ok(
    name: str, request: pytest.FixtureRequest
) -> None:
    report: Report = request.getfixturevalue(name)
    assert report.returncode == 0, report.stdout + report.stderr
    assert report.checks and all(line.startswith("ok ") for line in report.checks), report.checks
    assert "FAILED" not in report.stdout
    assert set(report.sites) == {"shop", "blog"}
    assert report.sites["shop"].origin.startswith("http://127.0.0.1:")
    assert report.sites["blog"].origin.startswith("http://localhost:")


def test_disallowed_urls_blocked_and_never_received(flaky: Report) -> None:
    shop, blog = flaky.sites["shop"], flaky.sites["blog"]
    assert flaky.blocked == {
        shop.origin + "/private/account": "robots.txt line 6: Disallow: /private",
        shop.origin + "/private/orders": "robots.txt line 6: Disallow: /private",
        blog.origin + "/drafts/next-post": "robots.txt line 2: Disallow: /drafts",
    }
    assert not [p for p in shop.paths() if p.startswith("/private")]
    assert not [p for p in blog.paths() if p.startswith("/drafts")]
    assert flaky.stats["robotstxt/forbidden"] == "3"


def test_allowed_pages_received_once(flaky: Report) -> None:
    shop, blog = flaky.sites["shop"], flaky.sites["blog"]
    assert sorted(shop.paths()) == sorted(
        ["/robots.txt", "/", "/sitemap.xml", "/new-arrivals"]
        + [f"/products/{n}" for n in (1, 2, 3)]
    )
    assert sorted(blog.paths()) == sorted(["/robots.txt"] * 3 + ["/", "/posts/1", "/posts/2"])
    assert all(row.status == 200 for row in shop.rows + blog.rows if row.path != "/robots.txt")


def test_robots_txt_once_per_origin_before_any_page(flaky: Report) -> None:
    shop, blog = flaky.sites["shop"], flaky.sites["blog"]
    assert shop.robots_statuses() == [200]
    assert shop.rows[0].path == "/robots.txt"
    # The blog's robots.txt is unreachable twice: the pages wait for the retry that succeeds.
    assert blog.robots_statuses() == [503, 503, 200]
    assert blog.paths()[:3] == ["/robots.txt"] * 3
    stats = flaky.stats
    assert stats["robotstxt/request_count"] == "4"
    assert stats["robotstxt/response_status_count/200"] == "2"
    assert stats["robotstxt/response_status_count/503"] == "2"
    assert stats["robotstxt/unreachable/count"] == "2"
    assert stats["robotstxt/retry_count"] == "2"
    # The blog's pages were parked outside the downloader, and all released.
    assert int(stats["robotstxt/parked"]) >= 1
    assert stats["robotstxt/released"] == stats["robotstxt/parked"]
    assert not any(name.startswith("robotstxt/dropped/") for name in stats)


def test_crawl_delay_gaps_at_the_server(flaky: Report) -> None:
    shop = flaky.sites["shop"]
    gaps = shop.crawl_delay_gaps
    assert gaps is not None and len(gaps) == len(shop.rows) - 1 == 6
    # Every request of the shop, robots.txt included, at least Crawl-delay after the one before.
    assert [row.gap for row in shop.rows[1:]] == gaps
    assert min(gaps) >= CRAWL_DELAY - TOLERANCE, gaps
    assert flaky.stats["robotstxt/crawl_delay/floor_applied"] == "1"
    assert flaky.stats["robotstxt/crawl_delay/max_floor"] == "0.5"
    # No Crawl-delay on the blog (its own download slot): no floor reported for it.
    assert flaky.sites["blog"].crawl_delay_gaps is None


def test_sitemap_from_robots_txt_followed(flaky: Report) -> None:
    shop = flaky.sites["shop"]
    # /new-arrivals is linked from nowhere: only the sitemap listed in robots.txt names it.
    assert shop.paths().count("/sitemap.xml") == 1
    assert shop.paths().count("/new-arrivals") == 1
    assert f"Sitemaps: {shop.origin}/sitemap.xml" in flaky.stdout
    assert flaky.stats["robotstxt/sitemaps/scheduled"] == "1"


def test_missing_robots_txt_allows_all(missing: Report) -> None:
    shop, blog = missing.sites["shop"], missing.sites["blog"]
    assert blog.robots_statuses() == [404]
    assert blog.paths()[0] == "/robots.txt"
    assert "/drafts/next-post" in blog.paths()
    assert missing.stats["robotstxt/allow_all"] == "1"
    assert set(missing.blocked) == {
        shop.origin + "/private/account",
        shop.origin + "/private/orders",
    }
    assert not [p for p in shop.paths() if p.startswith("/private")]
    assert shop.robots_statuses() == [200]
    assert sorted(shop.paths()) == sorted(
        ["/robots.txt", "/", "/sitemap.xml", "/products/1", "/new-arrivals"]
    )
    assert shop.crawl_delay_gaps is not None and len(shop.crawl_delay_gaps) == 4
    assert min(shop.crawl_delay_gaps) >= CRAWL_DELAY - TOLERANCE, shop.crawl_delay_gaps


def test_polite_crawl_help_and_bad_arguments() -> None:
    result = run_example("polite_crawl.py", "--help")
    assert result.returncode == 0
    assert "--pages N" in result.stdout and "--blog-robots" in result.stdout
    result = run_example("polite_crawl.py", "--pages", "0")
    assert result.returncode == 2
    assert "--pages must be between 1 and 40" in result.stderr
