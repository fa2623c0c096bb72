"""The command line run as a user runs it: a fresh interpreter, its output and exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


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
