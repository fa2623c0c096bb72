"""The engine's fast paths give the answers of its plain reading.

RFC9309 lines are read by a table of key spellings with one regular expression as the fallback;
these tests hold the table to the regular expression line by line. ``allowed`` matches with
prefix tuples, split wildcard rules and a remembered site, and shares compiled rules between
files; ``decide`` finds the rule that decides in tables of rules by their literal heads: the
two are compared on generated files, paths and agents, and ``decide`` (with ``agents_at``) is
held to the plain reading, every rule tried in file order with the reference matcher.
"""

from __future__ import annotations

import random

import pytest

from scrapy_rerp.engine import (
    GYM2008,
    MK1996,
    RFC9309,
    RobotsTxt,
    _groups,
    _match,
    _robots,
    _shared,
    parse,
    set_shared_table_limit,
    shared_table_limit,
)
from scrapy_rerp.engine import _lines as lines_module
from scrapy_rerp.engine._lines import (
    ALLOW,
    IGNORED,
    STD_DISALLOW,
    rfc_kind,
    tokenize_rfc,
    value_of,
)
from scrapy_rerp.engine._patterns import escape_pattern, pattern_matches, split_glob

_KEYS = [
    "Disallow",
    "disallow",
    "DISALLOW",
    "Allow",
    "allowed",
    "User-agent",
    "user-agent",
    "USER-AGENT",
    "User agent",
    "useragent",
    "Sitemap",
    "site-map",
    "Crawl-delay",
    "crawl-delay",
    "Host",
    "Clean-param",
    "Request-rate",
    "Visit-time",
    "dissallow",
    "Nodisallow",
    "",
    "#",
    "x",
]
_GLUE = ["", ":", ": ", " :", "\t:\t", ":\v", " ", "\t", "::", ": #", "#:"]
_VALUES = ["", "/", "/a b", "/x#c", " /y ", "*", "/%e4", "é", "https://e.com/s.xml", "1.5", "#"]


def _reference(line: str) -> tuple[int, str]:
    """(kind, value) of one line as the line regular expression reads it."""
    match = lines_module._RFC_LINE.match(line)
    assert match is not None
    key, value, bare_key, bare_value, _ = match.groups("")
    if key:
        return rfc_kind(key), value.rstrip(" \t\v\f")
    if bare_key:
        return rfc_kind(bare_key), bare_value
    return IGNORED, ""


def _generated_lines(count: int) -> list[str]:
    rng = random.Random(9309)
    lines = []
    for _ in range(count):
        line = rng.choice(["", " ", "\t"]) if rng.random() < 0.2 else ""
        line += rng.choice(_KEYS) + rng.choice(_GLUE) + rng.choice(_VALUES)
        if rng.random() < 0.2:
            line += rng.choice(_GLUE) + rng.choice(_VALUES)
        lines.append(line)
    return lines


def test_the_key_table_reads_lines_as_the_regular_expression_does() -> None:
    lines = _generated_lines(20000)
    kinds, read, _, bare_values, _ = tokenize_rfc("\n".join(lines), [])
    assert len(kinds) == len(lines)
    for index, line in enumerate(lines):
        kind, value = _reference(line)
        got = kinds[index]
        if got == STD_DISALLOW:
            got = lines_module.DISALLOW
        assert got == kind, line
        if kind != IGNORED:
            assert value_of(read, bare_values, index) == value, line


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("Disallow", IGNORED),  # a key alone, without a colon, is no directive
        (":root{}", IGNORED),
        ("Disallow /a", lines_module.DISALLOW),  # google reads colon-less two-token lines
        ("Disallow : /a", lines_module.DISALLOW),
        ("Disallow:/a", STD_DISALLOW),
    ],
)
def test_lines_the_table_must_not_take(line: str, kind: int) -> None:
    kinds, _, _, _, _ = tokenize_rfc(line, [])
    assert kinds[0] == kind


# -- allowed() against decide() -------------------------------------------------------------

_SEGMENTS = ["/", "a", "b", "ab", "/a", "/b/", ".pdf", "?", "=", "index.html", "%2F", "x"]
_AGENTS = ["*", "mybot", "MyBot", "otherbot", "my-bot"]
_CALLERS = ["mybot", "otherbot", "Mozilla/5.0 (compatible; MyBot/1.0)", "somebot", ""]


def _pattern(rng: random.Random) -> str:
    pattern = "".join(rng.choice(_SEGMENTS + ["*", "*"]) for _ in range(rng.randint(0, 4)))
    if rng.random() < 0.5:
        pattern = "/" + pattern
    if rng.random() < 0.2:
        pattern += "$"
    return pattern


def _robots_txt(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 3)):
        out += [f"User-agent: {rng.choice(_AGENTS)}" for _ in range(rng.randint(1, 2))]
        for _ in range(rng.randint(0, 8)):
            keyword = rng.choice(["Disallow", "Disallow", "Allow", "disallow", "Allow"])
            out.append(f"{keyword}: {_pattern(rng)}")
    return "\n".join(out)


def _path(rng: random.Random) -> str:
    path = "/" + "".join(rng.choice(_SEGMENTS) for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.1:
        path = "/robots.txt"
    if rng.random() < 0.1:
        path += "#" + rng.choice(_SEGMENTS)
    return path


def test_allowed_agrees_with_decide_on_generated_files() -> None:
    rng = random.Random(2022)
    disagreements = []
    for _ in range(1500):
        text = _robots_txt(rng)
        # Each file twice: the second copy takes the compiled rules the first one shared.
        for robots in (parse(text, RFC9309), parse(text, RFC9309)):
            for _ in range(12):
                url = rng.choice(["https://example.com", "http://other.org:8080"]) + _path(rng)
                agent = rng.choice(_CALLERS)
                if robots.allowed(url, agent) is not robots.decide(url, agent).allowed:
                    disagreements.append((text, url, agent))
    assert not disagreements, disagreements[:3]


def _large_group(rng: random.Random, rules: int, allows: int, wildcards: int) -> str:
    # Short segments from a small alphabet, so that rules are often prefixes of each other and
    # paths often share a long start with a rule they do not match.
    def prefix() -> str:
        segments = [rng.choice(["a", "ab", "b", "a.", "ba"]) for _ in range(rng.randint(1, 4))]
        return "/" + "/".join(segments)

    lines = [f"Disallow: {prefix()}" for _ in range(rules)]
    lines += [f"Allow: {prefix()}" for _ in range(allows)]
    lines += [f"Disallow: {prefix()}*{rng.choice(['a', '.'])}$" for _ in range(wildcards)]
    rng.shuffle(lines)
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("allows", "wildcards", "groups"),
    [(0, 0, 1), (5, 0, 1), (0, 5, 1), (5, 5, 1), (0, 0, 2), (5, 0, 2)],
)
def test_large_rule_sets_checked_by_bisection_agree_with_decide(
    allows: int, wildcards: int, groups: int
) -> None:

    rng = random.Random(allows * 10 + wildcards + groups)
    segments = ["a", "ab", "b", "a.", "ba", "c", ""]
    disagreements = []
    for _ in range(4):
        text = "\n".join(
            f"User-agent: *\n{_large_group(rng, 300, allows, wildcards)}" for _ in range(groups)
        )
        robots = parse(text, RFC9309)
        for _ in range(400):
            path = "/" + "/".join(rng.choice(segments) for _ in range(rng.randint(0, 5)))
            url = "https://example.com" + path
            if robots.allowed(url, "bot") is not robots.decide(url, "bot").allowed:
                disagreements.append((path, robots.decide(url, "bot")))
        rules = robots._rules("bot")
        assert rules.gate is not None  # the bisection ran
        assert len(rules.gate) < len(rules.disallow)  # and prefixes were dropped
    assert not disagreements, disagreements[:3]


def _walked_decision(
    robots: RobotsTxt, path: str, agent: str
) -> tuple[bool, int | None, str | None]:
    """(verdict, line, rule) as the plain reading finds them: every rule of the groups that
    apply tried in file order with the reference matcher. RFC 9309: the longest match of each
    verdict, the first in file order among equally long ones, Allow on a tie; rerp: the first
    rule that matches."""
    groups = robots._applying_groups(agent)
    rules = [(g.is_allow(i), p, g.line_of(i)) for g in groups for i, p in enumerate(g.patterns)]
    if robots.syntax != RFC9309:
        for is_allow, pattern, line in rules:
            wild = robots.syntax == GYM2008 and ("*" in pattern or pattern.endswith("$"))
            if pattern_matches(path, pattern) if wild else path.startswith(pattern):
                verdict = is_allow if pattern else not is_allow  # rerp: an empty rule inverts
                return verdict, line, f"{'Allow' if is_allow else 'Disallow'}: {pattern}"
        return True, None, None
    if path == "/robots.txt":
        return True, None, None
    best: dict[bool, tuple[int, str, int]] = {}
    for is_allow, pattern, line in rules:
        if len(pattern) > best.get(is_allow, (0,))[0] and pattern_matches(path, pattern):
            best[is_allow] = (len(pattern), pattern, line)
    allow, disallow = best.get(True), best.get(False)
    if disallow is not None and (allow is None or disallow[0] > allow[0]):
        return False, disallow[2], f"Disallow: {disallow[1]}"
    if allow is not None:
        return True, allow[2], f"Allow: {allow[1]}"
    return True, None, None


def _tied_robots_txt(rng: random.Random) -> str:
    """Groups of rules from a tiny alphabet: the same pattern in several rules and groups,
    plain and wildcard patterns of equal length, empty rules."""
    out = []
    for _ in range(rng.randint(1, 4)):
        out += [f"User-agent: {rng.choice(_AGENTS)}" for _ in range(rng.randint(1, 2))]
        for _ in range(rng.randint(0, 30)):  # (a decider walks up to 16 rules, files the rest)
            pattern = "".join(rng.choice("/ab*") for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.2:
                pattern += "$"
            out.append(f"{rng.choice(['Allow', 'Disallow'])}: {pattern}")
    return "\n".join(out)


@pytest.mark.parametrize("syntax", [RFC9309, GYM2008, MK1996], ids=["RFC9309", "GYM2008", "MK1996"])
def test_decide_and_agents_at_name_what_the_plain_reading_finds(syntax: int) -> None:
    rng = random.Random(9309 + syntax)
    disagreements = []
    for _ in range(600):
        text = _tied_robots_txt(rng) if rng.random() < 0.7 else _robots_txt(rng)
        robots = parse(text, syntax)
        agents = rng.sample(_CALLERS, 2)  # each asked often enough for its rules to be filed
        for _ in range(20):
            path = "/" + "".join(rng.choice("/ab") for _ in range(rng.randint(0, 5)))
            agent = rng.choice(agents)
            url = "https://example.com" + path
            decision = robots.decide(url, agent)
            expected = _walked_decision(robots, robots._rules_path(url), agent)
            if (decision.allowed, decision.line, decision.rule) != expected:
                disagreements.append((text, path, agent, decision, expected))
        for line in range(text.count("\n") + 3):
            walked = next((g.agents for g in robots._groups if g.has_rule_on(line)), None)
            if robots.agents_at(line) != walked:
                disagreements.append((text, line, robots.agents_at(line), walked))
    assert not disagreements, disagreements[:3]


def test_the_bisection_copy_is_built_only_for_rules_checked_often() -> None:
    text = "User-agent: *\n" + "\n".join(f"Disallow: /d{i}/" for i in range(300))
    robots = parse(text, RFC9309)
    rules = robots._rules("bot")
    for i in range(_match._GATE_AFTER_CHECKS):
        assert rules.gate is None, i
        if i % 2:
            assert not robots.allowed(f"https://example.com/d{i}/x", "bot")
        else:
            assert robots.allowed(f"https://example.com/d{i}x", "bot")
    gate = rules.gate
    assert gate is not None and len(gate) == 300
    assert not robots.allowed("https://example.com/d299/", "bot")
    assert robots.allowed("https://example.com/d300/", "bot")
    assert robots.allowed("https://example.com/", "bot")


def test_compiled_wildcard_rules_are_split_as_split_glob_splits_them() -> None:
    rng = random.Random(9309)
    patterns = ["*", "$", "*$", "**", "/a*", "/a$", "*.pdf$", "/a**b*$", "/$*", "/a*$*", "/*?"]
    patterns += [p for p in (_pattern(rng) for _ in range(2000)) if "*" in p or p.endswith("$")]
    for pattern in patterns:
        _robots.clear_shared_tables()
        priority, probe, head, middle, tail, anchored = _match._compile_glob(pattern)
        expected_head, expected_middle, expected_tail, expected_anchored = split_glob(pattern)
        assert (head, middle or (), tail) == (expected_head, expected_middle, expected_tail)
        assert priority == len(pattern)
        # "...*$" matches what "...*" matches; without a '*' the whole path must be the head.
        assert anchored == (expected_anchored and expected_tail != "")
        assert probe in (middle or ()) + (tail or "",)


def test_the_remembered_site_never_changes_a_verdict() -> None:
    robots = parse("User-agent: *\nDisallow: /private\nAllow: /private/open\n", RFC9309)
    urls = [
        "https://example.com/private",
        "https://example.com/public",
        "https://example.com.evil.org/private",
        "https://example.com:8080/private/open",
        "https://example.com/private#fragment",
        "https://example.com/public#/private",
        "https://example.com?private",
        "https://example.com",
        "x://\x00/private",  # the site remembered before any query
        "/private",
        "example.com/private",
        "https://example.com/robots.txt",
    ]
    expected = [robots.decide(url, "bot").allowed for url in urls]
    for _ in range(3):  # in every order, each URL after every other one
        for url, verdict in zip(urls, expected, strict=True):
            assert robots.allowed(url, "bot") is verdict, url
        urls.reverse()
        expected.reverse()


def test_trailing_stars_without_an_allow_match_as_prefixes() -> None:
    robots = parse("User-agent: *\nDisallow: /a*\nDisallow: /b**$\nDisallow: *.pdf$\n", RFC9309)
    assert not robots.allowed("https://e.com/abc", "bot")
    assert not robots.allowed("https://e.com/b", "bot")
    assert not robots.allowed("https://e.com/x/y.pdf", "bot")
    assert robots.allowed("https://e.com/x/y.pdfx", "bot")
    assert robots.allowed("https://e.com/c", "bot")


def test_trailing_stars_keep_their_length_against_an_allow() -> None:
    # Disallow /fo** is 5 octets long, Allow /foo 4: the Disallow wins, as a prefix /fo would not.
    robots = parse("User-agent: *\nDisallow: /fo**\nAllow: /foo\n", RFC9309)
    assert not robots.allowed("https://e.com/foo", "bot")
    robots = parse("User-agent: *\nDisallow: /f**\nAllow: /foo\n", RFC9309)
    assert robots.allowed("https://e.com/foo", "bot")  # a tie: the Allow wins


# -- the tables shared between parsed files stay small -----------------------------------------


def test_shared_tables_keep_no_big_entry() -> None:
    _robots.clear_shared_tables()
    long_rule = "/*" + "a" * 100_000 + "*b"
    long_agent = "Bot" + "x" * 100_000
    header = "Mozilla/5.0 (" + "y" * 100_000 + ")"
    robots = parse(
        f"User-agent: {long_agent}\nDisallow: {long_rule}\n"
        "User-agent: *\n" + "".join(f"Disallow: /{i}*x\n" for i in range(300)),
        RFC9309,
    )
    assert robots.allowed("https://e.com/a", long_agent)
    assert not robots.allowed("https://e.com/7/x", "other")
    assert robots.allowed("https://e.com/a", header)
    for table in _shared._TABLES:
        # No entry above a sixteenth of its table's share.
        assert table.estimated_bytes * 16 <= table.limit * len(table) + 1, table
        for entries in (table.recent, table._older):
            assert not any(long_agent in str(key) or header == key for key in entries)
    assert all(long_rule not in patterns for patterns, _ in _match._COMPILED.recent)


def test_shared_tables_stay_within_their_share_of_the_limit() -> None:
    _robots.clear_shared_tables()
    for i in range(3000):
        text = "".join(
            f"User-agent: bot{_letters(i)}\nDisallow: /a{i}/{j}*b\nAllow: /a{i}\n"
            for j in range(10)
        )
        robots = parse(text, RFC9309)
        assert robots.allowed(f"https://e.com/a{i}", f"bot{_letters(i)}")
        assert not robots.allowed(f"https://e.com/a{i}/3xb", f"Mozilla/5.0 (bot{_letters(i)}/{i})")
    for table in _shared._TABLES:
        assert table.estimated_bytes <= table.limit
    assert sum(table.limit for table in _shared._TABLES) <= shared_table_limit()
    full = [table for table in _shared._TABLES if table.estimated_bytes > table.limit // 2]
    assert _match._COMPILED in full and _groups._GROUP_RULES in full  # the test filled them


def test_the_shared_table_limit_can_be_set() -> None:
    _robots.clear_shared_tables()
    default = shared_table_limit()
    try:
        for i in range(200):
            parse(f"User-agent: *\nDisallow: /a{i}*b\nAllow: /a{i}\n").allowed("/a", "bot")
        assert len(_match._COMPILED) == 200
        set_shared_table_limit(64 * 1024)  # entries past the new limit go at once
        assert 0 < _match._COMPILED.estimated_bytes <= _match._COMPILED.limit < 64 * 1024
        assert list(_match._COMPILED.recent)[-1][0] == ("/a199*b", "/a199")  # the newest stay
        set_shared_table_limit(0)  # no sharing at all
        assert all(len(table) == 0 for table in _shared._TABLES)
        robots = parse("User-agent: *\nDisallow: /a*b\nAllow: /a\n")
        assert not robots.allowed("https://e.com/axb", "bot") and robots.allowed("/a", "bot")
        assert all(len(table) == 0 for table in _shared._TABLES)
    finally:
        set_shared_table_limit(default)
    assert shared_table_limit() == default
    with pytest.raises(TypeError):
        set_shared_table_limit(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        set_shared_table_limit(-1)


def _letters(number: int) -> str:
    return "".join(chr(ord("a") + int(digit)) for digit in str(number))


def test_groups_with_the_same_rule_lines_keep_their_own_lines_and_agents() -> None:
    _robots.clear_shared_tables()
    rules = "Disallow: /a\nAllow: /a/b\nDisallow: /c*d\n"
    first = parse("User-agent: one\n" + rules, RFC9309)
    second = parse("# comment\n\nUser-agent: two\n# between\n" + rules.replace("\n", "\n\n"))
    assert first._groups[0].patterns is second._groups[0].patterns  # the rules were read once
    assert [line for _, _, line in first.groups[0].rules] == [2, 3, 4]
    assert [line for _, _, line in second.groups[0].rules] == [5, 7, 9]
    assert second.decide("https://e.com/a", "two").line == 5
    assert second.decide("https://e.com/a/b", "two").line == 7
    assert second.allowed("https://e.com/a", "one")  # the group names "two" only
    # An /index.html Allow adds a rule for its directory, on the same line, in each file.
    for prefix in ("User-agent: *\n", "User-agent: *\n\n\n"):
        robots = parse(prefix + "Disallow: /d/\nAllow: /d/index.html\n", RFC9309)
        assert robots.allowed("https://e.com/d/", "bot")
        assert robots.decide("https://e.com/d/", "bot").line == prefix.count("\n") + 2


def test_escapes_are_upper_cased_as_a_callback_per_escape_would() -> None:
    import re

    rng = random.Random(16)
    pieces = ["%", "%2f", "%2F", "%aB", "%Ab", "%zz", "%e4%bc", "/a", "é", "%", "1", "f", "F"]
    for _ in range(3000):
        value = "/" + "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
        if value.isascii():
            expected = re.sub(r"%[0-9a-fA-F]{2}", lambda m: m.group().upper(), value)
            assert escape_pattern(value) == expected, value
    robots = parse("User-agent: *\nDisallow: /a%2fb\nDisallow: /c%2Fd\n", RFC9309)
    assert [pattern for _, pattern, _ in robots.groups[0].rules] == ["/a%2Fb", "/c%2Fd"]


def _rules_read_line_by_line(text: str) -> list[list[tuple[bool, str]]]:
    """Each group's (is_allow, pattern) read with the tokenizer's value_of, line by line."""

    kinds, read, _, bare_values, _ = tokenize_rfc(text, [])
    groups: list[list[tuple[bool, str]]] = []
    after_rule = True
    for index, kind in enumerate(kinds):
        if kind == lines_module.USER_AGENT:
            if after_rule:
                groups.append([])
            after_rule = False
        elif kind in (ALLOW, lines_module.DISALLOW, STD_DISALLOW) and groups:
            value = escape_pattern(value_of(read, bare_values, index))
            groups[-1].append((kind == ALLOW, value))
            after_rule = True
    return groups


def test_rule_values_read_at_once_equal_values_read_line_by_line() -> None:
    rng = random.Random(42)
    keys = ["Disallow: ", "Allow: ", "Disallow:", "Allow:", "Disallow:  ", "disallow: "]
    values = ["/a", "/b/c", "", "/x y", "/t\t", "/f\f", "/v\v", "/h#c", "Allow: /z", "/é"]
    values += ["Disallow: /w", "Disallow:Allow: /q", "/%2f", "/d ", " /e", "/index.html"]
    for _ in range(3000):
        _robots.clear_shared_tables()  # every group read afresh, not from the shared table
        lines = ["User-agent: *"]
        for _ in range(rng.randint(1, 6)):
            key = rng.choice(keys[:2] * 4 + keys)
            lines.append(key + rng.choice(values[:2] * 4 + values))
        text = "\n".join(lines)
        robots = parse(text, RFC9309)
        got = [(is_allow, pattern) for is_allow, pattern, _ in robots.groups[0].rules]
        expected = _rules_read_line_by_line(text)[0]
        # google's /index.html Allow adds a rule for the directory; the reference does not.
        assert [rule for rule in got if not rule[1].endswith("/$")] == expected, text


# -- the table of directives -------------------------------------------------------------------


def test_every_spelling_in_the_directive_table_is_read_as_its_directive() -> None:
    from scrapy_rerp.engine._directives import DIRECTIVES
    from scrapy_rerp.engine._lines import KIND_NAMES, legacy_kind

    assert [KIND_NAMES[kind] for kind in range(len(DIRECTIVES))] == [d.name for d in DIRECTIVES]
    for kind, directive in enumerate(DIRECTIVES):
        for key in directive.keys + directive.google_keys:
            for spelling in (key, key.upper(), key.title()):
                assert _reference(f"{spelling}: /v")[0] == kind, spelling
                assert rfc_kind(spelling) == kind, spelling
        for key in directive.keys + directive.legacy_keys:
            assert legacy_kind(key) == kind, key
            assert legacy_kind(key.upper()) == kind, key
