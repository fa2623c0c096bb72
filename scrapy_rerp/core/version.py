"""The package's version, in one place: ``scrapy_rerp.__version__`` names it, pyproject.toml
reads it, the command line and the evidence write it. A module of the core, so that no module
of the package imports the package's own names (tests/test_layout.py)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
