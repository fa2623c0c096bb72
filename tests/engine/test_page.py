"""page_directives: reading X-Robots-Tag, Robots-Tag and meta tags, combining them for one
crawler, the purposes, limits, misuse, and no exception on any content."""

from __future__ import annotations

import datetime
import doctest
import email
import http.client
import random
import string
from pathlib import Path

import pytest

from scrapy_rerp.engine import (
    PAGE_RULE_USAGE,
    PAGE_RULES,
    USAGE_CATEGORIES,
    PageDirectives,
    PageRule,
    page_directives,
    robots_meta_tags,
)
from scrapy_rerp.engine._page import MAX_FIELD_CHARS, MAX_SOURCES, MAX_STATEMENTS, MAX_WARNINGS
from scrapy_rerp.engine._page_rules import RESTRICTIONS, SPELLINGS

UTC = datetime.timezone.utc
BOT = "MyBot"
FLAGS = (
    "noindex",
    "nofollow",
    "noarchive",
    "nosnippet",
    "noimageindex",
    "notranslate",
    "indexifembedded",
    "noai",
    "noimageai",
)


def xrt(*values: str, agent: str = BOT) -> PageDirectives:
    return page_directives([("X-Robots-Tag", value) for value in values], None, agent)


def meta(*pairs: tuple[str, str], agent: str = BOT) -> PageDirectives:
    return page_directives(None, list(pairs), agent)


def flags(directives: PageDirectives) -> set[str]:
    return {name for name in FLAGS if getattr(directives, name)}


def codes(directives: PageDirectives) -> list[str]:
    return [warning.code for warning in directives.warnings]


# -- the table ---------------------------------------------------------------------------------


def test_every_spelling_is_lower_case_and_names_one_rule() -> None:
    spellings = [spelling for rule in PAGE_RULES for spelling in rule.spellings]
    assert len(spellings) == len(set(spellings)) == len(SPELLINGS)
    assert all(spelling == spelling.strip().lower() for spelling in spellings)
    assert SPELLINGS["nocache"].name == "noarchive"


def test_the_purposes_are_the_usage_categories() -> None:
    assert set(PAGE_RULE_USAGE) == set(USAGE_CATEGORIES)
    for page_wide, images_only in PAGE_RULE_USAGE.values():
        assert page_wide | images_only <= RESTRICTIONS


def test_rules_print_short() -> None:
    assert repr(SPELLINGS["none"]) == "PageRule('none')"
    assert isinstance(SPELLINGS["none"], PageRule)


# -- X-Robots-Tag ---------------------------------------------------------------------------------


def test_one_rule() -> None:
    directives = xrt("noindex")
    assert flags(directives) == {"noindex"}
    (statement,) = directives.statements
    assert (statement.rule.name, statement.source, statement.agent, statement.text) == (
        "noindex",
        "X-Robots-Tag header 1",
        None,
        "noindex",
    )
    assert directives.warnings == ()


def test_comma_lists_several_headers_any_case_and_spaces() -> None:
    directives = xrt(" NoIndex ,\tNOFOLLOW,, ", "noarchive,nosnippet")
    assert flags(directives) == {"noindex", "nofollow", "noarchive", "nosnippet"}
    assert [s.source for s in directives.statements][-1] == "X-Robots-Tag header 2"


def test_none_all_and_nocache() -> None:
    assert flags(xrt("none")) == {"noindex", "nofollow"}
    assert flags(xrt("all")) == set()
    assert flags(xrt("nocache")) == {"noarchive"}
    assert xrt("nocache").statements[0].text == "nocache"


def test_permissive_rules_never_undo_a_restriction() -> None:
    assert flags(xrt("noindex, index, follow, all", "archive")) == {"noindex"}


def test_every_flag() -> None:
    directives = xrt("noimageindex, notranslate, indexifembedded, noai, noimageai")
    assert flags(directives) == {
        "noimageindex",
        "notranslate",
        "indexifembedded",
        "noai",
        "noimageai",
    }


def test_header_name_any_case_bytes_and_other_headers_ignored() -> None:
    directives = page_directives(
        [(b"x-ROBOTS-tag", b"noindex"), ("Content-Type", "text/html"), ("X-Robots", "nofollow")],
        None,
        BOT,
    )
    assert flags(directives) == {"noindex"}


def test_headers_as_mappings_and_lists_of_values() -> None:
    assert flags(page_directives({"X-Robots-Tag": "noindex"}, None, BOT)) == {"noindex"}
    assert flags(page_directives({b"X-Robots-Tag": [b"noindex", b"nofollow"]}, None, BOT)) == {
        "noindex",
        "nofollow",
    }
    message = email.message_from_string(
        "X-Robots-Tag: noindex\nX-Robots-Tag: nofollow\n\n", _class=http.client.HTTPMessage
    )
    assert flags(page_directives(message, None, BOT)) == {"noindex", "nofollow"}
    assert flags(page_directives((pair for pair in [("X-Robots-Tag", "none")]), None, BOT)) == {
        "noindex",
        "nofollow",
    }


# -- BOTNAME: -------------------------------------------------------------------------------------


GOOGLE_EXAMPLE = ("googlebot: nofollow", "otherbot: noindex, nofollow")


def test_google_bot_name_example() -> None:
    assert flags(xrt(*GOOGLE_EXAMPLE, agent="Googlebot")) == {"nofollow"}
    assert flags(xrt(*GOOGLE_EXAMPLE, agent="otherbot")) == {"noindex", "nofollow"}
    assert flags(xrt(*GOOGLE_EXAMPLE, agent="thirdbot")) == set()


def test_a_bot_name_holds_until_the_next_one_within_a_line() -> None:
    value = "noarchive, mybot: noindex, nofollow, otherbot: nosnippet, notranslate"
    assert flags(xrt(value)) == {"noarchive", "noindex", "nofollow"}
    assert flags(xrt(value, agent="otherbot")) == {"noarchive", "nosnippet", "notranslate"}
    # ...and not into the next line
    assert flags(xrt("otherbot: noindex", "nofollow")) == {"nofollow"}


def test_the_last_of_consecutive_names_counts() -> None:
    assert flags(xrt("otherbot: mybot: noindex")) == {"noindex"}
    assert flags(xrt("mybot: otherbot: noindex")) == set()
    assert flags(xrt("mybot:", "noindex, mybot:")) == {"noindex"}


def test_rules_that_take_values_are_not_bot_names() -> None:
    directives = xrt("unavailable_after: 2020-09-21, max-snippet: 5, max-image-preview: none")
    assert directives.agent is None
    assert directives.max_snippet == 5
    assert directives.max_image_preview == "none"
    assert directives.unavailable_after == datetime.datetime(2020, 9, 21, tzinfo=UTC)


def test_statements_say_which_crawler_they_name() -> None:
    directives = xrt("noarchive, MyBot: noindex")
    assert [(s.rule.name, s.agent) for s in directives.statements] == [
        ("noarchive", None),
        ("noindex", "mybot"),
    ]
    assert directives.agent == "mybot"


def test_a_user_agent_header_gives_its_product_tokens() -> None:
    agent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    assert flags(xrt(*GOOGLE_EXAMPLE, agent=agent)) == {"nofollow"}
    assert xrt(*GOOGLE_EXAMPLE, agent=agent).agent == "googlebot"
    assert flags(xrt("mybot: noindex", agent=b"MyBot/1.0")) == {"noindex"}


def test_the_first_token_that_a_statement_names_is_the_crawlers() -> None:
    agent = "FirstBot/1.0 SecondBot/2.0"
    assert xrt("secondbot: noindex", "firstbot: nofollow", agent=agent).agent == "firstbot"
    assert flags(xrt("secondbot: noindex", "firstbot: nofollow", agent=agent)) == {"nofollow"}
    assert flags(xrt("secondbot: noindex", agent=agent)) == {"noindex"}


def test_names_are_compared_whole() -> None:
    # no prefix match and no cut at digits: mybot-1 is not mybot, nor mybot-
    assert flags(xrt("MyBot-1: noindex", agent="MyBot")) == set()
    assert flags(xrt("MyBot-1: noindex", agent="MyBot-1")) == {"noindex"}
    assert flags(xrt("googlebot: noindex", agent="Googlebot-News")) == set()


def test_star_and_robots_address_every_crawler() -> None:
    assert flags(xrt("*: noindex")) == {"noindex"}
    assert flags(xrt("robots: nofollow")) == {"nofollow"}


def test_an_empty_user_agent_reads_only_what_is_for_every_crawler() -> None:
    assert flags(xrt("noarchive, mybot: noindex", agent="")) == {"noarchive"}


# -- values ----------------------------------------------------------------------------------------


def test_unavailable_after_keeps_the_comma_of_its_date() -> None:
    directives = xrt("unavailable_after: Sunday, 01-Jan-2023 15:00:00 UTC, noindex")
    assert directives.unavailable_after == datetime.datetime(2023, 1, 1, 15, tzinfo=UTC)
    assert flags(directives) == {"noindex"}
    assert directives.statements[0].text == "unavailable_after: Sunday, 01-Jan-2023 15:00:00 UTC"
    assert directives.warnings == ()


def test_the_earliest_date_wins() -> None:
    directives = xrt("unavailable_after: 2030-01-01", "unavailable_after: 25 Jun 2010 15:00:00 PST")
    assert directives.unavailable_after == datetime.datetime(2010, 6, 25, 23, tzinfo=UTC)


def test_an_unreadable_date_is_a_warning_and_ignored() -> None:
    directives = xrt("unavailable_after: someday, noindex")
    assert directives.unavailable_after is None
    assert flags(directives) == {"noindex"}
    (warning,) = directives.warnings
    assert (warning.code, warning.source, warning.text) == (
        "bad-date",
        "X-Robots-Tag header 1",
        "unavailable_after: someday",
    )


def test_a_weekday_at_the_end_is_no_date() -> None:
    assert codes(xrt("noindex, unavailable_after: Sunday")) == ["bad-date"]


def test_a_weekday_takes_the_next_piece_only_if_they_make_a_date() -> None:
    directives = xrt("unavailable_after: Sunday, mybot: noindex")
    assert codes(directives) == ["bad-date"]
    assert flags(directives) == {"noindex"}
    assert directives.warnings[0].text == "unavailable_after: Sunday"


def test_limits_the_smallest_wins_and_minus_one_is_no_limit() -> None:
    directives = xrt("max-snippet:-1, max-snippet: 50", "max-video-preview:-1", "max-snippet:20")
    assert (directives.max_snippet, directives.max_video_preview) == (20, -1)
    assert not directives.nosnippet
    assert xrt("max-snippet:-1").max_snippet == -1
    assert xrt("noindex").max_snippet is None


def test_max_snippet_zero_is_nosnippet() -> None:
    directives = xrt("max-snippet:0, max-snippet:30")
    assert directives.max_snippet == 0 and directives.nosnippet


def test_the_smallest_image_preview_wins() -> None:
    assert (
        xrt("max-image-preview:large, max-image-preview:STANDARD").max_image_preview == "standard"
    )
    assert xrt("max-image-preview:large", "max-image-preview:none").max_image_preview == "none"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("max-snippet: lots", "bad-value"),
        ("max-snippet:-2", "bad-value"),
        ("max-snippet:1.5", "bad-value"),
        ("max-snippet:", "missing-value"),
        ("max-snippet", "missing-value"),
        ("max-video-preview: 9999999999", "bad-value"),
        ("max-image-preview: huge", "bad-value"),
        ("unavailable_after", "missing-value"),
        ("noindexx", "unknown-rule"),
        ("no-index", "unknown-rule"),
        ("foo bar: noindex", "unknown-rule"),
        ("*;noindex", "unknown-rule"),
        ("noindex: yes", "value-ignored"),
    ],
)
def test_what_cannot_be_read_is_a_warning(value: str, code: str) -> None:
    directives = xrt(value)
    assert codes(directives) == [code]
    assert directives.warnings[0].source == "X-Robots-Tag header 1"
    assert all(w.message for w in directives.warnings)


def test_a_flag_with_a_value_still_counts() -> None:
    assert flags(xrt("noindex: yes")) == {"noindex"}


def test_warnings_about_statements_for_other_crawlers_are_kept() -> None:
    directives = xrt("otherbot: noindexx")
    assert directives.statements == () and codes(directives) == ["unknown-rule"]


# -- meta tags ------------------------------------------------------------------------------------


def test_meta_robots_and_the_crawlers_own_name() -> None:
    # Google: "<meta name="robots" content="nofollow"> <meta name="googlebot" content="noindex">"
    # is noindex, nofollow for Googlebot.
    tags = [("robots", "nofollow"), ("googlebot", "noindex"), ("bingbot", "noarchive")]
    assert flags(page_directives(None, tags, "Googlebot")) == {"noindex", "nofollow"}
    assert flags(page_directives(None, tags, "bingbot")) == {"nofollow", "noarchive"}
    assert flags(page_directives(None, tags, "MyBot")) == {"nofollow"}


def test_meta_sources_and_agents() -> None:
    directives = meta(("description", "about, cats"), ("robots", "noindex"), ("mybot", "nofollow"))
    assert [(s.source, s.agent) for s in directives.statements] == [
        ("meta tag 2 (robots)", None),
        ("meta tag 3 (mybot)", "mybot"),
    ]
    assert directives.warnings == ()  # the description is not read


def test_meta_names_any_case_and_bytes() -> None:
    assert flags(page_directives(None, [(b" ROBOTS ", b"NOINDEX")], BOT)) == {"noindex"}
    assert flags(meta(("MyBot", "noindex"))) == {"noindex"}


def test_no_bot_names_inside_meta_content() -> None:
    directives = meta(("robots", "otherbot: noindex, nofollow"))
    assert flags(directives) == {"nofollow"}
    assert codes(directives) == ["unknown-rule"]


def test_meta_dates_with_commas() -> None:
    directives = meta(
        ("googlebot", "unavailable_after: Wed, 31 Dec 2025 23:59:59 GMT"), agent="Googlebot"
    )
    assert directives.unavailable_after == datetime.datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_meta_without_content_and_empty_content() -> None:
    directives = meta(("robots", None), ("robots", ""), ("robots", " , "))  # type: ignore[arg-type]
    assert directives.statements == () and directives.warnings == ()


def test_headers_and_meta_together() -> None:
    page = b'<head><meta name="robots" content="noarchive"><meta name="mybot" content="nosnippet">'
    directives = page_directives({"X-Robots-Tag": "mybot: noindex"}, robots_meta_tags(page), BOT)
    assert flags(directives) == {"noindex", "noarchive", "nosnippet"}
    assert [s.source for s in directives.statements] == [
        "X-Robots-Tag header 1",
        "meta tag 1 (robots)",
        "meta tag 2 (mybot)",
    ]


def test_a_meta_name_makes_its_token_the_crawlers() -> None:
    agent = "FirstBot/1.0 SecondBot/2.0"
    directives = page_directives(
        {"X-Robots-Tag": "secondbot: noindex"}, [("firstbot", "nofollow")], agent
    )
    assert directives.agent == "firstbot"
    assert flags(directives) == {"nofollow"}


# -- Robots-Tag (draft-illyes-repext-03) --------------------------------------------------------


def test_robots_tag_structured_list() -> None:
    header = {"Robots-Tag": "*;nosnippet, ExampleBot;noindex"}
    assert flags(page_directives(header, None, "ExampleBot")) == {"nosnippet", "noindex"}
    assert flags(page_directives(header, None, "OtherBot")) == {"nosnippet"}
    statement = page_directives(header, None, "ExampleBot").statements[1]
    assert (statement.source, statement.agent, statement.text) == (
        "Robots-Tag header",
        "examplebot",
        "ExampleBot;noindex",
    )


def test_robots_tag_lines_are_one_list() -> None:
    directives = page_directives(
        [("Robots-Tag", "*;noarchive"), ("robots-tag", "MyBot;noai")], None, BOT
    )
    assert flags(directives) == {"noarchive", "noai"}


def test_robots_tag_values_as_parameters() -> None:
    directives = page_directives(
        {
            "Robots-Tag": "*;max-snippet=20;max-image-preview=standard;"
            'unavailable_after="2020-09-21"'
        },
        None,
        BOT,
    )
    assert (directives.max_snippet, directives.max_image_preview) == (20, "standard")
    assert directives.unavailable_after == datetime.datetime(2020, 9, 21, tzinfo=UTC)
    dated = page_directives({"Robots-Tag": "*;unavailable_after=@1600646400"}, None, BOT)
    assert dated.unavailable_after == datetime.datetime(2020, 9, 21, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("noindex", ["no-rules"]),  # a product token named noindex with no rule
        ("*;noindex, (a b);nofollow", ["not-structured"]),
        ("googlebot: noindex", ["not-structured"]),
        ("*;nothing", ["unknown-rule"]),
        ("*;noindex=?0", ["value-ignored"]),
        ("*;max-snippet=big", ["bad-value"]),
        ("*;max-snippet=?1", ["bad-value"]),
        ('*;unavailable_after="soon"', ["bad-date"]),
    ],
)
def test_robots_tag_warnings(value: str, expected: list[str]) -> None:
    directives = page_directives({"Robots-Tag": value}, None, BOT)
    assert codes(directives) == expected
    assert all(w.source == "Robots-Tag header" for w in directives.warnings)


# -- purposes --------------------------------------------------------------------------------------

PAST = datetime.datetime(2020, 1, 1, tzinfo=UTC)
FUTURE = datetime.datetime(2100, 1, 1, tzinfo=UTC)
NOW = datetime.datetime(2050, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("rules", "purpose", "image", "allowed"),
    [
        ("noindex", "search", False, False),
        ("none", "search", False, False),
        ("nosnippet", "search", False, True),
        ("noimageindex", "search", False, True),
        ("noimageindex", "search", True, False),
        ("noindex", "search", True, False),
        ("noai", "train-ai", False, False),
        ("noai", "train-ai", True, False),
        ("noimageai", "train-ai", False, True),
        ("noimageai", "train-ai", True, False),
        ("noindex", "train-ai", False, True),
        ("noai", "ai-train", False, False),
        ("nosnippet", "ai-input", False, False),
        ("max-snippet:0", "ai-input", False, False),
        ("max-snippet:10", "ai-input", False, True),
        ("noai", "ai-input", False, False),
        ("noimageai", "ai-input", True, False),
        ("noindex", "ai-input", False, True),
        ("nofollow, noarchive, notranslate, max-image-preview:none", "search", True, True),
        ("nofollow, noarchive, notranslate, max-image-preview:none", "train-ai", True, True),
        ("nofollow, noarchive, notranslate, max-image-preview:none", "ai-input", True, True),
        ("all", "search", False, True),
        ("", "train-ai", False, True),
    ],
)
def test_usage(rules: str, purpose: str, image: bool, allowed: bool) -> None:
    decision = xrt(rules).usage(purpose, image=image, now=NOW)
    assert decision.allowed is allowed
    assert decision.purpose == ("train-ai" if purpose == "ai-train" else purpose)
    assert decision.preference == ("unknown" if allowed else "disallowed")
    assert (decision.statement is None) is allowed


def test_unavailable_after_is_noindex_once_passed() -> None:
    directives = xrt("unavailable_after: 2030-06-01T12:00:00Z")
    date = directives.unavailable_after
    assert date is not None and not directives.noindex
    assert directives.usage("search", now=date).allowed
    decision = directives.usage("search", now=date + datetime.timedelta(seconds=1))
    assert not decision.allowed
    assert decision.reason == (
        "search disallowed by X-Robots-Tag header 1: "
        "unavailable_after: 2030-06-01T12:00:00Z (noindex)"
    )
    assert directives.restrictions(PAST) == frozenset()
    assert directives.restrictions(FUTURE) == {"noindex"}
    assert xrt("unavailable_after: 2100-01-01").usage("search").allowed  # now: the current time
    assert not xrt("unavailable_after: 2020-01-01").usage("search").allowed


def test_a_naive_now_is_utc() -> None:
    directives = xrt("unavailable_after: 2030-06-01T12:00:00Z")
    assert directives.usage("search", now=datetime.datetime(2030, 6, 1, 12, 0, 1)).allowed is False
    assert directives.usage("search", now=datetime.datetime(2030, 6, 1, 11, 59)).allowed is True


def test_the_first_statement_that_forbids_decides() -> None:
    directives = page_directives({"X-Robots-Tag": "noarchive, none"}, [("robots", "noindex")], BOT)
    decision = directives.usage("search")
    assert decision.statement is directives.statements[1]
    assert decision.reason == "search disallowed by X-Robots-Tag header 1: none (noindex)"
    assert directives.usage("train-ai").reason == "no page directive restricts train-ai"
    assert (
        directives.usage("train-ai", image=True).reason
        == "no page directive restricts train-ai of images"
    )


def test_restrictions() -> None:
    directives = xrt("none, max-snippet:0, noimageai, indexifembedded")
    assert directives.restrictions(NOW) == {"noindex", "nofollow", "nosnippet", "noimageai"}


# -- limits ----------------------------------------------------------------------------------------


def test_a_long_line_is_read_up_to_the_limit_without_the_rule_cut() -> None:
    value = "noarchive, " + "x" * (MAX_FIELD_CHARS - 20) + ", noindex, nofollow"
    directives = xrt(value)
    assert flags(directives) == {"noarchive"}
    assert codes(directives) == ["too-long", "unknown-rule"]
    fits = "noarchive," + " " * (MAX_FIELD_CHARS - 20) + "noindex"
    assert flags(xrt(fits)) == {"noarchive", "noindex"} and codes(xrt(fits)) == []


def test_a_long_meta_content_is_bounded_too() -> None:
    directives = meta(("robots", "nofollow," + " " * MAX_FIELD_CHARS + ",noindex"))
    assert flags(directives) == {"nofollow"} and codes(directives) == ["too-long"]


def test_too_many_header_lines_and_meta_tags() -> None:
    lines = [("X-Robots-Tag", "noarchive")] * MAX_SOURCES + [("X-Robots-Tag", "noindex")] * 10
    directives = page_directives(
        lines, [("robots", "nosnippet")] * MAX_SOURCES + [("robots", "nofollow")], BOT
    )
    assert flags(directives) == {"noarchive", "nosnippet"}
    assert codes(directives) == ["too-many", "too-many"]
    assert len(directives.statements) == 2 * MAX_SOURCES


def test_statements_and_warnings_are_bounded() -> None:
    line = ",".join(["noindex", "noindexx"] * 400)
    directives = xrt(*[line] * 10)
    assert len(directives.statements) == MAX_STATEMENTS
    assert len(directives.warnings) == MAX_WARNINGS + 1
    assert directives.warnings[-1].code == "too-many"
    assert directives.noindex


def test_long_runs_of_names_are_read_in_one_pass() -> None:
    directives = xrt("a: " * 2000 + "mybot: noindex", agent="MyBot")
    assert flags(directives) == {"noindex"}
    assert flags(xrt("mybot: " + "a: " * 2000 + "noindex")) == set()


# -- misuse ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "meta_tags", "agent"),
    [
        ("noindex", None, BOT),
        (b"X-Robots-Tag: noindex", None, BOT),
        (["noindex"], None, BOT),
        ([("X-Robots-Tag", "noindex", "extra")], None, BOT),
        ([("X-Robots-Tag", 1)], None, BOT),
        ([(1, "noindex")], None, BOT),
        (42, None, BOT),
        (None, "robots", BOT),
        (None, [("robots", 1)], BOT),
        (None, [("robots",)], BOT),
        (None, None, None),
        (None, None, 42),
    ],
)
def test_wrong_types_are_type_errors(headers: object, meta_tags: object, agent: object) -> None:
    with pytest.raises(TypeError):
        page_directives(headers, meta_tags, agent)  # type: ignore[arg-type]


def test_the_value_of_a_header_it_does_not_read_is_not_its_concern() -> None:
    # Only X-Robots-Tag and Robots-Tag values are read (and typed); tdm_reservation reads
    # its own headers the same way.
    headers = [("Content-Length", 5), ("X-Robots-Tag", "noindex")]
    directives = page_directives(headers, None, BOT)  # type: ignore[list-item]
    assert directives.noindex and not directives.nofollow


def test_usage_misuse() -> None:
    directives = xrt("noindex")
    with pytest.raises(ValueError, match="unknown usage category"):
        directives.usage("archive")
    with pytest.raises(TypeError):
        directives.usage(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        directives.usage("search", image="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        directives.usage("search", now="2020-01-01")  # type: ignore[arg-type]


def test_directives_are_immutable() -> None:
    directives = xrt("noindex")
    with pytest.raises(AttributeError):
        directives.noindex = False  # type: ignore[misc]


# -- no exception on content ----------------------------------------------------------------------

PIECES = [
    "noindex",
    "nofollow",
    "none",
    "all",
    ",",
    ":",
    ";",
    " ",
    "\t",
    "mybot",
    "MyBot:",
    "*",
    "=",
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
    "-1",
    "0",
    "99999999999999",
    "Sunday",
    "01-Jan-2023 15:00:00 UTC",
    "2025-12-31",
    "@",
    '"',
    "?1",
    "(",
    ")",
    "large",
    "\x00",
    "\ufffd",
    "é",
    "\r\n",
    "[",
    "]",
]


def test_random_headers_and_meta_never_raise() -> None:
    rng = random.Random(1996)
    for _ in range(3000):
        value = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 30)))
        noise = "".join(rng.choice(string.printable) for _ in range(rng.randrange(0, 30)))
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
        headers = [
            ("X-Robots-Tag", value),
            ("X-Robots-Tag", noise),
            (b"X-Robots-Tag", raw),
            ("Robots-Tag", value),
            (b"Robots-Tag", raw),
        ]
        tags = [("robots", value), ("mybot", noise), ("robots", raw)]
        for agent in ("MyBot", "Mozilla/5.0 (compatible; MyBot/1.0)", value, raw):
            directives = page_directives(headers, tags, agent)
            for purpose in USAGE_CATEGORIES:
                directives.usage(purpose, image=True, now=NOW)
            directives.restrictions(NOW)


def test_the_documentation_session_is_what_the_engine_answers() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "page-directives.rst"
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0
