"""``scrapy-rerp`` and AI usage preferences (Content-Usage, Content-Signal): ``check --usage``,
the usage lines of ``explain``, and the usage codes of ``lint``; each run as a subprocess against
robots.txt files and a local server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run, run_json, write
from tests.support.servers import Server

USAGE = """\
User-agent: *
Disallow: /private/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes, ai-input=no

User-agent: ExampleBot
Disallow: /admin/
Content-Signal: ai-train=yes, search=no
"""


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


# --- check --usage ----------------------------------------------------------------------------


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
        "train-ai DISALLOWED line 3: Content-Usage: train-ai=n"
    ]


def test_check_usage_without_rules_is_unknown(server: Server) -> None:
    server.robots("", status=404)
    status, doc = run_json("check", server.url("/robots.txt"), "/page", "--usage", "train-ai")
    assert status == 0
    usage = doc["results"][0]["usage"]["train-ai"]
    assert usage["preference"] == "unknown" and usage["line"] is None
    assert "no rules were parsed" in usage["reason"] and "HTTP 404" in usage["reason"]


# --- explain ----------------------------------------------------------------------------------


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


# --- lint -------------------------------------------------------------------------------------


def lint(tmp_path: Path, content: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    status, doc = run_json("lint", write(tmp_path, content), *args)
    return status, [p for p in doc["problems"] if p["code"] != "syntax-difference"]


@pytest.mark.parametrize(
    ("body", "line", "code", "severity", "says"),
    [
        (
            "User-agent: *\nDisallow: /private/\nContent-Usage: /private/ train-ai=y\n",
            3,
            "usage-on-disallowed-path",
            "warning",
            "train-ai granted for /private/, which * may not crawl (line 2: Disallow: /private/)",
        ),
        (  # a path under the disallowed one, in a group of two agents
            "User-agent: a-bot\nUser-agent: b-bot\nDisallow: /p\n"
            "Content-Usage: /p/q/ search=y, train-ai=y\n",
            4,
            "usage-on-disallowed-path",
            "warning",
            "search and train-ai granted for /p/q/, which a-bot and b-bot may not crawl",
        ),
        (
            "User-agent: *\nContent-Signal: search=yes, ai-trian=no\n",
            2,
            "unknown-content-signal",
            "warning",
            "unknown content signal 'ai-trian', ignored; Content-Signal keys are search, "
            "ai-train and ai-input, each yes or no",
        ),
        (
            "User-agent: *\nContent-Signal: search=maybe\n",
            2,
            "unknown-content-signal",
            "warning",
            "search: 'maybe' is not yes or no",
        ),
        (
            "User-agent: *\nContent-Usage: genai=n\n",
            2,
            "unknown-usage-category",
            "warning",
            "unknown usage category 'genai', ignored; Content-Usage labels are train-ai and search",
        ),
        (
            "User-agent: *\nContent-Usage: ai-train=n\n",
            2,
            "unknown-usage-category",
            "warning",
            "Content-Signal's ai-train is Content-Usage's train-ai",
        ),
        (
            "User-agent: *\nContent-Usage: ai-input=n\n",
            2,
            "unknown-usage-category",
            "warning",
            "ai-input is set by Content-Signal lines only",
        ),
        (
            "User-agent: *\nContent-Usage: train-ai=n search=y\n",  # no comma
            2,
            "malformed-content-usage",
            "warning",
            "not a Structured Fields dictionary",
        ),
        (
            "User-agent: *\nContent-Usage: train-ai=maybe\n",
            2,
            "malformed-content-usage",
            "warning",
            "train-ai: the token maybe, not y or n",
        ),
        (
            "Content-Usage: train-ai=n\nUser-agent: *\nDisallow: /x\n",
            1,
            "usage-outside-group",
            "error",
            "Content-Usage outside a group, ignored",
        ),
        (
            "Content-Signal: ai-train=no\n\nUser-agent: *\nDisallow: /x\n",
            1,
            "usage-outside-group",
            "error",
            "Content-Signal outside a group, ignored",
        ),
        (
            "User-agent: *\nContent-Signal: ai-train=yes, ai-train=no\n",
            2,
            "conflicting-content-signal",
            "warning",
            "ai-train given both yes and no; disallowed",
        ),
        (
            "User-agent: *\nContent-Usage: /drafts/\n",
            2,
            "no-usage-preference",
            "warning",
            "no preference stated",
        ),
        (
            "User-agent: *\nContent-Useage: train-ai=n\n",
            2,
            "misspelled-directive",
            "warning",
            "'Content-Useage' looks like a misspelling of 'Content-Usage'",
        ),
    ],
)
def test_lint_usage_codes(
    tmp_path: Path, body: str, line: int, code: str, severity: str, says: str
) -> None:
    status, problems = lint(tmp_path, body)
    assert status == 1
    assert [(p["line"], p["code"], p["severity"]) for p in problems] == [(line, code, severity)]
    assert says in problems[0]["message"]
    assert problems[0]["text"] == body.split("\n")[line - 1]


@pytest.mark.parametrize("syntax", ["gym2008", "mk1996"])
def test_lint_usage_outside_a_record_in_the_legacy_syntaxes(tmp_path: Path, syntax: str) -> None:
    body = "Content-Usage: train-ai=n\nUser-agent: *\nDisallow: /x\n\nContent-Signal: search=yes\n"
    status, problems = lint(tmp_path, body, "--syntax", syntax)
    assert status == 1
    assert [(p["line"], p["code"], p["severity"]) for p in problems] == [
        (1, "usage-outside-group", "error"),
        (5, "usage-outside-group", "error"),
    ]
    assert problems[0]["message"].startswith("Content-Usage outside a record, ignored")


def test_lint_usage_grants_that_do_apply_are_not_reported(tmp_path: Path) -> None:
    status, problems = lint(
        tmp_path,
        "User-agent: *\n"
        "Allow: /private/open/\n"
        "Disallow: /private/\n"
        "Disallow: /docs/internal/\n"
        "Content-Usage: /private/open/ train-ai=y\n"  # re-opened by the Allow
        "Content-Usage: /docs/ train-ai=y\n"  # only a part of /docs/ is disallowed
        "Content-Usage: /private/ train-ai=n\n"  # a refusal on a disallowed path is harmless
        "Content-Signal: search=yes, ai-train=no, ai-input=no\n"
        "\n"
        "User-agent: OtherBot\n"
        "Disallow: /tmp/\n"
        "Content-Usage: /private/ train-ai=y\n",  # OtherBot may crawl /private/
    )
    assert (status, problems) == (0, [])


def test_lint_usage_on_disallowed_path_in_gym2008(tmp_path: Path) -> None:
    body = "User-agent: *\nDisallow: /private/\nContent-Usage: /private/a train-ai=y\n"
    status, problems = lint(tmp_path, body, "--syntax", "gym2008")
    assert status == 1
    assert [(p["line"], p["code"]) for p in problems] == [(3, "usage-on-disallowed-path")]


def test_every_usage_code_is_in_the_documented_lint_table() -> None:
    from scrapy_rerp.cli import _problems

    table = (Path(__file__).parents[1] / "docs" / "cli.rst").read_text(encoding="utf-8")
    from scrapy_rerp.engine import WARNING_CODES, ParseWarning

    # Each engine warning as lint reports it (a usage line outside a group has its own code).
    codes = {
        _problems._warning_code(ParseWarning(1, "", f"{name} outside a group", code))
        for code in WARNING_CODES
        for name in ("Content-Usage", "Crawl-delay")
    }
    codes |= {"usage-on-disallowed-path"}
    assert "usage-outside-group" in codes and "outside-group" not in codes
    for code in codes:
        assert f"\n``{code}`` " in table, code
