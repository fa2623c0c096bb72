"""A fleet of workers sharing robots.txt and Crawl-delay through Redis.

``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"`` turns it on (docs/fleet.rst). The parts:

* :mod:`~scrapy_rerp.fleet.store`: the Redis calls (``RedisOriginCache``: hashes, the download
  lock, the Crawl-delay turn, all on Redis's clock);
* :mod:`~scrapy_rerp.fleet.codec`: an origin's entry as a Redis hash, and its format version;
* :mod:`~scrapy_rerp.fleet.guard`: what a worker does when Redis fails (goes on alone);
* :mod:`~scrapy_rerp.fleet.sharing`: one robots.txt download per origin for the fleet;
* :mod:`~scrapy_rerp.fleet.delay`: the Crawl-delay turn that all workers together keep.

Nothing here imports Scrapy; redis-py (the ``redis`` extra) is imported when a store is built.
"""
