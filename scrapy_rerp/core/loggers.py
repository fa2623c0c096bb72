"""The package's loggers, each named after what it speaks for (docs/logging.rst lists them), so
that a user can set one's level alone: ``logging.getLogger(FLEET).setLevel("INFO")``.

Every module logs through one of these (tests/test_layout.py holds it); the middleware's logger is
the middleware module's own.
"""

__all__ = [
    "EVIDENCE",
    "FLEET",
    "IDENTITY",
    "MIDDLEWARE",
    "PAGE",
    "POLITENESS",
    "RESUME",
    "ROBOTSTXT",
    "SETTINGS",
    "SITEMAPS",
    "STORE",
    "SUMMARY",
    "USAGE",
]

#: robots.txt and the other per-origin documents: the origin service, its downloads, the gate,
#: parked requests, new rules.
ROBOTSTXT = "scrapy_rerp.robotstxt"
#: The gaps between requests: Crawl-delay floors, cool-downs and raised floors, slots.
POLITENESS = "scrapy_rerp.politeness"
#: A fleet's Redis: shared downloads, turns and slow-downs, Redis down.
FLEET = "scrapy_rerp.fleet"
#: The robots.txt store (RERP_STORE).
STORE = "scrapy_rerp.store"
#: Evidence written (RERP_EVIDENCE).
EVIDENCE = "scrapy_rerp.evidence"
#: A page's own directives (X-Robots-Tag, robots meta tags).
PAGE = "scrapy_rerp.page"
#: Usage preferences (RERP_USAGE) and TDMRep.
USAGE = "scrapy_rerp.usage"
#: Sitemaps listed in robots.txt, followed or skipped.
SITEMAPS = "scrapy_rerp.sitemaps"
#: Settings read at start-up: unknown names, bad values.
SETTINGS = "scrapy_rerp.settings"
#: A paused job's parked requests and cool-downs, kept in JOBDIR and resumed.
RESUME = "scrapy_rerp.resume"
#: Web Bot Auth: the key requests are signed with (RERP_SIGNATURE_KEY).
IDENTITY = "scrapy_rerp.identity"
#: The closing summary.
SUMMARY = "scrapy_rerp.summary"
#: The downloader middleware itself (crawl/middleware.py only).
MIDDLEWARE = "scrapy_rerp.middleware"
