"""``python -m scrapy_rerp.cli``: the ``scrapy-rerp`` command line, as ``python -m scrapy_rerp``."""

import sys

from scrapy_rerp.cli import main

sys.exit(main())
