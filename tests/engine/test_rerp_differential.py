"""Differential test: our RobotExclusionRulesParser against robotexclusionrulesparser 1.7.1.

Both run over every robots.txt of the real corpus and the check workload (``urls.jsonl.gz``),
in MK1996 and GYM2008. They must agree, except where rerp 1.7.1 has a bug that we fix on
purpose. Each difference is explained by a predicate that recognises one bug: rerp itself,
loaded afresh with only that bug fixed, gives our answer. A difference no single fix (nor all
fixes together) explains is unexplained, and there must be none.

The corpus lives outside the repository: ``$SCRAPY_RERP_CORPUS``, else ``../shared/corpus``
beside the repository root. Run this file as a script to print the table of differences.
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import robotexclusionrulesparser as rerp

from scrapy_rerp.engine import GYM2008, MK1996, RFC9309
from scrapy_rerp.engine.rerp import RobotExclusionRulesParser

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SCRAPY_RERP_CORPUS") or REPO.parent / "shared" / "corpus")

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "robots").is_dir(),
    reason=f"corpus not found at {CORPUS} (set SCRAPY_RERP_CORPUS to its directory)",
)


# -- rerp 1.7.1 with one bug fixed ---------------------------------------------------------


def _load_rerp() -> ModuleType:
    """A private copy of rerp's module, so that patching it leaves the real one untouched."""
    load = importlib.util.spec_from_file_location("_rerp_variant", rerp.__file__)
    assert load is not None and load.loader is not None
    module = importlib.util.module_from_spec(load)
    load.loader.exec_module(module)
    return module


def fix_anchored_directives(module: Any) -> None:
    """rerp's directive regex is not anchored: ``Nodisallow: /x`` and ``Image Sitemap: u``
    are read as directives. Anchored, what rerp read past by accident at the start of a file
    must be skipped explicitly: a byte order mark, also one read as ISO-8859-1 or encoded
    twice (any leading run of non-ASCII characters)."""
    module._directive_regex = re.compile(
        r"^(allow|disallow|user[-]?agent|sitemap|crawl-delay):[ \t]*(.*)", re.IGNORECASE
    )
    parse = module.RobotExclusionRulesParser.parse

    def parse_without_bom(self: Any, s: str | bytes) -> None:
        if isinstance(s, bytes):
            s = s.decode("iso-8859-1")
        parse(self, re.sub(r"\A[^\x00-\x7f]+", "", s))

    module.RobotExclusionRulesParser.parse = parse_without_bom


def fix_delete_character(module: Any) -> None:
    """rerp's control-character regex ends in ``\\0177``, which is ``\\x0f`` then ``7``, so
    DEL (0x7f) is never scrubbed."""
    module._control_characters_regex = re.compile(r"[\x00-\x1f\x7f]")


def fix_crawl_delay_records(module: Any) -> None:
    """rerp drops a record that has no Allow/Disallow line, Crawl-delay and all, so
    get_crawl_delay() misses it. Kept, it serves Crawl-delay but still decides no URL."""
    ruleset = module._Ruleset
    ruleset.is_not_empty = lambda self: (
        bool(self.robot_names) and (bool(self.rules) or self.crawl_delay is not None)
    )
    original = module.RobotExclusionRulesParser.is_allowed

    def is_allowed(self: Any, user_agent: str, url: str, syntax: int = GYM2008) -> bool:
        rulesets = self._RobotExclusionRulesParser__rulesets
        self._RobotExclusionRulesParser__rulesets = [r for r in rulesets if r.rules]
        try:
            return original(self, user_agent, url, syntax)  # type: ignore[no-any-return]
        finally:
            self._RobotExclusionRulesParser__rulesets = rulesets

    module.RobotExclusionRulesParser.is_allowed = is_allowed


def fix_crawl_delay_values(module: Any) -> None:
    """rerp takes any ``float()``: ``nan``, ``inf``, negative delays, ``1_0``. Only finite,
    non-negative numbers are delays; the rest is ignored like any unparsable value."""

    def strict_float(value: str) -> float:
        number = float(value)
        if not math.isfinite(number) or number < 0 or "_" in value:
            raise ValueError(value)
        return number

    module.float = strict_float  # rerp's parse() calls the module-level name


def fix_url_path(module: Any) -> None:
    """rerp rebuilds the path with urlparse/urlunparse, which drops an empty query
    (``/page?`` becomes ``/page``), keeps the ``#fragment``, and leaves ``http://host``
    with an empty path instead of ``/``."""

    def path_of(url: str) -> str:
        url = url.split("#", 1)[0]
        url = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?;]*", "", url)
        return url if url.startswith("/") else "/" + url

    module.urllib_urlparse = lambda url: ("", "", path_of(url), "", "", "")
    module.urllib_urlunparse = lambda parts: parts[2]


def fix_newline_escape(module: Any) -> None:
    """rerp's ``_unquote_path`` protects ``%2F`` by swapping it for a newline, so a ``%0A``
    (or a newline) in a path comes back as ``%2F``."""
    from urllib.parse import unquote

    module._unquote_path = lambda path: "%2F".join(
        unquote(part) for part in re.split("%2[fF]", path)
    )


FIXES: dict[str, Callable[[Any], None]] = {
    "unanchored directive regex": fix_anchored_directives,
    "DEL not scrubbed (\\0177)": fix_delete_character,
    "Crawl-delay-only record dropped": fix_crawl_delay_records,
    "invalid Crawl-delay accepted": fix_crawl_delay_values,
    "URL path: empty ?, #fragment, empty path": fix_url_path,
    "%0A read as %2F": fix_newline_escape,
}
COMBINED = "several fixes together"
UNEXPLAINED = "UNEXPLAINED"


class Variants:
    """rerp with each fix applied alone, and with all of them; parsed files are cached."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleType] = {}
        for name, fix in FIXES.items():
            module = _load_rerp()
            fix(module)
            self.modules[name] = module
        combined = _load_rerp()
        for fix in FIXES.values():
            fix(combined)
        self.modules[COMBINED] = combined
        self._parsed: dict[tuple[str, str], Any] = {}

    def parser(self, variant: str, name: str, content: bytes) -> Any:
        key = (variant, name)
        parser = self._parsed.get(key)
        if parser is None:
            parser = self.modules[variant].RobotExclusionRulesParser()
            parser.parse(content)
            self._parsed[key] = parser
        return parser

    def explain(self, name: str, content: bytes, agrees: Callable[[Any], bool]) -> str:
        """The first variant whose answer equals ours (``agrees``), else UNEXPLAINED."""
        for variant in (*FIXES, COMBINED):
            if agrees(self.parser(variant, name, content)):
                return variant
        return UNEXPLAINED


# -- the comparison ----------------------------------------------------------------------


def load_checks(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    checks: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    with gzip.open(corpus / "urls.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            checks[record["file"]].append((record["agent"], record["url"]))
    return checks


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


@dataclass
class Report:
    files: int = 0
    checks: int = 0
    classes: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    examples: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, what: str, cause: str, example: str) -> None:
        self.classes[(what, cause)] += 1
        self.examples.setdefault((what, cause), example)

    @property
    def unexplained(self) -> int:
        return sum(n for (_, cause), n in self.classes.items() if cause == UNEXPLAINED)

    def table(self) -> str:
        lines = [
            f"rerp 1.7.1 vs scrapy_rerp: {self.files} files, {self.checks} is_allowed calls "
            f"(MK1996 + GYM2008)",
        ]
        if not self.classes:
            lines.append("  no differences")
        for (what, cause), count in sorted(self.classes.items()):
            lines.append(
                f"  {what:<15} {cause:<50} {count:>6}   e.g. {self.examples[(what, cause)]}"
            )
        lines.append(f"  unexplained: {self.unexplained}")
        return "\n".join(lines)


def _verdict_is(agent: str, url: str, syntax: int, verdict: bool) -> Callable[[Any], bool]:
    return lambda parser: parser.is_allowed(agent, url, syntax) == verdict


def _crawl_delay_is(agent: str, delay: float | None) -> Callable[[Any], bool]:
    return lambda parser: _same(parser.get_crawl_delay(agent), delay)


def _sitemaps_are(sitemaps: list[str]) -> Callable[[Any], bool]:
    return lambda parser: parser.sitemaps == sitemaps


#: The corpus is compared in this many shards (every SHARDS-th file), tests of their own, so
#: that the suite's workers share the work (rerp 1.7.1 parses the whole corpus in about a
#: minute).
SHARDS = 4


def compare(corpus: Path, shard: int = 0, shards: int = 1) -> Report:
    checks = load_checks(corpus)
    variants = Variants()
    report = Report()
    for path in sorted((corpus / "robots").iterdir())[shard::shards]:
        content = path.read_bytes()
        name = path.name
        theirs = rerp.RobotExclusionRulesParser()
        theirs.parse(content)
        ours = RobotExclusionRulesParser()
        ours.parse(content)
        report.files += 1

        file_checks = checks.get(name, [])
        for agent, url in file_checks:
            for syntax in (MK1996, GYM2008):
                report.checks += 1
                verdict = ours.is_allowed(agent, url, syntax)
                if theirs.is_allowed(agent, url, syntax) == verdict:
                    continue
                cause = variants.explain(name, content, _verdict_is(agent, url, syntax, verdict))
                report.add("is_allowed", cause, f"{name} {agent!r} {url} syntax={syntax}")
        for agent in sorted({agent for agent, _ in file_checks}):
            delay = ours.get_crawl_delay(agent)
            if _same(theirs.get_crawl_delay(agent), delay):
                continue
            cause = variants.explain(name, content, _crawl_delay_is(agent, delay))
            report.add("get_crawl_delay", cause, f"{name} {agent!r}")
        sitemaps = ours.sitemaps
        if theirs.sitemaps != sitemaps:
            cause = variants.explain(name, content, _sitemaps_are(sitemaps))
            report.add("sitemaps", cause, name)
    return report


@needs_corpus
@pytest.mark.corpus
@pytest.mark.parametrize("shard", range(SHARDS))
def test_agrees_with_rerp_except_fixed_bugs(capsys: pytest.CaptureFixture[str], shard: int) -> None:
    report = compare(CORPUS, shard, SHARDS)
    with capsys.disabled():
        print("\n" + report.table())
    assert report.files > 0 and report.checks > 0
    assert report.unexplained == 0, report.table()


def _corpus_files() -> Iterator[Path]:
    for folder in ("robots", "junk"):
        yield from sorted((CORPUS / folder).iterdir())


@needs_corpus
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_corpus_file_parses_in_every_syntax(shard: int) -> None:
    count = 0
    for path in list(_corpus_files())[shard::SHARDS]:
        content = path.read_bytes()
        parser = RobotExclusionRulesParser()
        parser.parse(content)
        for syntax in (MK1996, GYM2008, RFC9309):
            assert isinstance(parser.is_allowed("Googlebot", "/", syntax), bool)
            delay = parser.get_crawl_delay("Googlebot", syntax)
            assert delay is None or (math.isfinite(delay) and delay >= 0)
        assert isinstance(str(parser), str)
        assert all(isinstance(url, str) for url in parser.sitemaps)
        count += 1
    assert count > 0


# -- the predicates recognise their bug, and only it -----------------------------------------


def _variant(fix: str) -> ModuleType:
    module = _load_rerp()
    FIXES[fix](module)
    return module


@pytest.mark.parametrize(
    ("fix", "content", "agent", "url"),
    [
        ("unanchored directive regex", "User-agent: *\nNodisallow: /x\n", "a", "/x"),
        ("unanchored directive regex", "User-agent: *\nX-Allow: /x\nDisallow: /\n", "a", "/x"),
        (
            "unanchored directive regex",
            "\xc3\xaf\xc2\xbb\xc2\xbfUser-agent: *\nDisallow: /x\nNodisallow: /y\n",
            "a",
            "/y",
        ),
        ("DEL not scrubbed (\\0177)", "User-agent: *\nDisallow: /a\x7fb\n", "a", "/ab"),
        ("URL path: empty ?, #fragment, empty path", "User-agent: *\nDisallow: /*?\n", "a", "/p?"),
        (
            "URL path: empty ?, #fragment, empty path",
            "User-agent: *\nDisallow: /\n",
            "a",
            "http://h",
        ),
        ("URL path: empty ?, #fragment, empty path", "User-agent: *\nDisallow: /a$\n", "a", "/a#f"),
        ("%0A read as %2F", "User-agent: *\nDisallow: /a%2Fb\n", "a", "/a%0Ab"),
    ],
)
def test_each_fix_changes_rerp_to_our_answer(fix: str, content: str, agent: str, url: str) -> None:
    original = rerp.RobotExclusionRulesParser()
    original.parse(content)
    fixed = _variant(fix).RobotExclusionRulesParser()
    fixed.parse(content)
    ours = RobotExclusionRulesParser()
    ours.parse(content)
    assert original.is_allowed(agent, url) != ours.is_allowed(agent, url)
    assert fixed.is_allowed(agent, url) == ours.is_allowed(agent, url)


@pytest.mark.parametrize(
    ("fix", "content"),
    [
        ("Crawl-delay-only record dropped", "User-agent: a\nCrawl-delay: 5\n\nUser-agent: *\n"),
        (
            "invalid Crawl-delay accepted",
            "User-agent: *\nCrawl-delay: 1\nCrawl-delay: nan\nAllow: /",
        ),
        ("invalid Crawl-delay accepted", "User-agent: *\nCrawl-delay: -3\nDisallow: /\n"),
    ],
)
def test_crawl_delay_fixes_change_rerp_to_our_answer(fix: str, content: str) -> None:
    original = rerp.RobotExclusionRulesParser()
    original.parse(content)
    fixed = _variant(fix).RobotExclusionRulesParser()
    fixed.parse(content)
    ours = RobotExclusionRulesParser()
    ours.parse(content)
    assert not _same(original.get_crawl_delay("a"), ours.get_crawl_delay("a"))
    assert _same(fixed.get_crawl_delay("a"), ours.get_crawl_delay("a"))


def test_crawl_delay_record_fix_keeps_url_decisions() -> None:
    # The kept record names "a" but has no rules: "a" still falls through to "*".
    content = "User-agent: a\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /x\n"
    fixed = _variant("Crawl-delay-only record dropped").RobotExclusionRulesParser()
    fixed.parse(content)
    ours = RobotExclusionRulesParser()
    ours.parse(content)
    assert not fixed.is_allowed("a", "/x") and not ours.is_allowed("a", "/x")
    assert fixed.get_crawl_delay("a") == ours.get_crawl_delay("a") == 5.0


def test_fixes_leave_the_real_module_alone() -> None:
    _variant("unanchored directive regex")
    _variant("DEL not scrubbed (\\0177)")
    parser = rerp.RobotExclusionRulesParser()
    parser.parse("User-agent: *\nNodisallow: /x\n")
    assert not parser.is_allowed("a", "/x")  # rerp's bug, still there


def test_a_difference_no_fix_explains_is_unexplained() -> None:
    variants = Variants()
    content = b"User-agent: *\nDisallow: /x\n"
    # Pretend we answered "allowed" for /x: no variant of rerp does.
    cause = variants.explain("f", content, lambda p: p.is_allowed("a", "/x") is True)
    assert cause == UNEXPLAINED
    cause = variants.explain(
        "g", b"User-agent: *\nNodisallow: /x\n", lambda p: p.is_allowed("a", "/x")
    )
    assert cause == "unanchored directive regex"


if __name__ == "__main__":
    if not (CORPUS / "robots").is_dir():
        sys.exit(f"corpus not found at {CORPUS} (set SCRAPY_RERP_CORPUS)")
    result = compare(CORPUS)
    print(result.table())
    sys.exit(1 if result.unexplained else 0)
