"""Paths and patterns: URL-to-path, rule escaping, and linear-time wildcard matching.

No regular expression is built from a rule: a pattern with ``*`` is split into literal
segments matched greedily with ``str.find``, which is linear in the URL length per segment
(leftmost-first is optimal for ``*``-only globs), so no input can make a check backtrack.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_PATH_START = re.compile(r"[/?;]")
# scheme://authority then, if any, the path, params and query up to a fragment.
ABSOLUTE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?;#]*([/?;][^#]*)?")
_SLASH_ESCAPE = re.compile(r"%2[fF]")


def path_params_query(url: str) -> str:
    """Return the path, params and query of *url*, as google/robotstxt's GetPathParamsQuery.

    The scheme and authority are dropped, so is the fragment; the result starts with ``/``.
    Relative input is read the same way (``example.com/a`` gives ``/a``).
    """
    match = ABSOLUTE_URL.match(url)
    if match is not None:  # the common case: scheme://authority[path]
        path = match.group(1)
        if path is None:
            return "/"
        return path if path[0] == "/" else "/" + path
    search_start = 2 if url.startswith("//") else 0
    early = _PATH_START.search(url, search_start)
    protocol_end = url.find("://", search_start)
    if protocol_end == -1 or (early is not None and early.start() < protocol_end):
        protocol_end = search_start
    else:
        protocol_end += 3
    found = _PATH_START.search(url, protocol_end)
    if found is None:
        return "/"
    path_start = found.start()
    hash_pos = url.find("#", search_start)
    if hash_pos != -1 and hash_pos < path_start:
        return "/"
    hash_pos = url.find("#", path_start)
    path = url[path_start:] if hash_pos == -1 else url[path_start:hash_pos]
    return path if path[0] == "/" else "/" + path


def to_utf8(text: str) -> bytes:
    """UTF-8 bytes of *text*; surrogate escapes give back their bytes, other lone surrogates
    (only a str caller can pass them) are encoded as they are rather than raising."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def escape_pattern(value: str) -> str:
    """%-escape a rule as google/robotstxt's MaybeEscapePattern.

    Octets >= 0x80 become ``%XX`` and existing ``%xx`` escapes are upper-cased; nothing else
    changes. Surrogate escapes (undecodable input bytes) are escaped as the bytes they stand for.
    """
    if value.isascii():
        if "%" not in value:
            return value
        return _upper_escapes(value)
    octets = to_utf8(value).decode("iso-8859-1")
    if "%" in octets:
        octets = _upper_escapes(octets)
    return octets.translate(_HIGH_OCTETS)


def _upper_escapes(value: str) -> str:
    """``%xx`` escapes upper-cased, with C-level passes rather than a callback per escape."""
    if not has_lower_escape(value):  # most are written upper-case already
        return value
    pieces = _ESCAPE.split(value)  # text, hex pair, text, hex pair, ..., text
    pieces[1::2] = map(_PERCENT.__add__, map(str.upper, pieces[1::2]))
    return "".join(pieces)


_ESCAPE = re.compile(r"%([0-9a-fA-F]{2})")
#: Whether a text has a %-escape with a lower-case hex digit (one that escaping changes).
has_lower_escape = re.compile(r"%(?:[0-9a-fA-F][a-f]|[a-f][0-9A-F])").search
_PERCENT = "%"
_HIGH_OCTETS = {octet: f"%{octet:02X}" for octet in range(0x80, 0x100)}


def unquote_path(path: str) -> str:
    """Decode every %-escape except ``%2F``, as rerp does (without its ``%0A`` bug)."""
    if "%" not in path:
        return path
    return "%2F".join(unquote(part) for part in _SLASH_ESCAPE.split(path))


def glob_match(
    path: str, head: str, middle: tuple[str, ...] | None, tail: str | None, anchored: bool
) -> bool:
    """Greedy leftmost matching of ``head*middle...*tail[$]`` at the start of *path*.

    *tail* None means the pattern has no ``*``. Linear in the path per segment: leftmost-first
    is optimal for ``*``-only globs, so nothing ever backtracks.
    """
    if not path.startswith(head):
        return False
    if tail is None:  # no '*': a literal, whole when anchored
        return not anchored or len(path) == len(head)
    pos = len(head)
    if anchored:
        end = len(path) - len(tail)
        if end < pos or not path.endswith(tail):
            return False
    else:
        end = len(path)
    if middle:
        find = path.find
        for part in middle:
            found = find(part, pos, end)
            if found < 0:
                return False
            pos = found + len(part)
    return anchored or not tail or path.find(tail, pos) >= 0


def split_glob(pattern: str) -> tuple[str, tuple[str, ...], str | None, bool]:
    """``(head, middle, tail, anchored)`` of a pattern with ``*`` wildcards and a final ``$``.

    *head* is the literal before the first ``*``, *middle* the non-empty literals between
    ``*``s, *tail* the literal after the last ``*`` (None without any ``*``), and *anchored*
    whether the pattern ends with ``$``.
    """
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    parts = pattern.split("*")
    if len(parts) == 1:
        return parts[0], (), None, anchored
    return parts[0], tuple(filter(None, parts[1:-1])), parts[-1], anchored


class Glob:
    """A pattern with ``*`` wildcards and an optional final ``$`` anchor, matched at the start.

    Matching is greedy leftmost per literal segment: O(len(path) * segments), never exponential.
    """

    __slots__ = ("head", "middle", "tail", "anchored")

    def __init__(self, pattern: str) -> None:
        self.head, self.middle, self.tail, self.anchored = split_glob(pattern)

    def match(self, path: str) -> bool:
        return glob_match(path, self.head, self.middle, self.tail, self.anchored)


def pattern_matches(path: str, pattern: str) -> bool:
    """Reference matcher for one RFC 9309 pattern (slow path: decisions, tests)."""
    if "*" in pattern or pattern.endswith("$"):
        return glob_match(path, *split_glob(pattern))
    return path.startswith(pattern)
