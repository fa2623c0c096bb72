"""A robots.txt URL downloaded by the command line (``check``, ``explain``, ``lint``, ``fetch``):
a redirect that cannot be followed, and ``--timeout`` as a deadline for the whole download;
each run as a subprocess against local servers."""

from __future__ import annotations

import json
import time

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
