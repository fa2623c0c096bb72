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
``etag``           the copy's ``ETag``, if it had one (a validator: see :func:`validators`):
                   an entity tag of visible ASCII
``last_modified``  the copy's ``Last-Modified``, if it had one: an HTTP date
=================  ===========================================================================

A worker that keeps earlier rules through a failed download (an outage) no longer holds their
bytes: :func:`encode` takes them from the fleet's stored copy, or stores the outage without
rules when there is none (never rules without bytes, which a reader would parse as "allow
all"). A 304 to a conditional refetch renews the fleet's copy the same way: its bytes stay,
its times are the 304's (:func:`encode` with ``fetched.not_modified``); with no copy in the
fleet there is nothing to renew, and nothing is stored.

Standard library only; the store (:mod:`scrapy_rerp.fleet.store`) writes ``v`` and keeps the
times on Redis's clock.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from scrapy_rerp.core.body import Body
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators, body_sha256
from scrapy_rerp.core.documents import DocumentKind, robots_txt
from scrapy_rerp.core.status import rfc1123_to_epoch
from scrapy_rerp.core.store import MAX_HEADER  # the longest validator the store keeps too

__all__ = [
    "CLOCK_FIELDS",
    "FIELDS",
    "FORMAT_VERSION",
    "Unreadable",
    "decode",
    "encode",
    "keeps_earlier_rules",
    "validators",
]

#: Version of the hash layout; a hash of another version is ignored (fetched again).
#: 2: the times are on Redis's clock.
FORMAT_VERSION = b"2"

#: Every field of the layout, in the table's order: what a worker reads of a hash (another
#: field, of any size, is never sent).
FIELDS = (
    b"v",
    b"syntax",
    b"outcome",
    b"body",
    b"charset",
    b"status",
    b"url",
    b"fetched_at",
    b"expires_at",
    b"failures",
    b"outage_since",
    b"etag",
    b"last_modified",
)

#: Fields holding wall-clock times: written on Redis's clock, read back on the reader's, so that
#: workers whose clocks disagree agree on when an entry expires and when an outage began.
CLOCK_FIELDS = frozenset({b"fetched_at", b"expires_at", b"outage_since"})


#: Rules kept through an outage: the fields of the copy's download stay (all but the version,
#: which the store writes), the outage's are written over them.
_OUTAGE_FIELDS = (b"expires_at", b"failures", b"outage_since")
_COPY_FIELDS = tuple(name for name in FIELDS if name not in (b"v", *_OUTAGE_FIELDS))


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
    is written over it. Without one they are stored as the outage alone, without rules. Rules
    a 304 renewed keep the bytes of ``stored`` too; without them the result is empty: nothing
    to store.
    """
    if keeps_earlier_rules(entry, fetched):
        copy = _parsed_copy(stored, syntax_name)
        if fetched is not None and fetched.not_modified:
            return _renewed(entry, fetched, copy) if copy is not None else {}
        return _kept(entry, fetched, syntax_name, copy)
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
        **_validator_fields(fetched),
    }
    return {
        name.encode(): value if isinstance(value, bytes) else str(value).encode()
        for name, value in values.items()
        if value is not None
    }


def _kept(
    entry: RobotsEntry,
    fetched: Fetched | None,
    syntax_name: str,
    copy: dict[bytes, bytes] | None,
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
    if copy is None:
        return outage  # no bytes of these rules in the fleet (flushed, another syntax...)
    return {**copy, **{name: outage[name] for name in _OUTAGE_FIELDS if name in outage}}


def _renewed(entry: RobotsEntry, fetched: Fetched, copy: dict[bytes, bytes]) -> dict[bytes, bytes]:
    return {
        **copy,
        b"fetched_at": repr(entry.fetched_at).encode(),
        b"expires_at": repr(entry.expires_at).encode(),
        b"failures": str(entry.failures).encode(),
        # RFC 9111 4.3.4: a 304's validators replace the stored ones; absent, the copy's stay.
        **{name.encode(): value for name, value in _validator_fields(fetched).items()},
    }


def _parsed_copy(
    stored: Mapping[bytes, bytes] | None, syntax_name: str
) -> dict[bytes, bytes] | None:
    """The fields of the download of the copy ``stored`` holds, when it holds one parsed in
    this syntax; else None."""
    if (
        stored is None
        or stored.get(b"syntax") != syntax_name.encode()
        or stored.get(b"outcome") != Outcome.PARSED.value.encode()
        or b"body" not in stored
    ):
        return None
    return {name: stored[name] for name in _COPY_FIELDS if name in stored}


def _validator_fields(fetched: Fetched | None) -> dict[str, bytes]:
    """The validators of the response ``fetched`` came with, as the hash keeps them."""
    headers = getattr(fetched.response, "headers", None) if fetched is not None else None
    if headers is None:
        return {}
    return _sendable(headers.get(b"ETag"), headers.get(b"Last-Modified"))


#: An entity tag as RFC 9110 8.8.3 writes it, weak or not, of visible ASCII (``etagc`` without
#: obs-text); unquoted, as some servers send it, it is visible ASCII still.
_ETAG = re.compile(rb'(?:W/)?"[\x21\x23-\x7e]*"|[\x21\x23-\x7e]+')
#: An HTTP date's characters (RFC 9110 5.6.7: letters, digits, spaces, commas, colons, '-').
_HTTP_DATE = re.compile(rb"[A-Za-z0-9 ,:-]+")


def _sendable(etag: object, last_modified: object) -> dict[str, bytes]:
    """The validators that can go back, each no longer than the store keeps: an ``ETag`` as
    ``If-None-Match`` when it is an entity tag of visible ASCII (no control byte, no space: a
    hash is read like a site's bytes, and what it holds goes out in a request header), a
    ``Last-Modified`` as ``If-Modified-Since`` when it is an HTTP date (any of its three
    formats), of its own characters only."""
    fields = {}
    if isinstance(etag, bytes) and len(etag) <= MAX_HEADER and _ETAG.fullmatch(etag):
        fields["etag"] = etag
    if (
        isinstance(last_modified, bytes)
        and len(last_modified) <= MAX_HEADER
        and _HTTP_DATE.fullmatch(last_modified)
        and rfc1123_to_epoch(last_modified) is not None
    ):
        fields["last_modified"] = last_modified
    return fields


def validators(fields: Mapping[bytes, bytes]) -> Validators | None:
    """The conditional headers that revalidate the copy a hash holds, or None (no validator, or
    one that cannot be sent back: a hash is read like a site's bytes)."""
    url = fields.get(b"url")
    if not url or fields.get(b"outcome") == Outcome.UNREACHABLE.value.encode():
        return None
    sendable = _sendable(fields.get(b"etag"), fields.get(b"last_modified"))
    return Validators.of(
        url.decode("utf-8", "replace"), sendable.get("etag"), sendable.get("last_modified")
    )


def decode(
    fields: Mapping[bytes, bytes],
    syntax: int,
    syntax_name: str,
    max_size: int,
    kind: DocumentKind | None = None,
) -> RobotsEntry | None:
    """The entry a stored hash describes, its body parsed again in ``syntax`` (by ``kind``,
    robots.txt when None); None when it was written for another syntax. Raises
    :class:`Unreadable` for a hash that cannot be read."""
    if kind is None:
        kind = robots_txt(syntax)
    try:
        if fields[b"syntax"].decode() != syntax_name:
            return None  # a fleet member with another RERP_SYNTAX: not the same rules
        outcome = Outcome(fields[b"outcome"].decode())
        if outcome == Outcome.PARSED:
            charset = fields.get(b"charset")
            body = Body(
                data=fields[b"body"][:max_size],  # rules without their bytes: unreadable
                charset=_charset(charset) if charset else None,
                truncated=False,
            )
            robots = kind.parse(body)  # as the worker that downloaded it read it
        elif outcome == Outcome.ALLOW_ALL:
            robots = kind.absent()
        elif outcome == Outcome.DISALLOW_ALL and kind.refused is not None:
            robots = kind.refused()
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
            sha256=body_sha256(fields.get(b"body")) if robots is not None else None,
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
