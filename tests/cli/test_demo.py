"""``scrapy-rerp demo``: a polite Scrapy crawl of two local sites, run as a user runs it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def test_demo_runs_outside_the_repository_and_leaves_nothing_running(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rerp", "demo", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert time.monotonic() - started < 60
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] is True and doc["exit_status"] == 0
    assert all(check["ok"] for check in doc["checks"])
    assert {site["name"] for site in doc["sites"]} == {"shop", "blog"}
    for site in doc["sites"]:
        port = int(site["origin"].rsplit(":", 1)[1])
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # the server is gone
