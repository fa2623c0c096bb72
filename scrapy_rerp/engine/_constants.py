"""Syntax constants and limits shared by the whole engine."""

from __future__ import annotations

#: The 1996 draft (Koster): records end at blank lines, first match wins, literal prefixes.
MK1996 = 1
#: MK1996 plus the Google/Yahoo/Microsoft 2008 extensions: ``*`` and a trailing ``$``.
GYM2008 = 2
#: RFC 9309 as read by its reference implementation, google/robotstxt.
RFC9309 = 3

SYNTAXES = (MK1996, GYM2008, RFC9309)
#: The one table of syntax names. Everything that takes a syntax (``parse``, the rerp classes,
#: ``RERP_SYNTAX``, the command line's ``--syntax``) takes a name, in any case, or the constant.
SYNTAX_BY_NAME = {"rfc9309": RFC9309, "gym2008": GYM2008, "mk1996": MK1996}
#: The constants' names as written in this module (``RobotsTxt``'s repr).
SYNTAX_NAMES = {value: name.upper() for name, value in SYNTAX_BY_NAME.items()}

#: rerp's default lifetime of a fetched robots.txt, in seconds.
SEVEN_DAYS = 60 * 60 * 24 * 7
#: rerp's cap on the bytes ``fetch()`` reads.
MAX_FILESIZE = 100 * 1024

#: google/robotstxt keeps the first 2083 * 8 - 1 bytes of a line.
MAX_LINE_BYTES = 2083 * 8 - 1


def check_syntax(syntax: object) -> int:
    """The constant for *syntax*, one of the three constants or their names (any case, e.g.
    ``"gym2008"``); ValueError otherwise."""
    if type(syntax) is int and syntax in SYNTAXES:
        return syntax
    if isinstance(syntax, str):
        constant = SYNTAX_BY_NAME.get(syntax.strip().lower())
        if constant is not None:
            return constant
    raise ValueError(
        "syntax must be MK1996, GYM2008 or RFC9309 (or the names 'mk1996', 'gym2008', "
        f"'rfc9309'), not {syntax!r}"
    )


def as_text(value: object, name: str) -> str:
    """*value*, a URL or a user agent, as str: bytes are decoded as UTF-8, a byte that is not
    kept as a surrogate; TypeError, naming the argument *name*, for any other type."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str or bytes, not {type(value).__name__}")
    return value
