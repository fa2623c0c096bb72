"""Which codec decodes a text declared in a charset: the one lookup of a charset name.

Both readers of the engine use it: robots.txt bodies (``_lines.decode``, rerp's fetch, the
crawl's transport) and HTML pages (``_html_meta``). A name that is unknown, holds a NUL, names
no text encoding (``base64``, ``rot13``) or names one of :data:`NOT_BODY_CHARSETS` is read as
no charset at all, so that no declared name can make a reader raise or read nonsense.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

__all__ = ["NOT_BODY_CHARSETS", "body_codec", "text_codec"]

#: Codecs that Python knows but no robots.txt or page is written in: the hostname encodings
#: (``punycode`` turns ASCII text into other characters without an error; ``idna`` refuses
#: replacement) and ``undefined``, which refuses every byte. A body declared in one is read as
#: if in none.
NOT_BODY_CHARSETS = frozenset({"idna", "punycode", "undefined"})


def text_codec(charset: str | None) -> str | None:
    """The canonical name of the text encoding *charset* names, or None when it names none
    (unknown, a NUL in the name, or no text encoding: ``base64``, ``rot13``)."""
    if not charset:
        return None
    try:
        info = codecs.lookup(charset)
    except (LookupError, ValueError):  # ValueError: a NUL in the name
        return None
    return info.name if getattr(info, "_is_text_encoding", True) else None


# Asked once per page in a crawl (charset of the Content-Type header), of few names: cached,
# bounded (names come from the network).
@lru_cache(maxsize=256)
def body_codec(charset: str | None) -> str | None:
    """The codec that decodes a body declared in *charset*: its canonical name, or None when
    *charset* names no text encoding (:func:`text_codec`) or one of :data:`NOT_BODY_CHARSETS`."""
    codec = text_codec(charset)
    return None if codec in NOT_BODY_CHARSETS else codec
