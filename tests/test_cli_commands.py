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
import time
from pathlib import Path
from typing import Any

import pytest

from tests.servers import Reply, Server
from tests.test_cli import run

ROBOTS = "User-agent: *\nDisallow: /private\nAllow: /private/public\n"


def run_json(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    done = run(*args, "--format", "json", stdin=stdin)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def write(tmp_path: Path, content: str | bytes, name: str = "robots.txt") -> str:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return str(path)


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

    from scrapy_rerp import cli, parse
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
        source = cli.Source.given(path.name, body)
        args = cli.build_parser().parse_args(["check", path.name, *urls])
        document, _ = cli.cmd_check(args, source)
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


def test_fetch_unreachable_host_is_an_outcome_not_a_traceback() -> None:
    with Server() as gone:
        url = gone.url("/robots.txt")
    done = run("fetch", url, "--timeout", "5")
    assert done.returncode == 1
    assert "outcome     unreachable" in done.stdout
    assert "Traceback" not in done.stderr


# --- no traceback, whatever the input ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("check", "http://[::1", "/a"),
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
    assert set(check["robots"]) == {"source", "bytes", "fetch"}
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
        "host",
        "clean_params",
        "exit_status",
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
