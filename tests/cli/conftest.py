"""Fixtures of the command line's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import ROBOTS


@pytest.fixture
def robots_file(tmp_path: Path) -> Path:
    """ROBOTS, written to a file."""
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS, encoding="utf-8")
    return path
