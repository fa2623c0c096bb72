"""A robots.txt URL downloaded by the command line (``check``, ``explain``, ``lint``, ``fetch``):
a redirect that cannot be followed, and ``--timeout`` as a deadline for the whole download;
each run as a subprocess against local servers."""

from __future__ import annotations

import json
import subprocess
import time
from urllib.parse import urlsplit

import pytest

from tests.support.cli import STAR_GROUP, run
from tests.support.servers import Reply, Server


@pytest.mark.parametrize("location", ["http://[::1", "file:///etc/passwd", "http://h:99999/r"])
@pytest.mark.parametrize("command", ["fetch", "check", "lint"])
def test_a_redirect_that_cannot_be_followed_makes_robots_txt_unavailable(
    server: Server, location: str, command: str
) -> None:
    server.route("/robots.txt", Reply.redirect(location))
    args = [command, server.url("/robots.txt")] + (["/x"] if command == "check" else [])
    done = run(*args, "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    if command == "lint":  # nothing to lint: an error naming why
        assert done.returncode == 2
        assert "robots.txt unavailable (bad redirect target" in json.loads(done.stdout)["error"]
        return
    assert done.returncode == 0
    fetch = json.loads(done.stdout)["robots" if command == "check" else "fetch"]
    fetch = fetch["fetch"] if command == "check" else fetch
    assert fetch["outcome"] == "allow-all" and fetch["redirects"] == []
    assert fetch["reason"].startswith(f"bad redirect target {location!r}: ")
    assert server.paths() == ["/robots.txt"]


# A robots.txt that would take minutes at a byte a second; each read waits one second only.
SLOW = (STAR_GROUP + "#" * 200 + "\n").encode()


TRICKLES = {
    "body": lambda server: server.robots(SLOW, chunk_size=1, chunk_delay=1.0),
    "head": lambda server: server.robots(SLOW, head_byte_delay=1.0),
    "redirects": lambda server: (  # three hops of 0.9 s each, every one within the timeout
        server.route("/robots.txt", Reply(301, headers={"Location": "/r1"}, delay=0.9)),
        server.route("/r1", Reply(301, headers={"Location": "/r2"}, delay=0.9)),
        server.route("/r2", Reply(body=STAR_GROUP, delay=0.9)),
    ),
}


TIMEOUT = 1.5


@pytest.mark.parametrize(
    ("command", "trickle"),
    [
        (("fetch",), "body"),
        (("fetch",), "head"),
        (("fetch",), "redirects"),
        (("check", "/public"), "body"),
        (("explain", "/public"), "head"),
        (("lint",), "body"),
    ],
)
def test_timeout_is_a_deadline_for_the_whole_download(
    server: Server, command: tuple[str, ...], trickle: str
) -> None:
    TRICKLES[trickle](server)
    started = time.monotonic()
    done = run(command[0], server.url("/robots.txt"), *command[1:], "--timeout", str(TIMEOUT))
    took = time.monotonic() - started
    assert "Traceback" not in done.stderr, done.stderr
    assert took < TIMEOUT + 5, took  # a per-read timeout would take minutes (or 2.7 s, 3 hops)
    reason = f"timed out: not downloaded within {TIMEOUT:g} s"
    if command[0] == "lint":
        assert done.returncode == 2
        assert f"robots.txt unreachable ({reason})" in done.stderr
    else:
        assert done.returncode == 1  # unreachable: nothing may be downloaded for now
        assert f"robots.txt unreachable ({reason})" in done.stdout + done.stderr
    if trickle == "body":
        [hit] = server.hits("/robots.txt")
        assert not hit.completed and hit.bytes_sent < len(SLOW) // 2


# -- the same deadline for every download the command line makes: a page, a tdmrep.json --------

#: A body that takes 20 s at a byte every 0.2 s: no read between two bytes ever waits 1 s.
DRIP = b"[" + b" " * 98 + b"]"
TDMREP = "/.well-known/tdmrep.json"


def timed_run(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = run(*args, "--timeout", "1")
    return time.monotonic() - started, done


@pytest.mark.parametrize(
    "command",
    [
        ("fetch", TDMREP),
        ("lint", TDMREP),
        ("page", "/page"),
        ("page", "/tdm"),
        ("check", "/robots.txt", "/tdm", "--usage", "train-ai"),
    ],
)
def test_timeout_is_a_deadline_for_a_page_and_a_tdmrep_file(
    server: Server, command: tuple[str, ...]
) -> None:
    server.robots(STAR_GROUP)
    for path, kind in (("/page", "text/html"), (TDMREP, "application/json")):
        server.route(path, Reply(body=DRIP, content_type=kind, chunk_size=1, chunk_delay=0.2))
    name, asked, *rest = command
    took, done = timed_run(name, server.url(asked), *rest)
    assert "Traceback" not in done.stderr, done.stderr
    # The deadline (1 s), and slack for the interpreter's start and the quick downloads around
    # it (robots.txt, the page): a timeout between reads would take 20 s.
    assert took < 1 + 5, took
    dripped = server.url("/page" if asked == "/page" else TDMREP)
    reason = f"{dripped}: timed out: not downloaded within 1 s"
    if name in ("fetch", "lint", "page") and asked != "/tdm":  # nothing to report on: an error
        assert done.returncode == 2
        assert done.stderr.splitlines()[-1] == f"scrapy-rerp: error: {reason}"
    elif name == "page":  # the page, with no file from its origin
        assert done.returncode == 0, done.stderr
        assert f"tdmrep.json {dripped} (unreachable ({reason}))" in done.stdout.splitlines()
    else:
        assert done.returncode == 0, done.stderr
        assert f"tdmrep.json {dripped}: unreachable ({reason})" in done.stdout.splitlines()
    [hit] = server.hits(urlsplit(dripped).path)
    assert not hit.completed and hit.bytes_sent < len(DRIP) // 2
