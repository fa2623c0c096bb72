"""A robots.txt body to rules: charset, BOM and syntax, as the middleware, the parser adapter
and the command line all read it (standard library only)."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from scrapy_rerp.core import decompress
from scrapy_rerp.engine import NOT_BODY_CHARSETS, RFC9309, RobotsTxt, body_codec, parse, text_codec

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_SIZE",
    "Body",
    "charset_from_content_type",
    "capped_lines",
    "default_charset",
    "parse_body",
    "read_body",
    "usable_charset",
]

_UTF8_BOM = codecs.BOM_UTF8

#: The bytes of a robots.txt a crawler reads: 500 KiB, what RFC 9309 (section 2.5) asks crawlers
#: to read at least. ``RERP_MAX_SIZE``'s default, and the command line's cap on what it reads.
MAX_SIZE = 500 * 1024

#: The bytes of one response header the crawl reads, all its lines together, for each header
#: that speaks to it (Content-Usage, X-Robots-Tag, Robots-Tag, tdm-reservation, tdm-policy):
#: 8 KiB, what common servers accept in one request header line (Apache's
#: LimitRequestFieldSize, nginx's large_client_header_buffers). What a site says in one is
#: tens of bytes; past the cap, nothing more is read (docs/usage.rst, "Bounds").
MAX_HEADER_BYTES = 8 * 1024


def charset_from_content_type(content_type: bytes | str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, if it names a known codec."""
    if not content_type:
        return None
    if isinstance(content_type, bytes):
        content_type = content_type.decode("utf-8", "replace")
    for param in content_type.split(";")[1:]:
        name, _, charset = param.partition("=")
        if name.strip().lower() == "charset":
            return text_codec(charset.strip().strip("\"'"))
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
    try:
        text = body.decode(body_codec(charset) or "utf-8", errors="replace")
    except (LookupError, UnicodeError, TypeError):
        # A codec that cannot decode with replacement; as for no codec a body is written in
        # (idna, punycode, undefined...), the site's header is wrong: read the bytes as UTF-8
        # (read_body says so).
        text = body.decode("utf-8", errors="replace")
    return parse(text.removeprefix("\ufeff"), syntax)


def usable_charset(data: bytes, charset: str | None) -> tuple[str | None, str | None]:
    """``charset`` if it decodes ``data`` (with replacement characters), else UTF-8 and a note
    saying why: some codecs refuse replacement (``idna``) or any bytes (``undefined``), and
    ``punycode`` decodes text into other characters (the engine's ``NOT_BODY_CHARSETS``)."""
    if charset is None or charset == "utf-8":
        return charset, None
    codec = body_codec(charset)
    if codec is None:
        why = "no robots.txt is written in it" if charset in NOT_BODY_CHARSETS else "unknown"
        return "utf-8", f"charset {charset!r} cannot decode the body ({why}); read as UTF-8"
    try:
        data.decode(codec, errors="replace")
    except (LookupError, UnicodeError, TypeError) as exc:
        return "utf-8", f"charset {charset!r} cannot decode the body ({exc}); read as UTF-8"
    return charset, None


def default_charset(syntax: int) -> str:
    """The charset of a body whose Content-Type names none: UTF-8 (RFC 9309), else ISO-8859-1
    (rerp's ``fetch()``)."""
    return "utf-8" if syntax == RFC9309 else "iso-8859-1"


@dataclass(frozen=True, kw_only=True)
class Body:
    """A downloaded robots.txt body as a crawler reads it."""

    data: bytes  # decoded from its Content-Encoding, at most the cap
    charset: str | None  # from Content-Type
    truncated: bool  # longer than the cap: only the first bytes are read
    undecodable: str | None = None  # why the Content-Encoding could not be undone
    charset_note: str | None = None  # why the declared charset was replaced by UTF-8

    def rules(self, syntax: int) -> RobotsTxt:
        """The rules in ``syntax``: the declared charset, else the syntax's default."""
        return parse_body(self.data, syntax, self.charset or default_charset(syntax))


def read_body(
    raw: bytes,
    content_encodings: list[bytes] | None,
    content_type: bytes | str | None,
    max_size: int,
    cut: bool = False,
) -> Body:
    """Undo the Content-Encoding up to ``max_size`` bytes and cap the body (RFC 9309 2.5: the
    first bytes are parsed); ``cut`` says the download already stopped at the cap."""
    truncated = cut or len(raw) > max_size
    charset = charset_from_content_type(content_type)
    if content_encodings:
        try:
            raw, more = decompress.decode(raw, content_encodings, max_size)
        except ValueError as exc:
            return Body(data=b"", charset=charset, truncated=truncated, undecodable=str(exc))
        truncated = truncated or more
    data = raw[:max_size]
    charset, note = usable_charset(data, charset)
    return Body(data=data, charset=charset, truncated=truncated, charset_note=note)


def capped_lines(lines: list[bytes], limit: int = MAX_HEADER_BYTES) -> tuple[list[bytes], int]:
    """The first lines of one header, at most ``limit`` bytes of them, and how many bytes were
    left unread (0: every line read).

    Lines are kept whole while they fit; of the first one that does not, the part before its
    last comma within the cap is kept (the members of a list or dictionary before it, whole),
    and nothing after it is read.
    """
    room = limit
    for index, line in enumerate(lines):
        if len(line) <= room:
            room -= len(line)
            continue
        kept = lines[:index]
        comma = line.rfind(b",", 0, room)
        if comma > 0:
            kept.append(line[:comma])
        unread = len(line) - max(comma, 0) + sum(len(rest) for rest in lines[index + 1 :])
        return kept, unread
    return lines, 0
