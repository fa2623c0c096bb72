"""Page-level robots rules (``X-Robots-Tag``, ``Robots-Tag``, ``<meta name="robots">``) as data.

One table: each rule once, with the spellings read as it, the kind of value it takes and the
restrictions it stands for. The readers (``_page``) and the purpose table (``PAGE_RULE_USAGE``)
use only this table, so that a new rule or a new tolerated spelling is a change of data.

Where each rule is documented:

- Google: developers.google.com/search/docs/crawling-indexing/robots-meta-tag ("Robots meta
  tag, data-nosnippet, and X-Robots-Tag specifications"): all, noindex, nofollow, none,
  nosnippet, indexifembedded, max-snippet, max-image-preview, max-video-preview, notranslate,
  noimageindex, unavailable_after; noarchive until 2024 (Google's cache is gone, the rule stays
  in use by other engines).
- Bing Webmaster Guidelines (robots meta tags): noarchive, and ``nocache`` as its synonym.
- draft-illyes-repext-03: noindex and nosnippet, the only two rules it registers.
- DeviantArt's 2022 proposal, read by img2dataset and crawler-commons: noai, noimageai.
- crawler-commons' ``KnownSimpleDirectives`` (robots_tag package): the same list plus the
  permissive index, follow, archive and the retired nositelinkssearchbox.
- noodp and noydir: the Open Directory and Yahoo! Directory opt-outs, retired with those
  directories and still common in pages; read so that they are not warned about.

No source shows other spellings (``no-index``, ``no_index``...) in use by an engine, so none is
read: such a token is an unknown rule, with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "DATE",
    "IMAGE_PREVIEW",
    "IMAGE_PREVIEW_SIZES",
    "NUMBER",
    "PAGE_RULES",
    "PAGE_RULE_USAGE",
    "RESTRICTIONS",
    "SPELLINGS",
    "PageRule",
    "rule_named",
]

# The kinds of value a rule takes (``PageRule.value``); None: the rule takes no value.
DATE = "date"  # unavailable_after: a date and time (``_dates.read_date``)
NUMBER = "number"  # max-snippet, max-video-preview: an integer, -1 meaning no limit
IMAGE_PREVIEW = "image-preview"  # max-image-preview: one of IMAGE_PREVIEW_SIZES

# max-image-preview's values, most restrictive first.
IMAGE_PREVIEW_SIZES = ("none", "standard", "large")


@dataclass(frozen=True, repr=False, kw_only=True)
class PageRule:
    """One page-level rule: its name, the spellings read as it, the kind of value it takes
    (None, ``"date"``, ``"number"`` or ``"image-preview"``) and the restrictions it stands for
    (``none`` stands for noindex and nofollow; a permissive rule such as ``all`` for none)."""

    name: str
    value: str | None = None
    restricts: frozenset[str] = frozenset()
    spellings: tuple[str, ...] = ()
    documented_by: str = ""

    def __repr__(self) -> str:
        return f"PageRule({self.name!r})"


def _flag(name: str, documented_by: str, *spellings: str) -> PageRule:
    """A restrictive rule without a value, which restricts what its name says."""
    return PageRule(
        name=name,
        restricts=frozenset({name}),
        spellings=(name, *spellings),
        documented_by=documented_by,
    )


def _permissive(name: str, documented_by: str) -> PageRule:
    """A rule that restricts nothing: the default made explicit, or a retired opt-out."""
    return PageRule(name=name, spellings=(name,), documented_by=documented_by)


def _valued(name: str, value: str) -> PageRule:
    """A rule that takes a value (``value`` says which kind) and restricts nothing by itself."""
    return PageRule(name=name, value=value, spellings=(name,), documented_by=GOOGLE)


GOOGLE = "Google"
PAGE_RULES: tuple[PageRule, ...] = (
    _flag("noindex", "Google, Bing, draft-illyes-repext-03"),
    _flag("nofollow", GOOGLE),
    PageRule(
        name="none",
        restricts=frozenset({"noindex", "nofollow"}),
        spellings=("none",),
        documented_by=GOOGLE,
    ),
    _flag("noarchive", "Bing (nocache: Bing's synonym), Google until 2024", "nocache"),
    _flag("nosnippet", "Google, draft-illyes-repext-03"),
    _flag("noimageindex", GOOGLE),
    _flag("notranslate", GOOGLE),
    # Not a restriction: it lets an embedded page be indexed despite noindex.
    _permissive("indexifembedded", GOOGLE),
    _valued("unavailable_after", DATE),
    _valued("max-snippet", NUMBER),
    _valued("max-image-preview", IMAGE_PREVIEW),
    _valued("max-video-preview", NUMBER),
    _flag("noai", "DeviantArt (2022), crawler-commons"),
    _flag("noimageai", "DeviantArt (2022), crawler-commons"),
    _permissive("all", GOOGLE),
    _permissive("index", "crawler-commons, Bing"),
    _permissive("follow", "crawler-commons, Bing"),
    _permissive("archive", "crawler-commons"),
    _permissive("nositelinkssearchbox", "Google until 2024, crawler-commons"),
    _permissive("noodp", "Bing and Yahoo! until the directories closed"),
    _permissive("noydir", "Yahoo! until its directory closed"),
)

#: Every spelling read (lower case) -> its rule.
SPELLINGS: Mapping[str, PageRule] = MappingProxyType(
    {spelling: rule for rule in PAGE_RULES for spelling in rule.spellings}
)

#: The restrictions a statement can stand for, besides the flags' own names: ``noindex`` also
#: comes from an ``unavailable_after`` date that has passed, ``nosnippet`` from
#: ``max-snippet:0`` (Google: "equivalent to nosnippet").
RESTRICTIONS = frozenset().union(*(rule.restricts for rule in PAGE_RULES))

#: Usage category (the purposes of ``RERP_USAGE``) -> (restrictions that forbid it for any
#: content, restrictions that forbid it for images only). See docs/page-directives.rst.
#:
#: - search: noindex (and so ``none``, and ``unavailable_after`` once passed); for images also
#:   noimageindex. nosnippet, max-snippet and notranslate shape how a result is shown, not
#:   whether the page may be in an index, so they do not forbid search.
#: - train-ai: noai; for images also noimageai (DeviantArt: noai covers all the page's content,
#:   noimageai its images).
#: - ai-input: nosnippet (and max-snippet:0): Google states that nosnippet also keeps a page
#:   from being used as direct input for its AI answers; and noai, read as covering every AI
#:   use (its proposal names no narrower one); for images also noimageai.
#:
#: nofollow, noarchive, notranslate and the max-* limits forbid none of the purposes: they are
#: read and reported for what a crawl does with links, copies and previews.
PAGE_RULE_USAGE: Mapping[str, tuple[frozenset[str], frozenset[str]]] = MappingProxyType(
    {
        "search": (frozenset({"noindex"}), frozenset({"noimageindex"})),
        "train-ai": (frozenset({"noai"}), frozenset({"noimageai"})),
        "ai-input": (frozenset({"nosnippet", "noai"}), frozenset({"noimageai"})),
    }
)

_BY_NAME = {rule.name: rule for rule in PAGE_RULES}


def rule_named(name: str) -> PageRule:
    """The rule whose name is *name* (KeyError for an unknown name)."""
    return _BY_NAME[name]
