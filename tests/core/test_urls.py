"""URL helpers: a request's URL is already as a crawl reads it, origins, redirect targets, and
whether a request obeys robots.txt."""

from __future__ import annotations

import ast
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlsplit

import pytest
from scrapy import Request

import scrapy_rerp
from scrapy_rerp.core import urls
from scrapy_rerp.core.urls import (
    obeys_robots_txt,
    opts_out_of_robots_txt,
    origin_of,
    origin_of_parts,
    page_obeys_robots_txt,
    redirect_target,
    rules_url,
    without_userinfo,
)

PIECES = ["a", "Z", "0", "-", ".", "_", "~", "/", "?", "#", "&", "=", "%", "%41", "%zz", " ", "\\"]
PIECES += ["ä", "ß", "€", "😀", "[", "]", "|", "'", '"', "<", ">", "{", "}", "^", "`", ";", ":"]
PIECES += ["@", "!", "$", "(", ")", "*", "+", ",", "\t"]


def random_urls(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    hosts = ["h", "H.example", "bücher.example", "h:8080", "127.0.0.1:1"]
    urls = []
    for _ in range(n):
        path = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 25)))
        urls.append(f"{rng.choice(['http', 'https'])}://{rng.choice(hosts)}/{path}")
    return urls


def test_a_request_s_url_is_what_the_crawl_matches() -> None:
    # The middleware asks the engine with request.url itself: it must be the fixed point of
    # rules_url, which the parser adapter and the command line apply.
    checked = 0
    for url in random_urls(3000, seed=7):
        try:
            carried = Request(url).url
        except ValueError:
            continue  # no request can be made of it: nothing reaches the middleware
        assert rules_url(carried) == carried, url
        checked += 1
    assert checked > 2500


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://H.example/x", "http://h.example:80"),
        ("https://h/x", "https://h:443"),
        ("http://h:8080/x", "http://h:8080"),
        ("http://user:pw@h/x", "http://h:80"),
        ("http://[::1]:81/x", "http://[::1]:81"),
        ("HTTP://h/x", "http://h:80"),
        ("ftp://h/x", "ftp://h:21"),
        ("s3://bucket/x", "s3://bucket"),
        ("http://h:99999/x", "http://h:80"),  # no port in range: the default one
    ],
)
def test_origins_are_scheme_host_and_port(url: str, origin: str) -> None:
    assert origin_of(url) == origin
    # Asked again (the answer is cached per scheme and netloc), and of Scrapy's parsed URL.
    assert origin_of(url) == origin
    assert origin_of_parts(urlparse(url)) == origin


def test_an_origin_is_the_same_for_a_url_split_or_parsed() -> None:
    for url in random_urls(500, seed=11):
        try:
            split, parsed = urlsplit(url), urlparse(url)
        except ValueError:
            continue
        assert origin_of_parts(split) == origin_of_parts(parsed) == origin_of(url), url


@pytest.mark.parametrize(
    ("location", "target"),
    [
        ("/rules.txt", "http://h/rules.txt"),
        ("https://cdn.example/robots.txt", "https://cdn.example/robots.txt"),
        ("  //other.example/r  ", "http://other.example/r"),
    ],
)
def test_redirect_targets_are_resolved(location: str, target: str) -> None:
    assert redirect_target("http://h/robots.txt", location) == target


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("file:///etc/passwd", "file scheme"),
        ("data:,x", "data scheme"),
        ("ftp://h/robots.txt", "ftp scheme"),
        ("http://[::1", "malformed"),
        ("http://h:99999/", "malformed"),
        ("https://:80/x", "no host"),
        ("http://user:s3cret@h/robots.txt", "credentials are not followed"),
        ("//token@h/robots.txt", "credentials are not followed"),
    ],
)
def test_unfollowable_redirect_targets(location: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        redirect_target("http://h/robots.txt", location)


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("http://user:s3cret@h/x", "http://***@h/x"),
        ("//token@h:80/x?a=@", "//***@h:80/x?a=@"),
        ("http://h/a@b", "http://h/a@b"),  # an @ in the path is no credential
        ("mailto:webmaster@example.com", "mailto:webmaster@example.com"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_a_location_is_quoted_without_its_credentials(location: str, shown: str) -> None:
    assert without_userinfo(location) == shown


@pytest.mark.parametrize(
    ("url", "meta", "obeys", "opts_out", "page"),
    [
        ("http://h/x", {}, True, False, True),
        ("https://h/x", {"other": 1}, True, False, True),
        ("ftp://h/x", {}, True, False, True),
        ("http://h/x", {"dont_obey_robotstxt": True}, False, True, False),
        ("http://h/x", {"dont_obey_robotstxt": 1}, False, True, False),
        ("http://h/x", {"dont_obey_robotstxt": False}, True, False, True),
        ("http://h/x", {"dont_obey_robotstxt": None}, True, False, True),
        ("data:,x", {}, False, False, False),
        ("file:///tmp/x", {}, False, False, False),
        ("s3://bucket/x", {}, False, False, False),
        ("data:,x", {"dont_obey_robotstxt": True}, False, True, False),
        # The robots.txt URL itself obeys (the gate serves or decides it); its content is no
        # page the Content-Usage check speaks of.
        ("http://h/robots.txt", {}, True, False, False),
        ("http://h/a/robots.txt", {}, True, False, False),
        ("http://h/robots.txt?x=1", {}, True, False, True),
        ("ftp://h/robots.txt", {}, True, False, False),
    ],
)
def test_whether_a_request_obeys_robots_txt(
    url: str, meta: dict[str, Any], obeys: bool, opts_out: bool, page: bool
) -> None:
    assert obeys_robots_txt(url, meta) is obeys
    assert opts_out_of_robots_txt(meta) is opts_out
    assert page_obeys_robots_txt(url, meta) is page
    # Asked with a request's own URL and meta, as every layer asks: Scrapy writes the scheme in
    # lower case.
    request = Request(url.replace("http", "HTTP", 1), meta=meta)
    assert obeys_robots_txt(request.url, request.meta) is obeys
    assert page_obeys_robots_txt(request.url, request.meta) is page


def _literals(path: Path) -> list[object]:
    """The string constants and the tuples of them in a module (docstrings and comments are no
    test)."""
    found: list[object] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            found.append(ast.literal_eval(node))
    return found


def test_whether_a_request_obeys_robots_txt_is_decided_in_one_place() -> None:
    # The opt-out key and the schemes with a robots.txt are spelt in core/urls.py only: every
    # other module asks obeys_robots_txt (or its named halves), or names DONT_OBEY_META.
    package = Path(scrapy_rerp.__file__).parent
    home = Path(urls.__file__)
    spelt = [
        f"{path.relative_to(package)}: {value!r}"
        for path in sorted(package.rglob("*.py"))
        if path != home
        for value in _literals(path)
        if value in ("dont_obey_robotstxt", urls.OBEYED_SCHEMES)
    ]
    assert spelt == []
