"""The scrapy_rerp engine on its own: no Scrapy, no network beyond 127.0.0.1.

Run it from the repository root::

    python examples/engine_quickstart.py

It shows, in three parts:

1. ``scrapy_rerp.parse()`` with RFC 9309 semantics (the default): verdicts for a crawler that
   sends a full User-Agent header, the robots.txt line that decided each one, Crawl-delay,
   Request-rate, the sitemaps and the parse warnings;
2. the same file read with GYM2008 semantics (robotexclusionrulesparser's default), where
   the first matching rule wins instead of the longest one;
3. ``RobotExclusionRulesParser``, used exactly as code written for robotexclusionrulesparser
   uses it: ``parse()`` a string, or ``fetch()`` a URL (here from a local server).
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import scrapy_rerp
from scrapy_rerp import GYM2008, RFC9309, RobotExclusionRulesParser, RobotsTxt

ROBOTS_TXT = """\
# robots.txt of www.example.com
User-agent: *
Disallow: /cart
Crawl-delay: 5

User-agent: ExampleBot
Disallow: /search
Allow: /search/about
Disallow: /*.pdf$
Crawl-delay: 1.5
Request-rate: 30/60s
Cache-for: forever

Sitemap: https://www.example.com/sitemap.xml
Sitemap: https://www.example.com/news/sitemap.xml
"""

#: What a crawler sends; the engine picks the product token ("ExampleBot") out of it.
USER_AGENT = "Mozilla/5.0 (compatible; ExampleBot/2.1; +https://www.example.com/bot.html)"
OTHER_AGENT = "OtherBot/0.9"

URLS = [
    "https://www.example.com/",
    "https://www.example.com/cart",
    "https://www.example.com/search?q=robots",
    "https://www.example.com/search/about",
    "https://www.example.com/manual.pdf",
    "https://www.example.com/manual.pdf?download=1",
]


def verdict(robots: RobotsTxt, url: str, user_agent: str) -> str:
    """One line: allowed/blocked, and which robots.txt line decided (and why)."""
    decision = robots.decide(url, user_agent)
    word = "allowed" if decision.allowed else "BLOCKED"
    if decision.line is None:
        return f"{word:8} {url:48} ({decision.reason})"
    return f"{word:8} {url:48} line {decision.line}: {decision.rule} ({decision.reason})"


def part_rfc9309() -> RobotsTxt:
    print("1. RFC 9309 (the default syntax)")
    print(f"   User-Agent: {USER_AGENT}")
    robots = scrapy_rerp.parse(ROBOTS_TXT)  # syntax=RFC9309
    for url in URLS:
        print("   " + verdict(robots, url, USER_AGENT))
    print(f"   crawl_delay  = {robots.crawl_delay(USER_AGENT)}")
    rate = robots.request_rate(USER_AGENT)
    if rate is not None:
        print(f"   request_rate = {rate.requests} requests per {rate.seconds:g} s")
    print(f"   sitemaps     = {list(robots.sitemaps)}")
    for warning in robots.warnings:
        print(f"   warning: line {warning.line}: {warning.text!r}: {warning.message}")
    print(f"   Another crawler ({OTHER_AGENT}) gets the '*' group:")
    print("   " + verdict(robots, "https://www.example.com/cart", OTHER_AGENT))
    print(f"   crawl_delay({OTHER_AGENT!r}) = {robots.crawl_delay(OTHER_AGENT)}")
    return robots


def part_gym2008(rfc: RobotsTxt) -> None:
    print()
    print("2. The same file in GYM2008 syntax (first match wins, not the longest match)")
    gym = scrapy_rerp.parse(ROBOTS_TXT, GYM2008)
    differences = 0
    for url in URLS:
        a, b = rfc.decide(url, USER_AGENT), gym.decide(url, USER_AGENT)
        if a.allowed != b.allowed:
            differences += 1
            print(f"   {url}")
            for name, d in (("RFC9309", a), ("GYM2008", b)):
                word = "allowed" if d.allowed else "BLOCKED"
                print(f"     {name}: {word} by line {d.line}: {d.rule} ({d.reason})")
    print(f"   {differences} of {len(URLS)} verdicts differ")


@contextmanager
def robots_server(body: str) -> Iterator[str]:
    """Serve ``body`` as /robots.txt on 127.0.0.1 (a free port); yield its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            data = body.encode("utf-8") if self.path == "/robots.txt" else b"not found"
            self.send_response(200 if self.path == "/robots.txt" else 404)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/robots.txt"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def part_rerp() -> None:
    print()
    print("3. RobotExclusionRulesParser, as robotexclusionrulesparser code uses it")
    rerp = RobotExclusionRulesParser()
    rerp.parse(ROBOTS_TXT)
    # GYM2008 unless told otherwise, as in robotexclusionrulesparser.
    for url in ("/search/about", "/search/about?x=1", "/index.html"):
        print(f"   rerp.is_allowed('ExampleBot', {url!r}) = {rerp.is_allowed('ExampleBot', url)}")
    print(
        "   rerp.is_allowed('ExampleBot', '/search/about', syntax=RFC9309) = "
        f"{rerp.is_allowed('ExampleBot', '/search/about', syntax=RFC9309)}"
    )
    print(f"   rerp.get_crawl_delay('ExampleBot') = {rerp.get_crawl_delay('ExampleBot')}")
    print(f"   rerp.sitemaps = {rerp.sitemaps}")

    with robots_server(ROBOTS_TXT) as url:
        fetched = RobotExclusionRulesParser()
        fetched.user_agent = USER_AGENT  # sent as the User-Agent header by fetch()
        fetched.fetch(url, timeout=5)
        print(f"   fetch({url}): response_code = {fetched.response_code}")
        print(f"   is_expired = {fetched.is_expired}")
        print(f"   is_allowed('ExampleBot', '/cart') = {fetched.is_allowed('ExampleBot', '/cart')}")
        print(f"   is_allowed('OtherBot', '/cart') = {fetched.is_allowed('OtherBot', '/cart')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="scrapy_rerp's robots.txt engine on its own: verdicts, syntaxes, rerp API."
    )
    parser.parse_args(argv)
    print(f"scrapy_rerp {scrapy_rerp.__version__}: robots.txt under test")
    for number, line in enumerate(ROBOTS_TXT.splitlines(), 1):
        print(f"  {number:2} | {line}")
    print()
    rfc = part_rfc9309()
    part_gym2008(rfc)
    part_rerp()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
