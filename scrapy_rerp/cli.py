"""``scrapy-rerp``: check URLs against a robots.txt and lint it, for site owners.

Subcommands::

    scrapy-rerp check ROBOTS URL... [--agent UA] [--syntax rfc9309|gym2008|mk1996]
    scrapy-rerp lint ROBOTS [--syntax rfc9309|gym2008|mk1996]

``ROBOTS`` is a file, ``-`` for standard input, or an ``http://`` / ``https://`` URL.

Exit status: 0 when every URL is allowed (``check``) or the file has no warning (``lint``);
1 when some URL is disallowed or the file has warnings; 2 on a usage error or when the
robots.txt cannot be read.

Standard library only: this module must work without Scrapy installed.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, TextIO

from scrapy_rerp import __version__
from scrapy_rerp._urls import origin_of
from scrapy_rerp.engine import (
    GYM2008,
    MAX_FILESIZE,
    MK1996,
    RFC9309,
    Group,
    RequestRate,
    RobotsTxt,
    VisitTime,
    parse,
)

EXIT_OK = 0
EXIT_FLAGGED = 1
EXIT_ERROR = 2

SYNTAXES = {"rfc9309": RFC9309, "gym2008": GYM2008, "mk1996": MK1996}
SYNTAX_NAMES = {value: name for name, value in SYNTAXES.items()}
# RFC 9309 section 2.5: crawlers must parse at least 500 KiB. The older syntaxes keep rerp's
# fetch() cap, so that the CLI sees what a rerp-based crawler sees.
RFC9309_MAX_BYTES = 500 * 1024
DEFAULT_AGENT = "*"
DEFAULT_TIMEOUT = 30.0


class CliError(Exception):
    """A problem the user can fix; reported as one line on stderr with exit status 2."""


@dataclass
class Loaded:
    robots: RobotsTxt
    notes: list[str] = field(default_factory=list)  # facts about the fetch, printed on stderr


def _is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def _charset(headers: Message) -> str | None:
    charset = headers.get_content_charset()
    if charset is None:
        return None
    try:
        "".encode(charset)
    except LookupError:
        return None  # an unknown charset: let the engine decode as it would without one
    return charset


def _fetch(url: str, syntax: int, agent: str, timeout: float) -> Loaded:
    user_agent = agent if agent != DEFAULT_AGENT else f"scrapy-rerp/{__version__}"
    request = urllib.request.Request(url, headers={"User-Agent": user_agent})
    limit = RFC9309_MAX_BYTES if syntax == RFC9309 else MAX_FILESIZE
    notes: list[str] = []
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(limit + 1)
            charset = _charset(response.headers)
            final_url = response.geturl()
    except urllib.error.HTTPError as error:
        return _status_fallback(url, error.code, syntax)
    except (OSError, http.client.HTTPException, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise CliError(f"cannot fetch {url}: {reason}") from error
    if final_url != url:
        notes.append(f"{url}: redirected to {final_url}")
    if len(body) > limit:
        body = body[:limit]
        notes.append(f"{url}: only the first {limit:,} bytes are read, as a crawler would")
    content: str | bytes = body
    # RFC 9309 says robots.txt is UTF-8; the older syntaxes follow rerp's fetch(), which honours
    # the declared charset and otherwise reads ISO-8859-1 (what the engine does with bytes).
    if syntax != RFC9309 and charset is not None:
        content = body.decode(charset, errors="replace")
    return Loaded(parse(content, syntax), notes)


def _status_fallback(url: str, status: int, syntax: int) -> Loaded:
    """What a crawler makes of an HTTP error status, in the chosen syntax."""
    if syntax == RFC9309:
        # RFC 9309 sections 2.3.1.2-2.3.1.4: a redirect urllib gave up on (a loop, too many hops)
        # and a 4xx make the file unavailable; a 5xx makes it unreachable.
        if status < 500:
            note = f"{url}: HTTP {status}: unavailable, so RFC 9309 allows every URL"
            return Loaded(RobotsTxt.allow_all(syntax), [note])
        note = f"{url}: HTTP {status}: unreachable, so RFC 9309 disallows every URL"
        return Loaded(RobotsTxt.disallow_all(syntax), [note])
    # rerp's fetch(): 401 and 403 disallow everything, 404 allows everything, the rest is an error.
    if status in (401, 403):
        note = f"{url}: HTTP {status}: every URL is disallowed"
        return Loaded(RobotsTxt.disallow_all(syntax), [note])
    if status == 404:
        return Loaded(RobotsTxt.allow_all(syntax), [f"{url}: HTTP 404: every URL is allowed"])
    raise CliError(f"cannot fetch {url}: HTTP {status}")


def load(source: str, syntax: int, agent: str, timeout: float, stdin: TextIO) -> Loaded:
    if source == "-":
        return Loaded(parse(stdin.buffer.read(), syntax))
    if _is_url(source):
        return _fetch(source, syntax, agent, timeout)
    try:
        with open(source, "rb") as file:
            content = file.read()
    except OSError as error:
        raise CliError(f"cannot read {source}: {error.strerror or error}") from error
    return Loaded(parse(content, syntax))


# --- check --------------------------------------------------------------------------------------


def run_check(robots: RobotsTxt, urls: Sequence[str], agent: str, out: TextIO) -> int:
    status = EXIT_OK
    for url in urls:
        decision = robots.decide(url, agent)
        verdict = "ALLOWED" if decision.allowed else "DISALLOWED"
        if decision.line is not None:
            why = f"line {decision.line}: {decision.rule}"
        else:
            why = f"({decision.reason})"
        out.write(f"{verdict:<10}  {url}  {why}\n")
        if not decision.allowed:
            status = EXIT_FLAGGED
    return status


def _foreign_urls(robots_url: str, urls: Sequence[str]) -> list[str]:
    """Notes for absolute URLs outside the robots.txt's origin, which it does not govern."""
    origin = origin_of(robots_url)
    return [
        f"{url}: not on {origin}, so this robots.txt does not apply to it (RFC 9309 section 2.3)"
        for url in urls
        if _is_url(url) and origin_of(url) != origin
    ]


# --- lint ---------------------------------------------------------------------------------------


def _delay_text(value: float) -> str:
    return f"{value:g}"


def _rate_text(value: RequestRate) -> str:
    text = f"{value.requests}/{value.seconds:g}s"
    if value.start_time is not None and value.end_time is not None:
        text += f" {value.start_time:%H%M}-{value.end_time:%H%M}"
    return text


def _visit_text(value: VisitTime) -> str:
    return f"{value.start_time:%H%M}-{value.end_time:%H%M}"


def group_settings(robots: RobotsTxt, group: Group) -> list[str]:
    """Crawl-delay, Request-rate and Visit-time as a crawler named after each agent gets them.

    Asked through the engine rather than read from the group, so that the answer is the one a
    crawler sees (merged groups in RFC 9309, rerp's record choice in the older syntaxes).
    """
    lines: list[str] = []
    getters: tuple[tuple[str, Callable[[str], Any], Callable[[Any], str]], ...] = (
        ("Crawl-delay", robots.crawl_delay, _delay_text),
        ("Request-rate", robots.request_rate, _rate_text),
        ("Visit-time", robots.visit_time, _visit_text),
    )
    for label, getter, text in getters:
        values = [(agent, getter(agent)) for agent in group.agents]
        shown = {text(value) for _, value in values if value is not None}
        if not shown:
            continue
        if len(shown) == 1 and all(value is not None for _, value in values):
            lines.append(f"{label}: {shown.pop()}")
        else:
            lines += [f"{label}: {text(v)} ({agent})" for agent, v in values if v is not None]
    return lines


def run_lint(robots: RobotsTxt, source: str, out: TextIO) -> int:
    warnings = robots.warnings
    out.write(f"{source} (syntax {SYNTAX_NAMES[robots.syntax]})\n")
    out.write(f"warnings: {len(warnings)}\n")
    for warning in warnings:
        out.write(f"  line {warning.line}: {warning.message}: {warning.text.strip()}\n")
    groups = robots.groups
    out.write(f"groups: {len(groups)}\n")
    for group in groups:
        rules = len(group.rules)
        agents = ", ".join(group.agents)
        plural = "" if rules == 1 else "s"
        out.write(f"  line {group.line}: User-agent: {agents} ({rules} rule{plural})\n")
        for setting in group_settings(robots, group):
            out.write(f"    {setting}\n")
    out.write(f"sitemaps: {len(robots.sitemaps)}\n")
    for sitemap in robots.sitemaps:
        out.write(f"  {sitemap}\n")
    if robots.host is not None:
        out.write(f"host: {robots.host}\n")
    for clean_param in robots.clean_params:
        out.write(f"clean-param: {clean_param}\n")
    return EXIT_FLAGGED if warnings else EXIT_OK


# --- command line -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scrapy-rerp",
        description="Check URLs against a robots.txt, or lint one.",
        epilog="Exit status: 0 all allowed / no warning; 1 some URL disallowed / warnings; "
        "2 usage error or unreadable robots.txt.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "robots", metavar="ROBOTS", help="robots.txt file, - for standard input, or http(s) URL"
    )
    common.add_argument(
        "--syntax",
        type=str.lower,
        choices=list(SYNTAXES),
        default="rfc9309",
        help="how to read the file (default rfc9309)",
    )
    common.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait when ROBOTS is a URL (default {DEFAULT_TIMEOUT:g})",
    )

    check = commands.add_parser(
        "check",
        parents=[common],
        help="say whether URLs may be crawled, and which line decided",
        description="Print ALLOWED or DISALLOWED for each URL, with the line that decided.",
    )
    check.add_argument("urls", metavar="URL", nargs="+", help="absolute URL or path")
    check.add_argument(
        "--agent",
        "-A",
        default=DEFAULT_AGENT,
        help="crawler user agent: a product token or a full User-Agent header "
        "(default *, a crawler with no group of its own)",
    )

    lint = commands.add_parser(
        "lint",
        parents=[common],
        help="list parse warnings, groups, sitemaps and crawl delays",
        description="Print the parse warnings with line numbers and what the file declares.",
    )
    lint.set_defaults(agent=DEFAULT_AGENT)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # robots.txt bodies may hold undecodable bytes (kept as surrogates) that stdout cannot encode.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    syntax = SYNTAXES[args.syntax]
    try:
        loaded = load(args.robots, syntax, args.agent, args.timeout, sys.stdin)
    except CliError as error:
        print(f"scrapy-rerp: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    for note in loaded.notes:
        print(f"scrapy-rerp: {note}", file=sys.stderr)
    if args.command == "check":
        if _is_url(args.robots):
            for note in _foreign_urls(args.robots, args.urls):
                print(f"scrapy-rerp: {note}", file=sys.stderr)
        return run_check(loaded.robots, args.urls, args.agent, sys.stdout)
    return run_lint(loaded.robots, "<stdin>" if args.robots == "-" else args.robots, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
