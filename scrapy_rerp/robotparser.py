"""The public path of the parser adapter, as a project's settings name it
(``ROBOTSTXT_PARSER = "scrapy_rerp.robotparser.RerpRobotParser"``). A re-export for that path
only: the code is :mod:`scrapy_rerp.crawl.robotparser`, which the package itself imports."""

from __future__ import annotations

from scrapy_rerp.crawl.robotparser import (
    RerpRobotParser,
    charset_from_content_type,
    parse_body,
)

__all__ = ["RerpRobotParser", "charset_from_content_type", "parse_body"]
