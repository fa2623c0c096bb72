"""The command line run as a user runs it: a fresh interpreter, its output and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: A * group and an ExampleBot group, with per-group values and a sitemap.
ROBOTS = """\
User-agent: *
Disallow: /private
Allow: /private/public

User-agent: ExampleBot
Disallow: /
Crawl-delay: 5
Request-rate: 1/10s 0600-0845

Sitemap: https://example.com/sitemap.xml
"""

#: The * group of ROBOTS alone.
STAR_GROUP = "User-agent: *\nDisallow: /private\nAllow: /private/public\n"

#: AI usage preferences (Content-Usage, Content-Signal) for every crawler and for ExampleBot.
USAGE = """\
User-agent: *
Disallow: /private/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes, ai-input=no

User-agent: ExampleBot
Disallow: /admin/
Content-Signal: ai-train=yes, search=no
"""

#: Sitemap lines of which a bad one skips itself only (lines 4 and 5 are bad, 6 relative).
BAD_SITEMAPS = (
    "User-agent: *\nDisallow: /private\n"
    "Sitemap: https://example.com/one.xml\n"
    "Sitemap: http://[::1/sitemap.xml\n"
    "Sitemap:\n"
    "Sitemap: /two.xml\n"
)


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rerp", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    # Decoded here rather than with text=True, so that stdin can stay bytes.
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def run_json(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    done = run(*args, "--format", "json", stdin=stdin)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def write(tmp_path: Path, content: str | bytes, name: str = "robots.txt") -> str:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return str(path)
