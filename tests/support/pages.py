"""Pages with robots directives, and crawls of them with the add-on: what the page-directive
tests (crawl and command line) share."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PIL import Image
from scrapy.http import Response, TextResponse

from scrapy_rerp import PageDirectives
from tests.support.servers import ListSpider, Reply

#: A crawler's User-Agent header, whose product token is MyBot.
MYBOT = "Mozilla/5.0 (compatible; MyBot/1.0; +http://example.com/bot)"


def addon(**settings: Any) -> dict[str, Any]:
    """Settings for a crawl with the add-on: page directives are on by default."""
    return {"ADDONS": {"scrapy_rerp.Addon": 100}, "RERP_UNREACHABLE_MAX_WAIT": 5, **settings}


def html(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


def links(*paths: str) -> str:
    return "".join(f'<a href="{path}">{path}</a>' for path in paths)


def page(head: str = "", body: str = "", headers: dict[str, str] | None = None) -> Reply:
    """An HTML page: *head* goes in its head (after a title), *body* in its body."""
    return Reply(body=html(head, body), headers=headers or {}, content_type="text/html")


def robots_meta(name: str, content: str) -> str:
    return f'<meta name="{name}" content="{content}">'


def png() -> bytes:
    """A 4x4 PNG, which ImagesPipeline can store."""
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (30, 30, 200)).save(out, format="PNG")
    return out.getvalue()


#: Pages whose directives forbid purposes, for MyBot; /noimageai and /plain have an image.
USAGE_PAGES: dict[str, Reply] = {
    "/noindex": page(body="text", headers={"X-Robots-Tag": "noindex"}),
    "/noai": page(robots_meta("robots", "noai"), "text"),
    "/noimageai": page(robots_meta("MyBot", "noimageai"), '<img src="/pic.png">'),
    "/expired": page(
        body="text", headers={"X-Robots-Tag": "unavailable_after: 2001-01-01T00:00:00Z"}
    ),
    "/nosnippet": page(robots_meta("robots", "nosnippet, noarchive"), "text"),
    "/plain": page(body='<img src="/pic.png">'),
    "/image.png": Reply(
        body=b"\x89PNG...", content_type="image/png", headers={"X-Robots-Tag": "noimageai"}
    ),
}


class FollowSpider(ListSpider):
    """Yields one item per page and follows every link of an HTML page; keeps each page's
    ``response.meta["rerp_page"]`` and ``["rerp_page_usage"]`` as its callback saw them."""

    name = "follow"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: dict[str, tuple[PageDirectives | None, Any]] = {}

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        super().parse(response)
        self.seen[response.url] = (
            response.meta.get("rerp_page"),
            response.meta.get("rerp_page_usage"),
        )
        yield {"url": response.url}
        if isinstance(response, TextResponse):
            images = response.css("img::attr(src)").getall()
            if images:
                yield {"url": response.url, "image_urls": [response.urljoin(i) for i in images]}
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse)


def feed(tmp_path: Path, **settings: Any) -> dict[str, Any]:
    """Settings with the items exported to ``items.jl`` in *tmp_path*."""
    return {"FEEDS": {str(tmp_path / "items.jl"): {"format": "jsonlines"}}, **settings}


def exported(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "items.jl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def kept(tmp_path: Path) -> list[tuple[str, bool]]:
    """(path, an image item?) of each exported item."""
    return sorted(
        (item["url"].split("/", 3)[3], "image_urls" in item) for item in exported(tmp_path)
    )
