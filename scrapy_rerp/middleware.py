"""The public path of the robots.txt middlewares, as a project's settings name them
(``"scrapy_rerp.middleware.RobotsTxtMiddleware"``). A re-export for that path only: the code is
:mod:`scrapy_rerp.crawl.middleware`, which the package itself imports."""

from __future__ import annotations

from scrapy_rerp.crawl.middleware import (
    ANSWERS_MIDDLEWARE_PRIORITY,
    AnswersMiddleware,
    RobotsTxtMiddleware,
)

__all__ = ["ANSWERS_MIDDLEWARE_PRIORITY", "AnswersMiddleware", "RobotsTxtMiddleware"]
