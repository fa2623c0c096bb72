"""The three syntaxes as test parameters, shared by the engine's tests."""

from __future__ import annotations

from typing import Any

import pytest

from scrapy_rerp.engine import GYM2008, MK1996, RFC9309

ALL = [
    pytest.param(MK1996, id="MK1996"),
    pytest.param(GYM2008, id="GYM2008"),
    pytest.param(RFC9309, id="RFC9309"),
]
LEGACY = [pytest.param(MK1996, id="MK1996"), pytest.param(GYM2008, id="GYM2008")]
WILDCARDS = [pytest.param(GYM2008, id="GYM2008"), pytest.param(RFC9309, id="RFC9309")]


def per_syntax(mk1996: Any, gym2008: Any, rfc9309: Any) -> list[Any]:
    """Parameters ``(syntax, expected)``: each syntax with its own expected answer."""
    return [
        pytest.param(MK1996, mk1996, id="MK1996"),
        pytest.param(GYM2008, gym2008, id="GYM2008"),
        pytest.param(RFC9309, rfc9309, id="RFC9309"),
    ]
