"""``scrapy-rerp fetch`` and ``lint`` of a TDMRep file (``/.well-known/tdmrep.json``, or a file
named ``tdmrep.json``); each run as a subprocess, against a local server for a URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run, run_json, write
from tests.support.servers import Reply, Server

GOOD = (
    '[{"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "https://e.com/p.json"},'
    ' {"location": "/*", "tdm-reservation": 0}]'
)
#: One good entry, one without a location, one whose tdm-reservation is no 1 or 0.
FLAWED = (
    '[{"location": "/a", "tdm-reservation": 1}, {"tdm-reservation": 1},'
    ' {"location": "/b", "tdm-reservation": true}]'
)
PATH = "/.well-known/tdmrep.json"


def test_fetch_summarises_the_origins_file(server: Server) -> None:
    server.route(PATH, Reply(body=GOOD, content_type="application/json"))
    status, doc = run_json("fetch", server.url(PATH))
    assert status == 0
    assert doc["http_status"] == 200 and doc["valid"] is True
    assert doc["entries"] == [
        {
            "position": 1,
            "location": "/books/*",
            "tdm-reservation": 1,
            "tdm-policy": "https://e.com/p.json",
        },
        {"position": 2, "location": "/*", "tdm-reservation": 0, "tdm-policy": None},
    ]
    assert doc["warnings"] == []
    lines = run("fetch", server.url(PATH)).stdout.splitlines()
    assert lines[0] == f"tdmrep.json {server.url(PATH)} (HTTP 200): 2 entries"
    assert "  entry 2: /*  tdm-reservation 0" in lines
    assert server.paths() == [PATH, PATH]  # no robots.txt: the file itself is asked for


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        (Reply(status=404), "HTTP 404: no file, no reservation from it"),
        (Reply(body="{not json"), "not read (no JSON array): no reservation from the file"),
    ],
)
def test_fetch_of_no_file_or_a_broken_one_exits_one(
    server: Server, reply: Reply, found: str
) -> None:
    server.route(PATH, reply)
    status, doc = run_json("fetch", server.url(PATH))
    assert status == 1
    assert doc["found"] == found and doc["entries"] == []


def test_lint_reports_each_flaw_of_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, FLAWED, name="tdmrep.json")
    status, doc = run_json("lint", path)
    assert status == 1
    assert [w["code"] for w in doc["warnings"]] == ["bad-location", "bad-reservation"]
    assert len(doc["entries"]) == 2  # the entry without a location is skipped
    done = run("lint", path)
    assert done.returncode == 1
    assert "warnings: 2" in done.stdout.splitlines()


def test_lint_of_a_good_file_and_of_a_url(tmp_path: Path, server: Server) -> None:
    status, doc = run_json("lint", write(tmp_path, GOOD, name="tdmrep.json"))
    assert status == 0 and doc["warnings"] == []
    server.route(PATH, Reply(body="[1]", content_type="application/json"))
    status, doc = run_json("lint", server.url(PATH))
    assert status == 1 and doc["warnings"]
    server.route(PATH, Reply(status=404))
    done = run("lint", server.url(PATH))
    assert done.returncode == 2
    assert "HTTP 404, no file; nothing to lint" in done.stderr


@pytest.mark.parametrize(("hops", "read"), [(5, True), (6, False)])
def test_the_file_is_followed_through_redirects_as_a_crawl_s_transport_follows_them(
    server: Server, hops: int, read: bool
) -> None:
    # Any 3xx with a Location (a 300 too), up to RERP_MAX_REDIRECTS (5), as in a crawl
    # (tests/test_tdmrep_crawls.py), not a page's course.
    server.route(PATH, Reply.redirect("/t1", status=300))
    for number in range(1, hops):
        server.route(f"/t{number}", Reply.redirect(f"/t{number + 1}", status=302))
    server.route(f"/t{hops}", Reply(body=GOOD, content_type="application/json"))
    status, doc = run_json("fetch", server.url(PATH))
    assert (status, doc["http_status"], doc["valid"]) == (
        (0, 200, True) if read else (1, 302, None)
    )
    assert server.paths() == [PATH, *(f"/t{n}" for n in range(1, min(hops, 5) + 1))]
