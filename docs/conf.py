"""Sphinx configuration: ``sphinx-build -W -b html docs docs/_build`` (``.ci/run`` does it)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy_rerp import __version__  # noqa: E402

project = "scrapy_rerp"
author = "the scrapy_rerp authors"
copyright = "the scrapy_rerp authors"  # noqa: A001
version = release = __version__

extensions: list[str] = []
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_theme_options = {"description": "robots.txt for Scrapy, correct and polite"}
