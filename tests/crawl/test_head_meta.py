"""The crawl's reader of robots meta tags (Scrapy's selectors on the head only): the shared
extraction cases (tests/support/html_meta_cases.py), where it stops reading, and what it skips."""

from __future__ import annotations

import codecs
import random

import pytest

from scrapy_rerp.crawl.head_meta import head_meta_tags, head_of
from scrapy_rerp.engine import MAX_HTML_BYTES
from tests.support.html_meta_cases import CASES, READERS, MetaReaderContract, Pairs

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)


class TestHeadMetaTags(MetaReaderContract):
    reader = "selector"

    def read(self, html: bytes | str, encoding: str | None) -> Pairs:
        return head_meta_tags(html, encoding)


def test_every_difference_names_a_reader_says_why_and_differs() -> None:
    assert any(case.differs for case in CASES)
    for case in CASES:
        readers = [difference.reader for difference in case.differs]
        assert len(readers) == len(set(readers)), case.id
        for difference in case.differs:
            assert difference.reader in READERS, case.id
            assert difference.expected != case.expected, case.id
            assert len(difference.why) > 40, case.id


HEAD = '<html><head><title>t</title><meta name="robots" content="noindex"></head>'
META = "<meta name=a content=b>"


@pytest.mark.parametrize(
    ("page", "head"),
    [
        (HEAD + "<body><p>x</p></body>", HEAD),
        (HEAD + "<BODY class=a>", HEAD),
        (HEAD + "<body/>", HEAD),
        # "<body" in a script, a comment, a style or a title is no tag.
        (f'<head><script>s = "<body>"</script>{META}<body>', None),
        (f"<head><!-- <body> -->{META}<body>", None),
        (f"<head><style>/*<body>*/</style><title><body></title>{META}<body>", None),
        # <bodyx> is no body tag.
        (f"<head><bodyx>{META}<body>", None),
        # A script never closed holds the rest of the page.
        (f"<head>{META}<script>x<body>y", f"<head>{META}<script>x<body>y"),
    ],
)
def test_the_head_ends_at_the_first_body_tag(page: str, head: str | None) -> None:
    expected = head if head is not None else page.removesuffix("<body>")
    assert head_of(page) == expected
    assert head_of(page.encode()) == expected
    assert head_of(page.encode("utf-16")) == expected  # found in the text, not the bytes


def test_a_head_without_meta_is_not_read() -> None:
    assert head_of("<html><head><title>t</title></head><body>" + "<meta>" * 3) is None
    assert head_of(b"<html><head><link rel=x></head><body>") is None
    assert head_of(b"") is None


def test_only_the_first_bytes_are_read() -> None:
    filler = "<script>" + "x" * MAX_HTML_BYTES + "</script>"
    assert head_meta_tags(f'<head>{filler}<meta name="robots" content="noindex">') == []


def test_a_head_that_names_none_of_the_names_asked_for_is_not_parsed() -> None:
    page = (
        '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        '<meta name="MyBot" content="nofollow"></head><body>robots</body>'
    )
    everything = [("viewport", "width=device-width"), ("mybot", "nofollow")]
    assert head_meta_tags(page) == everything
    assert head_meta_tags(page, mentioning=("robots", "mybot")) == everything
    assert head_meta_tags(page, mentioning=("robots", "otherbot")) == []  # "robots" is in <body>
    assert head_meta_tags(page, mentioning=("robots",)) == []
    assert head_meta_tags(page, mentioning=("MYBOT",)) == everything
    assert head_meta_tags(page, mentioning=("",)) == everything  # nothing asked for


def test_utf16_without_a_bom_named_by_the_caller() -> None:
    page = '<head><meta name="robots" content="noindex"></head><body>x'
    assert head_meta_tags(page.encode("utf-16-le"), "utf-16-le") == [("robots", "noindex")]
    assert head_meta_tags(codecs.BOM_UTF16_BE + page.encode("utf-16-be")) == [("robots", "noindex")]


FRAGMENTS = [
    "<",
    ">",
    "</",
    "<!--",
    "-->",
    "<![CDATA[",
    "<head>",
    "</head>",
    "<body",
    "<body>",
    "<script>",
    "</script>",
    "<style>",
    "<title>",
    "<template>",
    "<meta",
    ' name="robots"',
    " content=noindex",
    "'",
    '"',
    "\x00",
    "\ufffd",
    "é",
    "<div>",
    " ",
]


def test_random_pages_never_raise() -> None:
    rng = random.Random(20260512)
    for _ in range(2_000):
        page = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 40)))
        for html in (page, page.encode("utf-8", "surrogatepass"), page.encode("utf-16")):
            found = head_meta_tags(html)
            assert all(isinstance(n, str) and isinstance(c, str) for n, c in found)
