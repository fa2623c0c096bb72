"""RSL 1.0 licence files (Really Simple Licensing, RSL-SPEC-1.0, Recommendation 2025-11-06): the
XML file a ``License:`` line of robots.txt names, read into its ``<content>`` elements and their
``<license>`` terms, and what those terms say of one URL for one purpose.

What is read (the spec's sections on ``<rsl>``, ``<content>``, ``<license>``, ``<permits>``,
``<prohibits>`` and ``<payment>``): ``<content url server>`` children of the root, their
``<license>`` children, and in each licence the ``<permits>`` and ``<prohibits>`` of type
``usage``, ``user`` and ``geo`` (comma-separated tokens) and the ``<payment type>``. Other
elements (``<legal>``, ``<copyright>``, amounts...) are not needed for a decision and are
skipped. docs/usage.rst, "RSL licences", has the mapping of RSL usages to purposes and every
choice made where the spec is silent.

Why the standard library's expat is safe here without defusedxml: the attacks defusedxml
guards against all need a DTD (entity expansion, "billion laughs" and quadratic blow-up,
external entities, external DTDs and parameter entities). The parser here aborts on the first
``<!DOCTYPE`` (StartDoctypeDeclHandler), on any entity declaration (EntityDeclHandler, for
completeness) and on any external entity reference (ExternalEntityRefHandler); parameter
entities are never parsed (SetParamEntityParsing NEVER). Without a DTD only the five predefined
entities and character references exist, each expanding to one character, and an undefined
entity is a well-formedness error. On top, the body is bounded (bytes, elements, depth, text per
element) before and while it is read. A file that breaks any of this states nothing.

Nothing here raises on content: a body that is not a well-formed RSL document is an ``RslFile``
with ``valid`` False and its problems listed, and it decides nothing (every decision unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit
from xml.parsers import expat

from ._constants import as_text
from ._patterns import escape_pattern, path_params_query, pattern_matches
from ._usage import ALLOWED, DISALLOWED, UNKNOWN, strongest, usage_category

__all__ = [
    "MAX_LICENSE_LINKS",
    "MAX_RSL_BYTES",
    "MAX_RSL_DEPTH",
    "MAX_RSL_ELEMENTS",
    "MAX_RSL_TEXT_CHARS",
    "RSL_HELD_PAYMENTS",
    "RSL_MEDIA_TYPE",
    "RSL_NAMESPACE",
    "RSL_PAYMENT_TYPES",
    "RSL_USAGES",
    "RSL_WARNING_CODES",
    "RslContent",
    "RslDecision",
    "RslFile",
    "RslLicense",
    "RslProblem",
    "license_decision",
    "license_links",
    "parse_rsl",
]

#: The namespace of RSL 1.0 elements.
RSL_NAMESPACE = "https://rslstandard.org/rsl"
#: The largest body read (the crawl's download cap, as for tdmrep.json); a bigger one states
#: nothing, with a ``too-large`` problem.
MAX_RSL_BYTES = 500 * 1024
#: Elements read from one file; a file with more states nothing (``too-many-elements``).
MAX_RSL_ELEMENTS = 10_000
#: Elements open at once; a file nested deeper states nothing (``too-deep``).
MAX_RSL_DEPTH = 32
#: The longest text of one ``<permits>`` or ``<prohibits>``; a longer one: ``text-too-long``.
MAX_RSL_TEXT_CHARS = 8192
_MAX_PROBLEMS = 256
#: The licence links read from one page (its ``Link`` header lines, or its head's ``<link>``
#: tags): more are ignored, so that a page cannot make a crawl download without bound.
MAX_LICENSE_LINKS = 8
#: The longest licence URL read from a page; a longer one is ignored.
MAX_LICENSE_URL_CHARS = 2048
#: The media type of an RSL document (``Link`` header and ``<link>`` tag ``type``).
RSL_MEDIA_TYPE = "application/rsl+xml"

#: RSL usage token -> the purposes (engine usage categories) it speaks of. ``all`` is every use;
#: ``ai-all`` every AI use; ``ai-index`` (an index that AI applications answer from) is the
#: engine's ``ai-input``, whose definition (Content Signals) includes AI search answers.
RSL_USAGES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "all": frozenset({"train-ai", "ai-input", "search"}),
        "ai-all": frozenset({"train-ai", "ai-input"}),
        "ai-train": frozenset({"train-ai"}),
        "ai-input": frozenset({"ai-input"}),
        "ai-index": frozenset({"ai-input"}),
        "search": frozenset({"search"}),
    }
)
#: The payment types of RSL 1.0 (``<payment type>``; none written is ``free``).
RSL_PAYMENT_TYPES = frozenset(
    {"free", "attribution", "purchase", "subscription", "training", "crawl", "use", "contribution"}
)
#: The payment types whose terms a crawl holds without an agreement: free, and attribution
#: (credit where the content is used). Any other payment, or a licence server, is not held.
RSL_HELD_PAYMENTS = frozenset({"free", "attribution"})
_TERM_TYPES = ("usage", "user", "geo")

#: Every RslProblem code, with what it means.
RSL_WARNING_CODES: dict[str, str] = {
    "too-large": "a file bigger than MAX_RSL_BYTES, not read: it states nothing",
    "not-xml": "a body that is not well-formed XML: it states nothing",
    "dtd-refused": "a DOCTYPE, entity declaration or external entity: refused, states nothing",
    "too-many-elements": "more than MAX_RSL_ELEMENTS elements: the file states nothing",
    "too-deep": "elements nested deeper than MAX_RSL_DEPTH: the file states nothing",
    "text-too-long": "a permits or prohibits text longer than MAX_RSL_TEXT_CHARS: states nothing",
    "not-rsl": "a root element other than <rsl>: the file states nothing",
    "no-namespace": "<rsl> without the RSL namespace: its elements read as RSL all the same",
    "bad-content": "a <content> without a url, or one that is no URL or path pattern: skipped",
    "no-license": "a <content> without a <license>: it decides nothing",
    "unknown-term-type": "a <permits> or <prohibits> type other than usage, user, geo: skipped",
    "unknown-usage": "a usage token RSL 1.0 does not define: it speaks of no purpose",
    "unknown-payment": "a payment type RSL 1.0 does not define: read as terms not held",
}


class RslProblem(NamedTuple):
    """Something in an RSL file that was not used as written: ``code`` (one of
    ``RSL_WARNING_CODES``), ``line`` (1-based, 0 for the whole file) and a ``message``."""

    code: str
    line: int
    message: str


@dataclass(frozen=True, kw_only=True)
class RslLicense:
    """One ``<license>`` of a content element: its 1-based ``position`` among the element's
    licences; ``permits`` and ``prohibits``: term type (usage, user, geo) -> the tokens written,
    lower-cased (a type absent: not written); ``payments``: the ``<payment>`` types written, in
    order (empty: none written, which is free)."""

    position: int
    permits: Mapping[str, frozenset[str]]
    prohibits: Mapping[str, frozenset[str]]
    payments: tuple[str, ...]

    @property
    def terms_held(self) -> bool:
        """Whether a crawl holds this licence's payment terms: none, or one of them free or
        attribution (several payments are alternative ways to pay)."""
        return not self.payments or any(p in RSL_HELD_PAYMENTS for p in self.payments)


@dataclass(frozen=True, kw_only=True)
class RslContent:
    """One ``<content>``: its 1-based ``position`` in the file, its ``url`` pattern as written,
    its licence ``server`` (None: none; one present means a licence must be obtained) and its
    ``licenses`` in order."""

    position: int
    url: str
    server: str | None
    licenses: tuple[RslLicense, ...]
    _match: tuple[str | None, str] = field(default=(None, ""), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._match == (None, ""):  # built from the url alone
            # (An origin no URL has, for a url that is no pattern: it matches nothing.)
            object.__setattr__(self, "_match", _compiled_url(self.url) or ("", ""))

    def matches(self, url: str) -> int:
        """The length of this element's path pattern if it matches *url*, else -1."""
        origin, pattern = self._match
        if origin is not None and _origin(url) != origin:
            return -1
        # The URL's path in the form of the patterns: non-ASCII %-escaped, escapes upper-cased.
        path = escape_pattern(path_params_query(url))
        return len(pattern) if pattern_matches(path, pattern) else -1


class RslDecision(NamedTuple):
    """What an RSL file says of one purpose of a URL: ``preference`` is ``"allowed"``,
    ``"disallowed"`` (refused) or ``"unknown"``, in the terms of ``UsageDecision``; ``file`` the
    RSL file's URL, ``content`` the content element that applied (None: none), ``license`` the
    1-based position of the licence that decided (None: none did), ``reason`` in words."""

    preference: str
    purpose: str
    file: str
    content: RslContent | None
    license: int | None
    reason: str

    @property
    def refused(self) -> bool:
        return self.preference == DISALLOWED


@dataclass(frozen=True, kw_only=True)
class RslFile:
    """A parsed RSL file: its ``url``, its usable ``contents`` in order, the ``problems`` found,
    and whether it was ``valid`` (well-formed, within bounds, an ``<rsl>`` root: a file that is
    not states nothing). Build it with ``parse_rsl``."""

    url: str
    contents: tuple[RslContent, ...]
    problems: tuple[RslProblem, ...]
    valid: bool
    # What each content element says of each purpose, once worked out: it depends on the
    # element and the purpose alone, so a crawl asking for every page matches the URL only.
    # Bounded by the elements (MAX_RSL_ELEMENTS) times the purposes.
    _decided: dict[tuple[int, str], RslDecision] = field(
        default_factory=dict, repr=False, compare=False
    )

    def content_for(self, url: str) -> RslContent | None:
        """The content element that applies to *url*: of those whose pattern matches, the one
        with the longest path pattern (as RFC 9309 picks a rule), the first of equals."""
        best: RslContent | None = None
        longest = -1
        for content in self.contents:
            length = content.matches(url)
            if length > longest:
                best, longest = content, length
        return best

    def decision(self, url: str, purpose: str) -> RslDecision:
        """What the file says of *purpose* (``train-ai``, ``ai-input``, ``search``; a
        Content-Signal key naming one) for *url*. Raises ValueError for an unknown purpose."""
        purpose = usage_category(purpose)
        url = as_text(url, "url")
        if not self.valid:
            return RslDecision(UNKNOWN, purpose, self.url, None, None, "the RSL file is unusable")
        content = self.content_for(url)
        if content is None:
            reason = "no content element of the RSL file matches the URL"
            return RslDecision(UNKNOWN, purpose, self.url, None, None, reason)
        key = (content.position, purpose)
        decided = self._decided.get(key)
        if decided is None:
            decided = self._decided[key] = self._decide(content, purpose)
        return decided

    def _decide(self, content: RslContent, purpose: str) -> RslDecision:
        if not content.licenses:
            reason = f"content {content.url!r} has no licence"
            return RslDecision(UNKNOWN, purpose, self.url, content, None, reason)
        permitted: int | None = None
        for licence in content.licenses:
            refusal = _refusal(licence, content, purpose)
            if refusal is not None:
                reason = f"content {content.url!r}, licence {licence.position}: {refusal}"
                return RslDecision(DISALLOWED, purpose, self.url, content, licence.position, reason)
            if permitted is None:
                permitted = licence.position
        reason = f"content {content.url!r}, licence {permitted}: {purpose} permitted on terms held"
        return RslDecision(ALLOWED, purpose, self.url, content, permitted, reason)


def license_decision(url: str, purpose: str, files: Iterable[RslFile]) -> RslDecision | None:
    """What several RSL files (those a robots.txt names, then a page's own) say together of
    *purpose* for *url*: the first refusal decides (a licence that applies and refuses is not
    lifted by another that permits: no licence is held for it); else the first that allows;
    else the first file's ``unknown``. None when there is no file."""
    decisions = [file.decision(url, purpose) for file in files]
    outcome = strongest(decision.preference for decision in decisions)
    return next((decision for decision in decisions if decision.preference == outcome), None)


# RFC 8288 link-value: <URI-Reference> *( OWS ";" OWS link-param ), link-values joined by ",".
_LINK_VALUE = re.compile(r"\s*<([^>]*)>((?:\s*;\s*[^;,=\s]+(?:\s*=\s*(?:\"[^\"]*\"|[^;,\s]*))?)*)")
_LINK_PARAM = re.compile(r";\s*([^;,=\s]+)(?:\s*=\s*(?:\"([^\"]*)\"|([^;,\s]*)))?")


def license_links(values: Iterable[str | bytes], base: str) -> list[str]:
    """The RSL files a page links to in its ``Link`` header lines (*values*, as received):
    ``<url>; rel="license"; type="application/rsl+xml"`` (RSL's guide, "Adding RSL to HTTP
    headers"; ``rel`` may list several relations), resolved against the page's URL *base*, in
    order, each once, at most ``MAX_LICENSE_LINKS``. A link without that type is no RSL file
    (a Creative Commons page, say) and is not read. Never raises on content."""
    found: list[str] = []
    for value in values:
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("latin-1")
        position = 0
        while len(found) < MAX_LICENSE_LINKS:
            match = _LINK_VALUE.match(value, position)
            if match is None:
                break
            position = match.end()
            params: dict[str, str] = {}  # the first non-empty value of each, as written
            for name, quoted, token in _LINK_PARAM.findall(match.group(2)):
                if not params.get(name.lower()):
                    params[name.lower()] = quoted or token
            if _is_rsl_link(params.get("rel", ""), params.get("type", "")):
                _add_link(found, match.group(1), base)
            comma = value.find(",", position)
            if comma < 0:
                break
            position = comma + 1
    return found


def _is_rsl_link(rels: str, media_type: str) -> bool:
    """A ``rel`` listing ``license`` and a ``type`` of RSL's media type (parameters aside)."""
    kind = media_type.partition(";")[0].strip().lower()
    return "license" in rels.lower().split() and kind == RSL_MEDIA_TYPE


def _add_link(found: list[str], href: str, base: str) -> None:
    href = href.strip()
    if not href or len(href) > MAX_LICENSE_URL_CHARS or len(found) >= MAX_LICENSE_LINKS:
        return
    try:
        url = urljoin(base, href)
    except ValueError:
        return
    if _origin(url) is not None and url not in found:
        found.append(url)


def _covers(tokens: frozenset[str], purpose: str) -> str | None:
    """The first token (sorted) of *tokens* that speaks of *purpose*, or None."""
    return next((t for t in sorted(tokens) if purpose in RSL_USAGES.get(t, ())), None)


def _refusal(licence: RslLicense, content: RslContent, purpose: str) -> str | None:
    """Why *licence* refuses *purpose* (prohibited, not among its permits, or permitted only on
    terms a crawl does not hold), or None when it permits it on terms held."""
    prohibited = _covers(licence.prohibits.get("usage", frozenset()), purpose)
    if prohibited is not None:
        return f"prohibits {prohibited}"
    permits = licence.permits.get("usage")
    if permits is not None and _covers(permits, purpose) is None:
        return f"permits only {', '.join(sorted(permits)) or 'nothing'}, not {purpose}"
    if content.server is not None:
        return f"a licence must be obtained from the licence server {content.server}"
    if not licence.terms_held:
        return f"{purpose} only with payment ({', '.join(licence.payments)})"
    return None


# -- reading ----------------------------------------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> str | None:
    """``scheme://host:port`` of an absolute URL, lower-cased, default ports dropped; None for
    a path or a URL that does not split."""
    if not _SCHEME.match(url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        return None
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _compiled_url(url: str) -> tuple[str | None, str] | None:
    """A content url as matched: (origin or None for a path, the RFC 9309 path pattern,
    %-escaped as robots.txt rules are); None for a value that is neither."""
    origin = _origin(url)
    if origin is not None:
        return origin, escape_pattern(path_params_query(url))
    if url.startswith(("/", "*")):
        return None, escape_pattern(url)
    return None


class _Abort(Exception):
    """Raised inside a handler to stop the parse: the file states nothing."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Reader:
    """expat handlers that build the contents, within the bounds."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.problems: list[RslProblem] = []
        self.contents: list[RslContent] = []
        self.roles: list[str | None] = []  # the open elements, as RSL reads them
        self.elements = 0
        self.plain_names = False  # <rsl> without namespace: unqualified names are RSL's
        # The <content> and <license> being read: the fields of their RslContent and RslLicense.
        self.content: dict[str, Any] | None = None
        self.licence: dict[str, Any] | None = None
        self.term: tuple[str, str, int] | None = None  # (permits|prohibits, type, line)
        self.text: list[str] = []
        self.text_size = 0

    def problem(self, code: str, message: str, line: int | None = None) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            where = self.parser.CurrentLineNumber if line is None else line
            self.problems.append(RslProblem(code, where, message))

    def _local(self, name: str) -> str | None:
        namespace, _, local = name.rpartition(" ")
        if namespace == RSL_NAMESPACE or (not namespace and self.plain_names):
            return local
        return None

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if self.elements > MAX_RSL_ELEMENTS:
            raise _Abort("too-many-elements", f"more than {MAX_RSL_ELEMENTS} elements")
        if len(self.roles) >= MAX_RSL_DEPTH:
            raise _Abort("too-deep", f"elements nested deeper than {MAX_RSL_DEPTH}")
        if not self.roles:
            if name == "rsl":
                self.plain_names = True
                self.problem("no-namespace", f"<rsl> without xmlns={RSL_NAMESPACE!r}")
            elif name != f"{RSL_NAMESPACE} rsl":
                raise _Abort("not-rsl", f"the root element is {name.rpartition(' ')[2][:80]!r}")
            self.roles.append("rsl")
            return
        parent = self.roles[-1]
        local = self._local(name)
        role: str | None = None
        if local == "content" and parent == "rsl":
            role = self._start_content(attributes)
        elif local == "license" and parent == "content":
            role = "license"
            self.licence = {"permits": {}, "prohibits": {}, "payments": []}
        elif local in ("permits", "prohibits") and parent == "license":
            kind = attributes.get("type", "usage").strip().lower()
            if kind in _TERM_TYPES:
                role = local
                self.term = (local, kind, self.parser.CurrentLineNumber)
                self.text, self.text_size = [], 0
            else:
                self.problem("unknown-term-type", f"<{local} type={kind[:40]!r}> skipped")
        elif local == "payment" and parent == "license":
            role = "payment"
            kind = attributes.get("type", "free").strip().lower()
            if kind not in RSL_PAYMENT_TYPES:
                self.problem("unknown-payment", f"payment type {kind[:40]!r} is not RSL 1.0's")
            assert self.licence is not None
            self.licence["payments"].append(kind)
        self.roles.append(role)

    def _start_content(self, attributes: dict[str, str]) -> str | None:
        url = attributes.get("url", "").strip()
        compiled = _compiled_url(url) if url else None
        if compiled is None:
            shown = repr(url[:80]) if url else "no url"
            self.problem("bad-content", f"<content> with {shown}: skipped")
            return None
        server = attributes.get("server", "").strip() or None
        self.content = {"url": url, "server": server, "licenses": [], "_match": compiled}
        return "content"

    def data(self, text: str) -> None:
        if self.term is None:
            return
        self.text_size += len(text)
        if self.text_size > MAX_RSL_TEXT_CHARS:
            raise _Abort("text-too-long", f"a text longer than {MAX_RSL_TEXT_CHARS} characters")
        self.text.append(text)

    def end(self, name: str) -> None:
        role = self.roles.pop()
        if role in ("permits", "prohibits") and self.term is not None:
            self._end_term()
        elif role == "license" and self.licence is not None and self.content is not None:
            licenses = self.content["licenses"]
            self.licence["payments"] = tuple(self.licence["payments"])
            licenses.append(RslLicense(position=len(licenses) + 1, **self.licence))
            self.licence = None
        elif role == "content" and self.content is not None:
            content = self.content
            if not content["licenses"]:
                self.problem("no-license", f"content {content['url'][:80]!r} has no licence")
            content["licenses"] = tuple(content["licenses"])
            self.contents.append(RslContent(position=len(self.contents) + 1, **content))
            self.content = None

    def _end_term(self) -> None:
        assert self.term is not None and self.licence is not None
        element, kind, line = self.term
        self.term = None
        tokens = frozenset(t for t in re.split(r"[\s,]+", "".join(self.text).lower()) if t)
        if kind == "usage":
            for token in sorted(tokens - RSL_USAGES.keys()):
                self.problem("unknown-usage", f"usage {token[:40]!r} is not RSL 1.0's", line)
        terms = self.licence[element]
        terms[kind] = terms.get(kind, frozenset()) | tokens


def _refuse(code: str, message: str) -> Any:
    def handler(*_: object) -> Any:
        raise _Abort(code, message)

    return handler


def parse_rsl(content: bytes | str, url: str = "") -> RslFile:
    """Parse an RSL file fetched from *url*. Never raises on content: a body that is not a
    usable RSL document is an RslFile with ``valid`` False, its problems listed."""
    if isinstance(content, str):
        body = content.encode("utf-8", "surrogatepass")
        encoding: str | None = "utf-8"  # (text: whatever its declaration says, it is decoded)
    elif isinstance(content, (bytes, bytearray, memoryview)):
        body, encoding = bytes(content), None
    else:
        raise TypeError(f"content must be bytes or str, not {type(content).__name__}")
    if len(body) > MAX_RSL_BYTES:
        problem = RslProblem("too-large", 0, f"{len(body)} bytes, more than {MAX_RSL_BYTES}")
        return RslFile(url=url, contents=(), problems=(problem,), valid=False)
    parser = expat.ParserCreate(encoding, " ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    reader = _Reader(parser)
    parser.StartDoctypeDeclHandler = _refuse("dtd-refused", "a DOCTYPE is refused")
    parser.EntityDeclHandler = _refuse("dtd-refused", "an entity declaration is refused")
    parser.ExternalEntityRefHandler = _refuse("dtd-refused", "an external entity is refused")
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.data
    parser.buffer_text = True
    try:
        parser.Parse(body, True)
    except _Abort as abort:
        failure = RslProblem(abort.code, parser.CurrentLineNumber, str(abort))
    except (expat.ExpatError, ValueError, LookupError) as error:  # (an unknown encoding)
        line = getattr(error, "lineno", 0) or 0
        failure = RslProblem("not-xml", line, f"not well-formed XML: {error}")
    else:
        contents, problems = tuple(reader.contents), tuple(reader.problems)
        return RslFile(url=url, contents=contents, problems=problems, valid=True)
    return RslFile(url=url, contents=(), problems=(failure, *reader.problems), valid=False)
