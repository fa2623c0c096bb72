"""AI usage preferences: the IETF vocabulary as data, and readers for the two line values.

``Content-Usage`` (draft-ietf-aipref-vocab and -attach) is a Structured Fields Dictionary of
usage category -> Token ``y`` (allow) or ``n`` (disallow), in a robots.txt group (optionally
scoped to a path) or as an HTTP response header. ``Content-Signal`` (contentsignals.org,
draft-romm-aipref-contentsignals) is ``key=yes|no`` pairs, comma-separated, in a robots.txt
group. Both read into the same model: category -> True (allowed) or False (disallowed), a
category that is absent being unknown.

Everything here is pure and never raises on content from the network: what a reader could not
use comes back as messages, which the caller turns into warnings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import NamedTuple

from ._sfv import Date, DisplayString, StructuredFieldError, Token, parse_dictionary

__all__ = [
    "ALLOWED",
    "ATTACH_DRAFT",
    "CATEGORIES",
    "CONTENT_SIGNALS_DRAFT",
    "CONTENT_USAGE_LABELS",
    "DISALLOWED",
    "SIGNAL_KEYS",
    "SIGNAL_VALUES",
    "UNKNOWN",
    "USAGE_VALUES",
    "VOCAB_DRAFT",
    "UsageDecision",
    "combine",
    "combined",
    "header_usage",
    "preference",
    "read_content_signal",
    "read_content_usage",
    "split_content_usage_rule",
    "strongest",
    "usage_category",
]

# The revisions this module follows (ietf-wg-aipref/drafts tags; l-romm/... tag for signals).
VOCAB_DRAFT = "draft-ietf-aipref-vocab-07"
ATTACH_DRAFT = "draft-ietf-aipref-attach-05"
CONTENT_SIGNALS_DRAFT = "draft-romm-aipref-contentsignals-00"

# The three outcomes for a category (vocab section 5).
ALLOWED = "allowed"
DISALLOWED = "disallowed"
UNKNOWN = "unknown"

# Usage category -> the category it is a proper subset of, or None.
# vocab-07 has two categories and no nesting (-06 had a subset rule but no nested category; -07
# removed the rule), so every parent is None; the walk in preference() keeps a future nested
# category to one row here. "ai-input" is Content Signals' own category, outside the IETF
# vocabulary (see SIGNAL_KEYS): a Content-Usage value cannot set it.
CATEGORIES: Mapping[str, str | None] = MappingProxyType(
    {
        "train-ai": None,  # vocab-07 4.1 AI Model Training
        "search": None,  # vocab-07 4.2 Search
        "ai-input": None,  # contentsignals-00 3.2 AI Input
    }
)

# The labels a Content-Usage Dictionary may set (vocab-07 6.1); any other key is ignored.
CONTENT_USAGE_LABELS = frozenset({"train-ai", "search"})

# Content-Usage values (vocab-07 6.2): the Tokens y and n; any other value leaves it unknown.
USAGE_VALUES: Mapping[str, bool] = MappingProxyType({"y": True, "n": False})

# Content-Signal key -> usage category.
# - search -> search: both cover building an index and listing results with links and short
#   excerpts, and both exclude AI-generated summaries; the drafts' wording differs but the
#   signals draft itself offers the vocabulary's definition as a replacement (its Addendum).
# - ai-train -> train-ai: "training or fine-tuning AI models" covers any model, vocab-07's
#   train-ai only models that generate content. The signal's category contains train-ai, and a
#   preference about a whole category holds for each part of it, so yes/no carry over as is.
# - ai-input -> ai-input: no IETF category is close. Inference (RAG, grounding, AI answers) is
#   neither training nor search, which the vocabulary defines to exclude summaries; mapping it
#   onto either would invent a preference, so it stays a category of its own.
SIGNAL_KEYS: Mapping[str, str] = MappingProxyType(
    {"search": "search", "ai-train": "train-ai", "ai-input": "ai-input"}
)

# Content-Signal values: contentsignals.org's "yes" and "no".
SIGNAL_VALUES: Mapping[str, bool] = MappingProxyType({"yes": True, "no": False})

_WHITESPACE = " \t"


# How a message names a Structured Fields value; first match wins (Token is a str, bool an int).
_KINDS: tuple[tuple[type, str], ...] = (
    (list, "an inner list"),
    (bool, "a boolean"),
    (Token, "a token"),
    (DisplayString, "a display string"),
    (str, "a string"),
    (bytes, "a byte sequence"),
    (Date, "a date"),
    (int, "an integer"),
    (Decimal, "a decimal"),
)


def _kind(value: object) -> str:
    """What a Structured Fields value is, for a message."""
    if value is True:
        return "no value (boolean true)"
    if isinstance(value, Token):
        return f"the token {value}"
    return next(name for kind, name in _KINDS if isinstance(value, kind))


def read_content_usage(value: str) -> tuple[dict[str, bool], list[tuple[str, str]]]:
    """A Content-Usage value (vocab-07 6.5): explicit category -> allowed, and notes (a
    ParseWarning code and a message each).

    Parameters are ignored, unknown labels ignored, a value other than the Token ``y`` or ``n``
    leaves its category unknown; a value that is not a Dictionary states nothing. Several HTTP
    field lines are one value joined with ", " (RFC 9651 4.2).
    """
    try:
        members = parse_dictionary(value)
    except StructuredFieldError as error:
        message = f"not a Structured Fields dictionary ({error}); every preference unknown"
        return {}, [("malformed-content-usage", message)]
    if not members:
        return {}, [("no-usage-preference", "no preference stated")]
    explicit: dict[str, bool] = {}
    messages: list[tuple[str, str]] = []
    for label, (member, _parameters) in members.items():
        if label not in CONTENT_USAGE_LABELS:
            messages.append(
                ("unknown-usage-category", f"unknown usage category {label!r}, ignored")
            )
        elif isinstance(member, Token) and member in USAGE_VALUES:
            explicit[label] = USAGE_VALUES[member]
        else:
            message = f"{label}: {_kind(member)}, not y or n; preference unknown"
            messages.append(("malformed-content-usage", message))
    return explicit, messages


def read_content_signal(value: str) -> tuple[dict[str, bool], list[tuple[str, str]]]:
    """A Content-Signal value (``search=yes, ai-train=no``): explicit category -> allowed.

    Tolerant, as robots.txt readers are: spaces and tabs around keys, values and commas, any
    case, empty items. A key given twice with different values is disallowed, the vocabulary's
    rule for conflicting statements (vocab-07 5.1).
    """
    explicit: dict[str, bool] = {}
    messages: list[tuple[str, str]] = []
    for item in value.split(","):
        item = item.strip(_WHITESPACE)
        if not item:
            continue
        key, equals, answer = (part.strip(_WHITESPACE).lower() for part in item.partition("="))
        category = SIGNAL_KEYS.get(key)
        allowed = SIGNAL_VALUES.get(answer)
        if category is None:
            messages.append(("unknown-content-signal", f"unknown content signal {key!r}, ignored"))
        elif not equals or allowed is None:
            message = f"{key}: {answer!r} is not yes or no; preference unknown"
            messages.append(("unknown-content-signal", message))
        elif explicit.get(category, allowed) != allowed:
            message = f"{key} given both yes and no; disallowed"
            messages.append(("conflicting-content-signal", message))
            explicit[category] = False
        else:
            explicit[category] = allowed
    if not explicit and not messages:
        messages.append(("no-usage-preference", "no preference stated"))
    return explicit, messages


def preference(explicit: Mapping[str, bool], category: str) -> str:
    """``ALLOWED``, ``DISALLOWED`` or ``UNKNOWN`` for *category* (vocab-07 5).

    An explicit preference is the outcome; a category without one takes its parent's, if it has
    a parent (none has in vocab-07); otherwise it is unknown.
    """
    if category not in CATEGORIES:  # the caller's mistake, not the content's
        message = f"unknown usage category {category!r}"
        if category in SIGNAL_KEYS:  # a Content-Signal key where its category was meant
            message += f"; Content-Signal's {category} is {SIGNAL_KEYS[category]!r}"
        raise ValueError(message)
    current: str | None = category
    while current is not None:
        if current in explicit:
            return ALLOWED if explicit[current] else DISALLOWED
        current = CATEGORIES[current]
    return UNKNOWN


def combine(*statements: Mapping[str, bool]) -> dict[str, bool]:
    """Several statements about one asset as one (vocab-07 5.1), per category: disallowed if any
    statement disallows it, else allowed if any allows it, else unknown (absent)."""
    result: dict[str, bool] = {}
    for category in CATEGORIES:
        outcome = strongest(preference(statement, category) for statement in statements)
        if outcome != UNKNOWN:
            result[category] = outcome == ALLOWED
    return result


def strongest(outcomes: Iterable[str]) -> str:
    """The outcome several statements about one category combine to (vocab-07 5.1):
    ``DISALLOWED`` if any is, else ``ALLOWED`` if any is, else ``UNKNOWN``."""
    found = set(outcomes)
    return next((outcome for outcome in (DISALLOWED, ALLOWED) if outcome in found), UNKNOWN)


def combined(decisions: Sequence[UsageDecision]) -> UsageDecision | None:
    """The first of *decisions* (in the caller's order) whose preference is what they combine to
    (``strongest``); None if there are none."""
    outcome = strongest(decision.preference for decision in decisions)
    return next((decision for decision in decisions if decision.preference == outcome), None)


def split_content_usage_rule(value: str) -> tuple[str | None, str]:
    """A robots.txt Content-Usage rule value as ``(path or None, statement)`` (attach-05 3.2).

    *value* is what follows the colon; a comment ("#" on) is cut if still there. A value that
    starts with "/" has a path, which ends at the first space or tab; any other is all statement.
    """
    value = value.partition("#")[0].strip(_WHITESPACE)
    if value[:1] != "/":
        return None, value
    path, blank, statement = value.partition(" ")
    if "\t" in path:  # a tab before the first space
        path, _, rest = path.partition("\t")
        statement = rest + blank + statement
    return path, statement.strip(_WHITESPACE)


class UsageDecision(NamedTuple):
    """What a site says about one usage of a URL, and where it said it: ``preference`` is
    ``"allowed"``, ``"disallowed"`` or ``"unknown"``; ``line`` and ``statement`` name the
    robots.txt line (``Content-Usage: /a/ train-ai=n``) or the header that decided, if any."""

    preference: str
    line: int | None
    statement: str | None
    reason: str


def usage_category(name: object) -> str:
    """The vocabulary's category for *name*: a category (``"train-ai"``, ``"search"``,
    ``"ai-input"``) or a Content-Signal key naming one (``"ai-train"``), in any case.
    TypeError for a non-str, ValueError for an unknown name."""
    if not isinstance(name, str):
        raise TypeError(f"a usage category must be a str, not {type(name).__name__}")
    key = name.strip().lower()
    if key in CATEGORIES:
        return key
    if key in SIGNAL_KEYS:
        return SIGNAL_KEYS[key]
    known = ", ".join(repr(category) for category in CATEGORIES)
    raise ValueError(
        f"unknown usage category {name!r}: use one of {known} "
        f"(or a Content-Signal key: {', '.join(map(repr, SIGNAL_KEYS))})"
    )


def header_usage(value: str, category: str) -> UsageDecision:
    """What a ``Content-Usage`` response header says about *category* (draft-ietf-aipref-attach
    section 2); several field lines are one value joined with ", ". Never raises on the value."""
    category = usage_category(category)
    explicit, messages = read_content_usage(value)
    outcome = preference(explicit, category)
    statement = f"Content-Usage: {value}"
    if outcome == UNKNOWN:
        reason = "; ".join(m for _, m in messages) or f"the header does not name {category}"
        return UsageDecision(UNKNOWN, None, statement, reason)
    return UsageDecision(outcome, None, statement, f"{category} {outcome} by the header")
