"""Feed storages for the evidence tests: remote ones as Scrapy's block storages (S3, GCS, FTP)
behave, an upload of a temporary file when the file is stored, without a network service."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlparse

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
