"""``scrapy-rerp page URL``: a page's directives, where each was stated, and what a crawl does
with the page, against local servers; and the same answers as a real crawl gives."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from scrapy_rerp.core.download import PAGE_MAX_REDIRECTS
from tests.support.cli import run, run_json
from tests.support.crawls import rerp
from tests.support.pages import (
    MYBOT,
    USAGE_PAGES,
    FollowSpider,
    addon,
    feed,
    kept,
    page,
    robots_meta,
)
from tests.support.servers import ListSpider, Reply, Server, crawl


def page_json(*args: str) -> tuple[int, dict[str, Any]]:
    return run_json("page", *args)


@pytest.fixture
def site(server: Server) -> Server:
    server.route(
        "/",
        page(
            robots_meta("robots", "noai, max-snippet:20, nope")
            + robots_meta("mybot", "nofollow")
            + robots_meta("otherbot", "noindex"),
            headers={"X-Robots-Tag": "unavailable_after: 2001-01-01"},
        ),
    )
    server.route("/plain", page(robots_meta("robots", "index, follow")))
    return server


def test_text_shows_each_directive_where_it_was_stated_and_what_a_crawl_does(
    site: Server,
) -> None:
    done = run("page", site.url("/"), "-A", MYBOT)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    robots = site.url("/robots.txt")
    assert lines[:10] == [
        f"page        {site.url('/')}",
        f"robots.txt  {robots} (HTTP 404): ALLOWED (robots.txt unavailable (HTTP 404): every "
        "URL is allowed)",
        f"status      200, text/html, {lines[2].split(', ')[2]}",
        f"user agent  {MYBOT} (statements for mybot and for every crawler apply)",
        "directives: 4",
        "  X-Robots-Tag header 1  unavailable_after: 2001-01-01",
        "  meta tag 1 (robots)    noai",
        "  meta tag 1 (robots)    max-snippet:20",
        "  meta tag 2 (mybot)     nofollow (for mybot)",
        "restrictions in force: noai, nofollow, noindex",
    ]
    assert lines[10:12] == ["warnings: 1", "  meta tag 1 (robots): unknown rule 'nope', ignored"]
    verdicts = {line[:21].strip(): line[21:].strip() for line in lines[13:-3]}
    assert lines[12] == "in a crawl:"
    # The test server answers every path with a page: a tdmrep.json that is no JSON array.
    assert lines[-3:] == [
        f"tdmrep.json {site.url('/.well-known/tdmrep.json')} (200, 0 entries, not read: no "
        "reservation from the file)",
        "  TDMRep ai-input    UNKNOWN       ai-input unknown: no tdm-reservation stated",
        "  TDMRep train-ai    UNKNOWN       train-ai unknown: no tdm-reservation stated",
    ]
    assert verdicts == {
        "links": "NOT FOLLOWED  meta tag 2 (mybot): nofollow",
        "train-ai": "DISALLOWED    meta tag 1 (robots): noai",
        "train-ai (images)": "DISALLOWED    meta tag 1 (robots): noai",
        "search": "DISALLOWED    X-Robots-Tag header 1: unavailable_after: 2001-01-01",
        "search (images)": "DISALLOWED    X-Robots-Tag header 1: unavailable_after: 2001-01-01",
        "ai-input": "DISALLOWED    meta tag 1 (robots): noai",
        "ai-input (images)": "DISALLOWED    meta tag 1 (robots): noai",
    }
    # The user agent asked about is the one sent.
    assert site.hits("/")[0].header("User-Agent") == MYBOT


def test_another_crawlers_statements_do_not_apply_and_allowed_exits_zero(site: Server) -> None:
    status, document = page_json(site.url("/plain"), "-A", "MyBot")
    assert status == 0
    assert document["exit_status"] == 0
    # "index, follow" are read, and restrict nothing.
    assert [s["rule"] for s in document["statements"]] == ["index", "follow"]
    assert document["restrictions"] == []
    status, document = page_json(site.url("/"), "-A", "OtherBot")
    assert document["matched_agent"] == "otherbot"
    assert document["follow"]["allowed"] is True
    assert [s["source"] for s in document["statements"]] == [
        "X-Robots-Tag header 1",
        "meta tag 1 (robots)",
        "meta tag 1 (robots)",
        "meta tag 3 (otherbot)",
    ]
    # Without -A, only what every crawler is told; the request says who asks.
    status, document = page_json(site.url("/"))
    assert document["agent"] == "*" and document["matched_agent"] is None
    sent = site.hits("/")[-1].header("User-Agent")
    assert sent is not None and sent.startswith("scrapy-rerp/")


def test_json_document_keys(site: Server) -> None:
    status, document = page_json(site.url("/"), "-A", "MyBot")
    assert status == 1
    assert set(document) == {
        "command",
        "url",
        "downloaded",
        "robots_txt_overridden",
        "final_url",
        "status",
        "content_type",
        "html",
        "image",
        "bytes",
        "truncated",
        "agent",
        "matched_agent",
        "directives",
        "restrictions",
        "statements",
        "warnings",
        "robots_txt",
        "retry_after",
        "tdmrep",
        "rsl",
        "crawl",
        "follow",
        "usage",
        "notes",
        "exit_status",
    }
    assert document["crawl"] == {
        "gets_page": True,
        "decision": "given to the spider",
        "reason": None,
    }
    assert document["retry_after"] is None
    assert document["command"] == "page"
    assert document["directives"]["unavailable_after"] == "2001-01-01T00:00:00+00:00"
    assert document["directives"]["max_snippet"] == 20
    assert document["directives"]["noai"] is True and document["directives"]["noindex"] is False
    assert document["restrictions"] == ["noai", "nofollow", "noindex"]
    assert document["statements"][0] == {
        "rule": "unavailable_after",
        "value": "2001-01-01T00:00:00+00:00",
        "source": "X-Robots-Tag header 1",
        "agent": None,
        "text": "unavailable_after: 2001-01-01",
    }
    assert document["warnings"] == [
        {
            "code": "unknown-rule",
            "source": "meta tag 1 (robots)",
            "text": "nope",
            "message": "unknown rule 'nope', ignored",
        }
    ]
    assert document["follow"] == {
        "allowed": False,
        "source": "meta tag 2 (mybot)",
        "statement": "nofollow",
        "reason": "nofollow by meta tag 2 (mybot): nofollow",
    }
    assert set(document["usage"]) == {"search", "train-ai", "ai-input"}
    assert document["usage"]["search"]["page"] == {
        "allowed": False,
        "source": "X-Robots-Tag header 1",
        "statement": "unavailable_after: 2001-01-01",
        "reason": "search disallowed by X-Robots-Tag header 1: unavailable_after: 2001-01-01"
        " (noindex)",
    }


def test_an_image_a_redirect_an_error_page_and_a_compressed_page(server: Server) -> None:
    server.route(
        "/pic",
        Reply(body=b"\x89PNG", content_type="image/png", headers={"X-Robots-Tag": "noimageai"}),
    )
    server.route("/moved", Reply.redirect("/pic"))
    server.route("/gone", Reply(status=410, body="gone", headers={"X-Robots-Tag": "noindex"}))
    server.route(
        "/gz",
        Reply(
            body=gzip.compress(html_with(robots_meta("robots", "nofollow")).encode()),
            content_type="text/html; charset=utf-8",
            headers={"Content-Encoding": "gzip"},
        ),
    )

    done = run("page", server.url("/moved"))
    assert done.returncode == 1
    assert f"scrapy-rerp: {server.url('/moved')}: redirected to {server.url('/pic')}" in done.stderr
    assert "scrapy-rerp: not HTML (image/png): only its headers are read, no meta tags" in (
        done.stderr
    )
    rows = [line.split()[0:3] for line in done.stdout.splitlines() if "(images)" in line]
    assert rows == [
        ["train-ai", "(images)", "DISALLOWED"],
        ["search", "(images)", "ALLOWED"],
        ["ai-input", "(images)", "DISALLOWED"],
    ]  # an image's content is an image: no rows for text

    status, document = page_json(server.url("/gone"))
    assert status == 1 and document["status"] == 410
    assert document["crawl"] == {
        "gets_page": False,
        "decision": "not given to the spider",
        "reason": "HTTP 410: Scrapy's HttpErrorMiddleware keeps it from the spider's callbacks, "
        "so none of its directives apply",
    }
    assert document["follow"]["allowed"] is False
    assert document["statements"][0]["text"] == "noindex"  # read, but never applied

    status, document = page_json(server.url("/gz"))
    assert status == 0 and document["follow"]["allowed"] is False
    assert document["statements"][0]["source"] == "meta tag 1 (robots)"


def html_with(head: str) -> str:
    return f"<html><head>{head}</head><body>x</body></html>"


@pytest.mark.parametrize("url", ["ftp://example.com/", "http://[::1", "not a url"])
def test_a_bad_url_exits_two_with_one_line(url: str) -> None:
    done = run("page", url)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "scrapy-rerp: error:" in done.stderr


def test_a_page_that_does_not_answer_exits_two_with_a_json_error(server: Server) -> None:
    server.route("/x", Reply.error())  # robots.txt answers (404), the page does not
    url = server.url("/x")
    status, document = page_json(url)
    assert status == 2
    assert document == {
        "command": "page",
        "error": f"{url}: RemoteDisconnected: Remote end closed connection without response",
    }


def test_a_site_that_does_not_answer_is_not_asked_for_the_page() -> None:
    with Server() as gone:
        url = gone.url("/")
    status, document = page_json(url)
    assert status == 1  # robots.txt unreachable: a crawl downloads nothing from the site
    assert document["downloaded"] is False
    assert document["robots_txt"]["fetch"]["reason"] == "connection refused"
    assert document["crawl"]["decision"] == "not downloaded"


# -- the same answers as a crawl --------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_the_command_says_what_a_crawl_drops(server: Server, tmp_path: Path) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    for path, reply in USAGE_PAGES.items():
        server.route(path, reply)
    said: dict[str, dict[str, Any]] = {}
    for path in USAGE_PAGES:
        _, document = page_json(server.url(path), "-A", MYBOT)
        said[path.lstrip("/")] = document["usage"]
    for purpose in ("search", "train-ai", "ai-input"):
        out = tmp_path / purpose
        out.mkdir()
        settings = addon(**feed(out, USER_AGENT=MYBOT, RERP_USAGE=purpose))
        await crawl(FollowSpider, settings, urls=[server.url(path) for path in USAGE_PAGES])
        # Every page yields an item (an image response's is an image item: "page" is then the
        # image's decision), and those with <img> an image item too.
        expected = [
            (name, image)
            for name, usage in said.items()
            for image in ((False, True) if name in ("noimageai", "plain") else (False,))
            if usage[purpose]["images" if image else "page"]["allowed"]
        ]
        assert kept(out) == sorted(expected), purpose


def chain_of(server: Server) -> list[str]:
    return [path for path in server.paths() if path[:2] == "/r" and path != "/robots.txt"]


@pytest.mark.parametrize("hops", [PAGE_MAX_REDIRECTS, PAGE_MAX_REDIRECTS + 1])
@pytest_twisted.ensureDeferred
async def test_a_page_s_redirects_are_followed_as_far_as_a_crawl_follows_them(
    server: Server, hops: int
) -> None:
    # The crawl's RedirectMiddleware follows REDIRECT_MAX_TIMES (20) redirects, each through the
    # robots.txt middleware again; the page command takes the same course.
    for number in range(hops):
        server.route(f"/r{number}", Reply.redirect(f"/r{number + 1}", status=302))
    server.route(f"/r{hops}", page(body="here"))
    crawler = await crawl(settings=rerp(), urls=[server.url("/r0")])
    crawled = chain_of(server)
    server.clear()
    _, document = page_json(server.url("/r0"))
    assert chain_of(server) == crawled
    assert crawled == [f"/r{number}" for number in range(min(hops, PAGE_MAX_REDIRECTS) + 1)]
    spider = crawler.spider
    assert isinstance(spider, ListSpider)
    assert document["crawl"]["gets_page"] is bool(spider.responses)
    assert document["final_url"] == server.url(f"/r{min(hops, PAGE_MAX_REDIRECTS)}")
    assert document["status"] == (200 if hops == PAGE_MAX_REDIRECTS else 302)


def test_a_redirect_with_credentials_is_not_followed_and_keeps_them_secret(
    server: Server,
) -> None:
    server.route("/moved", Reply.redirect(f"http://user:s3cret@{server.netloc}/x"))
    server.route("/x", page(body="here"))
    done = run("page", server.url("/moved"), "--format", "json")
    assert done.returncode == 1, done.stderr  # the redirect is the answer: no page to use
    assert server.paths() == ["/robots.txt", "/moved"]
    document = json.loads(done.stdout)
    assert (document["status"], document["crawl"]["gets_page"]) == (301, False)
    assert "s3cret" not in done.stdout + done.stderr


# -- robots.txt and slow-down answers: what a crawl does before it reads a directive ---------


NOT_DOWNLOADED = [
    "  links              NOT FOLLOWED  (not downloaded)",
    "  train-ai           NOT USED      (not downloaded)",
    "  train-ai (images)  NOT USED      (not downloaded)",
    "  search             NOT USED      (not downloaded)",
    "  search (images)    NOT USED      (not downloaded)",
    "  ai-input           NOT USED      (not downloaded)",
    "  ai-input (images)  NOT USED      (not downloaded)",
]


def test_a_page_robots_txt_disallows_is_not_downloaded_as_in_a_crawl(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route("/private/x", page(robots_meta("robots", "noindex")))
    done = run("page", server.url("/private/x"))
    assert done.returncode == 1, done.stderr
    assert server.paths() == ["/robots.txt"]  # the page is not asked for, nor tdmrep.json
    robots = server.url("/robots.txt")
    assert done.stdout.splitlines() == [
        f"page        {server.url('/private/x')}",
        f"robots.txt  {robots} (HTTP 200): DISALLOWED by line 2: Disallow: /private/",
        "status      not downloaded, as in a crawl (--ignore-robots-txt downloads it anyway)",
        "in a crawl: not downloaded: robots.txt disallows it (line 2: Disallow: /private/)",
        *NOT_DOWNLOADED,
    ]
    assert done.stderr == ""
    status, document = page_json(server.url("/private/x"))
    assert status == 1
    assert server.paths() == ["/robots.txt"] * 2
    assert document["robots_txt"] == {
        "url": robots,
        "fetch": document["robots_txt"]["fetch"],
        "allowed": False,
        "line": 2,
        "rule": "Disallow: /private/",
        "reason": "longest match",
        "not_robots_txt": None,
    }
    assert document["downloaded"] is False and document["robots_txt_overridden"] is False
    assert document["status"] is None and document["statements"] == []
    assert document["crawl"]["gets_page"] is False
    assert document["follow"]["allowed"] is False
    assert document["usage"]["search"]["page"]["allowed"] is False


def test_a_redirect_to_a_page_robots_txt_disallows_is_not_followed(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route("/moved", Reply.redirect("/private/x"))
    server.route("/private/x", page(robots_meta("robots", "noindex")))
    done = run("page", server.url("/moved"))
    assert done.returncode == 1, done.stderr
    # robots.txt, the redirect; its target is never asked for (robots.txt once per site)
    assert server.paths() == ["/robots.txt", "/moved"]
    assert (
        f"in a crawl: not downloaded: redirected to {server.url('/private/x')}, which robots.txt "
        "disallows (line 2: Disallow: /private/): a crawl does not follow it"
    ) in done.stdout.splitlines()
    status, document = page_json(server.url("/moved"))
    assert status == 1 and document["status"] == 301
    assert document["crawl"]["gets_page"] is False
    assert document["usage"]["train-ai"]["page"]["allowed"] is False
    assert server.paths().count("/private/x") == 0

    overridden = run("page", "--ignore-robots-txt", server.url("/moved"))
    assert "/private/x" in server.paths()  # followed when told to
    assert f"redirected to {server.url('/private/x')}" in overridden.stderr


def test_an_unreachable_robots_txt_keeps_the_page_from_being_downloaded(server: Server) -> None:
    server.robots("busy", status=503)
    done = run("page", server.url("/x"))
    assert done.returncode == 1, done.stderr
    assert server.paths() == ["/robots.txt"]
    lines = done.stdout.splitlines()
    assert lines[2] == (
        "status      not downloaded, as in a crawl (--ignore-robots-txt downloads it anyway)"
    )
    assert lines[3].startswith("in a crawl: not downloaded: robots.txt unreachable (HTTP 503)")


def test_ignore_robots_txt_downloads_the_page_and_says_so(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route("/private/x", page(robots_meta("robots", "noindex")))
    done = run("page", server.url("/private/x"), "--ignore-robots-txt")
    assert done.returncode == 1, done.stderr
    # robots.txt, then the page; no tdmrep.json: a crawl's spider would not get the page.
    assert server.paths() == ["/robots.txt", "/private/x"]
    overridden = (
        "robots.txt disallows it (line 2: Disallow: /private/): downloaded all the same "
        "(--ignore-robots-txt), which a crawl never does"
    )
    lines = done.stdout.splitlines()
    assert lines[2] == f"overridden  {overridden}"
    assert lines[3].startswith("status      200, text/html, ")
    assert "  meta tag 1 (robots)  noindex" in lines  # what the page says of itself
    crawl = lines[lines.index("restrictions in force: noindex") + 1 :]
    assert crawl == [
        "in a crawl: not downloaded: robots.txt disallows it (line 2: Disallow: /private/)",
        *NOT_DOWNLOADED,
    ]
    assert done.stderr == f"scrapy-rerp: {server.url('/private/x')}: {overridden}\n"
    status, document = page_json(server.url("/private/x"), "--ignore-robots-txt")
    assert status == 1
    assert document["downloaded"] is True and document["robots_txt_overridden"] is True
    assert document["status"] == 200 and document["restrictions"] == ["noindex"]
    # robots.txt allows it: nothing is overridden.
    status, document = page_json(server.url("/open"), "--ignore-robots-txt")
    assert status == 0
    assert document["downloaded"] is True and document["robots_txt_overridden"] is False


def test_a_page_robots_txt_allows_says_so(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route("/open", page(robots_meta("robots", "nofollow")))
    done = run("page", server.url("/open"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    robots = server.url("/robots.txt")
    assert lines[1] == f"robots.txt  {robots} (HTTP 200): ALLOWED (no rule matched)"
    assert "in a crawl:" in lines
    assert "  links              NOT FOLLOWED  meta tag 1 (robots): nofollow" in lines
    # robots.txt first, as in a crawl; then the page, then its origin's tdmrep.json.
    assert server.paths() == ["/robots.txt", "/open", "/.well-known/tdmrep.json"]


TDMREP_FILE = (
    '[{"location": "/reserved/*", "tdm-reservation": 1, "tdm-policy": "https://example.com/p"}]'
)


@pytest.mark.parametrize(
    ("path", "headers", "meta", "status", "technique", "train_ai"),
    [
        ("/reserved/a", {}, "", 1, "tdmrep.json", "disallowed"),
        ("/open", {}, "", 0, None, "unknown"),
        ("/open", {"tdm-reservation": "1"}, "", 1, "header", "disallowed"),
        # The meta tag supersedes the header, and the header the file.
        (
            "/reserved/b",
            {"tdm-reservation": "1"},
            robots_meta("tdm-reservation", "0"),
            0,
            "meta",
            "allowed",
        ),
    ],
)
def test_the_tdmrep_decision_of_the_file_the_header_and_the_meta_tag(
    server: Server,
    path: str,
    headers: dict[str, str],
    meta: str,
    status: int,
    technique: str | None,
    train_ai: str,
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route(
        "/.well-known/tdmrep.json", Reply(body=TDMREP_FILE, content_type="application/json")
    )
    server.route(path, page(meta, "text", headers=headers))
    exit_status, document = page_json(server.url(path))
    assert exit_status == status
    tdmrep = document["tdmrep"]
    assert tdmrep["file"]["valid"] is True and tdmrep["file"]["entries"] == 1
    assert tdmrep["technique"] == technique
    assert tdmrep["usage"]["train-ai"]["preference"] == train_ai
    assert tdmrep["usage"]["ai-input"]["preference"] == train_ai
    if path == "/reserved/a":
        assert tdmrep["policy"] == "https://example.com/p"
        assert tdmrep["usage"]["train-ai"]["licensable"] is True


@pytest.mark.parametrize(
    "reply", [Reply(status=404), Reply(body="{nope", content_type="application/json")]
)
def test_no_tdmrep_file_or_a_broken_one_reserves_nothing(server: Server, reply: Reply) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/.well-known/tdmrep.json", reply)
    server.route("/open", page(body="text"))
    done = run("page", server.url("/open"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    found = (
        "404: no file"
        if reply.status == 404
        else "200, 0 entries, not read: no reservation from the file"
    )
    assert f"tdmrep.json {server.url('/.well-known/tdmrep.json')} ({found})" in lines
    assert "  TDMRep train-ai    UNKNOWN       train-ai unknown: no tdm-reservation stated" in lines


@pytest.mark.parametrize("status", [429, 503])
def test_a_slow_down_answer_and_its_retry_after(server: Server, status: int) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route(
        "/busy",
        Reply(
            status=status,
            body=html_with(""),
            content_type="text/html",
            headers={"Retry-After": "120"},
        ),
    )
    done = run("page", server.url("/busy"))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert "retry-after 120 (2.0 minutes)" in lines
    crawl = lines[lines.index("restrictions in force: none") + 1 :]
    assert crawl[0] == (
        f"in a crawl: not now: HTTP {status} asks for 2.0 minutes (Retry-After): nothing more "
        "is sent to this site until then, and the page is asked for again (RetryMiddleware)"
    )
    assert crawl[1] == "  links              NOT FOLLOWED  (not now)"
    assert crawl[2] == "  train-ai           NOT USED      (not now)"
    _, document = page_json(server.url("/busy"))
    assert document["retry_after"] == {"value": "120", "seconds": 120.0}
    assert document["robots_txt"]["allowed"] is True
    assert document["crawl"]["gets_page"] is False


def test_a_slow_down_answer_without_a_usable_retry_after(server: Server) -> None:
    server.route("/busy", Reply(status=429, body="slow down", headers={"Retry-After": "soon"}))
    done = run("page", server.url("/busy"))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "retry-after soon (nothing a crawl can hold to)" in lines
    assert (
        "in a crawl: not now: HTTP 429 without a usable Retry-After: the site's delay floor is "
        "raised, and the page is asked for again (RetryMiddleware)"
    ) in lines
