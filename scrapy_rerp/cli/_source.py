"""``ROBOTS`` read as a crawler reads it: a file or standard input read up to the size cap and
one byte more (never whole), or an ``http://`` / ``https://`` URL downloaded as the middleware
downloads it (:mod:`scrapy_rerp.cli._download`), a site's URL (``http://host/``) standing for
its robots.txt (and any other URL, a page to a crawl, downloaded only when that robots.txt lets
a crawl download it, or with ``--ignore-robots-txt``); what a crawler concludes when a download
gives no rules; and whether what was read is a robots.txt at all."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from scrapy_rerp.cli._download import Download, check_url, download
from scrapy_rerp.cli._output import CliError
from scrapy_rerp.cli._problems import NotRobotsTxt, not_robots_txt
from scrapy_rerp.cli._stored import StoreUse, stored_download
from scrapy_rerp.core.body import MAX_SIZE, Body, read_body
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.status import ALLOW_ALL, DISALLOW_ALL, PARSED, UNREACHABLE
from scrapy_rerp.core.urls import crawl_decision, robots_url_of
from scrapy_rerp.core.version import __version__
from scrapy_rerp.engine import RobotsTxt

#: The crawler a command answers for unless ``--agent`` names one: a crawler no group names.
DEFAULT_AGENT = "*"
DEFAULT_TIMEOUT = 30.0
#: The option that downloads what robots.txt does not let a crawl download.
IGNORE_ROBOTS_TXT = "--ignore-robots-txt"


def override_note(refused: str) -> str:
    """What the reader is told of a download robots.txt does not let a crawl make (*refused*
    says why) that ``--ignore-robots-txt`` made all the same."""
    return f"{refused}: downloaded all the same ({IGNORE_ROBOTS_TXT}), which a crawl never does"


@dataclass(kw_only=True)
class Source:
    """A robots.txt as a crawler has it: the bytes as given, and how a crawler reads them."""

    name: str  # the file name, "-" or the URL
    raw: bytes  # as read, or as downloaded (decoded and capped)
    body: Body  # as the middleware reads it: capped, with its charset
    fetched: Download | None = None
    site: str | None = None  # the site's URL given, when its robots.txt was read for it
    store: StoreUse | None = None  # fetch --store: what the store answered
    overridden: str | None = None  # why a crawl would not have downloaded it (--ignore-robots-txt)

    @classmethod
    def given(cls, name: str, raw: bytes) -> Source:
        return cls(name=name, raw=raw, body=read_body(raw, None, None, MAX_SIZE))

    @classmethod
    def downloaded(cls, url: str, fetched: Download, asked: str) -> Source:
        """The robots.txt *url* as *fetched*, read for *asked* (the site's URL, or *url*)."""
        body = fetched.body or Body(data=b"", charset=None, truncated=False)
        site = asked if url != asked else None
        return cls(name=url, raw=body.data, body=body, fetched=fetched, site=site)

    def rules(self, syntax: int) -> RobotsTxt:
        """The rules a crawler applies: the download's (its outcome decides), or the file's."""
        return (self.fetched or self.body).rules(syntax)

    @property
    def parsed(self) -> bool:
        return self.fetched is None or self.fetched.outcome == PARSED

    @functools.cached_property
    def not_robots_txt(self) -> NotRobotsTxt | None:
        """What the bytes read are when they are no robots.txt at all (an HTML or XML page,
        binary data, without a rule), as lint finds it; None for a robots.txt, and for a
        download that gave no body."""
        if not self.parsed:
            return None
        return not_robots_txt(self.raw, self.body)

    @property
    def label(self) -> str:
        """The name a reader is shown: ``<stdin>`` for ``-``."""
        return "<stdin>" if self.name == "-" else self.name

    def what_it_is(self) -> str:
        """``ROBOTS: an HTML (or XML) page, not a robots.txt: ...``, and for a URL asked for
        that is not a site's robots.txt, where that is."""
        found = self.not_robots_txt
        assert found is not None
        text = f"{self.label}: {found.message}"
        if self.fetched is not None and urlsplit(self.fetched.url).path != "/robots.txt":
            text += f"; the site's robots.txt is {robots_url_of(self.fetched.url)}"
        return text

    @property
    def robots_url(self) -> str | None:
        """The URL sitemaps are resolved against: the robots.txt's, after redirects."""
        fetched = self.fetched
        return None if fetched is None else fetched.final_url or fetched.url

    @property
    def notes(self) -> list[str]:
        """What the reader of the text is told about the reading: redirects, a download that
        gave no rules, a file cut at the size cap."""
        fetched = self.fetched
        cut = (
            f"over {len(self.body.data):,} bytes: only the first {len(self.body.data):,} "
            "are read, as a crawler reads them (RFC 9309 section 2.5); the rest is ignored"
        )
        if fetched is None:
            return [f"{self.label}: {cut}"] if self.body.truncated else []
        notes = [f"{fetched.url}: {self.overridden}"] if self.overridden else []
        if self.site is not None:
            notes.append(f"{self.site} is a site: reading its robots.txt, {fetched.url}")
        notes += [f"{fetched.url}: redirected to {url}" for url in fetched.redirects]
        if fetched.outcome != PARSED:
            notes.append(f"{fetched.url}: {outcome_reason(fetched)}")
        elif self.body.truncated:
            notes.append(f"{fetched.url}: {cut}")
        return notes

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.name,
            "bytes": len(self.body.data),
            "truncated": self.body.truncated,
            "fetch": None if self.fetched is None else self.fetched.as_dict(),
            "not_robots_txt": self.not_robots_txt and self.not_robots_txt.as_dict(),
            "robots_txt_overridden": self.overridden is not None,
        }


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def robots_txt_url(url: str) -> str:
    """*url*, or for a site named by its origin alone (``http://host``, ``http://host/``) its
    robots.txt, where a crawler looks: a home page is no robots.txt."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url  # the download says what is wrong with it
    if parts.path in ("", "/") and not parts.query and not parts.fragment and parts.netloc:
        return robots_url_of(url)
    return url


def user_agent_header(agent: str) -> str:
    """The User-Agent header sent for *agent*: the agent itself, or for ``*`` the tool's."""
    return agent if agent != DEFAULT_AGENT else f"scrapy-rerp/{__version__}"


def _read_capped(stream: BinaryIO) -> bytes:
    """The first MAX_SIZE + 1 bytes of ``stream`` at most: what a crawler reads, and one
    byte to know there was more. A FIFO, a device (``/dev/zero``), a 2 GiB file or a pipe
    that never ends are never read whole."""
    return stream.read(MAX_SIZE + 1)


def load(
    source: str,
    syntax: int,
    agent: str,
    timeout: float,
    stdin: Any,
    ignore_robots_txt: bool = False,
) -> Source:
    """``ROBOTS``: ``-`` (*stdin*), an http(s) URL, or a file. A URL that is no site's
    ``/robots.txt`` (a page given as ``ROBOTS``) is downloaded only when the site's robots.txt
    lets a crawl download it, or with *ignore_robots_txt*, and the source then says so."""
    if source == "-":
        try:
            return Source.given("-", _read_capped(stdin.buffer))
        except OSError as error:
            raise CliError(f"cannot read standard input: {error.strerror or error}") from error
    if is_url(source):
        url = robots_txt_url(source)
        settings = _settings(syntax)
        refused = _crawl_refuses(url, settings, agent, timeout)  # InvalidUrl: a CliError
        if refused is not None and not ignore_robots_txt:
            raise CliError(
                f"{url}: {refused}: not downloaded, as a crawl would not download it "
                f"({IGNORE_ROBOTS_TXT} downloads it anyway)"
            )
        fetched = download(url, settings, user_agent_header(agent), timeout)
        loaded = Source.downloaded(url, fetched, source)
        if refused is not None:
            loaded.overridden = override_note(refused)
        return loaded
    try:
        with open(source, "rb") as file:
            return Source.given(source, _read_capped(file))
    except OSError as error:
        raise CliError(f"cannot read {source}: {error.strerror or error}") from error


def load_url(
    url: str,
    syntax: int,
    agent: str,
    timeout: float,
    store: str | None = None,
    ignore_robots_txt: bool = False,
) -> Source:
    """A robots.txt URL and nothing else (``fetch``), downloaded as :func:`load` downloads it;
    with ``store`` (a store's path), the store's fresh copy instead when it holds one, as a
    crawl uses it."""
    check_url(url)
    if store is None:
        return load(url, syntax, agent, timeout, None, ignore_robots_txt)
    robots = robots_txt_url(url)
    fetched, use = stored_download(robots, store, _settings(syntax))
    if fetched is None:
        source = load(url, syntax, agent, timeout, None, ignore_robots_txt)
    else:
        source = Source.downloaded(robots, fetched, url)
    source.store = use
    return source


def _settings(syntax: int) -> RerpSettings:
    return RerpSettings.from_settings({"RERP_SYNTAX": syntax}, require_obey=False)


def _crawl_refuses(url: str, settings: RerpSettings, agent: str, timeout: float) -> str | None:
    """For a URL that is no site's ``/robots.txt``, why a crawl would not download it: its
    site's robots.txt (downloaded first, within its own *timeout*) disallows it, or is
    unreachable. None when a crawl would, and for a robots.txt URL."""
    if urlsplit(check_url(url)).path == "/robots.txt":
        return None
    robots = download(robots_url_of(url), settings, user_agent_header(agent), timeout)
    if robots.outcome != PARSED:
        return None if robots.outcome == ALLOW_ALL else outcome_reason(robots)
    decision = crawl_decision(robots.rules(settings.syntax), url, agent)
    if decision.allowed:
        return None
    why = decision.reason if decision.line is None else f"line {decision.line}: {decision.rule}"
    return f"robots.txt disallows it ({why})"


_OUTCOME_TEXT = {
    ALLOW_ALL: "robots.txt unavailable ({reason}): every URL is allowed",
    DISALLOW_ALL: "robots.txt forbidden ({reason}): every URL is disallowed",
    UNREACHABLE: "robots.txt unreachable ({reason}): a crawler downloads nothing from this "
    "site until it answers (it retries)",
}


def outcome_reason(fetched: Download) -> str:
    """What a crawler concludes from a download that gave no rules."""
    return _OUTCOME_TEXT[fetched.outcome].format(reason=fetched.reason)
