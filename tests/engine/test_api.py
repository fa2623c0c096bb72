"""The parsed object's contract: immutable, picklable, printable, and precise about lines."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from scrapy_rerp.engine import (
    GYM2008,
    MK1996,
    RFC9309,
    WARNING_CODES,
    Decision,
    Group,
    ParseWarning,
    RequestRate,
    RobotsTxt,
    VisitTime,
    _robots,
    parse,
)
from tests.support.syntaxes import ALL

SITE = "https://example.com"

ROBOTS = """\
# example
User-agent: mybot
Disallow: /private
Allow: /private/open
Crawl-delay: 2

User-agent: *
Disallow: /*.pdf$
Disallow: /tmp
Request-rate: 1/5s
Visit-time: 0100-0500

Sitemap: https://example.com/sitemap.xml
Host: example.com
Clean-param: ref
this line is junk
"""

URLS = [
    "/",
    "/private",
    "/private/open",
    "/private/open/x",
    "/tmp/x",
    "/a.pdf",
    "/a.pdf?x",
    "/robots.txt",
]
AGENTS = ["mybot", "otherbot", "Mozilla/5.0 (compatible; mybot/1.0)"]


def verdicts(robots: RobotsTxt) -> list[bool]:
    return [robots.allowed(SITE + url, agent) for url in URLS for agent in AGENTS]


# -- immutability ------------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_attributes_cannot_be_set(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    for name in ("sitemaps", "host", "syntax", "_groups", "anything"):
        with pytest.raises(AttributeError):
            setattr(robots, name, None)
    assert robots.host == "example.com"


@pytest.mark.parametrize("syntax", ALL)
def test_attributes_cannot_be_deleted(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    before = verdicts(robots)
    for name in ("_groups", "_sitemaps", "_host", "sitemaps"):
        with pytest.raises(AttributeError):
            delattr(robots, name)
    assert verdicts(robots) == before
    assert robots.sitemaps == ("https://example.com/sitemap.xml",)


@pytest.mark.parametrize("syntax", ALL)
def test_returned_collections_are_immutable(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    assert isinstance(robots.sitemaps, tuple)
    assert isinstance(robots.warnings, tuple)
    assert isinstance(robots.clean_params, tuple)
    assert isinstance(robots.groups, tuple)
    group = robots.groups[0]
    assert isinstance(group, Group)
    with pytest.raises(AttributeError):
        group.agents = ("x",)  # type: ignore[misc]
    assert isinstance(group.rules, tuple)


@pytest.mark.parametrize("syntax", ALL)
def test_every_way_of_making_one_gives_a_frozen_robots_txt(syntax: int) -> None:
    # However it was made, its attributes stay as they are.
    made = [
        parse(ROBOTS, syntax),
        RobotsTxt.allow_all(syntax),
        RobotsTxt.disallow_all(syntax),
        pickle.loads(pickle.dumps(parse(ROBOTS, syntax))),
        copy.deepcopy(parse(ROBOTS, syntax)),
    ]
    family = type(made[0])  # the subclass that reads the syntax (docs/design.rst)
    assert issubclass(family, RobotsTxt) and family is not RobotsTxt
    for robots in made:
        assert type(robots) is family
        with pytest.raises(AttributeError):
            robots._groups = ()  # type: ignore[misc]
        with pytest.raises(AttributeError):
            del robots._host


def test_every_syntax_is_read_by_one_family() -> None:
    families = {syntax: type(parse(ROBOTS, syntax)) for syntax in (MK1996, GYM2008, RFC9309)}
    assert families[MK1996] is families[GYM2008]  # rerp's reading, with or without wildcards
    assert families[RFC9309] is not families[MK1996]
    for syntax, family in families.items():
        assert type(RobotsTxt.allow_all(syntax)) is family
        # Each family answers every query itself: none is left to RobotsTxt's placeholder.
        for name in (
            "allowed",
            "_rules_path",
            "_decide",
            "_applying_groups",
            "_extra",
            "_usage_statements",
            "_usage_pattern",
            "__str__",
        ):
            assert getattr(family, name) is not getattr(RobotsTxt, name), (syntax, name)


def test_robots_txt_cannot_be_built_directly() -> None:
    with pytest.raises(TypeError):
        RobotsTxt()


# -- pickling ---------------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(protocol: int, syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    before = verdicts(robots)  # queried before pickling, so any memo is filled
    clone = pickle.loads(pickle.dumps(robots, protocol=protocol))
    assert type(clone) is type(robots)
    assert isinstance(clone, RobotsTxt)
    assert clone.syntax == syntax
    assert verdicts(clone) == before
    assert clone.sitemaps == robots.sitemaps
    assert clone.host == robots.host
    assert clone.clean_params == robots.clean_params
    assert clone.warnings == robots.warnings
    assert clone.groups == robots.groups
    assert str(clone) == str(robots)
    for url in URLS:
        assert clone.decide(SITE + url, "mybot") == robots.decide(SITE + url, "mybot")
    with pytest.raises(AttributeError):
        clone._groups = ()  # type: ignore[misc]


def test_the_pickle_format_is_pinned() -> None:
    robots = parse(
        "User-agent: a\nUser-agent: b\nDisallow: /x\n# c\nAllow: /x/index.html\nCrawl-delay: 2\n"
        "Sitemap: https://e.com/s.xml\nHost: e.com\nClean-param: ref\njunk\n"
    )
    function, (pickle_format, state) = robots.__reduce__()
    assert pickle_format == ("scrapy_rerp.RobotsTxt", 3)
    assert state == (
        RFC9309,
        (
            (
                ("a", "b"),
                ((False, "/x", 3), (True, "/x/index.html", 5), (True, "/x/$", 5)),
                ((2, "Crawl-delay", "2", 6),),
                1,
            ),
        ),
        (("Sitemap", ("https://e.com/s.xml",)), ("Host", ("e.com",)), ("Clean-param", ("ref",))),
        ((10, "junk", "not a robots.txt directive", "unknown-directive"),),
    )
    # Every value in it is a builtin: per-group values as the text written back.
    assert function(pickle_format, state).groups == robots.groups


# A RobotsTxt pickled before pickle format 1: a call of RobotsTxt._build with the stored layout.
_OLD_PICKLE = (
    b"\x80\x04\x95W\x00\x00\x00\x00\x00\x00\x00\x8c\x1ascrapy_rerp.engine._robots\x94\x8c\x10"
    b"RobotsTxt._build\x94\x93\x94(K\x03(\x8c\x01*\x94\x85\x94\x8c\x02/x\x94\x85\x94NK\x02)K\x01"
    b"\x88t\x94\x85\x94)N))t\x94R\x94."
)


def test_an_old_pickle_is_refused_with_a_clear_error() -> None:
    with pytest.raises(pickle.UnpicklingError, match="older scrapy_rerp"):
        pickle.loads(_OLD_PICKLE)


class _Foreign:
    """Reduces as a RobotsTxt of another pickle format would."""

    def __init__(self, pickle_format: object, state: object) -> None:
        self.reduced = (_robots._unpickle, (pickle_format, state))

    def __reduce__(self) -> tuple[Any, ...]:
        return self.reduced


@pytest.mark.parametrize(
    "pickle_format",
    [
        ("scrapy_rerp.RobotsTxt", 1),
        ("scrapy_rerp.RobotsTxt", 2),
        ("scrapy_rerp.RobotsTxt", 4),
        ("scrapy_rerp.RobotsTxt", 0),
        ("other", 3),
    ],
)
def test_a_pickle_of_another_format_is_refused(pickle_format: object) -> None:
    _, (_, state) = parse("User-agent: *\nDisallow: /x\n").__reduce__()
    data = pickle.dumps(_Foreign(pickle_format, state))
    with pytest.raises(pickle.UnpicklingError, match="format"):
        pickle.loads(data)


@pytest.mark.parametrize("syntax", ALL)
def test_extensions_survive_pickling(syntax: int) -> None:
    robots = pickle.loads(pickle.dumps(parse(ROBOTS, syntax)))
    assert robots.crawl_delay("mybot") == 2.0
    assert robots.request_rate("otherbot") == RequestRate(1, 5.0)
    visit = robots.visit_time("otherbot")
    assert isinstance(visit, VisitTime)
    assert (visit.start_time.hour, visit.end_time.hour) == (1, 5)


@pytest.mark.parametrize("syntax", ALL)
def test_copies_answer_the_same(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    assert verdicts(copy.copy(robots)) == verdicts(robots)
    assert verdicts(copy.deepcopy(robots)) == verdicts(robots)


@pytest.mark.parametrize("syntax", ALL)
def test_allow_all_and_disallow_all_pickle(syntax: int) -> None:
    for robots in (RobotsTxt.allow_all(syntax), RobotsTxt.disallow_all(syntax)):
        clone = pickle.loads(pickle.dumps(robots))
        assert verdicts(clone) == verdicts(robots)


# -- rendering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_str_renders_the_rules(syntax: int) -> None:
    text = str(parse(ROBOTS, syntax))
    for line in (
        "User-agent: mybot",
        "Disallow: /private",
        "Allow: /private/open",
        "User-agent: *",
        "Disallow: /*.pdf$",
        "Disallow: /tmp",
    ):
        assert line in text.splitlines()
    assert "https://example.com/sitemap.xml" in text
    assert "junk" not in text


def test_str_rfc_round_trips() -> None:
    """RFC9309's rendering is itself a robots.txt that parses to the same answers."""
    robots = parse(ROBOTS, RFC9309)
    again = parse(str(robots), RFC9309)
    assert verdicts(again) == verdicts(robots)
    assert again.sitemaps == robots.sitemaps
    assert again.host == robots.host
    assert again.clean_params == robots.clean_params
    assert again.crawl_delay("mybot") == robots.crawl_delay("mybot")
    assert again.request_rate("otherbot") == robots.request_rate("otherbot")
    assert again.visit_time("otherbot") == robots.visit_time("otherbot")
    assert again.warnings == ()


@pytest.mark.parametrize("syntax", ALL)
def test_repr_names_the_syntax(syntax: int) -> None:
    text = repr(parse(ROBOTS, syntax))
    assert {MK1996: "MK1996", GYM2008: "GYM2008", RFC9309: "RFC9309"}[syntax] in text


# -- allow_all / disallow_all ---------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_allow_all(syntax: int) -> None:
    robots = RobotsTxt.allow_all(syntax)
    assert robots.syntax == syntax
    assert all(verdicts(robots))
    assert robots.decide(SITE + "/x", "bot").allowed is True
    assert robots.crawl_delay("bot") is None
    assert robots.sitemaps == () and robots.host is None and robots.warnings == ()


@pytest.mark.parametrize("syntax", ALL)
def test_disallow_all(syntax: int) -> None:
    robots = RobotsTxt.disallow_all(syntax)
    assert robots.syntax == syntax
    for url in ("/", "/x", "/a/b?c"):
        for agent in AGENTS:
            assert robots.allowed(SITE + url, agent) is False
    assert robots.decide(SITE + "/x", "bot").allowed is False


def test_default_syntax_is_rfc9309() -> None:
    assert parse("").syntax == RFC9309
    assert RobotsTxt.allow_all().syntax == RFC9309
    assert RobotsTxt.disallow_all().syntax == RFC9309
    # RFC9309's /robots.txt exception shows the syntax in use.
    assert RobotsTxt.disallow_all().allowed(SITE + "/robots.txt", "bot") is True


# -- decisions -------------------------------------------------------------------------------


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line == needle)


@pytest.mark.parametrize(
    ("syntax", "url", "agent", "expected"),
    [
        (RFC9309, "/private/x", "mybot", (False, "Disallow: /private")),
        (RFC9309, "/private/open/x", "mybot", (True, "Allow: /private/open")),
        (RFC9309, "/tmp/x", "otherbot", (False, "Disallow: /tmp")),
        (RFC9309, "/a.pdf", "otherbot", (False, "Disallow: /*.pdf$")),
        (GYM2008, "/a.pdf", "otherbot", (False, "Disallow: /*.pdf$")),
        (GYM2008, "/private/x", "mybot", (False, "Disallow: /private")),
        # first match: Disallow: /private comes before Allow: /private/open
        (GYM2008, "/private/open/x", "mybot", (False, "Disallow: /private")),
        (MK1996, "/private/open/x", "mybot", (False, "Disallow: /private")),
        (MK1996, "/tmp/x", "otherbot", (False, "Disallow: /tmp")),
    ],
)
def test_decision_points_at_the_deciding_line(
    syntax: int, url: str, agent: str, expected: tuple[bool, str]
) -> None:
    decision = parse(ROBOTS, syntax).decide(SITE + url, agent)
    assert isinstance(decision, Decision)
    verdict, rule = expected
    assert decision.allowed is verdict
    assert decision.rule == rule
    assert decision.line == line_of(ROBOTS, rule)
    assert decision.reason


@pytest.mark.parametrize("syntax", ALL)
def test_the_group_of_a_decision_s_line(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    assert robots.agents_at(line_of(ROBOTS, "Disallow: /private")) == ("mybot",)
    assert robots.agents_at(line_of(ROBOTS, "Disallow: /tmp")) == ("*",)
    # Lines holding no rule: a User-agent line, a comment, an extension, past the end.
    for line in (1, 2, line_of(ROBOTS, "Crawl-delay: 2"), 999):
        assert robots.agents_at(line) is None
    # Rules on lines apart (a comment between) and a group of two agents.
    scattered = "User-agent: a\nUser-agent: b\nDisallow: /x\n# c\nAllow: /y\n"
    assert parse(scattered, syntax).agents_at(5) == ("a", "b")
    assert parse(scattered, syntax).agents_at(4) is None


@pytest.mark.parametrize("syntax", ALL)
def test_the_agents_a_crawler_is_matched_by(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    assert robots.matched_agents("mybot") == ("mybot",)
    assert robots.matched_agents("Mozilla/5.0 (compatible; MyBot/1.0)") == ("mybot",)
    assert robots.matched_agents("otherbot") == ("*",)
    assert parse("User-agent: a\nDisallow: /\n", syntax).matched_agents("b") == ()
    assert parse("User-agent: A\nUser-agent: B\nDisallow: /\n", syntax).matched_agents("b") == (
        "B",
    )


@pytest.mark.parametrize("syntax", ALL)
def test_decision_without_a_rule(syntax: int) -> None:
    robots = parse(ROBOTS, syntax)
    for url, agent in (("/public", "mybot"), ("/public", "otherbot")):
        decision = robots.decide(SITE + url, agent)
        assert decision == Decision(True, None, None, decision.reason)
        assert decision.reason
    no_group = parse("User-agent: a\nDisallow: /\n", syntax).decide(SITE + "/x", "b")
    assert (no_group.allowed, no_group.line, no_group.rule) == (True, None, None)
    assert no_group.reason != decision.reason


def test_decision_robots_txt_in_rfc() -> None:
    decision = parse("User-agent: *\nDisallow: /\n", RFC9309).decide(SITE + "/robots.txt", "b")
    assert (decision.allowed, decision.line, decision.rule) == (True, None, None)
    assert "robots.txt" in decision.reason


def test_decision_line_counts_every_kind_of_line() -> None:
    text = "\ufeff# c\r\n\r\nUser-agent: *\rjunk\nAllow: /a\n\n\nDisallow: /a/b\n"
    robots = parse(text.encode(), RFC9309)
    assert robots.decide(SITE + "/a/b/c", "bot").line == 8
    assert robots.decide(SITE + "/a/c", "bot").line == 5
    assert [w.line for w in robots.warnings] == [4]


def test_decision_line_of_merged_groups() -> None:
    text = "User-agent: a\nDisallow: /x\nUser-agent: b\nAllow: /\nUser-agent: a\nDisallow: /yy\n"
    robots = parse(text, RFC9309)
    assert robots.decide(SITE + "/x", "a").line == 2
    assert robots.decide(SITE + "/yy", "a").line == 6


def test_decision_line_of_index_html_allow() -> None:
    text = "User-agent: *\nDisallow: /\nAllow: /d/index.html\n"
    decision = parse(text, RFC9309).decide(SITE + "/d/", "bot")
    assert decision.allowed is True
    assert decision.line == 3


def test_groups_report_first_lines_and_rules() -> None:
    robots = parse(ROBOTS, RFC9309)
    groups: list[Any] = list(robots.groups)
    assert [g.agents for g in groups] == [("mybot",), ("*",)]
    assert [g.line for g in groups] == [2, 7]
    assert groups[0].rules == ((False, "/private", 3), (True, "/private/open", 4))


# -- names for the syntaxes, Decision.line of google's index.html rule, non-ASCII agents ------


@pytest.mark.parametrize(
    ("name", "constant"),
    [("rfc9309", RFC9309), ("GYM2008", GYM2008), (" Mk1996 ", MK1996), (GYM2008, GYM2008)],
)
def test_parse_takes_a_syntax_by_name_or_constant(name: object, constant: int) -> None:
    body = "User-agent: *\nDisallow: *\nDisallow: /\nAllow: /public\n"
    assert parse(body, syntax=name).decide("https://e.com/public", "a") == parse(
        body, syntax=constant
    ).decide("https://e.com/public", "a")
    with pytest.raises(ValueError, match="names 'mk1996', 'gym2008', 'rfc9309'"):
        parse(body, syntax="rfc")


def test_decision_line_of_the_index_html_rule() -> None:
    robots = parse("User-agent: *\nDisallow: /a\n\nAllow: /m/index.html\nDisallow: /z\n")
    assert robots.decide("https://e.com/m/index.html", "a")[:3] == (
        True,
        4,
        "Allow: /m/index.html",
    )
    # google's derived rule for the directory has the line of the rule it comes from.
    assert robots.decide("https://e.com/m/", "a")[:2] == (True, 4)
    assert robots.decide("https://e.com/z", "a")[:2] == (False, 5)


def test_a_group_named_with_non_ascii_letters_applies_to_that_whole_name() -> None:
    robots = parse(
        "User-agent: UnicödeBöt\nDisallow: /\nCrawl-delay: 3\n\nUser-agent: *\nAllow: /\n"
    )
    for caller in ("UnicödeBöt", "unicödeböt", "UNICÖDEBÖT"):
        assert not robots.allowed("https://e.com/x", caller)
        assert robots.crawl_delay(caller) == 3
    # RFC 9309's token of the value is still "unic", as google/robotstxt reads it.
    assert not robots.allowed("https://e.com/x", "unic")
    assert robots.allowed("https://e.com/x", "UnicödeBot")
    assert robots.allowed("https://e.com/x", "other")


@pytest.mark.parametrize("syntax", ALL)
def test_every_warning_has_a_code_programs_can_rely_on(syntax: int) -> None:
    robots = parse(
        "Disallow: /before\n"  # 1
        "Crawl-delay: 3\n"  # 2
        "User-agent: *\n"  # 3
        "Crawl-delay: soon\n"  # 4
        "Content-Usage: bots=n\n"  # 5
        "Content-Signal: search=maybe, search=yes\n"  # 6
        "this is no directive\n"  # 7
        "Disallow: /" + "x" * 20_000 + "\n",  # 8
        syntax,
    )
    assert [(warning.line, warning.code) for warning in robots.warnings] == [
        (1, "rule-outside-group"),
        (2, "outside-group"),
        (4, "invalid-value"),
        (5, "unknown-usage-category"),
        (6, "unknown-content-signal"),
        (7, "unknown-directive"),
        (8, "line-too-long"),
    ]
    assert {warning.code for warning in robots.warnings} <= set(WARNING_CODES)


def test_warning_codes_say_what_they_mean() -> None:
    assert all(isinstance(meaning, str) and meaning for meaning in WARNING_CODES.values())
    # A warning made from its first three fields (an older pickle's) has the catch-all code.
    assert ParseWarning(1, "x", "y").code == "ignored-line" and "ignored-line" in WARNING_CODES
