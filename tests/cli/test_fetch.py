"""``scrapy-rerp fetch URL``: robots.txt downloaded as a crawl would, and what a crawler
concludes; each run as a subprocess against local servers."""

from __future__ import annotations

import gzip

import pytest

from tests.support.cli import BAD_SITEMAPS, run, run_json
from tests.support.servers import Reply, Server


def test_fetch_reports_what_a_crawler_concludes(server: Server) -> None:
    server.route(
        "/robots.txt",
        Reply(
            body=gzip.compress(
                b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n"
            ),
            headers={"Content-Encoding": "gzip", "Cache-Control": "max-age=7200"},
        ),
    )
    status, doc = run_json("fetch", server.url("/robots.txt"))
    assert status == 0
    fetch = doc["fetch"]
    assert fetch["status"] == 200 and fetch["outcome"] == "parsed"
    assert fetch["lifetime"] == 7200 and fetch["expires"].endswith("Z")
    assert doc["crawl_delay"] == 2
    assert doc["sitemaps"] == ["https://e.com/s.xml"]
    assert doc["groups"][0]["rules"] == [{"line": 2, "rule": "Disallow: /private"}]
    text = run("fetch", server.url("/robots.txt")).stdout
    assert "outcome     parsed: rules parsed" in text
    assert "crawl delay 2 s for *" in text


@pytest.mark.parametrize(
    ("reply", "outcome", "exit_code"),
    [
        (Reply(status=404), "allow-all", 0),
        (Reply(status=503, headers={"Retry-After": "120"}), "unreachable", 1),
        (Reply(status=301), "allow-all", 0),  # a redirect without Location
    ],
)
def test_fetch_status_policy(server: Server, reply: Reply, outcome: str, exit_code: int) -> None:
    server.route("/robots.txt", reply)
    status, doc = run_json("fetch", server.url("/robots.txt"))
    assert status == exit_code
    assert doc["fetch"]["outcome"] == outcome
    if outcome == "unreachable":
        assert "Retry-After 2.0 minutes" in doc["fetch"]["reason"]
        assert doc["fetch"]["retry_after"] == {"value": "120", "seconds": 120.0}
        text = run("fetch", server.url("/robots.txt")).stdout
        assert "retry-after 120 (2.0 minutes)" in text
    else:
        assert doc["fetch"]["retry_after"] is None


@pytest.mark.parametrize("value", ["later", "0", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_fetch_shows_a_retry_after_it_cannot_hold_to(server: Server, value: str) -> None:
    # A date in the past is no wait, as "0" is: the reason names none (it once said
    # "Retry-After 0s" while the seconds said None).
    server.route("/robots.txt", Reply(status=429, headers={"Retry-After": value}))
    _, doc = run_json("fetch", server.url("/robots.txt"))
    assert doc["fetch"]["retry_after"] == {"value": value, "seconds": None}
    assert doc["fetch"]["reason"] == "HTTP 429"
    text = run("fetch", server.url("/robots.txt")).stdout
    assert f"retry-after {value} (nothing a crawl can hold to)" in text


def test_fetch_follows_redirects_and_caps_the_size(server: Server) -> None:
    server.route("/old", Reply.redirect(server.url("/robots.txt")))
    server.robots("User-agent: *\nDisallow: /x\n" + "#" * 600_000)
    status, doc = run_json("fetch", server.url("/old"))
    assert status == 0
    assert doc["fetch"]["redirects"] == [server.url("/robots.txt")]
    assert doc["fetch"]["truncated"] is True and doc["fetch"]["bytes"] == 500 * 1024


def test_fetch_unreachable_host_is_an_outcome_not_a_traceback() -> None:
    with Server() as gone:
        url = gone.url("/robots.txt")
    done = run("fetch", url, "--timeout", "5")
    assert done.returncode == 1
    assert "outcome     unreachable" in done.stdout
    assert "Traceback" not in done.stderr


def test_fetch_resolves_sitemaps_and_skips_a_bad_one(server: Server) -> None:
    server.robots(BAD_SITEMAPS)
    status, doc = run_json("fetch", server.url("/robots.txt"))
    assert status == 0
    assert doc["sitemaps"] == ["https://example.com/one.xml", server.url("/two.xml")]
    assert [s["sitemap"] for s in doc["invalid_sitemaps"]] == ["http://[::1/sitemap.xml", ""]
    assert f"  {server.url('/two.xml')}\n" in run("fetch", server.url("/robots.txt")).stdout


# --- only a robots.txt is read as one --------------------------------------------------------


@pytest.mark.parametrize("slash", ["", "/"])
def test_fetch_of_a_site_downloads_its_robots_txt(server: Server, slash: str) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    done = run("fetch", server.origin + slash)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"robots.txt  {server.url('/robots.txt')}"
    assert "outcome     parsed: rules parsed" in lines
    assert "  line 1: User-agent: * (1 rule)" in lines
    assert server.paths() == ["/robots.txt"]


def test_fetch_of_a_page_says_it_is_not_a_robots_txt(server: Server) -> None:
    page = server.url("/products/1")
    done = run("fetch", page)
    assert done.returncode == 2
    assert (
        "outcome     parsed: an HTML (or XML) page, not a robots.txt: a crawler finds no rules "
        "in it (a page served for a missing robots.txt?)"
    ) in done.stdout.splitlines()
    assert "rules parsed" not in done.stdout
    assert done.stderr == (
        f"scrapy-rerp: error: {page}: an HTML (or XML) page, not a robots.txt: a crawler finds "
        "no rules in it (a page served for a missing robots.txt?); the site's robots.txt is "
        f"{server.url('/robots.txt')}\n"
    )
    status, doc = run_json("fetch", page)
    assert status == 2 and doc["exit_status"] == 2
    assert doc["not_robots_txt"]["code"] == "html"
    assert doc["conclusion"].startswith("an HTML (or XML) page, not a robots.txt")


def test_fetch_of_binary_data_says_it_is_not_a_robots_txt(server: Server) -> None:
    # A gzip body without its Content-Encoding: nothing a crawler can read.
    server.robots(gzip.compress(b"User-agent: *\nDisallow: /\n"), content_type=None)
    done = run("fetch", server.url("/robots.txt"))
    assert done.returncode == 2
    assert (
        "outcome     parsed: binary data, not a robots.txt: a crawler finds no rules in it"
        in done.stdout.splitlines()
    )
