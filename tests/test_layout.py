"""The package's import layers, read from its folders: a module's folder is its layer.

    engine/  <-  core/, fleet/, cli/  <-  crawl/  <-  demo/ and the top-level modules

Each layer imports its own and the layers before it, and no import goes round in a circle. The
engine imports the standard library only (its own order: tests/engine/test_layout.py); the core
imports no Scrapy, but where a crawl asks for it, inside a function; ``core/`` imports nothing of
the rest of its layer (``fleet/``, ``cli/``), which builds on it, not even for types.
The top-level modules are
the package's face: the entry points, and the public paths a project's settings name. Where a
public path's code lives in a layer's folder, its top-level module only re-exports it, and the
package itself imports the layer's module (docs/design.rst, "Layout").

An import counts when it runs: at module level, or inside a function. Two kinds are left out:
imports under ``if TYPE_CHECKING:`` (types only, never run) and those in a module
``__getattr__``: a public name re-exported lazily, for its public path only, as
``scrapy_rerp.cache.RedisOriginCache``. ``LAZY_RE_EXPORTS`` lists each, and no other is made.
``from scrapy_rerp.x import y`` counts as an import of ``scrapy_rerp.x.y`` when that is a module.
"""

from __future__ import annotations

import ast
import re
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "scrapy_rerp"

#: The layers, first to last, and the folders that are each.
LAYERS: dict[str, set[str]] = {
    "engine": {"engine"},
    # The Scrapy-free services, the fleet's Redis parts and the command line.
    "core": {"core", "fleet", "cli"},
    # What speaks to Scrapy.
    "crawl": {"crawl"},
    # The demo and its local HTTP servers, beside the top-level modules.
    "top": {"demo"},
}
#: Top-level modules are on top: the code of each lives in a layer's folder.
TOP_LEVEL_LAYER: dict[str, str] = {}
#: The entry points: the package's names, ``python -m scrapy_rerp``, the add-on and the
#: ``scrapy robots`` command.
ENTRY_POINTS = {"__init__", "__main__", "addon", "commands"}
#: The public paths re-exported from a layer's module, which the package never imports.
RE_EXPORTS = {
    "cache": "scrapy_rerp.core.cache",
    "middleware": "scrapy_rerp.crawl.middleware",
    "robotparser": "scrapy_rerp.crawl.robotparser",
}
#: The names a module re-exports in its ``__getattr__``, by the module that holds them: for their
#: public paths only; the package imports them from that module. The fleet's store and its
#: protocols live with the fleet; ``cache`` re-exports the cache, and names these for
#: ``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``.
LAZY_RE_EXPORTS = {
    "cache": {"scrapy_rerp.fleet.store": {"RedisOriginCache", "SharedOriginCache"}},
}
#: Within the core's layer, what a part never imports (types included): ``core/`` comes first,
#: naming what builds on it by protocols of its own (``core/origins``: ``Cache``, ``Sharing``;
#: ``core/politeness``: ``Coordination``); the fleet holds its store's protocols.
NEVER_WITHIN_THE_CORE_S_LAYER = {"core": {"fleet", "cli"}}
#: What the core may import besides the standard library: w3lib, redis-py for a fleet's store,
#: the decoders of Content-Encodings that Scrapy installs (imported when a body needs one), and
#: warcio for evidence as WARC (core/evidence_warc, which only a crawl asking for WARC imports),
#: cryptography for Web Bot Auth keys (core/identity, imported when a key is made or loaded).
CORE_THIRD_PARTY = {
    "w3lib",
    "redis",
    "brotli",
    "brotlicffi",
    "backports",
    "compression",
    "warcio",
    "cryptography",
}
#: Scrapy imports the core makes only when a crawl asks for them, inside a function (by module,
#: or by folder).
CORE_LAZY_SCRAPY = {("core/settings", "scrapy"), ("cli", "scrapy")}
#: Imports of a later layer, each inside a function: the command line's ``demo`` runs the demo,
#: which needs Scrapy, imported when the command runs.
LAZY_UPWARD = {("cli/_demo", "scrapy_rerp.demo")}

#: The command line (``cli/``, in the core's layer): a module per command, and the modules the
#: commands share, which import no command (docs/design.rst, "Layout").
CLI_COMMANDS = {
    "_audit",
    "_check",
    "_explain",
    "_lint",
    "_fetch",
    "_page",
    "_demo",
    "_store",
    "_tdmrep",
    "_rsl",
    "_keys",
}
CLI_SHARED = {"_parser", "_output", "_source", "_download", "_summary", "_problems", "_stored"}
CLI = PACKAGE / "cli"

ORDER = list(LAYERS)
MODULES = sorted(PACKAGE.rglob("*.py"))
NOT_ENGINE = [p for p in MODULES if p.relative_to(PACKAGE).parts[0] != "engine"]


def name_of(path: Path) -> str:
    """The module's path in the package, without ``.py``: ``core/settings``, ``cli``, ``addon``."""
    return path.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__")


def dotted(path: Path) -> str:
    return ".".join(("scrapy_rerp", *name_of(path).split("/"))).removesuffix(".__init__")


def layer_of(path: Path) -> str:
    """A module's layer: its folder's, or, at the top, the top's (``TOP_LEVEL_LAYER`` aside)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if len(parts) == 1:
        return TOP_LEVEL_LAYER.get(parts[0], "top")
    for layer, folders in LAYERS.items():
        if parts[0] in folders:
            return layer
    raise AssertionError(f"{parts[0]}/ is no layer's folder: add it to LAYERS and docs/design.rst")


#: Every module of the package by its dotted name.
BY_NAME = {dotted(path): path for path in MODULES}


def module_file(module: str) -> Path | None:
    """The package's file of a dotted module name (None for the package itself, or another)."""
    return BY_NAME.get(module) if module != "scrapy_rerp" else None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import`` in ``path``."""
    if node.level == 0:
        return node.module or ""
    package = dotted(path) if path.name == "__init__.py" else dotted(path).rpartition(".")[0]
    parts = package.split(".")
    parts = parts[: len(parts) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def imports_of(path: Path, everything: bool = False) -> list[tuple[str, bool]]:
    """(absolute module, imported in a function) for every import that runs; with
    ``everything``, those under ``TYPE_CHECKING`` and in ``__getattr__`` too."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not everything:
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "__getattr__" and not in_function and not everything:
                return
            in_function = True
        if isinstance(node, ast.Import):
            found.extend((alias.name, in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(path, node)
            found.append((base, in_function))
            # ``from scrapy_rerp import demo``: the module imported is scrapy_rerp.demo.
            found.extend(
                (f"{base}.{alias.name}", in_function)
                for alias in node.names
                if f"{base}.{alias.name}" in BY_NAME
            )
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def test_every_module_is_in_a_layer() -> None:
    top = {name_of(p) for p in MODULES if len(p.relative_to(PACKAGE).parts) == 1}
    assert top == ENTRY_POINTS | set(RE_EXPORTS) | set(TOP_LEVEL_LAYER)
    for path in MODULES:
        layer_of(path)
    folders = {p.relative_to(PACKAGE).parts[0] for p in MODULES if p.parent != PACKAGE}
    assert folders == set().union(*LAYERS.values())


@pytest.mark.parametrize("path", NOT_ENGINE, ids=name_of)
def test_nothing_is_imported_from_a_later_layer(path: Path) -> None:
    layer = ORDER.index(layer_of(path))
    upward = [
        module
        for module, lazy in imports_of(path)
        if (target := module_file(module)) is not None
        and ORDER.index(layer_of(target)) > layer
        and not (lazy and (name_of(path), module) in LAZY_UPWARD)
    ]
    assert upward == []


def test_each_lazy_upward_import_is_made() -> None:
    made = {
        (name_of(path), module)
        for path in NOT_ENGINE
        for module, lazy in imports_of(path)
        if lazy and (name_of(path), module) in LAZY_UPWARD
    }
    assert made == LAZY_UPWARD


@pytest.mark.parametrize("path", [p for p in MODULES if layer_of(p) == "core"], ids=name_of)
def test_the_core_needs_no_scrapy(path: Path) -> None:
    name = name_of(path)
    folder = name.split("/")[0]
    allowed = set(sys.stdlib_module_names) | {"__future__", "scrapy_rerp"} | CORE_THIRD_PARTY
    for module, lazy in imports_of(path):
        top = module.split(".")[0]
        if top in allowed or (lazy and {(name, top), (folder, top)} & CORE_LAZY_SCRAPY):
            continue
        pytest.fail(f"{name} imports {module}")


def test_the_core_s_layer_keeps_its_order() -> None:
    def part(path: Path) -> str:
        return name_of(path).split("/")[0]

    offenders = [
        f"{name_of(path)} imports {module}"
        for path in MODULES
        if part(path) in NEVER_WITHIN_THE_CORE_S_LAYER
        for module, _ in imports_of(path, everything=True)
        if (target := module_file(module)) is not None
        and part(target) in NEVER_WITHIN_THE_CORE_S_LAYER[part(path)]
    ]
    assert offenders == []


def test_the_engine_imports_the_standard_library_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    outside = [
        f"{name_of(path)} imports {module}"
        for path in MODULES
        if layer_of(path) == "engine"
        for module, _ in imports_of(path, everything=True)
        if module.split(".")[0] not in allowed and not module.startswith("scrapy_rerp.engine")
    ]
    assert outside == []


#: What else imports the package: its tests (but the engine's own, which test its parts), the
#: benchmarks and the examples.
REPO = PACKAGE.parent
OUTSIDE_THE_PACKAGE = sorted(
    path
    for folder in ("tests", "benchmarks", "examples")
    for path in (REPO / folder).rglob("*.py")
    if (REPO / "tests" / "engine") not in path.parents
)


def _modules_named(path: Path) -> set[str]:
    """Every module an import in *path* names, types and ``__getattr__`` included:
    ``from a.b import c`` names ``a.b`` and ``a.b.c``."""
    if PACKAGE in path.parents:
        return {module for module, _ in imports_of(path, everything=True)}
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return named


def test_the_engine_is_imported_through_its_package_only() -> None:
    """Everything another layer (or a test, a benchmark, an example) uses of the engine is
    exported by ``scrapy_rerp.engine``: no ``scrapy_rerp.engine._*`` module is imported outside
    the engine and its tests (docs/engine.rst, "For the other layers")."""
    offenders = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in [*NOT_ENGINE, *OUTSIDE_THE_PACKAGE]
        for module in sorted(_modules_named(path))
        if module.startswith("scrapy_rerp.engine._")
    ]
    assert offenders == []


def test_no_module_imports_the_package_s_own_names() -> None:
    """The package's names (``scrapy_rerp.__version__``, ``scrapy_rerp.RobotsTxt``...) are its
    face, for its users: a module imports a name from the module that holds it, never from the
    package, whose ``__init__`` imports the layers (types included). ``from scrapy_rerp import
    demo`` imports a module, and is a module's import."""
    offenders = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                offenders += [
                    f"{name_of(path)}: import {alias.name}"
                    for alias in node.names
                    if alias.name == "scrapy_rerp"
                ]
            elif isinstance(node, ast.ImportFrom) and _absolute(path, node) == "scrapy_rerp":
                offenders += [
                    f"{name_of(path)}: from scrapy_rerp import {alias.name}"
                    for alias in node.names
                    if f"scrapy_rerp.{alias.name}" not in BY_NAME
                ]
    assert offenders == []


def _loggers_of(path: Path) -> list[str]:
    """What each ``getLogger(...)`` call of *path* names: the constant of ``core/loggers`` as
    ``loggers.X`` gives ``X``; anything else, the call as written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = function.attr if isinstance(function, ast.Attribute) else None
        if called != "getLogger" and not (
            isinstance(function, ast.Name) and function.id == "getLogger"
        ):
            continue
        [argument] = node.args or [ast.Constant(None)]
        if (
            isinstance(argument, ast.Attribute)
            and isinstance(argument.value, ast.Name)
            and argument.value.id == "loggers"
        ):
            found.append(argument.attr)
        else:
            found.append(ast.unparse(node))
    return found


def test_every_module_logs_as_what_it_speaks_for() -> None:
    """Each logger is a name of ``core/loggers`` (docs/logging.rst's table lists them all, and
    nothing else), each is used, and the middleware's is crawl/middleware.py's alone."""
    from scrapy_rerp.core import loggers

    users: dict[str, set[str]] = {}
    for path in MODULES:
        if path != PACKAGE / "core" / "loggers.py":
            for name in _loggers_of(path):
                users.setdefault(name, set()).add(name_of(path))
    assert sorted(users) == sorted(loggers.__all__)
    assert users["MIDDLEWARE"] == {"crawl/middleware"}
    names = {getattr(loggers, constant) for constant in loggers.__all__}
    assert all(name.startswith("scrapy_rerp.") for name in names)
    page = (PACKAGE.parent / "docs" / "logging.rst").read_text(encoding="utf-8")
    assert set(re.findall(r"^``(scrapy_rerp\.\w+)``  ", page, re.M)) == names


@pytest.mark.parametrize("name", sorted(RE_EXPORTS))
def test_a_top_level_re_export_only_re_exports(name: str) -> None:
    """A docstring, the names imported from the layer's module, and ``__all__`` naming them
    (and those its ``__getattr__`` names lazily, ``LAZY_RE_EXPORTS``)."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    body = list(tree.body)
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    assert "re-export" in body[0].value.value
    rest = [
        node
        for node in body[1:]
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    ]
    imports = [node for node in rest if isinstance(node, ast.ImportFrom)]
    assert [node.module for node in imports] == [RE_EXPORTS[name]]
    exported = [alias.name for alias in imports[0].names]
    assert all(alias.asname is None for alias in imports[0].names)
    lazy = sorted(set().union(*LAZY_RE_EXPORTS.get(name, {}).values()))
    others = [
        node
        for node in rest
        if not isinstance(node, ast.ImportFrom)
        and not (lazy and isinstance(node, ast.FunctionDef) and node.name == "__getattr__")
    ]
    assert len(others) == 1, "a re-export holds its docstring, its import and __all__ only"
    declared = others[0]
    assert isinstance(declared, ast.Assign)
    assert [t.id for t in declared.targets if isinstance(t, ast.Name)] == ["__all__"]
    assert sorted(ast.literal_eval(declared.value)) == sorted([*exported, *lazy])


def test_the_package_imports_no_re_export() -> None:
    """The package imports the layer's module, never the public path (types included)."""
    public = {f"scrapy_rerp.{name}" for name in RE_EXPORTS}
    offenders = [
        f"{name_of(path)} imports {module}"
        for path in MODULES
        for module, _ in imports_of(path, everything=True)
        if module in public
    ]
    assert offenders == []


def _getattr_of(tree: ast.Module) -> ast.FunctionDef | None:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"]
    return found[0] if found else None


def _all_of(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


@pytest.mark.parametrize("path", NOT_ENGINE, ids=name_of)
def test_a_module_getattr_imports_its_lazy_re_exports_only(path: Path) -> None:
    """What a ``__getattr__`` imports is in ``LAZY_RE_EXPORTS``, by name, and in ``__all__``;
    nothing else is imported there (``import_module`` of the module's own layer or a later one,
    as the package's names and the demo's, is no import statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    function = _getattr_of(tree)
    imported: dict[str, set[str]] = {}
    for node in ast.walk(function) if function is not None else ():
        assert not isinstance(node, ast.Import), f"{name_of(path)}: import in __getattr__"
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module is not None
            imported.setdefault(node.module, set()).update(a.name for a in node.names)
    expected = LAZY_RE_EXPORTS.get(name_of(path), {})
    assert imported == expected
    assert set().union(*expected.values()) <= set(_all_of(tree))


def test_the_package_imports_no_lazy_re_export() -> None:
    """A name re-exported lazily is imported from the module that holds it (types included):
    ``scrapy_rerp.fleet.store.SharedOriginCache``, never ``scrapy_rerp.cache``'s."""
    lazy = {
        (f"scrapy_rerp.{name}", exported)
        for name, sources in LAZY_RE_EXPORTS.items()
        for names in sources.values()
        for exported in names
    }
    offenders = [
        f"{name_of(path)} imports {module}.{alias.name}"
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for module in [_absolute(path, node)]
        for alias in node.names
        if (module, alias.name) in lazy
    ]
    assert offenders == []


@pytest.mark.parametrize("layer", ["core", "crawl"])
def test_a_layer_s_package_is_a_docstring(layer: str) -> None:
    """``core`` and ``crawl`` are internal: their ``__init__`` says what the layer is, and
    offers nothing."""
    tree = ast.parse((PACKAGE / layer / "__init__.py").read_text(encoding="utf-8"))
    assert len(tree.body) == 1
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
    assert "no public API" in tree.body[0].value.value


def test_no_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    for path in NOT_ENGINE:
        graph.setdefault(dotted(path), set())
        for module, _ in imports_of(path):
            if module_file(module) is not None and not module.startswith("scrapy_rerp.engine"):
                graph[dotted(path)].add(module)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"import circle: {error.args[1]}")


def test_the_design_draws_every_layer_s_modules() -> None:
    """docs/design.rst's layout names each module of the core, the Scrapy adapters and the
    demo, and each top-level module."""
    design = (PACKAGE.parent / "docs" / "design.rst").read_text(encoding="utf-8")
    modules = [
        path
        for path in MODULES
        if layer_of(path) != "engine"
        and path.relative_to(PACKAGE).parts[0] not in ("fleet", "cli")
        and path.name != "__init__.py"
    ]
    assert [name_of(p) for p in modules if f"``{p.stem}``" not in design] == []


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


def test_the_tests_mirror_the_package() -> None:
    """A test module in tests/core/, tests/crawl/ or tests/demo/ is named after a module of
    that folder (``test_slots.py``: ``crawl/slots.py``)."""
    tests = Path(__file__).parent
    stray = [
        str(path.relative_to(tests))
        for folder in ("core", "crawl", "demo")
        for path in sorted((tests / folder).glob("test_*.py"))
        if not (PACKAGE / folder / f"{path.stem.removeprefix('test_')}.py").is_file()
    ]
    assert stray == []


#: The top-level modules: the package's face. No module in a layer's folder imports one (types
#: included), nor a name of the package root, whose ``__init__`` imports the layers.
TOP_LEVEL = {f"scrapy_rerp.{name}" for name in ENTRY_POINTS | set(RE_EXPORTS)}


def test_no_arrow_back_up_to_the_package_root() -> None:
    offenders = [
        f"{name_of(path)} imports {module}"
        for path in MODULES
        if path.parent != PACKAGE
        for module, _ in imports_of(path, everything=True)
        if module in TOP_LEVEL or (module == "scrapy_rerp" and not _imports_modules_only(path))
    ]
    assert offenders == []


def _imports_modules_only(path: Path) -> bool:
    """Whether every ``from scrapy_rerp import x`` of *path* imports a module (``fleet``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "scrapy_rerp" for a in node.names):
            return False
        if isinstance(node, ast.ImportFrom) and _absolute(path, node) == "scrapy_rerp":
            if any(f"scrapy_rerp.{alias.name}" not in BY_NAME for alias in node.names):
                return False
    return True


# -- small, typed seams -----------------------------------------------------------------------

#: Past three parameters, a constructor's are keywords: a call names what it passes.
MAX_POSITIONAL = 3
#: Dataclasses of more than MAX_POSITIONAL fields that keep positional construction, each with
#: why (``kw_only=True`` for every other).
POSITIONAL_DATACLASSES: dict[str, str] = {}
#: ``# type: ignore`` comments in the package, at most: lowered as they go, never raised.
TYPE_IGNORE_CEILING = 17


def _classes() -> list[tuple[Path, ast.ClassDef]]:
    return [
        (path, node)
        for path in MODULES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]


def _dataclass_call(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name == "dataclass":
            return decorator
    return None


def test_no_constructor_takes_more_than_three_positional_parameters() -> None:
    offenders = [
        f"{name_of(path)}: {node.name}.__init__ takes {count} positionally"
        for path, node in _classes()
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name == "__init__"
        for count in [len(item.args.posonlyargs) + len(item.args.args) - 1]
        if count > MAX_POSITIONAL
    ]
    assert offenders == []


def test_a_dataclass_past_three_fields_is_keyword_only() -> None:
    offenders = []
    listed = set()
    for path, node in _classes():
        decorator = _dataclass_call(node)
        if decorator is None:
            continue
        fields = [
            item
            for item in node.body
            if isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and "ClassVar" not in ast.unparse(item.annotation)
        ]
        keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
        kw_only = any(
            k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in keywords
        )
        key = f"{name_of(path)}.{node.name}"
        if key in POSITIONAL_DATACLASSES:
            listed.add(key)
            assert not kw_only, f"{key} is keyword-only: take it off POSITIONAL_DATACLASSES"
        elif len(fields) > MAX_POSITIONAL and not kw_only:
            offenders.append(f"{key}: {len(fields)} fields")
    assert offenders == []
    assert listed == set(POSITIONAL_DATACLASSES)


def test_type_ignores_stay_under_their_ceiling() -> None:
    count = sum(path.read_text(encoding="utf-8").count("# type: ignore") for path in MODULES)
    assert count <= TYPE_IGNORE_CEILING
