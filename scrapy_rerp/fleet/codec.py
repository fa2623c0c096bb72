"""An origin's robots.txt entry as a flat hash of bytes, and back: the fleet's one format.

A hash holds the robots.txt body as it was fetched (decoded from its Content-Encoding, capped at
``RERP_MAX_SIZE``), never pickled rules: a worker that reads it parses the body again, as the
worker that downloaded it did (same syntax, same charset). Its fields:

=================  ===========================================================================
field              value
=================  ===========================================================================
``v``              :data:`FORMAT_VERSION` (written by the store)
``syntax``         ``rfc9309``, ``gym2008`` or ``mk1996``: a hash of another syntax is ignored
``outcome``        ``parsed``, ``allow-all``, ``disallow-all`` or ``unreachable``
``body``           for ``parsed``: the bytes parsed (never without them: a hash of rules
                   without a body is unreadable)
``charset``        the charset they were parsed with, if any
``status``         the HTTP status the rules came from
``url``            the final robots.txt URL, after redirects
``fetched_at``     when it was fetched (a time: :data:`CLOCK_FIELDS`)
``expires_at``     when to fetch it again, or retry an unreachable one
``failures``       failed attempts in a row
``outage_since``   when the current outage began
=================  ===========================================================================

A worker that keeps earlier rules through a failed download (an outage) no longer holds their
bytes: :func:`encode` takes them from the fleet's stored copy, or stores the outage without
rules when there is none (never rules without bytes, which a reader would parse as "allow
all").

Standard library only; the store (:mod:`scrapy_rerp.fleet.store`) writes ``v`` and keeps the
times on Redis's clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scrapy_rerp.core.body import Body
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry
from scrapy_rerp.engine import RobotsTxt

__all__ = [
    "CLOCK_FIELDS",
    "FORMAT_VERSION",
    "Unreadable",
    "decode",
    "encode",
    "keeps_earlier_rules",
]

#: Version of the hash layout; a hash of another version is ignored (fetched again).
#: 2: the times are on Redis's clock.
FORMAT_VERSION = b"2"

#: Fields holding wall-clock times: written on Redis's clock, read back on the reader's, so that
#: workers whose clocks disagree agree on when an entry expires and when an outage began.
CLOCK_FIELDS = frozenset({b"fetched_at", b"expires_at", b"outage_since"})


#: Rules kept through an outage: the fields of the copy's download stay, the outage's are
#: written over them.
_COPY_FIELDS = (b"syntax", b"outcome", b"body", b"charset", b"status", b"url", b"fetched_at")
_OUTAGE_FIELDS = (b"expires_at", b"failures", b"outage_since")


class Unreadable(ValueError):
    """A stored hash that cannot be read back (a bad value, a missing field)."""


def keeps_earlier_rules(entry: RobotsEntry, fetched: Fetched | None) -> bool:
    """Whether ``entry`` holds rules parsed before ``fetched``, a download that failed (it has
    no body): their bytes are not at hand, :func:`encode` needs the fleet's stored copy."""
    return entry.outcome == Outcome.PARSED and (fetched is None or fetched.body is None)


def encode(
    entry: RobotsEntry,
    fetched: Fetched | None,
    syntax_name: str,
    stored: Mapping[bytes, bytes] | None = None,
) -> dict[bytes, bytes]:
    """The hash's fields for ``entry``, with the body ``fetched`` parsed (if any).

    Rules kept through a failed download (:func:`keeps_earlier_rules`) keep the bytes of
    ``stored``, the fleet's hash, when it holds a parsed copy in this syntax; the outage's state
    is written over it. Without one they are stored as the outage alone, without rules.
    """
    if keeps_earlier_rules(entry, fetched):
        return _kept(entry, fetched, syntax_name, stored)
    body = fetched.body if fetched is not None and entry.outcome == Outcome.PARSED else None
    values: dict[str, object] = {
        "syntax": syntax_name,
        "outcome": entry.outcome.value,
        "body": body,
        "charset": fetched.charset if fetched is not None else None,
        "status": entry.status,
        "url": entry.url,
        "fetched_at": repr(entry.fetched_at),
        "expires_at": repr(entry.expires_at),
        "failures": entry.failures,
        "outage_since": None if entry.outage_since is None else repr(entry.outage_since),
    }
    fields: dict[bytes, bytes] = {}
    for name, value in values.items():
        if value is None:
            continue
        fields[name.encode()] = value if isinstance(value, bytes) else str(value).encode()
    return fields


def _kept(
    entry: RobotsEntry,
    fetched: Fetched | None,
    syntax_name: str,
    stored: Mapping[bytes, bytes] | None,
) -> dict[bytes, bytes]:
    outage = encode(
        entry.with_(
            robots=None,
            outcome=Outcome.UNREACHABLE,
            status=fetched.status if fetched is not None else None,
            url=fetched.url if fetched is not None else None,
        ),
        fetched,
        syntax_name,
    )
    if (
        stored is None
        or stored.get(b"syntax") != syntax_name.encode()
        or stored.get(b"outcome") != Outcome.PARSED.value.encode()
        or b"body" not in stored
    ):
        return outage  # no bytes of these rules in the fleet (flushed, another syntax...)
    copy = {name: stored[name] for name in _COPY_FIELDS if name in stored}
    return {**copy, **{name: outage[name] for name in _OUTAGE_FIELDS if name in outage}}


def decode(
    fields: Mapping[bytes, bytes], syntax: int, syntax_name: str, max_size: int
) -> RobotsEntry | None:
    """The entry a stored hash describes, its body parsed again in ``syntax``; None when it was
    written for another syntax. Raises :class:`Unreadable` for a hash that cannot be read."""
    try:
        if fields[b"syntax"].decode() != syntax_name:
            return None  # a fleet member with another RERP_SYNTAX: not the same rules
        outcome = Outcome(fields[b"outcome"].decode())
        robots: RobotsTxt | None
        if outcome == Outcome.PARSED:
            charset = fields.get(b"charset")
            body = Body(
                fields[b"body"][:max_size],  # rules without their bytes: unreadable
                _charset(charset) if charset else None,
                truncated=False,
            )
            robots = body.rules(syntax)  # as the worker that downloaded it read it
        elif outcome == Outcome.ALLOW_ALL:
            robots = RobotsTxt.allow_all(syntax)
        elif outcome == Outcome.DISALLOW_ALL:
            robots = RobotsTxt.disallow_all(syntax)
        elif outcome == Outcome.UNREACHABLE:
            robots = None
        else:
            raise Unreadable(f"outcome {outcome.value!r} is never stored")
        status = fields.get(b"status")
        url = fields.get(b"url")
        outage_since = fields.get(b"outage_since")
        return RobotsEntry(
            robots=robots,
            fetched_at=_moment(fields[b"fetched_at"]),
            expires_at=_moment(fields[b"expires_at"]),
            status=int(status) if status else None,
            url=url.decode("utf-8", "replace") if url else None,
            outcome=outcome,
            failures=int(fields.get(b"failures", b"0")),
            outage_since=_moment(outage_since) if outage_since else None,
        )
    except (KeyError, ValueError, LookupError) as exc:
        raise Unreadable(f"{type(exc).__name__}: {exc}") from exc


def _charset(value: bytes) -> str:
    """A stored charset. An unknown name is read as none (the body as UTF-8), as a download's
    is; a NUL in it, which no worker stores (it reads such a header as no charset), is damage."""
    name = value.decode()
    if "\x00" in name:
        raise ValueError(f"charset {name!r} has a NUL")
    return name


def _moment(value: bytes) -> float:
    """A stored time; float() also reads NaN and infinities, which no entry holds (an entry
    expiring at NaN would never expire)."""
    seconds = float(value)
    if not math.isfinite(seconds):
        raise ValueError(f"time {value!r} is not finite")
    return seconds
