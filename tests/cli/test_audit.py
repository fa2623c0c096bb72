"""``scrapy-rerp audit``: evidence files built with the core's builders (as a crawl writes them),
read back through the command line."""

from __future__ import annotations

import gzip
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scrapy_rerp import __version__
from scrapy_rerp.cli._audit import PAGE_ITEM_KEY
from scrapy_rerp.core.evidence import (
    MAX_LINE_BYTES,
    decision_record,
    item_provenance,
    robots_record,
)
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


def warc_bytes(records: list[Any]) -> tuple[bytes, int]:
    """``records`` as the crawl writes them with RERP_EVIDENCE_WARC, and the file's length."""
    from scrapy_rerp.core.evidence_warc import WarcEvidenceWriter

    stream = io.BytesIO()
    writer = WarcEvidenceWriter(stream, software=f"scrapy_rerp/{__version__}")
    for record in records:
        writer.write(record)
    return stream.getvalue(), len(stream.getvalue())


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
    _, _, v2 = history(tmp_path)
    path = write_lines(
        tmp_path / "pages.jsonl",
        [
            v2,
            decided("https://example.com/no-ai/p", T2 + 3, "downloaded", v2["sha256"]),
            decided("https://example.com/p", T2 + 4, "downloaded", v2["sha256"]),
        ],
    )
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


def test_a_file_cut_short_is_said_never_fatal(tmp_path: Path) -> None:
    path, _, _ = history(tmp_path)
    cut = tmp_path / "cut.jsonl"
    whole = Path(path).read_bytes()
    cut.write_bytes(whole[: len(whole) - 20])  # the last record cut mid-write
    status, document = run_json("audit", str(cut), "https://example.com/old/x", "--at", BETWEEN)
    assert status == 1
    assert document["cut_at_line"][str(cut)] == 6
    done = run("audit", str(cut), "https://example.com/a")
    assert "ends early: line 6 is cut short" in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 0
    done = run("audit", str(tmp_path / "none-*.jsonl"), "https://example.com/a")
    assert done.returncode == 2 and "no file matches" in done.stderr
    done = run("audit", path)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_damaged_records_are_counted_and_named_and_exit_2(tmp_path: Path) -> None:
    path, v1, _ = history(tmp_path)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(
        b"\x00\xff\xfe binary\n[1, 2]\n" + json.dumps({"v": 1, "kind": "robots"}).encode() + b"\n"
    )
    status, document = run_json(
        "audit", path, str(garbage), "https://example.com/old/x", "--at", BETWEEN
    )
    # The answer from the whole records is given, and the status says the input was damaged.
    assert status == 2 and document["decision"]["rule"] == "Disallow: /old/"
    assert document["damaged"][str(garbage)] == {
        "count": 3,
        "first": [
            {"line": 1, "reason": "not UTF-8"},
            {"line": 2, "reason": "not a JSON object"},
            {"line": 3, "reason": "no 'origin'"},
        ],
    }
    done = run("audit", path, str(garbage), "https://example.com/old/x", "--at", BETWEEN)
    assert (
        f"scrapy-rerp: error: {garbage}: 3 damaged line(s), left out (line 1: not UTF-8; "
        "line 2: not a JSON object; line 3: no 'origin')"
    ) in done.stderr.splitlines()
    assert "disallowed (line 2: Disallow: /old/)" in done.stdout


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[" * 100_000, "JSON nested too deep"),
        ({"agent": 7}, "'agent' is 7, not a string or null"),
        (
            {"fetched_at": "9999-99-99T00:00:00.000Z"},
            "'fetched_at' is '9999-99-99T00:00:00.000Z', not an RFC 3339 UTC time",
        ),
        ({"status": "200"}, "'status' is '200', not an HTTP status or null"),
        (
            {"headers": {"Set-Cookie": "s"}},
            "'headers' is {'Set-Cookie': 's'}, not an object of kept headers",
        ),
    ],
)
def test_a_damaged_record_is_named_never_a_traceback(
    tmp_path: Path, line: bytes | dict[str, Any], reason: str
) -> None:
    v1 = robots(V1, T1)
    raw = line if isinstance(line, bytes) else json.dumps({**v1, **line}).encode()
    evidence = tmp_path / "evidence.jsonl"
    evidence.write_bytes(raw + b"\n" + json.dumps(v1).encode() + b"\n")
    done = run("audit", str(evidence), "https://example.com/old/x", "--at", BETWEEN)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"scrapy-rerp: error: {evidence}: 1 damaged line(s), left out (line 1: {reason})" in (
        done.stderr.splitlines()
    )
    assert "--at" not in done.stderr  # the user's time is not blamed for the file's


def test_a_line_over_the_cap_is_damaged_and_not_read_whole(tmp_path: Path) -> None:
    v1 = robots(V1, T1)
    evidence = tmp_path / "evidence.jsonl"
    with evidence.open("wb") as file:
        file.write(b'{"v": 1, "kind": "robots", "body": "' + b"x" * MAX_LINE_BYTES + b'"}\n')
        file.write(json.dumps(v1).encode() + b"\n")
    status, document = run_json("audit", str(evidence), "https://example.com/old/x")
    assert status == 2 and document["decision"]["rule"] == "Disallow: /old/"
    assert document["damaged"][str(evidence)]["first"] == [
        {"line": 1, "reason": f"over {MAX_LINE_BYTES:,} bytes"}
    ]


def test_garbage_files_are_damaged_input_never_a_traceback(tmp_path: Path) -> None:
    rng = random.Random(47)
    warc, half = warc_bytes([robots(V1, T1)] * 3)
    half = warc.index(b"\x1f\x8b", len(warc) // 2)  # where a record starts
    whole = gzip.compress(b"".join(json.dumps(robots(V1, T1)).encode() + b"\n" for _ in range(50)))
    files = {
        "binary.jsonl": bytes(rng.randrange(256) for _ in range(4096)),
        "truncated.jsonl.gz": whole[: len(whole) // 2],
        "random.gz": b"\x1f\x8b" + bytes(rng.randrange(256) for _ in range(512)),
        "latin1.jsonl": json.dumps({"v": 1, "kind": "decision"}).encode()[:-1]
        + b', "x": "\xe9"}\n',
        "nested.jsonl": b'{"v": 1, "kind": "page", "refused": ' + b"[" * 50_000 + b"\n",
        "nested-object.jsonl": b'{"a":' * 30_000 + b"1" + b"}" * 30_000 + b"\n",
        # A WARC file with bytes that are no record between two records.
        "between.warc.gz": warc[:half]
        + bytes(rng.randrange(256) for _ in range(512))
        + warc[half:],
        "nul.jsonl": b"\x00" * 1000 + b"\n",
    }
    paths = []
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
        paths.append(str(tmp_path / name))
    done = run("audit", *paths, "https://example.com/old/x")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("scrapy-rerp: error: ")]
    for path in paths:  # each file named as damaged, in one line
        assert (
            len([line for line in errors if line.startswith(f"scrapy-rerp: error: {path}: ")]) == 1
        ), (path, errors)
    items = tmp_path / "items.jsonl"
    items.write_bytes(
        b"[" * 100_000 + b"\n" + bytes(rng.randrange(256) for _ in range(512)) + b"\n"
    )
    history_path, _, _ = history(tmp_path)
    status, document = run_json("audit", "verify", history_path, str(items))
    assert status == 1 and [e["reason"] for e in document["listed"]][:1] == ["not a JSON object"]


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


def test_a_warc_file_of_the_crawl_is_read_as_its_json_lines(tmp_path: Path) -> None:
    jsonl, v1, _ = history(tmp_path)
    records = [json.loads(line) for line in Path(jsonl).read_text().splitlines()]
    warc = tmp_path / "evidence.warc.gz"
    warc.write_bytes(warc_bytes(records)[0])
    url = "https://example.com/old/x"
    from_warc = run_json("audit", str(warc), url, "--at", BETWEEN)
    from_lines = run_json("audit", jsonl, url, "--at", BETWEEN)
    assert from_warc[0] == from_lines[0] == 1
    for key in ("robots", "decision", "records", "decision_recorded"):
        assert from_warc[1][key] == from_lines[1][key], key
    assert from_warc[1]["robots"]["sha256"] == v1["sha256"]
    origin = run_json("audit", str(warc), "--origin", ORIGIN)
    assert origin == (0, {**run_json("audit", jsonl, "--origin", ORIGIN)[1], "files": [str(warc)]})
    # A crawl killed mid-write: its last record cut short is said, as a JSON line's is.
    whole = warc.read_bytes()
    warc.write_bytes(whole[:-30])
    done = run("audit", str(warc), url, "--at", BETWEEN)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"scrapy-rerp: {warc} ends early: WARC record 9 is cut short" in done.stderr


def test_without_warcio_a_warc_file_is_one_line_and_status_2(tmp_path: Path) -> None:
    warc = tmp_path / "evidence.warc.gz"
    warc.write_bytes(warc_bytes([robots(V1, T1)])[0])
    # warcio made impossible to import, as in an install without the warc extra.
    code = (
        "import sys; sys.modules['warcio'] = None; from scrapy_rerp.cli import main; "
        f"sys.exit(main(['audit', {str(warc)!r}, 'https://example.com/a']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"scrapy-rerp: error: {warc} is a WARC file: reading it needs warcio "
        "(pip install -e './scrapy-rerp[warc]'), or give audit the crawl's JSON lines "
        "(RERP_EVIDENCE)"
    ]


def test_a_directory_is_read_for_the_evidence_files_in_it(tmp_path: Path) -> None:
    v1 = robots(V1, T1)
    folder = tmp_path / "evidence"
    (folder / "worker-b").mkdir(parents=True)
    write_lines(folder / "worker-a.jsonl", [v1])
    write_lines(
        folder / "worker-b" / "batch-1.jsonl",
        [decided("https://example.com/old/y", T1 + 6, "refused", v1["sha256"], 2)],
    )
    (folder / "worker-a.warc.gz").write_bytes(warc_bytes([v1])[0])  # the same records again
    (folder / "README.txt").write_text("not evidence")
    status, document = run_json("audit", str(folder), "https://example.com/old/y")
    assert status == 1 and document["decision"]["rule"] == "Disallow: /old/"
    assert document["files"] == [
        str(folder / "worker-a.jsonl"),
        str(folder / "worker-b/batch-1.jsonl"),
    ]
    assert [r["verdict"] for r in document["records"]] == ["refused"]
    done = run("audit", str(folder), "https://example.com/old/y")
    assert (
        f"scrapy-rerp: {folder}: 2 evidence file(s) read, 2 other file(s) not (its WARC files "
        "hold the records of its JSON lines)"
    ) in done.stderr.splitlines()
    # Without JSON lines, the WARC files are read.
    only_warc = tmp_path / "warc"
    only_warc.mkdir()
    (only_warc / "evidence.warc.gz").write_bytes(warc_bytes([v1])[0])
    status, document = run_json("audit", str(only_warc), "https://example.com/old/y")
    assert status == 3 and document["files"] == [str(only_warc / "evidence.warc.gz")]
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run("audit", str(empty), "https://example.com/old/y")
    assert done.returncode == 2 and done.stderr.startswith(
        f"scrapy-rerp: error: {empty}: a directory with no evidence file in it"
    )


def test_a_url_the_crawl_never_requested_says_no_decision_was_recorded(tmp_path: Path) -> None:
    path, v1, _ = history(tmp_path)
    url = "https://example.com/never/asked"
    done = run("audit", path, url, "--at", BETWEEN)
    assert done.returncode == 3
    assert done.stdout.splitlines()[1:] == [
        f"{url}: allowed (no rule)",
        f"  no decision was recorded for {url} in these files (a request the crawl never made, "
        "or one that did not obey robots.txt)",
    ]
    status, document = run_json("audit", path, url)
    assert (status, document["decision_recorded"], document["records"]) == (3, False, [])
    assert run_json("audit", path, "https://example.com/a")[1]["decision_recorded"] is True


def test_audit_streams_a_big_file_in_bounded_memory(tmp_path: Path) -> None:
    v1 = robots(V1, T1)
    line = json.dumps(decided("https://example.com/p", T1 + 1, "downloaded", v1["sha256"]))
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text(json.dumps(v1) + "\n" + line + "\n")
    with big.open("w") as file:
        file.write(json.dumps(v1) + "\n")
        for n in range(40 * 1024 * 1024 // (len(line) + 1)):
            file.write(line.replace("/p", f"/p{n}", 1) + "\n")
    size = big.stat().st_size

    def peak_kib(path: Path) -> int:
        code = (
            "import resource, sys; from scrapy_rerp.cli import main; "
            f"status = main(['audit', {str(path)!r}, 'https://example.com/p7', '--format=json']); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
            "sys.exit(status)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
        )
        assert done.returncode in (0, 3), done.stderr
        return int(done.stderr.splitlines()[-1])

    grown = (peak_kib(big) - peak_kib(small)) * 1024
    assert size > 40_000_000
    print(f"{size:,} bytes read: peak RSS {grown:,} bytes over that of a 2-line file")
    assert grown < size / 8, (grown, size)
