"""RSL 1.0's ``License:`` line: a file-wide directive (any number, inside or outside groups),
its absolute http(s) URLs in ``RobotsTxt.licenses``, any other value a warning; written back by
``str()`` and kept by pickles; the rerp-compatible classes read files as before."""

from __future__ import annotations

import pickle

import pytest

from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, WARNING_CODES, parse
from scrapy_rerp.engine.rerp import RobotExclusionRulesParser

TEXT = (
    "License: https://example.com/license.xml\n"
    "User-agent: *\n"
    "License: /relative.xml\n"
    "Disallow: /private\n"
    "License: https://cdn.example.net/rsl.xml\n"
    "\n"
    "User-agent: BadBot\n"
    "Disallow: /\n"
    "License: ftp://example.com/license.xml\n"
    "LICENSE:   HTTP://Other.example/l.xml   # a comment\n"
)


@pytest.mark.parametrize("syntax", [RFC9309, GYM2008, MK1996])
def test_licenses_are_the_absolute_urls_in_file_order(syntax: int) -> None:
    robots = parse(TEXT, syntax)
    assert robots.licenses == (
        "https://example.com/license.xml",
        "https://cdn.example.net/rsl.xml",
        "HTTP://Other.example/l.xml",
    )
    assert robots.file_values("License") == (
        "https://example.com/license.xml",
        "/relative.xml",
        "https://cdn.example.net/rsl.xml",
        "ftp://example.com/license.xml",
        "HTTP://Other.example/l.xml",
    )
    assert [(w.line, w.code) for w in robots.warnings] == [
        (3, "relative-license"),
        (9, "invalid-license"),
    ]
    assert {"relative-license", "invalid-license"} <= set(WARNING_CODES)
    # A License line between the rules changes no group.
    assert not robots.allowed("https://example.com/private/a", "bot")
    assert not robots.allowed("https://example.com/a", "BadBot")
    assert robots.allowed("https://example.com/a", "bot")


@pytest.mark.parametrize(
    "value", ["", "example.com/l.xml", "//example.com/l.xml", "https://", "http://[::1/l.xml"]
)
def test_a_value_that_is_no_absolute_url_is_not_listed(value: str) -> None:
    robots = parse(f"License: {value}\n")
    assert robots.licenses == ()
    assert [w.code for w in robots.warnings] in (["relative-license"], ["invalid-license"])


def test_a_file_without_license_lines_lists_none() -> None:
    assert parse("User-agent: *\nDisallow: /\n").licenses == ()
    assert parse(b"\xff\xfe garbage\nLicense\n").licenses == ()


@pytest.mark.parametrize("syntax", [RFC9309, GYM2008, MK1996])
def test_str_writes_license_lines_back_and_pickles_keep_them(syntax: int) -> None:
    robots = parse(TEXT, syntax)
    clone = pickle.loads(pickle.dumps(robots))
    assert clone.licenses == robots.licenses
    assert clone.file_values("License") == robots.file_values("License")
    assert clone.warnings == robots.warnings
    if syntax == RFC9309:
        again = parse(str(robots))
        assert again.file_values("License") == robots.file_values("License")
        assert "License: https://example.com/license.xml\n" in str(robots)


def test_rerp_classes_read_a_file_with_license_lines_as_before() -> None:
    # rerp 1.7.1 does not know License: a line it ignores, which ends no record.
    text = "User-agent: a\nLicense: https://example.com/l.xml\nUser-agent: b\nDisallow: /x\n"
    parser = RobotExclusionRulesParser()
    parser.parse(text)
    assert not parser.is_allowed("a", "/x") and not parser.is_allowed("b", "/x")
    without = RobotExclusionRulesParser()
    without.parse(text.replace("License: https://example.com/l.xml\n", "# comment\n"))
    assert str(parser) == str(without)
