"""``<meta name=... content=...>`` tags of an HTML page's head, and its RSL licence links
(``<link rel="license" type="application/rsl+xml" href=...>``), with the standard library's
``html.parser``.

Only the head counts (draft-illyes-repext-03, Security Considerations: a page's body may hold
what its visitors wrote). The head ends, as in the HTML parsing algorithm, at ``<body>`` or at
the first thing that belongs to a body: a start tag that the head cannot hold (``<div>``,
``<p>``, ``<img>``...) or text other than whitespace outside ``<title>``, ``<script>`` and
``<style>``. ``</head>`` does not end it: the HTML algorithm puts a ``<meta>`` found between
``</head>`` and ``<body>`` back in the head. ``<meta>`` inside ``<noscript>`` counts (a crawler
reads a page with scripting off); inside ``<template>`` it does not (a template's content is
not part of the document).

Input is bounded: at most ``MAX_HTML_BYTES`` of the page are read, and the parser is fed in
pieces so that it stops soon after the head ends. Nothing here raises on content: any bytes
decode (with replacement characters), and what the parser read before anything it could not
handle is kept.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

from ._rsl import MAX_LICENSE_LINKS, _add_link, _is_rsl_link
from ._text_codecs import body_codec

__all__ = ["MAX_HTML_BYTES", "license_link_tags", "robots_meta_tags"]

#: How much of a page is read for its head (heads are a few KiB; the parser stops at the body).
MAX_HTML_BYTES = 512 * 1024
#: What the parser is fed first; each further piece is twice the last, so that a construct
#: left open across pieces (html.parser reads it again from its start at each feed) costs at
#: most about twice one reading, while a page is still left soon after its head ends.
_FIRST_PIECE = 16 * 1024
#: Where a ``<meta charset>`` is looked for when no encoding is given (HTML's prescan: 1024).
_PRESCAN_BYTES = 1024

# The elements the HTML parsing algorithm keeps in the head ("in head" and "after head").
_HEAD_ELEMENTS = frozenset(
    {
        "html",
        "head",
        "base",
        "basefont",
        "bgsound",
        "link",
        "meta",
        "title",
        "noscript",
        "noframes",
        "style",
        "script",
        "template",
    }
)
# Elements whose text is not body content.
_TEXT_ELEMENTS = frozenset({"title", "script", "style", "noframes"})
_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]{1,40})""", re.I)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)


class _HeadMeta(HTMLParser):
    """Collects ``(name, content)`` of the head's meta tags, and its RSL ``<link>`` tags and
    first ``<base href>``, until the head ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self.licence_hrefs: list[str] = []
        self.base: str | None = None
        self.ended = False
        self._text_element: str | None = None
        self._template_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.ended:
            return
        if tag == "template":
            self._template_depth += 1
        elif self._template_depth:
            return
        elif tag not in _HEAD_ELEMENTS:
            self.ended = True
        elif tag == "meta":
            self._meta(attrs)
        elif tag in ("link", "base"):
            self._link(tag, attrs)
        elif tag in _TEXT_ELEMENTS:
            self._text_element = tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<meta ... />``: no content follows, so no text element or template is entered.
        if tag != "template" and tag not in _TEXT_ELEMENTS:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "template" and self._template_depth:
            self._template_depth -= 1
        elif tag == self._text_element:
            self._text_element = None

    def handle_data(self, data: str) -> None:
        if self.ended or self._text_element or self._template_depth:
            return
        if data.strip(" \t\n\r\f"):
            self.ended = True

    def _meta(self, attrs: list[tuple[str, str | None]]) -> None:
        name = content = None
        for key, value in attrs:  # the first of a repeated attribute counts, as in HTML
            if key == "name" and name is None:
                name = value or ""
            elif key == "content" and content is None:
                content = value
        if name and content is not None:
            self.found.append((name.strip(" \t\n\r\f").lower(), content))

    def _link(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found: dict[str, str] = {}
        for key, value in attrs:  # the first of a repeated attribute counts, as in HTML
            if key in ("rel", "type", "href") and key not in found:
                found[key] = value or ""
        href = found.get("href")
        if href is None:
            return
        if tag == "base":
            if self.base is None:
                self.base = href
        elif _is_rsl_link(found.get("rel", ""), found.get("type", "")):
            if len(self.licence_hrefs) < MAX_LICENSE_LINKS:
                self.licence_hrefs.append(href)


def _encoding_of(html: bytes, encoding: str | None) -> str:
    """The encoding to decode *html* with: a BOM's, else *encoding* if it names a text encoding
    a page can be written in (``body_codec``), else such a ``<meta charset>`` near the top,
    else UTF-8."""
    if html.startswith(_BOM_PREFIXES):  # one test for the many pages without a BOM
        return next(name for bom, name in _BOMS if html.startswith(bom))
    return body_codec(encoding) or body_codec(_declared_charset(html)) or "utf-8"


def _declared_charset(html: bytes) -> str | None:
    match = _CHARSET.search(html, 0, _PRESCAN_BYTES)
    return match.group(1).decode("ascii") if match else None


def robots_meta_tags(html: bytes | str, encoding: str | None = None) -> list[tuple[str, str]]:
    """The ``(name, content)`` pairs of the ``<meta>`` tags in *html*'s head, in page order.

    Names are lower-cased and stripped; contents are as written, character references decoded.
    A tag without a name or without a content attribute is left out. Pass every pair to
    ``page_directives``, which reads those named ``robots`` or for the crawler, and to
    ``tdm_reservation``, which reads ``tdm-reservation`` and ``tdm-policy`` (TDMRep).

    *html* is bytes (decoded with a BOM's encoding, else *encoding*, else a ``<meta charset>``
    among its first 1024 bytes, else UTF-8; undecodable bytes become U+FFFD) or str. Only the
    first ``MAX_HTML_BYTES`` are read. Raises TypeError for anything else; never raises on
    content.
    """
    return _read_head(html, encoding).found


def license_link_tags(html: bytes | str, url: str, encoding: str | None = None) -> list[str]:
    """The RSL files *html*'s head links to (``<link rel="license" type="application/rsl+xml"
    href=...>``, RSL's guide, "Adding RSL to web pages"), resolved against the head's first
    ``<base href>`` and the page's *url*, in page order, each once, at most
    ``MAX_LICENSE_LINKS``. A licence embedded in a ``<script>`` is not read. *html* and
    *encoding* as for ``robots_meta_tags``; never raises on content."""
    head = _read_head(html, encoding)
    base = url
    if head.base is not None:
        try:
            base = urljoin(url, head.base.strip())
        except ValueError:
            pass
    found: list[str] = []
    for href in head.licence_hrefs:
        _add_link(found, href, base)
    return found


def _read_head(html: bytes | str, encoding: str | None) -> _HeadMeta:
    """*html*'s head read (bounded, in pieces, until it ends)."""
    if isinstance(html, (bytes, bytearray, memoryview)):
        raw = bytes(html[:MAX_HTML_BYTES])
        if encoding is not None and not isinstance(encoding, str):
            raise TypeError(f"encoding must be a str or None, not {type(encoding).__name__}")
        text = raw.decode(_encoding_of(raw, encoding), "replace")
    elif isinstance(html, str):
        text = html[:MAX_HTML_BYTES]
    else:
        raise TypeError(f"html must be bytes or str, not {type(html).__name__}")
    text = text.removeprefix("\ufeff")
    parser = _HeadMeta()
    try:
        start, piece = 0, _FIRST_PIECE
        while start < len(text) and not parser.ended:
            parser.feed(text[start : start + piece])
            start, piece = start + piece, piece * 2
        if not parser.ended:
            parser.close()
    except (AssertionError, AttributeError, ValueError, IndexError):
        # html.parser's markup-declaration code can still raise on some malformed "<!"
        # constructs; what was read before them stands.
        pass
    return parser
