"""``python -m scrapy_rerp``: the ``scrapy-rerp`` command line."""

import sys

from scrapy_rerp.cli import main

sys.exit(main())
