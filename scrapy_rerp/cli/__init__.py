"""``scrapy-rerp``: what a crawler makes of a robots.txt, for site owners and crawler authors.

Commands::

    scrapy-rerp check   ROBOTS URL...   the verdict for each URL, and the line that decided;
                                        with --usage CATEGORY, also the site's AI usage
                                        preference for it (Content-Usage, Content-Signal)
    scrapy-rerp explain ROBOTS URL      the group chosen, the rules that match, the verdict in
                                        all three syntaxes
    scrapy-rerp lint    ROBOTS          problems, with line numbers and a severity (of a
                                        tdmrep.json or an RSL licence file too)
    scrapy-rerp fetch   URL             download robots.txt as a crawl would, and what follows;
                                        with --store PATH, a store's fresh copy instead; a
                                        tdmrep.json or an RSL licence file is summarised
    scrapy-rerp page    URL             the site's robots.txt verdict for a page, its own
                                        directives (X-Robots-Tag, meta robots) and what a
                                        crawl with each purpose does with the page (a page
                                        robots.txt disallows is not downloaded unless
                                        --ignore-robots-txt)
    scrapy-rerp store   PATH [ORIGIN]   what a robots.txt store holds, or one origin's stored
                                        robots.txt (read only)
    scrapy-rerp audit   FILES... URL    evidence files (RERP_EVIDENCE): the robots.txt in force
                                        for URL and its verdict; --origin ORIGIN: its robots.txt
                                        over time; verify FILES... ITEMS: items that should not
                                        be there
    scrapy-rerp keys new FILE           a new Web Bot Auth signing key (Ed25519, a JWK)
    scrapy-rerp keys directory FILE...  the key directory a site fetches (public keys)
    scrapy-rerp demo                    a polite Scrapy crawl of two local sites (needs Scrapy)

``ROBOTS`` is a file, ``-`` for standard input, or an ``http://`` / ``https://`` URL, which is
downloaded as the middleware downloads it (status policy, redirects, size cap, charset), within
one ``--timeout`` for the whole download; a site's URL (``http://host/``) means its robots.txt.
A URL that is no site's ``/robots.txt`` is a page to a crawl: it is downloaded only when the
site's robots.txt lets a crawl download it, or with ``--ignore-robots-txt`` (and a note).
Only a robots.txt gets a verdict: an HTML or XML page or binary data is said to be none (status
2; ``check`` and ``explain`` read it with ``--read-anyway``), and a URL to check that is neither
an absolute path nor an absolute URL is an error with a hint, never a guess. A file or
standard input is read up to the size cap (500 KiB) and one byte more, never whole, and a note
says when the rest is ignored. The verdicts are the ones a crawl gets: URLs are read as a Scrapy
request writes them (non-ASCII characters %-encoded), through the same code as the middleware.
Every command takes ``--format json`` (before or after its name): one JSON document on standard
output, whose keys are documented.

Exit status: 0 allowed / no problem; 1 disallowed / problems found / an origin not in the
store / an item audit lists; 2 usage error, evidence without the robots.txt asked for, input that
cannot be read (a missing file, an invalid URL, damaged evidence), or a robots.txt that is none;
3 (``audit``) no decision recorded for the URL asked about. ``check --usage
CATEGORY`` keeps 0 and 1 for the crawl verdict and adds one case to 1: a URL that may be crawled
but whose usage is ``disallowed`` for a category asked about ("not for this purpose"). A usage
that is ``unknown`` (nothing stated, or a URL that may not be crawled) changes nothing.

No input makes it print a traceback, and a closed output pipe (``| head``) ends it quietly with
the status it would have had.

Without Scrapy installed, every command but ``demo`` works.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from scrapy_rerp.cli._audit import AuditReport, OriginReport, VerifyReport, split_arguments
from scrapy_rerp.cli._check import CheckReport, check_url_argument
from scrapy_rerp.cli._demo import DemoReport
from scrapy_rerp.cli._explain import ExplainReport
from scrapy_rerp.cli._fetch import FetchReport
from scrapy_rerp.cli._keys import KeysReport
from scrapy_rerp.cli._lint import LintReport
from scrapy_rerp.cli._output import CliError, Output, Report, note, write_error, write_report
from scrapy_rerp.cli._page import PageReport, fetch_page
from scrapy_rerp.cli._parser import build_parser
from scrapy_rerp.cli._rsl import RslFileReport, looks_like_rsl
from scrapy_rerp.cli._source import load, load_url
from scrapy_rerp.cli._store import StoreReport
from scrapy_rerp.cli._tdmrep import TdmRepFileReport, is_tdmrep_source, origin_file

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    out = Output(sys.stdout)
    # robots.txt bodies may hold undecodable bytes (kept as surrogates) that stdout cannot encode.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    try:
        status = _run(args, out)
    except KeyboardInterrupt:
        status = 130
    out.flush()
    return status


def _run(args: argparse.Namespace, out: Output) -> int:
    try:
        report = _report(args)
    except CliError as error:
        return write_error(args.command, error, args.format, out)
    return write_report(args.command, report, args.format, out)


def _report(args: argparse.Namespace) -> Report:
    """The report of the command asked for; CliError when its input cannot be read."""
    if args.command == "page":
        return PageReport.fetch(args.url, args.agent, args.timeout, args.ignore_robots_txt)
    if args.command == "keys":
        return KeysReport.build(args.action, args.files)
    if args.command == "demo":
        return DemoReport.run(args.pages, args.blog_robots, args.verbose)
    if args.command == "store":
        return StoreReport.build(args.path, args.origin)
    if args.command == "audit":
        form, *rest = split_arguments(args.arguments, args.origin)
        if form == "verify":
            *files, items = rest
            return VerifyReport.build(
                files, items, args.purpose, args.url_field, args.provenance_field
            )
        if form == "origin":
            return OriginReport.build(rest, args.origin)
        *files, url = rest
        return AuditReport.build(files, url, args.purpose, args.at)
    if args.command in ("check", "explain"):
        # The URLs before ROBOTS: nothing is downloaded for arguments given in the wrong order.
        for url in args.urls if args.command == "check" else [args.url]:
            check_url_argument(url, args.command)
    given = args.url if args.command == "fetch" else args.robots  # ROBOTS, or fetch's URL
    if args.command in ("fetch", "lint") and is_tdmrep_source(given):
        return TdmRepFileReport.build(given, args.agent, args.timeout, lint=args.command == "lint")
    # The others read a robots.txt.
    if args.command == "fetch":
        source = load_url(
            given, args.syntax, args.agent, args.timeout, args.store, args.ignore_robots_txt
        )
    else:
        source = load(
            given, args.syntax, args.agent, args.timeout, sys.stdin, args.ignore_robots_txt
        )
    if args.command in ("fetch", "lint") and source.parsed and looks_like_rsl(source.raw):
        return RslFileReport.of(source, lint=args.command == "lint")
    if args.format == "text":
        for line in source.notes:  # before the command's own output, or its error
            note(line)
    if args.command == "check":
        return CheckReport.build(
            source,
            args.urls,
            args.syntax,
            args.agent,
            args.usage,
            args.read_anyway,
            args.timeout,
            origin_file,
            lambda url: fetch_page(url, args.agent, args.timeout, document=True),
        )
    if args.command == "explain":
        return ExplainReport.build(source, args.url, args.syntax, args.agent, args.read_anyway)
    if args.command == "lint":
        return LintReport.build(source, args.syntax)
    return FetchReport.build(source, args.syntax, args.agent)
