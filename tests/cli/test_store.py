"""``scrapy-rerp store PATH [ORIGIN]`` and ``fetch --store PATH``: a robots.txt store read from
the command line, read only; each run as a subprocess on real store files."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rerp.core.data import Outcome
from scrapy_rerp.core.store import MAX_VALUE, RobotsStore, StoredCopy
from scrapy_rerp.core.urls import origin_of
from tests.support.cli import run, run_json
from tests.support.servers import Server

NOW = time.time()
EXAMPLE = origin_of("https://example.com")  # https://example.com:443
BODY = b"User-agent: *\nDisallow: /private\n# caf\xe9\n"
OTHER_BODY = b"User-agent: *\nDisallow: /\n"


def iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def copy(url: str, body: bytes, fetched_at: float, expires_at: float, **kw: object) -> StoredCopy:
    values: dict[str, object] = {"status": 200, "outcome": Outcome.PARSED, **kw}
    return StoredCopy(url=url, body=body, fetched_at=fetched_at, expires_at=expires_at, **values)  # type: ignore[arg-type]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A store of two origins: example.com (fresh) and an expired one, stored out of order."""
    path = tmp_path / "robots.sqlite"
    with RobotsStore(path) as store:
        store.put(
            "https://zz.example:443",
            copy(
                "https://zz.example/robots.txt",
                OTHER_BODY,
                NOW - 7200,
                NOW - 3600,
                status=404,
                outcome=Outcome.ALLOW_ALL,
            ),
        )
        store.put(
            EXAMPLE,
            copy("https://www.example.com/robots.txt", BODY, NOW - 60, NOW + 3600, etag=b'"v1"'),
        )
    return path


def test_the_listing(store_path: Path) -> None:
    before = files(store_path.parent)
    done = run("store", str(store_path))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    first, second = done.stdout.splitlines()
    assert first.split() == [
        EXAMPLE,
        "fetched",
        iso(NOW - 60),
        "200",
        "parsed",
        "fresh",
        "until",
        iso(NOW + 3600),
        "sha256",
        hashlib.sha256(BODY).hexdigest()[:12],
        f"{len(BODY)}",
        "bytes",
    ]
    assert second.split()[:6] == [
        "https://zz.example:443",
        "fetched",
        iso(NOW - 7200),
        "404",
        "allow-all",
        "expired",
    ]
    assert files(store_path.parent) == before  # read only: nothing made nor changed


def test_the_listing_in_json(store_path: Path) -> None:
    status, doc = run_json("store", str(store_path))
    assert status == 0 and doc["command"] == "store" and doc["exit_status"] == 0
    assert doc["store"] == str(store_path) and doc["dropped_rows"] == 0
    assert [o["origin"] for o in doc["origins"]] == [EXAMPLE, "https://zz.example:443"]
    assert doc["origins"][0] == {
        "origin": EXAMPLE,
        "url": "https://www.example.com/robots.txt",
        "status": 200,
        "outcome": "parsed",
        "fetched_at": iso(NOW - 60),
        "expires_at": iso(NOW + 3600),
        "fresh": True,
        "sha256": hashlib.sha256(BODY).hexdigest(),
        "bytes": len(BODY),
    }
    assert doc["origins"][1]["fresh"] is False


def test_an_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    RobotsStore(path).close()
    done = run("store", str(path))
    assert done.returncode == 0 and done.stdout == ""
    assert "the store holds no robots.txt" in done.stderr


@pytest.mark.parametrize("given", ["https://example.com", "https://example.com/x?y=1", EXAMPLE])
def test_one_origin_prints_its_stored_file(store_path: Path, given: str) -> None:
    before = files(store_path.parent)
    done = run("store", str(store_path), given)
    assert done.returncode == 0, done.stderr
    assert done.stdout == BODY.decode("utf-8", "replace")
    assert done.stderr.startswith(f"scrapy-rerp: {EXAMPLE}: https://www.example.com/robots.txt,")
    assert f"fresh until {iso(NOW + 3600)}" in done.stderr
    assert files(store_path.parent) == before  # its use is not even recorded


def test_one_origin_in_json(store_path: Path) -> None:
    status, doc = run_json("store", str(store_path), "https://example.com/")
    assert status == 0 and doc["found"] is True and doc["origin"] == EXAMPLE
    assert doc["body"] == BODY.decode("utf-8", "replace")
    assert doc["record"]["sha256"] == hashlib.sha256(BODY).hexdigest()
    assert doc["record"]["headers"] == {"ETag": '"v1"'}


def test_an_origin_not_in_the_store(store_path: Path) -> None:
    done = run("store", str(store_path), "https://nowhere.example")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"scrapy-rerp: error: https://nowhere.example:443 is not in the store {store_path}\n"
    )
    status, doc = run_json("store", str(store_path), "https://nowhere.example")
    assert status == 1 and doc["found"] is False and doc["body"] is None


def test_an_origin_that_is_no_url(store_path: Path) -> None:
    done = run("store", str(store_path), "example.com")
    assert done.returncode == 2 and "give an origin such as https://example.com" in done.stderr


def test_a_missing_path_is_an_error_and_no_file_is_made(tmp_path: Path) -> None:
    path = tmp_path / "nothing.sqlite"
    done = run("store", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"scrapy-rerp: error: {path}: no such file (no robots.txt store there; none is made):"
        f" a crawl with RERP_STORE = '{path}' keeps it at {path} when started in this"
        " directory\n"
    )
    status, doc = run_json("store", str(path))
    assert status == 2 and doc == {"command": "store", "error": done.stderr[20:-1]}
    done = run("fetch", "https://example.com", "--store", str(path))
    assert done.returncode == 2 and "no such file" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", [b"garbage " * 200, b""])
def test_a_damaged_store_is_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    done = run("store", str(path))
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"scrapy-rerp: error: {path}: not a usable robots.txt store: ")
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.sqlite"]


# -- fetch --store --------------------------------------------------------------------------------


def stored(tmp_path: Path, server: Server, expires_at: float) -> Path:
    path = tmp_path / "robots.sqlite"
    with RobotsStore(path) as store:
        store.put(
            origin_of(server.origin),
            copy(
                server.url("/robots.txt"),
                b"User-agent: *\nDisallow: /stored\n",
                NOW - 60,
                expires_at,
            ),
        )
    return path


def test_fetch_uses_a_fresh_stored_copy_without_a_download(tmp_path: Path, server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    path = stored(tmp_path, server, NOW + 3600)
    before = files(tmp_path)
    done = run("fetch", server.origin, "--store", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == (
        f"store       {path}: from the store, fetched {iso(NOW - 60)}, fresh until "
        f"{iso(NOW + 3600)} (not downloaded)"
    )
    assert "  line 1: User-agent: * (1 rule)" in lines
    status, doc = run_json("fetch", server.url("/robots.txt"), "--store", str(path))
    assert status == 0
    assert doc["fetch"]["from_store"] is True and doc["fetch"]["status"] == 200
    assert doc["fetch"]["expires"] == iso(NOW + 3600)
    assert doc["store"]["used"] is True and doc["store"]["origin"] == origin_of(server.origin)
    assert doc["groups"][0]["rules"] == [{"line": 2, "rule": "Disallow: /stored"}]
    assert server.paths() == []  # nothing downloaded
    assert files(tmp_path) == before


def test_fetch_downloads_past_an_expired_copy(tmp_path: Path, server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    path = stored(tmp_path, server, NOW - 1)
    before = files(tmp_path)
    status, doc = run_json("fetch", server.origin, "--store", str(path))
    assert status == 0
    assert doc["fetch"]["from_store"] is False
    assert doc["store"]["used"] is False and "expired" in doc["store"]["why"]
    assert doc["groups"][0]["rules"] == [{"line": 2, "rule": "Disallow: /downloaded"}]
    assert server.paths() == ["/robots.txt"]
    assert files(tmp_path) == before  # the download is not written to the store


def test_fetch_downloads_an_origin_not_stored(tmp_path: Path, server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    path = tmp_path / "robots.sqlite"
    RobotsStore(path).close()
    done = run("fetch", server.origin, "--store", str(path))
    assert done.returncode == 0
    assert f"store       {path}: no stored copy: downloaded" in done.stdout.splitlines()
    assert server.paths() == ["/robots.txt"]
    status, doc = run_json("fetch", server.origin)
    assert doc["store"] is None and doc["fetch"]["from_store"] is False


def test_fetch_of_another_url_does_not_look_the_store_up(tmp_path: Path, server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    path = stored(tmp_path, server, NOW + 3600)
    _, doc = run_json("fetch", server.url("/other.txt"), "--store", str(path))
    assert doc["store"]["used"] is False
    assert doc["store"]["why"] == "not the site's robots.txt: not looked up"
    # The site's robots.txt is asked first whether a crawl may download the page.
    assert server.paths() == ["/robots.txt", "/other.txt"]


def test_fetch_with_a_damaged_store_is_one_line(tmp_path: Path, server: Server) -> None:
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"garbage " * 200)
    done = run("fetch", server.origin, "--store", str(path))
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"scrapy-rerp: error: {path}: not a usable robots.txt store: ")
    assert server.paths() == []


# -- rows that fail their checks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("fetched_at = -1e308", "time"),
        ("expires_at = 1e20", "time"),
        ("fetched_at = fetched_at + 4 * 365 * 86400", "future"),
    ],
)
def test_a_row_whose_times_are_not_times_is_named_exit_2(
    store_path: Path, tmp_path: Path, server: Server, change: str, reason: str
) -> None:
    conn = sqlite3.connect(store_path, isolation_level=None)
    conn.execute(f"UPDATE robots SET {change} WHERE origin = ?", (EXAMPLE,))
    conn.close()
    done = run("store", str(store_path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["https://zz.example:443"]
    assert f"the row of '{EXAMPLE}' is not used ({reason})" in done.stderr
    status, doc = run_json("store", str(store_path))
    assert status == 2 and doc["dropped_rows"] == 1
    assert doc["rejected_rows"][0]["origin"] == repr(EXAMPLE)
    assert doc["rejected_rows"][0]["reason"] == reason
    done = run("store", str(store_path), EXAMPLE)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert f"({reason})" in done.stderr
    # fetch --store: the row is not used, the file downloaded
    conn = sqlite3.connect(store_path, isolation_level=None)
    conn.execute("UPDATE robots SET origin = ? WHERE origin = ?", (server.origin, EXAMPLE))
    conn.close()
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    status, doc = run_json("fetch", server.origin, "--store", str(store_path))
    assert status == 0 and doc["store"]["used"] is False
    assert doc["store"]["why"].startswith(f"the stored copy is not used ({reason}: ")
    assert server.paths() == ["/robots.txt"]


def test_an_expiry_past_the_longest_lifetime_is_bounded(tmp_path: Path, server: Server) -> None:
    # Stored two days ago "fresh for a century": fresh for RERP_MAX_LIFETIME (a day) at most.
    server.robots("User-agent: *\nDisallow: /downloaded\n")
    path = tmp_path / "robots.sqlite"
    with RobotsStore(path) as store:
        body = b"User-agent: *\nDisallow: /stored\n"
        store.put(server.origin, copy(server.url("/robots.txt"), body, NOW - 2 * 86400, 4e9))
    status, doc = run_json("fetch", server.origin, "--store", str(path))
    assert status == 0 and doc["store"]["used"] is False
    assert doc["store"]["why"] == f"the stored copy expired at {iso(NOW - 86400)}: downloaded"
    assert server.paths() == ["/robots.txt"]


PEAK_RSS = (
    "import resource, sys\n"
    "from scrapy_rerp.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "sys.stderr.write(f'\\nPEAK {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    "sys.exit(status)\n"
)


def peak_kib(*args: str) -> tuple[int, str]:
    """The exit status and the peak RSS (KiB) of the command line run with ``args``."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="no SQLite length limit before Python 3.11 (Connection.setlimit): status-policy.rst",
)
def test_a_huge_stored_value_is_never_read_into_memory(store_path: Path, tmp_path: Path) -> None:
    # 64 MiB planted through SQLite, as a body and as an origin key: the command line's memory
    # grows by at most twice the store's largest value (MAX_VALUE), not by the row.
    baseline = tmp_path / "baseline.sqlite"
    baseline.write_bytes(store_path.read_bytes())
    huge = 64 * 1024 * 1024
    conn = sqlite3.connect(store_path, isolation_level=None)
    conn.execute("UPDATE robots SET body = zeroblob(?) WHERE origin = ?", (huge, EXAMPLE))
    conn.execute(
        "UPDATE robots SET origin = printf('https://%.*c', ?, 'x') WHERE origin != ?",
        (huge, EXAMPLE),
    )
    conn.close()
    peaks = {}
    for name, path in (("baseline", baseline), ("huge", store_path)):
        for args in (["store", str(path)], ["store", str(path), EXAMPLE]):
            status, stderr = peak_kib(*args)
            assert "Traceback" not in stderr, stderr
            peaks[name, len(args)] = int(stderr.rsplit("PEAK ", 1)[1])
            if name == "huge":
                assert status == 2, stderr
                assert len(stderr) < 10_000  # no origin quoted whole
    for args in (2, 3):
        growth = (peaks["huge", args] - peaks["baseline", args]) * 1024
        assert growth < 2 * MAX_VALUE, (args, growth)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as a user without write access sees it: a read-only bind mount beside it
    where this process may mount (root, who ignores permissions), else its permissions and
    its files' taken away."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield folder
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    mounted = folder.with_name(folder.name + "-ro")
    mounted.mkdir()
    commands = [
        ["mount", "--bind", str(folder), str(mounted)],
        ["mount", "-o", "remount,bind,ro", str(mounted)],
    ]
    for command in commands:
        done = subprocess.run(command, capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", str(mounted)], capture_output=True, check=False)
            pytest.skip(f"root without a read-only mount: {done.stderr!r}")
    try:
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_a_store_on_a_read_only_mount_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "stores"
    folder.mkdir()
    path = folder / "robots.sqlite"
    with RobotsStore(path) as store:
        store.put(EXAMPLE, copy("https://example.com/robots.txt", BODY, NOW - 60, NOW + 3600))
    before = files(folder)
    with read_only(folder) as seen:
        done = run("store", str(seen / "robots.sqlite"))
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0] == EXAMPLE
        done = run("store", str(seen / "robots.sqlite"), EXAMPLE)
        assert done.returncode == 0, done.stderr
        assert done.stdout == BODY.decode("utf-8", "replace")
    assert files(folder) == before
