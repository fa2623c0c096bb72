"""Page-level robots directives: ``X-Robots-Tag`` and ``Robots-Tag`` response headers and
``<meta name="robots">`` tags, read and combined for one crawler.

Three forms are read (docs/page-directives.rst has the rules and every choice):

- ``X-Robots-Tag`` as Google reads it: comma-separated rules, a ``BOTNAME:`` prefix scoping the
  rules after it (up to the next prefix, within one header line) to that crawler;
  ``unavailable_after: <date>``, ``max-snippet:N``, ``max-image-preview:SIZE`` and
  ``max-video-preview:N`` take values, and a date's own comma (``Sunday, 01-Jan-2023``) is kept.
- ``Robots-Tag`` as draft-illyes-repext-03 writes it: a Structured Fields List whose members are
  product tokens (``*`` for every crawler) with the rules as parameters
  (``Robots-Tag: *;nosnippet, ExampleBot;noindex``).
- meta tags: ``name`` is ``robots`` (every crawler) or a crawler's name, ``content`` the rules.

For a user agent, the statements for every crawler and those naming its product token are
combined and the most restrictive applies (Google: "the sum of the negative rules"; repext-03:
"the union of all restrictive rules"); statements naming other crawlers are left out. Nothing
here raises on content: what cannot be read is a ``PageWarning``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._agents import caller_tokens
from ._constants import as_text
from ._dates import WEEKDAYS, read_date
from ._page_rules import (
    DATE,
    IMAGE_PREVIEW,
    IMAGE_PREVIEW_SIZES,
    NUMBER,
    PAGE_RULE_USAGE,
    RESTRICTIONS,
    SPELLINGS,
    PageRule,
)
from ._sfv import Date, StructuredFieldError, parse_list
from ._usage import DISALLOWED, UNKNOWN, usage_category

__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_SOURCES",
    "MAX_STATEMENTS",
    "MAX_WARNINGS",
    "PageDirectives",
    "PageStatement",
    "PageUsageDecision",
    "PageWarning",
    "page_directives",
]

#: Characters read of one header line or one meta content (draft-illyes-repext-03: at least
#: 8 KiB); a rule cut by the limit is dropped, with a warning.
MAX_FIELD_CHARS = 8192
#: Header lines (X-Robots-Tag and Robots-Tag, each) and meta tags read; more are warned about.
MAX_SOURCES = 64
#: Statements and warnings kept for one page: past them, one ``too-many`` warning says so.
MAX_STATEMENTS = 1024
MAX_WARNINGS = 256

_WS = " \t\r\n"
_X_ROBOTS_TAG = "x-robots-tag"
_ROBOTS_TAG = "robots-tag"
#: Names that address every crawler: the meta name ``robots``, and ``*`` (repext-03's global
#: token), also read so in X-Robots-Tag prefixes.
_EVERY_CRAWLER = frozenset({"robots", "*"})
# A crawler's name before a colon in X-Robots-Tag: one word, no separators of other syntaxes.
_AGENT_NAME = re.compile(r"[^\s:;=,\"'<>()\[\]{}]+")
_NUMBER = re.compile(r"[+-]?\d{1,9}")


class PageWarning(NamedTuple):
    """Something in a header or meta tag that was not used: ``code`` says what (``unknown-rule``,
    ``bad-value``, ``bad-date``, ``missing-value``, ``value-ignored``, ``too-long``,
    ``too-many``, ``not-structured``, ``no-rules``), ``source`` where (``X-Robots-Tag header 2``,
    ``Robots-Tag header``, ``meta tag 3 (robots)``), ``text`` the words concerned."""

    code: str
    source: str
    text: str
    message: str


class PageStatement(NamedTuple):
    """One rule as read: the rule, its value (None, an int, a size name, or an aware datetime
    in UTC for ``unavailable_after``), where it was written, the crawler it names (lower case;
    None for every crawler), and the text as written."""

    rule: PageRule
    value: Any
    source: str
    agent: str | None
    text: str


class PageUsageDecision(NamedTuple):
    """Whether the page may be used for ``purpose``: ``allowed`` is False when a statement that
    applies forbids it, and ``statement`` is the first such one. Page directives only ever
    restrict: an allowed page is one nobody restricted, so its ``preference`` (in the terms of
    ``UsageDecision``) is ``"unknown"``, and a forbidden one's ``"disallowed"``."""

    allowed: bool
    purpose: str
    statement: PageStatement | None
    reason: str

    @property
    def preference(self) -> str:
        return UNKNOWN if self.allowed else DISALLOWED


_NOINDEX = frozenset({"noindex"})
# The boolean fields of PageDirectives: one per restriction, and indexifembedded.
_FLAGS = RESTRICTIONS | {"indexifembedded"}
_NOSNIPPET = frozenset({"nosnippet"})


def _utc(now: object) -> datetime.datetime:
    if now is None:
        return datetime.datetime.now(datetime.timezone.utc)
    if not isinstance(now, datetime.datetime):
        raise TypeError(f"now must be a datetime or None, not {type(now).__name__}")
    return now.replace(tzinfo=datetime.timezone.utc) if now.tzinfo is None else now


def restrictions_of(statement: PageStatement, now: datetime.datetime) -> frozenset[str]:
    """What *statement* restricts at *now*: its rule's restrictions, ``noindex`` for an
    ``unavailable_after`` date that has passed, ``nosnippet`` for ``max-snippet:0``."""
    name = statement.rule.name
    if name == "unavailable_after":
        return _NOINDEX if now > statement.value else frozenset()
    if name == "max-snippet" and statement.value == 0:
        return _NOSNIPPET
    return statement.rule.restricts


def _smallest_limit(values: list[int]) -> int | None:
    """The most restrictive of max-snippet or max-video-preview values: the smallest limit,
    -1 (no limit) only when nothing else is given."""
    return min((value for value in values if value >= 0), default=-1 if values else None)


@dataclass(frozen=True, kw_only=True)
class PageDirectives:
    """What a page's headers and meta tags say to one crawler, combined (most restrictive).

    The booleans are True when a statement that applies sets them (``none`` sets noindex and
    nofollow, ``nocache`` is noarchive, ``max-snippet:0`` is nosnippet). ``unavailable_after``
    is the earliest date given (aware, UTC); it is not turned into ``noindex`` here, since that
    depends on the time: ``usage(..., now=...)`` and ``restrictions(now)`` do. ``max_snippet``
    and ``max_video_preview`` are the smallest limit given (-1: no limit), ``max_image_preview``
    the smallest size (``"none"``, ``"standard"``, ``"large"``). ``agent`` is the product token
    whose statements applied, None if only those for every crawler did. ``statements`` are
    those that apply, in order (headers, then meta tags); ``warnings`` cover everything read.
    """

    noindex: bool
    nofollow: bool
    noarchive: bool
    nosnippet: bool
    noimageindex: bool
    notranslate: bool
    indexifembedded: bool
    noai: bool
    noimageai: bool
    unavailable_after: datetime.datetime | None
    max_snippet: int | None
    max_image_preview: str | None
    max_video_preview: int | None
    agent: str | None
    statements: tuple[PageStatement, ...]
    warnings: tuple[PageWarning, ...]

    @classmethod
    def _combine(
        cls,
        statements: tuple[PageStatement, ...],
        warnings: tuple[PageWarning, ...],
        agent: str | None,
    ) -> PageDirectives:
        flags: set[str] = set()
        values: dict[str, list[Any]] = {}
        for statement in statements:
            flags |= statement.rule.restricts
            if statement.rule.value is not None:
                values.setdefault(statement.rule.name, []).append(statement.value)
            elif statement.rule.name == "indexifembedded":
                flags.add("indexifembedded")
        max_snippet = _smallest_limit(values.get("max-snippet", []))
        if max_snippet == 0:
            flags.add("nosnippet")
        sizes = values.get("max-image-preview", [])
        return cls(
            **{flag: flag in flags for flag in _FLAGS},
            unavailable_after=min(values.get("unavailable_after", []), default=None),
            max_snippet=max_snippet,
            max_image_preview=min(sizes, key=IMAGE_PREVIEW_SIZES.index) if sizes else None,
            max_video_preview=_smallest_limit(values.get("max-video-preview", [])),
            agent=agent,
            statements=statements,
            warnings=warnings,
        )

    def restrictions(self, now: datetime.datetime | None = None) -> frozenset[str]:
        """Every restriction in force at *now* (default: the current time): ``noindex``,
        ``nofollow``, ``noarchive``, ``nosnippet``, ``noimageindex``, ``notranslate``,
        ``noai``, ``noimageai``. A naive *now* is read as UTC."""
        moment = _utc(now)
        return frozenset().union(*(restrictions_of(s, moment) for s in self.statements))

    def usage(
        self, purpose: str, image: bool = False, now: datetime.datetime | None = None
    ) -> PageUsageDecision:
        """May the page be used for *purpose* (a usage category: ``"search"``, ``"train-ai"``,
        ``"ai-input"``; ``"ai-train"`` is read as ``"train-ai"``)? ``PAGE_RULE_USAGE`` says
        which restrictions forbid which purpose; *image* adds those about images (the page's
        images, or an image whose own headers these are). *now* (default: the current time;
        naive is UTC) decides whether an ``unavailable_after`` date has passed.

        TypeError for a *purpose* that is not a str, *image* not a bool or *now* not a
        datetime; ValueError for an unknown purpose.
        """
        category = usage_category(purpose)
        if not isinstance(image, bool):
            raise TypeError(f"image must be a bool, not {type(image).__name__}")
        moment = _utc(now)
        page_wide, images_only = PAGE_RULE_USAGE[category]
        wanted = page_wide | images_only if image else page_wide
        for statement in self.statements:
            hit = restrictions_of(statement, moment) & wanted
            if hit:
                reason = f"{category} disallowed by {statement.source}: {statement.text}"
                if statement.rule.name not in hit:  # none, unavailable_after, max-snippet:0
                    reason += f" ({', '.join(sorted(hit))})"
                return PageUsageDecision(False, category, statement, reason)
        what = f"{category} of images" if image else category
        return PageUsageDecision(True, category, None, f"no page directive restricts {what}")


# -- the inputs ---------------------------------------------------------------------------------


def _header_text(value: object, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")  # HTTP field values: any byte reads as itself
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def _pairs(things: object, what: str) -> Iterator[tuple[object, object]]:
    """(name, value) pairs from a mapping (or anything with ``items()``) or an iterable."""
    if things is None:
        return
    if isinstance(things, (str, bytes, bytearray)):
        raise TypeError(
            f"{what} must be a mapping or an iterable of (name, value) pairs, not"
            f" {type(things).__name__}; pair a lone value with its name: [('X-Robots-Tag', v)]"
        )
    items = things.items() if hasattr(things, "items") else things
    if not isinstance(items, Iterable):
        raise TypeError(
            f"{what} must be a mapping or an iterable of pairs, not {type(things).__name__}"
        )
    for pair in items:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"each of {what} must be a (name, value) pair, not {pair!r:.60}")
        yield pair[0], pair[1]


def _header_lines(headers: object, names: Container[str]) -> Iterator[tuple[str, str]]:
    """(lower-case name, value) per line of the headers *names* holds (lower case); a value may
    be a list of lines. The values of other headers are not read (a response has many)."""
    for name, value in _pairs(headers, "headers"):
        key = _header_text(name, "a header name").strip(_WS).lower()
        if key in names:
            for line in value if isinstance(value, (list, tuple)) else (value,):
                yield key, _header_text(line, "a header value")


def _meta_tags(meta: object) -> Iterator[tuple[int, str, str | None]]:
    """(1-based position, lower-case name, content) per meta tag."""
    for index, (name, content) in enumerate(_pairs(meta, "meta"), 1):
        key = _header_text(name, "a meta name").strip(_WS).lower()
        if isinstance(content, (bytes, bytearray)):
            content = bytes(content).decode("utf-8", "replace")
        elif content is not None and not isinstance(content, str):
            raise TypeError(
                f"a meta content must be str, bytes or None, not {type(content).__name__}"
            )
        yield index, key, content


# -- reading rules ------------------------------------------------------------------------------

Emit = Callable[[PageStatement], None]
Warn = Callable[[str, str, str], None]


def _warner(warnings: list[Any], kind: Callable[..., Any]) -> Callable[[str, str, str, str], None]:
    """``warn(code, source, text, message)``, which adds a *kind* warning (PageWarning,
    TdmRepWarning) to *warnings* up to MAX_WARNINGS, then one ``too-many`` that says so."""

    def warn(code: str, source: str, text: str, message: str) -> None:
        if len(warnings) < MAX_WARNINGS:
            warnings.append(kind(code, source, text, message))
        elif len(warnings) == MAX_WARNINGS:
            message = f"more than {MAX_WARNINGS} warnings; the rest are not listed"
            warnings.append(kind("too-many", source, "", message))

    return warn


def _bounded(value: str, separator: str, warn: Warn) -> str:
    """*value* cut to MAX_FIELD_CHARS, without the member the cut fell in (repext-03)."""
    if len(value) <= MAX_FIELD_CHARS:
        return value
    kept = value[:MAX_FIELD_CHARS].rpartition(separator)[0]
    warn(
        "too-long",
        value[len(kept) : len(kept) + 40],
        f"longer than {MAX_FIELD_CHARS} characters; the rest is ignored",
    )
    return kept


def _read_number(value: str) -> int | None:
    if _NUMBER.fullmatch(value) is None:
        return None
    number = int(value)
    return number if number >= -1 else None


def _read_size(value: str) -> str | None:
    size = value.lower()
    return size if size in IMAGE_PREVIEW_SIZES else None


_VALUE_READERS: dict[str, Callable[[str], Any]] = {
    DATE: read_date,
    NUMBER: _read_number,
    IMAGE_PREVIEW: _read_size,
}


def _read_rules(
    text: str, source: str, agent: str | None, by_agent: bool, emit: Emit, warn: Warn
) -> None:
    """The comma-separated rules of one header line or meta content.

    With *by_agent* (X-Robots-Tag), ``name:`` before a rule names the crawler that it and the
    rules after it are for, when *name* is no rule (``googlebot: noindex``); the last such name
    counts (``a: b: noindex`` is for b), and it holds until the next one.
    """
    items = text.split(",")
    position = 0
    while position < len(items):
        item = items[position].strip(_WS)
        position += 1
        if by_agent and ":" in item:
            pieces = item.split(":")
            named = 0
            for piece in pieces[:-1]:  # one pass: "a: b: c: noindex" costs its length once
                name = piece.strip(_WS).lower()
                if name in SPELLINGS or _AGENT_NAME.fullmatch(name) is None:
                    break
                agent = None if name in _EVERY_CRAWLER else name
                named += 1
            if named:
                item = ":".join(pieces[named:]).strip(_WS)
        if not item:
            continue
        head, colon, value = item.partition(":")
        spelling = head.strip(_WS).lower()
        rule = SPELLINGS.get(spelling)
        if rule is None:
            warn("unknown-rule", item, f"unknown rule {spelling!r}, ignored")
            continue
        value = value.strip(_WS)
        if rule.value is None:
            if value:
                warn("value-ignored", item, f"{rule.name} takes no value; {value!r} ignored")
            emit(PageStatement(rule, None, source, agent, item))
            continue
        if rule.value == DATE and value.lower() in WEEKDAYS and position < len(items):
            # The comma after a weekday is the date's own (RFC 850/1123): the next piece is the
            # rest of the date, if the two read as one.
            whole = f"{value},{items[position]}"
            if read_date(whole) is not None:
                item = f"{item},{items[position]}".strip(_WS)
                value = whole
                position += 1
        if not value:
            warn("missing-value", item, f"{rule.name} without a value, ignored")
            continue
        read = _VALUE_READERS[rule.value](value)
        if read is None:
            code = "bad-date" if rule.value == DATE else "bad-value"
            warn(code, item, f"{rule.name}: cannot read {value!r}, ignored")
            continue
        emit(PageStatement(rule, read, source, agent, item))


def _read_robots_tag(value: str, source: str, emit: Emit, warn: Warn) -> None:
    """A ``Robots-Tag`` value (draft-illyes-repext-03): a Structured Fields List of product
    tokens (``*`` for every crawler), each with its rules as parameters."""
    try:
        members = parse_list(value)
    except StructuredFieldError as error:
        warn("not-structured", value[:80], f"not a Structured Fields list ({error}); ignored")
        return
    for bare, parameters in members:
        if isinstance(bare, list) or not isinstance(bare, str):
            warn("not-structured", str(bare)[:80], "a member that is not a product token, ignored")
            continue
        name = bare.lower()
        agent = None if name in _EVERY_CRAWLER else name
        if not parameters:
            warn("no-rules", bare, f"{bare} has no rules (they are parameters: {bare};noindex)")
        for key, parameter in parameters.items():
            text = f"{bare};{key}" if parameter is True else f"{bare};{key}={parameter}"
            rule = SPELLINGS.get(key)
            if rule is None:
                warn("unknown-rule", text, f"unknown rule {key!r}, ignored")
            elif rule.value is None:
                if parameter is not True:
                    warn(
                        "value-ignored", text, f"{rule.name} takes no value; {parameter!r} ignored"
                    )
                emit(PageStatement(rule, None, source, agent, text))
            else:
                read = _parameter_value(rule, parameter)
                if read is None:
                    code = "bad-date" if rule.value == DATE else "bad-value"
                    warn(code, text, f"{rule.name}: cannot read {parameter!r}, ignored")
                else:
                    emit(PageStatement(rule, read, source, agent, text))


def _parameter_value(rule: PageRule, parameter: object) -> Any:
    """A Structured Fields parameter as a rule's value: an Integer for a number, a Token or
    String for a size, a Date or a String for a date."""
    if isinstance(parameter, bool):
        return None
    if rule.value == NUMBER:
        is_integer = isinstance(parameter, int) and not isinstance(parameter, Date)
        return parameter if is_integer and parameter >= -1 else None
    if rule.value == IMAGE_PREVIEW:
        return _read_size(parameter) if isinstance(parameter, str) else None
    if isinstance(parameter, Date):
        try:
            return datetime.datetime.fromtimestamp(int(parameter), datetime.timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    return read_date(parameter) if isinstance(parameter, str) else None


# -- the query --------------------------------------------------------------------------------


def page_directives(headers: object, meta: object, user_agent: str | bytes) -> PageDirectives:
    """The page-level directives that apply to *user_agent*, from a response's headers and its
    page's meta tags.

    *headers*: a mapping (a dict, Scrapy's ``Headers``, ``http.client.HTTPMessage``...) or an
    iterable of ``(name, value)`` pairs; names and values str or bytes, a value possibly a list
    of values (one per header line). Only ``X-Robots-Tag`` and ``Robots-Tag`` are read; None
    for none. *meta*: ``(name, content)`` pairs, as ``robots_meta_tags`` returns them (None for
    none); only the tags named ``robots`` or for the crawler are read. *user_agent*: a product
    token (``MyBot``) or a whole User-Agent header, whose product tokens are found as robots.txt
    queries find them; the first of them that a statement names is the crawler's.

    Raises TypeError for arguments of the wrong types; never raises on their content.
    """
    user_agent = as_text(user_agent, "user_agent")
    warnings: list[PageWarning] = []
    found: list[PageStatement] = []

    kept = 0
    add_warning = _warner(warnings, PageWarning)

    def warner(source: str) -> Warn:
        return lambda code, text, message: add_warning(code, source, text, message)

    def emit(statement: PageStatement) -> None:
        nonlocal kept
        kept += 1
        if kept <= MAX_STATEMENTS:
            found.append(statement)
        elif kept == MAX_STATEMENTS + 1:
            message = f"more than {MAX_STATEMENTS} rules; the rest are ignored"
            warner(statement.source)("too-many", statement.text, message)

    lines: dict[str, list[str]] = {_X_ROBOTS_TAG: [], _ROBOTS_TAG: []}
    for name, value in _header_lines(headers, lines):
        lines[name].append(value)
    for number, value in enumerate(lines[_X_ROBOTS_TAG], 1):
        source = f"X-Robots-Tag header {number}"
        warn = warner(source)
        if number > MAX_SOURCES:
            warn(
                "too-many", "", f"more than {MAX_SOURCES} X-Robots-Tag lines; the rest are ignored"
            )
            break
        _read_rules(_bounded(value, ",", warn), source, None, True, emit, warn)
    robots_tag_lines = lines[_ROBOTS_TAG]
    if robots_tag_lines:
        source = "Robots-Tag header"
        warn = warner(source)
        if len(robots_tag_lines) > MAX_SOURCES:
            warn("too-many", "", f"more than {MAX_SOURCES} Robots-Tag lines; the rest are ignored")
        joined = ", ".join(robots_tag_lines[:MAX_SOURCES])  # one field value (RFC 9651 4.2)
        _read_robots_tag(_bounded(joined, ",", warn), source, emit, warn)

    tags = list(_meta_tags(meta))
    named = {statement.agent for statement in found} | {name for _, name, _ in tags}
    agent = next((token for token in caller_tokens(user_agent) if token in named), None)
    statements = [statement for statement in found if statement.agent in (None, agent)]

    found.clear()
    read = [
        (index, name, content)
        for index, name, content in tags
        if name in ("robots", agent) and content is not None
    ]
    for number, (index, name, content) in enumerate(read, 1):
        source = f"meta tag {index} ({name})"
        warn = warner(source)
        if number > MAX_SOURCES:
            warn("too-many", "", f"more than {MAX_SOURCES} robots meta tags; the rest are ignored")
            break
        for_agent = None if name == "robots" else agent
        _read_rules(_bounded(content, ",", warn), source, for_agent, False, emit, warn)
    statements += found
    return PageDirectives._combine(tuple(statements), tuple(warnings), agent)
