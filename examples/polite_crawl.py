"""A polite Scrapy crawl with ``ADDONS = {"scrapy_rerp.Addon": 100}``, offline, in seconds.

Run it from the repository root::

    python examples/polite_crawl.py            # or --pages 5, --blog-robots missing, -v

The crawl itself is :mod:`scrapy_rerp.demo`, which ``scrapy-rerp demo`` runs too (installed,
without this repository): two local sites, one with rules, a Crawl-delay and a sitemap, one
whose robots.txt is unreachable for a while, and a report of what each server received, checked
against what scrapy_rerp promises (exit status 1 if a promise does not hold).
"""

from scrapy_rerp.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
