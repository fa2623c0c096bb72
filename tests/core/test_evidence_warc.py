"""Evidence as WARC (scrapy_rerp.core.evidence_warc): records built by the core's builders,
written to a file, and read back with warcio's own reader and its command line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord

from scrapy_rerp import __version__
from scrapy_rerp.core.evidence import item_provenance
from scrapy_rerp.core.evidence_warc import WarcEvidenceWriter
from tests.support.evidence import BODY, a_decision_record, a_page_record, a_robots_record

SOFTWARE = f"scrapy_rerp/{__version__}"
#: The command line WARC tools are run with: warcio's console script, beside this Python.
WARCIO = Path(sys.executable).parent / "warcio"


def write_warc(path: Path, records: list[dict[str, Any]]) -> Path:
    with path.open("wb") as stream:
        writer = WarcEvidenceWriter(stream, software=SOFTWARE)
        for record in records:
            writer.write(record)
    return path


def read_warc(path: Path) -> list[tuple[ArcWarcRecord, bytes]]:
    """Every record, with its content (the HTTP payload for a response)."""
    with path.open("rb") as stream:
        return [(record, record.content_stream().read()) for record in ArchiveIterator(stream)]


def header(record: ArcWarcRecord, name: str) -> str | None:
    return record.rec_headers.get_header(name)


def without_body(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "body"}


def test_the_file_starts_with_a_warcinfo_naming_the_software(tmp_path: Path) -> None:
    read = read_warc(write_warc(tmp_path / "e.warc.gz", []))
    assert [record.rec_type for record, _ in read] == ["warcinfo"]
    record, content = read[0]
    assert header(record, "WARC-Type") == "warcinfo"
    assert record.rec_headers.protocol == "WARC/1.1"
    assert f"software: {SOFTWARE}\r\n".encode() in content


def test_a_robots_txt_read_becomes_its_response_and_a_metadata_record(tmp_path: Path) -> None:
    robots = a_robots_record()
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [robots]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "response", "metadata"]
    (response, payload), (metadata, content) = read[1], read[2]

    assert header(response, "WARC-Target-URI") == "https://www.example.com/robots.txt"
    assert header(response, "WARC-Date") == "2026-11-18T11:06:40.250Z"
    assert header(response, "WARC-Truncated") is None
    assert response.http_headers.get_statuscode() == "200"
    assert response.http_headers.statusline == "200 OK"
    assert response.http_headers.protocol == "HTTP/1.1"
    # The body kept is the decoded one: no Content-Encoding in the HTTP block, so that a
    # reader does not try to decompress it (the header is in the metadata record).
    assert response.http_headers.headers == [
        ("Content-Type", "text/plain; charset=utf-8"),
        ("ETag", '"abc"'),
    ]
    assert payload == BODY

    assert header(metadata, "WARC-Concurrent-To") == header(response, "WARC-Record-ID")
    assert header(metadata, "Content-Type") == "application/json"
    assert header(metadata, "WARC-Target-URI") == "https://www.example.com/robots.txt"
    assert header(metadata, "WARC-Date") == robots["fetched_at"]
    written = json.loads(content)
    assert written == without_body(robots)
    assert written["headers"]["Content-Encoding"] == "gzip"
    assert {"outcome", "sha256", "agent", "syntax", "plugin_version", "origin", "url"} <= set(
        written
    )


def test_a_robots_txt_without_an_answer_is_its_metadata_only(tmp_path: Path) -> None:
    robots = a_robots_record(status=None, final_url=None, outcome="unreachable", body=None)
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [robots]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "metadata"]
    metadata, content = read[1]
    assert header(metadata, "WARC-Target-URI") == "https://example.com/robots.txt"
    assert header(metadata, "WARC-Date") == robots["fetched_at"]
    assert header(metadata, "WARC-Concurrent-To") is None
    assert json.loads(content) == without_body(robots)


@pytest.mark.parametrize("source", ["store", "fleet"])
def test_a_copy_this_crawl_did_not_download_is_its_metadata_only(
    tmp_path: Path, source: str
) -> None:
    # Its response is in the evidence of the run, or the worker, that downloaded it.
    robots = a_robots_record(body=None, source=source, sha256="ab" * 32)
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [robots]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "metadata"]
    metadata, content = read[1]
    assert header(metadata, "WARC-Target-URI") == "https://example.com/robots.txt"
    assert json.loads(content) == without_body(robots)
    assert json.loads(content)["sha256"] == "ab" * 32


def test_an_answer_whose_body_was_not_kept_is_marked_truncated(tmp_path: Path) -> None:
    robots = a_robots_record(status=404, outcome="allow-all", body=None)
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [robots]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "response", "metadata"]
    response, payload = read[1]
    assert response.http_headers.statusline == "404 Not Found"
    assert header(response, "WARC-Truncated") == "unspecified"
    assert payload == b""
    assert json.loads(read[2][1])["outcome"] == "allow-all"


def test_a_status_without_a_known_reason_keeps_its_code(tmp_path: Path) -> None:
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [a_robots_record(status=599, body=None)]))
    assert read[1][0].http_headers.statusline == "599"
    assert read[1][0].http_headers.get_statuscode() == "599"


def test_a_decision_becomes_a_metadata_record(tmp_path: Path) -> None:
    decision = a_decision_record()
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [decision]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "metadata"]
    metadata, content = read[1]
    assert header(metadata, "WARC-Target-URI") == "https://www.example.com/private/a"
    assert header(metadata, "WARC-Date") == "2026-11-18T11:06:41.500Z"
    assert header(metadata, "Content-Type") == "application/json"
    assert json.loads(content) == decision


def test_a_page_record_becomes_a_metadata_record(tmp_path: Path) -> None:
    page = a_page_record()
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [page]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "metadata"]
    metadata, content = read[1]
    assert header(metadata, "WARC-Target-URI") == "https://www.example.com/a"
    assert header(metadata, "WARC-Date") == "2026-11-18T11:06:42.000Z"
    assert json.loads(content) == page


def test_a_tdmrep_json_downloaded_becomes_a_response_and_its_metadata(tmp_path: Path) -> None:
    body = b'[{"location": "/*", "tdm-reservation": 1}]'
    url = "https://example.com/.well-known/tdmrep.json"
    tdmrep = a_robots_record(
        url=url, final_url=url, body=body, kind="tdmrep", syntax=None, agent=None
    )
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [tdmrep]))
    assert [record.rec_type for record, _ in read] == ["warcinfo", "response", "metadata"]
    (response, content), (metadata, described) = read[1], read[2]
    assert (header(response, "WARC-Target-URI"), content) == (url, body)
    assert header(metadata, "WARC-Concurrent-To") == header(response, "WARC-Record-ID")
    assert json.loads(described)["kind"] == "tdmrep"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (item_provenance(robots_sha256=None, fetched_at=None, line=None), "kind"),
        ({"v": 1, "kind": "Sitemap", "url": "https://example.com/"}, "kind"),
        ({**a_decision_record(), "v": 2}, "format 1"),
        ({}, "format 1"),
    ],
    ids=["item-provenance", "unknown-kind", "unknown-version", "empty"],
)
def test_anything_else_is_refused_and_nothing_written(
    tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    path = tmp_path / "e.warc.gz"
    with path.open("wb") as stream:
        writer = WarcEvidenceWriter(stream, software=SOFTWARE)
        size = stream.tell()
        with pytest.raises(ValueError, match=message):
            writer.write(record)
        assert stream.tell() == size
    assert [record.rec_type for record, _ in read_warc(path)] == ["warcinfo"]


def test_warcio_s_command_line_indexes_and_checks_the_file(tmp_path: Path) -> None:
    robots = a_robots_record()
    path = write_warc(
        tmp_path / "e.warc.gz",
        [robots, a_decision_record(), a_robots_record(status=None, body=None, final_url=None)],
    )
    fields = "offset,warc-type,warc-target-uri,warc-date,http:status,content-type"
    index = subprocess.run(
        [str(WARCIO), "index", "-f", fields, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    entries = [json.loads(line) for line in index.stdout.splitlines()]
    assert [(e["warc-type"], e.get("warc-target-uri"), e.get("http:status")) for e in entries] == [
        ("warcinfo", None, None),
        ("response", "https://www.example.com/robots.txt", "200"),
        ("metadata", "https://www.example.com/robots.txt", None),
        ("metadata", "https://www.example.com/private/a", None),
        ("metadata", "https://example.com/robots.txt", None),
    ]
    assert [e.get("warc-date") for e in entries[1:]] == [
        robots["fetched_at"],
        robots["fetched_at"],
        "2026-11-18T11:06:41.500Z",
        robots["fetched_at"],
    ]
    assert [e.get("content-type") for e in entries[2:]] == ["application/json"] * 3
    # Each record on its own gzip member, where the index says it starts.
    data = path.read_bytes()
    offsets = [int(e["offset"]) for e in entries] + [len(data)]
    for start, end in pairwise(offsets):
        assert gzip.decompress(data[start:end]).startswith(b"WARC/1.1\r\n")
    # The digests warcio wrote match the blocks and payloads as written.
    check = subprocess.run(
        [str(WARCIO), "check", "-v", str(path)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("digest pass") == len(entries)


def test_each_record_is_on_disk_once_written(tmp_path: Path) -> None:
    path = tmp_path / "e.warc.gz"
    with path.open("wb") as stream:  # buffered: only a flush puts a record on disk
        writer = WarcEvidenceWriter(stream, software=SOFTWARE)
        writer.write(a_robots_record())
        writer.write(a_decision_record())
        # Read through another handle while the file is still open, as after a crash.
        read = read_warc(path)
    assert [record.rec_type for record, _ in read] == [
        "warcinfo",
        "response",
        "metadata",
        "metadata",
    ]


def test_a_file_cut_mid_record_keeps_every_whole_record(tmp_path: Path) -> None:
    path = write_warc(tmp_path / "e.warc.gz", [a_robots_record(), a_decision_record()])
    data = path.read_bytes()
    with path.open("rb") as stream:
        offsets = _offsets(stream)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: offsets[-1] + 40])  # the decision's record cut short
    read = read_warc(cut)
    whole = [(record.rec_type, content) for record, content in read[:3]]
    assert [kind for kind, _ in whole] == ["warcinfo", "response", "metadata"]
    assert whole[1][1] == BODY


def _offsets(stream: Any) -> list[int]:
    iterator = ArchiveIterator(stream)
    found = []
    for record in iterator:
        record.content_stream().read()
        found.append(iterator.get_record_offset())
    return found


def test_nothing_secret_is_written_even_if_a_record_carried_it(tmp_path: Path) -> None:
    secrets = {
        "Cookie": "session=c00kie",
        "Set-Cookie": "id=s3tc00kie",
        "Authorization": "Basic c2VjcmV0",
        "Proxy-Authorization": "Basic cHJveHk=",
    }
    # Past the builders, which drop these: the writer keeps only the format's headers itself.
    robots = {**a_robots_record(), "headers": {"Content-Type": "text/plain", **secrets}}
    built = a_robots_record(headers={"Content-Type": "text/plain", **secrets})
    path = write_warc(
        tmp_path / "e.warc.gz",
        [robots, built, a_robots_record(body=None, source="store", headers=secrets)],
    )
    with gzip.open(path, "rb") as whole:
        text = whole.read().decode("utf-8").lower()
    for name, value in secrets.items():
        assert f"{name.lower()}:" not in text
        assert f'"{name.lower()}"' not in text
        assert value.lower() not in text
    assert "content-type: text/plain" in text  # the headers kept are there


def test_a_value_cannot_start_a_header_of_its_own(tmp_path: Path) -> None:
    robots = {
        **a_robots_record(),
        "final_url": "https://www.example.com/robots.txt\r\nCookie: x=1",
        "headers": {"ETag": '"a"\r\nSet-Cookie: y=2'},
    }
    read = read_warc(write_warc(tmp_path / "e.warc.gz", [robots]))
    response = read[1][0]
    assert header(response, "WARC-Target-URI") == (
        "https://www.example.com/robots.txt%0D%0ACookie:%20x=1"
    )
    assert header(response, "Cookie") is None
    assert response.http_headers.headers == [("ETag", '"a"  Set-Cookie: y=2')]
    assert response.http_headers.get_header("Set-Cookie") is None


def test_the_core_imports_without_warcio() -> None:
    """Only a crawl that asks for WARC imports warcio: the core and the crawl's evidence load
    in an interpreter where it cannot be imported."""
    script = (
        "import sys\n"
        "class NoWarcio:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'warcio':\n"
        "            raise ImportError('warcio is not installed')\n"
        "sys.meta_path.insert(0, NoWarcio())\n"
        "import scrapy_rerp, scrapy_rerp.core.evidence, scrapy_rerp.crawl.evidence\n"
        "try:\n"
        "    import scrapy_rerp.core.evidence_warc\n"
        "except ImportError:\n"
        "    print('refused')\n"
        "print(sorted(m for m in sys.modules if m.startswith('warcio')))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.splitlines() == ["refused", "[]"]
