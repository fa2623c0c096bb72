"""AI usage preferences: one test per rule of the drafts, and every example they give.

draft-ietf-aipref-vocab-07 and draft-ietf-aipref-attach-05 are the ietf-wg-aipref/drafts tags of
those names (commit 7ca0afce45b32609dc0131eebc2c0137469cdad9); draft-romm-aipref-contentsignals-00
is the l-romm/draft-romm-aipref-vocab-contentsignals tag (42750ca). The Content-Signal examples
are contentsignals.org's, which gives the line's syntax (the draft gives only the labels).
The robots.txt examples are read through the engine (``parse(...).usage(...)``) in test_usage.
"""

from __future__ import annotations

import random
import string
from types import MappingProxyType

import pytest

from scrapy_rerp.engine import _usage
from scrapy_rerp.engine._usage import (
    ALLOWED,
    ATTACH_DRAFT,
    CATEGORIES,
    CONTENT_SIGNALS_DRAFT,
    CONTENT_USAGE_LABELS,
    DISALLOWED,
    SIGNAL_KEYS,
    UNKNOWN,
    VOCAB_DRAFT,
    combine,
    preference,
    split_content_usage_rule,
)
from scrapy_rerp.engine._usage import read_content_signal as read_signal_notes
from scrapy_rerp.engine._usage import read_content_usage as read_usage_notes
from tests.support.usage_examples import (
    ATTACH_HEADER_EXAMPLE,
    CONTENTSIGNALS_ORG_EXAMPLE,
)


# The readers' notes are (code, message) pairs; most tests here are about the messages.
def read_content_usage(value: str) -> tuple[dict[str, bool], list[str]]:
    explicit, notes = read_usage_notes(value)
    return explicit, [message for _, message in notes]


def read_content_signal(value: str) -> tuple[dict[str, bool], list[str]]:
    explicit, notes = read_signal_notes(value)
    return explicit, [message for _, message in notes]


def test_each_note_has_its_warning_code() -> None:
    codes = [code for code, _ in read_usage_notes('bots=n, train-ai="n"')[1]]
    assert codes == ["unknown-usage-category", "malformed-content-usage"]
    assert [code for code, _ in read_usage_notes("train-ai;x")[1]] == ["malformed-content-usage"]
    assert [code for code, _ in read_usage_notes("")[1]] == ["no-usage-preference"]
    codes = [
        code for code, _ in read_signal_notes("x=yes, search=maybe, ai-train=yes, ai-train=no")[1]
    ]
    assert codes == [
        "unknown-content-signal",
        "unknown-content-signal",
        "conflicting-content-signal",
    ]
    assert [code for code, _ in read_signal_notes(" , ")[1]] == ["no-usage-preference"]


def outcomes(explicit: dict[str, bool]) -> dict[str, str]:
    """Every category's outcome for a statement."""
    return {category: preference(explicit, category) for category in CATEGORIES}


def usage_of(value: str) -> dict[str, str]:
    return outcomes(read_content_usage(value)[0])


# -- the revisions and the tables ---------------------------------------------------------------


def test_the_revisions_followed() -> None:
    assert VOCAB_DRAFT == "draft-ietf-aipref-vocab-07"
    assert ATTACH_DRAFT == "draft-ietf-aipref-attach-05"
    assert CONTENT_SIGNALS_DRAFT == "draft-romm-aipref-contentsignals-00"


def test_the_vocabulary_has_two_categories_and_no_nesting() -> None:
    # vocab-07 6.1 (Table 1): train-ai and search; -07 removed the subset rule.
    assert CONTENT_USAGE_LABELS == {"train-ai", "search"}
    assert CONTENT_USAGE_LABELS <= set(CATEGORIES)
    assert all(parent is None for parent in CATEGORIES.values())


def test_every_content_signal_key_maps_to_a_category() -> None:
    assert dict(SIGNAL_KEYS) == {"search": "search", "ai-train": "train-ai", "ai-input": "ai-input"}
    assert set(SIGNAL_KEYS.values()) <= set(CATEGORIES)
    # ai-input has no IETF equivalent, so a Content-Usage value cannot set it.
    assert "ai-input" not in CONTENT_USAGE_LABELS


def test_the_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        CATEGORIES["tdm"] = None  # type: ignore[index]


# -- vocab-07: the format and its processing (section 6) ----------------------------------------


def test_vocab_example_allow_training_disallow_search() -> None:
    # vocab-07 6: "train-ai=y, search=n"; other categories unknown.
    explicit, messages = read_content_usage("train-ai=y, search=n")
    assert explicit == {"train-ai": True, "search": False}
    assert messages == []
    assert outcomes(explicit) == {"train-ai": ALLOWED, "search": DISALLOWED, "ai-input": UNKNOWN}


def test_vocab_example_duplicates_take_the_last_value_which_is_not_a_token() -> None:
    # vocab-07 6.5.1: all unknown, the last values being a Boolean and a String.
    explicit, messages = read_content_usage('train-ai=y, train-ai, search=n, search="n"')
    assert explicit == {}
    assert messages == [
        "train-ai: no value (boolean true), not y or n; preference unknown",
        "search: a string, not y or n; preference unknown",
    ]


def test_vocab_example_parameters_of_the_chosen_value_only() -> None:
    # vocab-07 6.5.2: "carries no parameters, and a preference to allow the usage".
    assert read_content_usage("train-ai;allow=n, train-ai=y") == ({"train-ai": True}, [])


def test_vocab_example_parameters_on_an_unknown_preference() -> None:
    # vocab-07 6.5.2 gives 'train-ai;has;parameters="?";' as parameters on an unknown
    # preference. Its trailing ";" wants another parameter key, so RFC 9651 fails the whole
    # Dictionary: unknown all the same. Without it, the value is Boolean true: unknown too.
    explicit, messages = read_content_usage('train-ai;has;parameters="?";')
    assert explicit == {}
    assert messages[0].startswith("not a Structured Fields dictionary")
    explicit, messages = read_content_usage('train-ai;has;parameters="?"')
    assert explicit == {}
    assert messages == ["train-ai: no value (boolean true), not y or n; preference unknown"]


def test_parameters_are_ignored() -> None:
    # vocab-07 6.4: unknown parameters MUST be ignored (e.g. CC signals' exceptions=).
    assert read_content_usage("train-ai=n;exceptions=cc-cr") == ({"train-ai": False}, [])


def test_unknown_labels_are_ignored_with_a_message() -> None:
    # vocab-07 6.4: unknown labels MUST be ignored; older drafts' labels are unknown now, and
    # Content Signals' ai-input is no label of the vocabulary.
    explicit, messages = read_content_usage("train-genai=n, bots=n, ai-input=n, search=y")
    assert explicit == {"search": True}
    assert messages == [
        "unknown usage category 'train-genai', ignored",
        "unknown usage category 'bots', ignored",
        "unknown usage category 'ai-input', ignored",
    ]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("train-ai=?0", "a boolean"),
        ("train-ai=?1", "no value (boolean true)"),
        ("train-ai", "no value (boolean true)"),
        ('train-ai="y"', "a string"),
        ("train-ai=yes", "the token yes"),
        ("train-ai=Y", "the token Y"),
        ("train-ai=1", "an integer"),
        ("train-ai=0.5", "a decimal"),
        ("train-ai=@0", "a date"),
        ('train-ai=%"y"', "a display string"),
        ("train-ai=:eQ==:", "a byte sequence"),
        ("train-ai=(y)", "an inner list"),
    ],
)
def test_a_value_other_than_the_token_y_or_n_is_unknown(value: str, kind: str) -> None:
    # vocab-07 6.5: not errors, "they only result in the corresponding preference being unknown".
    assert read_content_usage(value) == ({}, [f"train-ai: {kind}, not y or n; preference unknown"])


@pytest.mark.parametrize(
    "value", ["Train-AI=n", "train-ai=n,", "train-ai = n", "train-ai=n search=n"]
)
def test_a_value_that_is_no_dictionary_states_nothing(value: str) -> None:
    # vocab-07 6.5.1: "If the parsing of the Dictionary fails, preferences are unknown", keys
    # with uppercase included.
    explicit, messages = read_content_usage(value)
    assert explicit == {}
    assert len(messages) == 1
    assert messages[0].startswith("not a Structured Fields dictionary (")
    assert messages[0].endswith("); every preference unknown")


def test_the_message_names_where_parsing_stopped() -> None:
    _, messages = read_content_usage("train-ai=n, Search=y")
    assert messages == [
        "not a Structured Fields dictionary (a key starts with a lowercase letter or '*' "
        "(at character 12)); every preference unknown"
    ]


def test_an_empty_value_states_nothing() -> None:
    assert read_content_usage("") == ({}, ["no preference stated"])
    assert read_content_usage("   ") == ({}, ["no preference stated"])


def test_header_lines_join_into_one_dictionary() -> None:
    # RFC 9651 4.2: field lines are one value joined by commas; the last duplicate wins.
    assert read_content_usage(", ".join(["train-ai=y", "train-ai=n"])) == ({"train-ai": False}, [])


def test_no_content_raises() -> None:
    # Content from the network never raises: every failure is a message.
    generator = random.Random(9651)
    alphabet = string.printable + "\u00e9\u2028\x00"
    for _ in range(2000):
        value = "".join(generator.choices(alphabet, k=generator.randrange(24)))
        for reader in (read_content_usage, read_content_signal):
            explicit, messages = reader(value)
            assert set(explicit) <= set(CATEGORIES)
            assert all(isinstance(message, str) for message in messages)


# -- vocab-07: applying and combining statements (section 5) ------------------------------------


def test_an_explicit_preference_is_the_outcome() -> None:
    assert preference({"search": True}, "search") == ALLOWED
    assert preference({"search": False}, "search") == DISALLOWED


def test_a_category_without_a_preference_is_unknown() -> None:
    # vocab-07 5; no statement at all is unknown for every category (3).
    assert preference({"search": True}, "train-ai") == UNKNOWN
    assert outcomes({}) == dict.fromkeys(CATEGORIES, UNKNOWN)


def test_a_category_without_a_preference_takes_its_parents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # vocab-06 5 (a subset takes the preference of the category containing it); -07 has no
    # nested category, and the rule is one table row away should one return.
    nested = MappingProxyType({"bots": None, "train-ai": "bots", "train-genai": "train-ai"})
    monkeypatch.setattr(_usage, "CATEGORIES", nested)
    assert preference({"bots": False}, "train-genai") == DISALLOWED
    assert preference({"bots": False, "train-ai": True}, "train-genai") == ALLOWED
    assert preference({"train-genai": False}, "train-ai") == UNKNOWN


def test_an_unknown_category_is_the_callers_mistake() -> None:
    with pytest.raises(ValueError, match="unknown usage category 'tdm'"):
        preference({}, "tdm")
    with pytest.raises(ValueError, match="Content-Signal's ai-train is 'train-ai'"):
        preference({}, "ai-train")


@pytest.mark.parametrize(
    ("statements", "expected"),
    [
        # vocab-07 5.1: any disallow wins; else any allow; else unknown.
        (({"train-ai": True}, {"train-ai": False}), {"train-ai": False}),
        (({"train-ai": False}, {"train-ai": True}), {"train-ai": False}),
        (({"train-ai": True}, {}), {"train-ai": True}),
        (({"search": True}, {"train-ai": False}), {"search": True, "train-ai": False}),
        (({}, {}), {}),
        ((), {}),
    ],
)
def test_combining_statements_the_most_restrictive_wins(
    statements: tuple[dict[str, bool], ...], expected: dict[str, bool]
) -> None:
    assert combine(*statements) == expected


# -- attach-05: the robots.txt rule (section 3) and the header (section 2) ----------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("train-ai=n", (None, "train-ai=n")),
        ("/ai-ok/ train-ai=y", ("/ai-ok/", "train-ai=y")),
        ("/ai-ok/\ttrain-ai=y", ("/ai-ok/", "train-ai=y")),
        ("  /ai-ok/   train-ai=y, search=n  ", ("/ai-ok/", "train-ai=y, search=n")),
        ("/*.pdf$ train-ai=n", ("/*.pdf$", "train-ai=n")),
        ("/ train-ai=n", ("/", "train-ai=n")),
        ("/only-a-path/", ("/only-a-path/", "")),
        ("train-ai=n # a comment", (None, "train-ai=n")),
        ("*.pdf train-ai=n", (None, "*.pdf train-ai=n")),
        ("", (None, "")),
    ],
)
def test_a_rule_value_is_an_optional_path_then_the_statement(
    value: str, expected: tuple[str | None, str]
) -> None:
    # attach-05 3.2: a path starts with "/" and ends before the first SP or HTAB; a value
    # starting otherwise is all statement; the value ends at "#".
    assert split_content_usage_rule(value) == expected


def test_a_rule_without_a_slash_is_all_statement_and_may_not_parse() -> None:
    _, statement = split_content_usage_rule("*.pdf train-ai=n")
    explicit, messages = read_content_usage(statement)
    assert explicit == {}
    assert messages[0].startswith("not a Structured Fields dictionary")


def test_attach_example_header() -> None:
    # attach-05 1.2: the Content-Usage response header field.
    head = ATTACH_HEADER_EXAMPLE.split("\n\n")[0]
    fields = dict(line.split(": ", 1) for line in head.splitlines()[1:])
    assert usage_of(fields["Content-Usage"]) == {
        "train-ai": DISALLOWED,
        "search": UNKNOWN,
        "ai-input": UNKNOWN,
    }


def test_the_header_and_robots_txt_are_two_statements_that_combine() -> None:
    # vocab-07 5.1: statements "obtained using different methods" combine.
    from_robots, _ = read_content_usage("train-ai=y, search=y")
    from_header, _ = read_content_usage("train-ai=n")
    assert combine(from_robots, from_header) == {"train-ai": False, "search": True}


# -- Content-Signal (contentsignals.org; draft-romm-aipref-contentsignals-00) ------------------


def test_contentsignals_org_example() -> None:
    line = CONTENTSIGNALS_ORG_EXAMPLE.splitlines()[1]
    explicit, messages = read_content_signal(line.partition(":")[2])
    assert messages == []
    assert outcomes(explicit) == {"train-ai": DISALLOWED, "search": ALLOWED, "ai-input": ALLOWED}


@pytest.mark.parametrize("value", ["search=yes, ai-train=no", "search=yes,ai-train=no"])
def test_cloudflare_managed_default(value: str) -> None:
    # Cloudflare's managed robots.txt default, as published and as seen without the space.
    explicit, messages = read_content_signal(value)
    assert messages == []
    assert outcomes(explicit) == {"train-ai": DISALLOWED, "search": ALLOWED, "ai-input": UNKNOWN}


def test_content_signal_is_read_tolerantly() -> None:
    assert read_content_signal(" Search = YES ,\tAI-Train=No , ,") == (
        {"search": True, "train-ai": False},
        [],
    )


def test_unknown_content_signals_are_ignored_with_a_message() -> None:
    assert read_content_signal("search-ai=yes, ai-retrieval=yes, search=no") == (
        {"search": False},
        [
            "unknown content signal 'search-ai', ignored",
            "unknown content signal 'ai-retrieval', ignored",
        ],
    )


@pytest.mark.parametrize(
    ("value", "answer"),
    [("ai-train=maybe", "maybe"), ("ai-train", ""), ("ai-train=n", "n"), ("ai-train=", "")],
)
def test_a_content_signal_other_than_yes_or_no_is_unknown(value: str, answer: str) -> None:
    assert read_content_signal(value) == (
        {},
        [f"ai-train: {answer!r} is not yes or no; preference unknown"],
    )


def test_a_content_signal_given_both_ways_is_disallowed() -> None:
    # No rule in the signals' text; the vocabulary's rule for conflicting statements (5.1).
    assert read_content_signal("ai-train=yes, ai-train=no, ai-train=yes") == (
        {"train-ai": False},
        [
            "ai-train given both yes and no; disallowed",
            "ai-train given both yes and no; disallowed",
        ],
    )
    assert read_content_signal("search=yes, search=yes") == ({"search": True}, [])


def test_an_empty_content_signal_states_nothing() -> None:
    assert read_content_signal("") == ({}, ["no preference stated"])
    assert read_content_signal(" , ") == ({}, ["no preference stated"])


def test_content_signal_and_content_usage_combine() -> None:
    signal, _ = read_content_signal("search=yes, ai-train=yes, ai-input=no")
    usage, _ = read_content_usage("train-ai=n")
    assert outcomes(combine(signal, usage)) == {
        "train-ai": DISALLOWED,
        "search": ALLOWED,
        "ai-input": DISALLOWED,
    }
