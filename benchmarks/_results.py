"""What both benchmarks say about the machine and write at the top of a results file."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
from collections.abc import Sequence
from pathlib import Path


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, nproc {os.cpu_count()}, {platform.system()} {platform.release()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def write_results(
    path: Path,
    title: str,
    script: str,
    report: str,
    argv: Sequence[str],
    facts: Sequence[str] = (),
) -> None:
    """Write *report* to *path* under a header: date, machine, *facts*, the exact command."""
    shown = Path(script).resolve()
    try:
        shown = shown.relative_to(Path.cwd())
    except ValueError:
        pass
    command = shlex.join(["python", str(shown), *argv])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {title}",
        "",
        f"Written by `benchmarks/{Path(script).name} --write-results`.",
        "",
        f"- Date: {now}",
        f"- Machine: {machine_description()}",
        *(f"- {fact}" for fact in facts),
        f'- Command (from the repository root, after `pip install -e ".[bench]"`): `{command}`',
        "",
        report,
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def add_write_results_argument(parser: argparse.ArgumentParser, default: Path) -> None:
    """``--write-results [PATH]``: also write the report as Markdown, to *default* if no PATH."""
    parser.add_argument(
        "--write-results",
        nargs="?",
        type=Path,
        const=default,
        default=None,
        metavar="PATH",
        help=f"also write the report as Markdown (default benchmarks/{default.name})",
    )
