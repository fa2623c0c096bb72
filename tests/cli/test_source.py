"""``ROBOTS`` read: a file, standard input, a FIFO or a device read up to the size cap and one
byte more, never whole; a missing file or a bad URL is one line and exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run

# --- inputs are read up to the size cap, never whole -----------------------------------------


CAP = 500 * 1024


RULES = b"User-agent: *\nDisallow: /private\n"


CAPPED = "over 512,000 bytes: only the first 512,000 are read, as a crawler reads them"


def run_limited(*args: str, stdin: Any = None) -> subprocess.CompletedProcess[str]:
    """The command line with its address space limited to 1 GiB: a 2 GiB input read whole, or
    /dev/zero read to its end, fails with a MemoryError."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))"
    main = "import runpy; runpy.run_module('scrapy_rerp', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", f"{limit}; {main}", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


class Endless:
    """A thread that writes the rules, then comments, into a file descriptor until the reader
    goes away."""

    def __init__(self, opener: Any) -> None:
        self.opener = opener
        self.written = 0
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        try:
            with self.opener() as stream:
                stream.write(RULES)
                self.written += len(RULES)
                while True:
                    stream.write(b"# more\n" * 1024)
                    self.written += 7 * 1024
        except BrokenPipeError:
            pass  # the reader closed its end


def assert_read_up_to_the_cap(done: subprocess.CompletedProcess[str], name: str) -> None:
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr  # /private/x is disallowed: the rules were read
    assert done.stdout.startswith("DISALLOWED  /private/x  line 2: Disallow: /private")
    assert f"scrapy-rerp: {name}: {CAPPED}" in done.stderr


def test_dev_zero_is_read_up_to_the_cap() -> None:
    done = run_limited("lint", "/dev/zero", "--format", "json")
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["robots"] == {
        "source": "/dev/zero",
        "bytes": CAP,
        "truncated": True,
        "fetch": None,
        "not_robots_txt": {
            "code": "binary",
            "message": "binary data, not a robots.txt: a crawler finds no rules in it",
        },
        "robots_txt_overridden": False,
    }
    assert [p["code"] for p in document["problems"] if p["line"] is None] == [
        "binary",
        "too-large",
    ]
    # NUL bytes are no robots.txt: no verdict, but only once the cap was read.
    done = run_limited("check", "/dev/zero", "/a")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"scrapy-rerp: /dev/zero: {CAPPED} (RFC 9309 section 2.5); the rest is ignored\n"
        "scrapy-rerp: error: /dev/zero: binary data, not a robots.txt: a crawler finds no rules "
        "in it; no verdict on it without --read-anyway\n"
    )
    done = run_limited("check", "/dev/zero", "/a", "--read-anyway")
    assert (done.returncode, done.stdout.split()[0]) == (0, "ALLOWED")


def test_a_sparse_2_gib_file_is_read_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.write_bytes(RULES)
    os.truncate(path, 2 * 1024**3)  # sparse: no disk used, 2 GiB to read
    assert_read_up_to_the_cap(run_limited("check", str(path), "/private/x"), str(path))


def test_a_fifo_that_never_ends_is_read_up_to_the_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "robots.fifo"
    os.mkfifo(fifo)
    writer = Endless(lambda: open(fifo, "wb", buffering=0))  # noqa: SIM115 - closed by Endless
    try:
        done = run_limited("check", str(fifo), "/private/x")
    finally:
        # Unblock a writer still waiting for a reader (if the command never opened the FIFO).
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert_read_up_to_the_cap(done, str(fifo))
    writer.thread.join(10)
    assert not writer.thread.is_alive() and writer.written > CAP


def test_standard_input_that_never_ends_is_read_up_to_the_cap() -> None:
    read, write = os.pipe()
    writer = Endless(lambda: os.fdopen(write, "wb", buffering=0))
    with os.fdopen(read, "rb") as stdin:
        done = run_limited("check", "-", "/private/x", stdin=stdin)
    assert_read_up_to_the_cap(done, "<stdin>")
    writer.thread.join(10)
    assert not writer.thread.is_alive()


# --- input that cannot be read ---------------------------------------------------------------


def test_missing_file_exits_two(tmp_path: Path) -> None:
    done = run("check", str(tmp_path / "absent.txt"), "/x")
    assert done.returncode == 2
    assert "cannot read" in done.stderr and "absent.txt" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check", "http://[::1", "/a"),
        ("check", "http://[::1/robots.txt", "/a"),
        ("explain", "http://[::1/robots.txt", "/a"),
        ("check", "ftp://example.com/robots.txt", "/a"),
        ("fetch", "http://[::1"),
        ("fetch", "not a url"),
        ("explain", "http://h:99999/robots.txt", "/a"),
        ("lint", "http://"),
    ],
)
def test_bad_urls_exit_two_with_one_line(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("scrapy-rerp: error: ")
