"""Fleet tests' real parts: a redis-server on loopback, and Scrapy worker processes.

:class:`RedisServer` starts Debian's ``redis-server`` (``.ci/run`` installs it when missing) on
127.0.0.1, on a free port, with no persistence, and can stop and start it again on the same
port. :func:`start_worker` runs ``python -m tests.support.fleet_worker`` (one Scrapy crawl, a
scrapy-redis worker or a plain one) in its own process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A throwaway redis-server: no RDB, no AOF, loopback only."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (.ci/run installs Debian's redis-server)")
        self.binary = binary
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ],  # fmt: skip
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url)


def start_worker(config: dict[str, Any]) -> subprocess.Popen[str]:
    """One worker process; its last stdout line is a JSON report (tests/support/fleet_worker.py)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.fleet_worker", json.dumps(config)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_held(redis_server: RedisServer, workers: int, timeout: float = 60) -> None:
    """Wait until ``workers`` workers started with ``held_until`` are ready, held."""
    client = redis_server.client()
    deadline = time.monotonic() + timeout
    while client.llen("fleet:held") < workers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.llen("fleet:held") >= workers, "the held workers did not start"


def release(redis_server: RedisServer, key: str = "fleet:go") -> None:
    """Let the workers held until ``key`` crawl."""
    redis_server.client().set(key, 1)


def finish(worker: subprocess.Popen[str], timeout: float = 90) -> dict[str, Any]:
    """Wait for a worker and return its report (with its log's WARNING lines)."""
    out, err = worker.communicate(timeout=timeout)
    assert worker.returncode == 0, err[-4000:]
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    report["warnings"] = [line for line in err.splitlines() if "WARNING" in line]
    report["log"] = err
    return report


def kill(worker: subprocess.Popen[str]) -> None:
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=10)
