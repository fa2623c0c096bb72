"""The pickle format of a parsed robots.txt: plain builtins in documented terms, with a version.

A pickle holds what the file said (groups with their rules and values as written back, the
file-wide values by directive name, the warnings), never the stored layout, so that a later
version reads it or refuses it with a clear error (docs/engine.rst, "Pickles carry a format
version"). ``RobotsTxt.__reduce__`` and ``_robots._unpickle`` (the name pickles refer to) use it.
"""

from __future__ import annotations

import pickle
from typing import Any

from ._constants import RFC9309, check_syntax
from ._directives import DIRECTIVES, KIND_OF_NAME
from ._groups import STAR, Extra, StoredGroup, line_fields, plain_prefixes
from ._lines import ParseWarning
from ._render import render_value

# What a pickled RobotsTxt starts with: its format and the format's version (``__reduce__``).
# 2: per-group values as the text written back (read again on unpickling) and their line.
# 3: file-wide values by directive name; warnings with their code.
PICKLE_FORMAT = ("scrapy_rerp.RobotsTxt", 3)

Parts = tuple[int, tuple[StoredGroup, ...], dict[int, tuple[str, ...]], tuple[ParseWarning, ...]]


def pickled_state(
    syntax: int,
    groups: tuple[StoredGroup, ...],
    file_values: dict[int, tuple[str, ...]],
    warnings: tuple[ParseWarning, ...],
) -> tuple[Any, ...]:
    """A parsed robots.txt's parts as the pickle holds them."""
    pickled_groups = tuple(
        (
            group.agents,
            group.rules(),
            tuple(
                (e.agents_before, DIRECTIVES[e.kind].name, render_value(e.kind, e.value), e.line)
                for e in group.extras
            ),
            group.first_line,
        )
        for group in groups
    )
    pickled_values = tuple((DIRECTIVES[kind].name, values) for kind, values in file_values.items())
    return (syntax, pickled_groups, pickled_values, tuple(tuple(w) for w in warnings))


def parts_from_state(pickle_format: object, state: Any) -> Parts:
    """The parts of a RobotsTxt from a pickle's state, if it is in PICKLE_FORMAT."""
    if pickle_format != PICKLE_FORMAT:
        raise pickle.UnpicklingError(
            f"not a RobotsTxt pickle this version of scrapy_rerp reads: format {pickle_format!r}"
            f", expected {PICKLE_FORMAT!r}; parse the robots.txt again"
        )
    syntax, groups, file_values, warnings = state
    syntax = check_syntax(syntax)
    return (
        syntax,
        tuple(_stored_group(syntax, *group) for group in groups),
        {KIND_OF_NAME[name]: tuple(values) for name, values in file_values},
        tuple(ParseWarning(*warning) for warning in warnings),
    )


def _read_value(kind: int, text: str) -> Any:
    read_value = DIRECTIVES[kind].read_value
    return text if read_value is None else read_value(text)[0]


def _stored_group(
    syntax: int,
    agents: tuple[str, ...],
    rules: tuple[tuple[bool, str, int], ...],
    extras: tuple[tuple[int, str, str, int], ...],
    first_line: int,
) -> StoredGroup:
    """A group from its pickled form."""
    patterns = tuple(pattern for _, pattern, _ in rules)
    bits = bytes(1 if is_allow else 0 for is_allow, _, _ in rules)
    allow_bits = bits if 1 in bits else None
    plain = syntax == RFC9309 and plain_prefixes(allow_bits, "".join(patterns), patterns)
    return StoredGroup(
        STAR if tuple(agents) == STAR else tuple(agents),
        patterns,
        allow_bits,
        *line_fields([line for _, _, line in rules]),
        tuple(
            Extra(before, KIND_OF_NAME[name], _read_value(KIND_OF_NAME[name], text), line)
            for before, name, text, line in extras
        ),
        first_line,
        plain,
    )
