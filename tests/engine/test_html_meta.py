"""robots_meta_tags: the shared extraction cases (tests/support/html_meta_cases.py), and what
only the engine's reader promises: its input bound, types, and no exception on any bytes."""

from __future__ import annotations

import random

import pytest

from scrapy_rerp.engine import robots_meta_tags
from scrapy_rerp.engine._html_meta import MAX_HTML_BYTES
from tests.support.html_meta_cases import MetaReaderContract, Pairs


class TestRobotsMetaTags(MetaReaderContract):
    reader = "engine"

    def read(self, html: bytes | str, encoding: str | None) -> Pairs:
        return robots_meta_tags(html, encoding)


def test_a_tag_past_the_input_bound_is_not_read() -> None:
    filler = "<script>" + "x" * MAX_HTML_BYTES + "</script>"
    page = f'<head>{filler}<meta name="robots" content="noindex"></head>'
    assert robots_meta_tags(page) == []
    assert robots_meta_tags(page.encode()) == []
    script = "x" * (MAX_HTML_BYTES // 2)
    within = f'<head><script>{script}</script><meta name="robots" content="noindex">'
    assert robots_meta_tags(within) == [("robots", "noindex")]


def test_bytearray_and_memoryview_are_bytes() -> None:
    page = b'<head><meta name="robots" content="noindex"></head>'
    assert (
        robots_meta_tags(bytearray(page))
        == robots_meta_tags(memoryview(page))
        == [("robots", "noindex")]
    )


@pytest.mark.parametrize("html", [None, 1, ["<head>"], object()])
def test_html_must_be_bytes_or_str(html: object) -> None:
    with pytest.raises(TypeError, match="html must be bytes or str"):
        robots_meta_tags(html)  # type: ignore[arg-type]


def test_encoding_must_be_a_str() -> None:
    with pytest.raises(TypeError, match="encoding"):
        robots_meta_tags(b"<head>", 8)  # type: ignore[arg-type]


FRAGMENTS = [
    "<",
    ">",
    "</",
    "<!",
    "<!--",
    "-->",
    "<![",
    "]]>",
    "<?",
    "<!DOCTYPE",
    "<![CDATA[",
    "<meta ",
    "name=robots",
    ' content="',
    "'",
    '"',
    "=",
    "&",
    "&#",
    "&#x",
    ";",
    "<head>",
    "</head>",
    "<body>",
    "<script>",
    "</script>",
    "<style>",
    "<template>",
    "</template>",
    "<noscript>",
    "<title>",
    "</title>",
    "<![if !IE]>",
    "<!ELEMENT",
    "<!ATTLIST",
    "\x00",
    "\ufffd",
    " ",
    "\n",
    "noindex",
    ",",
    "<meta name=robots content=noindex>",
    "<div>",
    "<svg>",
]


def test_random_pages_never_raise() -> None:
    rng = random.Random(20260418)
    for _ in range(3000):
        page = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 40)))
        found = robots_meta_tags(page)
        assert all(isinstance(name, str) and isinstance(content, str) for name, content in found)
        robots_meta_tags(page.encode("utf-8", "surrogatepass"))
    for _ in range(2000):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
        robots_meta_tags(raw)
        robots_meta_tags(raw, rng.choice([None, "utf-8", "utf-16", "cp1252", "nonsense", "utf-7"]))


def test_an_encoding_with_a_nul_in_its_name_is_no_encoding() -> None:
    # codecs.lookup raises ValueError, not LookupError, on a NUL: read as UTF-8.
    tags = robots_meta_tags("<meta name=robots content='caf\u00e9'>".encode(), "utf\x008")
    assert tags == [("robots", "caf\u00e9")]
