"""How a command's outcome reaches its user: the exit statuses, the report every command
builds, standard output that survives a closed pipe, and an error as one line (and, with
``--format json``, as a JSON document)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol, TextIO

EXIT_OK = 0
EXIT_FLAGGED = 1
EXIT_ERROR = 2

#: Where a report writes its text: one line per call.
Lines = Callable[[str], None]


class CliError(Exception):
    """Input that cannot be read; reported as one line on stderr with exit status 2."""


class Report(Protocol):
    """What a command builds from its input: its exit status, the notes said on stderr before
    its text, its JSON document (without ``command`` and ``exit_status``, which every document
    has) and its text."""

    @property
    def status(self) -> int: ...

    @property
    def notes(self) -> list[str]: ...

    def to_dict(self) -> dict[str, Any]: ...

    def render_text(self, out: Output) -> None: ...


class Output:
    """Standard output that survives its reader going away: after a broken pipe the rest of
    the output is discarded, and the command still finishes with its real exit status."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.closed = False

    def __call__(self, line: str) -> None:
        self.write(line + "\n")

    def write(self, text: str) -> None:
        self._unless_lost(self.stream.write, text)

    def flush(self) -> None:
        self._unless_lost(self.stream.flush)

    def _unless_lost(self, action: Callable[..., object], *args: str) -> None:
        if self.closed:
            return
        try:
            action(*args)
        except BrokenPipeError:
            self._lost()

    def _lost(self) -> None:
        self.closed = True
        try:
            # Python flushes stdout again at exit: give it somewhere to go.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
        except (OSError, ValueError):
            pass


def note(message: str) -> None:
    """A line on stderr, for the reader of the text (never in the JSON output)."""
    print(f"scrapy-rerp: {message}", file=sys.stderr)


def write_report(command: str, report: Report, output_format: str, out: Output) -> int:
    """*report* as text (its notes on stderr first) or as one JSON document; its status."""
    if output_format == "json":
        document = {"command": command, **report.to_dict(), "exit_status": report.status}
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        for line in report.notes:
            note(line)
        report.render_text(out)
    return report.status


def write_error(command: str | None, error: CliError, output_format: str, out: Output) -> int:
    """*error* as one line on stderr and, in JSON, as a document of its own; exit status 2."""
    print(f"scrapy-rerp: error: {error}", file=sys.stderr)
    if output_format == "json":
        out.write(json.dumps({"command": command, "error": str(error)}) + "\n")
    return EXIT_ERROR
