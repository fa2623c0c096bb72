"""``scrapy-rerp fetch`` and ``lint`` of a TDMRep file: the origin's ``tdmrep.json`` (a URL whose
path is ``/.well-known/tdmrep.json``, or a file named ``tdmrep.json``) read by the engine's
``parse_tdmrep``, its entries and its warnings.

``fetch`` summarises it (exit status 0 for a file that is read, 1 for an answer that is no file
or a body that is no JSON array: a crawl reads either as "no reservation from the file");
``lint`` reports its warnings (exit status 1 when there is one)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp.cli._output import EXIT_FLAGGED, EXIT_OK, CliError
from scrapy_rerp.cli._page import fetch_page
from scrapy_rerp.core.documents import tdmrep_json
from scrapy_rerp.core.wording import counted
from scrapy_rerp.engine import MAX_TDMREP_BYTES, TDMREP_PATH, TdmRepFile, parse_tdmrep

__all__ = ["TdmRepFileReport", "is_tdmrep_source", "origin_file"]


def is_tdmrep_source(source: str) -> bool:
    """Whether a command's ``ROBOTS`` (or ``fetch``'s URL) names a TDMRep file."""
    if source.startswith(("http://", "https://")):
        try:
            return urllib.parse.urlsplit(source).path == TDMREP_PATH
        except ValueError:  # no URL: the robots.txt reading says why, in one line
            return False
    return source.replace("\\", "/").rsplit("/", 1)[-1] == "tdmrep.json"


def origin_file(url: str, agent: str, timeout: float) -> tuple[str, TdmRepFile | None]:
    """The TDMRep file of *url*'s origin, downloaded as ``page`` downloads it: what was found,
    in a few words, and the parsed file (None: no file, or none could be downloaded)."""
    file_url = tdmrep_json().url_of(url)
    try:
        found = fetch_page(file_url, agent, timeout, document=True)
    except CliError as error:
        return f"{file_url}: unreachable ({error})", None
    answered = f"{file_url}: HTTP {found.status}"
    if not 200 <= found.status < 300:
        return f"{answered}, no file", None
    file = parse_tdmrep(found.body)
    if not file.valid:
        return f"{answered}, no JSON array: no reservation", file
    return f"{answered}, {counted(len(file.entries), 'entry', 'entries')}", file


@dataclass(kw_only=True)
class TdmRepFileReport:
    source: str
    http_status: int | None  # for a URL
    file: TdmRepFile | None  # None: the answer is no file (not 2xx)
    lint: bool  # lint's report (its exit status counts warnings), else fetch's
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, source: str, agent: str, timeout: float, lint: bool) -> TdmRepFileReport:
        if source.startswith(("http://", "https://")):
            page = fetch_page(source, agent, timeout, document=True)
            file = parse_tdmrep(page.body) if 200 <= page.status < 300 else None
            if file is None and lint:
                raise CliError(f"{source}: HTTP {page.status}, no file; nothing to lint")
            return cls(source=source, http_status=page.status, file=file, lint=lint)
        try:
            with open(source, "rb") as file:
                body = file.read(MAX_TDMREP_BYTES + 1)
        except OSError as error:
            raise CliError(f"cannot read {source}: {error.strerror or error}") from error
        return cls(source=source, http_status=None, file=parse_tdmrep(body), lint=lint)

    @property
    def status(self) -> int:
        """The exit status."""
        file = self.file
        if self.lint:
            return EXIT_FLAGGED if file is not None and file.warnings else EXIT_OK
        return EXIT_OK if file is not None and file.valid else EXIT_FLAGGED

    @property
    def found(self) -> str:
        file = self.file
        if file is None:
            return f"HTTP {self.http_status}: no file, no reservation from it"
        if not file.valid:
            return "not read (no JSON array): no reservation from the file"
        return counted(len(file.entries), "entry", "entries")

    def to_dict(self) -> dict[str, Any]:
        file = self.file
        return {
            "source": self.source,
            "http_status": self.http_status,
            "found": self.found,
            "valid": None if file is None else file.valid,
            "entries": []
            if file is None
            else [
                {
                    "position": e.position,
                    "location": e.location,
                    "tdm-reservation": e.reservation,
                    "tdm-policy": e.policy,
                }
                for e in file.entries
            ],
            "warnings": [] if file is None else [w._asdict() for w in file.warnings],
        }

    def render_text(self, out: Callable[[str], None]) -> None:
        status = f" (HTTP {self.http_status})" if self.http_status is not None else ""
        out(f"tdmrep.json {self.source}{status}: {self.found}")
        file = self.file
        if file is None:
            return
        if not self.lint:
            for entry in file.entries:
                policy = f", tdm-policy {entry.policy}" if entry.policy is not None else ""
                out(
                    f"  entry {entry.position}: {entry.location}  "
                    f"tdm-reservation {entry.reservation}{policy}"
                )
        out(f"warnings: {len(file.warnings)}")
        for warning in file.warnings:
            out(f"  {warning.source}: {warning.code}: {warning.message}")
