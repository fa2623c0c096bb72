"""The demo: a polite Scrapy crawl of two sites run on 127.0.0.1 (``crawl``: what
``scrapy-rerp demo`` and ``examples/polite_crawl.py`` run), and the local HTTP servers it runs
them on (``local_server``, standard library only: the crawl tests' too).

The crawl's names are imported on first access, so that the local servers load no Scrapy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy_rerp.demo.crawl import Outcome, as_dict, main, report, run

__all__ = ["Outcome", "as_dict", "main", "report", "run"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'scrapy_rerp.demo' has no attribute {name!r}")
    value = getattr(import_module("scrapy_rerp.demo.crawl"), name)
    globals()[name] = value
    return value
