"""The robots.txt store on real SQLite files: what it keeps, the bound, files shared by stores
and processes, the version, damaged and unusable files, rows tampered with."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.http.headers import Headers

from scrapy_rerp.core.data import Outcome
from scrapy_rerp.core.status import lifetime_from_headers
from scrapy_rerp.core.store import (
    MAX_BODY,
    MAX_HEADER,
    MAX_ORIGIN,
    MAX_URL,
    SCHEMA_VERSION,
    USES_AT_ONCE,
    RobotsStore,
    StoredCopy,
    StoredOrigin,
    header_fields,
)
from scrapy_rerp.engine import parse

REPO = Path(__file__).resolve().parents[2]
LOGGER = "scrapy_rerp.store"
ORIGIN = "https://example.com"
BODY = b"User-agent: *\nDisallow: /private\n# caf\xe9, not UTF-8\n"
NOW = 1_700_000_000.25


def robots(**changes: object) -> StoredCopy:
    """A copy with every field set."""
    values: dict[str, object] = {
        "url": "https://www.example.com/robots.txt",
        "status": 200,
        "outcome": Outcome.PARSED,
        "fetched_at": NOW,
        "expires_at": NOW + 86400,
        "body": BODY,
        "date": b"Tue, 14 Nov 2023 22:13:20 GMT",
        "cache_control": b"public, max-age=3600",
        "expires": b"Tue, 14 Nov 2023 23:13:20 GMT",
        "etag": b'W/"5f-abc"',
        "last_modified": b"Mon, 13 Nov 2023 10:00:00 GMT",
    }
    values.update(changes)
    return StoredCopy(**values)  # type: ignore[arg-type]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "robots.sqlite"


@pytest.fixture
def store(path: Path) -> Iterator[RobotsStore]:
    with RobotsStore(path) as store:
        yield store


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING
    ]


def raw(path: Path) -> sqlite3.Connection:
    """The file, as anyone may open it: no store in between."""
    return sqlite3.connect(path, isolation_level=None)


def assert_no_op(store: RobotsStore) -> None:
    """An unavailable store answers as an empty one and stores nothing, without raising."""
    assert not store.available and store.reason
    assert store.get(ORIGIN) is None
    assert store.put(ORIGIN, robots()) is False
    assert store.renew(ORIGIN, NOW, NOW, {}) is None
    assert store.forget(ORIGIN) is False
    assert store.origins() == [] and list(store) == [] and len(store) == 0


# -- what is kept --------------------------------------------------------------------------------


def test_every_field_comes_back_from_the_file(path: Path) -> None:
    copy = robots()
    with RobotsStore(path) as store:
        assert store.get(ORIGIN) is None
        assert store.put(ORIGIN, copy)
    with RobotsStore(path) as store:  # another run
        back = store.get(ORIGIN)
        assert store.counts.as_dict() == {
            "stored": 0,
            "read": 1,
            "renewed": 0,
            "evicted": 0,
            "dropped_bad_rows": 0,
            "refused": 0,
            "errors": 0,
            "rejected": {},
        }
    assert back is not None and back == copy
    for name in StoredCopy.__dataclass_fields__:
        assert getattr(back, name) == getattr(copy, name), name
        assert type(getattr(back, name)) is type(getattr(copy, name)), name
    assert back.sha256 == hashlib.sha256(BODY).hexdigest()
    # what the caller does with it: the rules parsed again, the lifetime read again
    assert not parse(back.body).allowed("https://example.com/private/x", "bot")
    assert lifetime_from_headers(back.headers) == 3600.0
    assert back.headers[b"ETag"] == b'W/"5f-abc"'


def test_a_copy_without_headers_and_each_good_outcome(store: RobotsStore) -> None:
    copies = {
        "https://a.test": robots(
            date=None, cache_control=None, expires=None, etag=None, last_modified=None
        ),
        "https://b.test": robots(status=404, outcome=Outcome.ALLOW_ALL, body=b""),
        "https://c.test": robots(status=403, outcome=Outcome.DISALLOW_ALL, body=b"no"),
    }
    for origin, copy in copies.items():
        assert store.put(origin, copy)
    assert {origin: store.get(origin) for origin in copies} == copies
    assert copies["https://a.test"].headers == {}


def test_the_listing(store: RobotsStore) -> None:
    store.put("https://b.test", robots(status=404, outcome=Outcome.ALLOW_ALL, body=b""))
    store.put("https://a.test", robots())
    assert store.origins() == [
        StoredOrigin(
            origin="https://a.test",
            url="https://www.example.com/robots.txt",
            status=200,
            outcome=Outcome.PARSED,
            fetched_at=NOW,
            expires_at=NOW + 86400,
            sha256=robots().sha256,
            size=len(BODY),
        ),
        StoredOrigin(
            origin="https://b.test",
            url="https://www.example.com/robots.txt",
            status=404,
            outcome=Outcome.ALLOW_ALL,
            fetched_at=NOW,
            expires_at=NOW + 86400,
            sha256=robots(body=b"").sha256,
            size=0,
        ),
    ]
    assert list(store) == store.origins() and len(store) == 2


def test_header_fields_of_a_scrapy_response() -> None:
    headers = Headers({"ETag": '"v1"', "Cache-Control": "max-age=60", "Content-Type": "text/plain"})
    assert header_fields(headers) == {
        "date": None,
        "cache_control": b"max-age=60",
        "expires": None,
        "etag": b'"v1"',
        "last_modified": None,
    }
    copy = robots(**header_fields(headers))
    assert copy.headers == {b"Cache-Control": b"max-age=60", b"ETag": b'"v1"'}


def test_a_later_put_replaces_an_earlier_copy_never_the_reverse(store: RobotsStore) -> None:
    assert store.put(ORIGIN, robots())
    newer = robots(fetched_at=NOW + 10, status=404, outcome=Outcome.ALLOW_ALL, body=b"")
    assert store.put(ORIGIN, newer)
    assert store.get(ORIGIN) == newer
    # a copy fetched before the stored one (another process was slower to write it)
    assert store.put(ORIGIN, robots(fetched_at=NOW + 5)) is False
    assert store.get(ORIGIN) == newer
    assert store.counts.stored == 2 and len(store) == 1


def test_forget(store: RobotsStore) -> None:
    store.put(ORIGIN, robots())
    assert store.forget(ORIGIN) is True
    assert store.forget(ORIGIN) is False
    assert store.get(ORIGIN) is None and len(store) == 0


def test_renew_keeps_the_body(path: Path) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
        # a 304: a new Date and ETag; no Cache-Control, Expires nor Last-Modified (they stay)
        not_modified = Headers({"Date": "Wed, 15 Nov 2023 00:00:00 GMT", "ETag": 'W/"5f-abd"'})
        renewed = store.renew(ORIGIN, NOW + 7200, NOW + 10800, not_modified)
        assert store.counts.renewed == 1
    assert renewed == robots(
        fetched_at=NOW + 7200,
        expires_at=NOW + 10800,
        date=b"Wed, 15 Nov 2023 00:00:00 GMT",
        etag=b'W/"5f-abd"',
    )
    with RobotsStore(path) as store:
        assert store.get(ORIGIN) == renewed
        assert renewed.body == BODY and renewed.sha256 == robots().sha256


def test_renew_without_a_copy_or_after_a_later_one(store: RobotsStore) -> None:
    assert store.renew(ORIGIN, NOW, NOW + 60, {}) is None
    store.put(ORIGIN, robots(fetched_at=NOW + 100))
    # a 304 answered before the stored copy was fetched: the copy stays as it is
    assert store.renew(ORIGIN, NOW, NOW + 60, {b"ETag": b'"old"'}) == robots(fetched_at=NOW + 100)
    assert store.get(ORIGIN) == robots(fetched_at=NOW + 100)
    assert store.counts.renewed == 0


# -- refused copies ------------------------------------------------------------------------------


def test_a_body_over_the_cap_is_refused_once_said(
    store: RobotsStore, caplog: pytest.LogCaptureFixture
) -> None:
    assert store.put("https://full.test", robots(body=b"x" * MAX_BODY))
    assert store.put(ORIGIN, robots(body=b"x" * (MAX_BODY + 1))) is False
    assert store.put("https://b.test", robots(body=b"x" * (MAX_BODY + 1))) is False
    assert store.get(ORIGIN) is None and store.get("https://b.test") is None
    full = store.get("https://full.test")
    assert full is not None and len(full.body) == MAX_BODY
    assert store.counts.refused == 2 and store.counts.stored == 1
    assert len(warnings(caplog)) == 1 and "over the store's cap" in warnings(caplog)[0]
    assert store.available


@pytest.mark.parametrize(
    ("origin", "changes"),
    [
        ("", {}),
        ("x" * (MAX_ORIGIN + 1), {}),
        (ORIGIN, {"url": ""}),
        (ORIGIN, {"url": "https://a.test/" + "x" * MAX_URL}),
        (ORIGIN, {"status": 99}),
        (ORIGIN, {"status": True}),
        (ORIGIN, {"outcome": Outcome.UNREACHABLE}),
        (ORIGIN, {"outcome": Outcome.REDIRECT}),
        (ORIGIN, {"fetched_at": math.nan}),
        (ORIGIN, {"expires_at": math.inf}),
        (ORIGIN, {"etag": '"a str"'}),
        (ORIGIN, {"cache_control": b"x" * (MAX_HEADER + 1)}),
    ],
)
def test_a_bad_value_is_refused(
    store: RobotsStore, origin: str, changes: dict[str, object]
) -> None:
    assert store.put(origin, robots(**changes)) is False
    assert store.counts.refused == 1 and len(store) == 0 and store.available


def test_a_renewal_with_a_bad_value_is_refused(store: RobotsStore) -> None:
    store.put(ORIGIN, robots())
    assert store.renew(ORIGIN, math.nan, NOW, {}) is None
    assert store.renew(ORIGIN, NOW + 1, NOW + 2, {b"ETag": b"x" * (MAX_HEADER + 1)}) is None
    assert store.get(ORIGIN) == robots() and store.counts.refused == 2


# -- the bound -----------------------------------------------------------------------------------


def test_the_least_recently_used_origins_are_evicted(path: Path) -> None:
    with RobotsStore(path, max_origins=3) as store:
        for name in "abc":
            assert store.put(f"https://{name}.test", robots())
        assert store.get("https://a.test") is not None  # a is used: b is now the oldest
        store.put("https://d.test", robots())
        assert [o.origin for o in store.origins()] == [
            "https://a.test",
            "https://c.test",
            "https://d.test",
        ]
        store.put("https://c.test", robots(fetched_at=NOW + 1))  # a put is a use: a is oldest
        store.renew("https://d.test", NOW + 1, NOW + 2, {})  # and so is a renewal
        store.put("https://e.test", robots())
        assert [o.origin for o in store.origins()] == [
            "https://c.test",
            "https://d.test",
            "https://e.test",
        ]
        assert store.counts.evicted == 2 and len(store) == 3
    # another run with a lower bound: its first new origin evicts the excess in one go
    with RobotsStore(path, max_origins=1) as store:
        assert store.get("https://c.test") is not None
        store.put("https://f.test", robots())
        assert [o.origin for o in store.origins()] == ["https://f.test"]
        assert store.counts.evicted == 3


def test_a_lookup_s_use_is_recorded_with_the_next_write_or_at_close(path: Path) -> None:
    with RobotsStore(path, max_origins=2) as store:
        for name in "ab":
            assert store.put(f"https://{name}.test", robots())
        assert store.get("https://a.test") is not None
    # recorded at close: in another run, b is the oldest
    with RobotsStore(path, max_origins=2) as store:
        store.put("https://c.test", robots())
        assert [o.origin for o in store.origins()] == ["https://a.test", "https://c.test"]
        # and in batches, without a write: another process sees the uses
        for _ in range(USES_AT_ONCE):
            assert store.get("https://a.test") is not None
        with RobotsStore(path, max_origins=2) as other:
            other.put("https://d.test", robots())
            assert [o.origin for o in other.origins()] == ["https://a.test", "https://d.test"]


def test_the_bound_holds_through_forgets_and_replacements(store: RobotsStore) -> None:
    small = RobotsStore(store.path, max_origins=2)
    for i in range(5):
        small.put(f"https://{i}.test", robots())
        small.put(f"https://{i}.test", robots(fetched_at=NOW + 1))  # a replacement adds none
    assert len(small) == 2 and small.counts.evicted == 3
    small.forget("https://4.test")
    small.put("https://5.test", robots())
    assert [o.origin for o in small.origins()] == ["https://3.test", "https://5.test"]
    small.close()


def test_max_origins_is_at_least_one(path: Path) -> None:
    with pytest.raises(ValueError):
        RobotsStore(path, max_origins=0)


# -- one file, several stores --------------------------------------------------------------------


def test_two_stores_on_one_file_see_each_other(path: Path) -> None:
    with RobotsStore(path) as first, RobotsStore(path) as second:
        first.put("https://a.test", robots())
        assert second.get("https://a.test") == robots()
        second.put("https://b.test", robots(body=b"Disallow: /"))
        assert first.get("https://b.test") == robots(body=b"Disallow: /")
        first.forget("https://a.test")
        assert second.get("https://a.test") is None
        assert [o.origin for o in second.origins()] == ["https://b.test"]


WRITER = textwrap.dedent(
    """
    import sys
    from scrapy_rerp.core.data import Outcome
    from scrapy_rerp.core.store import RobotsStore, StoredCopy

    store = RobotsStore(sys.argv[1])
    for i in range(int(sys.argv[2])):
        body = f"User-agent: *\\nDisallow: /{i}\\n".encode()
        copy = StoredCopy(
            url=f"https://w{i}.test/robots.txt",
            status=200,
            outcome=Outcome.PARSED,
            fetched_at=1.0,
            expires_at=2.0,
            body=body,
        )
        assert store.put(f"https://w{i}.test", copy), store.reason
    assert store.available and store.counts.errors == 0, store.reason
    store.close()
    """
)


def test_a_process_writes_while_this_one_reads_and_writes(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    n = 150
    store = RobotsStore(path)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(n)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
    )
    seen: set[int] = set()
    mine = 0
    deadline = time.monotonic() + 60
    while len(seen) < n and time.monotonic() < deadline:
        store.put(f"https://r{mine}.test", robots())  # writing beside it
        mine += 1
        for i in range(n):
            if i not in seen and (copy := store.get(f"https://w{i}.test")) is not None:
                assert copy.body == f"User-agent: *\nDisallow: /{i}\n".encode()
                assert copy.url == f"https://w{i}.test/robots.txt"
                seen.add(i)
    _, stderr = writer.communicate(timeout=60)
    assert writer.returncode == 0, stderr.decode()
    assert len(seen) == n
    assert store.available and store.counts.errors == 0 and warnings(caplog) == []
    assert len(store) == n + mine
    store.close()


def test_threads_share_one_store(store: RobotsStore) -> None:
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(40):
                origin = f"https://t{k}-{i}.test"
                assert store.put(origin, robots(body=origin.encode()))
                copy = store.get(origin)
                assert copy is not None and copy.body == origin.encode()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(store) == 160 and store.counts.stored == 160


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_opens_its_own_connection(store: RobotsStore) -> None:
    store.put("https://parent.test", robots())
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = store.get("https://parent.test") == robots() and store.put(
            "https://child.test", robots()
        )
        os._exit(0 if ok and store.available else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get("https://child.test") == robots() and store.available


# -- the version ---------------------------------------------------------------------------------


def test_a_store_of_another_version_is_set_aside(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    conn = raw(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with RobotsStore(path) as store:
        assert store.available and store.get(ORIGIN) is None and len(store) == 0
        assert store.put(ORIGIN, robots(body=b"new"))
    [aside] = [p for p in path.parent.iterdir() if p.name.startswith(f"{path.name}.v")]
    assert aside.name.startswith(f"robots.sqlite.v{SCHEMA_VERSION + 1}.")
    [message] = warnings(caplog)
    assert "set aside" in message and aside.name in message
    # the old store is whole beside it, alone (no log of another file paired with it)
    old = raw(aside)
    assert old.execute("SELECT origin, body FROM robots").fetchall() == [(ORIGIN, BODY)]
    old.close()
    assert sorted(p.name for p in path.parent.iterdir() if "-wal" in p.name) == []
    with RobotsStore(path) as store:
        assert store.get(ORIGIN) == robots(body=b"new")


def test_a_store_of_another_version_in_use_is_left_alone(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    other = raw(path)  # a process of that version, running
    other.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    other.execute("SELECT count(*) FROM robots").fetchone()
    store = RobotsStore(path, timeout=0.1)
    assert "another process has it open" in store.reason
    assert_no_op(store)
    assert len(warnings(caplog)) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "robots.sqlite",
        "robots.sqlite-shm",
        "robots.sqlite-wal",
        "robots.sqlite.lock",
    ]
    assert other.execute("SELECT origin FROM robots").fetchall() == [(ORIGIN,)]
    other.close()
    with RobotsStore(path) as store:  # free now: set aside
        assert store.available and len(store) == 0


OPENER = textwrap.dedent(
    """
    import sys
    from scrapy_rerp.core.data import Outcome
    from scrapy_rerp.core.store import RobotsStore, StoredCopy

    store = RobotsStore(sys.argv[1], timeout=10)
    origin = f"https://{sys.argv[2]}.test"
    copy = StoredCopy(
        url=origin + "/robots.txt",
        status=200,
        outcome=Outcome.PARSED,
        fetched_at=1.0,
        expires_at=2.0,
        body=b"",
    )
    assert store.put(origin, copy), store.reason
    store.close()
    """
)


def test_processes_that_open_a_store_of_another_version_together(path: Path) -> None:
    """One sets it aside; each works with the new store."""
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    conn = raw(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    openers = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(path), f"p{i}"],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE,
        )
        for i in range(3)
    ]
    for opener in openers:
        _, stderr = opener.communicate(timeout=60)
        assert opener.returncode == 0, stderr.decode()
    asides = [p for p in path.parent.iterdir() if p.name.startswith(f"{path.name}.v")]
    with sqlite3.connect(asides[0]) as old:  # whole
        assert old.execute("SELECT origin, body FROM robots").fetchall() == [(ORIGIN, BODY)]
    assert len(asides) == 1
    with RobotsStore(path) as store:
        assert [o.origin for o in store.origins()] == [f"https://p{i}.test" for i in range(3)]


def test_another_application_s_database_is_never_touched(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    conn = raw(path)
    conn.execute("CREATE TABLE robots (origin TEXT)")
    conn.execute("INSERT INTO robots VALUES ('mine')")
    conn.close()
    before = path.read_bytes()
    store = RobotsStore(path)
    assert "not a robots.txt store" in store.reason
    assert_no_op(store)
    assert len(warnings(caplog)) == 1 and path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["robots.sqlite", "robots.sqlite.lock"]


# -- files that cannot be used -------------------------------------------------------------------


def many(path: Path, n: int = 300) -> None:
    with RobotsStore(path) as store:
        for i in range(n):
            store.put(f"https://{i}.test", robots(body=os.urandom(200)))


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\x00garbage\xff" * 1000, id="garbage"),
        pytest.param(b"SQLite format 3\x00" + b"\xff" * 5000, id="sqlite-magic-then-garbage"),
        pytest.param(b"SQLite", id="a-few-bytes"),
    ],
)
def test_a_garbage_file(path: Path, caplog: pytest.LogCaptureFixture, content: bytes) -> None:
    path.write_bytes(content)
    store = RobotsStore(path)
    assert_no_op(store)
    assert store.counts.errors == 1
    [message] = warnings(caplog)
    assert str(path) in message and "not used for the rest of this run" in message
    assert path.read_bytes() == content  # left for the user


@pytest.mark.parametrize("keep", [0.5, 1000], ids=["half", "under-a-page"])
def test_a_truncated_file(path: Path, caplog: pytest.LogCaptureFixture, keep: float) -> None:
    many(path)
    size = path.stat().st_size
    with open(path, "r+b") as file:
        file.truncate(int(size * keep) if keep < 1 else int(keep))
    store = RobotsStore(path)
    assert "truncated" in store.reason
    assert_no_op(store)
    assert len(warnings(caplog)) == 1 and store.counts.errors == 1


def test_damage_met_by_a_call(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Damage the header does not show (pages overwritten): the call that meets it makes the
    store unavailable, and nothing is read wrongly."""
    many(path)
    store = RobotsStore(path)
    assert store.available
    with open(path, "r+b") as file:  # every page after the first few: garbage
        file.seek(4096 * 3)
        file.write(b"\xa5" * (path.stat().st_size - 4096 * 3))
    answers = [store.get(f"https://{i}.test") for i in range(300)]
    assert not store.available and store.counts.errors == 1
    assert len(warnings(caplog)) == 1
    assert all(copy is None or len(copy.body) == 200 for copy in answers)
    assert_no_op(store)


def test_a_directory_in_its_place(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path.mkdir()
    store = RobotsStore(path)
    assert "directory" in store.reason
    assert_no_op(store)
    assert len(warnings(caplog)) == 1 and path.is_dir()


def read_only_place(tmp_path: Path) -> Path:
    """A directory this process cannot create files in: one made read-only, or, for root (whom
    permissions do not stop), /sys, where nobody can."""
    place = tmp_path
    if os.geteuid() == 0:
        place = Path("/sys")
    else:
        tmp_path.mkdir()
        tmp_path.chmod(0o555)
    try:
        (place / "robots-store-probe").touch()
    except OSError:
        return place
    pytest.skip(f"{place} is writable here")


def test_a_read_only_location(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    place = read_only_place(tmp_path / "ro" if os.geteuid() != 0 else tmp_path)
    store = RobotsStore(place / "robots-store-test.sqlite")
    assert_no_op(store)
    assert len(warnings(caplog)) == 1 and store.counts.errors == 1
    assert not (place / "robots-store-test.sqlite").exists()


def test_a_lock_held_past_the_busy_timeout(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    store = RobotsStore(path, timeout=0.1)
    other = raw(path)
    other.execute("BEGIN EXCLUSIVE")  # a process that writes and does not let go
    assert store.get(ORIGIN) is not None  # a lookup is a read: it does not wait (WAL)
    started = time.monotonic()
    assert not store.put("https://other.example", robots())
    assert 0.1 <= time.monotonic() - started < 5
    assert "locked" in store.reason and store.counts.errors == 1
    other.execute("ROLLBACK")
    assert_no_op(store)  # for the rest of the run, even once the lock is let go
    assert len(warnings(caplog)) == 1
    other.close()


def test_a_listing_does_not_wait_for_a_writer(path: Path) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    store = RobotsStore(path, timeout=0.1)
    other = raw(path)
    other.execute("BEGIN IMMEDIATE")  # another process, writing
    other.execute("DELETE FROM robots")
    assert [o.origin for o in store.origins()] == [ORIGIN] and len(store) == 1
    other.execute("COMMIT")
    assert store.origins() == [] and store.available
    other.close()
    store.close()


@pytest.mark.skipif(os.name == "nt", reason="flock")
def test_the_opening_lock_held_past_the_busy_timeout(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import fcntl

    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process, opening the store (and stuck)
        store = RobotsStore(path, timeout=0.1)
    assert "robots.sqlite.lock" in store.reason
    assert_no_op(store)
    assert len(warnings(caplog)) == 1
    with RobotsStore(path) as store:
        assert store.available


def test_close(path: Path) -> None:
    store = RobotsStore(path)
    store.put(ORIGIN, robots())
    store.close()
    assert store.reason == "closed"
    assert_no_op(store)
    store.close()
    with RobotsStore(path) as again:
        assert again.get(ORIGIN) == robots()
    assert not again.available


# -- rows tampered with --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        pytest.param("body = x'00' || body", id="body-text-not-utf8"),
        pytest.param("body = x'00'", id="body-not-its-sha256"),
        pytest.param("url = cast(x'ff2f' AS TEXT)", id="url-not-utf8"),
        pytest.param("sha256 = 'not a hash'", id="sha256-not-hex"),
        pytest.param("sha256 = upper(sha256)", id="sha256-upper-case"),
        pytest.param("body = 'User-agent: *'", id="body-text"),
        pytest.param(f"body = zeroblob({MAX_BODY + 1})", id="body-oversized"),
        pytest.param("status = 'ok'", id="status-text"),
        pytest.param("status = 999", id="status-out-of-range"),
        pytest.param("status = 200.5", id="status-real"),
        pytest.param("outcome = 'unreachable'", id="outcome-unreachable"),
        pytest.param("outcome = 'nonsense'", id="outcome-unknown"),
        pytest.param("fetched_at = 'yesterday'", id="time-text"),
        pytest.param("expires_at = 9e999", id="time-infinite"),
        pytest.param("url = x'6869'", id="url-blob"),
        pytest.param("url = ''", id="url-empty"),
        pytest.param(f"url = printf('%.{MAX_URL + 1}c', 'x')", id="url-oversized"),
        pytest.param("etag = 'a str'", id="header-text"),
        pytest.param("etag = 42", id="header-integer"),
        pytest.param(f"date = zeroblob({MAX_HEADER + 1})", id="header-oversized"),
    ],
)
def test_a_tampered_row_is_dropped_and_counted(
    path: Path, caplog: pytest.LogCaptureFixture, change: str
) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
        store.put("https://other.test", robots())
    conn = raw(path)
    assert conn.execute(f"UPDATE robots SET {change} WHERE origin = ?", (ORIGIN,)).rowcount == 1
    with RobotsStore(path) as store:
        assert store.get(ORIGIN) is None
        assert store.counts.dropped_bad_rows == 1 and store.counts.read == 0
        assert store.get("https://other.test") == robots()  # the others are read as ever
        assert store.available and store.counts.errors == 0
        [message] = warnings(caplog)
        assert "dropped the row of 'https://example.com'" in message
        assert store.get(ORIGIN) is None and store.counts.dropped_bad_rows == 1  # gone
        assert store.put(ORIGIN, robots())  # and the origin stored again
        assert store.get(ORIGIN) == robots()
    conn.close()


@pytest.mark.parametrize(
    "change",
    [
        "status = 'ok'",
        "sha256 = 'x'",
        "body = 'text'",
        "fetched_at = 'x'",
        "outcome = 'redirect'",
        "origin = x'00'",
    ],
)
def test_the_listing_drops_tampered_rows(
    path: Path, caplog: pytest.LogCaptureFixture, change: str
) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
        store.put("https://other.test", robots())
    conn = raw(path)
    conn.execute(f"UPDATE robots SET {change} WHERE origin = ?", (ORIGIN,))
    conn.close()
    with RobotsStore(path) as store:
        assert [o.origin for o in store.origins()] == ["https://other.test"]
        assert store.counts.dropped_bad_rows == 1 and len(warnings(caplog)) == 1
        assert len(store) == 1


def test_many_bad_rows_one_warning(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    with RobotsStore(path) as store:
        for i in range(3):
            store.put(f"https://{i}.test", robots())
    conn = raw(path)
    conn.execute("UPDATE robots SET sha256 = ?", ("0" * 64,))
    conn.close()
    with RobotsStore(path) as store:
        assert [store.get(f"https://{i}.test") for i in range(3)] == [None] * 3
        assert store.counts.dropped_bad_rows == 3
    assert len(warnings(caplog)) == 1
    debug = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.DEBUG]
    assert len(debug) == 2


@pytest.mark.parametrize("tally", ["'many'", "-5", "0", "1000"])
def test_a_tampered_tally_is_counted_again(path: Path, tally: str) -> None:
    with RobotsStore(path, max_origins=2) as store:
        store.put("https://a.test", robots())
        store.put("https://b.test", robots())
    conn = raw(path)
    conn.execute(f"UPDATE tally SET origins = {tally}")
    conn.close()
    with RobotsStore(path, max_origins=2) as store:
        store.put("https://c.test", robots())
        assert [o.origin for o in store.origins()] == ["https://b.test", "https://c.test"]
        assert store.counts.evicted == 1


# -- read only -----------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder``, by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_read_only_reads_and_changes_nothing(path: Path) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
        store.put("https://other.test", robots(body=b"other"))
    before = snapshot(path.parent)
    with RobotsStore(path, read_only=True) as store:
        assert store.available and store.read_only
        assert store.get(ORIGIN) == robots() and store.counts.read == 1
        assert [o.origin for o in store.origins()] == [ORIGIN, "https://other.test"]
        assert store.put(ORIGIN, robots(body=b"new")) is False
        assert store.renew(ORIGIN, NOW + 1, NOW + 2, {}) is None
        assert store.forget(ORIGIN) is False
        assert store.available and store.counts.errors == 0
    assert snapshot(path.parent) == before  # no use recorded, no -wal or -shm left


def test_read_only_never_makes_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.sqlite"
    store = RobotsStore(missing, read_only=True)
    assert not store.available and store.reason == "no such file"
    assert list(tmp_path.iterdir()) == []
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    store = RobotsStore(empty, read_only=True)
    assert not store.available and "empty" in store.reason
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]
    assert empty.read_bytes() == b""


def test_read_only_leaves_another_version_and_bad_rows(path: Path) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
        store.put("https://other.test", robots())
    conn = raw(path)
    conn.execute("UPDATE robots SET sha256 = 'x' WHERE origin = ?", (ORIGIN,))
    with RobotsStore(path, read_only=True) as store:
        assert [o.origin for o in store.origins()] == ["https://other.test"]
        assert store.get(ORIGIN) is None and store.counts.dropped_bad_rows == 2
    assert conn.execute("SELECT count(*) FROM robots").fetchone() == (2,)  # left in the file
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    store = RobotsStore(path, read_only=True)
    assert not store.available
    assert store.reason == f"it is a store of version {SCHEMA_VERSION + 1}, not {SCHEMA_VERSION}"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f"{path.name}.v")]


@pytest.mark.parametrize("content", [b"garbage " * 100, b"SQLite format 3\x00" + b"\x00" * 10])
def test_read_only_a_garbage_file(path: Path, content: bytes) -> None:
    path.write_bytes(content)
    store = RobotsStore(path, read_only=True)
    assert not store.available and store.reason
    assert path.read_bytes() == content


# -- what a file may hold: its schema, its times, a deadline --------------------------------------

ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"


@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
@pytest.mark.parametrize(
    "planted",
    [
        f"CREATE TRIGGER endless AFTER UPDATE ON robots BEGIN SELECT ({ENDLESS}); END",
        "CREATE VIEW everything AS SELECT * FROM robots",
        "CREATE INDEX by_url ON robots (url)",
        "CREATE TABLE notes (text TEXT)",
    ],
    ids=["trigger", "view", "index", "table"],
)
def test_a_schema_object_not_ours_makes_the_store_unusable(
    path: Path, caplog: pytest.LogCaptureFixture, planted: str, read_only: bool
) -> None:
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots())
    conn = raw(path)
    conn.execute(planted)
    conn.close()
    before = path.read_bytes()
    with RobotsStore(path, read_only=read_only) as store:
        assert_no_op(store)
        assert "its schema holds objects that are not a store's" in store.reason
    [message] = warnings(caplog)
    assert "is not used for the rest of this run" in message
    assert path.read_bytes() == before  # left as it is, for the user to inspect


def test_a_call_past_the_deadline_is_interrupted(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A statement that would never end, run through the store's own call machinery: SQLite's
    # progress handler interrupts it, and the store gives up for the run.
    with RobotsStore(path, deadline=0.2) as store:
        store.put(ORIGIN, robots())
        assert store._call("endless", lambda conn: conn.execute(ENDLESS).fetchall(), None) is None
        assert not store.available
        assert store.reason == (
            "endless failed: it ran past the store's deadline (0.2s) and was interrupted"
        )
        assert_no_op(store)
    assert len(warnings(caplog)) == 1
    with RobotsStore(path) as store:  # the file is as good as it was
        assert store.get(ORIGIN) == robots()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param("fetched_at = fetched_at + 1e8", "future", id="fetched-in-the-future"),
        pytest.param("fetched_at = -1e308", "time", id="fetched-before-1970"),
        pytest.param("expires_at = 1e20", "time", id="expires-after-9999"),
        pytest.param("body = zeroblob(2 * 1024 * 1024)", "too_large", id="body-over-max-value"),
        pytest.param("url = printf('%.*c', 2 * 1024 * 1024, 'x')", "too_large", id="url-huge"),
        pytest.param("sha256 = printf('%.64c', '0')", "hash", id="hash"),
        pytest.param("status = 999", "value", id="value"),
        pytest.param("etag = x'22760d0a58'", "value", id="validator-with-a-line-break"),
    ],
)
@pytest.mark.parametrize("read", ["get", "origins", "recent"])
def test_a_rejected_row_is_counted_by_its_reason(
    path: Path, caplog: pytest.LogCaptureFixture, change: str, reason: str, read: str
) -> None:
    now = time.time()
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots(fetched_at=now, expires_at=now + 60))
        store.put("https://other.test", robots(fetched_at=now, expires_at=now + 60))
    conn = raw(path)
    conn.execute(f"UPDATE robots SET {change} WHERE origin = ?", (ORIGIN,))
    conn.close()
    with RobotsStore(path) as store:
        if read == "get":
            assert store.get(ORIGIN) is None
        elif read == "origins" and (reason == "hash" or "etag" in change):
            # a listing reads neither the bodies nor the headers
            assert [o.origin for o in store.origins()] == [ORIGIN, "https://other.test"]
            assert store.counts.rejected == {}
            return
        elif read == "origins":
            assert [o.origin for o in store.origins()] == ["https://other.test"]
        else:
            assert list(store.recent(10, 10 * MAX_BODY)) == ["https://other.test"]
        assert store.counts.rejected == {reason: 1} and store.counts.dropped_bad_rows == 1
        assert store.available
        [(origin, why, _)] = store.rejections
        assert why == reason
        assert len(store) == 1  # deleted
        assert store.put(ORIGIN, robots(fetched_at=now, expires_at=now + 60))  # stored again
    assert len(warnings(caplog)) == 1


@pytest.mark.parametrize("read", ["origins", "recent"])
def test_a_row_with_an_empty_origin_is_a_bad_value(path: Path, read: str) -> None:
    now = time.time()
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots(fetched_at=now, expires_at=now + 60))
    conn = raw(path)
    conn.execute("UPDATE robots SET origin = ''")
    conn.close()
    with RobotsStore(path) as store:
        if read == "origins":
            assert store.origins() == []
        else:
            assert store.recent(10, 10 * MAX_BODY) == {}
        assert store.counts.rejected == {"value": 1} and store.counts.dropped_bad_rows == 1
        assert len(store) == 0  # deleted


def test_a_later_copy_past_the_clock_skew_does_not_block_a_put(path: Path) -> None:
    now = time.time()
    with RobotsStore(path) as store:
        store.put(ORIGIN, robots(fetched_at=now, expires_at=now + 60))
    conn = raw(path)
    conn.execute("UPDATE robots SET fetched_at = ?", (now + 1e8,))
    conn.close()
    with RobotsStore(path) as store:
        assert store.put(ORIGIN, robots(fetched_at=now + 1, expires_at=now + 60))
        back = store.get(ORIGIN)
        assert back is not None and back.fetched_at == now + 1


def test_an_origin_in_a_log_line_is_cut(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with RobotsStore(path) as store:
        assert not store.put("https://" + "x" * 100_000, robots())
    [message] = warnings(caplog)
    assert len(message) < 1000 and "(100,008 long)" in message


def test_a_path_that_is_not_a_regular_file_is_never_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (Path(os.devnull), fifo):
        link = tmp_path / f"to-{target.name}.sqlite"
        link.symlink_to(target)
        for read_only in (False, True):
            with RobotsStore(link, read_only=read_only) as store:
                assert_no_op(store)
                assert "not a regular file" in store.reason
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fifo",
        "to-fifo.sqlite",
        "to-null.sqlite",
    ]
    assert not Path(f"{os.devnull}-journal").exists()
