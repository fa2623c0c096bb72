"""``scrapy-rerp lint ROBOTS``: problems with line numbers and a severity (the usage codes among
them), then the groups, values and sitemaps; each run as a subprocess. The budget of lint's
checks is tests/cli/test_problems.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import BAD_SITEMAPS, ROBOTS, run, run_json, write
from tests.support.servers import Server

# --- what lint shows -------------------------------------------------------------------------


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


# --- problems --------------------------------------------------------------------------------


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


@pytest.mark.parametrize("syntax", ["rfc9309", "gym2008", "mk1996"])
@pytest.mark.parametrize("misspelled", ["Dissallow: /x", "Disallow /x", "Alow: /x"])
def test_lint_a_misspelled_rule_outside_a_group_is_outside_a_group(
    tmp_path: Path, syntax: str, misspelled: str
) -> None:
    """Before any User-agent no reader applies a rule, however it is spelled: the problem a
    correct spelling gets, and the misspelling, with no reader said to apply it."""
    correct = "Allow: /x" if misspelled.startswith("Alow") else "Disallow: /x"
    after = "\nUser-agent: *\nDisallow: /private/\n"
    _, spelled = lint(tmp_path, correct + after, "--syntax", syntax)
    status, problems = lint(tmp_path, misspelled + after, "--syntax", syntax)
    assert status == 1
    (outside,) = [p for p in spelled if p["code"] == "rule-outside-group"]
    assert (outside["line"], outside["severity"]) == (1, "error")
    assert {**outside, "text": misspelled} in problems
    (note,) = [p for p in problems if p["code"] != "rule-outside-group"]
    assert note["code"] in ("misspelled-directive", "no-colon") and note["line"] == 1
    assert "applied by" not in note["message"]
    assert note["message"].endswith(": ignored by RFC9309, GYM2008 and MK1996 readers")
    # check agrees: nothing applies it.
    done = run("check", write(tmp_path, misspelled + after), "/x", "--syntax", syntax)
    assert (done.returncode, done.stdout.split()[0]) == (0, "ALLOWED")


def test_lint_a_site_reads_its_robots_txt_and_a_page_is_html(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /private/\n")
    done = run("lint", server.origin + "/")
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(f"{server.url('/robots.txt')} (syntax rfc9309)\nproblems: 0\n")
    status, problems = lint_problems_of(server.url("/products/1"))
    assert status == 1 and problems[0]["code"] == "html"
    assert problems[0]["message"] == (
        "an HTML (or XML) page, not a robots.txt: a crawler finds no rules in it (a page "
        "served for a missing robots.txt?)"
    )


def test_lint_binary_data_is_not_a_robots_txt(tmp_path: Path) -> None:
    status, problems = lint_problems(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)
    assert status == 1 and (problems[0]["code"], problems[0]["line"]) == ("binary", None)
    assert problems[0]["message"] == (
        "binary data, not a robots.txt: a crawler finds no rules in it"
    )


def lint_problems_of(url: str) -> tuple[int, list[dict[str, Any]]]:
    status, doc = run_json("lint", url)
    return status, doc["problems"]


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


# --- usage codes -----------------------------------------------------------------------------


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

    table = (Path(__file__).parents[2] / "docs" / "cli.rst").read_text(encoding="utf-8")
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


# --- RSL License lines -----------------------------------------------------------------------


def test_lint_takes_a_license_line_and_flags_a_relative_one(tmp_path: Path) -> None:
    clean = "License: https://example.com/license.xml\nUser-agent: *\nDisallow: /private\n"
    done = run("lint", write(tmp_path, clean))
    assert done.returncode == 0, done.stdout
    assert "problems: 0" in done.stdout
    assert "license: https://example.com/license.xml" in done.stdout
    inside = (
        "User-agent: *\nLicense: https://example.com/a.xml\nDisallow: /private\n"
        "License: /license.xml\nLicense: ftp://example.com/l.xml\n"
    )
    status, problems = lint(tmp_path, inside)
    assert status == 1
    assert [(p["line"], p["code"], p["severity"]) for p in problems] == [
        (4, "relative-license", "warning"),
        (5, "invalid-license", "warning"),
    ]
    assert "absolute URL (RSL 1.0)" in problems[0]["message"]
