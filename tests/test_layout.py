"""The package's import layers: engine <- core <- Scrapy adapters <- entry points, no circle,
nothing imported upward, and no Scrapy in the core (the engine's own: tests/engine/test_layout.py).

An import counts when it runs: at module level, or inside a function. Two kinds are left out:
imports under ``if TYPE_CHECKING:`` (types only, never run) and those in a module
``__getattr__`` (a public name re-exported lazily, as ``scrapy_rerp.cache.RedisOriginCache``).
"""

from __future__ import annotations

import ast
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "scrapy_rerp"

#: Each layer may import its own and the layers before it (docs/design.rst, "Layout").
LAYERS: dict[str, set[str]] = {
    "engine": {"engine"},
    # Standard library (and w3lib, redis-py when a fleet store is built): what the command line
    # and the Scrapy-free services are made of.
    "core": {"core", "cache", "fleet", "cli"},
    # What speaks to Scrapy, and the public paths of its middlewares and parser.
    "scrapy": {"crawl", "middleware", "robotparser"},
    # The entry points that switch it all on: the add-on, the ``scrapy robots`` command, the
    # command line's ``python -m``; and the demo with its local HTTP servers.
    "entry points": {"addon", "commands", "__main__", "demo"},
}
#: What the core may import besides the standard library: w3lib, redis-py for a fleet's store,
#: and the decoders of Content-Encodings that Scrapy installs (imported when a body needs one).
CORE_THIRD_PARTY = {"w3lib", "redis", "brotli", "brotlicffi", "backports", "compression"}
#: Scrapy imports the core makes only when a crawl asks for them, inside a function.
CORE_LAZY_SCRAPY = {("core/settings", "scrapy"), ("cli", "scrapy")}


#: The command line (``cli/``, one unit of the core): a module per command, and the modules the
#: commands share, which import no command (docs/design.rst, "Layout").
CLI_COMMANDS = {"_check", "_explain", "_lint", "_fetch", "_page", "_demo"}
CLI_SHARED = {"_parser", "_output", "_source", "_download", "_summary", "_problems"}
CLI = PACKAGE / "cli"


def unit_of(path: Path) -> str:
    """The layer unit of a module file: its top-level name under the package."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def layer_of(unit: str) -> int:
    for index, units in enumerate(LAYERS.values()):
        if unit in units:
            return index
    raise AssertionError(f"{unit} is in no layer: add it to LAYERS and docs/design.rst")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """(absolute module, imported in a function) for every import that runs."""
    found: list[tuple[str, bool]] = []
    package = ".".join(("scrapy_rerp", *path.relative_to(PACKAGE).parts[:-1]))

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "__getattr__" and not in_function:
                return
            in_function = True
        if isinstance(node, ast.Import):
            found.extend((alias.name, in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.module or "", in_function))
            else:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.append((".".join([*base, node.module] if node.module else base), in_function))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "engine" not in p.relative_to(PACKAGE).parts)


def own_unit(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "scrapy_rerp" or len(parts) == 1:
        return None
    return parts[1]


def test_every_module_is_in_a_layer() -> None:
    units = {unit_of(path) for path in MODULES} - {"__init__"}
    for unit in units:
        layer_of(unit)
    assert set().union(*LAYERS.values()) - {"engine"} == units


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nothing_is_imported_from_a_later_layer(path: Path) -> None:
    unit = unit_of(path)
    if unit == "__init__":
        return  # the package's face: the engine, and the Scrapy names lazily (test_public_api)
    upward = [
        module
        for module, _ in imports_of(path)
        if (target := own_unit(module)) is not None and layer_of(target) > layer_of(unit)
    ]
    assert upward == []


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if unit_of(p) in LAYERS["core"]],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_the_core_needs_no_scrapy(path: Path) -> None:
    unit = unit_of(path)
    name = path.relative_to(PACKAGE).with_suffix("").as_posix()
    allowed = set(sys.stdlib_module_names) | {"__future__", "scrapy_rerp"} | CORE_THIRD_PARTY
    for module, lazy in imports_of(path):
        top = module.split(".")[0]
        if top in allowed or (lazy and ({(unit, top), (name, top)} & CORE_LAZY_SCRAPY)):
            continue
        pytest.fail(f"{path.name} imports {module}")


def test_no_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        name = ".".join(("scrapy_rerp", *path.relative_to(PACKAGE).with_suffix("").parts))
        name = name.removesuffix(".__init__")
        graph.setdefault(name, set())
        for module, _ in imports_of(path):
            if module.startswith("scrapy_rerp.") and ".engine" not in module:
                graph[name].add(module)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"import circle: {error.args[1]}")


def test_every_cli_module_is_a_command_or_shared_and_in_the_design() -> None:
    modules = {path.stem for path in CLI.glob("*.py")} - {"__init__", "__main__"}
    assert modules == CLI_COMMANDS | CLI_SHARED
    design = (PACKAGE.parent / "docs" / "design.rst").read_text(encoding="utf-8")
    assert [name for name in sorted(modules) if f"``{name}``" not in design] == []


@pytest.mark.parametrize("name", sorted(CLI_SHARED))
def test_the_cli_s_shared_modules_import_no_command(name: str) -> None:
    commands = {f"scrapy_rerp.cli.{command}" for command in CLI_COMMANDS}
    assert [m for m, _ in imports_of(CLI / f"{name}.py") if m in commands] == []


def test_no_test_module_imports_another() -> None:
    # Shared helpers live in tests/support/; a test module imports from there only.
    tests = Path(__file__).parent
    offenders = []
    for path in sorted(tests.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_"):
                    offenders.append(f"{path.relative_to(tests)} imports {name}")
    assert offenders == []
