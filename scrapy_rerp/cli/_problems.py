"""Problems in a robots.txt, with line numbers and a severity, across the three syntaxes.

What a reader does with a line is asked of the engine: "applied by RFC 9309 readers, ignored by
the others" is whether each syntax's parse of the file holds that line as a rule of a group, not
a table kept here, and a misspelled rule outside a group gets the problem the engine gives the
right spelling there. The checks of the file as a whole (size, UTF-16, an HTML or XML page,
binary data) look at the bytes; :func:`not_robots_txt` is the one test of bytes that are no
robots.txt at all, which the other commands give no verdict on. What is wrong with a
``Content-Usage`` or ``Content-Signal`` value is the engine's parse warning for it, given a code
here; whether a path a Content-Usage rule grants a usage for may be crawled at all is the
engine's verdict for that path.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from scrapy_rerp.core.body import MAX_SIZE, Body
from scrapy_rerp.core.settings import syntax_name
from scrapy_rerp.core.urls import crawl_allowed, crawl_decision, sitemap_url
from scrapy_rerp.engine import (
    CONTENT_USAGE,
    CONTENT_USAGE_LABELS,
    DIRECTIVES,
    GYM2008,
    MK1996,
    RFC9309,
    SIGNAL_KEYS,
    Decision,
    ParseWarning,
    RobotsTxt,
    UsageStatement,
    parse,
)

__all__ = ["ERROR", "WARNING", "NotRobotsTxt", "Problem", "lint", "not_robots_txt"]

ERROR = "error"
WARNING = "warning"

#: The size RFC 9309 (section 2.5) asks crawlers to read at least, and the middleware's default.
SIZE_LIMIT = MAX_SIZE
#: Bounds on the work of comparing the syntaxes on a large file.
MAX_AGENTS = 12
MAX_URLS = 4000
#: The work lint spends asking the engine about paths (syntax differences, usage grants), in
#: comparisons (one rule of one syntax weighed against one path, a wildcard rule once per
#: ``*``-separated part): a floor, and as many again per byte of the file, so that linting any
#: file takes time linear in its size. The checks that do not fit are skipped, and the
#: comparisons they would have cost are counted and said.
MIN_COMPARISONS = 2_000_000
COMPARISONS_PER_BYTE = 40
#: A verdict explained (the line that decides it) weighs every rule on its own, where a verdict
#: alone has the engine's compiled rules skip most of them: it counts this many times over.
EXPLAIN_WEIGHT = 4

_SYNTAXES = (RFC9309, GYM2008, MK1996)
# Every directive of the engine's table, by its lower-case name.
_DIRECTIVES = tuple(directive.name.lower() for directive in DIRECTIVES)
_RULE_KEYS = ("allow", "disallow")
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z_ -]*?)\s*(:|\s+(?=\S))")
_HTML = re.compile(rb"\A\s*(?:<!doctype\s+html|<html|<head|<body|<\?xml)|<html[\s>]", re.I)
#: A URL with its scheme (``https://...``): what a Sitemap must be, and a URL to check may be.
ABSOLUTE_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)
# The control characters text does not hold: all but tab, line feed, vertical tab, form feed
# and carriage return.
_CONTROLS = bytes(range(0x20)).translate(None, b"\t\n\v\f\r") + b"\x7f"
#: The bytes the checks of the file as a whole look at.
_HEAD_BYTES = 2048

_USAGE_DIRECTIVES = ("Content-Usage", "Content-Signal")
_UNKNOWN_LABEL = re.compile(r"unknown usage category '(.*)'")


@dataclass(frozen=True, kw_only=True)
class Problem:
    # In the order of the report's keys (as_dict).
    line: int | None = None
    severity: str  # ERROR: the file is not what it seems; WARNING: readers differ or ignore
    code: str
    message: str
    text: str | None = None  # the line as written
    example: dict[str, Any] | None = None  # a URL that shows the problem, with each verdict

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class Lint:
    problems: list[Problem] = field(default_factory=list)
    checked_urls: int = 0
    checked_agents: int = 0
    comparisons: int = 0  # rule comparisons made
    skipped_comparisons: int = 0  # rule comparisons the checks over the budget would have made
    budget: int = 0


class _Budget:
    """The rule comparisons lint may still make on a file, and those it skipped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0
        self.skipped = 0

    def spend(self, comparisons: int) -> bool:
        """Whether a check of ``comparisons`` fits; if it does not, it is counted as skipped."""
        if self.spent + comparisons > self.limit:
            self.skipped += comparisons
            return False
        self.spent += comparisons
        return True


def _weighed(robots: RobotsTxt, agent: str) -> int:
    """The comparisons one query of ``robots`` for ``agent`` may make (at least 1: the query
    itself): each rule the engine weighs against the path (the groups RFC 9309 merges for the
    agent, or rerp's one record), counted once per ``*``-separated part (a wildcard rule is
    matched part by part)."""
    patterns = [pattern for group in robots._applying_groups(agent) for pattern in group.patterns]
    return max(1, len(patterns) + sum(pattern.count("*") for pattern in patterns))


def _readers(applied: dict[int, bool]) -> str:
    """'applied by RFC 9309 readers, ignored by GYM2008 and MK1996 readers'."""
    yes = [syntax_name(s).upper() for s in _SYNTAXES if applied[s]]
    no = [syntax_name(s).upper() for s in _SYNTAXES if not applied[s]]
    said = (("applied", yes), ("ignored", no))
    return ", ".join(f"{how} by {_and(names)} readers" for how, names in said if names)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@dataclass(frozen=True)
class NotRobotsTxt:
    """Bytes that are no robots.txt at all, and what they are instead."""

    code: str  # lint's problem code: "html" or "binary"
    what: str  # "an HTML (or XML) page", "binary data"

    @property
    def summary(self) -> str:
        """``an HTML (or XML) page, not a robots.txt``"""
        return f"{self.what}, not a robots.txt"

    @property
    def message(self) -> str:
        hint = " (a page served for a missing robots.txt?)" if self.code == "html" else ""
        return f"{self.summary}: a crawler finds no rules in it{hint}"

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def _utf16(head: bytes) -> bool:
    """A byte order mark, or text in UTF-16: a NUL in most bytes of one parity (an ASCII
    character's high byte) and in few of the other. NULs everywhere are binary data."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    if len(head) < 8:
        return False
    even, odd = head[0::2], head[1::2]
    return any(
        high.count(0) * 3 >= len(high) * 2 and low.count(0) * 3 < len(low)
        for high, low in ((odd, even), (even, odd))
    )


def _binary(head: bytes) -> bool:
    """NUL bytes, or control characters in one byte of 20 or more: no text holds them."""
    controls = len(head) - len(head.translate(None, _CONTROLS))
    return b"\x00" in head or (controls > 0 and controls * 20 >= len(head))


def not_robots_txt(raw: bytes, body: Body) -> NotRobotsTxt | None:
    """What ``raw`` (``body`` as a crawler reads it) is when it is no robots.txt at all: an HTML
    or XML page, or binary data, in which no syntax reads a group or a sitemap; None otherwise.
    The one test of it: lint reports it, and the other commands give no verdict on such bytes.

    Bytes that hold rules are a robots.txt, whatever else they hold (NUL padding after the
    rules); a UTF-16 robots.txt is one too, in an encoding crawlers read only when its
    Content-Type says so (lint's ``utf-16``)."""
    head = raw[:_HEAD_BYTES]
    if _utf16(head):
        return None
    if _HTML.search(head):
        found = NotRobotsTxt("html", "an HTML (or XML) page")
    elif _binary(head):
        found = NotRobotsTxt("binary", "binary data")
    else:
        return None
    read = (body.rules(syntax) for syntax in _SYNTAXES)
    return None if any(robots.groups or robots.sitemaps for robots in read) else found


def _file_problems(raw: bytes, body: Body) -> list[Problem]:
    problems = []
    if len(raw) > SIZE_LIMIT or body.truncated:
        problems.append(
            Problem(
                severity=ERROR,
                code="too-large",
                message=f"the file is over {SIZE_LIMIT // 1024} KiB: crawlers read the first "
                f"{SIZE_LIMIT // 1024} KiB (RFC 9309 section 2.5) and ignore the rest",
            )
        )
    head = raw[:_HEAD_BYTES]
    if _utf16(head):
        bom = "with" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "without"
        problems.append(
            Problem(
                severity=ERROR,
                code="utf-16",
                message=(
                    f"the file is UTF-16 ({bom} a byte order mark): robots.txt is UTF-8 (RFC 9309 "
                    "section 2.3), and read as UTF-8 this file names no directive"
                ),
            )
        )
    found = not_robots_txt(raw, body)
    if found is not None:
        problems.append(Problem(severity=ERROR, code=found.code, message=found.message))
    return problems


@functools.lru_cache(maxsize=1024)
def _close_directive(key: str) -> list[str]:
    """The directive ``key`` looks like a misspelling of, if any (remembered: a file repeats
    its misspellings). A key over 32 characters is too long to be close to any."""
    if len(key) > 32:
        return []
    return difflib.get_close_matches(key.replace(" ", "-"), _DIRECTIVES, n=1, cutoff=0.7)


def _line_problems(text: str, parsed: dict[int, RobotsTxt], syntax: int) -> list[Problem]:
    problems: list[Problem] = []
    flagged: set[int] = set()
    # Rules spelled wrong (or without a colon), spelled right: where the file puts them is a
    # problem of its own, the one the right spelling would get.
    respelled: dict[int, str] = {}

    @functools.cache
    def rules_of(each: int) -> set[int]:
        """The lines syntax *each* reads as rules of a group, in the file as it is: a rule
        before any User-agent is applied by no reader, however it is spelled. Found on first
        use (most files have no line to ask about)."""
        return {line for group in parsed[each].groups for *_, line in group.rules}

    def warn(code: str, message: str) -> None:
        """A warning about the line the loop below is reading."""
        problems.append(
            Problem(severity=WARNING, code=code, message=message, line=number, text=line.strip())
        )
        flagged.add(number)

    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        content = line.split("#", 1)[0].strip()
        match = _KEY.match(content)
        if not content or match is None:
            continue
        spelled = match.group(1).strip()
        key = spelled.lower()
        colon = match.group(2) == ":"
        value = content[match.end() :].strip() if colon else content[match.end(1) :].strip()
        close = [] if key in _DIRECTIVES else _close_directive(key)
        if close or (key in _DIRECTIVES and not colon and value):
            # A misspelled directive, or one without its colon: what each reader does with it.
            meant = close[0] if close else key
            applied = {s: number in rules_of(s) for s in _SYNTAXES} if meant in _RULE_KEYS else None
            how = _readers(applied) if applied else "ignored by every reader"
            if applied is not None:
                respelled[number] = f"{meant.title()}: {value}"
            if close:
                warn(
                    "misspelled-directive",
                    f"{spelled!r} looks like a misspelling of {meant.title()!r}: {how}",
                )
            else:
                warn("no-colon", f"no colon after {spelled!r}: {how}")
        elif key == "user-agent" and not value:
            warn(
                "empty-user-agent",
                "an empty User-agent names no crawler, and is ignored (RFC 9309 asks for a "
                "product token, or *)",
            )
        elif key == "sitemap":
            try:
                sitemap_url(None, value)
            except ValueError as error:
                warn(
                    "invalid-sitemap",
                    f"not a URL a crawler fetches a sitemap from ({error}): crawlers skip "
                    "this line and read the other Sitemap lines",
                )
                continue
            if not ABSOLUTE_URL.match(value):
                warn(
                    "relative-sitemap",
                    "a Sitemap must be an absolute URL (sitemaps.org); crawlers may resolve it "
                    "against the robots.txt URL, or ignore it",
                )
    # The engine's warnings but on the lines flagged above, and those of the rules respelled.
    warnings = [warning for warning in parsed[syntax].warnings if warning.line not in flagged]
    if respelled:
        right = [respelled.get(number, line) for number, line in enumerate(lines, 1)]
        warnings += [
            warning
            for warning in parse("\n".join(right), syntax).warnings
            if warning.line in respelled and warning.code == "rule-outside-group"
        ]
    for warning in warnings:
        code = _warning_code(warning)
        message = warning.message + _usage_hint(code, warning.message)
        written = lines[warning.line - 1].strip() if 0 < warning.line <= len(lines) else None
        severity = ERROR if code in ("rule-outside-group", "usage-outside-group") else WARNING
        problems.append(
            Problem(severity=severity, code=code, message=message, line=warning.line, text=written)
        )
    return problems


def _warning_code(warning: ParseWarning) -> str:
    """The problem code for one of the engine's parse warnings: the warning's own code, but
    that a usage line outside a group is an error of its own and an over-long line one of the
    ignored ones."""
    if warning.code == "outside-group":
        directive = warning.message.partition(" outside")[0]  # "Content-Usage outside a group"
        return "usage-outside-group" if directive in _USAGE_DIRECTIVES else "ignored-line"
    if warning.code == "line-too-long":
        return "ignored-line"
    return warning.code


def _usage_hint(code: str, message: str) -> str:
    """What Content-Usage or Content-Signal knows, after the engine's message about a key or
    value it does not."""
    if code == "unknown-content-signal":
        return f"; Content-Signal keys are {_and(list(SIGNAL_KEYS))}, each yes or no"
    if code != "unknown-usage-category":
        return ""
    labels = _and(sorted(CONTENT_USAGE_LABELS, reverse=True))
    hint = f"; Content-Usage labels are {labels} (draft-ietf-aipref-vocab-07)"
    found = _UNKNOWN_LABEL.match(message)
    label = found.group(1) if found else ""
    signal = SIGNAL_KEYS.get(label)
    if signal in CONTENT_USAGE_LABELS:  # Content-Signal's ai-train
        hint += f", and Content-Signal's {label} is Content-Usage's {signal}"
    elif signal is not None:  # ai-input: a Content-Signal category only
        hint += f"; {signal} is set by Content-Signal lines only"
    return hint


def _usage_rules(robots: RobotsTxt) -> list[tuple[tuple[str, ...], int, UsageStatement]]:
    """Each Content-Usage rule that has a path: the agents it is for, its line, what it says.

    The engine keeps per-group values only in its stored groups (``RobotsTxt.groups`` has the
    rules alone); a value is for the agents named before its line.
    """
    return [
        (group.agents[: extra.agents_before], extra.line, extra.value)
        for group in robots._groups
        for extra in group.extras
        if extra.kind == CONTENT_USAGE and extra.value.path is not None
    ]


def _probe_path(pattern: str) -> str:
    """A path a Content-Usage rule's path pattern matches: ``*`` as nothing, no ``$``."""
    path = pattern.removesuffix("$").replace("*", "")
    return path if path.startswith("/") else "/" + path


def _usage_grant_problems(robots: RobotsTxt, text: str, budget: _Budget) -> list[Problem]:
    """A Content-Usage rule that grants a usage (``=y``) for a path its agents may not crawl:
    preferences apply only to what may be crawled (draft-ietf-aipref-attach-05), so the grant
    never applies. The verdict for the rule's path is the engine's, for each of its agents."""
    problems = []
    lines = text.split("\n")
    weighed = functools.cache(lambda agent: _weighed(robots, agent))
    for agents, line, statement in _usage_rules(robots):
        granted = [category for category, allowed in statement.preferences if allowed]
        if not granted:
            continue
        assert statement.path is not None
        path = _probe_path(statement.path)
        blocked: dict[str, Any] = {}
        for agent in dict.fromkeys(a.strip() for a in agents if a.strip()):
            if not budget.spend(weighed(agent)) or crawl_allowed(robots, path, agent):
                continue
            if budget.spend(EXPLAIN_WEIGHT * weighed(agent)):  # which line disallows it
                blocked[agent] = crawl_decision(robots, path, agent)
        if not blocked:
            continue
        decision = next(iter(blocked.values()))
        where = f"line {decision.line}: {decision.rule}" if decision.line else decision.reason
        problems.append(
            Problem(
                severity=WARNING,
                code="usage-on-disallowed-path",
                message=(
                    f"{_and(granted)} granted for {statement.path}, which {_and(list(blocked))} "
                    f"may not crawl ({where}): preferences apply only to paths that may be crawled "
                    "(draft-ietf-aipref-attach-05), so this grant never applies"
                ),
                line=line,
                text=lines[line - 1].strip() if 0 < line <= len(lines) else None,
            )
        )
    return problems


def _candidates(groups: Iterable[Any]) -> list[str]:
    """Paths that exercise each rule: the pattern as a path, one step inside it, and with
    ``*`` read as text or as something. At most MAX_URLS, from rules spread over the file."""
    patterns = list(dict.fromkeys(pattern for group in groups for _, pattern, _ in group.rules))
    seen: dict[str, None] = {"/": None}
    for pattern in _spread(patterns):
        base = pattern[:-1] if pattern.endswith("$") else pattern
        for path in (
            base.replace("*", ""),
            base.replace("*", "x"),
            base.replace("*", "") + "x",
            base.replace("*", "x") + "/x",
            base,
        ):
            if not path.startswith("/"):
                path = "/" + path
            seen.setdefault(path, None)
            if len(seen) >= MAX_URLS:
                return list(seen)
    return list(seen)


def _spread(items: list[str], stride: int = 61) -> list[str]:
    """``items`` in an order that reaches every part of the list early (every ``stride``-th
    item, then the ones after them...): when a bound stops the work, what was done covers the
    whole file, not its beginning."""
    return [item for start in range(stride) for item in items[start::stride]]


def _verdict_text(decision: Decision) -> str:
    verdict = "allowed" if decision.allowed else "disallowed"
    if decision.line is None:
        return f"{verdict} ({decision.reason})"
    return f"{verdict} by line {decision.line} {decision.rule} ({decision.reason})"


def _syntax_problems(
    parsed: dict[int, RobotsTxt], budget: _Budget
) -> tuple[list[Problem], int, int]:
    groups = [group for syntax in _SYNTAXES for group in parsed[syntax].groups]
    named = (agent.strip() for group in groups for agent in group.agents if agent.strip())
    agents = list(dict.fromkeys(["*", *named]))[:MAX_AGENTS]
    paths = _candidates(groups)
    # One check: a path asked of the three syntaxes, for one agent; as much again to explain it.
    cost = {agent: sum(_weighed(parsed[s], agent) for s in _SYNTAXES) for agent in agents}
    problems = []
    reported: set[tuple[int | None, ...]] = set()
    for path in _spread(paths):
        url = "https://example.com" + path
        for agent in agents:
            if not budget.spend(cost[agent]):
                continue
            verdicts = {s: crawl_allowed(parsed[s], url, agent) for s in _SYNTAXES}
            if len(set(verdicts.values())) == 1:
                continue
            if not budget.spend(EXPLAIN_WEIGHT * cost[agent]):  # the lines that decide
                continue
            decisions = {s: crawl_decision(parsed[s], url, agent) for s in _SYNTAXES}
            deciding = tuple(decisions[s].line for s in _SYNTAXES)
            lines = [line for line in deciding if line is not None]
            if not lines or deciding in reported:
                continue
            reported.add(deciding)
            each = "; ".join(
                f"{syntax_name(s).upper()}: {_verdict_text(decisions[s])}" for s in _SYNTAXES
            )
            who = "" if agent == "*" else f" for {agent}"
            problems.append(
                Problem(
                    severity=WARNING,
                    code="syntax-difference",
                    message=f"{path}{who} is {each}",
                    line=lines[0],
                    example={
                        "url": path,
                        "agent": agent,
                        "allowed": {syntax_name(s): verdicts[s] for s in _SYNTAXES},
                    },
                )
            )
    return problems, len(paths), len(agents)


def lint(raw: bytes, body: Body, syntax: int) -> Lint:
    """Every problem of the robots.txt ``raw`` (as given or downloaded) and ``body`` (as a
    crawler reads it), its parse warnings read in ``syntax``."""
    parsed = {each: body.rules(each) for each in _SYNTAXES}
    text = body.data.decode(body.charset or "utf-8", "replace").removeprefix("\ufeff")
    budget = _Budget(MIN_COMPARISONS + COMPARISONS_PER_BYTE * len(body.data))
    result = Lint(problems=_file_problems(raw, body), budget=budget.limit)
    result.problems += _line_problems(text, parsed, syntax)
    result.problems += _usage_grant_problems(parsed[syntax], text, budget)
    differences, result.checked_urls, result.checked_agents = _syntax_problems(parsed, budget)
    result.problems += differences
    result.comparisons, result.skipped_comparisons = budget.spent, budget.skipped
    result.problems.sort(key=lambda p: (p.line or 0, p.severity != ERROR, p.code))
    return result
