"""The Structured Field Values parser (RFC 9651): the RFC's examples, each type's edge cases,
the minimum sizes the RFC asks parsers to support, and cases from httpwg/structured-field-tests.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from scrapy_rerp.engine._sfv import (
    Date,
    DisplayString,
    StructuredFieldError,
    Token,
    parse_dictionary,
    parse_item,
    parse_list,
)

PARSERS = {"dictionary": parse_dictionary, "list": parse_list, "item": parse_item}
FAILS = None  # an expected value: the field must fail to parse


def shape(value: object) -> object:
    """*value* with order and types made visible, so that equality checks both.

    Dictionaries and parameters are ordered (RFC 9651 3.2), and a Token is not a String nor a
    Date an Integer although Python compares them equal.
    """
    if isinstance(value, dict):
        return [(key, shape(member)) for key, member in value.items()]
    if isinstance(value, (list, tuple)):
        return type(value)(shape(member) for member in value)
    return type(value).__name__, value


def parses_as(kind: str, text: str, expected: object) -> None:
    assert shape(PARSERS[kind](text)) == shape(expected)


# -- the RFC's examples (sections 2 and 3) ------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (
            "item",
            '2; foourl="https://foo.example.com/"',
            (2, {"foourl": "https://foo.example.com/"}),
        ),
        ("list", "sugar, tea, rum", [(Token("sugar"), {}), (Token("tea"), {}), (Token("rum"), {})]),
        (
            "list",
            '("foo" "bar"), ("baz"), ("bat" "one"), ()',
            [
                ([("foo", {}), ("bar", {})], {}),
                ([("baz", {})], {}),
                ([("bat", {}), ("one", {})], {}),
                ([], {}),
            ],
        ),
        (
            "list",
            '("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1',
            [
                ([("foo", {"a": 1, "b": 2})], {"lvl": 5}),
                ([("bar", {}), ("baz", {})], {"lvl": 1}),
            ],
        ),
        (
            "list",
            'abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w',
            [
                (Token("abc"), {"a": 1, "b": 2, "cde_456": True}),
                ([(Token("ghi"), {"jk": 4}), (Token("l"), {})], {"q": "9", "r": Token("w")}),
            ],
        ),
        ("item", "1; a; b=?0", (1, {"a": True, "b": False})),
        (
            "dictionary",
            'en="Applepie", da=:w4ZibGV0w6ZydGU=:',
            {"en": ("Applepie", {}), "da": ("\u00c6blet\u00e6rte".encode(), {})},
        ),
        (
            "dictionary",
            "a=?0, b, c; foo=bar",
            {"a": (False, {}), "b": (True, {}), "c": (True, {"foo": Token("bar")})},
        ),
        (
            "dictionary",
            "rating=1.5, feelings=(joy sadness)",
            {
                "rating": (Decimal("1.5"), {}),
                "feelings": ([(Token("joy"), {}), (Token("sadness"), {})], {}),
            },
        ),
        (
            "dictionary",
            "a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid",
            {
                "a": ([(1, {}), (2, {})], {}),
                "b": (3, {}),
                "c": (4, {"aa": Token("bb")}),
                "d": ([(5, {}), (6, {})], {"valid": True}),
            },
        ),
        ("dictionary", "foo=1, bar=2", {"foo": (1, {}), "bar": (2, {})}),
        ("item", "5", (5, {})),
        ("item", "5; foo=bar", (5, {"foo": Token("bar")})),
        ("item", "42", (42, {})),
        ("item", "4.5", (Decimal("4.5"), {})),
        ("item", '"hello world"', ("hello world", {})),
        ("item", "foo123/456", (Token("foo123/456"), {})),
        (
            "item",
            ":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:",
            (b"pretend this is binary content.", {}),
        ),
        ("item", "?1", (True, {})),
        ("item", "@1659578233", (Date(1659578233), {})),
        (
            "item",
            '%"This is intended for display to %c3%bcsers."',
            (DisplayString("This is intended for display to \u00fcsers."), {}),
        ),
    ],
)
def test_rfc_examples(kind: str, text: str, expected: object) -> None:
    parses_as(kind, text, expected)


def test_field_lines_are_one_value_joined_by_commas() -> None:
    # RFC 9651 4.2: "Example-Dict: foo=1" and "Example-Dict: bar=2" are "foo=1, bar=2".
    assert parse_dictionary(", ".join(["foo=1", "bar=2"])) == parse_dictionary("foo=1, bar=2")


# -- types stay apart -----------------------------------------------------------------------


def test_a_token_is_not_a_string() -> None:
    token, _ = parse_item("y")
    string, _ = parse_item('"y"')
    assert type(token) is Token and type(string) is str
    assert repr(token) == "Token('y')"


def test_a_date_is_not_an_integer_and_a_boolean_not_either() -> None:
    assert type(parse_item("@0")[0]) is Date
    assert type(parse_item("0")[0]) is int
    assert type(parse_item("?0")[0]) is bool


def test_a_display_string_is_not_a_string() -> None:
    value, _ = parse_item('%"caf%c3%a9"')
    assert type(value) is DisplayString and value == "caf\u00e9"


def test_decimals_are_exact() -> None:
    assert parse_item("-0.1")[0] == Decimal("-0.1")
    assert parse_item("123456789012.123")[0] == Decimal("123456789012.123")


# -- dictionaries: duplicates, booleans, whitespace ------------------------------------------


def test_a_repeated_key_takes_the_last_value_in_the_first_place() -> None:
    parses_as(
        "dictionary",
        "a=1, b=2, a=3;x",
        {"a": (3, {"x": True}), "b": (2, {})},
    )


def test_a_repeated_parameter_takes_the_last_value() -> None:
    parses_as("item", "a;b=1;c=2;b=3", (Token("a"), {"b": 3, "c": 2}))


def test_only_the_chosen_members_parameters_remain() -> None:
    # The last member wins whole: its parameters, not a merge of both members'.
    parses_as("dictionary", "a;x=1, a=2", {"a": (2, {})})


@pytest.mark.parametrize("text", ["  a=1  ", "a=1 ,\tb=2", "a=1\t, b=2", "a=1\t"])
def test_spaces_around_members_and_tabs_after_them_are_allowed(text: str) -> None:
    # Members end with optional whitespace (OWS: spaces and tabs); the field, with spaces.
    assert parse_dictionary(text)["a"] == (1, {})


@pytest.mark.parametrize("text", ["\ta=1", "a =1", "a= 1", "a=1 ;x", "a=(1\t2)"])
def test_other_whitespace_fails(text: str) -> None:
    with pytest.raises(StructuredFieldError):
        parse_dictionary(text)


def test_an_empty_field_is_an_empty_dictionary_or_list_but_no_item() -> None:
    assert parse_dictionary("") == {}
    assert parse_dictionary("   ") == {}
    assert parse_list("") == []
    with pytest.raises(StructuredFieldError):
        parse_item("")


# -- limits: the RFC's maximums fail, its minimums are supported -----------------------------


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("999999999999999", True),
        ("-999999999999999", True),
        ("1000000000000000", False),
        ("999999999999.999", True),
        ("1000000000000.0", False),
        ("0.1234", False),
        ("@999999999999999", True),
        ("@1000000000000000", False),
    ],
)
def test_number_limits(text: str, valid: bool) -> None:
    if valid:
        parse_item(text)
    else:
        with pytest.raises(StructuredFieldError):
            parse_item(text)


def test_the_minimum_sizes_parsers_must_support() -> None:
    # RFC 9651 3.1 to 3.3.5: 1024 list and dictionary members, 256 inner list members and
    # parameters, 64-character keys, 1024-character strings, 512-character tokens, 16384 octets.
    key = "k" * 64
    assert len(parse_list(", ".join(["a"] * 1024))) == 1024
    assert len(parse_dictionary(", ".join(f"a{index}" for index in range(1024)))) == 1024
    assert len(parse_list("(" + " ".join(["1"] * 256) + ")")[0][0]) == 256  # type: ignore[arg-type]
    assert len(parse_item("a" + "".join(f";p{index}" for index in range(256)))[1]) == 256
    assert key in parse_dictionary(f"{key}=1;{key}")
    assert parse_item('"' + "s" * 1024 + '"')[0] == "s" * 1024
    assert parse_item("t" * 512)[0] == "t" * 512
    assert parse_item(":" + "AAAA" * 5462 + ":")[0] == bytes(16386)


# -- errors ---------------------------------------------------------------------------------


def test_an_error_is_a_value_error_with_a_message_and_the_offset() -> None:
    with pytest.raises(StructuredFieldError) as caught:
        parse_dictionary("train-ai=y, Search=n")
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.offset == 12
    assert error.message == "a key starts with a lowercase letter or '*'"
    assert str(error) == f"{error.message} (at character 12)"


def test_text_outside_ascii_fails_where_it_starts() -> None:
    with pytest.raises(StructuredFieldError) as caught:
        parse_dictionary('a="ok", b="caf\u00e9"')
    assert caught.value.offset == 14


def test_bytes_are_read_as_ascii() -> None:
    assert parse_dictionary(b"train-ai=n") == {"train-ai": (Token("n"), {})}
    with pytest.raises(StructuredFieldError):
        parse_dictionary(b'a="\xc3\xa9"')


@pytest.mark.parametrize(
    "text",
    [
        "a=",
        "a=,b",
        "a=(",
        "a=(1",
        "a=(1 2",
        'a="x',
        'a="\\x"',
        "a=:YQ",
        "a=?",
        "a=?2",
        "a=@",
        "a=@1.5",
        'a=%"x',
        "a=%x",
        'a=%"%4"',
        "a=1.",
        "a=-",
        "a=!",
        "a;",
        "a;B",
        "a,",
        ",a",
    ],
)
def test_malformed_values_fail(text: str) -> None:
    with pytest.raises(StructuredFieldError):
        parse_dictionary(text)


# -- httpwg/structured-field-tests ----------------------------------------------------------

# A selection from https://github.com/httpwg/structured-field-tests at commit
# 1e280c3ed9ffe0ca5fdb1d97219dddc389007677 (its dictionary, list, item, number, string, token,
# binary, boolean, date, display-string, param-dict, param-list and listlist files), rewritten
# as Python values. Copyright (c) 2018- IETF Trust and the persons identified as authors of the
# code; used under the suite's BSD 3-Clause license (its LICENSE.md). Each case: (name, field
# type, field lines, expected value or FAILS); several field lines are joined with ", ".
HTTPWG_CASES = [
    # dictionary.json
    (
        "basic dictionary",
        "dictionary",
        ['en="Applepie", da=:w4ZibGV0w6ZydGUK:'],
        {"en": ("Applepie", {}), "da": (b"\xc3\x86blet\xc3\xa6rte\n", {})},
    ),
    ("empty dictionary", "dictionary", [""], {}),
    ("list item dictionary", "dictionary", ["a=(1 2)"], {"a": ([(1, {}), (2, {})], {})}),
    ("empty list item dictionary", "dictionary", ["a=()"], {"a": ([], {})}),
    ("tab separated dictionary", "dictionary", ["a=1\t,\tb=2"], {"a": (1, {}), "b": (2, {})}),
    (
        "leading whitespace dictionary",
        "dictionary",
        ["     a=1 ,  b=2"],
        {"a": (1, {}), "b": (2, {})},
    ),
    ("whitespace before = dictionary", "dictionary", ["a =1, b=2"], FAILS),
    ("whitespace after = dictionary", "dictionary", ["a=1, b= 2"], FAILS),
    ("two lines dictionary", "dictionary", ["a=1", "b=2"], {"a": (1, {}), "b": (2, {})}),
    (
        "missing value dictionary",
        "dictionary",
        ["a=1, b, c=3"],
        {"a": (1, {}), "b": (True, {}), "c": (3, {})},
    ),
    (
        "missing value with params dictionary",
        "dictionary",
        ["a=1, b;foo=9, c=3"],
        {"a": (1, {}), "b": (True, {"foo": 9}), "c": (3, {})},
    ),
    ("trailing comma dictionary", "dictionary", ["a=1, b=2,"], FAILS),
    ("empty item dictionary", "dictionary", ["a=1,,b=2,"], FAILS),
    ("duplicate key dictionary", "dictionary", ["a=1,b=2,a=3"], {"a": (3, {}), "b": (2, {})}),
    (
        "dictionary key ordering",
        "dictionary",
        ["m, z, t"],
        {"m": (True, {}), "z": (True, {}), "t": (True, {})},
    ),
    ("numeric key dictionary", "dictionary", ["a=1,1b=2,a=1"], FAILS),
    ("uppercase key dictionary", "dictionary", ["a=1,B=2,a=1"], FAILS),
    ("bad key dictionary", "dictionary", ["a=1,b!=2,a=1"], FAILS),
    # list.json
    ("basic list", "list", ["1, 42"], [(1, {}), (42, {})]),
    ("empty list", "list", [""], []),
    ("leading SP list", "list", ["  42, 43"], [(42, {}), (43, {})]),
    ("two line list", "list", ["1", "42"], [(1, {}), (42, {})]),
    ("trailing comma list", "list", ["1, 42,"], FAILS),
    ("empty item list (multiple field lines)", "list", ["1", "", "42"], FAILS),
    # item.json
    ("empty item", "item", [""], FAILS),
    ("leading space", "item", [" \t 1"], FAILS),
    ("trailing space", "item", ["1 \t "], FAILS),
    ("leading and trailing space", "item", ["  1  "], (1, {})),
    # number.json
    ("negative zero", "item", ["-0"], (0, {})),
    ("leading 0 integer", "item", ["042"], (42, {})),
    ("whitespace after sign", "item", ["- 42"], FAILS),
    ("long integer", "item", ["123456789012345"], (123456789012345, {})),
    ("too long integer", "item", ["1234567890123456"], FAILS),
    ("negative too long integer", "item", ["-1234567890123456"], FAILS),
    ("simple decimal", "item", ["1.23"], (Decimal("1.23"), {})),
    ("tricky precision decimal", "item", ["123456789012.1"], (Decimal("123456789012.1"), {})),
    ("double decimal decimal", "item", ["1.5.4"], FAILS),
    ("decimal with zero fractional digits", "item", ["1."], FAILS),
    ("decimal with four fractional digits", "item", ["1.1234"], FAILS),
    ("decimal with thirteen integer digits", "item", ["1234567890123.0"], FAILS),
    (
        "decimal with 1 significant digit and 2 insignificant digits",
        "item",
        ["1.200"],
        (Decimal("1.2"), {}),
    ),
    # string.json
    ("basic string", "item", ['"foo bar"'], ("foo bar", {})),
    ("empty string", "item", ['""'], ("", {})),
    ("non-ascii string", "item", ['"f\u00fc\u00fc"'], FAILS),
    ("tab in string", "item", ['"\t"'], FAILS),
    ("string quoting", "item", ['"foo \\"bar\\" \\\\ baz"'], ('foo "bar" \\ baz', {})),
    ("bad string quoting", "item", ['"foo \\,"'], FAILS),
    ("ending string quote", "item", ['"foo \\"'], FAILS),
    ("unbalanced string", "item", ['"foo'], FAILS),
    # token.json
    ("basic token - item", "item", ["a_b-c.d3:f%00/*"], (Token("a_b-c.d3:f%00/*"), {})),
    ("token starting with capitals - item", "item", ["FooBar"], (Token("FooBar"), {})),
    # binary.json
    ("basic binary", "item", [":aGVsbG8=:"], (b"hello", {})),
    ("empty binary", "item", ["::"], (b"", {})),
    ("padding in middle", "item", [":a=GVsbG8=:"], FAILS),
    (
        "bad padding",
        "item",
        [":aGVsbG8:"],
        (b"hello", {}),
    ),  # can_fail in the suite: the RFC asks parsers to accept it
    ("bad padding dot", "item", [":aGVsbG8.:"], FAILS),
    (
        "non-zero pad bits",
        "item",
        [":iZ==:"],
        (b"\x89", {}),
    ),  # can_fail in the suite: the RFC asks parsers to accept it
    ("base64url binary", "item", [":_-Ah:"], FAILS),
    ("binary prefix only", "item", [":"], FAILS),
    # boolean.json
    ("basic true boolean", "item", ["?1"], (True, {})),
    ("basic false boolean", "item", ["?0"], (False, {})),
    ("unknown boolean", "item", ["?Q"], FAILS),
    ("whitespace boolean", "item", ["? 1"], FAILS),
    ("T boolean", "item", ["?T"], FAILS),
    ("boolean prefix only", "item", ["?"], FAILS),
    # date.json
    ("date - 2022-08-04 01:57:13", "item", ["@1659578233"], (Date(1659578233), {})),
    ("date - 1917-05-30 22:02:47", "item", ["@-1659578233"], (Date(-1659578233), {})),
    ("date - decimal", "item", ["@1659578233.12"], FAILS),
    ("too large syntactic date - 1,000,000,000,000,000", "item", ["@1000000000000000"], FAILS),
    ("date - empty", "item", ["@"], FAILS),
    ("date with negative zero", "item", ["@-0"], (Date(0), {})),
    # display-string.json
    (
        "basic display string (ascii content)",
        "item",
        ['%"foo bar"'],
        (DisplayString("foo bar"), {}),
    ),
    ("non-ascii display string (uppercase escaping)", "item", ['%"f%C3%BC%C3%BC"'], FAILS),
    (
        "non-ascii display string (lowercase escaping)",
        "item",
        ['%"f%c3%bc%c3%bc"'],
        (DisplayString("f\u00fc\u00fc"), {}),
    ),
    ("non-ascii display string (unescaped)", "item", ['%"f\u00fc\u00fc"'], FAILS),
    (
        "display string quoting",
        "item",
        ['%"foo %22bar%22 \\ baz"'],
        (DisplayString('foo "bar" \\ baz'), {}),
    ),
    ("bad display string utf-8 (invalid 2-byte seq)", "item", ['%"%c3%28"'], FAILS),
    ("bad display string escaping", "item", ['%"foo %a'], FAILS),
    ("truncated display string escape (zero digits)", "item", ['%"%"'], FAILS),
    ("BOM in display string", "item", ['%"BOM: %ef%bb%bf"'], (DisplayString("BOM: \ufeff"), {})),
    ("over-encoded display string", "item", ['%"%61"'], (DisplayString("a"), {})),
    # param-dict.json
    (
        "basic parameterised dict",
        "dictionary",
        ['abc=123;a=1;b=2, def=456, ghi=789;q=9;r="+w"'],
        {"abc": (123, {"a": 1, "b": 2}), "def": (456, {}), "ghi": (789, {"q": 9, "r": "+w"})},
    ),
    (
        "missing parameter value parameterised dict",
        "dictionary",
        ["a=3;c;d=5"],
        {"a": (3, {"c": True, "d": 5})},
    ),
    ("whitespace before ; parameterised dict", "dictionary", ["a=b ;q=0.5"], FAILS),
    (
        "whitespace after ; parameterised dict",
        "dictionary",
        ["a=b; q=0.5"],
        {"a": (Token("b"), {"q": Decimal("0.5")})},
    ),
    (
        "extra whitespace parameterised dict",
        "dictionary",
        ["a=b;  c=1  ,  d=e; f=2; g=3"],
        {"a": (Token("b"), {"c": 1}), "d": (Token("e"), {"f": 2, "g": 3})},
    ),
    # param-list.json
    (
        "duplicate parameter with different positions",
        "list",
        ["a;b=1;c=2;b=3"],
        [(Token("a"), {"b": 3, "c": 2})],
    ),
    ("parameter ordering", "list", ["a;m;z;t"], [(Token("a"), {"m": True, "z": True, "t": True})]),
    ("trailing semicolon in parameters", "list", ["a;b=1;"], FAILS),
    ("parameter prefix only", "list", ["a;"], FAILS),
    # listlist.json
    (
        "basic list of lists",
        "list",
        ["(1 2), (42 43)"],
        [([(1, {}), (2, {})], {}), ([(42, {}), (43, {})], {})],
    ),
    (
        "empty middle item list of lists",
        "list",
        ["(1),(),(42)"],
        [([(1, {})], {}), ([], {}), ([(42, {})], {})],
    ),
    ("extra whitespace list of lists", "list", ["(  1  42  )"], [([(1, {}), (42, {})], {})]),
    ("wrong whitespace list of lists", "list", ["(1\t 42)"], FAILS),
    ("nested inner lists", "list", ["((1))"], FAILS),
    ("dictionary in inner list", "list", ["(a=1)"], FAILS),
    ("no closing parenthesis", "list", ["("], FAILS),
]


@pytest.mark.parametrize(
    ("kind", "lines", "expected"),
    [case[1:] for case in HTTPWG_CASES],
    ids=[case[0] for case in HTTPWG_CASES],
)
def test_structured_field_tests(kind: str, lines: list[str], expected: object) -> None:
    text = ", ".join(lines)
    if expected is FAILS:
        with pytest.raises(StructuredFieldError):
            PARSERS[kind](text)
    else:
        parses_as(kind, text, expected)
