"""Evidence records as WARC (docs/evidence.rst, "WARC"), beside or instead of JSON lines.

Only a crawl that asks for WARC (``RERP_EVIDENCE_WARC``) imports this module: it needs
``warcio`` (the ``warc`` extra), which nothing else of the package does.

* a ``robots`` (or ``tdmrep``) record with a response: a WARC ``response`` record (the status
  line, the kept headers, the body) and a ``metadata`` record concurrent to it, holding the
  rest of the record as JSON;
* a ``robots`` (or ``tdmrep``) record without a response of this crawl's own (unreachable with
  no answer, or a copy from the store or the fleet): the ``metadata`` record only;
* a ``decision`` or ``page`` record: a ``metadata`` record holding it as JSON.

Each record is gzipped on its own, as WARC tools expect, and flushed: a crawl killed mid-write
leaves at most its last record cut short.

:func:`iter_warc_records` reads such a file back into the evidence records it holds, as
:func:`~scrapy_rerp.core.evidence.iter_records` reads JSON lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import partial
from http import HTTPStatus
from io import BytesIO
from typing import IO, Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from scrapy_rerp.core.evidence import (
    FORMAT_VERSION,
    MAX_LINE_BYTES,
    RecordLine,
    is_document,
    kept_headers,
    record_line,
)

__all__ = ["WarcEvidenceWriter", "iter_warc_records"]

#: Fractional seconds in WARC-Date (the records' milliseconds) need WARC 1.1.
WARC_VERSION = "1.1"
JSON_TYPE = "application/json"
#: The body kept is the decoded one: a reader told it is compressed would try to decompress it.
#: The header stays in the metadata record.
_NOT_IN_THE_HTTP_BLOCK = frozenset({"content-encoding"})
#: The reason phrase of each status Python knows (another status is written without one).
_PHRASES = {status.value: status.phrase for status in HTTPStatus}


def _one_line(text: str) -> str:
    # A header value or a URI never spans lines in a WARC header block.
    return text.replace("\r", " ").replace("\n", " ")


#: What a URI never holds: whitespace and control characters (a URL as Scrapy writes it has none).
_NOT_IN_A_URI = re.compile(r"[\x00-\x20\x7f]")


def _uri(url: str) -> str:
    return _NOT_IN_A_URI.sub(lambda found: f"%{ord(found.group()):02X}", url)


def _kept_headers(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's headers that the evidence format keeps (:data:`ROBOTS_HEADERS`), whatever
    else the mapping holds: nothing secret is written, even if a record carried it."""
    return {
        name: _one_line(str(value)) for name, value in kept_headers(record.get("headers")).items()
    }


def _json_bytes(record: Mapping[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


class WarcEvidenceWriter:
    """Writes evidence records to a WARC file (gzip per record, as WARC tools expect).

    ``stream`` is a binary file open for writing; ``software`` names the writer in the
    ``warcinfo`` record written first (``scrapy_rerp/1.2.3``). :meth:`write` takes the
    records :mod:`scrapy_rerp.core.evidence` builds; the stream is the caller's to close."""

    def __init__(self, stream: BinaryIO, *, software: str) -> None:
        self._stream = stream
        self._writer = WARCWriter(stream, gzip=True, warc_version=WARC_VERSION)
        info = {
            "software": software,
            "format": "WARC File Format 1.1",
            "description": f"robots.txt evidence records, format {FORMAT_VERSION} "
            "(robots.txt files read, requests decided)",
        }
        self._writer.write_record(self._writer.create_warcinfo_record(None, info))
        self._stream.flush()

    def write(self, record: Mapping[str, Any]) -> None:
        """One evidence record of this format (a document's, ``robots``, ``tdmrep`` or another
        kind's; ``decision``, ``page``); anything else raises :class:`ValueError`."""
        if record.get("v") != FORMAT_VERSION:
            raise ValueError(
                f"evidence record of format {FORMAT_VERSION} expected, not {record.get('v')!r}"
            )
        kind = record.get("kind")
        if is_document(kind):
            self._robots(record)
        elif kind in ("decision", "page"):
            self._metadata(record["url"], record["at"], _json_bytes(record))
        else:
            raise ValueError(
                f"evidence record kind must be robots, tdmrep, decision or page, not {kind!r}"
            )
        # warcio flushes each record it writes; this keeps the promise whatever its version.
        self._stream.flush()

    def _robots(self, record: Mapping[str, Any]) -> None:
        metadata = {key: value for key, value in record.items() if key != "body"}
        metadata["headers"] = _kept_headers(record)
        content = _json_bytes(metadata)
        # A response this crawl received: its status, and it was downloaded here (a copy from
        # the store or the fleet has its response in the evidence of the run that downloaded it).
        if record["status"] is None or record.get("source", "download") != "download":
            self._metadata(record["url"], record["fetched_at"], content)
            return
        self._metadata(
            record["final_url"] or record["url"],
            record["fetched_at"],
            content,
            {"WARC-Concurrent-To": self._response(record)},  # the response written first
        )

    def _response(self, record: Mapping[str, Any]) -> str:
        status = int(record["status"])
        headers = [
            (name, value)
            for name, value in _kept_headers(record).items()
            if name.lower() not in _NOT_IN_THE_HTTP_BLOCK
        ]
        status_line = f"{status} {_PHRASES.get(status, '')}".rstrip()
        http_headers = StatusAndHeaders(status_line, headers, protocol="HTTP/1.1")
        warc_headers = {"WARC-Type": "response", "WARC-Date": record["fetched_at"]}
        body = record.get("body")
        if body is None:
            # The crawl kept no body (one it did not parse): the block says so rather than
            # show an empty body the site never sent.
            warc_headers["WARC-Truncated"] = "unspecified"
        payload = body.encode("utf-8", "surrogatepass") if body is not None else b""
        warc_record = self._writer.create_warc_record(
            _uri(record["final_url"] or record["url"]),
            "response",
            payload=BytesIO(payload),
            length=len(payload),
            warc_headers_dict=warc_headers,
            http_headers=http_headers,
        )
        self._writer.write_record(warc_record)
        return str(warc_record.rec_headers.get_header("WARC-Record-ID"))

    def _metadata(
        self, url: str, date: str, content: bytes, extra: Mapping[str, str] | None = None
    ) -> None:
        warc_record = self._writer.create_warc_record(
            _uri(url),
            "metadata",
            payload=BytesIO(content),
            length=len(content),
            warc_content_type=JSON_TYPE,
            warc_headers_dict={"WARC-Type": "metadata", "WARC-Date": date, **(extra or {})},
        )
        self._writer.write_record(warc_record)


def iter_warc_records(stream: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[RecordLine]:
    """The evidence records of a WARC file :class:`WarcEvidenceWriter` wrote, in bounded memory:
    a :class:`~scrapy_rerp.core.evidence.RecordLine` per ``metadata`` record (``number`` is the
    record's place in the file, from 1; a ``robots`` record gets its body back from the
    ``response`` it is concurrent to). Records of other tools (a ``metadata`` record that is not
    JSON, a ``request``) are skipped; a record over ``max_bytes``, or one that is no evidence
    record, is damaged; the last record cut short is ``"cut"``; a file that is no WARC, or
    stops being one, ends with a damaged line. Never raises for a file's content."""
    number = 0
    response: tuple[str, str | None] | None = None  # the last response: its id and body
    archive = ArchiveIterator(stream)
    records = iter(archive)
    while True:
        number += 1
        try:
            warc_record = next(records)
            headers = warc_record.rec_headers
            declared = headers.get_header("Content-Length")
            length = int(declared) if declared is not None else None
            kind = warc_record.rec_type
            if length is not None and length > max_bytes:
                yield RecordLine(
                    number=number, problem="damaged", reason=f"over {max_bytes:,} bytes"
                )
                continue
            content = warc_record.content_stream().read(max_bytes + 1)
            # Fewer bytes than the header says (or no header at all): the file ends in it.
            cut = length is None or getattr(warc_record.raw_stream, "limit", 0) > 0
        except StopIteration:
            if archive.offset < stream.tell():  # a last record too short to be one
                yield RecordLine(number=number, problem="cut", reason="cut short")
            return
        except Exception as error:  # warcio on bytes that are no WARC: any of its errors
            yield RecordLine(number=number, problem="damaged", reason=_unreadable(error))
            return
        if cut:
            yield RecordLine(number=number, problem="cut", reason="cut short")
        elif kind == "response":
            body = None if headers.get_header("WARC-Truncated") is not None else _text(content)
            response = (str(headers.get_header("WARC-Record-ID")), body)
        elif kind == "metadata" and str(headers.get_header("Content-Type")).startswith(JSON_TYPE):
            concurrent_to = headers.get_header("WARC-Concurrent-To")
            body = response[1] if response is not None and response[0] == concurrent_to else None
            yield record_line(number, content, complete=partial(_with_body, body=body))


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8", "surrogatepass")  # as the writer encoded it
    except UnicodeDecodeError:
        return body.decode("utf-8", "replace")


def _with_body(record: dict[str, Any], body: str | None) -> None:
    # A robots (or tdmrep) record's body is in the response it is concurrent to; with none, it
    # has none (a copy from the store or the fleet, an answer whose body was not kept).
    if is_document(record.get("kind")):
        record["body"] = body


def _unreadable(error: Exception) -> str:
    # warcio's messages quote the bytes it could not read: the kind of failure is enough.
    if type(error).__name__ == "ArchiveLoadFailed":
        return "not a WARC record where one should start"
    return f"cannot be read ({type(error).__name__})"
