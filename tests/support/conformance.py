"""A conformance record's check, for the data files of tests/data whose records say what the
source expects (``expect``) and, where this project reads it otherwise on purpose
(``divergence``), what it answers instead (``ours``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def assert_conforms(found: Mapping[str, Any], record: Mapping[str, Any]) -> None:
    """``found`` is what ``record`` expects, or, for a divergence, the expectation with ``ours``
    in place, each of whose values still differs from the source's."""
    if "divergence" not in record:
        assert found == record["expect"]
        return
    ours = record["ours"]
    assert found == {**record["expect"], **ours}
    for key, value in ours.items():
        assert record["expect"][key] != value, f"{key} no longer diverges: drop it from 'ours'"
