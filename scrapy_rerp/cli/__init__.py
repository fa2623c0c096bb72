"""``scrapy-rerp``: what a crawler makes of a robots.txt, for site owners and crawler authors.

Commands::

    scrapy-rerp check   ROBOTS URL...   the verdict for each URL, and the line that decided;
                                        with --usage CATEGORY, also the site's AI usage
                                        preference for it (Content-Usage, Content-Signal)
    scrapy-rerp explain ROBOTS URL      the group chosen, the rules that match, the verdict in
                                        all three syntaxes
    scrapy-rerp lint    ROBOTS          problems, with line numbers and a severity
    scrapy-rerp fetch   URL             download robots.txt as a crawl would, and what follows
    scrapy-rerp page    URL             a page's own directives (X-Robots-Tag, meta robots) and
                                        what a crawl with each purpose does with the page
    scrapy-rerp demo                    a polite Scrapy crawl of two local sites (needs Scrapy)

``ROBOTS`` is a file, ``-`` for standard input, or an ``http://`` / ``https://`` URL, which is
downloaded as the middleware downloads it (status policy, redirects, size cap, charset), within
one ``--timeout`` for the whole download. A file or standard input is read up to the size cap
(500 KiB) and one byte more, never whole, and a note says when the rest is ignored. The
verdicts are the ones a crawl gets: URLs are read as a Scrapy request writes them (non-ASCII
characters %-encoded), through the same code as the middleware. Every command takes
``--format json``: one JSON document on standard output, whose keys are documented.

Exit status: 0 allowed / no problem; 1 disallowed / problems found; 2 usage error or input that
cannot be read (a missing file, an invalid URL). ``check --usage CATEGORY`` keeps 0 and 1 for the
crawl verdict and adds one case to 1: a URL that may be crawled but whose usage is
``disallowed`` for a category asked about ("not for this purpose"). A usage that is ``unknown``
(nothing stated, or a URL that may not be crawled) changes nothing.

No input makes it print a traceback, and a closed output pipe (``| head``) ends it quietly with
the status it would have had.

Without Scrapy installed, every command but ``demo`` works.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from scrapy_rerp._policy import ALLOW_ALL, DISALLOW_ALL, PARSED, UNREACHABLE
from scrapy_rerp._settings import syntax_name as name_of
from scrapy_rerp._urls import crawl_decision, origin_of, request_url, rules_url, sitemap_url
from scrapy_rerp.cli._explain import explain, file_values, group_values, json_key, usage_dict
from scrapy_rerp.cli._output import (
    EXIT_ERROR,
    EXIT_FLAGGED,
    EXIT_OK,
    CliError,
    Output,
    write_error,
)
from scrapy_rerp.cli._page import PageError, report, text_page
from scrapy_rerp.cli._parser import build_parser
from scrapy_rerp.cli._problems import lint
from scrapy_rerp.cli._source import Source, is_url, load, load_url, outcome_reason
from scrapy_rerp.engine import (
    GYM2008,
    MK1996,
    RFC9309,
    USAGE_CATEGORIES,
    Group,
    RobotsTxt,
)
from scrapy_rerp.engine._directives import DIRECTIVES, FILE_KINDS, SITEMAP, VALUE_KINDS

ALL_SYNTAXES = (RFC9309, GYM2008, MK1996)


# --- check ----------------------------------------------------------------------------------------


def _verdict(
    robots: RobotsTxt, source: Source, url: str, agent: str, categories: Sequence[str] = ()
) -> dict[str, Any]:
    """The crawl verdict for *url*, and its usage preference for each of *categories*."""
    try:
        request_url(url)
    except ValueError as error:
        reason = _not_a_request(error)
        return {
            "url": url,
            "allowed": None,
            "line": None,
            "rule": None,
            "reason": reason,
            "usage": {category: _no_usage(None, reason) for category in categories},
        }
    if not source.parsed:
        assert source.fetched is not None
        reason = outcome_reason(source.fetched)
        return {
            "url": url,
            "allowed": source.fetched.outcome == ALLOW_ALL,
            "line": None,
            "rule": None,
            "reason": reason,
            "usage": {
                category: _no_usage("unknown", f"no rules were parsed: {reason}")
                for category in categories
            },
        }
    decision = crawl_decision(robots, url, agent)
    usage = {
        category: usage_dict(robots.usage(rules_url(url), agent, category))
        for category in categories
    }
    return {
        "url": url,
        "allowed": decision.allowed,
        "line": decision.line,
        "rule": decision.rule,
        "reason": decision.reason,
        "usage": usage,
    }


def _not_a_request(error: ValueError) -> str:
    return f"not a URL a crawler can request: {error}"


def _no_usage(preference: str | None, reason: str) -> dict[str, Any]:
    """A usage answer that no robots.txt line gave (``None``: the URL is invalid)."""
    return {"preference": preference, "line": None, "statement": None, "reason": reason}


def _disallows_a_usage(result: dict[str, Any]) -> bool:
    """Whether the site says "not for this purpose" for one of the categories asked about."""
    return any(found["preference"] == "disallowed" for found in result["usage"].values())


def cmd_check(args: argparse.Namespace, source: Source) -> tuple[dict[str, Any], int]:
    robots = source.rules(args.syntax)
    categories = list(dict.fromkeys(args.usage))  # in the order asked, each once
    results = [_verdict(robots, source, url, args.agent, categories) for url in args.urls]
    notes = [f"error: {r['url']!r}: {r['reason']}" for r in results if r["allowed"] is None]
    if source.fetched is not None:
        origin = origin_of(source.fetched.url)
        for url in args.urls:
            try:
                elsewhere = is_url(url) and origin_of(url) != origin
            except ValueError:
                continue
            if elsewhere:
                notes.append(
                    f"{url}: not on {origin}, so this robots.txt does not apply to it "
                    "(RFC 9309 section 2.3)"
                )
    if any(r["allowed"] is None for r in results):
        status = EXIT_ERROR
    elif all(r["allowed"] and not _disallows_a_usage(r) for r in results):
        status = EXIT_OK
    else:
        status = EXIT_FLAGGED
    document = {
        "robots": source.as_dict(),
        "syntax": name_of(args.syntax),
        "agent": args.agent,
        "usage_categories": categories,
        "results": results,
        "notes": notes,
    }
    return document, status


def text_check(document: dict[str, Any], out: Callable[[str], None]) -> None:
    for result in document["results"]:
        verdict = {True: "ALLOWED", False: "DISALLOWED", None: "INVALID"}[result["allowed"]]
        if result["line"] is not None:
            why = f"line {result['line']}: {result['rule']}"
        else:
            why = f"({result['reason']})"
        out(f"{verdict:<10}  {result['url']}  {why}")
        for line in _usage_text(result["usage"]):
            out(f"  {line}")


_CATEGORY_WIDTH = max(map(len, USAGE_CATEGORIES))


def _usage_text(usage: dict[str, dict[str, Any]]) -> list[str]:
    """``train-ai  DISALLOWED  line 7: Content-Usage: /a/ train-ai=n`` per category."""
    lines = []
    for category, found in usage.items():
        preference = (found["preference"] or "invalid").upper()
        if found["preference"] in ("allowed", "disallowed"):
            why = f"line {found['line']}: {found['statement']}"
        else:  # nothing stated, or the URL may not be crawled (its rule is shown above)
            why = f"({found['reason']})"
        lines.append(f"{category:<{_CATEGORY_WIDTH}}  {preference:<10}  {why}")
    return lines


# --- explain --------------------------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace, source: Source) -> tuple[dict[str, Any], int]:
    try:
        request_url(args.url)
    except ValueError as error:
        raise CliError(f"{args.url!r}: {_not_a_request(error)}") from error
    syntaxes: dict[str, Any] = {}
    for syntax in ALL_SYNTAXES:
        robots = source.rules(syntax)
        if not source.parsed:
            syntaxes[name_of(syntax)] = _verdict(
                robots, source, args.url, args.agent, tuple(USAGE_CATEGORIES)
            )
            continue
        syntaxes[name_of(syntax)] = explain(robots, args.url, args.agent).as_dict()
    chosen = syntaxes[name_of(args.syntax)]
    document = {
        "robots": source.as_dict(),
        "url": args.url,
        "agent": args.agent,
        "syntax": name_of(args.syntax),
        "allowed": chosen["allowed"],
        "syntaxes": syntaxes,
    }
    return document, EXIT_OK if chosen["allowed"] else EXIT_FLAGGED


def text_explain(document: dict[str, Any], out: Callable[[str], None]) -> None:
    out(f"URL         {document['url']}")
    out(f"User agent  {document['agent']}")
    for name, found in document["syntaxes"].items():
        out("")
        selected = " (selected)" if name == document["syntax"] else ""
        verdict = "ALLOWED" if found["allowed"] else "DISALLOWED"
        if found["line"] is not None:
            out(f"{name.upper()}{selected}: {verdict} by line {found['line']}: {found['rule']}")
        else:
            out(f"{name.upper()}{selected}: {verdict}")
        out(f"  {found['reason']}")
        if "groups" not in found:
            _text_explain_usage(found["usage"], out)
            continue
        out(f"  group: {found['group_reason']}")
        for group in found["groups"]:
            agents = ", ".join(group["agents"]) or "(empty)"
            plural = "" if group["rules"] == 1 else "s"
            out(f"    line {group['line']}: User-agent: {agents} ({group['rules']} rule{plural})")
        if any(value is not None for value in found["values"].values()):
            out("  values for this crawler:")
            _text_values(found["values"], out, "    ")
        if found["matching_rules"]:
            out("  rules that match:")
            for rule in found["matching_rules"]:
                mark = "  <- decides" if rule["decides"] else ""
                out(f"    line {rule['line']}: {rule['rule']}{mark}")
        else:
            out("  no rule matches")
        _text_explain_usage(found["usage"], out)


def _text_explain_usage(usage: dict[str, dict[str, Any]], out: Callable[[str], None]) -> None:
    out("  usage (Content-Usage, Content-Signal):")
    for line in _usage_text(usage):
        out(f"    {line}")


# --- lint -----------------------------------------------------------------------------------------


def _group_dict(robots: RobotsTxt, group: Group) -> dict[str, Any]:
    return {
        "line": group.line,
        "agents": list(group.agents),
        "rules": [
            {"line": line, "rule": f"{'Allow' if allow else 'Disallow'}: {pattern}"}
            for allow, pattern, line in group.rules
        ],
        **_group_values(robots, group),
    }


def _group_values(robots: RobotsTxt, group: Group) -> dict[str, Any]:
    """The per-group values (Crawl-delay, Request-rate, Visit-time...) as a crawler named after
    the group's first agent gets them (asked of the engine: merged groups, rerp's record
    choice)."""
    agent = next((a for a in group.agents if a.strip()), "*")
    return group_values(robots, agent)


def _summary(robots: RobotsTxt, robots_url: str | None) -> dict[str, Any]:
    sitemaps, invalid = _sitemaps(robots, robots_url)
    return {
        "groups": [_group_dict(robots, group) for group in robots.groups],
        **file_values(robots),
        # Sitemaps as the crawl reads them: resolved against the robots.txt URL, bad ones apart.
        "sitemaps": sitemaps,
        "invalid_sitemaps": invalid,
    }


def _sitemaps(robots: RobotsTxt, robots_url: str | None) -> tuple[list[str], list[dict[str, str]]]:
    """The sitemaps a crawler fetches (resolved against the robots.txt URL, if there is one),
    and the ``Sitemap:`` values it skips, each with why: a bad one skips itself only."""
    sitemaps, invalid = [], []
    for value in robots.sitemaps:
        try:
            sitemaps.append(sitemap_url(robots_url, value))
        except ValueError as error:
            invalid.append({"sitemap": value, "reason": str(error)})
    return sitemaps, invalid


def _robots_url(source: Source) -> str | None:
    """The URL sitemaps are resolved against: the robots.txt's, after redirects."""
    fetched = source.fetched
    return None if fetched is None else fetched.final_url or fetched.url


def cmd_lint(args: argparse.Namespace, source: Source) -> tuple[dict[str, Any], int]:
    if not source.parsed:
        assert source.fetched is not None
        raise CliError(f"{source.fetched.url}: {outcome_reason(source.fetched)}; nothing to lint")
    found = lint(source.raw, source.body, args.syntax)
    robots = source.rules(args.syntax)
    document = {
        "robots": source.as_dict(),
        "syntax": name_of(args.syntax),
        "problems": [p.as_dict() for p in found.problems],
        "compared": {
            "urls": found.checked_urls,
            "agents": found.checked_agents,
            "comparisons": found.comparisons,
            "skipped_comparisons": found.skipped_comparisons,
            "budget": found.budget,
        },
        **_summary(robots, source.robots_url),
    }
    return document, EXIT_FLAGGED if found.problems else EXIT_OK


def _text_summary(document: dict[str, Any], out: Callable[[str], None]) -> None:
    groups = document["groups"]
    out(f"groups: {len(groups)}")
    for group in groups:
        rules = len(group["rules"])
        agents = ", ".join(group["agents"]) or "(empty)"
        plural = "" if rules == 1 else "s"
        out(f"  line {group['line']}: User-agent: {agents} ({rules} rule{plural})")
        _text_values(group, out, "    ")
    out(f"sitemaps: {len(document['sitemaps'])}")
    for sitemap in document["sitemaps"]:
        out(f"  {sitemap}")
    for invalid in document["invalid_sitemaps"]:
        out(f"  skipped {invalid['sitemap']!r}: {invalid['reason']}")
    for kind in FILE_KINDS:
        name = DIRECTIVES[kind].name
        key = json_key(name)
        if kind == SITEMAP:
            continue
        values = [document[key]] if key in document else document[key + "s"]
        for value in values:
            if value is not None:
                out(f"{name.lower()}: {value}")


def _text_values(values: dict[str, Any], out: Callable[[str], None], indent: str) -> None:
    """The per-group values of a report, one line each: ``Crawl-delay: 2``."""
    for kind in VALUE_KINDS:
        name = DIRECTIVES[kind].name
        value = values.get(json_key(name))
        if value is not None:
            out(
                f"{indent}{name}: {value:g}"
                if isinstance(value, float)
                else f"{indent}{name}: {value}"
            )


def text_lint(document: dict[str, Any], out: Callable[[str], None]) -> None:
    source = document["robots"]["source"]
    out(f"{'<stdin>' if source == '-' else source} (syntax {document['syntax']})")
    problems = document["problems"]
    out(f"problems: {len(problems)}")
    compared = document["compared"]
    if compared["skipped_comparisons"]:
        out(
            f"  ({compared['skipped_comparisons']:,} comparisons skipped: syntax differences "
            f"and usage grants were looked for within {compared['budget']:,} comparisons, "
            "this file's budget)"
        )
    for problem in problems:
        where = f"line {problem['line']}" if problem["line"] is not None else "file"
        text = f": {problem['text']}" if problem["text"] else ""
        out(f"  {where}: {problem['severity']}: {problem['message']}{text}")
    _text_summary(document, out)


# --- fetch ----------------------------------------------------------------------------------------


def cmd_fetch(args: argparse.Namespace, source: Source) -> tuple[dict[str, Any], int]:
    fetched = source.fetched
    assert fetched is not None
    robots = source.rules(args.syntax)
    document = {
        "url": args.url,
        "syntax": name_of(args.syntax),
        "agent": args.agent,
        "fetch": fetched.as_dict(),
        "conclusion": outcome_reason(fetched) if fetched.outcome != PARSED else "rules parsed",
        "crawl_delay": robots.crawl_delay(args.agent) if fetched.outcome == PARSED else None,
        **_summary(
            robots if fetched.outcome == PARSED else RobotsTxt.allow_all(args.syntax),
            source.robots_url,
        ),
    }
    blocked = fetched.outcome in (DISALLOW_ALL, UNREACHABLE)
    return document, EXIT_FLAGGED if blocked else EXIT_OK


def text_fetch(document: dict[str, Any], out: Callable[[str], None]) -> None:
    fetched = document["fetch"]
    out(f"robots.txt  {fetched['url']}")
    for url in fetched["redirects"]:
        out(f"redirected  {url}")
    status = fetched["status"] if fetched["status"] is not None else "-"
    out(f"status      {status} ({fetched['reason']})")
    out(f"outcome     {fetched['outcome']}: {document['conclusion']}")
    if fetched["bytes"] is not None:
        cut = " (cut at the size cap)" if fetched["truncated"] else ""
        out(f"size        {fetched['bytes']:,} bytes read{cut}")
    if fetched["lifetime"] is not None:
        lifetime = f"{fetched['lifetime']:g} s"
        out(f"expires     {fetched['expires']} (used for {lifetime}, then fetched again)")
    if fetched["retry_after"] is not None:
        wait = fetched["retry_after"]["seconds"]
        asks = "nothing a crawl can hold to" if wait is None else f"{wait:g} s"
        out(f"retry-after {fetched['retry_after']['value']} ({asks})")
    if fetched["outcome"] != PARSED:
        return
    delay = document["crawl_delay"]
    out(f"crawl delay {'none' if delay is None else f'{delay:g} s'} for {document['agent']}")
    _text_summary(document, out)


# --- page -----------------------------------------------------------------------------------------


def cmd_page(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    try:
        return report(args.url, args.agent, args.timeout)
    except PageError as error:
        raise CliError(str(error)) from error


# --- demo -----------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace, out: Callable[[str], None]) -> tuple[dict[str, Any], int]:
    try:
        from scrapy_rerp import demo
    except ImportError as error:
        raise CliError(
            f"the demo needs Scrapy ({error}): pip install 'scrapy-rerp[scrapy]'"
        ) from error
    try:
        outcome = demo.run(args.pages, args.blog_robots, args.verbose)
    except ValueError as error:
        raise CliError(str(error)) from error
    document = demo.as_dict(outcome)
    if args.format == "text":
        with contextlib.redirect_stdout(out):  # type: ignore[type-var]
            demo.report(outcome)
    return document, EXIT_OK if document["ok"] else EXIT_FLAGGED


_COMMANDS: dict[str, tuple[Callable[..., Any], Callable[..., None]]] = {
    "check": (cmd_check, text_check),
    "explain": (cmd_explain, text_explain),
    "lint": (cmd_lint, text_lint),
    "fetch": (cmd_fetch, text_fetch),
}


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
        if args.command == "demo":
            document, status = cmd_demo(args, out)
        elif args.command == "page":
            document, status = cmd_page(args)
            if args.format == "text":
                for note in document["notes"]:
                    print(f"scrapy-rerp: {note}", file=sys.stderr)
                text_page(document, out)
        else:
            run, text = _COMMANDS[args.command]
            if args.command == "fetch":
                source = load_url(args.url, args.syntax, args.agent, args.timeout)
            else:
                source = load(args.robots, args.syntax, args.agent, args.timeout, sys.stdin)
            if args.format == "text":
                for note in source.notes:
                    print(f"scrapy-rerp: {note}", file=sys.stderr)
            document, status = run(args, source)
            if args.format == "text":
                for note in document.get("notes", ()):
                    print(f"scrapy-rerp: {note}", file=sys.stderr)
                text(document, out)
    except CliError as error:
        return write_error(args.command, error, args.format, out)
    if args.format == "json":
        document = {"command": args.command, **document, "exit_status": status}
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return status
