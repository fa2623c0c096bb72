"""URL helpers: a request's URL is already as a crawl reads it, origins, redirect targets."""

from __future__ import annotations

import random
from urllib.parse import urlparse, urlsplit

import pytest
from scrapy import Request

from scrapy_rerp.core.urls import origin_of, origin_of_parts, redirect_target, rules_url

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
    ],
)
def test_unfollowable_redirect_targets(location: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        redirect_target("http://h/robots.txt", location)
