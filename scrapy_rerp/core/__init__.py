"""The core: the robots.txt layer's services without Scrapy, between the engine and the Scrapy
adapters (``scrapy_rerp.crawl``). Plain data, robots.txt bodies and URLs, the settings, the
status ladder, the origin service and the politeness controller with its parts. None imports
Scrapy but inside a function, when a crawl asks for it (``tests/test_layout.py`` holds it;
docs/design.rst draws the layers).

Internal: no public API. The public names are ``scrapy_rerp``'s.
"""
