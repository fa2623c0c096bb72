"""What reading a page's robots meta tags costs a crawl, against parsing the page with a selector.

``PageDirectivesMiddleware`` reads meta tags with ``scrapy_rerp.crawl.head_meta.head_meta_tags``:
the head is cut at its first ``<body`` tag, and parsed with a Scrapy selector only when it holds
``<meta`` and names ``robots`` or the crawler. The peer is the plain way with Scrapy's
selectors: the whole page parsed, ``//head//meta[@name]`` selected. The engine's html.parser
reader (``robots_meta_tags``, the command line's) is measured too.

Pages are made up, the same on every run: heads of 2, 8 and 32 KiB (metas, links, an inline
script), bodies of 20 and 200 KiB (paragraphs and links), each without and with a
``<meta name="robots">``. Each reader's time per page is the best of ``--repeats`` rounds; the
report gives microseconds per page and the crawl's reader as a fraction of the peer. Every
reader must find the same robots meta tags on every page, or the run fails.

Usage::

    python benchmarks/bench_page_heads.py --write-results
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path

from scrapy.selector import Selector

from scrapy_rerp.crawl.head_meta import head_meta_tags
from scrapy_rerp.engine import robots_meta_tags

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_write_results_argument, write_results  # noqa: E402

DEFAULT_RESULTS = Path(__file__).resolve().parent / "PAGE_HEAD_RESULTS.md"
CRAWLER = ("robots", "mybot")  # the names the crawl asks for: robots, and its product token
ROBOTS_META = '<meta name="robots" content="noindex, nofollow">'


def make_head(kib: int) -> str:
    parts = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="description" content="' + "words " * 30 + '">',
        *(f'<meta property="og:p{i}" content="value {i}">' for i in range(8)),
        '<link rel="stylesheet" href="/style.css"><title>A page</title>',
    ]
    head = "".join(parts)
    script = "<script>var data = {" + "k: 1, " * 16 + "};</script>"
    while len(head) < kib * 1024:
        head += script + '<link rel="preload" href="/font.woff2" as="font">'
    return head


def make_body(kib: int) -> str:
    paragraph = (
        '<div class="item"><p>' + "lorem ipsum dolor " * 8 + '<a href="/next">next</a></p></div>'
    )
    return paragraph * (kib * 1024 // len(paragraph) + 1)


def pages() -> list[tuple[str, bytes]]:
    made = []
    for head_kib in (2, 8, 32):
        for body_kib in (20, 200):
            for robots in (False, True):
                head = make_head(head_kib) + (ROBOTS_META if robots else "")
                body = make_body(body_kib)
                html = f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"
                meta = "robots meta" if robots else "no robots meta"
                label = f"head {head_kib} KiB, body {body_kib} KiB, {meta}"
                made.append((label, html.encode()))
    return made


def whole_page_selector(html: bytes) -> list[tuple[str, str]]:
    found = []
    for tag in Selector(text=html.decode("utf-8", "replace")).xpath("//head//meta[@name]"):
        content = tag.attrib.get("content")
        if content is not None:
            found.append((tag.attrib["name"].strip().lower(), content))
    return found


READERS: dict[str, Callable[[bytes], list[tuple[str, str]]]] = {
    "crawl": lambda html: head_meta_tags(html, mentioning=CRAWLER),
    "head, always parsed": head_meta_tags,
    "whole page (peer)": whole_page_selector,
    "engine (html.parser)": robots_meta_tags,
}


def robots_tags(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, content) for name, content in found if name in CRAWLER]


def measure(repeats: int, number: int) -> list[tuple[str, dict[str, float]]]:
    rows = []
    for label, html in pages():
        answers = {name: robots_tags(read(html)) for name, read in READERS.items()}
        if len({repr(answer) for answer in answers.values()}) != 1:
            raise SystemExit(f"the readers disagree on {label}: {answers}")
        times = {
            name: min(timeit.repeat(lambda r=read, h=html: r(h), number=number, repeat=repeats))
            / number
            * 1e6
            for name, read in READERS.items()
        }
        rows.append((label, times))
    return rows


def report(rows: list[tuple[str, dict[str, float]]]) -> str:
    names = list(READERS)
    lines = [
        "Microseconds per page (best of the rounds); the last column is the crawl's reader as a",
        "fraction of the whole-page selector.",
        "",
        "| page | " + " | ".join(names) + " | crawl / peer |",
        "|" + "---|" * (len(names) + 2),
    ]
    for label, times in rows:
        cells = " | ".join(f"{times[name]:.1f}" for name in names)
        ratio = times["crawl"] / times["whole page (peer)"]
        lines.append(f"| {label} | {cells} | {ratio:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds per reader and page")
    parser.add_argument("--number", type=int, default=20, help="readings per round")
    parser.add_argument("--quick", action="store_true", help="one round of two readings")
    add_write_results_argument(parser, DEFAULT_RESULTS)
    parser.add_argument("--results", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repeats, number = (1, 2) if args.quick else (args.repeats, args.number)
    text = report(measure(repeats, number))
    print(text)
    if args.write_results is not None:
        write_results(
            args.results or args.write_results,
            "Robots meta tags: the crawl's head reader against a whole-page selector",
            __file__,
            text,
            list(argv if argv is not None else sys.argv[1:]),
            [f"{repeats} rounds of {number} readings per reader and page"],
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
