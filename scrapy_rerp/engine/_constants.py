"""Syntax constants and limits shared by the whole engine."""

from __future__ import annotations

#: The 1996 draft (Koster): records end at blank lines, first match wins, literal prefixes.
MK1996 = 1
#: MK1996 plus the Google/Yahoo/Microsoft 2008 extensions: ``*`` and a trailing ``$``.
GYM2008 = 2
#: RFC 9309 as read by its reference implementation, google/robotstxt.
RFC9309 = 3

SYNTAXES = (MK1996, GYM2008, RFC9309)
SYNTAX_NAMES = {MK1996: "MK1996", GYM2008: "GYM2008", RFC9309: "RFC9309"}

#: rerp's default lifetime of a fetched robots.txt, in seconds.
SEVEN_DAYS = 60 * 60 * 24 * 7
#: rerp's cap on the bytes ``fetch()`` reads.
MAX_FILESIZE = 100 * 1024

#: google/robotstxt keeps the first 2083 * 8 - 1 bytes of a line.
MAX_LINE_BYTES = 2083 * 8 - 1


def check_syntax(syntax: object) -> int:
    """Return *syntax* if it is one of the three constants, else raise ValueError."""
    if type(syntax) is not int or syntax not in SYNTAXES:
        raise ValueError(f"syntax must be MK1996, GYM2008 or RFC9309, not {syntax!r}")
    return syntax
