"""A robots.txt body to rules: charset, BOM and syntax, as the middleware, the parser adapter
and the command line all read it (standard library only)."""

from __future__ import annotations

import codecs

from scrapy_rerp.engine import RFC9309, RobotsTxt, parse

__all__ = ["charset_from_content_type", "parse_body"]

_UTF8_BOM = codecs.BOM_UTF8


def charset_from_content_type(content_type: bytes | str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, if it names a known codec."""
    if not content_type:
        return None
    if isinstance(content_type, bytes):
        content_type = content_type.decode("utf-8", "replace")
    for param in content_type.split(";")[1:]:
        name, _, charset = param.partition("=")
        if name.strip().lower() == "charset":
            charset = charset.strip().strip("\"'")
            try:
                info = codecs.lookup(charset)
            except LookupError:
                return None
            # Codecs such as "base64" exist but are no text encoding: bytes.decode refuses them.
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return None


def parse_body(body: bytes | str, syntax: int = RFC9309, charset: str | None = None) -> RobotsTxt:
    """Parse a robots.txt body; never raises on content.

    Without a ``charset`` the engine decodes (UTF-8 for RFC 9309, ISO-8859-1 for the legacy
    syntaxes, undecodable bytes kept). A leading UTF-8 BOM is dropped, as Scrapy's adapters
    do (``utf-8-sig``), so it cannot hide the first group. A declared charset other than
    UTF-8 is decoded here with replacement characters.
    """
    if isinstance(body, str):
        return parse(body.removeprefix("\ufeff"), syntax)
    if charset is None or (charset == "utf-8" and syntax == RFC9309):
        return parse(body.removeprefix(_UTF8_BOM), syntax)
    if charset == "utf-8":
        body = body.removeprefix(_UTF8_BOM)
    return parse(body.decode(charset, errors="replace").removeprefix("\ufeff"), syntax)
