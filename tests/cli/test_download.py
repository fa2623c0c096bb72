"""A robots.txt URL downloaded by the command line (``check``, ``explain``, ``lint``, ``fetch``):
a redirect that cannot be followed, and ``--timeout`` as a deadline for the whole download;
each run as a subprocess against local servers."""

from __future__ import annotations

import json
import subprocess
import time
from urllib.parse import urlsplit

import pytest

from tests.support.cli import STAR_GROUP, run, run_json
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


def test_a_redirect_with_credentials_is_a_failed_redirect_and_keeps_them_secret(
    server: Server,
) -> None:
    server.route("/elsewhere.txt", Reply(body="User-agent: *\nDisallow: /\n"))
    server.route("/robots.txt", Reply.redirect(f"http://user:s3cret@{server.netloc}/elsewhere.txt"))
    done = run("fetch", server.url("/robots.txt"))
    assert done.returncode == 0, done.stderr  # allow all, as for any redirect that fails
    assert server.paths() == ["/robots.txt"]
    why = (
        f"bad redirect target 'http://***@{server.netloc}/elsewhere.txt': user:password@ in the "
        "URL: credentials are not followed"
    )
    assert f"outcome     allow-all: robots.txt unavailable ({why}): every URL is allowed" in (
        done.stdout.splitlines()
    )
    _, document = run_json("fetch", server.url("/robots.txt"))
    assert document["fetch"]["reason"] == why and document["fetch"]["redirects"] == []
    assert "s3cret" not in done.stdout + done.stderr + json.dumps(document)


# A robots.txt that would take minutes at a byte a second; each read waits one second only.
SLOW = (STAR_GROUP + "#" * 200 + "\n").encode()


TRICKLES = {
    "body": lambda server: server.robots(SLOW, chunk_size=1, chunk_delay=1.0),
    "head": lambda server: server.robots(SLOW, head_byte_delay=1.0),
    "redirects": lambda server: (  # three hops of 0.9 s each, every one within the timeout
        server.route("/robots.txt", Reply(status=301, headers={"Location": "/r1"}, delay=0.9)),
        server.route("/r1", Reply(status=301, headers={"Location": "/r2"}, delay=0.9)),
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


# -- a URL that is no robots.txt: downloaded only when a crawl would download it ---------------

PRIVATE = "User-agent: *\nDisallow: /private/\n"


@pytest.mark.parametrize("command", [("fetch",), ("check", "/x"), ("explain", "/x"), ("lint",)])
def test_a_page_robots_txt_disallows_is_not_downloaded_as_robots(
    server: Server, command: tuple[str, ...]
) -> None:
    server.robots(PRIVATE)
    url = server.url("/private/robots.txt")
    done = run(command[0], url, *command[1:])
    assert done.returncode == 2
    assert server.paths() == ["/robots.txt"]  # the site's robots.txt only, never the page
    assert (done.stdout, done.stderr) == (
        "",
        f"scrapy-rerp: error: {url}: robots.txt disallows it (line 2: Disallow: /private/): "
        "not downloaded, as a crawl would not download it (--ignore-robots-txt downloads it "
        "anyway)\n",
    )


def test_an_unreachable_robots_txt_keeps_a_page_from_being_downloaded(server: Server) -> None:
    server.robots("busy", status=503)
    done = run("fetch", server.url("/staging/robots.txt"))
    assert done.returncode == 2
    assert server.paths() == ["/robots.txt"]
    assert "robots.txt unreachable (HTTP 503)" in done.stderr


def test_ignore_robots_txt_downloads_it_and_says_so(server: Server) -> None:
    server.robots(PRIVATE)
    server.route("/private/robots.txt", Reply(body="User-agent: *\nDisallow: /x\n"))
    url = server.url("/private/robots.txt")
    done = run("check", url, "/x", "--ignore-robots-txt")
    assert done.returncode == 1, done.stderr
    assert server.paths() == ["/robots.txt", "/private/robots.txt"]
    assert done.stdout == "DISALLOWED  /x  line 2: Disallow: /x\n"
    assert done.stderr == (
        f"scrapy-rerp: {url}: robots.txt disallows it (line 2: Disallow: /private/): downloaded "
        "all the same (--ignore-robots-txt), which a crawl never does\n"
    )
    done = run("check", url, "/x", "--ignore-robots-txt", "--format", "json")
    assert json.loads(done.stdout)["robots"]["robots_txt_overridden"] is True
    # A page robots.txt allows: downloaded, nothing overridden, nothing said.
    server.clear()
    _, document = run_json("fetch", url, "--ignore-robots-txt")
    assert document["robots_txt_overridden"] is True
    server.clear()
    done = run("fetch", server.url("/staging/robots.txt"), "--ignore-robots-txt")
    assert server.paths() == ["/robots.txt", "/staging/robots.txt"]
    assert "Traceback" not in done.stderr and "all the same" not in done.stderr
    assert done.stdout.startswith(f"robots.txt  {server.url('/staging/robots.txt')}\n")
