"""``scrapy-rerp`` explain, lint, fetch and demo, JSON output, and inputs that must never give a
traceback; each run as a subprocess against files and local servers."""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run, run_json, write
from tests.support.servers import Reply, Server

ROBOTS = "User-agent: *\nDisallow: /private\nAllow: /private/public\n"


# --- the verdict a crawl gets -----------------------------------------------------------------


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
    from scrapy_rerp.middleware import RobotsTxtMiddleware

    corpus = Path(
        os.environ.get("SCRAPY_RERP_CORPUS") or Path(__file__).parents[2] / "shared" / "corpus"
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
                middleware._decide(robots, request)
                expected = True
            except IgnoreRequest:
                expected = False
            assert result["allowed"] is expected, (path.name, url, result)
            compared += 1
        files += 1
        if files == 150:
            break
    assert compared > 1000


# --- explain ----------------------------------------------------------------------------------


EXPLAINED = """\
User-agent: *
Disallow: /private
Allow: /private/public

User-agent: ExampleBot
Disallow: /
Allow: /docs
"""


def test_explain_names_group_rules_and_verdict_per_syntax(tmp_path: Path) -> None:
    robots = write(tmp_path, EXPLAINED)
    status, doc = run_json("explain", robots, "/private/public/x")
    assert status == 0
    rfc, gym, mk = (doc["syntaxes"][name] for name in ("rfc9309", "gym2008", "mk1996"))
    assert rfc["allowed"] is True and rfc["line"] == 3 and rfc["reason"] == "longest match"
    assert rfc["groups"] == [{"line": 1, "agents": ["*"], "rules": 2}]
    assert "the * group" in rfc["group_reason"]
    assert rfc["matching_rules"] == [
        {"line": 2, "rule": "Disallow: /private", "allow": False, "decides": False},
        {"line": 3, "rule": "Allow: /private/public", "allow": True, "decides": True},
    ]
    for legacy in (gym, mk):
        assert legacy["allowed"] is False and legacy["line"] == 2
        assert legacy["reason"] == "first match"
    assert doc["allowed"] is True and doc["syntax"] == "rfc9309"


def test_explain_says_which_token_named_the_group(tmp_path: Path) -> None:
    robots = write(tmp_path, EXPLAINED)
    agent = "Mozilla/5.0 (compatible; ExampleBot/2.1; +https://example.org/bot)"
    done = run("explain", robots, "https://e.com/docs/a", "-A", agent)
    assert done.returncode == 0, done.stdout
    assert "RFC9309 (selected): ALLOWED by line 7: Allow: /docs" in done.stdout
    assert "group: User-agent: ExampleBot names this crawler" in done.stdout
    assert "line 6: Disallow: /\n" in done.stdout
    assert "line 7: Allow: /docs  <- decides" in done.stdout
    assert "GYM2008: DISALLOWED by line 6: Disallow: /" in done.stdout


def test_explain_exit_status_follows_the_selected_syntax(tmp_path: Path) -> None:
    robots = write(tmp_path, EXPLAINED)
    assert run("explain", robots, "/private/public/x").returncode == 0
    assert run("explain", robots, "/private/public/x", "--syntax", "gym2008").returncode == 1
    assert run("explain", robots, "/private/public/x", "--syntax", "2").returncode == 1


# --- lint -------------------------------------------------------------------------------------


def lint_problems(tmp_path: Path, content: str | bytes) -> tuple[int, list[dict[str, Any]]]:
    status, doc = run_json("lint", write(tmp_path, content))
    return status, doc["problems"]


def test_lint_misspelled_and_colonless_rules_say_which_readers_apply_them(
    tmp_path: Path,
) -> None:
    status, problems = lint_problems(
        tmp_path,
        "User-agent: *\nDissallow: /a\nDisalow: /b\nDisallow /c\nDisallowed: /d\nDsallow: /e\n",
    )
    assert status == 1
    by_line = {(p["line"], p["code"]): p["message"] for p in problems}
    for line, word in ((2, "Dissallow"), (3, "Disalow")):
        message = by_line[(line, "misspelled-directive")]
        assert f"'{word}' looks like a misspelling of 'Disallow'" in message
        assert "applied by RFC9309 readers, ignored by GYM2008 and MK1996 readers" in message
    assert by_line[(4, "no-colon")] == (
        "no colon after 'Disallow': applied by RFC9309 readers, ignored by GYM2008 and "
        "MK1996 readers"
    )
    # google/robotstxt reads any key that starts with "disallow" as Disallow.
    assert "applied by RFC9309 readers" in by_line[(5, "misspelled-directive")]
    assert "ignored by RFC9309, GYM2008 and MK1996 readers" in by_line[(6, "misspelled-directive")]


def test_lint_empty_agent_invalid_values_relative_sitemap_rule_outside_group(
    tmp_path: Path,
) -> None:
    status, problems = lint_problems(
        tmp_path,
        "Disallow: /early\nUser-agent:\nUser-agent: *\nDisallow: /x\nCrawl-delay: -3\n"
        "Request-rate: often\nSitemap: /sitemap.xml\n",
    )
    assert status == 1
    found = {(p["line"], p["code"], p["severity"]) for p in problems}
    assert {
        (1, "rule-outside-group", "error"),
        (2, "empty-user-agent", "warning"),
        (5, "invalid-value", "warning"),
        (6, "invalid-value", "warning"),
        (7, "relative-sitemap", "warning"),
    } <= found


def test_lint_rules_whose_outcome_differs_between_syntaxes(tmp_path: Path) -> None:
    status, problems = lint_problems(
        tmp_path,
        "User-agent: a\nDisallow: *\n\nUser-agent: b\nDisallow: /\nAllow: /public\n",
    )
    assert status == 1
    differences = [p for p in problems if p["code"] == "syntax-difference"]
    star = next(p for p in differences if p["line"] == 2)
    assert star["example"]["agent"] == "a"
    assert star["example"]["allowed"]["gym2008"] is False
    assert star["example"]["allowed"]["mk1996"] is True
    public = next(p for p in differences if p["line"] == 6)
    assert public["example"] == {
        "url": "/public",
        "agent": "b",
        "allowed": {"rfc9309": True, "gym2008": False, "mk1996": False},
    }


def test_lint_utf16_html_and_oversized_files(tmp_path: Path) -> None:
    utf16 = "User-agent: *\nDisallow: /\n".encode("utf-16-le")
    status, problems = lint_problems(tmp_path, utf16)
    assert status == 1 and problems[0]["code"] == "utf-16" and problems[0]["line"] is None
    assert "without a byte order mark" in problems[0]["message"]
    html = "<!DOCTYPE html>\n<html><head><title>Not found</title></head></html>\n"
    status, problems = lint_problems(tmp_path, html)
    assert status == 1 and [p["code"] for p in problems] == ["html"] + ["unknown-directive"] * (
        len(problems) - 1
    )
    big = "User-agent: *\n" + "Disallow: /some/long/path/segment\n" * 20000
    status, problems = lint_problems(tmp_path, big)
    assert status == 1 and problems[0]["code"] == "too-large"
    assert problems[0]["severity"] == "error"


def test_lint_says_how_much_of_a_large_file_it_compared(tmp_path: Path) -> None:
    rules = "".join(f"Disallow: /*a*b*c*{i}*$\nAllow: /{i}*x$\n" for i in range(8000))
    robots = write(tmp_path, "User-agent: *\n" + rules)
    status, doc = run_json("lint", robots)
    assert status == 1
    compared = doc["compared"]
    assert compared["budget"] == 2_000_000 + 40 * len(rules.encode()) + 40 * 14
    assert 0 < compared["comparisons"] <= compared["budget"] < compared["skipped_comparisons"]
    assert compared["urls"] == 4000 and compared["agents"] == 1
    lines = run("lint", robots).stdout.splitlines()
    assert lines[2] == (
        f"  ({compared['skipped_comparisons']:,} comparisons skipped: syntax differences and "
        f"usage grants were looked for within {compared['budget']:,} comparisons, this file's "
        "budget)"
    )


# --- fetch ------------------------------------------------------------------------------------


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
        assert "Retry-After 120s" in doc["fetch"]["reason"]
        assert doc["fetch"]["retry_after"] == {"value": "120", "seconds": 120.0}
        text = run("fetch", server.url("/robots.txt")).stdout
        assert "retry-after 120 (120 s)" in text
    else:
        assert doc["fetch"]["retry_after"] is None


def test_fetch_shows_a_retry_after_it_cannot_hold_to(server: Server) -> None:
    server.route("/robots.txt", Reply(status=429, headers={"Retry-After": "later"}))
    _, doc = run_json("fetch", server.url("/robots.txt"))
    assert doc["fetch"]["retry_after"] == {"value": "later", "seconds": None}
    text = run("fetch", server.url("/robots.txt")).stdout
    assert "retry-after later (nothing a crawl can hold to)" in text


def test_fetch_follows_redirects_and_caps_the_size(server: Server) -> None:
    server.route("/old", Reply.redirect(server.url("/robots.txt")))
    server.robots("User-agent: *\nDisallow: /x\n" + "#" * 600_000)
    status, doc = run_json("fetch", server.url("/old"))
    assert status == 0
    assert doc["fetch"]["redirects"] == [server.url("/robots.txt")]
    assert doc["fetch"]["truncated"] is True and doc["fetch"]["bytes"] == 500 * 1024


@pytest.mark.parametrize("location", ["http://[::1", "file:///etc/passwd", "http://h:99999/r"])
@pytest.mark.parametrize("command", ["fetch", "check", "lint"])
def test_a_redirect_that_cannot_be_followed_makes_robots_txt_unavailable(
    server: Server, location: str, command: str
) -> None:
    server.route("/robots.txt", Reply.redirect(location))
    args = [command, server.url("/robots.txt")] + (["/x"] if command == "check" else [])
    done = run(*args, "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    if command == "lint":  # nothing to lint: an error naming why
        assert done.returncode == 2
        assert "robots.txt unavailable (bad redirect target" in json.loads(done.stdout)["error"]
        return
    assert done.returncode == 0
    fetch = json.loads(done.stdout)["robots" if command == "check" else "fetch"]
    fetch = fetch["fetch"] if command == "check" else fetch
    assert fetch["outcome"] == "allow-all" and fetch["redirects"] == []
    assert fetch["reason"].startswith(f"bad redirect target {location!r}: ")
    assert server.paths() == ["/robots.txt"]


# A robots.txt that would take minutes at a byte a second; each read waits one second only.
SLOW = (ROBOTS + "#" * 200 + "\n").encode()
TRICKLES = {
    "body": lambda server: server.robots(SLOW, chunk_size=1, chunk_delay=1.0),
    "head": lambda server: server.robots(SLOW, head_byte_delay=1.0),
    "redirects": lambda server: (  # three hops of 0.9 s each, every one within the timeout
        server.route("/robots.txt", Reply(301, headers={"Location": "/r1"}, delay=0.9)),
        server.route("/r1", Reply(301, headers={"Location": "/r2"}, delay=0.9)),
        server.route("/r2", Reply(body=ROBOTS, delay=0.9)),
    ),
}
TIMEOUT = 1.5


@pytest.mark.parametrize(
    ("command", "trickle"),
    [
        (("fetch",), "body"),
        (("fetch",), "head"),
        (("fetch",), "redirects"),
        (("check", "/public"), "body"),
        (("explain", "/public"), "head"),
        (("lint",), "body"),
    ],
)
def test_timeout_is_a_deadline_for_the_whole_download(
    server: Server, command: tuple[str, ...], trickle: str
) -> None:
    TRICKLES[trickle](server)
    started = time.monotonic()
    done = run(command[0], server.url("/robots.txt"), *command[1:], "--timeout", str(TIMEOUT))
    took = time.monotonic() - started
    assert "Traceback" not in done.stderr, done.stderr
    assert took < TIMEOUT + 5, took  # a per-read timeout would take minutes (or 2.7 s, 3 hops)
    reason = f"timed out: not downloaded within {TIMEOUT:g} s"
    if command[0] == "lint":
        assert done.returncode == 2
        assert f"robots.txt unreachable ({reason})" in done.stderr
    else:
        assert done.returncode == 1  # unreachable: nothing may be downloaded for now
        assert f"robots.txt unreachable ({reason})" in done.stdout + done.stderr
    if trickle == "body":
        [hit] = server.hits("/robots.txt")
        assert not hit.completed and hit.bytes_sent < len(SLOW) // 2


def test_timeout_must_be_a_positive_number_of_seconds(server: Server) -> None:
    for value in ("0", "-1", "nan", "inf", "soon"):
        done = run("fetch", server.url("/robots.txt"), "--timeout", value)
        assert done.returncode == 2 and "--timeout" in done.stderr, value
        assert "Traceback" not in done.stderr
    assert server.hits() == []


def test_fetch_unreachable_host_is_an_outcome_not_a_traceback() -> None:
    with Server() as gone:
        url = gone.url("/robots.txt")
    done = run("fetch", url, "--timeout", "5")
    assert done.returncode == 1
    assert "outcome     unreachable" in done.stdout
    assert "Traceback" not in done.stderr


# --- a bad Sitemap line skips itself only ------------------------------------------------------

BAD_SITEMAPS = (
    "User-agent: *\nDisallow: /private\n"
    "Sitemap: https://example.com/one.xml\n"
    "Sitemap: http://[::1/sitemap.xml\n"
    "Sitemap:\n"
    "Sitemap: /two.xml\n"
)


def test_lint_skips_a_bad_sitemap_and_lists_the_others(tmp_path: Path) -> None:
    status, doc = run_json("lint", write(tmp_path, BAD_SITEMAPS))
    assert status == 1
    assert doc["sitemaps"] == ["https://example.com/one.xml", "/two.xml"]
    assert doc["invalid_sitemaps"] == [
        {"sitemap": "http://[::1/sitemap.xml", "reason": "malformed URL (Invalid IPv6 URL)"},
        {"sitemap": "", "reason": "empty"},
    ]
    problems = {p["line"]: p["code"] for p in doc["problems"]}
    assert problems == {4: "invalid-sitemap", 5: "invalid-sitemap", 6: "relative-sitemap"}
    text = run("lint", write(tmp_path, BAD_SITEMAPS)).stdout
    assert (
        "sitemaps: 2\n  https://example.com/one.xml\n  /two.xml\n"
        "  skipped 'http://[::1/sitemap.xml': malformed URL (Invalid IPv6 URL)\n"
        "  skipped '': empty\n"
    ) in text


def test_fetch_resolves_sitemaps_and_skips_a_bad_one(server: Server) -> None:
    server.robots(BAD_SITEMAPS)
    status, doc = run_json("fetch", server.url("/robots.txt"))
    assert status == 0
    assert doc["sitemaps"] == ["https://example.com/one.xml", server.url("/two.xml")]
    assert [s["sitemap"] for s in doc["invalid_sitemaps"]] == ["http://[::1/sitemap.xml", ""]
    assert f"  {server.url('/two.xml')}\n" in run("fetch", server.url("/robots.txt")).stdout


# --- inputs are read up to the size cap, never whole -------------------------------------------

CAP = 500 * 1024
RULES = b"User-agent: *\nDisallow: /private\n"
CAPPED = "over 512,000 bytes: only the first 512,000 are read, as a crawler reads them"


def run_limited(*args: str, stdin: Any = None) -> subprocess.CompletedProcess[str]:
    """The command line with its address space limited to 1 GiB: a 2 GiB input read whole, or
    /dev/zero read to its end, fails with a MemoryError."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))"
    main = "import runpy; runpy.run_module('scrapy_rerp', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", f"{limit}; {main}", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


class Endless:
    """A thread that writes the rules, then comments, into a file descriptor until the reader
    goes away."""

    def __init__(self, opener: Any) -> None:
        self.opener = opener
        self.written = 0
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        try:
            with self.opener() as stream:
                stream.write(RULES)
                self.written += len(RULES)
                while True:
                    stream.write(b"# more\n" * 1024)
                    self.written += 7 * 1024
        except BrokenPipeError:
            pass  # the reader closed its end


def assert_read_up_to_the_cap(done: subprocess.CompletedProcess[str], name: str) -> None:
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr  # /private/x is disallowed: the rules were read
    assert done.stdout.startswith("DISALLOWED  /private/x  line 2: Disallow: /private")
    assert f"scrapy-rerp: {name}: {CAPPED}" in done.stderr


def test_dev_zero_is_read_up_to_the_cap() -> None:
    done = run_limited("lint", "/dev/zero", "--format", "json")
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["robots"] == {
        "source": "/dev/zero",
        "bytes": CAP,
        "truncated": True,
        "fetch": None,
    }
    assert document["problems"][0]["code"] == "too-large"
    done = run_limited("check", "/dev/zero", "/a")
    assert (done.returncode, done.stdout.split()[0]) == (0, "ALLOWED")
    assert (
        done.stderr
        == f"scrapy-rerp: /dev/zero: {CAPPED} (RFC 9309 section 2.5); the rest is ignored\n"
    )


def test_a_sparse_2_gib_file_is_read_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.write_bytes(RULES)
    os.truncate(path, 2 * 1024**3)  # sparse: no disk used, 2 GiB to read
    assert_read_up_to_the_cap(run_limited("check", str(path), "/private/x"), str(path))


def test_a_fifo_that_never_ends_is_read_up_to_the_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "robots.fifo"
    os.mkfifo(fifo)
    writer = Endless(lambda: open(fifo, "wb", buffering=0))  # noqa: SIM115 - closed by Endless
    try:
        done = run_limited("check", str(fifo), "/private/x")
    finally:
        # Unblock a writer still waiting for a reader (if the command never opened the FIFO).
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert_read_up_to_the_cap(done, str(fifo))
    writer.thread.join(10)
    assert not writer.thread.is_alive() and writer.written > CAP


def test_standard_input_that_never_ends_is_read_up_to_the_cap() -> None:
    read, write = os.pipe()
    writer = Endless(lambda: os.fdopen(write, "wb", buffering=0))
    with os.fdopen(read, "rb") as stdin:
        done = run_limited("check", "-", "/private/x", stdin=stdin)
    assert_read_up_to_the_cap(done, "<stdin>")
    writer.thread.join(10)
    assert not writer.thread.is_alive()


# --- no traceback, whatever the input ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("check", "http://[::1", "/a"),
        ("check", "http://[::1/robots.txt", "/a"),
        ("explain", "http://[::1/robots.txt", "/a"),
        ("check", "ftp://example.com/robots.txt", "/a"),
        ("fetch", "http://[::1"),
        ("fetch", "not a url"),
        ("explain", "http://h:99999/robots.txt", "/a"),
        ("lint", "http://"),
    ],
)
def test_bad_urls_exit_two_with_one_line(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("scrapy-rerp: error: ")


@pytest.mark.parametrize(
    ("url", "why"),
    [("http://[::1", "Invalid IPv6 URL"), ("http://h:99999/x", "Port out of range 0-65535")],
)
def test_a_url_no_request_can_be_made_of_is_an_error(tmp_path: Path, url: str, why: str) -> None:
    robots = write(tmp_path, ROBOTS)
    done = run("check", robots, url, "/private")
    assert done.returncode == 2
    assert done.stderr == f"scrapy-rerp: error: {url!r}: not a URL a crawler can request: {why}\n"
    assert done.stdout.splitlines()[0].startswith(f"INVALID     {url}  (")
    assert done.stdout.splitlines()[1].startswith("DISALLOWED  /private  line 2")
    done = run("explain", robots, url)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"scrapy-rerp: error: {url!r}: not a URL a crawler can request: {why}\n"


def test_bad_url_to_check_is_invalid_and_exits_two(tmp_path: Path) -> None:
    status, doc = run_json("check", write(tmp_path, ROBOTS), "http://[::1/x", "/private")
    assert status == 2
    assert doc["results"][0]["allowed"] is None
    assert doc["results"][1]["allowed"] is False


def test_errors_in_json_are_a_json_document(tmp_path: Path) -> None:
    done = run("check", str(tmp_path / "absent"), "/x", "--format", "json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"].startswith("cannot read")


@pytest.mark.parametrize("command", [("check", "/a", "/b"), ("lint",), ("explain", "/a")])
def test_binary_files(tmp_path: Path, command: tuple[str, ...]) -> None:
    junk = random.Random(17).randbytes(300_000)
    done = run(command[0], write(tmp_path, junk, "junk.bin"), *command[1:])
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and done.stderr == ""


def pipe_into_head(args: list[str], lines: int = 2) -> tuple[int, str]:
    """Run the command with its output read by something that stops after ``lines`` lines."""
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy_rerp", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    for _ in range(lines):
        process.stdout.readline()
    process.stdout.close()  # the reader goes away, as `head` does
    stderr = process.stderr.read().decode("utf-8", "replace")
    return process.wait(timeout=120), stderr


def test_closed_pipe_lint(tmp_path: Path) -> None:
    junk = random.Random(3).randbytes(300_000)
    status, stderr = pipe_into_head(["lint", write(tmp_path, junk, "junk.bin")])
    assert stderr == ""
    assert status == 1  # what it would have been: the junk has problems


def test_closed_pipe_check(tmp_path: Path) -> None:
    urls = [f"/private/{n}" for n in range(20000)]
    status, stderr = pipe_into_head(["check", write(tmp_path, ROBOTS), *urls])
    assert stderr == ""
    assert status == 1


# --- JSON, one document with stable keys ------------------------------------------------------


def test_json_documents_have_their_documented_keys(tmp_path: Path, server: Server) -> None:
    robots = write(tmp_path, ROBOTS)
    server.robots(ROBOTS)
    _, check = run_json("check", robots, "/a")
    assert set(check) == {
        "command",
        "robots",
        "syntax",
        "agent",
        "usage_categories",
        "results",
        "notes",
        "exit_status",
    }
    assert set(check["results"][0]) == {"url", "allowed", "line", "rule", "reason", "usage"}
    assert check["usage_categories"] == [] and check["results"][0]["usage"] == {}
    assert set(check["robots"]) == {"source", "bytes", "truncated", "fetch"}
    _, explain = run_json("explain", robots, "/a")
    assert set(explain) == {
        "command",
        "robots",
        "url",
        "agent",
        "syntax",
        "allowed",
        "syntaxes",
        "exit_status",
    }
    assert set(explain["syntaxes"]["rfc9309"]) == {
        "allowed",
        "line",
        "rule",
        "reason",
        "groups",
        "group_reason",
        "matching_rules",
        "usage",
        "values",
    }
    assert set(explain["syntaxes"]["rfc9309"]["usage"]["search"]) == {
        "preference",
        "line",
        "statement",
        "reason",
    }
    _, lint = run_json("lint", robots)
    assert set(lint) == {
        "command",
        "robots",
        "syntax",
        "problems",
        "compared",
        "groups",
        "sitemaps",
        "invalid_sitemaps",
        "host",
        "clean_params",
        "exit_status",
    }
    assert set(lint["compared"]) == {
        "urls",
        "agents",
        "comparisons",
        "skipped_comparisons",
        "budget",
    }
    _, fetch = run_json("fetch", server.url("/robots.txt"))
    assert set(fetch) == {
        "command",
        "url",
        "syntax",
        "agent",
        "fetch",
        "conclusion",
        "crawl_delay",
        "groups",
        "sitemaps",
        "invalid_sitemaps",
        "host",
        "clean_params",
        "exit_status",
    }
    assert set(fetch["fetch"]) == {
        "url",
        "final_url",
        "status",
        "outcome",
        "reason",
        "redirects",
        "truncated",
        "bytes",
        "lifetime",
        "expires",
        "retry_after",
    }


# --- demo -------------------------------------------------------------------------------------


def test_demo_runs_outside_the_repository_and_leaves_nothing_running(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rerp", "demo", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert time.monotonic() - started < 60
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] is True and doc["exit_status"] == 0
    assert all(check["ok"] for check in doc["checks"])
    assert {site["name"] for site in doc["sites"]} == {"shop", "blog"}
    for site in doc["sites"]:
        port = int(site["origin"].rsplit(":", 1)[1])
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # the server is gone
