"""A document kind registered from outside the package, as a project would: each origin's
``/humans.txt`` (humanstxt.org), its lines kept. Registered by ``RERP_DOCUMENTS`` only
(tests/crawl/test_documents.py, tests/fleet/test_crawls.py): nothing in the package names it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core.documents import DocumentKind, DocumentStats

if TYPE_CHECKING:
    from scrapy_rerp.core.body import Body
    from scrapy_rerp.core.settings import RerpSettings

#: ``request.meta`` (so ``response.meta``): the origin's humans.txt, once known.
HUMANS_META = "tests_humans_txt"
#: What an origin without a humans.txt has.
NO_HUMANS: tuple[str, ...] = ()


def read_humans(body: Body) -> tuple[str, ...]:
    text = body.data.decode(body.charset or "utf-8", "replace")
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def humans_txt(settings: RerpSettings) -> DocumentKind:
    """The factory ``RERP_DOCUMENTS`` names: every crawl that registers it reads humans.txt."""
    return DocumentKind(
        name="humans.txt",
        path="/humans.txt",
        token="humans",
        stats=DocumentStats.under("robotstxt/humans"),
        stored=True,
        parse=read_humans,
        absent=lambda: NO_HUMANS,
        absent_means="no humans named",
        meta_key=HUMANS_META,
    )


def not_a_kind(settings: RerpSettings) -> Any:
    return {"path": "/humans.txt"}


def failing(settings: RerpSettings) -> DocumentKind:
    raise ValueError("no humans here")


def humans_of(meta: dict[str, Any]) -> tuple[str, ...] | None:
    """The humans.txt a page's request carried (None: none attached)."""
    attached = meta.get(HUMANS_META)
    return None if attached is None else attached.document


def tdmrep_again(settings: RerpSettings) -> DocumentKind:
    """A second registration of tdmrep.json: the kind is the base's already."""
    from scrapy_rerp.core.documents import tdmrep_json

    return tdmrep_json()


def named_by_pages(settings: RerpSettings) -> DocumentKind:
    """humans.txt, named by pages too, but not located: it cannot be served."""
    return dataclasses.replace(humans_txt(settings), locate_page=lambda url, links, head: ())
