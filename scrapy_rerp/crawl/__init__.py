"""The Scrapy adapters: what speaks to Scrapy, on top of the core (``scrapy_rerp.core``). The
middlewares, the parser adapter, the robots.txt transport, the parking lot, the slot adapter,
the page-directives middleware and what assembles them for a crawler (docs/design.rst draws
the layers).

Internal: no public API. The public names are ``scrapy_rerp``'s, and the paths a project's
settings name (``scrapy_rerp.middleware``, ``scrapy_rerp.robotparser``) re-export from here.
"""
