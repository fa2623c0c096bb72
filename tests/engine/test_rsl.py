"""RSL 1.0 licence files (``parse_rsl``, ``RslFile.decision``): the specification's examples as
data (``tests/data/rsl.json``), every payment type, the server attribute, prohibits against
permits, full-URL and path patterns, and bad input: broken XML, entity bombs, external
entities, DTDs, oversized, deep and wide files, random bytes; none raises, none states anything.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from scrapy_rerp.engine import (
    MAX_RSL_BYTES,
    MAX_RSL_DEPTH,
    MAX_RSL_ELEMENTS,
    MAX_RSL_TEXT_CHARS,
    RSL_PAYMENT_TYPES,
    RSL_USAGES,
    RSL_WARNING_CODES,
    RslFile,
    parse_rsl,
)
from tests.support.conformance import assert_conforms

DATA = Path(__file__).resolve().parents[1] / "data" / "rsl.json"
with open(DATA, encoding="utf-8") as handle:
    SOURCE: dict[str, Any] = json.load(handle)
RECORDS: list[dict[str, Any]] = SOURCE["records"]
PURPOSES = ("train-ai", "search", "ai-input")
FILE_URL = "https://example.com/license.xml"
NS = 'xmlns="https://rslstandard.org/rsl"'


def rsl(body: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<rsl {NS}>\n{body}\n</rsl>\n'.encode()


def one(licence: str, attributes: str = 'url="/"') -> RslFile:
    return parse_rsl(rsl(f"<content {attributes}><license>{licence}</license></content>"), FILE_URL)


def outcomes(file: RslFile, url: str = "https://example.com/page") -> dict[str, str]:
    return {purpose: file.decision(url, purpose).preference for purpose in PURPOSES}


def codes(file: RslFile) -> list[str]:
    return [problem.code for problem in file.problems]


# -- the specification's examples -------------------------------------------------------------


def answer(record: dict[str, Any]) -> dict[str, Any]:
    file = parse_rsl(record["rsl"].encode(), FILE_URL)
    assert file.valid and not file.problems, file.problems
    found: dict[str, Any] = {p: file.decision(record["url"], p).preference for p in PURPOSES}
    decision = file.decision(record["url"], "train-ai")
    found["content"] = decision.content.url if decision.content else None
    found["license"] = decision.license
    assert decision.file == FILE_URL
    return found


def test_the_file_says_where_it_comes_from() -> None:
    for name in ("source", "url", "version", "license", "transcription", "conventions"):
        assert SOURCE.get(name), name
    ids = [record["id"] for record in RECORDS]
    assert len(ids) == len(set(ids)) and len(ids) >= 20
    assert not [record["id"] for record in RECORDS if "divergence" in record]


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_record(record: dict[str, Any]) -> None:
    assert_conforms(answer(record), record)


# -- payments, servers, permits and prohibits -------------------------------------------------


@pytest.mark.parametrize("payment", sorted(RSL_PAYMENT_TYPES))
def test_every_payment_type(payment: str) -> None:
    file = one(f'<permits type="usage">all</permits><payment type="{payment}"/>')
    held = payment in ("free", "attribution")
    assert outcomes(file) == dict.fromkeys(PURPOSES, "allowed" if held else "disallowed")
    decision = file.decision("https://example.com/page", "search")
    assert decision.license == 1 and decision.content is not None
    if not held:
        assert f"only with payment ({payment})" in decision.reason and decision.refused


def test_no_payment_is_free_and_an_unknown_one_is_not_held() -> None:
    assert outcomes(one('<permits type="usage">search</permits>'))["search"] == "allowed"
    file = one('<permits type="usage">search</permits><payment type="barter"/>')
    assert outcomes(file)["search"] == "disallowed"
    assert codes(file) == ["unknown-payment"]
    either = one('<payment type="crawl"/><payment type="free"/>')
    assert outcomes(either) == dict.fromkeys(PURPOSES, "allowed")


def test_a_licence_server_refuses_even_a_free_licence() -> None:
    file = one('<payment type="free"/>', 'url="/" server="https://license.example/api"')
    assert outcomes(file) == dict.fromkeys(PURPOSES, "disallowed")
    decision = file.decision("https://example.com/page", "ai-input")
    assert "licence server https://license.example/api" in decision.reason
    assert decision.content is not None and decision.content.server == "https://license.example/api"


def test_a_prohibition_refuses_a_permitted_server_does_not_hide_it() -> None:
    file = one(
        '<permits type="usage">all</permits><prohibits type="usage">search</prohibits>',
        'url="/" server="https://license.example/api"',
    )
    assert file.decision("https://example.com/a", "search").reason.endswith("prohibits search")


@pytest.mark.parametrize(
    ("token", "refused"),
    [
        ("all", {"train-ai", "ai-input", "search"}),
        ("ai-all", {"train-ai", "ai-input"}),
        ("ai-train", {"train-ai"}),
        ("ai-input", {"ai-input"}),
        ("ai-index", {"ai-input"}),
        ("search", {"search"}),
    ],
)
def test_each_usage_token_prohibits_its_purposes(token: str, refused: set[str]) -> None:
    assert set(RSL_USAGES[token]) == refused
    found = outcomes(one(f'<prohibits type="usage">{token}</prohibits>'))
    assert found == {p: "disallowed" if p in refused else "allowed" for p in PURPOSES}
    permitted = outcomes(one(f'<permits type="usage">{token}</permits>'))
    assert permitted == {p: "allowed" if p in refused else "disallowed" for p in PURPOSES}


def test_tokens_are_comma_or_blank_separated_any_case_and_unknown_ones_listed() -> None:
    file = one('<permits type="usage"> Search ,\n AI-Train  sing</permits>')
    assert outcomes(file) == {"train-ai": "allowed", "search": "allowed", "ai-input": "disallowed"}
    assert codes(file) == ["unknown-usage"]
    nothing_known = one('<permits type="usage">train-ai</permits>')  # a draft's spelling
    assert outcomes(nothing_known) == dict.fromkeys(PURPOSES, "disallowed")
    assert "permits only train-ai" in nothing_known.decision("https://e.com/", "search").reason


def test_an_unknown_term_type_is_skipped() -> None:
    file = one('<prohibits type="colour">all</prohibits>')
    assert outcomes(file) == dict.fromkeys(PURPOSES, "allowed")
    assert codes(file) == ["unknown-term-type"]


def test_several_licences_each_refusal_named() -> None:
    file = parse_rsl(
        rsl(
            '<content url="/"><license><permits type="usage">all</permits></license>'
            '<license><prohibits type="usage">ai-input</prohibits></license></content>'
        ),
        FILE_URL,
    )
    decision = file.decision("https://example.com/a", "ai-input")
    assert (decision.preference, decision.license) == ("disallowed", 2)
    assert file.decision("https://example.com/a", "search").license == 1


# -- url patterns -----------------------------------------------------------------------------


PATTERNS = rsl(
    '<content url="/"><license><payment type="free"/></license></content>'
    '<content url="/a/*/b$"><license><prohibits type="usage">all</prohibits></license></content>'
    '<content url="https://example.com:443/x"><license><prohibits type="usage">search'
    "</prohibits></license></content>"
    '<content url="http://example.com/x"><license><prohibits type="usage">ai-train'
    "</prohibits></license></content>"
    '<content url="/caf%c3%a9"><license><prohibits type="usage">ai-input'
    "</prohibits></license></content>"
)


@pytest.mark.parametrize(
    ("url", "content"),
    [
        ("https://example.com/", "/"),
        ("https://example.com/a/z/b", "/a/*/b$"),
        ("https://example.com/a/z/q/b", "/a/*/b$"),
        ("https://example.com/a/z/b/", "/"),
        ("https://example.com/a/z/b?q", "/"),
        ("https://EXAMPLE.com/x/y", "https://example.com:443/x"),
        ("http://example.com/x", "http://example.com/x"),
        ("https://example.com:8443/x", "/"),
        ("https://example.com/café", "/caf%c3%a9"),
        ("https://example.com/caf%C3%A9", "/caf%c3%a9"),
        ("/a/b/b", "/a/*/b$"),
    ],
)
def test_urls_match_as_rfc9309_rules_the_longest_first(url: str, content: str) -> None:
    found = parse_rsl(PATTERNS, FILE_URL).content_for(url)
    assert found is not None and found.url == content


def test_a_content_without_a_usable_url_is_skipped() -> None:
    file = parse_rsl(
        rsl(
            '<content><license/></content><content url="relative/"><license/></content>'
            '<content url="https://"><license/></content><content url="/ok"></content>'
        ),
        FILE_URL,
    )
    assert codes(file) == ["bad-content", "bad-content", "bad-content", "no-license"]
    assert [c.url for c in file.contents] == ["/ok"]
    assert file.decision("https://example.com/ok", "search").preference == "unknown"


def test_a_missing_namespace_is_read_with_a_problem_and_other_namespaces_ignored() -> None:
    plain = parse_rsl(
        b'<rsl><content url="/"><license><prohibits type="usage">all'
        b"</prohibits></license></content></rsl>"
    )
    assert plain.valid and codes(plain) == ["no-namespace"]
    assert outcomes(plain) == dict.fromkeys(PURPOSES, "disallowed")
    foreign = parse_rsl(
        rsl(
            '<x:content xmlns:x="urn:other" url="/"><license/></x:content>'
            '<content url="/"><license><x:permits xmlns:x="urn:other">search</x:permits>'
            '<payment type="crawl"><openrsl:binding xmlns:openrsl="urn:o" ref="r"/></payment>'
            "</license></content>"
        )
    )
    assert foreign.valid and not foreign.problems and len(foreign.contents) == 1
    assert outcomes(foreign) == dict.fromkeys(PURPOSES, "disallowed")


def test_an_unknown_purpose_is_the_callers_mistake() -> None:
    file = one("")
    with pytest.raises(ValueError, match="unknown usage category"):
        file.decision("https://example.com/", "ai-everything")
    assert file.decision("https://example.com/", "ai-train").purpose == "train-ai"


# -- bad input ---------------------------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rsl [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>
<prohibits type="usage">&lol9;</prohibits></license></content></rsl>
"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE rsl [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/&xxe;"><license/></content></rsl>
"""
EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE rsl SYSTEM "http://127.0.0.1:9/rsl.dtd">
<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license/></content></rsl>
"""
PARAMETER = b"""<?xml version="1.0"?>
<!DOCTYPE rsl [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]>
<rsl xmlns="https://rslstandard.org/rsl"/>
"""


@pytest.mark.parametrize(
    "body", [BILLION_LAUGHS, EXTERNAL, EXTERNAL_DTD, PARAMETER], ids=["bomb", "xxe", "dtd", "pe"]
)
def test_dtds_and_entities_are_refused_and_state_nothing(body: bytes) -> None:
    file = parse_rsl(body, FILE_URL)
    assert not file.valid and file.contents == ()
    assert codes(file) == ["dtd-refused"]
    assert outcomes(file) == dict.fromkeys(PURPOSES, "unknown")


def test_an_undeclared_entity_is_not_xml() -> None:
    file = parse_rsl(rsl('<content url="/&xxe;"><license/></content>'))
    assert not file.valid and codes(file) == ["not-xml"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "not-xml"),
        (b"<rsl xmlns='https://rslstandard.org/rsl'><content url='/'>", "not-xml"),
        (b"<?xml version='1.0' encoding='no-such-codec'?><rsl/>", "not-xml"),
        ("<rsl>\ud800</rsl>", "not-xml"),
        (b"<html><body>Not found</body></html>", "not-rsl"),
        (b"<rss xmlns:rsl='https://rslstandard.org/rsl' version='2.0'/>", "not-rsl"),
        (b" " * (MAX_RSL_BYTES + 1), "too-large"),
        (rsl("<content>" * MAX_RSL_DEPTH + "</content>" * MAX_RSL_DEPTH), "too-deep"),
        (rsl("<schema/>" * MAX_RSL_ELEMENTS), "too-many-elements"),
        (
            rsl(
                f'<content url="/"><license><permits>{"a," * MAX_RSL_TEXT_CHARS}</permits>'
                "</license></content>"
            ),
            "text-too-long",
        ),
    ],
)
def test_a_broken_or_unbounded_file_states_nothing(body: bytes | str, code: str) -> None:
    file = parse_rsl(body, FILE_URL)
    assert not file.valid and file.contents == () and codes(file)[0] == code
    assert code in RSL_WARNING_CODES
    assert outcomes(file) == dict.fromkeys(PURPOSES, "unknown")
    assert "unusable" in file.decision("https://example.com/", "search").reason


def test_just_within_the_bounds_is_read() -> None:
    deep = "<legal>" * (MAX_RSL_DEPTH - 3) + "</legal>" * (MAX_RSL_DEPTH - 3)
    file = one(f'<prohibits type="usage">all</prohibits>{deep}')
    assert file.valid and outcomes(file)["search"] == "disallowed"


def test_random_content_never_raises() -> None:
    generator = random.Random(50)
    pieces = [
        b"<rsl xmlns='https://rslstandard.org/rsl'>",
        b"<content url='/'>",
        b"<license>",
        b"<permits type='usage'>",
        b"ai-train,",
        b"</permits>",
        b"<payment type='crawl'/>",
        b"</license>",
        b"</content>",
        b"</rsl>",
        b"<!DOCTYPE x>",
        b"&amp;",
        b"&#0;",
        b"\xff",
        b"<?xml version='1.0' encoding='utf-16'?>",
        b"]]>",
        b"<![CDATA[",
        b"\x00",
    ]
    for _ in range(400):
        if generator.random() < 0.5:
            body = bytes(generator.randrange(256) for _ in range(generator.randrange(64)))
        else:
            body = b"".join(generator.choice(pieces) for _ in range(generator.randrange(12)))
        file = parse_rsl(body, FILE_URL)
        for purpose in PURPOSES:
            assert file.decision("https://example.com/a", purpose).preference in (
                "allowed",
                "disallowed",
                "unknown",
            )


def test_a_parsed_file_pickles_and_an_element_built_alone_matches() -> None:
    import pickle

    from scrapy_rerp.engine import RslContent

    file = parse_rsl(PATTERNS, FILE_URL)
    clone = pickle.loads(pickle.dumps(file))
    assert clone == file
    url = "https://example.com/a/z/b"
    assert clone.decision(url, "search") == file.decision(url, "search")
    assert (
        RslContent(position=1, url="/a/", server=None, licenses=()).matches(
            "https://example.com/a/b"
        )
        == 3
    )
    assert (
        RslContent(position=1, url="relative", server=None, licenses=()).matches(
            "https://example.com/relative"
        )
        == -1
    )


# -- several files, and the links a page gives ------------------------------------------------


def test_several_files_the_first_refusal_decides_then_the_first_permission() -> None:
    from scrapy_rerp.engine import license_decision

    free = one('<permits type="usage">all</permits>')
    paid = one('<permits type="usage">ai-train</permits><payment type="training"/>')
    silent = parse_rsl(rsl('<content url="/elsewhere/"><license/></content>'), FILE_URL)
    url = "https://example.com/page"
    decided = license_decision(url, "train-ai", [free, silent, paid])
    assert decided is not None and decided.refused
    assert "payment (training)" in decided.reason
    decided = license_decision(url, "search", [silent, free])
    assert decided is not None and decided.preference == "allowed"
    assert decided.content is not None and decided.content.url == "/"
    decided = license_decision(url, "search", [silent])
    assert decided is not None and decided.preference == "unknown"
    assert license_decision(url, "search", []) is None


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            ['<https://example.com/license.xml>; rel="license"; type="application/rsl+xml"'],
            ["https://example.com/license.xml"],
        ),
        # relative, resolved against the page; rel a list; type in any case, with parameters
        (
            ['</l.rsl>; rel="nofollow license"; type="Application/RSL+XML; charset=utf-8"'],
            ["https://example.com/l.rsl"],
        ),
        # several link-values on one line and several lines, each URL once, in order
        (
            [
                "<https://a.example/1.xml>; rel=license; type=application/rsl+xml, "
                '<https://cc.example/by/4.0/>; rel="license", '
                '<https://a.example/2.xml>; type="application/rsl+xml"; rel="license"',
                '<https://a.example/1.xml>; rel="license"; type="application/rsl+xml"',
            ],
            ["https://a.example/1.xml", "https://a.example/2.xml"],
        ),
        # a licence link that is no RSL file, and another relation, are not read
        (['<https://creativecommons.org/licenses/by/4.0/>; rel="license"'], []),
        (['<https://example.com/x.xml>; rel="alternate"; type="application/rsl+xml"'], []),
        # garbage, an unclosed reference, a scheme that is no web URL
        (
            [
                "garbage",
                "<https://example.com/x.xml",
                "<javascript:x>; rel=license; type=application/rsl+xml",
            ],
            [],
        ),
        (
            [b'<https://example.com/b.xml>; rel="license"; type="application/rsl+xml"'],
            ["https://example.com/b.xml"],
        ),
    ],
)
def test_the_rsl_files_a_link_header_names(values: list[Any], expected: list[str]) -> None:
    from scrapy_rerp.engine import license_links

    assert license_links(values, "https://example.com/dir/page.html") == expected


def test_a_page_links_to_a_bounded_number_of_files() -> None:
    from scrapy_rerp.engine import MAX_LICENSE_LINKS, license_links

    many = ", ".join(
        f'<https://example.com/{i}.xml>; rel="license"; type="application/rsl+xml"'
        for i in range(100)
    )
    long = f'<https://example.com/{"a" * 5000}>; rel="license"; type="application/rsl+xml"'
    found = license_links([long, many], "https://example.com/")
    assert found == [f"https://example.com/{i}.xml" for i in range(MAX_LICENSE_LINKS)]


def test_the_rsl_files_a_page_head_links_to() -> None:
    from scrapy_rerp.engine import license_link_tags

    page = (
        b"<html><head><base href='/docs/'>"
        b"<link rel='license' type='application/rsl+xml' href='license.xml'>"
        b"<link rel='license' href='https://creativecommons.org/licenses/by/4.0/'>"
        b"<link rel='stylesheet' type='application/rsl+xml' href='/no.xml'>"
        b"<template><link rel='license' type='application/rsl+xml' href='/t.xml'></template>"
        b"<link rel='LICENSE' type='application/rsl+xml' href='https://other.example/l.rsl'/>"
        b"</head><body><link rel='license' type='application/rsl+xml' href='/body.xml'>"
    )
    assert license_link_tags(page, "https://example.com/a/page.html") == [
        "https://example.com/docs/license.xml",
        "https://other.example/l.rsl",
    ]
    # the meta tags are read from the same head as before
    assert license_link_tags("<p>no head", "https://example.com/") == []
