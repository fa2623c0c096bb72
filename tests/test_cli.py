"""The ``scrapy-rerp`` command line, run as ``python -m scrapy_rerp`` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.servers import Reply, Server

ROBOTS = """\
User-agent: *
Disallow: /private
Allow: /private/public

User-agent: ExampleBot
Disallow: /
Crawl-delay: 5
Request-rate: 1/10s 0600-0845

Sitemap: https://example.com/sitemap.xml
"""


@pytest.fixture
def robots_file(tmp_path: Path) -> Path:
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS, encoding="utf-8")
    return path


def verdicts(stdout: str) -> dict[str, str]:
    """URL -> the whole output line for it."""
    lines = [line.split(None, 2) for line in stdout.splitlines() if line.strip()]
    return {parts[1]: " ".join(parts) for parts in lines}


# --- check --------------------------------------------------------------------------------------


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


# --- check, from a URL --------------------------------------------------------------------------


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


# --- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("check",),
        ("check", "robots.txt"),  # no URL
        ("check", "robots.txt", "/x", "--syntax", "rfc1234"),
        ("frobnicate", "robots.txt"),
    ],
)
def test_usage_errors_exit_two(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert "usage:" in done.stderr


def test_missing_file_exits_two(tmp_path: Path) -> None:
    done = run("check", str(tmp_path / "absent.txt"), "/x")
    assert done.returncode == 2
    assert "cannot read" in done.stderr and "absent.txt" in done.stderr


def test_version() -> None:
    import scrapy_rerp

    done = run("--version")
    assert done.returncode == 0
    assert scrapy_rerp.__version__ in done.stdout


def test_cli_does_not_import_scrapy_or_twisted() -> None:
    code = (
        "import sys, scrapy_rerp.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- lint ---------------------------------------------------------------------------------------


def test_lint_reports_groups_sitemaps_and_crawl_delay(robots_file: Path) -> None:
    done = run("lint", str(robots_file))
    out = done.stdout
    # The one problem: RFC 9309's longest match and the older first match disagree on line 3.
    assert "problems: 1\n  line 3: warning: /private/public is RFC9309: allowed" in out
    assert done.returncode == 1, out
    assert "groups: 2" in out
    assert "  line 1: User-agent: * (2 rules)\n  line 5: User-agent: ExampleBot (1 rule)\n" in out
    assert "    Crawl-delay: 5\n    Request-rate: 1/10s 0600-0845\n" in out
    assert "sitemaps: 1\n  https://example.com/sitemap.xml" in out


def test_lint_clean_file_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDisallow: /private\n\nSitemap: https://e.com/s.xml\n")
    done = run("lint", str(path))
    assert done.returncode == 0, done.stdout
    assert "problems: 0" in done.stdout


def test_lint_lists_warnings_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text(
        "User-agent: *\nDisallow: /a\nthis line means nothing\nCrawl-delay: soon\nAllow: /a/b\n"
    )
    done = run("lint", str(path), "--format", "json")
    assert done.returncode == 1
    problems = json.loads(done.stdout)["problems"]
    assert [(p["line"], p["code"]) for p in problems if p["code"] != "syntax-difference"] == [
        (3, "unknown-directive"),
        (4, "invalid-value"),
    ]
    assert problems[1]["text"] == "Crawl-delay: soon"


def test_lint_agents_sharing_a_group(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: a-bot\nUser-agent: b-bot\nDisallow: /x\nDisallow: /y\n")
    done = run("lint", str(path), "--syntax", "gym2008")
    assert done.returncode == 0, done.stdout
    assert "(syntax gym2008)" in done.stdout
    assert "line 1: User-agent: a-bot, b-bot (2 rules)" in done.stdout


def test_lint_survives_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /\xff\xfe\n\xff\xfe garbage \x80\n")
    done = run("lint", str(path))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "line 3: " in done.stdout


def test_lint_reads_standard_input() -> None:
    done = run("lint", "-", stdin=b"User-agent: *\nDisallow: /x\n")
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("<stdin> (syntax rfc9309)\n")
    assert "line 1: User-agent: * (1 rule)" in done.stdout


def test_lint_from_url(server: Server) -> None:
    server.robots(ROBOTS)
    done = run("lint", server.url("/robots.txt"))
    assert done.returncode == 1, done.stderr  # the precedence difference on line 3
    assert "https://example.com/sitemap.xml" in done.stdout
    assert server.count("/robots.txt") == 1
