"""``scrapy-rerp audit``: evidence files built with the core's builders (as a crawl writes them),
read back through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scrapy_rerp import __version__
from scrapy_rerp.cli._audit import PAGE_ITEM_KEY
from scrapy_rerp.core.evidence import decision_record, item_provenance, robots_record
from tests.support.cli import run, run_json
from tests.support.evidence import a_page_record

ORIGIN = "https://example.com:443"
AGENT = "ExampleBot/1.0"
V1 = "User-agent: *\nDisallow: /old/\n"
V2 = "User-agent: *\nDisallow: /new/\nContent-Usage: /no-ai/ train-ai=n\n"
T1, T2 = 1_790_000_000.0, 1_790_086_400.0  # a day apart
T1_TEXT, BETWEEN, T2_TEXT = (
    "2026-09-21T14:13:20.000Z",
    "2026-09-22T00:00:00Z",
    "2026-09-22T14:13:20.000Z",
)


def robots(body: str | None, at: float, source: str = "download", sha256: str | None = None) -> Any:
    return robots_record(
        origin=ORIGIN,
        url=f"{ORIGIN}/robots.txt",
        final_url=f"{ORIGIN}/robots.txt",
        status=200,
        fetched_at=at,
        outcome="parsed",
        body=body.encode() if body is not None else None,
        agent=AGENT,
        plugin_version=__version__,
        source=source,
        sha256=sha256,
    )


def decided(url: str, at: float, verdict: str, sha256: str, line: int | None = None) -> Any:
    return decision_record(url=url, at=at, verdict=verdict, robots_sha256=sha256, line=line)


def write_lines(path: Path, records: list[Any]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def history(tmp_path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One evidence file: robots.txt V1 read at T1, V2 at T2, pages fetched under each."""
    v1, v2 = robots(V1, T1), robots(V2, T2)
    records = [
        v1,
        decided("https://example.com/a", T1 + 1, "downloaded", v1["sha256"]),
        decided("https://example.com/old/x", T1 + 2, "refused", v1["sha256"], 2),
        v2,
        decided("https://example.com/b", T2 + 1, "downloaded", v2["sha256"]),
        decided("https://example.com/old/x", T2 + 2, "downloaded", v2["sha256"]),
    ]
    return write_lines(tmp_path / "evidence.jsonl", records), v1, v2


def test_the_robots_txt_in_force_at_a_time_decides_a_url(tmp_path: Path) -> None:
    path, v1, v2 = history(tmp_path)
    url = "https://example.com/old/x"
    status, document = run_json("audit", path, url, "--at", BETWEEN)
    assert status == 1  # /old/ was disallowed then
    assert document["robots"]["sha256"] == v1["sha256"]
    assert (document["decision"]["line"], document["decision"]["rule"]) == (2, "Disallow: /old/")
    assert [r["verdict"] for r in document["records"]] == ["refused", "downloaded"]
    status, document = run_json("audit", path, url)  # the latest: V2, which allows it
    assert status == 0 and document["robots"]["sha256"] == v2["sha256"]
    done = run("audit", path, url, "--at", "2026-01-01T00:00:00Z")  # before any record
    assert done.returncode == 2 and "no robots.txt of https://example.com:443" in done.stderr
    text = run("audit", path, url, "--at", BETWEEN).stdout
    assert "disallowed (line 2: Disallow: /old/)" in text and f"fetched {T1_TEXT}" in text


def test_a_purpose_the_file_disallows_is_not_allowed(tmp_path: Path) -> None:
    path, _, _ = history(tmp_path)
    status, document = run_json(
        "audit", path, "https://example.com/no-ai/p", "--purpose", "train-ai"
    )
    assert status == 1
    assert document["decision"]["allowed"] is True
    assert document["decision"]["usage"]["preference"] == "disallowed"
    assert run_json("audit", path, "https://example.com/p", "--purpose", "train-ai")[0] == 0


def test_workers_files_are_read_together(tmp_path: Path) -> None:
    # The worker that downloaded robots.txt has its body; another had it from the fleet.
    downloaded = robots(V1, T1)
    shared = robots(None, T1 + 5, source="fleet", sha256=downloaded["sha256"])
    worker_a = write_lines(tmp_path / "evidence-a.jsonl", [downloaded])
    worker_b = write_lines(
        tmp_path / "evidence-b.jsonl",
        [shared, decided("https://example.com/old/y", T1 + 6, "refused", shared["sha256"], 2)],
    )
    done = run("audit", worker_b, "https://example.com/old/y")
    assert done.returncode == 2 and "is in none of these files" in done.stderr
    status, document = run_json(
        "audit", str(tmp_path / "evidence-*.jsonl"), "https://example.com/old/y"
    )
    assert status == 1 and document["decision"]["rule"] == "Disallow: /old/"
    assert document["robots"]["source"] == "fleet"
    assert sorted(document["files"]) == sorted([worker_a, worker_b])


def test_an_origin_s_robots_txt_over_time(tmp_path: Path) -> None:
    path, v1, v2 = history(tmp_path)
    status, document = run_json("audit", path, "--origin", "https://example.com/any")
    assert status == 0
    first, second = document["versions"]
    assert (first["sha256"], second["sha256"]) == (v1["sha256"], v2["sha256"])
    assert first["added"] == ["*: Disallow: /old/"] and first["pages_downloaded"] == 1
    assert second["added"] == ["*: Disallow: /new/"]
    assert second["removed"] == ["*: Disallow: /old/"]
    assert second["pages_downloaded"] == 2
    text = run("audit", path, "--origin", ORIGIN).stdout
    assert "+ *: Disallow: /new/" in text and "- *: Disallow: /old/" in text
    assert run("audit", path, "--origin", "https://other.example").returncode == 2


def test_verify_lists_an_item_planted_for_a_refused_page(tmp_path: Path) -> None:
    path, v1, v2 = history(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text(
        "\n".join(
            json.dumps(item)
            for item in [
                {"url": "https://example.com/a"},
                {"url": "https://example.com/b"},
                # Planted: robots.txt V2 disallows /new/, and the item says it was read.
                {
                    "url": "https://example.com/new/planted",
                    "rerp_provenance": item_provenance(
                        robots_sha256=v2["sha256"], fetched_at=T2, line=None
                    ),
                },
                {"title": "no URL"},
            ]
        )
        + "\n"
    )
    status, document = run_json("audit", "verify", path, str(items))
    assert status == 1 and document["items"] == 4
    refused, unverifiable = document["listed"]
    assert refused["url"] == "https://example.com/new/planted"
    assert (refused["problem"], refused["rule"]) == ("refused by robots.txt", "Disallow: /new/")
    assert unverifiable["problem"] == "unverifiable" and unverifiable["line"] == 4
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps({"url": "https://example.com/a"}) + "\n")
    done = run("audit", "verify", path, str(clean))
    assert done.returncode == 0 and "1 item(s) checked, 0 listed" in done.stdout


def test_a_file_cut_short_and_garbage_are_said_never_fatal(tmp_path: Path) -> None:
    path, _, _ = history(tmp_path)
    cut = tmp_path / "cut.jsonl"
    whole = Path(path).read_bytes()
    cut.write_bytes(whole[: len(whole) - 20])  # the last record cut mid-write
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(
        b"\x00\xff\xfe binary\n[1, 2]\n" + json.dumps({"v": 1, "kind": "robots"}).encode() + b"\n"
    )
    status, document = run_json(
        "audit", str(cut), str(garbage), "https://example.com/old/x", "--at", BETWEEN
    )
    assert status == 1
    assert document["cut_at_line"][str(cut)] == 6
    assert document["skipped_records"] == 1  # a robots record without its fields
    done = run("audit", str(cut), "https://example.com/a")
    assert "ends early: line 6 is cut short" in done.stderr and "Traceback" not in done.stderr
    done = run("audit", str(tmp_path / "none-*.jsonl"), "https://example.com/a")
    assert done.returncode == 2 and "no file matches" in done.stderr
    done = run("audit", path)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_what_a_page_said_of_itself_is_in_the_answer_and_checked_per_purpose(
    tmp_path: Path,
) -> None:
    v1 = robots(V1, T1)
    images = {
        "purpose": "train-ai",
        "images_only": True,
        "rule": "noimageai",
        "source": "X-Robots-Tag header 1",
        "statement": "noimageai",
        "reason": "train-ai disallowed for images",
    }
    records = [
        v1,
        decided("https://example.com/a", T1 + 1, "downloaded", v1["sha256"]),
        a_page_record(url="https://example.com/a", at=T1 + 1, items="marked"),
        decided("https://example.com/b", T1 + 2, "downloaded", v1["sha256"]),
        a_page_record(url="https://example.com/b", at=T1 + 2, refused=[images], items="dropped"),
    ]
    evidence = write_lines(tmp_path / "evidence.jsonl", records)
    status, document = run_json("audit", evidence, "https://example.com/a", "--purpose", "train-ai")
    assert (status, document["page_refused"]["rule"]) == (1, "noai")
    # Another purpose, or no purpose, is not refused by it; nor before the page was read.
    assert run_json("audit", evidence, "https://example.com/a", "--purpose", "search")[0] == 0
    assert run_json("audit", evidence, "https://example.com/a")[0] == 0
    status, document = run_json(
        "audit", evidence, "https://example.com/a", "--purpose", "train-ai", "--at", T1_TEXT
    )
    assert (status, document["page"]) == (0, None)
    # A refusal of a page's images only is not one of the page.
    assert run_json("audit", evidence, "https://example.com/b", "--purpose", "train-ai")[0] == 0
    text = run("audit", evidence, "https://example.com/a", "--purpose", "train-ai")
    assert "train-ai refused: noai (meta tag 1 (robots)); items marked" in text.stdout
    # verify: /a's items were kept marked, so an item of it must carry the mark.
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"url": "https://example.com/a", PAGE_ITEM_KEY: {"train-ai": {}}})
        + "\n"
        + json.dumps({"url": "https://example.com/b"})
        + "\n"
    )
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    assert (status, document["listed"]) == (0, [])
    with items.open("a") as file:
        file.write(json.dumps({"url": "https://example.com/a"}) + "\n")
    status, document = run_json("audit", "verify", evidence, str(items), "--purpose", "train-ai")
    assert status == 1
    assert [(e["line"], e["problem"]) for e in document["listed"]] == [
        (3, "train-ai refused by the page")
    ]


def test_the_mark_verify_looks_for_is_the_one_the_page_directives_put() -> None:
    from scrapy_rerp.crawl.page_directives import ITEM_KEY

    assert PAGE_ITEM_KEY == ITEM_KEY
