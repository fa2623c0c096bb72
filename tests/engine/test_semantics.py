"""Unit tests for each rule of the engine's semantics, in each syntax.

MK1996 and GYM2008 are robotexclusionrulesparser 1.7.1's reading (blank lines end records,
substring agent match, first match wins, %-decoding of both sides); RFC9309 is RFC 9309 as
google/robotstxt reads it. Where a rule differs between syntaxes, the test is parametrized over
the three and states each syntax's answer.
"""

from __future__ import annotations

import datetime
import random
import string

import pytest

from scrapy_rerp.engine import (
    RFC9309,
    ParseWarning,
    RequestRate,
    RobotsTxt,
    VisitTime,
    parse,
)
from tests.support.syntaxes import ALL, LEGACY, WILDCARDS, per_syntax

SITE = "https://example.com"


def allowed(content: str | bytes, path: str, agent: str, syntax: int) -> bool:
    robots = parse(content, syntax)
    verdict = robots.allowed(SITE + path, agent)
    assert robots.decide(SITE + path, agent).allowed is verdict
    return verdict


# -- records and groups ------------------------------------------------------------------------


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_blank_line_ends_a_record_in_legacy_only(syntax: int, expected: bool) -> None:
    # Legacy: the record "User-agent: a" ends at the blank line, with no rules, and is dropped;
    # the Disallow that follows belongs to no record. RFC: blank lines do not matter.
    robots = "User-agent: a\n\nDisallow: /x\n"
    assert allowed(robots, "/x", "a", syntax) is expected


@pytest.mark.parametrize("syntax", ALL)
def test_consecutive_user_agents_share_a_record(syntax: int) -> None:
    robots = "User-agent: a\nUser-agent: b\nDisallow: /x\n"
    assert allowed(robots, "/x", "a", syntax) is False
    assert allowed(robots, "/x", "b", syntax) is False
    assert allowed(robots, "/x", "c", syntax) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_substring_agent_match_in_legacy_exact_token_in_rfc(syntax: int, expected: bool) -> None:
    robots = "User-agent: bot\nDisallow: /x\n"
    assert allowed(robots, "/x", "MyBot", syntax) is expected
    assert allowed(robots, "/x", "BOT", syntax) is False  # case-insensitive everywhere


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    ("group", "agent"),
    [
        ("MyBot", "Mozilla/5.0 (compatible; MyBot/1.0)"),
        ("MyBot", "Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)"),
        ("Scrapy", "Scrapy/2.19.0 (+https://scrapy.org)"),
        ("mybot", "MYBOT"),
    ],
)
def test_user_agent_header_matches_its_product_group(group: str, agent: str, syntax: int) -> None:
    robots = f"User-agent: *\nDisallow: /\n\nUser-agent: {group}\nDisallow: /private\n"
    assert allowed(robots, "/public", agent, syntax) is True
    assert allowed(robots, "/private", agent, syntax) is False


@pytest.mark.parametrize("syntax", ALL)
def test_star_group_only_when_no_specific_group_matches(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /private\n"
    assert allowed(robots, "/public", "mybot", syntax) is True
    assert allowed(robots, "/public", "otherbot", syntax) is False


@pytest.mark.parametrize("syntax", ALL)
def test_star_group_applies_wherever_it_is(syntax: int) -> None:
    robots = "User-agent: mybot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
    assert allowed(robots, "/public", "mybot", syntax) is True
    assert allowed(robots, "/public", "otherbot", syntax) is False


@pytest.mark.parametrize("syntax", ALL)
def test_no_group_at_all_allows(syntax: int) -> None:
    robots = "User-agent: a\nDisallow: /\n"
    assert allowed(robots, "/x", "b", syntax) is True
    assert allowed("", "/x", "b", syntax) is True


def test_rfc_star_followed_by_text_is_the_global_group() -> None:
    robots = "User-agent: * everyone\nDisallow: /x\n"
    assert allowed(robots, "/x", "bot", RFC9309) is False


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("agent", ["MyBot/1.0", "mybot/2.1 (+https://example.org)"])
def test_caller_product_token_before_the_version(agent: str, syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /\n\nUser-agent: MyBot\nDisallow: /private\n"
    assert allowed(robots, "/public", agent, syntax) is True
    assert allowed(robots, "/private", agent, syntax) is False


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_group_name_is_no_prefix_of_the_caller_token_in_rfc(syntax: int, expected: bool) -> None:
    # Legacy: "googlebot" is a substring of "googlebot-news"; RFC: the tokens differ.
    robots = "User-agent: googlebot\nDisallow: /x\n"
    assert allowed(robots, "/x", "googlebot-news", syntax) is expected
    assert allowed(robots, "/x", "Googlebot", syntax) is False


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_user_agent_without_rules_before_a_blank_line(syntax: int, expected: bool) -> None:
    # Legacy: "User-agent: a" followed by a blank line is a record without rules, dropped, so
    # "a" falls to "*". RFC: the blank line is nothing; "a" and "b" share a group.
    robots = "User-agent: *\nDisallow: /s\n\nUser-agent: a\n\nUser-agent: b\nDisallow: /x\n"
    assert allowed(robots, "/x", "a", syntax) is expected
    assert allowed(robots, "/s", "a", syntax) is not expected


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_groups_for_one_agent_are_merged_in_rfc(syntax: int, expected: bool) -> None:
    robots = (
        "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n\n"
        "User-agent: a\nDisallow: /z\n"
    )
    assert allowed(robots, "/x", "a", syntax) is False
    assert allowed(robots, "/z", "a", syntax) is expected
    assert allowed(robots, "/y", "a", syntax) is True


def test_rfc_group_starts_at_user_agent_after_a_rule() -> None:
    # Unknown lines and Sitemap lines do not end a group; a User-agent after a rule does.
    robots = (
        "User-agent: a\nFoo: bar\nSitemap: https://example.com/s.xml\nUser-agent: b\n"
        "Disallow: /x\nUser-agent: c\nDisallow: /y\n"
    )
    assert allowed(robots, "/x", "a", RFC9309) is False
    assert allowed(robots, "/x", "b", RFC9309) is False
    assert allowed(robots, "/y", "b", RFC9309) is True
    assert allowed(robots, "/x", "c", RFC9309) is True


def test_rfc_agent_value_cut_at_first_character_outside_token() -> None:
    robots = "User-agent: Googlebot/2.1\nDisallow: /x\n\nUser-agent: Foo Bar\nDisallow: /y\n"
    assert allowed(robots, "/x", "Googlebot", RFC9309) is False
    assert allowed(robots, "/y", "Foo", RFC9309) is False
    assert allowed(robots, "/y", "Bar", RFC9309) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_rfc_digit_cuts_the_group_name(syntax: int, expected: bool) -> None:
    # google/robotstxt reads "bot1" as "bot": the caller's "bot1" is no match in RFC9309.
    robots = "User-agent: bot1\nDisallow: /x\n"
    assert allowed(robots, "/x", "bot1", syntax) is expected


# -- precedence ------------------------------------------------------------------------------


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_first_match_in_legacy_longest_match_in_rfc(syntax: int, expected: bool) -> None:
    robots = "User-agent: *\nAllow: /p\nDisallow: /p/q\n"
    assert allowed(robots, "/p/q/r", "bot", syntax) is expected
    robots = "User-agent: *\nDisallow: /p\nAllow: /p/q\n"
    assert allowed(robots, "/p/q/r", "bot", syntax) is not expected


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_allow_wins_a_tie_in_rfc(syntax: int, expected: bool) -> None:
    robots = "User-agent: *\nDisallow: /p\nAllow: /p\n"
    assert allowed(robots, "/page", "bot", syntax) is expected
    robots = "User-agent: *\nAllow: /p\nDisallow: /p\n"
    assert allowed(robots, "/page", "bot", syntax) is True


def test_rfc_length_counts_wildcards_and_octets() -> None:
    # "/a*" (3 octets) against "/ab" (3): a tie, Allow wins; "/ab$" (4) beats "/ab" (3).
    robots = "User-agent: *\nDisallow: /ab\nAllow: /a*\n"
    assert allowed(robots, "/ab", "bot", RFC9309) is True
    robots = "User-agent: *\nAllow: /ab\nDisallow: /ab$\n"
    assert allowed(robots, "/ab", "bot", RFC9309) is False
    assert allowed(robots, "/abc", "bot", RFC9309) is True
    # Non-ASCII rules are compared by the length of their escaped form: "/é" is "/%C3%A9",
    # 7 octets, a tie with "/%C3%A9" and shorter than "/%C3%A9x".
    robots = "User-agent: *\nAllow: /é\nDisallow: /%C3%A9\nDisallow: /%C3%A9x\n"
    assert allowed(robots, "/%C3%A9", "bot", RFC9309) is True
    assert allowed(robots, "/%C3%A9x", "bot", RFC9309) is False


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_empty_disallow(syntax: int, expected: bool) -> None:
    # Legacy: an empty Disallow allows everything, and as the first match it shadows the rules
    # after it. RFC: an empty rule matches nothing.
    robots = "User-agent: *\nDisallow:\nDisallow: /x\n"
    assert allowed(robots, "/x", "bot", syntax) is expected
    assert allowed("User-agent: *\nDisallow:\n", "/x", "bot", syntax) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_empty_allow(syntax: int, expected: bool) -> None:
    # rerp's quirk, kept in legacy: an empty Allow disallows everything.
    assert allowed("User-agent: *\nAllow:\n", "/x", "bot", syntax) is expected


@pytest.mark.parametrize("syntax", ALL)
def test_group_with_only_an_empty_rule_shadows_star(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow:\n"
    assert allowed(robots, "/x", "mybot", syntax) is True
    assert allowed(robots, "/x", "otherbot", syntax) is False


# -- patterns ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("syntax", "expected"),
    per_syntax(
        # /a.pdf, /a.pdf?x, /x/y.pdf, /*.pdf$ (the literal path)
        (True, True, True, False),
        (False, True, False, True),
        (False, True, False, True),
    ),
)
def test_star_and_dollar_are_wildcards_except_in_mk1996(
    syntax: int, expected: tuple[bool, ...]
) -> None:
    robots = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /x/*.pdf\n"
    paths = ["/a.pdf", "/a.pdf?x", "/x/y.pdf", "/*.pdf$"]
    # MK1996: both rules are literal prefixes; "/x/*.pdf" never matches "/x/y.pdf".
    got = tuple(allowed(robots, path, "bot", syntax) for path in paths)
    assert got == expected


@pytest.mark.parametrize("syntax", WILDCARDS)
def test_dollar_only_anchors_at_the_end(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /a$b\n"
    assert allowed(robots, "/a$bc", "bot", syntax) is False
    assert allowed(robots, "/ab", "bot", syntax) is True


@pytest.mark.parametrize("syntax", WILDCARDS)
def test_star_matches_any_run(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /*/private/*.html\n"
    assert allowed(robots, "/a/b/private/c/d.html", "bot", syntax) is False
    assert allowed(robots, "/private/d.html", "bot", syntax) is True


# -- %-encoding ------------------------------------------------------------------------------


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_percent_decoding_both_sides_in_legacy_not_in_rfc(syntax: int, expected: bool) -> None:
    # Legacy decodes rule and URL (so %7E is ~); RFC9309 follows google: URLs as given.
    assert allowed("User-agent: *\nDisallow: /%7Emak\n", "/~mak", "bot", syntax) is expected
    assert allowed("User-agent: *\nDisallow: /~mak\n", "/%7Emak", "bot", syntax) is expected
    assert allowed("User-agent: *\nDisallow: /%62%61%7A\n", "/baz", "bot", syntax) is expected


@pytest.mark.parametrize("syntax", ALL)
def test_same_spelling_matches_everywhere(syntax: int) -> None:
    assert allowed("User-agent: *\nDisallow: /%7Emak\n", "/%7Emak", "bot", syntax) is False
    assert allowed("User-agent: *\nDisallow: /~mak\n", "/~mak", "bot", syntax) is False


@pytest.mark.parametrize("syntax", ALL)
def test_escaped_slash_is_never_decoded(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /a%2Fb\n"
    assert allowed(robots, "/a/b", "bot", syntax) is True
    assert allowed(robots, "/a%2Fb", "bot", syntax) is False
    robots = "User-agent: *\nDisallow: /a/b\n"
    assert allowed(robots, "/a%2Fb", "bot", syntax) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_lowercase_escapes(syntax: int, expected: bool) -> None:
    # RFC9309 upper-cases a rule's %xx (so /a%3cd matches the URL /a%3Cd) but leaves the
    # URL alone (/a%3cd does not match); legacy decodes both to "<".
    robots = "User-agent: *\nDisallow: /a%3cd\n"
    assert allowed(robots, "/a%3Cd", "bot", syntax) is False
    assert allowed(robots, "/a%3cd", "bot", syntax) is expected
    assert allowed(robots, "/a<d", "bot", syntax) is expected


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_non_ascii_rule(syntax: int, expected: bool) -> None:
    # RFC9309: the rule is %-escaped as UTF-8 and matches the escaped URL only (google does not
    # escape URLs); legacy decodes the URL and compares characters.
    robots = "User-agent: *\nDisallow: /ツ\n"
    assert allowed(robots, "/%E3%83%84", "bot", syntax) is False
    assert allowed(robots, "/ツ", "bot", syntax) is expected


def test_rfc_non_ascii_rule_bytes_not_utf8_are_escaped_byte_for_byte() -> None:
    robots = b"User-agent: *\nDisallow: /b\xfccher/\n"
    assert allowed(robots, "/b%FCcher/x", "bot", RFC9309) is False
    assert allowed(robots, "/b%C3%BCcher/x", "bot", RFC9309) is True


# -- RFC 9309 specifics ------------------------------------------------------------------------


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
def test_robots_txt_always_allowed_in_rfc(syntax: int, expected: bool) -> None:
    robots = "User-agent: *\nDisallow: /\n"
    assert allowed(robots, "/robots.txt", "bot", syntax) is expected
    assert allowed(robots, "/robots.txt.bak", "bot", syntax) is False


@pytest.mark.parametrize(
    "line",
    [
        "useragent: mybot",
        "user agent: mybot",
        "User-Agent: mybot",
        "user-agent mybot",
        "USER-AGENT:mybot",
    ],
)
@pytest.mark.parametrize(
    "rule",
    [
        "Disallow: /x",
        "dissallow: /x",
        "dissalow: /x",
        "disalow: /x",
        "diasllow: /x",
        "disallaw: /x",
        "disallow /x",
        "  Disallow :  /x  # comment",
    ],
)
def test_rfc_accepted_misspellings_and_colonless_lines(line: str, rule: str) -> None:
    robots = f"{line}\n{rule}\n"
    assert allowed(robots, "/x", "mybot", RFC9309) is False
    assert allowed(robots, "/y", "mybot", RFC9309) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(True, True, False))
def test_misspellings_only_in_rfc(syntax: int, expected: bool) -> None:
    assert allowed("User-agent: *\ndissallow: /x\n", "/x", "bot", syntax) is expected
    assert allowed("user-agent *\ndisallow /x\n", "/x", "bot", syntax) is expected
    # "useragent" is rerp's too.
    assert allowed("useragent: *\ndisallow: /x\n", "/x", "bot", syntax) is False


@pytest.mark.parametrize("syntax", ALL)
def test_unknown_misspellings_are_ignored(syntax: int) -> None:
    robots = "User-agent: *\nDesallow: /x\nNodisallow: /y\n"
    assert allowed(robots, "/x", "bot", syntax) is True
    assert allowed(robots, "/y", "bot", syntax) is True


def test_rfc_colonless_line_needs_exactly_two_tokens() -> None:
    robots = "User-agent: *\ndisallow /x /y\n"
    assert allowed(robots, "/x", "bot", RFC9309) is True


@pytest.mark.parametrize(("syntax", "expected"), per_syntax(False, False, True))
@pytest.mark.parametrize("page", ["index.html", "index.htm"])
def test_index_html_allow_also_allows_the_directory(page: str, syntax: int, expected: bool) -> None:
    robots = f"User-agent: *\nAllow: /d/{page}\nDisallow: /\n"
    assert allowed(robots, f"/d/{page}", "bot", syntax) is True
    assert allowed(robots, "/d/", "bot", syntax) is expected
    assert allowed(robots, "/d/?q", "bot", syntax) is False  # the directory itself only
    assert allowed(robots, "/d/other", "bot", syntax) is False


def test_rfc_index_html_disallow_does_not_cover_the_directory() -> None:
    robots = "User-agent: *\nDisallow: /d/index.html\n"
    assert allowed(robots, "/d/", "bot", RFC9309) is True


def test_rfc_long_lines_are_cut_at_16663_bytes() -> None:
    key = "Disallow: "
    limit = 16663
    kept = limit - len(key)  # octets of the pattern that survive
    robots = parse(f"User-agent: *\n{key}/{'a' * 30000}\nDisallow: /after\n", RFC9309)
    assert robots.allowed(SITE + "/" + "a" * (kept - 1) + "b", "bot") is False
    assert robots.allowed(SITE + "/" + "a" * (kept - 2) + "b", "bot") is True
    assert robots.allowed(SITE + "/after", "bot") is False  # the next line is intact
    assert [w.line for w in robots.warnings] == [2]


def test_rfc_long_line_cut_counts_utf8_octets() -> None:
    # 2-octet characters: the cut falls after (16663 - 11) // 2 of them, "/" taking 1 octet.
    robots = parse(f"User-agent: *\nDisallow: /{'é' * 10000}\n", RFC9309)
    whole = (16663 - len("Disallow: /")) // 2
    assert robots.allowed(SITE + "/" + "%C3%A9" * whole + "x", "bot") is False
    assert robots.allowed(SITE + "/" + "%C3%A9" * (whole - 1) + "x", "bot") is True


# -- encodings and line ends -----------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    "content",
    [
        b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
        "\ufeffUser-agent: *\nDisallow: /x\n",
    ],
    ids=["bytes", "str"],
)
def test_byte_order_mark_is_skipped(content: str | bytes, syntax: int) -> None:
    assert allowed(content, "/x", "bot", syntax) is False


@pytest.mark.parametrize("bom", [b"\xef", b"\xef\xbb"], ids=["1-octet", "2-octet"])
def test_rfc_partial_byte_order_mark_is_skipped(bom: bytes) -> None:
    assert allowed(bom + b"User-agent: *\nDisallow: /x\n", "/x", "bot", RFC9309) is False


def test_rfc_byte_order_mark_only_at_the_start() -> None:
    robots = parse("User-agent: *\n\ufeffDisallow: /x\n", RFC9309)
    assert robots.allowed(SITE + "/x", "bot") is True
    assert [w.line for w in robots.warnings] == [2]


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("end", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_line_ends(end: str, syntax: int) -> None:
    text = end.join(["User-agent: a", "Disallow: /x", "", "User-agent: *", "Disallow: /y", ""])
    robots = parse(text, syntax)
    assert robots.allowed(SITE + "/x", "a") is False
    assert robots.allowed(SITE + "/y", "a") is True
    assert robots.allowed(SITE + "/y", "b") is False
    rules = {(rule[1], rule[2]) for group in robots.groups for rule in group.rules}
    assert rules == {("/x", 2), ("/y", 5)}


@pytest.mark.parametrize("syntax", ALL)
def test_mixed_line_ends_count_lines_once(syntax: int) -> None:
    robots = parse("User-agent: *\r\nfoo\rDisallow: /x\r\n\nbar\n", syntax)
    assert [w.line for w in robots.warnings] == [2, 5]
    assert robots.allowed(SITE + "/x", "bot") is False


def test_rfc_bytes_are_utf8() -> None:
    robots = "User-agent: *\nDisallow: /é\n".encode()
    assert allowed(robots, "/%C3%A9", "bot", RFC9309) is False


@pytest.mark.parametrize("syntax", LEGACY)
def test_legacy_bytes_are_latin1(syntax: int) -> None:
    robots = "User-agent: *\nDisallow: /é\n".encode("latin-1")
    assert allowed(robots, "/é", "bot", syntax) is False


# -- extensions --------------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_crawl_delay_per_group(syntax: int) -> None:
    robots = parse(
        "User-agent: a\nCrawl-delay: 2.5\nDisallow: /a\n\n"
        "User-agent: b\nCrawl-delay: 0\nDisallow: /b\n\n"
        "User-agent: c\nDisallow: /c\n\n"
        "User-agent: *\nCrawl-delay: 7\nDisallow: /s\n",
        syntax,
    )
    assert robots.crawl_delay("a") == 2.5
    assert robots.crawl_delay("b") == 0.0
    assert robots.crawl_delay("c") is None
    assert robots.crawl_delay("zzz") == 7.0


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "abc", "1e999", "1_0", ""])
def test_crawl_delay_invalid_values_are_ignored(value: str, syntax: int) -> None:
    robots = parse(f"User-agent: *\nCrawl-delay: {value}\nDisallow: /x\n", syntax)
    assert robots.crawl_delay("bot") is None
    assert robots.allowed(SITE + "/x", "bot") is False
    assert [w.line for w in robots.warnings] == [2]


def test_crawl_delay_merged_groups_rfc() -> None:
    robots = parse(
        "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /\n\n"
        "User-agent: a\nCrawl-delay: 3\n",
        RFC9309,
    )
    assert robots.crawl_delay("a") == 3.0
    assert robots.crawl_delay("b") is None


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1/10", RequestRate(1, 10.0)),
        ("1/10s", RequestRate(1, 10.0)),
        ("100/15m", RequestRate(100, 900.0)),
        ("400/1h", RequestRate(400, 3600.0)),
        ("9000/1d", RequestRate(9000, 86400.0)),
        (
            "1/10s 1820-1940",
            RequestRate(1, 10.0, datetime.time(18, 20), datetime.time(19, 40)),
        ),
    ],
)
def test_request_rate_forms(value: str, expected: RequestRate, syntax: int) -> None:
    robots = parse(f"User-agent: *\nRequest-rate: {value}\nDisallow: /x\n", syntax)
    assert robots.request_rate("bot") == expected
    assert robots.warnings == ()


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("value", ["0/10s", "1/0", "x/10", "1/10s 2500-2600", "10"])
def test_request_rate_invalid_values(value: str, syntax: int) -> None:
    robots = parse(f"User-agent: *\nRequest-rate: {value}\nDisallow: /x\n", syntax)
    assert robots.request_rate("bot") is None
    assert [w.line for w in robots.warnings] == [2]


@pytest.mark.parametrize("syntax", ALL)
def test_request_rate_interval(syntax: int) -> None:
    robots = parse("User-agent: *\nRequest-rate: 3/1m\nDisallow: /x\n", syntax)
    rate = robots.request_rate("bot")
    assert rate is not None and rate.interval == 20.0


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("value", ["0400-0845", "0400 0845"])
def test_visit_time(value: str, syntax: int) -> None:
    robots = parse(
        f"User-agent: a\nVisit-time: {value}\nDisallow: /x\n\nUser-agent: b\nDisallow: /y\n",
        syntax,
    )
    assert robots.visit_time("a") == VisitTime(datetime.time(4, 0), datetime.time(8, 45))
    assert robots.visit_time("b") is None


@pytest.mark.parametrize("syntax", ALL)
def test_sitemaps_are_global_and_in_order(syntax: int) -> None:
    robots = parse(
        "Sitemap: https://example.com/1.xml\nUser-agent: a\nDisallow: /x\n"
        "Sitemap: https://example.com/2.xml\n\nUser-agent: *\nDisallow: /\n"
        "sitemap: https://example.com/1.xml\n",
        syntax,
    )
    assert robots.sitemaps == (
        "https://example.com/1.xml",
        "https://example.com/2.xml",
        "https://example.com/1.xml",
    )
    assert robots.allowed(SITE + "/x", "a") is False


@pytest.mark.parametrize("syntax", ALL)
def test_host_is_the_first_one(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nHost: www.example.com\nDisallow: /x\nHost: other.example\n", syntax
    )
    assert robots.host == "www.example.com"
    assert robots.allowed(SITE + "/x", "bot") is False
    assert parse("User-agent: *\nDisallow: /\n", syntax).host is None


@pytest.mark.parametrize("syntax", ALL)
def test_clean_param_is_kept_not_applied(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nClean-param: ref /articles/\nDisallow: /x\nClean-param: sid\n", syntax
    )
    assert robots.clean_params == ("ref /articles/", "sid")
    assert robots.allowed(SITE + "/articles/?ref=1", "bot") is True


# -- warnings and misuse -------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_warnings_for_junk_lines_with_line_numbers(syntax: int) -> None:
    robots = parse(
        "# comment\nUser-agent: *\n<html>\nDisallow: /x\njust some words\nCrawl-delay: soon\n",
        syntax,
    )
    assert [w.line for w in robots.warnings] == [3, 5, 6]
    assert all(isinstance(w, ParseWarning) for w in robots.warnings)
    assert robots.warnings[0].text == "<html>"
    assert robots.warnings[1].text == "just some words"
    assert "soon" in robots.warnings[2].text
    assert robots.allowed(SITE + "/x", "bot") is False


@pytest.mark.parametrize("syntax", ALL)
def test_comments_and_blank_lines_are_no_warnings(syntax: int) -> None:
    robots = parse("# hello\n\n   \nUser-agent: * # all\nDisallow: /x # no\n", syntax)
    assert robots.warnings == ()
    assert robots.allowed(SITE + "/x", "bot") is False
    assert robots.allowed(SITE + "/y", "bot") is True


def test_rfc_rule_before_any_user_agent_is_a_warning() -> None:
    robots = parse("Disallow: /x\nUser-agent: *\nDisallow: /y\n", RFC9309)
    assert robots.allowed(SITE + "/x", "bot") is True
    assert robots.allowed(SITE + "/y", "bot") is False
    assert [w.line for w in robots.warnings] == [1]


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("content", [None, 42, 1.5, ["User-agent: *"], object()])
def test_parse_rejects_content_that_is_not_text(content: object, syntax: int) -> None:
    with pytest.raises(TypeError):
        parse(content, syntax)  # type: ignore[arg-type]


@pytest.mark.parametrize("syntax", [0, 4, -1, "RFC 9309", "rfc", None, 3.0, True])
def test_unknown_syntax_is_a_value_error(syntax: object) -> None:
    with pytest.raises(ValueError):
        parse("User-agent: *\n", syntax)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RobotsTxt.allow_all(syntax)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RobotsTxt.disallow_all(syntax)  # type: ignore[arg-type]


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("bad", [None, 42, ["/x"], object()])
def test_queries_reject_url_or_agent_that_is_not_text(bad: object, syntax: int) -> None:
    robots = parse("User-agent: *\nDisallow: /x\nCrawl-delay: 1\n", syntax)
    with pytest.raises(TypeError):
        robots.allowed(bad, "bot")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        robots.allowed(SITE + "/x", bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        robots.decide(bad, "bot")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        robots.decide(SITE + "/x", bad)  # type: ignore[arg-type]
    for query in (robots.crawl_delay, robots.request_rate, robots.visit_time):
        with pytest.raises(TypeError):
            query(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("syntax", ALL)
def test_bytes_url_and_agent_are_accepted(syntax: int) -> None:
    robots = parse("User-agent: mybot\nDisallow: /x\n", syntax)
    assert robots.allowed(b"https://example.com/x", b"mybot") is False  # type: ignore[arg-type]


# -- robustness ------------------------------------------------------------------------------

_VOCABULARY = [
    "User-agent:",
    "user agent",
    "Disallow:",
    "Allow:",
    "Sitemap:",
    "Crawl-delay:",
    "Request-rate:",
    "Visit-time:",
    "Host:",
    "Clean-param:",
    "*",
    "$",
    "/",
    "%",
    "%2F",
    "%e3%83",
    "#",
    ":",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "\ufeff",
    "é",
    "ツ",
    "\ud800",
    "nan",
    "-1",
    "1/0",
    "9999-9999",
    "index.html",
    "bot",
    "a",
]


def _random_bodies(count: int) -> list[str | bytes]:
    rng = random.Random(20250101)
    bodies: list[str | bytes] = []
    for n in range(count):
        kind = n % 4
        if kind == 0:
            bodies.append(rng.randbytes(rng.randrange(0, 600)))
        elif kind == 1:
            bodies.append("".join(rng.choices(_VOCABULARY, k=rng.randrange(0, 120))))
        elif kind == 2:
            text = "".join(rng.choices(_VOCABULARY, k=rng.randrange(0, 120)))
            bodies.append(text.encode("utf-8", "surrogatepass"))
        else:
            alphabet = string.printable + "\x00\x85\u2028\ufeff\xff"
            bodies.append("".join(rng.choices(alphabet, k=rng.randrange(0, 400))))
    return bodies


_URLS = ["https://example.com/", "/a/b?c=d", "", "a*b$", "https://example.com/%E3%83%84#f"]
_AGENTS = ["bot", "*", "", "Mozilla/5.0 (compatible; bot/1.0)", "ü"]


@pytest.mark.parametrize("syntax", ALL)
def test_random_input_never_raises(syntax: int) -> None:
    checked = 0
    for content in _random_bodies(3000):
        robots = parse(content, syntax)
        assert isinstance(robots, RobotsTxt)
        str(robots)
        repr(robots)
        for url in _URLS:
            for agent in _AGENTS:
                verdict = robots.allowed(url, agent)
                assert robots.decide(url, agent).allowed is verdict
                checked += 1
        for agent in _AGENTS:
            delay = robots.crawl_delay(agent)
            assert delay is None or delay >= 0
            robots.request_rate(agent)
            robots.visit_time(agent)
        for warning in robots.warnings:
            assert warning.line >= 1
    assert checked == 3000 * len(_URLS) * len(_AGENTS)


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    "content",
    [
        "User-agent: *\nDisallow: /\ud800\n",
        "User-agent: *\nDisallow: /" + "a" * 20000 + "\ud800\n",
    ],
    ids=["in-a-rule", "in-a-long-line"],
)
def test_lone_surrogate_in_text_never_raises(content: str, syntax: int) -> None:
    # A str may hold a lone surrogate (from surrogatepass decoding, JSON, ...): still content.
    robots = parse(content, syntax)
    assert robots.allowed(SITE + "/x", "bot") is True
    assert len(robots.groups) == 1


def _suffix(number: int) -> str:
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += "bcdefghijklmnopqrstuvwxyz0"[digit]
        if not number:
            return letters


@pytest.mark.parametrize("syntax", WILDCARDS)
def test_wildcard_matching_is_linear(syntax: int) -> None:
    """A 64 KiB URL against 10,000 rules like ``/*a*a*a*b$`` (the verdict only: the time is
    measured in benchmarks/)."""
    rules = [f"Disallow: /*a*a*a*{_suffix(n)}$" for n in range(5000)]
    rules += [f"Disallow: /*a*a*a*{_suffix(n)}" for n in range(5000)]
    robots = parse("User-agent: *\n" + "\n".join(rules) + "\n", syntax)
    long_path = "/" + "a" * 65536
    assert robots.allowed(SITE + long_path, "bot") is True
    assert robots.decide(SITE + long_path, "bot").allowed is True
    target = _suffix(4321)
    assert robots.allowed(SITE + long_path + target, "bot") is False
    decision = robots.decide(SITE + long_path + target, "bot")
    assert decision.allowed is False and decision.rule is not None and decision.line is not None
    pattern = decision.rule.removeprefix("Disallow: ")
    assert pattern.startswith("/*a*a*a*")
    assert (long_path + target).endswith(pattern[len("/*a*a*a*") :].removesuffix("$"))
    assert rules[decision.line - 2] == decision.rule
