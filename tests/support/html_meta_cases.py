"""Meta-tag extraction cases shared by every reader of a page's robots meta tags.

A reader takes a page (bytes or str, and an optional encoding) and returns the ``(name,
content)`` pairs of the ``<meta>`` tags in its head, names lower-cased and stripped, contents as
written with character references decoded, tags without a name or a content attribute left out.
The head ends at ``<body>`` or at the first thing a body holds (a start tag the head cannot
hold, or text other than whitespace outside ``<title>``/``<script>``/``<style>``), as in the
HTML parsing algorithm; ``</head>`` does not end it.

``MetaReaderContract`` runs every case against a reader: subclass it as ``Test...``, name the
reader and define ``read``. The engine's ``robots_meta_tags`` (``"engine"``, html.parser) runs it
in tests/engine/test_html_meta.py; the crawl's reader on Scrapy's selectors (``"selector"``,
``scrapy_rerp.crawl.head_meta``) in tests/crawl/test_head_meta.py.

Where a reader answers otherwise, the case says so with a ``Difference``: the reader, its answer,
and why. A difference is a documented limit of that reader, never a way to let a test pass: each
one states what the reader's parser does and why it does not change what a crawl obeys.
"""

from __future__ import annotations

import codecs
from typing import NamedTuple

import pytest

Pairs = list[tuple[str, str]]

#: The readers that run the contract.
READERS = ("engine", "selector")


class Difference(NamedTuple):
    """What one reader answers instead of a case's ``expected``, and why."""

    reader: str
    expected: Pairs
    why: str


class MetaCase(NamedTuple):
    id: str
    html: bytes | str
    expected: Pairs
    encoding: str | None = None
    differs: tuple[Difference, ...] = ()

    def expected_of(self, reader: str) -> Pairs:
        """What *reader* answers: its ``Difference``, or what every other reader answers."""
        for difference in self.differs:
            if difference.reader == reader:
                return difference.expected
        return self.expected


ROBOTS_NOINDEX = [("robots", "noindex")]
_BIG_BODY = "<p>" + "lorem ipsum dolor sit amet " * 80_000 + "</p>"  # about 2 MiB

CASES: list[MetaCase] = [
    # -- where the tags are ------------------------------------------------------------------------
    MetaCase(
        "in-head",
        '<!DOCTYPE html><html><head><meta name="robots" content="noindex, nofollow"></head>'
        "<body>text</body></html>",
        [("robots", "noindex, nofollow")],
    ),
    MetaCase(
        "several-in-order",
        '<html><head><meta charset="utf-8"><meta name="description" content="A page">'
        '<meta name="robots" content="noindex"><meta name="googlebot" content="nosnippet">'
        "</head><body></body></html>",
        [("description", "A page"), ("robots", "noindex"), ("googlebot", "nosnippet")],
    ),
    MetaCase(
        "in-body-ignored",
        '<html><head><title>t</title></head><body><meta name="robots" content="noindex">'
        "</body></html>",
        [],
    ),
    MetaCase(
        "head-then-body",
        '<html><head><meta name="robots" content="noindex"></head>'
        '<body><meta name="robots" content="nofollow"></body></html>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "between-head-and-body",
        '<html><head><title>t</title></head>\n<meta name="robots" content="noindex">\n<body>'
        "</body></html>",
        ROBOTS_NOINDEX,
    ),
    MetaCase("no-head-tag", '<meta name="robots" content="noindex"><p>text</p>', ROBOTS_NOINDEX),
    MetaCase(
        "text-starts-the-body",
        '<html><head><title>t</title></head>some text<meta name="robots" content="noindex">',
        [],
    ),
    MetaCase("body-tag-first", '<p>hello</p><meta name="robots" content="noindex">', []),
    MetaCase(
        "div-in-head-ends-it",
        '<html><head><div>x</div><meta name="robots" content="noindex"></head></html>',
        [],
    ),
    MetaCase(
        "img-in-head-ends-it",
        '<head><img src="a.png"><meta name="robots" content="noindex"></head>',
        [],
    ),
    MetaCase(
        "title-text-is-not-body",
        '<head><title>Robots and more</title><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "whitespace-is-not-body",
        '<html>\n  <head>\n\t<meta name="robots" content="noindex">\n  </head>\n</html>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "noscript-in-head",
        '<head><noscript><meta name="robots" content="noindex"></noscript></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "template-content-ignored",
        '<head><template><meta name="robots" content="noindex"><div>x</div></template>'
        '<meta name="googlebot" content="nofollow"></head>',
        [("googlebot", "nofollow")],
    ),
    MetaCase(
        "frameset-ends-head",
        '<html><head></head><frameset><meta name="robots" content="noindex"></frameset></html>',
        [],
    ),
    # -- spelling of the tag -----------------------------------------------------------------------
    MetaCase(
        "uppercase", '<HEAD><META NAME="ROBOTS" CONTENT="NOINDEX"></HEAD>', [("robots", "NOINDEX")]
    ),
    MetaCase(
        "mixed-case-and-spaces",
        '<head><MeTa NaMe=" GoogleBot " CoNtEnT="noindex"></head>',
        [("googlebot", "noindex")],
    ),
    MetaCase(
        "unquoted-attributes",
        "<head><meta name=robots content=noindex,nofollow></head>",
        [("robots", "noindex,nofollow")],
    ),
    MetaCase(
        "single-quotes",
        "<head><meta name='robots' content='noindex, nofollow'></head>",
        [("robots", "noindex, nofollow")],
    ),
    MetaCase(
        "spaces-around-equals",
        '<head><meta name = "robots" content = "noindex"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "content-before-name",
        '<head><meta content="noindex" name="robots"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "self-closing", '<head><meta name="robots" content="noindex" /></head>', ROBOTS_NOINDEX
    ),
    MetaCase(
        "newlines-in-tag",
        '<head><meta\n  name="robots"\n\tcontent="noindex"\n></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "character-references",
        '<head><meta name="robots" content="noindex&#44; nofollow &amp; more"></head>',
        [("robots", "noindex, nofollow & more")],
    ),
    MetaCase(
        "first-of-repeated-attributes",
        '<head><meta name="robots" name="googlebot" content="noindex" content="all"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "similar-attribute-names",
        '<head><meta some-name="robots" some-content="noindex"><meta foo="bar" baz></head>',
        [],
    ),
    # -- tags left out -----------------------------------------------------------------------------
    MetaCase("no-content", '<head><meta name="robots"></head>', []),
    MetaCase(
        "content-without-value",
        '<head><meta name="robots" content></head>',
        [],
        differs=(
            Difference(
                "selector",
                [("robots", "")],
                "lxml gives an attribute written without a value the empty string (as HTML "
                "does); an empty content states no rule, so page_directives reads the same",
            ),
        ),
    ),
    MetaCase("empty-content", '<head><meta name="robots" content=""></head>', [("robots", "")]),
    MetaCase("no-name", '<head><meta content="noindex"></head>', []),
    MetaCase("empty-name", '<head><meta name="" content="noindex"></head>', []),
    MetaCase(
        "property-and-http-equiv",
        '<head><meta property="og:title" content="x">'
        '<meta http-equiv="X-Robots-Tag" content="noindex"></head>',
        [],
    ),
    # -- what is not markup ------------------------------------------------------------------------
    MetaCase(
        "in-a-comment",
        '<head><!-- <meta name="robots" content="noindex"> --><meta name="googlebot" '
        'content="nofollow"></head>',
        [("googlebot", "nofollow")],
    ),
    MetaCase(
        "in-a-script",
        '<head><script>document.write(\'<meta name="robots" content="noindex">\');</script>'
        '<meta name="googlebot" content="nofollow"></head>',
        [("googlebot", "nofollow")],
    ),
    MetaCase(
        "in-a-style",
        '<head><style>/* <meta name="robots" content="noindex"> */</style></head>',
        [],
    ),
    MetaCase(
        "body-in-a-script",
        '<head><script>document.write("<body>");</script><meta name="robots" content="noindex">'
        "</head><body>x</body>",
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "body-in-a-comment",
        '<head><!-- no <body> here --><meta name="robots" content="noindex"></head><body>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "conditional-comment",
        '<head><!--[if IE]><meta name="robots" content="noindex"><![endif]-->'
        '<meta name="googlebot" content="nofollow"></head>',
        [("googlebot", "nofollow")],
    ),
    # -- broken pages ------------------------------------------------------------------------------
    MetaCase(
        "truncated-in-a-tag",
        '<html><head><meta name="robots" content="noindex"><meta name="googlebot" cont',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "truncated-in-a-comment",
        '<html><head><meta name="robots" content="noindex"><!-- <meta name="googlebot" '
        'content="x">',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "unclosed-quote",
        '<head><meta name="robots" content="noindex"><meta name="googlebot content=nofollow>'
        "</head><body>x</body>",
        ROBOTS_NOINDEX,
    ),
    MetaCase("empty-page", "", []),
    MetaCase("only-whitespace", "  \n\t ", []),
    MetaCase("not-html", "just some text, noindex", []),
    # A stray "<" is text, as a NUL is: either starts the body (HTML's "in head" mode).
    MetaCase(
        "stray-angle-bracket-is-text",
        '<head><<meta name="robots" content="noindex">></head>',
        [],
    ),
    # -- bytes and encodings -----------------------------------------------------------------------
    MetaCase(
        "utf8-bytes",
        '<head><meta name="robots" content="noindex"><title>Café</title></head>'.encode(),
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "utf8-bom",
        codecs.BOM_UTF8 + b'<head><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "utf16-bom",
        codecs.BOM_UTF16_LE
        + '<head><meta name="robots" content="noindex"></head>'.encode("utf-16-le"),
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "invalid-utf8",
        b'<head><title>\xff\xfe\xc3(</title><meta name="robots" content="noindex\xe9"></head>',
        [("robots", "noindex\ufffd")],
    ),
    MetaCase(
        "declared-charset",
        b'<head><meta charset="windows-1252"><meta name="author" content="Andr\xe9">'
        b'<meta name="robots" content="noindex"></head>',
        [("author", "André"), ("robots", "noindex")],
    ),
    MetaCase(
        "given-encoding",
        '<head><meta name="author" content="Grüße"><meta name="robots" content="noindex">'
        "</head>".encode("latin-1"),
        [("author", "Grüße"), ("robots", "noindex")],
        "iso-8859-1",
    ),
    MetaCase(
        "unknown-encoding-name",
        b'<head><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
        "x-no-such-encoding",
    ),
    MetaCase(
        "given-encoding-no-text-codec",
        b'<head><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
        "base64",  # Python knows the name, but as a bytes-to-bytes codec: read as UTF-8
    ),
    MetaCase(
        "declared-charset-no-text-codec",
        b'<head><meta charset="rot13"><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
    ),
    *(
        MetaCase(
            f"declared-charset-{name}",
            f'<head><meta charset="{name}"><meta name="robots" content="noindex"></head>'.encode(),
            ROBOTS_NOINDEX,
        )
        # The hostname codecs: punycode turns the text into nonsense, idna refuses replacement
        # characters, undefined refuses every byte; no page is written in them.
        for name in ("punycode", "idna", "undefined")
    ),
    MetaCase(
        "given-encoding-idna",
        b'<head><meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
        "idna",
    ),
    MetaCase(
        "nul-bytes",
        b'<head><meta name="robots" content="noindex">\x00<meta name="googlebot" content="x">',
        ROBOTS_NOINDEX,
        differs=(
            Difference(
                "selector",
                [("robots", "noindex"), ("googlebot", "x")],
                "parsel removes NUL characters before lxml parses a page, so a NUL does not "
                "end the head; a NUL between tags is malformed HTML no server sends on purpose",
            ),
        ),
    ),
    # -- size --------------------------------------------------------------------------------------
    MetaCase(
        "huge-body",
        '<html><head><meta name="robots" content="noindex"></head><body>' + _BIG_BODY + "</body>",
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "long-head",
        "<html><head>"
        + '<link rel="preload" href="/a.css">' * 5_000
        + '<meta name="robots" content="noindex"></head>',
        ROBOTS_NOINDEX,
    ),
    MetaCase(
        "many-meta-tags",
        "<head>"
        + '<meta name="keywords" content="a, b">' * 2_000
        + '<meta name="robots" content="noindex"></head>',
        [("keywords", "a, b")] * 2_000 + ROBOTS_NOINDEX,
    ),
]


class MetaReaderContract:
    """Every case of CASES against ``read``. Subclass as ``Test...``, set ``reader`` (one of
    READERS) and define ``read``."""

    reader = ""

    def read(self, html: bytes | str, encoding: str | None) -> Pairs:
        raise NotImplementedError

    @pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
    def test_case(self, case: MetaCase) -> None:
        assert self.reader in READERS
        assert self.read(case.html, case.encoding) == case.expected_of(self.reader)
