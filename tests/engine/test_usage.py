"""AI usage preferences through the engine: ``RobotsTxt.usage`` and ``header_usage``.

Every example of draft-ietf-aipref-attach-05, contentsignals.org and Cloudflare's managed
default goes through ``parse(...).usage(...)``, in each syntax unless a point is the syntax's
own (RFC 9309's grouping and %-escaping, wildcards, rerp's first-match records). The pure
vocabulary (the readers, the combining rule) is tested in ``test_usage_vocab``, whose
constants hold the drafts' examples.
"""

from __future__ import annotations

import pickle
import random

import pytest

from scrapy_rerp.engine import (
    GYM2008,
    MK1996,
    RFC9309,
    USAGE_CATEGORIES,
    RobotsTxt,
    UsageDecision,
    header_usage,
    parse,
    usage_category,
)
from tests.support.syntaxes import ALL, LEGACY, WILDCARDS, per_syntax
from tests.support.usage_examples import (
    ATTACH_HEADER_EXAMPLE,
    ATTACH_INTRO_ROBOTS_EXAMPLE,
    ATTACH_ROBOTS_EXAMPLE,
    CONTENTSIGNALS_ORG_EXAMPLE,
)

SITE = "https://example.com"
NONE = ("unknown", None, None)  # no statement decided
MAY_NOT_CRAWL = "may not be crawled: no usage preference applies"


def said(
    robots: RobotsTxt, path: str, agent: str, category: str = "train-ai"
) -> tuple[str, int | None, str | None]:
    """``(preference, line, statement)`` of the site's answer for *path*."""
    decision = robots.usage(SITE + path, agent, category)
    assert type(decision) is UsageDecision
    return decision.preference, decision.line, decision.statement


def every_category(robots: RobotsTxt, path: str, agent: str) -> dict[str, tuple[object, ...]]:
    return {category: said(robots, path, agent, category) for category in USAGE_CATEGORIES}


# -- draft-ietf-aipref-attach-05 ----------------------------------------------------------------

ATTACH_TRAIN_NO = ("disallowed", 4, "Content-Usage: train-ai=n")
ATTACH_AI_OK = ("allowed", 5, "Content-Usage: /ai-ok/ train-ai=y")
ATTACH_EXAMPLEBOT = ("allowed", 9, "Content-Usage: train-ai=y")


@pytest.mark.parametrize(
    ("syntax", "never_test"),
    per_syntax(
        # rerp reads a record's rules in order: "Allow: /" comes first and lets /never/ be
        # crawled, so the group-wide preference applies there.
        ATTACH_TRAIN_NO,
        ATTACH_TRAIN_NO,
        # attach-05 3.4: "/never/test | no | N/A".
        ("unknown", 3, "Disallow: /never/"),
    ),
)
def test_attach_example_table_for_other_crawlers(
    syntax: int, never_test: tuple[object, ...]
) -> None:
    robots = parse(ATTACH_ROBOTS_EXAMPLE, syntax)
    assert robots.warnings == ()
    for agent in ("OtherBot", "Mozilla/5.0 (compatible; OtherBot/2.0)"):
        assert said(robots, "/test", agent) == ATTACH_TRAIN_NO
        assert said(robots, "/", agent) == ATTACH_TRAIN_NO
        assert said(robots, "/ai-ok/test", agent) == ATTACH_AI_OK
        assert said(robots, "/ai-ok", agent) == ATTACH_TRAIN_NO  # the rule's path is /ai-ok/
        assert said(robots, "/never/test", agent) == never_test
        # The example states nothing about the other categories.
        assert said(robots, "/test", agent, "search") == NONE
        assert said(robots, "/ai-ok/test", agent, "ai-input") == NONE


def test_attach_example_a_disallowed_path_has_no_preference() -> None:
    robots = parse(ATTACH_ROBOTS_EXAMPLE, RFC9309)
    for category in USAGE_CATEGORIES:
        assert robots.usage(SITE + "/never/test", "OtherBot", category) == UsageDecision(
            "unknown", 3, "Disallow: /never/", MAY_NOT_CRAWL
        )


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    "agent", ["ExampleBot", "examplebot", "Mozilla/5.0 (compatible; ExampleBot/1.0)"]
)
def test_attach_example_table_for_examplebot(syntax: int, agent: str) -> None:
    # attach-05 3.4: ExampleBot uses the second group: it may crawl everything, training allowed.
    robots = parse(ATTACH_ROBOTS_EXAMPLE, syntax)
    for path in ("/", "/test", "/never/test", "/ai-ok/test"):
        assert said(robots, path, agent) == ATTACH_EXAMPLEBOT
        assert said(robots, path, agent, "ai-train") == ATTACH_EXAMPLEBOT
        assert said(robots, path, agent, "search") == NONE


@pytest.mark.parametrize("syntax", ALL)
def test_attach_intro_example(syntax: int) -> None:
    # attach-05 1.2: the header's preference for the whole site, in robots.txt.
    robots = parse(ATTACH_INTRO_ROBOTS_EXAMPLE, syntax)
    assert robots.warnings == ()
    for agent in ("AnyBot", "Mozilla/5.0 (compatible; ExampleBot/1.0)"):
        for path in ("/", "/a/b.html?q=1"):
            assert every_category(robots, path, agent) == {
                "train-ai": ("disallowed", 3, "Content-Usage: train-ai=n"),
                "search": NONE,
                "ai-input": NONE,
            }


def test_attach_header_example() -> None:
    # attach-05 1.2: the Content-Usage response header field.
    head = ATTACH_HEADER_EXAMPLE.split("\n\n")[0]
    fields = dict(line.split(": ", 1) for line in head.splitlines()[1:])
    value = fields["Content-Usage"]
    expected = UsageDecision(
        "disallowed", None, "Content-Usage: train-ai=n", "train-ai disallowed by the header"
    )
    assert header_usage(value, "train-ai") == expected
    assert header_usage(value, "AI-Train") == expected
    assert header_usage(value, "search") == UsageDecision(
        "unknown", None, "Content-Usage: train-ai=n", "the header does not name search"
    )


def test_header_usage_joins_field_lines_and_never_raises_on_the_value() -> None:
    # RFC 9651 4.2: several field lines are one value; a conflict is the last duplicate's value.
    assert header_usage("search=y, search=n", "search").preference == "disallowed"
    assert header_usage("train-ai=y", "train-ai") == UsageDecision(
        "allowed", None, "Content-Usage: train-ai=y", "train-ai allowed by the header"
    )
    decision = header_usage("train-ai=n,", "train-ai")
    assert decision[:3] == ("unknown", None, "Content-Usage: train-ai=n,")
    assert decision.reason.startswith("not a Structured Fields dictionary (a trailing comma")
    assert header_usage("", "search") == UsageDecision(
        "unknown", None, "Content-Usage: ", "no preference stated"
    )
    # ai-input is Content Signals' own category, which a Content-Usage value cannot set.
    assert header_usage("ai-input=n", "ai-input") == UsageDecision(
        "unknown", None, "Content-Usage: ai-input=n", "unknown usage category 'ai-input', ignored"
    )
    with pytest.raises(ValueError, match="unknown usage category 'tdm'"):
        header_usage("train-ai=n", "tdm")
    with pytest.raises(TypeError):
        header_usage("train-ai=n", None)  # type: ignore[arg-type]


# -- contentsignals.org and Cloudflare ----------------------------------------------------------

CLOUDFLARE_DEFAULT = """\
# Content signals: search=yes allows building a search index; ai-train=no asks not to
# train or fine-tune AI models on this site's content.
User-Agent: *
Content-Signal: {value}
Allow: /
"""


@pytest.mark.parametrize("syntax", ALL)
def test_contentsignals_org_example(syntax: int) -> None:
    robots = parse(CONTENTSIGNALS_ORG_EXAMPLE, syntax)
    assert robots.warnings == ()
    line = (2, "Content-Signal: ai-train=no, search=yes, ai-input=yes")
    for path in ("/", "/any/page"):
        assert every_category(robots, path, "AnyBot") == {
            "train-ai": ("disallowed", *line),
            "search": ("allowed", *line),
            "ai-input": ("allowed", *line),
        }
        assert said(robots, path, "AnyBot", "ai-train") == ("disallowed", *line)


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("value", ["search=yes, ai-train=no", "search=yes,ai-train=no"])
def test_cloudflare_managed_default(syntax: int, value: str) -> None:
    robots = parse(CLOUDFLARE_DEFAULT.format(value=value), syntax)
    assert robots.warnings == ()
    line = (4, f"Content-Signal: {value}")
    assert every_category(robots, "/products/1", "Googlebot") == {
        "train-ai": ("disallowed", *line),
        "search": ("allowed", *line),
        "ai-input": NONE,
    }


# -- which statements apply ---------------------------------------------------------------------

SCOPED = """\
User-agent: *
Content-Usage: train-ai=n, search=y
Content-Usage: /blog/ train-ai=y
Content-Usage: /blog/drafts/ search=n
"""


@pytest.mark.parametrize("syntax", ALL)
def test_path_scoped_rules_and_the_group_wide_rule(syntax: int) -> None:
    # The longest matching path wins outright: a shorter rule does not fill in the categories
    # a longer one leaves out; a rule without a path matches everything, as the shortest.
    robots = parse(SCOPED, syntax)
    group_wide = (2, "Content-Usage: train-ai=n, search=y")
    blog = (3, "Content-Usage: /blog/ train-ai=y")
    drafts = (4, "Content-Usage: /blog/drafts/ search=n")
    cases = {
        "/": (("disallowed", *group_wide), ("allowed", *group_wide)),
        "/blog": (("disallowed", *group_wide), ("allowed", *group_wide)),
        "/blog/": (("allowed", *blog), NONE),
        "/blog/post?id=1": (("allowed", *blog), NONE),
        "/blog/drafts/1": (NONE, ("disallowed", *drafts)),
        "/other/blog/": (("disallowed", *group_wide), ("allowed", *group_wide)),
    }
    for path, (train, search) in cases.items():
        assert (said(robots, path, "bot"), said(robots, path, "bot", "search")) == (train, search)


@pytest.mark.parametrize("syntax", ALL)
def test_a_slash_rule_is_longer_than_a_rule_without_a_path(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nContent-Usage: / train-ai=y\nContent-Usage: train-ai=n\n", syntax
    )
    assert said(robots, "/page", "bot") == ("allowed", 2, "Content-Usage: / train-ai=y")


@pytest.mark.parametrize("syntax", ALL)
def test_several_agents_in_one_group(syntax: int) -> None:
    robots = parse(
        "User-agent: a-bot\n"
        "User-agent: b-bot\n"
        "Disallow: /private/\n"
        "Content-Usage: train-ai=n\n"
        "\n"
        "User-agent: *\n"
        "Content-Usage: train-ai=y\n",
        syntax,
    )
    for agent in ("a-bot", "b-bot"):
        assert said(robots, "/page", agent) == ("disallowed", 4, "Content-Usage: train-ai=n")
        assert said(robots, "/private/x", agent) == ("unknown", 3, "Disallow: /private/")
    assert said(robots, "/page", "c-bot") == ("allowed", 7, "Content-Usage: train-ai=y")
    assert said(robots, "/private/x", "c-bot") == ("allowed", 7, "Content-Usage: train-ai=y")


SPLIT_GROUPS = """\
User-agent: a-bot
User-agent: b-bot
Content-Usage: train-ai=n

User-agent: c-bot
Disallow: /x

User-agent: a-bot
Content-Usage: search=y
"""


@pytest.mark.parametrize(
    ("syntax", "a_search"),
    per_syntax(NONE, NONE, ("allowed", 9, "Content-Usage: search=y")),
)
def test_several_groups_for_one_agent(syntax: int, a_search: tuple[object, ...]) -> None:
    # RFC 9309 2.2.1 merges the groups that name a crawler; rerp uses its first record.
    robots = parse(SPLIT_GROUPS, syntax)
    train = ("disallowed", 3, "Content-Usage: train-ai=n")
    assert said(robots, "/y", "a-bot") == train
    assert said(robots, "/y", "a-bot", "search") == a_search
    assert said(robots, "/y", "b-bot") == train
    assert said(robots, "/y", "b-bot", "search") == NONE
    assert robots.usage(SITE + "/y", "c-bot", "search") == UsageDecision(
        "unknown", None, None, "no usage preference for this user agent"
    )


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    ("line", "category"),
    [("Content-Signal: ai-train=no", "train-ai"), ("Content-Usage: search=n", "search")],
)
def test_a_usage_line_between_user_agents_applies_to_the_agents_before_it(
    syntax: int, line: str, category: str
) -> None:
    # A per-group value applies to the agents named before it (like Crawl-delay, which in
    # MK1996/GYM2008 ends the record, so that b-bot is in a record of its own).
    robots = parse(f"User-agent: a-bot\n{line}\nUser-agent: b-bot\nDisallow: /x\n", syntax)
    assert said(robots, "/y", "a-bot", category) == ("disallowed", 2, line)
    assert said(robots, "/y", "b-bot", category) == NONE


LEGACY_RECORD = ((("a-bot", "b-bot"),), ("unknown", 4, "Disallow: /x"))


@pytest.mark.parametrize(
    ("syntax", "expected"),
    per_syntax(
        LEGACY_RECORD,
        LEGACY_RECORD,
        ((("a-bot",), ("b-bot",)), ("disallowed", 2, "Content-Usage: train-ai=n")),
    ),
)
def test_rfc_grouping_against_legacy_records(
    syntax: int, expected: tuple[tuple[tuple[str, ...], ...], tuple[object, ...]]
) -> None:
    # attach-05 makes Content-Usage an RFC 9309 rule, so a User-agent after it starts a new
    # group; rerp does not read the line, so a-bot and b-bot stay one record, Disallow and all.
    robots = parse(
        "User-agent: a-bot\nContent-Usage: train-ai=n\nUser-agent: b-bot\nDisallow: /x\n", syntax
    )
    agents, a_at_x = expected
    assert tuple(group.agents for group in robots.groups) == agents
    assert said(robots, "/x", "a-bot") == a_at_x
    assert robots.decide(SITE + "/x", "a-bot").allowed is (syntax == RFC9309)
    assert said(robots, "/x", "b-bot") == ("unknown", 4, "Disallow: /x")
    assert said(robots, "/y", "a-bot") == ("disallowed", 2, "Content-Usage: train-ai=n")


USAGE_ONLY_RECORD = """\
User-agent: ExampleBot
Content-Usage: train-ai=y

User-agent: *
Disallow: /private/
Content-Usage: train-ai=n
"""


@pytest.mark.parametrize(
    ("syntax", "at_private"),
    per_syntax(
        ("unknown", 5, "Disallow: /private/"),
        ("unknown", 5, "Disallow: /private/"),
        ("allowed", 2, "Content-Usage: train-ai=y"),
    ),
)
def test_a_group_with_only_usage_lines_counts(syntax: int, at_private: tuple[object, ...]) -> None:
    # RFC 9309: ExampleBot's group has no rules, so it may crawl everything. rerp crawls by
    # its first record with rules (the * one), but takes usage from the record naming it.
    robots = parse(USAGE_ONLY_RECORD, syntax)
    assert said(robots, "/public", "ExampleBot") == ("allowed", 2, "Content-Usage: train-ai=y")
    assert said(robots, "/private/x", "ExampleBot") == at_private
    assert said(robots, "/public", "OtherBot") == ("disallowed", 6, "Content-Usage: train-ai=n")


@pytest.mark.parametrize("syntax", ALL)
def test_a_group_without_usage_lines_does_not_fall_back_to_star(syntax: int) -> None:
    robots = parse(
        "User-agent: ExampleBot\nDisallow: /private/\n\nUser-agent: *\nContent-Usage: train-ai=n\n",
        syntax,
    )
    assert robots.usage(SITE + "/public", "ExampleBot", "train-ai") == UsageDecision(
        "unknown", None, None, "no usage preference for this user agent"
    )
    assert said(robots, "/public", "OtherBot") == ("disallowed", 5, "Content-Usage: train-ai=n")


@pytest.mark.parametrize("syntax", ALL)
def test_no_statement_at_all(syntax: int) -> None:
    expected = UsageDecision("unknown", None, None, "no usage preference for this user agent")
    for robots in (parse("User-agent: *\nDisallow: /x\n", syntax), RobotsTxt.allow_all(syntax)):
        for category in USAGE_CATEGORIES:
            assert robots.usage(SITE + "/y", "bot", category) == expected


# -- combining statements -----------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("first", ["train-ai=y", "train-ai=n, search=y"])
def test_conflicting_statements_at_one_path_are_disallowed(syntax: int, first: str) -> None:
    # attach-05 3.1: rules with identical paths all apply, unlike Allow/Disallow.
    second = "train-ai=n, search=y" if first == "train-ai=y" else "train-ai=y"
    robots = parse(
        f"User-agent: *\nContent-Usage: /a/ {first}\nContent-Usage: /a/ {second}\n", syntax
    )
    no_training = 2 if first.startswith("train-ai=n") else 3
    search = 2 if "search" in first else 3
    text = {2: f"Content-Usage: /a/ {first}", 3: f"Content-Usage: /a/ {second}"}
    assert said(robots, "/a/b", "bot") == ("disallowed", no_training, text[no_training])
    assert said(robots, "/a/b", "bot", "search") == ("allowed", search, text[search])
    assert said(robots, "/b", "bot") == NONE


@pytest.mark.parametrize("syntax", WILDCARDS)
def test_rules_of_the_same_match_length_all_count(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nContent-Usage: /a* train-ai=y, search=y\nContent-Usage: /a/ train-ai=n\n",
        syntax,
    )
    assert said(robots, "/a/b", "bot") == ("disallowed", 3, "Content-Usage: /a/ train-ai=n")
    assert said(robots, "/a/b", "bot", "search") == (
        "allowed",
        2,
        "Content-Usage: /a* train-ai=y, search=y",
    )
    assert said(robots, "/ab", "bot") == ("allowed", 2, "Content-Usage: /a* train-ai=y, search=y")


SIGNAL_AND_USAGE = """\
User-agent: *
Content-Signal: search=yes, ai-train=yes, ai-input=no
Content-Usage: /private/ train-ai=n
Content-Usage: /open/ search=n
"""


@pytest.mark.parametrize("syntax", ALL)
def test_content_signal_combined_with_content_usage(syntax: int) -> None:
    # Content-Signal speaks for the whole group and combines with the Content-Usage rule that
    # matches: the most restrictive wins per category.
    robots = parse(SIGNAL_AND_USAGE, syntax)
    signal = (2, "Content-Signal: search=yes, ai-train=yes, ai-input=no")
    private = (3, "Content-Usage: /private/ train-ai=n")
    opened = (4, "Content-Usage: /open/ search=n")
    assert every_category(robots, "/page", "bot") == {
        "train-ai": ("allowed", *signal),
        "search": ("allowed", *signal),
        "ai-input": ("disallowed", *signal),
    }
    assert every_category(robots, "/private/x", "bot") == {
        "train-ai": ("disallowed", *private),
        "search": ("allowed", *signal),
        "ai-input": ("disallowed", *signal),
    }
    assert every_category(robots, "/open/x", "bot") == {
        "train-ai": ("allowed", *signal),
        "search": ("disallowed", *opened),
        "ai-input": ("disallowed", *signal),
    }


@pytest.mark.parametrize("syntax", ALL)
def test_the_decision_names_the_first_deciding_line_of_the_file(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: train-ai=n\n"
        "Content-Signal: ai-train=no\n",
        syntax,
    )
    assert said(robots, "/page", "bot") == ("disallowed", 2, "Content-Signal: ai-train=no")


@pytest.mark.parametrize("syntax", ALL)
def test_comments_case_and_spacing(syntax: int) -> None:
    robots = parse(
        "user-AGENT: *  # everyone\n"
        "CONTENT-USAGE:   /a/  train-ai=n   # no training here\n"
        "content-signal:search=yes # fine\n",
        syntax,
    )
    assert robots.warnings == ()
    assert said(robots, "/a/b", "bot") == ("disallowed", 2, "Content-Usage: /a/ train-ai=n")
    assert said(robots, "/a/b", "bot", "search") == ("allowed", 3, "Content-Signal: search=yes")


@pytest.mark.parametrize("syntax", ALL)
def test_bytes_with_a_bom_and_crlf_keep_their_line_numbers(syntax: int) -> None:
    robots = parse(
        b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /x\r\nContent-Usage: /a train-ai=n\r\n", syntax
    )
    assert said(robots, "/a", "bot") == ("disallowed", 3, "Content-Usage: /a train-ai=n")
    assert robots.usage(b"https://example.com/a", b"bot", "train-ai").line == 3  # type: ignore[arg-type]


@pytest.mark.parametrize("syntax", ALL)
def test_a_tab_separates_the_path_from_the_statement(syntax: int) -> None:
    # attach-05 3.2: the path ends before the first SP or HTAB.
    robots = parse("User-agent: *\nContent-Usage: /a/\ttrain-ai=n, search=y\n", syntax)
    assert robots.warnings == ()
    rule = (2, "Content-Usage: /a/ train-ai=n, search=y")
    assert said(robots, "/a/b", "bot") == ("disallowed", *rule)
    assert said(robots, "/a/b", "bot", "search") == ("allowed", *rule)
    assert said(robots, "/b", "bot") == NONE


# -- what is not understood ---------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_unknown_keys_and_parameters_are_ignored_with_a_warning(syntax: int) -> None:
    robots = parse(
        "User-agent: *\n"
        "Content-Usage: train-ai=n;exceptions=cc-cr, bots=n, search=y;p=1\n"
        "Content-Signal: ai-input=yes, ai-retrieval=no\n",
        syntax,
    )
    usage_line = "Content-Usage: train-ai=n;exceptions=cc-cr, bots=n, search=y;p=1"
    signal_line = "Content-Signal: ai-input=yes, ai-retrieval=no"
    assert [tuple(warning) for warning in robots.warnings] == [
        (2, usage_line, "unknown usage category 'bots', ignored", "unknown-usage-category"),
        (
            3,
            signal_line,
            "unknown content signal 'ai-retrieval', ignored",
            "unknown-content-signal",
        ),
    ]
    assert every_category(robots, "/page", "bot") == {
        "train-ai": ("disallowed", 2, usage_line),
        "search": ("allowed", 2, usage_line),
        "ai-input": ("allowed", 3, signal_line),
    }


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("Train-AI=n", "not a Structured Fields dictionary (a key starts with a lowercase"),
        ("train-ai=n,", "not a Structured Fields dictionary (a trailing comma"),
        ("train-ai = n", "not a Structured Fields dictionary (expected ',' between members"),
        ("train-ai=n search=n", "not a Structured Fields dictionary (expected ',' between"),
        ("train-ai=n;", "not a Structured Fields dictionary (a key starts with"),
        ("\u00e9=n", "not a Structured Fields dictionary (a character outside ASCII"),
        ("train-ai=yes", "train-ai: the token yes, not y or n; preference unknown"),
        ('train-ai="n"', "train-ai: a string, not y or n; preference unknown"),
        ("train-ai=(n)", "train-ai: an inner list, not y or n; preference unknown"),
        ("train-ai=?0", "train-ai: a boolean, not y or n; preference unknown"),
        ("train-ai", "train-ai: no value (boolean true), not y or n; preference unknown"),
    ],
)
def test_a_malformed_dictionary_says_nothing_for_its_path(
    syntax: int, statement: str, message: str
) -> None:
    # vocab-07 6.5: every preference unknown, not an error. The rule still counts for /a/, so
    # the group-wide rule does not apply there.
    robots = parse(
        f"User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/ {statement}\n", syntax
    )
    [warning] = robots.warnings
    assert (warning.line, warning.text) == (3, f"Content-Usage: /a/ {statement}")
    assert warning.message.startswith(message)
    assert warning.code == "malformed-content-usage"
    assert every_category(robots, "/a/b", "bot") == dict.fromkeys(USAGE_CATEGORIES, NONE)
    assert said(robots, "/b", "bot") == ("disallowed", 2, "Content-Usage: train-ai=n")


@pytest.mark.parametrize("syntax", ALL)
def test_a_rule_with_a_path_and_no_statement_says_nothing_for_its_path(syntax: int) -> None:
    robots = parse("User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a/\n", syntax)
    assert [tuple(warning) for warning in robots.warnings] == [
        (3, "Content-Usage: /a/", "no preference stated", "no-usage-preference")
    ]
    assert said(robots, "/a/b", "bot") == NONE
    assert said(robots, "/b", "bot") == ("disallowed", 2, "Content-Usage: train-ai=n")


@pytest.mark.parametrize("syntax", ALL)
def test_a_malformed_content_signal_says_nothing_about_its_key(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nContent-Signal: ai-train=maybe, search=yes\nContent-Signal: , ,\n", syntax
    )
    assert [tuple(warning) for warning in robots.warnings] == [
        (
            2,
            "Content-Signal: ai-train=maybe, search=yes",
            "ai-train: 'maybe' is not yes or no; preference unknown",
            "unknown-content-signal",
        ),
        (3, "Content-Signal: , ,", "no preference stated", "no-usage-preference"),
    ]
    assert said(robots, "/p", "bot") == NONE
    assert said(robots, "/p", "bot", "search") == (
        "allowed",
        2,
        "Content-Signal: ai-train=maybe, search=yes",
    )


@pytest.mark.parametrize("syntax", ALL)
def test_usage_lines_before_any_user_agent_are_ignored_with_a_warning(syntax: int) -> None:
    robots = parse(
        "Content-Usage: train-ai=n\nContent-Signal: search=yes\nUser-agent: *\nDisallow: /x\n",
        syntax,
    )
    assert [warning.line for warning in robots.warnings] == [1, 2]
    for warning, name in zip(robots.warnings, ("Content-Usage", "Content-Signal"), strict=True):
        assert name in warning.text + warning.message
    assert every_category(robots, "/y", "bot") == dict.fromkeys(USAGE_CATEGORIES, NONE)


@pytest.mark.parametrize("syntax", LEGACY)
def test_legacy_usage_lines_after_a_record_ended_are_ignored_with_a_warning(syntax: int) -> None:
    # A blank line ends a MK1996/GYM2008 record: a usage line after it is in no record.
    robots = parse("User-agent: *\nDisallow: /x\n\nContent-Signal: search=yes\n", syntax)
    assert [warning.line for warning in robots.warnings] == [4]
    assert said(robots, "/y", "bot", "search") == NONE


def test_rfc_usage_lines_after_a_blank_line_stay_in_the_group() -> None:
    robots = parse("User-agent: *\nDisallow: /x\n\nContent-Signal: search=yes\n", RFC9309)
    assert robots.warnings == ()
    assert said(robots, "/y", "bot", "search") == ("allowed", 4, "Content-Signal: search=yes")


# -- crawling first -----------------------------------------------------------------------------


@pytest.mark.parametrize("syntax", ALL)
def test_a_url_that_may_not_be_crawled_has_no_preference(syntax: int) -> None:
    robots = parse(
        "User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=y\n"
        "Content-Signal: search=yes\n"
        "\nUser-agent: StrictBot\nDisallow: /\nContent-Usage: train-ai=y\n",
        syntax,
    )
    for category in USAGE_CATEGORIES:
        assert robots.usage(SITE + "/private/x", "bot", category) == UsageDecision(
            "unknown", 2, "Disallow: /private/", MAY_NOT_CRAWL
        )
        assert robots.usage(SITE + "/page", "StrictBot", category) == UsageDecision(
            "unknown", 7, "Disallow: /", MAY_NOT_CRAWL
        )
    assert said(robots, "/page", "bot") == ("allowed", 3, "Content-Usage: train-ai=y")
    assert said(robots, "/page", "bot", "search") == ("allowed", 4, "Content-Signal: search=yes")


# -- paths: %-escaping and wildcards ------------------------------------------------------------


@pytest.mark.parametrize(
    ("syntax", "unescaped_url"),
    # RFC9309 matches URLs as given (%-encoded, as Scrapy passes them); rerp unquotes both.
    per_syntax(
        ("disallowed", 2, "Content-Usage: /café train-ai=n"),
        ("disallowed", 2, "Content-Usage: /café train-ai=n"),
        NONE,
    ),
)
def test_a_non_ascii_path_matches_its_percent_encoding(
    syntax: int, unescaped_url: tuple[object, ...]
) -> None:
    robots = parse("User-agent: *\nContent-Usage: /café train-ai=n\n", syntax)
    rule = ("disallowed", 2, "Content-Usage: /café train-ai=n")
    assert said(robots, "/caf%C3%A9", "bot") == rule
    assert said(robots, "/caf%C3%A9/menu", "bot") == rule
    assert said(robots, "/cafe", "bot") == NONE
    assert said(robots, "/café", "bot") == unescaped_url


def test_rfc_a_percent_encoded_rule_path_is_counted_encoded() -> None:
    # attach-05 3.1: the prefix length counts the bytes of the encoded path: /café is
    # /caf%C3%A9 (10 bytes), longer than /caf%C3 (7 characters as written).
    robots = parse(
        "User-agent: *\nContent-Usage: /café train-ai=n\nContent-Usage: /caf%C3 train-ai=y\n",
        RFC9309,
    )
    assert said(robots, "/caf%C3%A9", "bot") == ("disallowed", 2, "Content-Usage: /café train-ai=n")
    assert said(robots, "/caf%C3x", "bot") == ("allowed", 3, "Content-Usage: /caf%C3 train-ai=y")


WILDCARD_RULES = """\
User-agent: *
Content-Usage: /*.pdf$ train-ai=n
Content-Usage: /docs/ train-ai=y
"""
PDF = ("disallowed", 2, "Content-Usage: /*.pdf$ train-ai=n")
DOCS = ("allowed", 3, "Content-Usage: /docs/ train-ai=y")


@pytest.mark.parametrize(
    ("syntax", "expected"),
    per_syntax(
        # MK1996 has no wildcards: /*.pdf$ is a literal path.
        {"/docs/a.pdf": DOCS, "/a.pdf": NONE, "/docs/a.pdf?x=1": DOCS, "/*.pdf$": PDF},
        {"/docs/a.pdf": PDF, "/a.pdf": PDF, "/docs/a.pdf?x=1": DOCS, "/*.pdf$": NONE},
        {"/docs/a.pdf": PDF, "/a.pdf": PDF, "/docs/a.pdf?x=1": DOCS, "/*.pdf$": NONE},
    ),
)
def test_wildcards_where_the_syntax_has_them(syntax: int, expected: dict[str, object]) -> None:
    # /*.pdf$ (7 characters) is longer than /docs/ (6): it wins where both match.
    robots = parse(WILDCARD_RULES, syntax)
    assert {path: said(robots, path, "bot") for path in expected} == expected


# -- categories ---------------------------------------------------------------------------------


def test_the_categories() -> None:
    assert set(USAGE_CATEGORIES) == {"train-ai", "search", "ai-input"}


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("train-ai", "train-ai"),
        ("TRAIN-AI", "train-ai"),
        ("ai-train", "train-ai"),
        (" AI-Train ", "train-ai"),
        ("search", "search"),
        ("Search", "search"),
        ("ai-input", "ai-input"),
    ],
)
def test_usage_category_names_and_aliases(name: str, category: str) -> None:
    assert usage_category(name) == category


@pytest.mark.parametrize("name", ["tdm", "", "train-genai", "ai_train", "search=y"])
def test_usage_category_unknown_names(name: str) -> None:
    with pytest.raises(ValueError, match=f"unknown usage category {name!r}"):
        usage_category(name)


@pytest.mark.parametrize("name", [None, b"search", 1, ("search",)])
def test_usage_category_not_a_str(name: object) -> None:
    with pytest.raises(TypeError, match="a usage category must be a str"):
        usage_category(name)


@pytest.mark.parametrize("syntax", ALL)
def test_usage_checks_the_category_before_anything_else(syntax: int) -> None:
    # The caller's mistake raises even where the answer would not depend on the category.
    robots = parse("User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n\n", syntax)
    for path in ("/private/x", "/public"):
        with pytest.raises(ValueError, match="unknown usage category 'tdm'"):
            robots.usage(SITE + path, "bot", "tdm")
        with pytest.raises(TypeError):
            robots.usage(SITE + path, "bot", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RobotsTxt.allow_all(syntax).usage(SITE + "/", "bot", "bots")
    assert robots.usage(SITE + "/public", "bot", "AI-Train") == robots.usage(
        SITE + "/public", "bot", "train-ai"
    )


# -- round trips --------------------------------------------------------------------------------

ROUND_TRIP_FILES = [
    ATTACH_ROBOTS_EXAMPLE,
    CONTENTSIGNALS_ORG_EXAMPLE,
    SCOPED,
    SPLIT_GROUPS,
    SIGNAL_AND_USAGE,
    WILDCARD_RULES,
    USAGE_ONLY_RECORD,
    "User-agent: a-bot\nContent-Signal: ai-train=no\nUser-agent: b-bot\nDisallow: /x\n",
    "User-agent: *\nContent-Usage: /café train-ai=n # comment\nContent-Usage: /a/ train-ai=yes\n",
]
ROUND_TRIP_PATHS = [
    "/",
    "/test",
    "/never/test",
    "/ai-ok/test",
    "/blog/drafts/1",
    "/private/x",
    "/open/x",
    "/docs/a.pdf",
    "/caf%C3%A9",
    "/a/b",
    "/x",
    "/y",
]
ROUND_TRIP_AGENTS = ["a-bot", "b-bot", "c-bot", "ExampleBot", "OtherBot"]


def answers(robots: RobotsTxt, with_lines: bool = True) -> list[tuple[object, ...]]:
    return [
        said(robots, path, agent, category)
        if with_lines
        else (said(robots, path, agent, category)[0],)
        for path in ROUND_TRIP_PATHS
        for agent in ROUND_TRIP_AGENTS
        for category in USAGE_CATEGORIES
    ]


@pytest.mark.parametrize("syntax", ALL)
@pytest.mark.parametrize("text", ROUND_TRIP_FILES)
def test_pickle_round_trip_keeps_the_usage_lines(syntax: int, text: str) -> None:
    robots = parse(text, syntax)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        clone = pickle.loads(pickle.dumps(robots, protocol=protocol))
        assert answers(clone) == answers(robots)
        assert clone.warnings == robots.warnings
        assert clone.groups == robots.groups
        assert str(clone) == str(robots)


def test_pickle_keeps_a_statement_the_file_states() -> None:
    # Not only equal answers: the clone says what the file says.
    clone = pickle.loads(pickle.dumps(parse(ATTACH_ROBOTS_EXAMPLE, RFC9309)))
    assert said(clone, "/ai-ok/test", "OtherBot") == ATTACH_AI_OK
    assert said(clone, "/never/test", "ExampleBot") == ATTACH_EXAMPLEBOT


def test_str_writes_the_usage_lines_back() -> None:
    robots = parse(ATTACH_ROBOTS_EXAMPLE, RFC9309)
    assert str(robots) == ATTACH_ROBOTS_EXAMPLE.replace("User-Agent", "User-agent")
    commented = parse(
        "User-agent: *\nContent-Usage:  /a/\ttrain-ai=n # why\nContent-Signal:  search=yes  \n"
    )
    assert (
        str(commented)
        == "User-agent: *\nContent-Usage: /a/ train-ai=n\nContent-Signal: search=yes\n"
    )


@pytest.mark.parametrize("text", ROUND_TRIP_FILES)
def test_str_round_trip_keeps_every_preference(text: str) -> None:
    # RFC9309's rendering is itself a robots.txt with the same answers (the lines move).
    robots = parse(text, RFC9309)
    again = parse(str(robots), RFC9309)
    assert answers(again, with_lines=False) == answers(robots, with_lines=False)
    assert str(again) == str(robots)
    assert [w.message for w in again.warnings] == [w.message for w in robots.warnings]


# -- never raises -------------------------------------------------------------------------------

KEYS = [
    "User-agent",
    "user-agent",
    "Allow",
    "Disallow",
    "Content-Usage",
    "content-usage",
    "CONTENT-SIGNAL",
    "Content-Signal",
    "Crawl-delay",
    "Sitemap",
]
VALUES = [
    "*",
    "bot",
    "/",
    "/a/",
    "/*.pdf$",
    "/café",
    "/%zz",
    "train-ai=n",
    "/a/ train-ai=y, search=n",
    "/ train-ai=(y n)",
    'search="y";p',
    "train-ai=n,,",
    "ai-train=no, search=yes, ai-input=maybe",
    "\u00e9=\u00e9",
    "#",
    "",
    "\x00\x7f",
    "/a\tsearch=?1",
]
PATHS = ["/", "/a/b", "/caf%C3%A9", "/x.pdf", "/%zz", "/a%2fb?c=%", ""]


def random_file(generator: random.Random) -> str | bytes:
    if generator.random() < 0.25:  # raw bytes, some of them line breaks and key letters
        alphabet = b"\r\n\n :/#*$=,;?\t\xef\xbb\xbf\xc3\xa9\xff\x00-aeinrstuyUC"
        return bytes(generator.choices(alphabet, k=generator.randrange(80)))
    lines = []
    for _ in range(generator.randrange(12)):
        roll = generator.random()
        if roll < 0.1:
            lines.append("")
        elif roll < 0.2:
            lines.append(generator.choice(VALUES))  # no key at all
        else:
            key = generator.choice(KEYS)
            separator = generator.choice([": ", ":", " : ", "\t:\t", " ", ""])
            value = generator.choice(VALUES)
            if generator.random() < 0.3:
                value += " " + generator.choice(VALUES)
            lines.append(f"{key}{separator}{value}")
    return generator.choice(["\n", "\r\n", "\r"]).join(lines)


def test_random_content_never_raises() -> None:
    generator = random.Random(20250423)
    categories = list(USAGE_CATEGORIES) + ["ai-train"]
    for _ in range(2000):
        content = random_file(generator)
        syntax = generator.choice([MK1996, GYM2008, RFC9309])
        robots = parse(content, syntax)
        text = content if isinstance(content, str) else content.decode("latin-1")
        line_count = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
        assert all(1 <= warning.line <= line_count for warning in robots.warnings)
        for _ in range(3):
            agent = generator.choice(["bot", "*", "Mozilla/5.0 (compatible; bot/1.0)", ""])
            decision = robots.usage(
                SITE + generator.choice(PATHS), agent, generator.choice(categories)
            )
            assert type(decision) is UsageDecision
            assert decision.preference in {"allowed", "disallowed", "unknown"}
            assert (decision.line is None) == (decision.statement is None)
            if decision.line is not None:
                assert 1 <= decision.line <= line_count
                assert decision.statement.startswith(
                    ("Content-Usage: ", "Content-Signal: ", "Disallow: ")
                )
            if decision.preference != "unknown":
                assert decision.statement.startswith(("Content-Usage: ", "Content-Signal: "))


@pytest.mark.parametrize("syntax", [RFC9309, GYM2008, MK1996])
def test_a_file_that_states_no_usage_says_so_and_usage_agrees(syntax: int) -> None:
    from scrapy_rerp.engine._robots import NO_USAGE_STATED

    silent = parse("User-agent: *\nDisallow: /x\nCrawl-delay: 1\n", syntax)
    assert silent.states_usage is False
    for category in ("train-ai", "ai-input", "search"):
        assert silent.usage("http://a.test/ok", "bot", category) == NO_USAGE_STATED
    for stated in (
        "User-agent: *\nContent-Usage: train-ai=n\n",
        "User-agent: other\nDisallow: /\nContent-Signal: search=yes\n\nUser-agent: *\nAllow: /\n",
    ):
        robots = parse(stated, syntax)
        assert robots.states_usage is True
        assert pickle.loads(pickle.dumps(robots)).states_usage is True
