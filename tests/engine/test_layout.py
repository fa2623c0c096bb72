"""The engine's imports: the standard library only, and one way between its own modules."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "scrapy_rerp" / "engine"
# Each module may import the leaves and the modules before it (README, "Development").
LEAVES = {
    "_sfv",
    "_usage",
    "_constants",
    "_patterns",
    "_agents",
    "_directives",
    "_shared",
    "_text_codecs",
    # page-level directives: the rule table, dates, meta tags, reading and combining
    "_page_rules",
    "_dates",
    "_html_meta",
    "_page",
    # TDMRep: tdmrep.json, its headers and meta tags, combined
    "_tdmrep",
    # RSL 1.0 licence files
    "_rsl",
}
CHAIN = [
    "_lines",
    "_groups",
    "_match",
    "_render",
    "_pickling",
    "_robots",
    "_rfc9309",
    "_legacy",
    "rerp",
    "__init__",
]


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(top-level absolute modules, engine modules) that the file at *path* imports."""
    absolute: set[str] = set()
    own: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            absolute.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                absolute.add((node.module or "").split(".")[0])
            elif node.module:
                own.add(node.module.split(".")[0])
            else:  # from . import _lines
                own.update(alias.name for alias in node.names)
    return absolute, own


def test_every_engine_module_is_in_the_layering() -> None:
    assert {path.stem for path in ENGINE.glob("*.py")} == LEAVES | set(CHAIN)


@pytest.mark.parametrize("path", sorted(ENGINE.glob("*.py")), ids=lambda path: path.stem)
def test_engine_modules_import_only_the_standard_library(path: Path) -> None:
    absolute, _ = imports_of(path)
    assert absolute <= set(sys.stdlib_module_names) | {"__future__"}, absolute


@pytest.mark.parametrize("name", CHAIN)
def test_engine_modules_import_only_leaves_and_earlier_modules(name: str) -> None:
    _, own = imports_of(ENGINE / f"{name}.py")
    allowed = LEAVES | set(CHAIN[: CHAIN.index(name)])
    assert own <= allowed, own - allowed


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_leaves_import_no_module_of_the_chain(name: str) -> None:
    _, own = imports_of(ENGINE / f"{name}.py")
    assert not own & set(CHAIN), own


def test_design_maps_every_engine_module() -> None:
    design = (ENGINE.parents[1] / "docs" / "design.rst").read_text(encoding="utf-8")
    unnamed = [
        name
        for name in sorted(LEAVES | set(CHAIN))
        if name != "__init__" and f"``{name}``" not in design
    ]
    assert unnamed == []
