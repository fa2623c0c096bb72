"""``scrapy-rerp check ROBOTS URL...``: the verdict a crawl gets and the line that decided, from
files, standard input and robots.txt URLs; and ``--usage``: the site's AI usage preferences
(Content-Usage, Content-Signal). Each run as a subprocess against files and local servers."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from tests.support.cli import ROBOTS, STAR_GROUP, USAGE, run, run_json, write
from tests.support.servers import Reply, Server


def verdicts(stdout: str) -> dict[str, str]:
    """URL -> the whole output line for it."""
    lines = [line.split(None, 2) for line in stdout.splitlines() if line.strip()]
    return {parts[1]: " ".join(parts) for parts in lines}


def usage_lines(stdout: str) -> dict[str, list[str]]:
    """URL -> the usage lines printed under its verdict, each with its spaces collapsed."""
    found: dict[str, list[str]] = {}
    url = ""
    for line in stdout.splitlines():
        if line.startswith("  "):
            found[url].append(" ".join(line.split()))
        else:
            url = line.split()[1]
            found[url] = []
    return found


# --- check -----------------------------------------------------------------------------------


def test_check_disallowed_url_names_the_deciding_line(robots_file: Path) -> None:
    done = run("check", str(robots_file), "https://example.com/private/x")
    assert done.returncode == 1
    line = verdicts(done.stdout)["https://example.com/private/x"]
    assert line.startswith("DISALLOWED ")
    assert "line 2: Disallow: /private" in line


def test_check_allowed_urls_exit_zero(robots_file: Path) -> None:
    done = run("check", str(robots_file), "https://example.com/", "/private/public/page")
    assert done.returncode == 0, done.stderr
    lines = verdicts(done.stdout)
    assert lines["https://example.com/"].startswith("ALLOWED ")
    assert "line " not in lines["https://example.com/"]  # no rule matched, so no line to show
    assert lines["/private/public/page"].startswith("ALLOWED ")
    assert "line 3: Allow: /private/public" in lines["/private/public/page"]


def test_check_one_disallowed_url_among_several_exits_one(robots_file: Path) -> None:
    done = run("check", str(robots_file), "/a", "/private", "/b")
    assert done.returncode == 1
    assert [line.split()[0] for line in done.stdout.splitlines()] == [
        "ALLOWED",
        "DISALLOWED",
        "ALLOWED",
    ]


def test_check_agent_selects_its_group(robots_file: Path) -> None:
    done = run("check", str(robots_file), "/anything", "--agent", "ExampleBot")
    assert done.returncode == 1
    assert "line 6: Disallow: /" in verdicts(done.stdout)["/anything"]


def test_check_full_user_agent_header_as_agent(robots_file: Path) -> None:
    header = "Mozilla/5.0 (compatible; ExampleBot/2.1; +https://example.org/bot)"
    done = run("check", str(robots_file), "/anything", "-A", header)
    assert done.returncode == 1
    assert verdicts(done.stdout)["/anything"].startswith("DISALLOWED ")


def test_check_syntax_changes_precedence(robots_file: Path) -> None:
    # RFC 9309: the longest match wins; GYM2008 (rerp): the first matching rule in the file wins.
    url = "/private/public/page"
    rfc = run("check", str(robots_file), url, "--syntax", "rfc9309")
    gym = run("check", str(robots_file), url, "--syntax", "GYM2008")
    assert rfc.returncode == 0
    assert verdicts(rfc.stdout)[url].startswith("ALLOWED ")
    assert gym.returncode == 1
    assert "line 2: Disallow: /private" in verdicts(gym.stdout)[url]


def test_check_reads_standard_input() -> None:
    done = run("check", "-", "/private/x", stdin=ROBOTS.encode())
    assert done.returncode == 1
    assert "line 2: Disallow: /private" in verdicts(done.stdout)["/private/x"]


def test_check_robots_txt_itself_is_always_allowed(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDisallow: /\n")
    done = run("check", str(path), "/robots.txt", "/index.html")
    assert done.returncode == 1
    lines = verdicts(done.stdout)
    assert lines["/robots.txt"].startswith("ALLOWED ")
    assert lines["/index.html"].startswith("DISALLOWED ")


# --- the verdict a crawl gets ----------------------------------------------------------------


def test_check_non_ascii_url_gets_the_crawl_verdict(tmp_path: Path) -> None:
    from scrapy_rerp import RerpRobotParser

    body = b"User-agent: *\nDisallow: /wiki/K\xc3\xa4\n"
    robots = write(tmp_path, body)
    done = run("check", robots, "/wiki/Kä", "https://e.com/wiki/K%C3%A4x", "/wiki/Ka")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("DISALLOWED  /wiki/Kä  line 2")
    assert lines[1].startswith("DISALLOWED  https://e.com/wiki/K%C3%A4x  line 2")
    assert lines[2].startswith("ALLOWED ")
    assert RerpRobotParser(body).allowed("https://e.com/wiki/Kä", "a") is False


def test_check_verdicts_equal_the_middlewares_on_the_corpus() -> None:
    """The command line and the middleware (its _decide, on scrapy.Request URLs) agree, for
    corpus files whose rules hold non-ASCII or %-encoded paths, with URLs written both ways."""
    from urllib.parse import quote, unquote

    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.utils.test import get_crawler

    from scrapy_rerp import parse
    from scrapy_rerp.cli._check import CheckReport
    from scrapy_rerp.cli._parser import build_parser
    from scrapy_rerp.cli._source import Source
    from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware

    corpus = Path(
        os.environ.get("SCRAPY_RERP_CORPUS") or Path(__file__).parents[3] / "shared" / "corpus"
    )
    if not (corpus / "robots").is_dir():
        pytest.skip(f"corpus not found: {corpus}")
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSTXT_USER_AGENT": "*"})
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    compared = files = 0
    for path in sorted((corpus / "robots").iterdir()):
        body = path.read_bytes()
        robots = parse(body)
        patterns = {
            pattern
            for group in robots.groups
            for _, pattern, _ in group.rules
            if "%" in pattern and pattern.startswith("/")
        }
        if not patterns:
            continue
        urls = []
        for pattern in sorted(patterns)[:20]:
            plain = pattern.replace("*", "x").rstrip("$")
            urls += [f"https://site.example{plain}", f"https://site.example{unquote(plain)}x"]
            urls.append(f"https://site.example{quote(unquote(plain), safe='/')}")
        source = Source.given(path.name, body)
        args = build_parser().parse_args(["check", path.name, *urls])
        report = CheckReport.build(source, args.urls, args.syntax, args.agent, args.usage)
        document = report.to_dict()
        for url, result in zip(urls, document["results"], strict=True):
            try:
                request = Request(url)
            except ValueError:
                continue
            try:
                middleware.gate._decide(robots, request)
                expected = True
            except IgnoreRequest:
                expected = False
            assert result["allowed"] is expected, (path.name, url, result)
            compared += 1
        files += 1
        if files == 150:
            break
    assert compared > 1000


@pytest.mark.parametrize(
    ("url", "why"),
    [("http://[::1", "Invalid IPv6 URL"), ("http://h:99999/x", "Port out of range 0-65535")],
)
def test_a_url_no_request_can_be_made_of_is_an_error(tmp_path: Path, url: str, why: str) -> None:
    robots = write(tmp_path, STAR_GROUP)
    done = run("check", robots, url, "/private")
    assert done.returncode == 2
    assert done.stderr == f"scrapy-rerp: error: {url!r}: not a URL a crawler can request: {why}\n"
    assert done.stdout.splitlines()[0].startswith(f"INVALID     {url}  (")
    assert done.stdout.splitlines()[1].startswith("DISALLOWED  /private  line 2")
    done = run("explain", robots, url)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"scrapy-rerp: error: {url!r}: not a URL a crawler can request: {why}\n"


def test_bad_url_to_check_is_invalid_and_exits_two(tmp_path: Path) -> None:
    status, doc = run_json("check", write(tmp_path, STAR_GROUP), "http://[::1/x", "/private")
    assert status == 2
    assert doc["results"][0]["allowed"] is None
    assert doc["results"][1]["allowed"] is False


# --- check, from a URL -----------------------------------------------------------------------


def test_check_fetches_robots_url_with_the_agent(server: Server) -> None:
    server.robots(ROBOTS)
    done = run("check", server.url("/robots.txt"), "/private/x", "/ok", "--agent", "ExampleBot")
    assert done.returncode == 1, done.stderr
    lines = verdicts(done.stdout)
    assert "line 6: Disallow: /" in lines["/private/x"]
    assert lines["/ok"].startswith("DISALLOWED ")
    (hit,) = server.hits("/robots.txt")
    assert hit.header("User-Agent") == "ExampleBot"


def test_check_notes_urls_of_another_origin(server: Server) -> None:
    server.robots(ROBOTS)
    here = server.url("/private/x")
    elsewhere = "https://other.example/private/x"
    done = run("check", server.url("/robots.txt"), here, elsewhere, "/private/y")
    assert done.returncode == 1
    assert len(verdicts(done.stdout)) == 3  # the verdicts are still given
    notes = [line for line in done.stderr.splitlines() if "does not apply" in line]
    assert len(notes) == 1 and elsewhere in notes[0]


def test_check_follows_redirects_and_says_so(server: Server) -> None:
    server.route("/old-robots.txt", Reply.redirect(server.url("/robots.txt")))
    server.robots(ROBOTS)
    done = run("check", server.url("/old-robots.txt"), "/private/x")
    assert done.returncode == 1
    assert "redirected to " + server.url("/robots.txt") in done.stderr


@pytest.mark.parametrize(
    ("syntax", "status", "exit_code", "verdict"),
    [
        ("rfc9309", 404, 0, "ALLOWED"),  # unavailable: everything allowed
        ("rfc9309", 403, 0, "ALLOWED"),  # RFC 9309 treats every 4xx the same
        ("rfc9309", 503, 1, "DISALLOWED"),  # unreachable: everything disallowed
        ("gym2008", 404, 0, "ALLOWED"),  # rerp's fetch(): 404 allows everything
        ("gym2008", 403, 1, "DISALLOWED"),  # ... and 401/403 disallow everything
        ("mk1996", 401, 1, "DISALLOWED"),
    ],
)
def test_check_http_error_status(
    server: Server, syntax: str, status: int, exit_code: int, verdict: str
) -> None:
    server.robots("User-agent: *\nDisallow: /\n", status=status)
    done = run("check", server.url("/robots.txt"), "/page", "--syntax", syntax)
    assert done.returncode == exit_code, done.stderr
    assert verdicts(done.stdout)["/page"].startswith(verdict + " ")
    assert f"HTTP {status}" in done.stderr


def test_check_redirect_loop_counts_as_unavailable_in_rfc9309(server: Server) -> None:
    server.route("/robots.txt", Reply.redirect(server.url("/robots.txt")))
    done = run("check", server.url("/robots.txt"), "/page")
    assert done.returncode == 0, done.stderr
    assert verdicts(done.stdout)["/page"].startswith("ALLOWED ")
    assert "unavailable" in done.stderr


def test_check_5xx_in_gym2008_is_unreachable_as_in_a_crawl(server: Server) -> None:
    # The middleware's status table holds in every syntax: 5xx means unreachable.
    server.robots("", status=503)
    done = run("check", server.url("/robots.txt"), "/page", "--syntax", "gym2008")
    assert done.returncode == 1
    assert verdicts(done.stdout)["/page"].startswith("DISALLOWED ")
    assert "unreachable (HTTP 503)" in done.stdout


def test_check_unreachable_server_disallows_everything_for_now() -> None:
    with Server() as gone:
        url = gone.url("/robots.txt")
    done = run("check", url, "/page", "--timeout", "5")
    assert done.returncode == 1, done.stderr
    assert verdicts(done.stdout)["/page"].startswith("DISALLOWED ")
    assert "unreachable (connection refused)" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_declared_charset_is_used_by_gym2008(server: Server) -> None:
    # "/café" in ISO-8859-1 would be read as "/cafÃ©" if the UTF-8 charset were ignored.
    server.robots(
        "User-agent: *\nDisallow: /café\n".encode(),
        content_type="text/plain; charset=utf-8",
    )
    done = run("check", server.url("/robots.txt"), "/café", "--syntax", "gym2008")
    assert done.returncode == 1, done.stdout
    assert verdicts(done.stdout)["/café"].startswith("DISALLOWED ")


# --- check --usage ---------------------------------------------------------------------------


def test_check_usage_names_the_line_that_states_each_preference(tmp_path: Path) -> None:
    done = run("check", write(tmp_path, USAGE), "/ai-ok/x", "--usage", "train-ai,search")
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[0] == "ALLOWED     /ai-ok/x  (no rule matched)"
    # The rule with the longer path wins over the group-wide one.
    assert usage_lines(done.stdout)["/ai-ok/x"] == [
        "train-ai ALLOWED line 4: Content-Usage: /ai-ok/ train-ai=y",
        "search ALLOWED line 5: Content-Signal: search=yes, ai-input=no",
    ]


def test_check_usage_disallowed_for_a_category_asked_about_exits_one(tmp_path: Path) -> None:
    robots = write(tmp_path, USAGE)
    done = run("check", robots, "/blog/post", "--usage", "train-ai")
    assert done.returncode == 1  # crawlable, but "not for this purpose"
    assert done.stdout.startswith("ALLOWED     /blog/post")
    assert usage_lines(done.stdout)["/blog/post"] == [
        "train-ai DISALLOWED line 3: Content-Usage: train-ai=n"
    ]
    # The same URL, asked about a category the site allows: 0.
    assert run("check", robots, "/blog/post", "--usage", "search").returncode == 0
    # Without --usage, the exit status is the crawl verdict's alone, and no usage is printed.
    plain = run("check", robots, "/blog/post")
    assert plain.returncode == 0 and plain.stdout.count("\n") == 1


def test_check_usage_unknown_does_not_change_the_exit_status(tmp_path: Path) -> None:
    robots = write(tmp_path, "User-agent: *\nDisallow: /private/\n")
    done = run("check", robots, "/page", "--usage", "train-ai")
    assert done.returncode == 0, done.stdout
    assert usage_lines(done.stdout)["/page"] == [
        "train-ai UNKNOWN (no usage preference for this user agent)"
    ]


def test_check_usage_of_a_url_that_may_not_be_crawled_is_unknown(tmp_path: Path) -> None:
    robots = write(tmp_path, USAGE)
    done = run("check", robots, "/private/x", "--usage", "search")
    assert done.returncode == 1
    assert done.stdout.startswith("DISALLOWED  /private/x  line 2: Disallow: /private/")
    assert usage_lines(done.stdout)["/private/x"] == [
        "search UNKNOWN (may not be crawled: no usage preference applies)"
    ]
    status, doc = run_json("check", robots, "/private/x", "--usage", "search")
    assert status == 1
    assert doc["results"][0]["usage"] == {
        "search": {
            "preference": "unknown",
            "line": 2,
            "statement": "Disallow: /private/",
            "reason": "may not be crawled: no usage preference applies",
        }
    }


def test_check_usage_json_keys_categories_and_alias(tmp_path: Path) -> None:
    robots = write(tmp_path, USAGE)
    # ai-train is Content-Signal's name for train-ai: the same category, reported once.
    status, doc = run_json(
        "check", robots, "/ai-ok/a", "/b", "--usage", "AI-Train", "--usage", "ai-input,train-ai"
    )
    assert status == 1  # /b: train-ai disallowed (and ai-input, for both URLs)
    assert doc["usage_categories"] == ["train-ai", "ai-input"]
    first, second = doc["results"]
    assert first["allowed"] is True
    assert first["usage"] == {
        "train-ai": {
            "preference": "allowed",
            "line": 4,
            "statement": "Content-Usage: /ai-ok/ train-ai=y",
            "reason": "train-ai allowed",
        },
        "ai-input": {
            "preference": "disallowed",
            "line": 5,
            "statement": "Content-Signal: search=yes, ai-input=no",
            "reason": "ai-input disallowed",
        },
    }
    assert second["usage"]["train-ai"]["preference"] == "disallowed"
    assert second["usage"]["train-ai"]["line"] == 3


def test_check_usage_follows_the_agents_group(tmp_path: Path) -> None:
    robots = write(tmp_path, USAGE)
    done = run("check", robots, "/x", "-A", "ExampleBot/2.0", "--usage", "train-ai,search")
    assert done.returncode == 1  # search=no in ExampleBot's group
    assert usage_lines(done.stdout)["/x"] == [
        "train-ai ALLOWED line 9: Content-Signal: ai-train=yes, search=no",
        "search DISALLOWED line 9: Content-Signal: ai-train=yes, search=no",
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("bogus", "unknown usage category 'bogus'"),
        ("train-ai,ai-training", "unknown usage category 'ai-training'"),
        (",", "expected a usage category"),
    ],
)
def test_check_unknown_usage_category_is_a_usage_error(
    tmp_path: Path, value: str, message: str
) -> None:
    done = run("check", write(tmp_path, USAGE), "/x", "--usage", value, "--format", "json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "usage:" in done.stderr and message in done.stderr
    if "bogus" in value:  # the message names what would do
        assert "'train-ai', 'search', 'ai-input'" in done.stderr


def test_check_usage_of_an_invalid_url_is_null(tmp_path: Path) -> None:
    status, doc = run_json("check", write(tmp_path, USAGE), "http://[::1/x", "--usage", "search")
    assert status == 2
    usage = doc["results"][0]["usage"]["search"]
    assert usage["preference"] is None and usage["line"] is None and usage["reason"]


def test_check_usage_from_a_robots_url(server: Server) -> None:
    server.robots(USAGE)
    done = run("check", server.url("/robots.txt"), server.url("/blog"), "--usage", "train-ai")
    assert done.returncode == 1, done.stderr
    assert usage_lines(done.stdout)[server.url("/blog")] == [
        "train-ai DISALLOWED line 3: Content-Usage: train-ai=n",
        # The server answers every path with a page: no tdmrep.json, no reservation.
        "TDMRep train-ai UNKNOWN (train-ai unknown: no tdm-reservation stated)",
    ]


def test_check_usage_without_rules_is_unknown(server: Server) -> None:
    server.robots("", status=404)
    status, doc = run_json("check", server.url("/robots.txt"), "/page", "--usage", "train-ai")
    assert status == 0
    usage = doc["results"][0]["usage"]["train-ai"]
    assert usage["preference"] == "unknown" and usage["line"] is None
    assert "no rules were parsed" in usage["reason"] and "HTTP 404" in usage["reason"]


# --- only a robots.txt gets a verdict --------------------------------------------------------

#: A site's robots.txt; its other pages are HTML (the test server's default page).
SITE_ROBOTS = "User-agent: *\nDisallow: /private/\n"


@pytest.mark.parametrize("slash", ["", "/"])
def test_check_of_a_site_reads_its_robots_txt(server: Server, slash: str) -> None:
    server.robots(SITE_ROBOTS)
    site = server.origin + slash
    done = run("check", site, "/private/x", "/public")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "DISALLOWED  /private/x  line 2: Disallow: /private/",
        "ALLOWED     /public  (no rule matched)",
    ]
    robots = server.url("/robots.txt")
    assert done.stderr == f"scrapy-rerp: {site} is a site: reading its robots.txt, {robots}\n"
    assert server.paths() == ["/robots.txt"]  # never the home page
    status, doc = run_json("check", site, "/private/x")
    assert status == 1 and doc["robots"]["source"] == robots


def test_check_of_a_page_is_not_a_robots_txt_and_gives_no_verdict(server: Server) -> None:
    server.robots(SITE_ROBOTS)
    page = server.url("/products/1")
    done = run("check", page, "/private/x")
    assert (done.returncode, done.stdout) == (2, "")
    why = (
        f"{page}: an HTML (or XML) page, not a robots.txt: a crawler finds no rules in it (a "
        f"page served for a missing robots.txt?); the site's robots.txt is "
        f"{server.url('/robots.txt')}"
    )
    assert done.stderr == f"scrapy-rerp: error: {why}; no verdict on it without --read-anyway\n"
    status, doc = run_json("check", page, "/private/x")
    assert status == 2 and doc == {
        "command": "check",
        "error": f"{why}; no verdict on it without --read-anyway",
    }


def test_check_read_anyway_says_what_the_verdict_rests_on(server: Server) -> None:
    page = server.url("/products/1")
    done = run("check", page, "/private/x", "--read-anyway")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "ALLOWED     /private/x  (no group applies to this user agent; read from an HTML (or "
        "XML) page, not a robots.txt)\n"
    )
    assert done.stderr.startswith(f"scrapy-rerp: {page}: an HTML (or XML) page, not a robots.txt")
    assert done.stderr.endswith("; read anyway (--read-anyway)\n")
    status, doc = run_json("check", page, "/private/x", "--read-anyway")
    assert status == 0 and doc["results"][0]["allowed"] is True
    assert doc["robots"]["not_robots_txt"]["code"] == "html"


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (
            b'<?xml version="1.0"?>\n<urlset><url><loc>/a</loc></url></urlset>\n',
            "an HTML (or XML) page",
        ),
        (gzip.compress(b"User-agent: *\nDisallow: /private/\n"), "binary data"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary data"),
    ],
    ids=["xml", "gzip", "png"],
)
def test_check_of_a_file_that_is_no_robots_txt(tmp_path: Path, content: bytes, what: str) -> None:
    robots = write(tmp_path, content)
    done = run("check", robots, "/private/x")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"scrapy-rerp: error: {robots}: {what}, not a robots.txt: ")
    assert run("check", robots, "/private/x", "--read-anyway").returncode == 0


def test_a_robots_txt_in_utf16_that_a_crawler_reads_still_gets_a_verdict(server: Server) -> None:
    server.robots(SITE_ROBOTS.encode("utf-16"), content_type="text/plain; charset=utf-16")
    done = run("check", server.url("/robots.txt"), "/private/x")
    assert done.returncode == 1, done.stderr
    assert done.stdout == "DISALLOWED  /private/x  line 2: Disallow: /private/\n"


def test_check_with_swapped_arguments_is_an_error_with_a_hint(server: Server) -> None:
    server.robots(SITE_ROBOTS)
    done = run("check", server.url("/products/1"), "robots.txt")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "scrapy-rerp: error: 'robots.txt' is neither an absolute path (/...) nor an absolute "
        "URL (https://...): it looks like a robots.txt: the robots.txt comes first "
        "(scrapy-rerp check ROBOTS URL...)\n"
    )
    assert server.hits() == []  # nothing is downloaded on a guess


@pytest.mark.parametrize("url", ["private/x", "example.com/private/x", "robots.txt"])
def test_check_url_neither_a_path_nor_a_url_is_an_error(tmp_path: Path, url: str) -> None:
    robots = write(tmp_path, SITE_ROBOTS)
    done = run("check", robots, "/private/y", url)
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        f"scrapy-rerp: error: {url!r} is neither an absolute path (/...) nor an absolute URL "
        "(https://...): "
    )
    if url == "robots.txt":
        assert line.endswith(
            "it looks like a robots.txt: the robots.txt comes first "
            "(scrapy-rerp check ROBOTS URL...)"
        )
    else:
        assert line.endswith(f"write /{url} for a path, or the URL with its scheme")


TDMREP_FILE = (
    '[{"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "https://e.com/p.json"},'
    ' {"location": "/*", "tdm-reservation": 0}]'
)


def test_check_usage_reads_the_origins_tdmrep_file_for_the_purposes_it_speaks_to(
    server: Server,
) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/.well-known/tdmrep.json", Reply(body=TDMREP_FILE))
    robots = server.url("/robots.txt")
    status, doc = run_json("check", robots, "/books/a", "/news/b", "--usage", "train-ai,search")
    assert status == 1  # a reservation disallows train-ai
    assert doc["tdmrep_file"].endswith("tdmrep.json: HTTP 200, 2 entries")
    books, news = doc["results"]
    assert set(books["tdmrep"]) == {"train-ai"}  # search: TDMRep does not speak to it
    assert books["tdmrep"]["train-ai"]["preference"] == "disallowed"
    assert books["tdmrep"]["train-ai"]["licensable"] is True
    assert books["tdmrep"]["train-ai"]["entry"] == 1
    assert news["tdmrep"]["train-ai"]["preference"] == "allowed"
    done = run("check", robots, "/books/a", "--usage", "train-ai")
    assert done.returncode == 1
    assert usage_lines(done.stdout)["/books/a"][-1].startswith(
        "TDMRep train-ai DISALLOWED (train-ai disallowed: TDM rights reserved by tdmrep.json"
    )
    # search alone: the file is not asked for.
    before = server.paths().count("/.well-known/tdmrep.json")
    status, doc = run_json("check", robots, "/books/a", "--usage", "search")
    assert status == 0 and "tdmrep_file" not in doc and "tdmrep" not in doc["results"][0]
    assert server.paths().count("/.well-known/tdmrep.json") == before


def test_check_usage_asks_for_no_tdmrep_file_when_robots_txt_allows_no_url(
    server: Server,
) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    server.route("/.well-known/tdmrep.json", Reply(body=TDMREP_FILE))
    robots = server.url("/robots.txt")
    done = run("check", robots, "/private/a", "/private/b", "--usage", "train-ai")
    assert done.returncode == 1, done.stderr
    assert server.paths() == ["/robots.txt"]  # as a crawl: a page it may not crawl needs no file
    assert done.stdout.splitlines()[-1] == (
        f"tdmrep.json {server.url('/.well-known/tdmrep.json')}: not downloaded: robots.txt "
        "allows none of the URLs, and a crawl reads it for a page robots.txt allows"
    )
    # One URL robots.txt allows: the file is read.
    status, doc = run_json("check", robots, "/private/a", "/books/c", "--usage", "train-ai")
    assert status == 1 and doc["tdmrep_file"].endswith("tdmrep.json: HTTP 200, 2 entries")
    assert server.paths()[-2:] == ["/robots.txt", "/.well-known/tdmrep.json"]


def test_check_usage_lines_and_tdmrep_lines_share_their_columns(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n\n")
    server.route("/.well-known/tdmrep.json", Reply(body=TDMREP_FILE))
    robots = server.url("/robots.txt")
    done = run("check", robots, "/books/a", "--usage", "search,train-ai")
    assert done.returncode == 1, done.stderr
    # Labels of 6, 8 and 15 characters: each verdict in one column, each reason in another.
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "ALLOWED     /books/a  (no rule matched)",
        "  search           UNKNOWN     (no statement that applies names search)",
        "  train-ai         DISALLOWED  line 3: Content-Usage: train-ai=n",
    ]
    assert lines[3].startswith("  TDMRep train-ai  DISALLOWED  (train-ai disallowed: TDM rights")
