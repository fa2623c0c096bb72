"""User agents: product tokens on both sides of the match."""

from __future__ import annotations

import re

from ._shared import SharedTable, str_bytes

_LEADING_TOKEN = re.compile(r"[A-Za-z_-]*")
# A product in a User-Agent header: ``name/version`` (RFC 9110), or the name that follows
# ``compatible;`` in a comment, which is how many crawlers announce themselves.
# Names are taken whole, digits included, and compared whole, as a bare token is (google/
# robotstxt): ``MyBot2/1.0`` is ``mybot2``, which no group can name (RFC 9309 tokens are
# ``[A-Za-z_-]+``; a ``User-agent: MyBot2`` line names ``mybot``).
_NAME = r"[A-Za-z_][A-Za-z0-9_.+-]*"
_PRODUCT = re.compile(rf"(?:^|[\s(;,])({_NAME})/")
_COMPATIBLE = re.compile(rf"compatible;\s*({_NAME})", re.IGNORECASE)
_FIRST_NAME = re.compile(_NAME)
_HEADER_MARKS = frozenset("/(;")

#: Browser products found in crawler headers that never name the crawler itself. They are only
#: used when a header names nothing else.
GENERIC_PRODUCTS = frozenset(
    {
        "mozilla",
        "applewebkit",
        "khtml",
        "gecko",
        "chrome",
        "chromium",
        "safari",
        "firefox",
        "version",
        "mobile",
        "edg",
        "edge",
        "opera",
        "opr",
        "trident",
        "msie",
        "like",
        "compatible",
    }
)


def group_token(value: str) -> str:
    """The product token of a ``User-agent:`` value, lower-cased, as google/robotstxt cuts it:
    the leading run of ``[A-Za-z_-]`` (``Googlebot/2.1`` -> ``googlebot``, ``bot1`` -> ``bot``).
    """
    match = _LEADING_TOKEN.match(value)
    return match.group().lower() if match else ""


def unicode_name(value: str) -> str | None:
    """The whole ``User-agent:`` value, lower-cased, when it is one word with letters outside
    ASCII (``UnicödeBöt``), else None.

    RFC 9309's product tokens are ``[A-Za-z_-]+``, so google/robotstxt reads ``UnicödeBöt`` as
    ``unic``; a crawler that calls itself ``UnicödeBöt`` and a site that names it so mean each
    other, as Protego (Scrapy's default) reads them: such a group also applies to a caller whose
    whole name is the same word, in any case. Every other value keeps the RFC's token rules.
    """
    name = value.strip()
    if name.isascii() or not name.replace("-", "").replace("_", "").isalnum():
        return None
    return name.lower()


def is_global_value(value: str) -> bool:
    """``*``, or ``*`` followed by whitespace and anything, names every crawler."""
    return value[:1] == "*" and (len(value) == 1 or value[1].isspace())


def caller_tokens(user_agent: str) -> tuple[str, ...]:
    """The lower-cased product tokens a caller's user agent stands for, best first.

    A bare token (``MyBot``) is compared whole, as google/robotstxt does, so ``Foo Bar`` matches
    no group. A User-Agent header (it has ``/``, ``(`` or ``;``) yields its products:
    ``Mozilla/5.0 (compatible; MyBot/1.0)`` gives ``("mybot",)``.
    """
    tokens = _CALLER_TOKENS.recent.get(user_agent) or _CALLER_TOKENS.get(user_agent)
    if tokens is None:
        tokens = _read_caller_tokens(user_agent)
        _CALLER_TOKENS.put(user_agent, tokens, _tokens_bytes(user_agent, tokens))
    return tokens


def _tokens_bytes(user_agent: str, tokens: tuple[str, ...]) -> int:
    return str_bytes(user_agent) + 56 + sum(8 + str_bytes(token) for token in tokens)


# A crawl asks with a few user agents, for every file: each is read once.
_CALLER_TOKENS: SharedTable[str, tuple[str, ...]] = SharedTable(0.05)


def _read_caller_tokens(user_agent: str) -> tuple[str, ...]:
    user_agent = user_agent.strip()
    if not user_agent:
        return ()
    if _HEADER_MARKS.isdisjoint(user_agent):
        return (user_agent.lower(),)
    first = _FIRST_NAME.match(user_agent)
    candidates = [first.group()] if first and first.group() else []
    candidates += _PRODUCT.findall(user_agent)
    candidates += _COMPATIBLE.findall(user_agent)
    found = list(dict.fromkeys(token.lower() for token in candidates))  # in order, each once
    specific = [t for t in found if t not in GENERIC_PRODUCTS]
    return tuple(specific or found)
