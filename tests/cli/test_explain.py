"""``scrapy-rerp explain ROBOTS URL``: the group chosen, the rules that match, the verdict in
each syntax, and the usage lines that decide; each run as a subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import USAGE, run, run_json, write
from tests.support.servers import Server

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


# --- usage -----------------------------------------------------------------------------------


def test_explain_shows_the_usage_lines_that_decide(tmp_path: Path) -> None:
    robots = write(tmp_path, USAGE)
    done = run("explain", robots, "/blog")
    assert done.returncode == 0, done.stdout  # the crawl verdict alone decides it
    assert (
        "  usage (Content-Usage, Content-Signal):\n"
        "    train-ai  DISALLOWED  line 3: Content-Usage: train-ai=n\n"
        "    search    ALLOWED     line 5: Content-Signal: search=yes, ai-input=no\n"
        "    ai-input  DISALLOWED  line 5: Content-Signal: search=yes, ai-input=no\n"
    ) in done.stdout
    status, doc = run_json("explain", robots, "/ai-ok/page")
    assert status == 0
    for name in ("rfc9309", "gym2008", "mk1996"):
        usage = doc["syntaxes"][name]["usage"]
        assert list(usage) == ["train-ai", "search", "ai-input"]
        assert usage["train-ai"]["statement"] == "Content-Usage: /ai-ok/ train-ai=y"
        assert usage["train-ai"]["preference"] == "allowed"


def test_explain_usage_when_robots_txt_gives_no_rules(server: Server) -> None:
    server.robots("", status=404)
    status, doc = run_json("explain", server.url("/robots.txt"), "/page")
    assert status == 0
    assert doc["syntaxes"]["rfc9309"]["usage"]["search"]["preference"] == "unknown"


# --- only a robots.txt gets a verdict --------------------------------------------------------


def test_explain_of_a_site_reads_its_robots_txt(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    done = run("explain", server.origin, "/private/x")
    assert done.returncode == 1, done.stderr
    assert "RFC9309 (selected): DISALLOWED by line 2: Disallow: /private/" in done.stdout
    assert server.paths() == ["/robots.txt"]


def test_explain_of_a_page_gives_no_verdict_unless_read_anyway(server: Server) -> None:
    page = server.url("/products/1")
    done = run("explain", page, "/private/x")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        f"scrapy-rerp: error: {page}: an HTML (or XML) page, not a robots.txt: "
    )
    assert done.stderr.endswith("; no verdict on it without --read-anyway\n")
    anyway = run("explain", page, "/private/x", "--read-anyway")
    assert anyway.returncode == 0, anyway.stderr
    assert anyway.stdout.splitlines()[:3] == [
        "URL         /private/x",
        "User agent  *",
        f"Read from   {page}: an HTML (or XML) page, not a robots.txt (--read-anyway)",
    ]


def test_explain_url_neither_a_path_nor_a_url_is_an_error(tmp_path: Path) -> None:
    done = run("explain", write(tmp_path, EXPLAINED), "private/x")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "scrapy-rerp: error: 'private/x' is neither an absolute path (/...) nor an absolute URL "
        "(https://...): write /private/x for a path, or the URL with its scheme\n"
    )


def test_explain_takes_one_url_and_says_so_in_one_line(server: Server) -> None:
    server.robots(EXPLAINED)
    for extra in ((), ("--format", "json")):
        done = run("explain", server.url("/robots.txt"), "/a", "/private/b", *extra)
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == (
            "scrapy-rerp explain: error: one URL at a time, not 2 (/a /private/b): run explain "
            "for each, or check ROBOTS URL... for the verdicts alone\n"
        )
    assert server.hits() == []  # a usage error: nothing is downloaded
    done = run("explain", server.url("/robots.txt"))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "scrapy-rerp explain: error: the following arguments are required: URL"
    )
