"""The rerp-compatible classes: rerp 1.7.1's interface and decisions, with its bugs fixed."""

from __future__ import annotations

import pickle
import time
import urllib.robotparser

import pytest
import robotexclusionrulesparser as rerp

import scrapy_rerp.engine.rerp as compat
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, SEVEN_DAYS
from scrapy_rerp.engine.rerp import RobotExclusionRulesParser, RobotFileParserLookalike

SAMPLE = """\
# a comment
User-agent: FooBot
Disallow: /foo
Allow: /foo/public
Crawl-delay: 2.5

User-agent: BarBot
User-agent: BazBot
Disallow: /*.php$
Disallow: /tmp*/x

User-agent: *
Disallow: /private
Allow: /private/ok
Sitemap: http://example.com/sitemap1.xml
Sitemap: http://example.com/sitemap2.xml
"""


def parsed(content: str | bytes | bytearray = SAMPLE) -> RobotExclusionRulesParser:
    rp = RobotExclusionRulesParser()
    rp.parse(content)
    return rp


def reference(content: str | bytes = SAMPLE) -> rerp.RobotExclusionRulesParser:
    rp = rerp.RobotExclusionRulesParser()
    rp.parse(content)
    return rp


def test_constants_are_rerps() -> None:
    assert (MK1996, GYM2008) == (rerp.MK1996, rerp.GYM2008)
    assert RFC9309 not in (MK1996, GYM2008)
    assert SEVEN_DAYS == rerp.SEVEN_DAYS


def test_initial_state() -> None:
    rp = RobotExclusionRulesParser()
    assert rp.user_agent is None
    assert rp.use_local_time is True
    assert rp.source_url == ""
    assert rp.response_code == 0
    assert rp.sitemaps == []
    assert abs(rp.expiration_date - (time.time() + SEVEN_DAYS)) < 5
    assert not rp.is_expired
    # Nothing parsed: everything is allowed, in every syntax.
    for syntax in (MK1996, GYM2008, RFC9309):
        assert rp.is_allowed("bot", "/x", syntax)
    assert rp.get_crawl_delay("bot") is None


CASES = [
    # (agent, url, expected in MK1996, expected in GYM2008)
    ("FooBot", "/foo/x", False, False),
    # First matching rule wins in both rerp syntaxes: /foo comes before /foo/public.
    ("FooBot", "/foo/public", False, False),
    ("FooBot", "/private", True, True),
    ("foobot/2.1 (+http://foo.example)", "/foo", False, False),
    ("BazBot", "/a.php", True, False),
    ("BazBot", "/a.php?x=1", True, True),
    ("BazBot", "/*.php$", False, True),
    ("BarBot", "/tmp1/x", True, False),
    ("BarBot", "/private", True, True),
    ("OtherBot", "/private/ok", False, False),
    ("OtherBot", "/public", True, True),
    ("OtherBot", "http://example.com/private?q", False, False),
    ("OtherBot", "/%70rivate", False, False),
]


@pytest.mark.parametrize(("agent", "url", "mk1996", "gym2008"), CASES)
def test_is_allowed_matches_rerp(agent: str, url: str, mk1996: bool, gym2008: bool) -> None:
    ours, theirs = parsed(), reference()
    assert ours.is_allowed(agent, url, MK1996) is mk1996
    assert ours.is_allowed(agent, url, GYM2008) is gym2008
    assert ours.is_allowed(agent, url) is gym2008
    assert theirs.is_allowed(agent, url, rerp.MK1996) is mk1996
    assert theirs.is_allowed(agent, url, rerp.GYM2008) is gym2008


def test_is_allowed_rfc9309_longest_match_and_exact_token() -> None:
    rp = parsed()
    # RFC 9309: the longest rule wins, so Allow: /foo/public beats Disallow: /foo.
    assert rp.is_allowed("FooBot", "/foo/public", RFC9309)
    assert not rp.is_allowed("FooBot", "/foo/x", RFC9309)
    assert not rp.is_allowed("OtherBot", "/private/x", RFC9309)
    assert rp.is_allowed("OtherBot", "/private/ok", RFC9309)
    # The product token must equal the group's name: "xFooBot" is not FooBot (it is in rerp).
    assert not rp.is_allowed("xFooBot", "/foo/x", GYM2008)
    assert rp.is_allowed("xFooBot", "/foo/x", RFC9309)


def test_empty_disallow_and_empty_allow_in_rerp_syntaxes() -> None:
    rp = parsed("User-agent: a\nDisallow:\nDisallow: /x\n\nUser-agent: b\nAllow:\n")
    for syntax in (MK1996, GYM2008):
        assert rp.is_allowed("a", "/x", syntax)  # the empty Disallow matched first
        assert not rp.is_allowed("b", "/anything", syntax)  # rerp: empty Allow blocks
    assert not rp.is_allowed("a", "/x", RFC9309)
    assert rp.is_allowed("b", "/anything", RFC9309)


def test_blank_line_ends_record_in_rerp_syntaxes_only() -> None:
    rp = parsed("User-agent: a\n\nDisallow: /x\n")
    assert rp.is_allowed("a", "/x", GYM2008)
    assert not rp.is_allowed("a", "/x", RFC9309)


@pytest.mark.parametrize("syntax", [0, 4, -1, None, "2", 2.5, True])
def test_unknown_syntax_is_value_error(syntax: object) -> None:
    rp = parsed()
    with pytest.raises(ValueError):
        rp.is_allowed("bot", "/", syntax)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        rp.get_crawl_delay("bot", syntax)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, 1, 1.5, ["/x"], object()])
def test_non_text_arguments_are_type_errors(bad: object) -> None:
    rp = parsed()
    with pytest.raises(TypeError):
        rp.is_allowed(bad, "/x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rp.is_allowed("bot", bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rp.get_crawl_delay(bad)  # type: ignore[arg-type]


def test_bytes_arguments_are_decoded() -> None:
    rp = parsed()
    assert not rp.is_allowed(b"FooBot", b"/foo/x")
    assert rp.is_allowed(b"FooBot", b"/bar")
    assert rp.get_crawl_delay(b"FooBot") == 2.5
    # Not UTF-8: read as ISO-8859-1 rather than failing.
    rp = parsed("User-agent: *\nDisallow: /caf\u00e9\n")
    assert not rp.is_allowed(b"bot", b"/caf\xe9", MK1996)
    assert not rp.is_allowed(b"bot", "/caf\u00e9".encode(), MK1996)


def test_parse_accepts_str_and_bytes_as_iso_8859_1() -> None:
    text = "User-agent: *\nDisallow: /caf\u00e9\n"
    from_bytes = parsed(text.encode("iso-8859-1"))
    from_str = parsed(text)
    for rp in (from_bytes, from_str):
        assert not rp.is_allowed("bot", "/caf\u00e9")
        assert rp.is_allowed("bot", "/cafe")
    # As in rerp: UTF-8 bytes read as ISO-8859-1 give "Ã©".
    utf8 = parsed(text.encode())
    assert not utf8.is_allowed("bot", "/caf\u00c3\u00a9")
    assert reference(text.encode()).is_allowed("bot", "/caf\u00e9")
    assert utf8.is_allowed("bot", "/caf\u00e9", GYM2008)
    # RFC 9309 reads bytes as UTF-8.
    assert not utf8.is_allowed("bot", "/caf%C3%A9", RFC9309)
    assert parsed(bytearray(b"User-agent: *\nDisallow: /b\n")).is_allowed("x", "/a")


@pytest.mark.parametrize("bad", [None, 1, ["User-agent: *"]])
def test_parse_rejects_non_text(bad: object) -> None:
    with pytest.raises(TypeError):
        RobotExclusionRulesParser().parse(bad)  # type: ignore[arg-type]


def test_parse_replaces_previous_rules() -> None:
    rp = parsed()
    assert not rp.is_allowed("x", "/private", RFC9309)
    rp.parse("User-agent: *\nDisallow: /other\n")
    for syntax in (MK1996, GYM2008, RFC9309):
        assert rp.is_allowed("x", "/private", syntax)
        assert not rp.is_allowed("x", "/other", syntax)
    assert rp.sitemaps == []
    assert rp.get_crawl_delay("FooBot") is None


def test_parse_never_raises_on_junk() -> None:
    for junk in ("\x00\xff\ufeff:::", "User-agent\nDisallow", b"\xff\xfe\x00d\x00", "#" * 5000):
        rp = parsed(junk)
        for syntax in (MK1996, GYM2008, RFC9309):
            assert rp.is_allowed("bot", "/", syntax) in (True, False)


def test_bom_is_ignored() -> None:
    for content in (
        "\ufeffUser-agent: *\nDisallow: /x\n",
        b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
    ):
        rp = parsed(content)
        for syntax in (MK1996, GYM2008, RFC9309):
            assert not rp.is_allowed("bot", "/x", syntax)


def test_bom_like_junk_at_the_start_is_skipped_like_rerp() -> None:
    # A BOM encoded twice (UTF-8 of "ï»¿"): rerp's unanchored regex reads the line behind it.
    content = b"\xc3\xaf\xc2\xbb\xc2\xbfUser-agent: *\nDisallow: /x\n"
    assert not reference(content).is_allowed("bot", "/x")
    rp = parsed(content)
    for syntax in (MK1996, GYM2008):
        assert not rp.is_allowed("bot", "/x", syntax)
        assert rp.is_allowed("bot", "/y", syntax)


def test_get_crawl_delay() -> None:
    rp = parsed()
    assert rp.get_crawl_delay("FooBot") == 2.5
    assert rp.get_crawl_delay("BarBot") is None
    assert rp.get_crawl_delay("nobody") is None
    assert rp.get_crawl_delay("FooBot", RFC9309) == 2.5


def test_crawl_delay_only_record_is_kept() -> None:
    # rerp 1.7.1 drops a record without Allow/Disallow lines, losing its Crawl-delay.
    content = "User-agent: SlowBot\nCrawl-delay: 10\n\nUser-agent: *\nDisallow: /x\n"
    assert reference(content).get_crawl_delay("SlowBot") is None
    rp = parsed(content)
    assert rp.get_crawl_delay("SlowBot") == 10.0
    assert rp.get_crawl_delay("SlowBot", MK1996) == 10.0


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "abc", ""])
def test_invalid_crawl_delay_is_ignored(value: str) -> None:
    rp = parsed(f"User-agent: *\nCrawl-delay: {value}\nDisallow: /x\n")
    assert rp.get_crawl_delay("bot") is None


def test_unanchored_directive_is_not_a_directive() -> None:
    # rerp 1.7.1 finds "disallow:" anywhere in the line.
    content = "User-agent: *\nNodisallow: /x\nX-Allow: /y\nDisallow: /z\n"
    assert not reference(content).is_allowed("bot", "/x")
    rp = parsed(content)
    for syntax in (MK1996, GYM2008):
        assert rp.is_allowed("bot", "/x", syntax)
        assert rp.is_allowed("bot", "/y", syntax)
        assert not rp.is_allowed("bot", "/z", syntax)


def test_delete_character_is_scrubbed() -> None:
    # rerp's regex meant to strip DEL (0x7f) but its "\0177" is "\x0f" followed by "7".
    content = "User-agent: *\nDisallow: /a\x7fb\n"
    assert reference(content).is_allowed("bot", "/ab")
    rp = parsed(content)
    assert not rp.is_allowed("bot", "/ab", GYM2008)
    assert not rp.is_allowed("bot", "/ab", MK1996)


def test_sitemaps_is_a_copy_in_file_order() -> None:
    rp = parsed()
    maps = rp.sitemaps
    assert maps == ["http://example.com/sitemap1.xml", "http://example.com/sitemap2.xml"]
    maps.append("mutated")
    assert rp.sitemaps == reference().sitemaps
    assert rp.sitemaps is not rp.sitemaps


def test_sitemap_property_is_deprecated_like_rerp() -> None:
    with pytest.raises(DeprecationWarning):
        _ = parsed().sitemap
    with pytest.raises(DeprecationWarning):
        _ = reference().sitemap


@pytest.mark.parametrize("name", ["sitemaps", "source_url", "response_code", "is_expired"])
def test_read_only_properties(name: str) -> None:
    rp = parsed()
    with pytest.raises(AttributeError):
        setattr(rp, name, "x")


def test_plain_attributes_are_writable() -> None:
    rp = RobotExclusionRulesParser()
    rp.user_agent = "Bot/1.0"
    rp.use_local_time = False
    rp.expiration_date = 0.0
    assert (rp.user_agent, rp.use_local_time, rp.expiration_date) == ("Bot/1.0", False, 0.0)
    assert rp.is_expired


@pytest.mark.parametrize(
    "content",
    [
        SAMPLE,
        "",
        "User-agent: *\nDisallow: /\n",
        "User-agent: a\nUser-agent: b\nAllow: /x\nDisallow: /\n\nUser-agent: *\nDisallow:\n",
        "Sitemap: http://x/s.xml\n",
    ],
)
def test_str_renders_like_rerp(content: str) -> None:
    assert str(parsed(content)) == str(reference(content))


def test_str_renders_star_record_last() -> None:
    content = "User-agent: *\nDisallow: /a\n\nUser-agent: b\nDisallow: /b\n"
    assert str(parsed(content)) == str(reference(content))
    assert str(parsed(content)).startswith("User-agent: b\n")


def test_pickle_round_trip() -> None:
    rp = parsed()
    rp.user_agent = "Bot"
    rp.expiration_date = 123.0
    # Parse every syntax first, so the cached forms are in play.
    for syntax in (MK1996, GYM2008, RFC9309):
        rp.is_allowed("FooBot", "/foo/public", syntax)
    data = pickle.dumps(rp)
    clone = pickle.loads(data)
    assert isinstance(clone, RobotExclusionRulesParser)
    assert (clone.user_agent, clone.expiration_date) == ("Bot", 123.0)
    assert clone.sitemaps == rp.sitemaps
    assert str(clone) == str(rp)
    for agent, url, mk1996, gym2008 in CASES:
        assert clone.is_allowed(agent, url, MK1996) is mk1996
        assert clone.is_allowed(agent, url, GYM2008) is gym2008
    assert clone.is_allowed("FooBot", "/foo/public", RFC9309)
    assert clone.get_crawl_delay("FooBot") == 2.5
    # The parsed forms are rebuilt on demand, not shipped.
    assert len(data) < len(pickle.dumps(SAMPLE)) + 1000


def test_pickle_lookalike() -> None:
    rp = RobotFileParserLookalike("http://example.com/robots.txt")
    rp.parse(SAMPLE.splitlines())
    clone = pickle.loads(pickle.dumps(rp))
    assert clone.url == "http://example.com/robots.txt"
    assert clone.mtime() == rp.mtime()
    assert not clone.can_fetch("x", "/private")
    assert clone.can_fetch("x", "/public")


# -- RobotFileParserLookalike ----------------------------------------------------------------


def test_lookalike_is_a_rules_parser() -> None:
    rp = RobotFileParserLookalike()
    assert isinstance(rp, RobotExclusionRulesParser)
    assert rp.url == "" and rp.mtime() is None and rp.last_checked is None


@pytest.mark.parametrize(
    "lines",
    [
        SAMPLE.splitlines(),
        SAMPLE.splitlines(keepends=True),
        SAMPLE.replace("\n", "\r\n").splitlines(keepends=True),
        SAMPLE.replace("\n", "\r").splitlines(keepends=True),
        [line.encode() for line in SAMPLE.splitlines()],
        [line.encode() for line in SAMPLE.splitlines(keepends=True)],
        iter(SAMPLE.splitlines()),
        SAMPLE,
        SAMPLE.encode(),
    ],
)
def test_lookalike_parse_lines_with_or_without_endings(lines: object) -> None:
    rp = RobotFileParserLookalike()
    rp.parse(lines)  # type: ignore[arg-type]
    for agent, url, mk1996, gym2008 in CASES:
        assert rp.can_fetch(agent, url) is gym2008
        assert rp.can_fetch(agent, url, MK1996) is mk1996
    assert rp.site_maps() == ["http://example.com/sitemap1.xml", "http://example.com/sitemap2.xml"]


def test_lookalike_parse_without_endings_is_a_fixed_rerp_bug() -> None:
    # rerp 1.7.1 joins with "": the whole file becomes one line, "User-agent: *Disallow: /x".
    theirs = rerp.RobotFileParserLookalike()
    theirs.parse(["User-agent: *", "Disallow: /x"])
    assert theirs.can_fetch("bot", "/x")
    ours = RobotFileParserLookalike()
    ours.parse(["User-agent: *", "Disallow: /x"])
    assert not ours.can_fetch("bot", "/x")


def test_lookalike_parse_rejects_non_text_lines() -> None:
    with pytest.raises(TypeError):
        RobotFileParserLookalike().parse([b"User-agent: *", 3])  # type: ignore[list-item]


def test_lookalike_mixed_str_and_bytes_lines() -> None:
    rp = RobotFileParserLookalike()
    rp.parse(["User-agent: *\n", b"Disallow: /caf\xe9\n"])
    assert not rp.can_fetch("bot", "/caf\u00e9")


def test_lookalike_can_fetch_is_false_until_parsed() -> None:
    rp = RobotFileParserLookalike()
    assert not rp.can_fetch("bot", "/")
    assert rp.is_allowed("bot", "/")  # rerp's own method keeps rerp's answer
    with pytest.raises(TypeError):
        rp.can_fetch(None, "/")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        rp.can_fetch("bot", "/", 7)
    rp.parse([])
    assert rp.can_fetch("bot", "/")


def test_lookalike_mtime_and_modified() -> None:
    rp = RobotFileParserLookalike()
    assert rp.mtime() is None
    before = time.time()
    rp.modified()
    first = rp.mtime()
    assert first is not None and before <= first <= time.time()
    assert rp.last_checked == first
    rp.parse(["User-agent: *"])
    second = rp.mtime()
    assert second is not None and second >= first


def test_lookalike_allow_all_and_disallow_all_flags() -> None:
    rp = RobotFileParserLookalike()
    rp.parse(["User-agent: *", "Disallow: /x"])
    rp.allow_all = True
    assert rp.can_fetch("bot", "/x")
    rp.disallow_all = True
    assert not rp.can_fetch("bot", "/y")


def test_lookalike_crawl_delay_request_rate_site_maps() -> None:
    rp = RobotFileParserLookalike()
    assert rp.crawl_delay("bot") is None
    assert rp.request_rate("bot") is None
    assert rp.site_maps() is None
    rp.parse(
        [
            "User-agent: a",
            "Crawl-delay: 3",
            "Request-rate: 1/5",
            "Disallow: /x",
            "",
            "User-agent: b",
            "Request-rate: 3/1.5m",
            "Disallow: /x",
            "",
            "User-agent: *",
            "Disallow: /y",
        ]
    )
    assert rp.crawl_delay("a") == 3.0
    rate = rp.request_rate("a")
    assert rate == urllib.robotparser.RequestRate(1, 5)
    assert isinstance(rate, urllib.robotparser.RequestRate)
    assert isinstance(rate.seconds, int)
    assert rp.request_rate("b") == (3, 90)
    assert rp.crawl_delay("other") is None
    assert rp.request_rate("other") is None
    assert rp.site_maps() is None
    rp.parse(["Sitemap: http://x/1.xml", "Sitemap: http://x/2.xml"])
    assert rp.site_maps() == ["http://x/1.xml", "http://x/2.xml"]


STDLIB_FILE = """\
User-agent: figtree
Crawl-delay: 3
Request-rate: 9/30
Disallow: /tmp
Disallow: /a%3cd.html

User-agent: *
Disallow: /cyberworld/map/
Sitemap: http://www.example.com/sitemap.xml
"""


@pytest.mark.parametrize(
    ("agent", "url"),
    [
        ("figtree", "/tmp"),
        ("figtree", "/tmp.html"),
        ("figtree", "/a%3cd.html"),
        ("figtree", "/a%3Cd.html"),
        ("figtree", "/b.html"),
        ("FigTree Robot libwww-perl/5.04", "/tmp/"),
        ("other", "/cyberworld/map/index.html"),
        ("other", "http://www.example.com/cyberworld/map/x"),
        ("other", "/cyberworld/"),
    ],
)
def test_lookalike_agrees_with_stdlib(agent: str, url: str) -> None:
    stdlib = urllib.robotparser.RobotFileParser()
    stdlib.parse(STDLIB_FILE.splitlines())
    ours = RobotFileParserLookalike()
    ours.parse(STDLIB_FILE.splitlines())
    assert ours.can_fetch(agent, url) is stdlib.can_fetch(agent, url)
    # typeshed types the stdlib's crawl_delay as str; it returns an int.
    assert ours.crawl_delay(agent) == stdlib.crawl_delay(agent)  # type: ignore[comparison-overlap]
    assert ours.request_rate(agent) == stdlib.request_rate(agent)
    assert ours.site_maps() == stdlib.site_maps()


def test_module_exports() -> None:
    import scrapy_rerp
    import scrapy_rerp.engine

    assert set(compat.__all__) >= {"RobotExclusionRulesParser", "RobotFileParserLookalike"}
    for package in (scrapy_rerp, scrapy_rerp.engine):
        assert package.RobotExclusionRulesParser is RobotExclusionRulesParser
        assert package.RobotFileParserLookalike is RobotFileParserLookalike


@pytest.mark.parametrize(
    "content",
    [
        "",
        "User-agent: *\nDisallow: /\n",
        "User-agent: *\nCrawl-delay: 1\nRequest-rate: 3/15\nDisallow: /a\n\n"
        "User-agent: b\nAllow: /x\nDisallow: /\n",
        "User-agent: a\nUser-agent: b\nCrawl-delay: 2\n\nUser-agent: c\n\n"
        "User-agent: d\nDisallow: /d\n",
        "User-agent: *\nDisallow:\n",
        "Sitemap: http://x/s.xml\nUser-agent: x\nRequest-rate: 1/5\n",
    ],
)
def test_lookalike_str_renders_like_the_standard_library(content: str) -> None:
    ours = RobotFileParserLookalike()
    ours.parse(content.splitlines())
    theirs = urllib.robotparser.RobotFileParser()
    theirs.parse(content.splitlines())
    assert str(ours) == str(theirs)


def test_lookalike_str_writes_patterns_as_it_matches_them() -> None:
    # The standard library %-quotes its paths ("/%2A.css") because it matches "*" literally;
    # the lookalike matches wildcards (GYM2008), so it writes them as they are matched.
    content = "User-agent: *\nCrawl-delay: 1.5\nAllow: /*.css$\nDisallow: /private\n"
    ours = RobotFileParserLookalike()
    ours.parse(content.splitlines())
    assert str(ours) == "User-agent: *\nCrawl-delay: 1.5\nAllow: /*.css$\nDisallow: /private"
    # rerp's own class keeps rerp's layout.
    rules = RobotExclusionRulesParser()
    rules.parse(content)
    assert str(rules).endswith("\n")
