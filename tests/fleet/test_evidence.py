"""Evidence in a fleet: each worker writes its own files (``%(worker)s``), which read together
hold every decision and, for each robots.txt a decision rests on, its body."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rerp.core.evidence import read_records
from tests.support.redis import RedisServer, finish, start_worker
from tests.support.servers import Reply, Server

pytestmark = pytest.mark.crawl


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server(host="127.0.0.54").start()
    yield server
    server.stop()


def test_each_worker_writes_its_own_evidence_and_together_they_hold_it_all(
    redis_server: RedisServer, site: Server, tmp_path: Path
) -> None:
    site.robots("User-agent: *\nDisallow: /private\n")
    evidence = tmp_path / "evidence-%(worker)s.jsonl"

    def config(worker: int) -> dict[str, object]:
        urls = [site.url(f"/w{worker}/{n}") for n in range(3)] + [site.url(f"/private/{worker}")]
        return {
            "redis": redis_server.url,
            "scrapy_redis": False,
            "urls": urls,
            "barrier": 2,  # both need the rules at once: one downloads, the other waits
            "settings": {"RERP_EVIDENCE": str(evidence)},
        }

    reports = [finish(w) for w in [start_worker(config(0)), start_worker(config(1))]]
    assert site.count("/robots.txt") == 1
    files = sorted(tmp_path.glob("evidence-*.jsonl"))
    assert len(files) == 2  # one per worker: host name and process id in the name
    found = []
    for path in files:
        with path.open("rb") as file:
            read = read_records(file)
        assert read.cut_at_line is None
        found.append(read.records)
    robots = [r for records in found for r in records if r["kind"] == "robots"]
    assert sorted(r["source"] for r in robots) == ["download", "fleet"]
    [downloaded] = [r for r in robots if r["source"] == "download"]
    assert downloaded["body"] == "User-agent: *\nDisallow: /private\n"
    assert {r["sha256"] for r in robots} == {downloaded["sha256"]}
    decisions = {r["url"]: r for records in found for r in records if r["kind"] == "decision"}
    received = {site.url(h.path) for h in site.hits() if h.path != "/robots.txt"}
    assert {u for u, d in decisions.items() if d["verdict"] == "downloaded"} == received
    assert {u for u, d in decisions.items() if d["verdict"] == "refused"} == {
        site.url("/private/0"),
        site.url("/private/1"),
    }
    assert len(received) == 6 and sum(len(r["received"]) for r in reports) == 6
    assert all(d["robots_sha256"] == downloaded["sha256"] for d in decisions.values())


def test_a_fleet_s_tdmrep_json_and_what_its_pages_said_are_in_the_workers_evidence(
    redis_server: RedisServer, site: Server, tmp_path: Path
) -> None:
    # RERP_USAGE names train-ai: the origin's tdmrep.json, downloaded once for the fleet, is
    # recorded by the worker that downloaded it (with its body) and by the other (by its hash),
    # and each worker records the pages it reserves.
    tdmrep = '[{"location": "/w0/*", "tdm-reservation": 1}]'
    site.robots("User-agent: *\nAllow: /\n")
    site.route("/.well-known/tdmrep.json", Reply(body=tdmrep, content_type="application/json"))
    evidence = tmp_path / "evidence-%(worker)s.jsonl"

    def config(worker: int) -> dict[str, object]:
        return {
            "redis": redis_server.url,
            "scrapy_redis": False,
            "urls": [site.url(f"/w{part}/{worker}") for part in (0, 1)],
            "barrier": 2,
            "settings": {"RERP_EVIDENCE": str(evidence), "RERP_USAGE": "train-ai"},
        }

    reports = [finish(w) for w in [start_worker(config(0)), start_worker(config(1))]]
    assert site.count("/.well-known/tdmrep.json") == 1
    assert sum(len(r["received"]) for r in reports) == 4
    records = []
    for path in sorted(tmp_path.glob("evidence-*.jsonl")):
        with path.open("rb") as file:
            records.append(read_records(file).records)
    files = [r for found in records for r in found if r["kind"] == "tdmrep"]
    assert sorted(r["source"] for r in files) == ["download", "fleet"]
    [downloaded] = [r for r in files if r["source"] == "download"]
    assert downloaded["body"] == tdmrep and {r["sha256"] for r in files} == {downloaded["sha256"]}
    decisions = [r for found in records for r in found if r["kind"] == "decision"]
    assert len(decisions) == 4
    assert {d["tdmrep_sha256"] for d in decisions} == {downloaded["sha256"]}
    # One page record per reserved page, from whichever worker crawled it.
    pages = {r["url"]: r for found in records for r in found if r["kind"] == "page"}
    assert sorted(pages) == [site.url("/w0/0"), site.url("/w0/1")]
    assert all(p["tdmrep"]["technique"] == "tdmrep.json" for p in pages.values())
