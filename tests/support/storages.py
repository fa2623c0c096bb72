"""Feed storages for the evidence tests: remote ones as Scrapy's block storages (S3, GCS, FTP)
behave, an upload of a temporary file when the file is stored, without a network service."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlparse

from scrapy.extensions.feedexport import BlockingFeedStorage


class CopyingFeedStorage(BlockingFeedStorage):
    """``copy:///path``: written to a temporary file, "uploaded" (copied) to the path in a
    thread when stored, as ``S3FeedStorage`` uploads."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        self.path = Path(urlparse(uri).path)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        file.seek(0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("wb") as target:
            shutil.copyfileobj(file, target)
        file.close()


class RefusingFeedStorage(BlockingFeedStorage):
    """``refuse:///path``: written, then its upload refused, as a bucket that denies access."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        self.uri = uri

    def _store_in_thread(self, file: IO[bytes]) -> None:
        file.close()
        raise PermissionError(f"upload to {self.uri} refused (AccessDenied)")


class FullDiskFeedStorage:
    """``full:///path?room=N``: a local file with room for N bytes, as a disk that fills: the
    write that does not fit is cut where the room ends and fails (ENOSPC), as do all after."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        parsed = urlparse(uri)
        self.path = Path(parsed.path)
        self.room = int(parse_qs(parsed.query)["room"][0])

    def open(self, spider: Any) -> IO[bytes]:
        return _Filling(self.path.open("wb"), self.room)  # type: ignore[return-value]

    def store(self, file: IO[bytes]) -> None:
        file.close()


class _Filling:
    def __init__(self, file: IO[bytes], room: int) -> None:
        self.file = file
        self.room = room

    def write(self, data: bytes) -> int:
        fits = data[: self.room]
        self.file.write(fits)
        self.file.flush()
        self.room -= len(fits)
        if len(fits) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(data)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()
