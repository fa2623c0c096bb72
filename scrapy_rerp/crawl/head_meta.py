"""The ``<meta name=... content=...>`` tags of a page's head, read with Scrapy's selectors.

The crawl's reader of robots meta tags (the engine's ``robots_meta_tags`` is the one the command
line uses, with ``html.parser``). It parses the head only, and only when it can matter:

* the head is cut from the page's first ``MAX_HTML_BYTES`` (the engine's bound) at the first
  ``<body`` that is markup (not inside a comment, ``<script>``, ``<style>`` or ``<title>``).
  ``</head>`` does not end it: HTML puts a ``<meta>`` found between ``</head>`` and ``<body>``
  back in the head;
* a head without ``<meta`` is not parsed, and neither is one that does not mention any of the
  names asked for (``robots`` and the crawler's product tokens: the only tags
  ``page_directives`` reads);
* what is left is parsed by lxml through a :class:`scrapy.Selector`, and the tags are those of
  the ``<head>`` element (outside ``<template>``) and those lxml keeps between the head and the
  body. lxml ends the head where the HTML parsing algorithm does: at a start tag the head cannot
  hold, or at text.

Bytes are decoded as the engine's reader decodes them (a BOM, else the encoding given, else a
``<meta charset>`` among the first 1024 bytes, else UTF-8; undecodable bytes become U+FFFD).
Where the two readers differ, ``tests/support/html_meta_cases.py`` says so and why. Nothing here
raises on content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from lxml import etree
from scrapy.selector import Selector

from scrapy_rerp.engine import MAX_HTML_BYTES, html_encoding

__all__ = ["head_meta_tags", "head_of", "head_text"]

# The first <body tag outside the constructs whose contents are not markup (comments, scripts,
# styles, titles), so that a "<body" in them does not end the head. Each construct is matched
# whole, from its opener to the first closer after it; one never closed holds the rest of the
# page (an "unclosed_" group matches). One search per construct, each byte read once.
_HEAD_PARTS = (
    r"<(?:!--(?:.*?-->|(?P<unclosed_comment>))"
    r"|script\b(?:.*?</script|(?P<unclosed_script>))"
    r"|style\b(?:.*?</style|(?P<unclosed_style>))"
    r"|title\b(?:.*?</title|(?P<unclosed_title>))"
    r"|(?P<body>body)[\s/>])"
)
_HEAD_PARTS_TEXT = re.compile(_HEAD_PARTS, re.IGNORECASE | re.DOTALL)
_HEAD_PARTS_BYTES = re.compile(_HEAD_PARTS.encode(), re.IGNORECASE | re.DOTALL)
# The head's meta tags: those of <head> (not a template's content), and those lxml leaves
# between </head> and <body> as children of <html>.
_HEAD_META = "/html/head//meta[@name][not(ancestor::template)] | /html/meta[@name]"
_SPACE = " \t\n\r\f"


def _head_end(data: str | bytes, end: int | None = None) -> int:
    """Where the head of *data* (up to *end*) ends: its first ``<body`` tag outside comments,
    scripts, styles and titles, or *end*."""
    if end is None:
        end = len(data)
    parts: re.Pattern[Any] = _HEAD_PARTS_TEXT if isinstance(data, str) else _HEAD_PARTS_BYTES
    found = parts.search(data, 0, end)
    while found is not None and found.lastgroup is None:  # a closed comment, script, ...
        found = parts.search(data, found.end(), end)
    if found is None or found.lastgroup != "body":  # no <body, or inside an unclosed one
        return end
    return found.start()


@lru_cache(maxsize=64)
def _ascii_compatible(encoding: str) -> bool:
    """Whether markup keeps its ASCII bytes in *encoding* (not so in UTF-16 or UTF-32)."""
    try:
        return "<body".encode(encoding) == b"<body"
    except (LookupError, UnicodeError):
        return False


@lru_cache(maxsize=64)
def _lowered(names: tuple[str, ...]) -> tuple[str, ...]:
    """*names* lower-cased, empty ones left out (a crawl asks with the same few every time)."""
    return tuple(name.lower() for name in names if name)


def head_of(html: bytes | str, encoding: str | None = None) -> str | None:
    """The text of *html*'s head (up to its first ``<body``), or None when it holds no
    ``<meta``."""
    head = head_text(html, encoding)
    return head if "<meta" in head.lower() else None


def head_text(html: bytes | str, encoding: str | None = None) -> str:
    """The text of *html*'s head (up to its first ``<body``)."""
    if isinstance(html, str):
        text = html[:MAX_HTML_BYTES].removeprefix("\ufeff")
        return text[: _head_end(text)]
    if not isinstance(html, bytes):  # a bytearray or memoryview
        html = bytes(html[:MAX_HTML_BYTES])
    # Searched up to the bound rather than sliced to it: a copy of a big page's first bytes
    # costs more than finding its head.
    end = min(len(html), MAX_HTML_BYTES)
    codec = html_encoding(html, encoding)
    if _ascii_compatible(codec):
        return html[: _head_end(html, end)].decode(codec, "replace").removeprefix("\ufeff")
    text = html[:end].decode(codec, "replace").removeprefix("\ufeff")
    return text[: _head_end(text)]


def head_meta_tags(
    html: bytes | str, encoding: str | None = None, mentioning: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """The ``(name, content)`` pairs of the ``<meta>`` tags in *html*'s head, in page order:
    names lower-cased and stripped, contents as written (character references decoded), tags
    without a name or a content left out, as ``robots_meta_tags`` gives them.

    With *mentioning* (names, e.g. ``robots`` and the crawler's product tokens), a head in which
    none of them appears, in any case, is not parsed: its answer is ``[]``.
    """
    head = head_text(html, encoding)
    # str.lower and "in" run in C: a case-insensitive regular expression of the names costs
    # about fifteen times as much on a head of a few KiB. One lower-cased copy serves "<meta"
    # too: its two regular-expression searches cost the small head of most pages about 5,000
    # instructions (callgrind).
    lowered = head.lower()
    if "<meta" not in lowered:
        return []
    names = _lowered(tuple(mentioning))
    if names and not any(name in lowered for name in names):
        return []
    try:
        tags = Selector(text=head, type="html").xpath(_HEAD_META)
    except (ValueError, etree.LxmlError):
        return []
    pairs = ((tag.attrib.get("name"), tag.attrib.get("content")) for tag in tags)
    return [
        (name.strip(_SPACE).lower(), content)
        for name, content in pairs
        if name and content is not None
    ]
