"""The ``scrapy-rerp`` arguments: one subcommand each, the options they share, and the types
that read ``--syntax``, ``--timeout`` and ``--usage``. A usage error exits with status 2."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, NoReturn

from scrapy_rerp.cli._output import EXIT_ERROR
from scrapy_rerp.cli._source import DEFAULT_AGENT, DEFAULT_TIMEOUT
from scrapy_rerp.core.settings import SYNTAX_NAMES, RerpSettingsError, syntax_from
from scrapy_rerp.core.version import __version__
from scrapy_rerp.engine import RFC9309, usage_category

FORMATS = ("text", "json")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _syntax(value: str) -> int:
    try:
        return syntax_from(value.strip() if not value.strip().isdigit() else int(value))
    except RerpSettingsError as error:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(SYNTAX_NAMES)} (or the constant 1, 2, 3)"
        ) from error


def _seconds(value: str) -> float:
    """``--timeout``: a positive, finite number of seconds."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {value!r}")
    return seconds


def _usage_categories(value: str) -> list[str]:
    """``--usage train-ai,search``: the categories named, as the engine names them."""
    names = [name for name in value.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected a usage category, e.g. train-ai")
    try:
        return [usage_category(name) for name in names]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


class _OneUrl(argparse.Action):
    """What follows ``explain``'s URL: nothing, and for more URLs a usage error of one line that
    says what to run (argparse's own would be the top-level usage, and "unrecognized
    arguments")."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values:
            urls = [namespace.url, *values]
            parser.exit(
                EXIT_ERROR,
                f"{parser.prog}: error: one URL at a time, not {len(urls)} ({' '.join(urls)}): "
                "run explain for each, or check ROBOTS URL... for the verdicts alone\n",
            )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="scrapy-rerp",
        description="What a crawler makes of a robots.txt: check URLs, explain a verdict, "
        "lint a file, fetch one as a crawl would, read a page's own directives, look into a "
        "robots.txt store, or run a demo crawl.",
        epilog="Exit status: 0 allowed / no problem; 1 disallowed (or, with check --usage, "
        "a usage disallowed) / problems found / an origin not in the store; 2 usage error, "
        "input that cannot be read (a store too), or a robots.txt that is not one (an HTML "
        "page, binary data).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    format_help = "text (default) or json: one JSON document on standard output"
    parser.add_argument("--format", choices=FORMATS, default="text", help=format_help)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    output = _Parser(add_help=False)
    # Also after the command's name; there, no default, or it would undo one given before it.
    output.add_argument("--format", choices=FORMATS, default=argparse.SUPPRESS, help=format_help)
    not_robots = _Parser(add_help=False)
    not_robots.add_argument(
        "--read-anyway",
        action="store_true",
        help="give the verdict even when ROBOTS is no robots.txt (an HTML or XML page, binary "
        "data), reading it as a crawler would; without it such input is an error (status 2)",
    )
    reading = _Parser(add_help=False)
    reading.add_argument(
        "--syntax",
        type=_syntax,
        default=RFC9309,
        help="rfc9309 (default), gym2008 or mk1996: how a crawler reads the file",
    )
    reading.add_argument(
        "--agent",
        "-A",
        default=DEFAULT_AGENT,
        help="the crawler's user agent: a product token or a whole User-Agent header (default "
        "*, a crawler no group names); also sent when ROBOTS is a URL",
    )
    reading.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds each download has, redirects included, from the DNS lookup to the last "
        f"byte: a robots.txt URL, a tdmrep.json (default {DEFAULT_TIMEOUT:g}); past them "
        "robots.txt counts as unreachable",
    )
    reading.add_argument(
        "--ignore-robots-txt",
        action="store_true",
        help="a URL that is no site's /robots.txt (a page) is downloaded only when the site's "
        "robots.txt lets a crawl download it, else it is an error (status 2); with this "
        "option it is downloaded all the same, and a note says so",
    )
    robots = _Parser(add_help=False)
    robots.add_argument(
        "robots",
        metavar="ROBOTS",
        help="robots.txt file, - for standard input, or http(s) URL (a site's, http://host/, "
        "means its robots.txt)",
    )

    check = commands.add_parser(
        "check",
        parents=[robots, reading, not_robots, output],
        help="say whether URLs may be crawled, and which line decided",
        description="Print ALLOWED or DISALLOWED for each URL, with the line that decided: the "
        "verdict a crawl gets. With --usage, also the site's AI usage preference for each "
        "category (allowed, disallowed or unknown) and the Content-Usage or Content-Signal "
        "line that states it; a usage disallowed makes the exit status 1. A ROBOTS that is no "
        "robots.txt (an HTML or XML page, binary data) gets no verdict (status 2) unless "
        "--read-anyway; a URL that is neither an absolute URL nor a path is an error.",
    )
    check.add_argument(
        "urls", metavar="URL", nargs="+", help="absolute URL (https://host/x) or path (/x)"
    )
    check.add_argument(
        "--usage",
        metavar="CATEGORY",
        action="extend",
        type=_usage_categories,
        default=[],
        help="also say whether each URL may be used for CATEGORY: train-ai, search or "
        "ai-input (Content-Signal's ai-train is train-ai); repeat it or separate with commas",
    )

    explain_ = commands.add_parser(
        "explain",
        parents=[robots, reading, not_robots, output],
        help="why a URL is allowed or not, in all three syntaxes",
        description="The group chosen for the user agent and why, every rule that matches the "
        "URL, the one that decides, and the verdict in RFC 9309, GYM2008 and MK1996. A ROBOTS "
        "that is no robots.txt (an HTML or XML page, binary data) gets no verdict (status 2) "
        "unless --read-anyway.",
    )
    explain_.add_argument(
        "url", metavar="URL", help="absolute URL (https://host/x) or path (/x): one at a time"
    )
    explain_.add_argument(
        "more_urls", nargs="*", default=[], action=_OneUrl, help=argparse.SUPPRESS
    )

    commands.add_parser(
        "lint",
        parents=[robots, reading, output],
        help="problems in a robots.txt, with line numbers",
        description="Problems with line numbers and a severity: rules outside groups, unknown "
        "and misspelled directives, lines without a colon, empty User-agent, invalid values, "
        "relative sitemaps, a file too large, UTF-16, HTML or binary, and every rule whose "
        "outcome differs between MK1996, GYM2008 and RFC 9309 (with a URL that shows it); then "
        "the groups and sitemaps.",
    )

    fetch = commands.add_parser(
        "fetch",
        parents=[reading, output],
        help="download robots.txt as a crawl would, and say what a crawler concludes",
        description="Download a robots.txt URL with the middleware's status policy, redirects, "
        "size cap and charset; print the status, the outcome (parsed, allow all, disallow all, "
        "unreachable), when it expires, the groups, sitemaps and crawl delay. A body that is no "
        "robots.txt (an HTML or XML page, binary data) is said to be none, with status 2.",
    )
    fetch.add_argument(
        "url", metavar="URL", help="the robots.txt URL (http or https), or the site's"
    )
    fetch.add_argument(
        "--store",
        metavar="PATH",
        help="a robots.txt store (RERP_STORE): its fresh copy of the site's robots.txt is used "
        "as a crawl uses it, without a download; an expired or absent one is downloaded. Read "
        "only: nothing is written to it",
    )

    store = commands.add_parser(
        "store",
        parents=[output],
        help="what a robots.txt store (RERP_STORE) holds, or one origin's stored robots.txt",
        description="List the origins a robots.txt store holds, one line each, sorted: when "
        "its copy was fetched, the status and outcome, until when it is fresh, its sha256 and "
        "its size; or, with ORIGIN, print that origin's stored robots.txt. Read only: a "
        "missing PATH is an error, and nothing is made or changed. Exit status 1 when ORIGIN "
        "is not in the store, 2 when the store cannot be read.",
    )
    store.add_argument("path", metavar="PATH", help="the store's file")
    store.add_argument(
        "origin",
        metavar="ORIGIN",
        nargs="?",
        help="an origin (https://example.com) or any URL of it: print its stored robots.txt",
    )

    audit = commands.add_parser(
        "audit",
        parents=[output],
        help="what evidence files (RERP_EVIDENCE) show: the robots.txt in force for a URL, an "
        "origin's robots.txt over time, items that should not be there",
        description="Read evidence files (JSON lines or WARC; paths, globs or directories; "
        "several workers' files together). audit FILES URL: the robots.txt in force for URL "
        "(at --at), URL decided against it again, and its decision records; exit 0 allowed, "
        "1 not, 3 no decision recorded for URL, 2 no robots.txt. Damaged input (a line that "
        "is no whole evidence record) is counted and named, and exits 2. audit FILES "
        "--origin ORIGIN: the origin's robots.txt over time, the rules added and removed, the "
        "pages downloaded under each. audit verify FILES ITEMS: every item's URL decided again "
        "against the robots.txt in force when it was fetched; exit 1 when an item should not "
        "be there or cannot be verified.",
    )
    audit.add_argument(
        "arguments",
        metavar="ARG",
        nargs="+",
        help="FILES... URL, or FILES... with --origin, or verify FILES... ITEMS (FILES: "
        "evidence files, globs or directories)",
    )
    audit.add_argument("--origin", help="an origin (or any URL of it): its robots.txt over time")
    audit.add_argument(
        "--purpose",
        type=lambda value: _usage_categories(value)[0],
        help="a usage category (train-ai, ai-input, search...): its preference too",
    )
    audit.add_argument("--at", help="an RFC 3339 time: the robots.txt in force then")
    audit.add_argument(
        "--url-field", default="url", help="verify: the items' field holding their page's URL"
    )
    audit.add_argument(
        "--provenance-field",
        default="rerp_provenance",
        help="verify: the items' provenance field (RERP_EVIDENCE_ITEM_FIELD)",
    )

    page = commands.add_parser(
        "page",
        parents=[output],
        help="a page's own robots directives, and what a crawl does with the page",
        description="Download a page and show its X-Robots-Tag, Robots-Tag and robots meta tags "
        "for the user agent, where each was stated, the site's robots.txt verdict for it, a "
        "Retry-After, whether a crawl follows its links, and whether a crawl may use it (and "
        "its images) for search, train-ai and ai-input. A page robots.txt disallows is not "
        "downloaded, as in a crawl, unless --ignore-robots-txt. Exit status 1 when a purpose "
        "may not.",
    )
    page.add_argument("url", metavar="URL", help="the page (http or https)")
    page.add_argument(
        "--ignore-robots-txt",
        action="store_true",
        help="download the page even when its robots.txt disallows it (or is unreachable), "
        "which a crawl never does, to read its directives; the output says so. Without it such "
        "a page is not downloaded",
    )
    page.add_argument(
        "--agent",
        "-A",
        default=DEFAULT_AGENT,
        help="the crawler's user agent: a product token or a whole User-Agent header (default "
        "*: only the statements for every crawler); also sent",
    )
    page.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds each download has, redirects included, from the DNS lookup to the last "
        f"byte: the site's robots.txt, the page, its origin's tdmrep.json (default "
        f"{DEFAULT_TIMEOUT:g} each)",
    )

    demo = commands.add_parser(
        "demo",
        parents=[output],
        help="a polite Scrapy crawl of two local sites (needs Scrapy)",
        description="A self-contained Scrapy crawl with scrapy_rerp's add-on, of two sites run "
        "on 127.0.0.1 for the purpose, and a report of what each server received. Offline; a "
        "few seconds; nothing is left running.",
    )
    demo.add_argument("--pages", type=int, default=3, metavar="N", help="shop pages (1-40)")
    demo.add_argument(
        "--blog-robots",
        choices=["flaky", "missing"],
        default="flaky",
        help="the blog's robots.txt: flaky (503 twice, then 200) or missing (404)",
    )
    demo.add_argument("-v", "--verbose", action="store_true", help="Scrapy's log on stderr")

    keys = commands.add_parser(
        "keys",
        parents=[output],
        help="Web Bot Auth keys: a new signing key, or the key directory a site fetches",
        description="new FILE: write a new Ed25519 key as a JWK (file mode 0600, never over an "
        "existing file) and print its keyid (the JWK SHA-256 thumbprint). directory FILE...: "
        "print the public halves of the keys as a JWK set, the body of "
        "/.well-known/http-message-signatures-directory (docs/identity.rst says how to serve "
        "it). Needs the identity extra (cryptography). Exit status 2 when a key cannot be "
        "read or written.",
    )
    keys.add_argument("action", choices=["new", "directory"], help="what to do")
    keys.add_argument("files", nargs="+", metavar="FILE", help="the key file(s)")
    return parser
