"""The docs agree with the code and with each other.

* Install lines (``pip install ...``) in the docs, the README, the examples and the package's
  messages take a form the README's "Install" gives, with extras ``pyproject.toml`` declares.
* The stats: every name the code can emit is in ``docs/stats.rst`` and every name listed there
  is one the code can emit (both collected, the code's from its source); every stat a page
  names exists; ``docs/stats.rst`` links a page of each family of stats that pages describe,
  and names the setting a family needs when it is off by default (``FAMILY_SETTINGS``).
* Features say how to turn them off: every switch that is on by default is shown off on a page
  of the docs, and the page directives' own recipe really turns them off.
* ``RERP_SITEMAP_DISCOVERY`` has an example that works: the spider of docs/settings.rst, run
  against local sites, follows the sitemaps of a site it was not given.
* The memory figures of the README and of docs/benchmarks.rst are those
  ``benchmarks/CRAWL_RESULTS.md`` wrote.
"""

from __future__ import annotations

import ast
import re
import runpy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from tests.support.servers import Reply, crawl, urlset

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PACKAGE = ROOT / "scrapy_rerp"
README = ROOT / "README.rst"
CRAWL_RESULTS = ROOT / "benchmarks" / "CRAWL_RESULTS.md"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def doc_pages() -> list[Path]:
    return sorted(DOCS.glob("*.rst"))


# -- install lines ----------------------------------------------------------------------------

#: ``pip install`` and what follows it, up to the end of the command: options, quoted or bare
#: arguments; a backtick, ``&&``, ``#``, a parenthesis or the end of the line ends it.
_INSTALL = re.compile(r"""pip install((?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|[^\s`"'&#();,]+))+)""")
_EXTRAS = re.compile(r"\[([^\]]*)\]")


@dataclass(frozen=True)
class InstallLine:
    where: str  # file:line
    arguments: tuple[str, ...]  # as a shell splits them, quotes removed

    @property
    def text(self) -> str:
        return "pip install " + " ".join(self.arguments)


def _arguments(tail: str) -> tuple[str, ...]:
    found = re.findall(r""""([^"]*)"|'([^']*)'|(\S+)""", tail)
    return tuple(next(part for part in groups if part) for groups in found)


def install_lines(path: Path) -> Iterator[InstallLine]:
    for number, line in enumerate(read(path).splitlines(), 1):
        for match in _INSTALL.finditer(line):
            yield InstallLine(f"{path.relative_to(ROOT)}:{number}", _arguments(match.group(1)))


def installs_this_package(line: InstallLine) -> bool:
    """``scrapy-rerp`` by name, or a path to a checkout (``.``, ``./scrapy-rerp``)."""
    requirements = [a for a in line.arguments if not a.startswith("-")]
    return any(
        r.replace("_", "-").startswith("scrapy-rerp") or r.startswith(".") for r in requirements
    )


def form(line: InstallLine) -> tuple[tuple[str, ...], list[str]]:
    """The line with its extras replaced by ``[EXTRA]``, and the extras."""
    extras: list[str] = []
    shape = []
    for argument in line.arguments:
        for group in _EXTRAS.findall(argument):
            extras += [e.strip() for e in group.split(",")]
        shape.append(_EXTRAS.sub("[EXTRA]", argument))
    return tuple(shape), extras


def readme_forms() -> set[tuple[str, ...]]:
    """The forms the README gives for this package, each also without its extras ("leave out
    ``[scrapy]``")."""
    forms = set()
    for line in install_lines(README):
        if installs_this_package(line):
            shape, _ = form(line)
            forms.add(shape)
            forms.add(tuple(a.replace("[EXTRA]", "") for a in shape))
    return forms


def declared_extras() -> set[str]:
    """The keys of ``[project.optional-dependencies]`` in pyproject.toml (read without tomllib,
    which Python 3.10 lacks)."""
    text = read(ROOT / "pyproject.toml")
    table = text.split("\n[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*=", table, re.M))


def install_sources() -> list[Path]:
    examples = sorted((ROOT / "examples").rglob("*"))
    return [README, *doc_pages(), *[p for p in examples if p.is_file()], *PACKAGE.rglob("*.py")]


def test_the_readme_gives_forms_with_declared_extras() -> None:
    forms = readme_forms()
    # From a checkout and from git at least, as the Install section says.
    assert any(any(a.startswith("./") for a in shape) for shape in forms), forms
    assert any(any("@ git+" in a for a in shape) for shape in forms), forms
    for line in install_lines(README):
        assert set(form(line)[1]) <= declared_extras(), line


def test_every_install_line_takes_a_form_the_readme_gives() -> None:
    forms, extras = readme_forms(), declared_extras()
    lines = [line for p in install_sources() for line in install_lines(p)]
    ours = [line for line in lines if installs_this_package(line)]
    # The scan finds what is there: the README's own lines, and the package's messages.
    assert any(line.where.startswith("README.rst") for line in ours)
    assert any(line.where.startswith("scrapy_rerp/") for line in ours)
    wrong = [
        f"{line.where}: {line.text}"
        for line in ours
        if form(line)[0] not in forms or not set(form(line)[1]) <= extras
    ]
    assert wrong == [], "install lines unlike the README's (README.rst, Install)"


# -- stats ------------------------------------------------------------------------------------

STAT_CALLS = {"inc_value", "set_value", "max_value", "min_value"}
WILD = "<*>"
_MARK = "\0param\0"
_STAT_NAME = re.compile(r"robotstxt/[\w.<>*/-]*[\w>*]")


class _Module:
    """One module of the package: its tree, and the string constants it can name (its own
    module-level ones, and those it imports from the package)."""

    def __init__(self, name: str, tree: ast.Module, package: dict[str, ast.Module]) -> None:
        self.name = name
        self.tree = tree
        self.package = package

    def constant(self, name: str, module: str | None = None, hops: int = 3) -> str | None:
        tree = self.package.get(module or self.name)
        if tree is None or hops == 0:
            return None
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
                node.value, ast.Constant
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    value = node.value.value
                    return value if isinstance(value, str) else None
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = _absolute(module or self.name, node)
                        return self.constant(alias.name, source, hops - 1)
        return None

    def evaluate(self, node: ast.AST, params: frozenset[str] = frozenset()) -> str | None:
        """The string ``node`` builds, with ``<*>`` for what only the running code knows and
        a mark for the names in ``params``; None if nothing of it is known."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.replace("{}", WILD)  # a family's name, to str.format
        if isinstance(node, ast.Name):
            return _MARK if node.id in params else self.constant(node.id)
        if isinstance(node, ast.FormattedValue):
            return self.evaluate(node.value, params) or WILD
        if isinstance(node, ast.JoinedStr):
            return "".join(self.evaluate(part, params) or WILD for part in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.evaluate(node.left, params), self.evaluate(node.right, params)
            if left is None and right is None:
                return None
            return (left or WILD) + (right or WILD)
        return None


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join(package + ([node.module] if node.module else []))


def _is_stat(text: str | None) -> bool:
    return text is not None and _STAT_NAME.fullmatch(text) is not None


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _argument(
    call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str
) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if param not in names:
        return None
    index = names.index(param)
    if names[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        index -= 1
    return call.args[index] if 0 <= index < len(call.args) else None


def _stats_of(module: _Module) -> set[str]:
    """The stat names a module can emit: its string literals, f-strings and sums of strings
    that start with ``robotstxt/``, and what its helpers build from a prefix and the names
    their callers pass (``self._count("header_seen")`` with ``f"robotstxt/page/{key}"``)."""
    found: set[str] = set()
    built_by_helpers: set[int] = set()
    functions = [
        node
        for node in ast.walk(module.tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for function in functions:
        params = frozenset(
            a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        )
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and _called_name(call) in STAT_CALLS and call.args):
                continue
            name = call.args[0]
            pattern = module.evaluate(name, params)
            if pattern is None or _MARK not in pattern:
                continue  # a name known here: collected below
            built_by_helpers.add(id(name))
            if not pattern.startswith("robotstxt/"):
                continue  # the whole name comes from the callers, where it is collected
            marked = [
                p for p in sorted(params) if _MARK in (module.evaluate(name, frozenset({p})) or "")
            ]
            calls = [
                c
                for c in ast.walk(module.tree)
                if isinstance(c, ast.Call) and _called_name(c) == function.name
            ]
            values = []
            for c in calls:
                argument = _argument(c, function, marked[0]) if len(marked) == 1 else None
                values.append(module.evaluate(argument) if argument is not None else None)
            if function.name.startswith("_") and calls and None not in values:
                found |= {pattern.replace(_MARK, v) for v in values if v is not None}
            else:  # public, or passed what only the running code knows
                found.add(pattern.replace(_MARK, WILD))
    inside: set[int] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.JoinedStr, ast.BinOp)):
            inside |= {id(child) for child in ast.walk(node) if child is not node}
    for node in ast.walk(module.tree):
        if id(node) in inside or id(node) in built_by_helpers:
            continue
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            text = module.evaluate(node)
            if text is not None and _is_stat(text):
                found.add(text)
    return {name for name in found if _is_stat(name)}


def code_stats() -> set[str]:
    """Every stat name the package's code can emit (``<*>`` where it inserts a value)."""
    package = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        package[name] = ast.parse(read(path))
    stats: set[str] = set()
    for name, tree in package.items():
        stats |= _stats_of(_Module(name, tree, package))
    # A document kind's stats are robots.txt's under its prefix: DocumentStats.under("...").
    from dataclasses import astuple

    from scrapy_rerp.core.documents import DocumentStats

    for path in sorted(PACKAGE.rglob("*.py")):
        for prefix in re.findall(r'DocumentStats\.under\("([^"]+)"\)', read(path)):
            stats.discard(prefix)  # a prefix, no stat
            names = astuple(DocumentStats.under(prefix))
            stats |= {n.replace("{}", WILD) for n in names if n is not None}
    return stats


def _normal(name: str) -> str:
    return re.sub(r"<[^>]*>", WILD, name)


def named_stats(text: str) -> set[str]:
    """The ``robotstxt/...`` literals of a page (``<reason>`` and the like as ``<*>``), as
    written: one broken across lines keeps its line break, and is no stat."""
    return {_normal(name) for name in re.findall(r"``(robotstxt/[^`]*)``", text)}


def covered(name: str, by: str) -> bool:
    """Every segment of ``name`` equal to ``by``'s, or ``by``'s a ``<*>``."""
    mine, theirs = name.split("/"), by.split("/")
    return len(mine) == len(theirs) and all(
        b == WILD or a == b for a, b in zip(mine, theirs, strict=True)
    )


def emitted_by(name: str, emitted: set[str]) -> bool:
    """``name`` (or, for a family such as ``robotstxt/page/*``, one of its stats) can be
    emitted."""
    if name.endswith("/*"):
        return any(s.startswith(name[:-1]) for s in emitted)
    return any(covered(name, s) for s in emitted)


def test_the_stats_are_collected_from_the_code() -> None:
    stats = code_stats()
    # A literal, a constant of a part split out, an f-string with a placeholder, and names
    # built by a helper from its prefix.
    from scrapy_rerp.core import cool_downs, floors

    assert {"robotstxt/forbidden", floors.STAT_RAISED, cool_downs.STAT_WAITED} <= stats
    assert "robotstxt/dropped/<*>" in stats
    assert {"robotstxt/page/header_seen", "robotstxt/page/items_dropped/<*>"} <= stats
    assert "robotstxt/page/<*>" not in stats


def test_every_stat_the_code_emits_is_in_the_stats_page() -> None:
    # Each by its name (or pattern): a family named in passing (``robotstxt/redis/*``) is no
    # entry of the list.
    documented = {n for n in named_stats(read(DOCS / "stats.rst")) if not n.endswith("/*")}
    # tdmrep.json's and the RSL licences' downloads are counted as robots.txt's, under
    # robotstxt/tdmrep/ and robotstxt/rsl/ (the page says so of them all): one of those is
    # documented with its robots.txt counterpart.
    missing = sorted(
        s
        for s in code_stats()
        if not any(covered(s, d) or covered(_as_robots_txt(s), d) for d in documented)
    )
    assert missing == [], "emitted, not in docs/stats.rst"


def _as_robots_txt(name: str) -> str:
    return re.sub(r"^robotstxt/(tdmrep|rsl)/", "robotstxt/", name)


def test_every_stat_in_the_stats_page_is_one_the_code_emits() -> None:
    emitted = code_stats()
    unknown = sorted(n for n in named_stats(read(DOCS / "stats.rst")) if not emitted_by(n, emitted))
    assert unknown == [], "in docs/stats.rst, never emitted"


def test_every_stat_a_page_names_is_emitted() -> None:
    emitted = code_stats()
    unknown = [
        f"{path.name}: {name!r}"
        for path in [README, ROOT / "CHANGES.rst", *doc_pages()]
        for name in sorted(named_stats(read(path)))
        if not emitted_by(name, emitted)
    ]
    assert unknown == []


#: The families of stats emitted only under a setting that is off by default: the first row of
#: each family in docs/stats.rst names it.
FAMILY_SETTINGS = {
    "robotstxt/sitemaps/": "RERP_SITEMAP_DISCOVERY",
    "robotstxt/usage/": "RERP_USAGE",
    "robotstxt/store/": "RERP_STORE",
    "robotstxt/evidence/": "RERP_EVIDENCE",
}


def stats_rows(text: str) -> list[tuple[str, str]]:
    """The rows of docs/stats.rst's table: each stat's name and what its row says."""
    rows: list[tuple[str, str]] = []
    for line in text.splitlines():
        found = re.match(r"``(robotstxt/[^`]*)``\s+(.*)", line)
        if found:
            rows.append((found.group(1), found.group(2)))
        elif rows and line.startswith(" " * 20) and line.strip():
            rows[-1] = (rows[-1][0], f"{rows[-1][1]} {line.strip()}")
    return rows


@pytest.mark.parametrize(("family", "setting"), sorted(FAMILY_SETTINGS.items()))
def test_a_family_emitted_under_a_setting_names_it(family: str, setting: str) -> None:
    rows = [row for row in stats_rows(read(DOCS / "stats.rst")) if row[0].startswith(family)]
    assert rows, f"no {family}* stat in docs/stats.rst"
    assert f"``{setting}``" in rows[0][1], rows[0]


def test_the_settings_of_the_families_are_real() -> None:
    settings = read(DOCS / "settings.rst")
    assert [s for s in FAMILY_SETTINGS.values() if f"``{s}``" not in settings] == []


def test_the_stats_page_links_a_page_of_each_family() -> None:
    """A family (``robotstxt/redis/...``) that other pages describe is linked from the list."""
    stats_page = read(DOCS / "stats.rst")
    linked = set(re.findall(r":doc:`([^`]+)`", stats_page))
    families = {name.split("/")[1] for name in named_stats(stats_page) if name.count("/") >= 2}
    unlinked = []
    for family in sorted(families):
        pages = {
            p.stem
            for p in doc_pages()
            if p.stem != "stats"
            and any(n.startswith(f"robotstxt/{family}/") for n in named_stats(read(p)))
        }
        if pages and not pages & linked:
            unlinked.append(f"robotstxt/{family}/: {sorted(pages)}")
    assert unlinked == []


# -- turning features off ---------------------------------------------------------------------


def switches_on_by_default() -> list[str]:
    """The boolean ``RERP_*`` settings whose default is True, as the settings reader asks."""
    from scrapy_rerp.core import settings

    asked: list[str] = []

    class Recording(settings._Reader):
        def boolean(self, name: str, default: bool) -> bool:
            if default and name.startswith("RERP_"):
                asked.append(name)
            return super().boolean(name, default)

    settings.RerpSettings._read(Recording({}), require_obey=False)
    return sorted(asked)


def test_every_switch_on_by_default_is_shown_off_on_a_page() -> None:
    switches = switches_on_by_default()
    assert switches, "no boolean setting asked for"
    pages = [read(p) for p in doc_pages() if p.stem not in ("settings", "changes")]
    missing = [s for s in switches if not any(f"``{s} = False``" in text for text in pages)]
    assert missing == [], "on by default, and no feature page says how to turn it off"


def python_blocks(text: str) -> list[str]:
    """The bodies of the ``.. code-block:: python`` directives of an RST text, dedented."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?: {4}.*)?\n)+)", text, re.M):
        lines = match.group(1).rstrip("\n").splitlines()
        blocks.append("\n".join(line[4:] for line in lines) + "\n")
    return blocks


def section(text: str, title: re.Pattern[str]) -> str:
    """The section of an RST page whose title matches, to the next title."""
    lines = text.splitlines()

    def is_title(index: int) -> bool:
        under = lines[index + 1] if index + 1 < len(lines) else ""
        return bool(lines[index].strip()) and len(set(under)) == 1 and under[0] in "=-~^\"'"

    for index, line in enumerate(lines):
        if title.fullmatch(line) and is_title(index):
            after = range(index + 2, len(lines))
            end = next((i for i in after if is_title(i)), len(lines))
            return "\n".join(lines[index:end]) + "\n"
    raise AssertionError(f"no section titled {title.pattern!r}")


def settings_of(block: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(block, "<docs>", "exec"), namespace)
    return {k: v for k, v in namespace.items() if k.isupper()}


def middlewares(settings: dict[str, Any]) -> tuple[list[type], list[type]]:
    """The spider middlewares a crawl with ``settings`` builds, and its downloader middlewares
    as the settings list them (classes)."""
    from scrapy.core.spidermw import SpiderMiddlewareManager
    from scrapy.utils.misc import load_object
    from scrapy.utils.test import get_crawler

    from scrapy_rerp.crawl.compat import component_priorities

    crawler = get_crawler(settings_dict=settings)
    spider = [type(mw) for mw in SpiderMiddlewareManager.from_crawler(crawler).middlewares]
    listed = component_priorities(crawler.settings, "DOWNLOADER_MIDDLEWARES")
    downloader = [load_object(key) for key, priority in listed.items() if priority is not None]
    if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
        downloader = []  # the robots.txt middleware is not configured
    return spider, downloader


@pytest.mark.scrapy
def test_page_directives_turn_off_as_their_page_says() -> None:
    from scrapy_rerp import PageDirectivesMiddleware, RobotsTxtMiddleware

    addon = {"ADDONS": {"scrapy_rerp.Addon": 100}}
    assert PageDirectivesMiddleware in middlewares(addon)[0]
    off = section(read(DOCS / "page-directives.rst"), re.compile(r"Turning (it|them) off"))
    blocks = python_blocks(off)
    assert blocks, "no settings in the section"
    for block in blocks:
        spider, downloader = middlewares({**addon, **settings_of(block)})
        assert PageDirectivesMiddleware not in spider, block
        assert RobotsTxtMiddleware in downloader, block  # robots.txt still obeyed


# -- the example of RERP_SITEMAP_DISCOVERY ----------------------------------------------------


def discovery_example(folder: Path) -> tuple[dict[str, Any], type]:
    """The settings block and the SitemapSpider of docs/settings.rst, its code in a file of
    ``folder`` (Scrapy reads a callback's source)."""
    from scrapy.spiders import SitemapSpider

    blocks = python_blocks(read(DOCS / "settings.rst"))
    settings = [settings_of(b) for b in blocks if "RERP_SITEMAP_DISCOVERY" in b]
    spiders = []
    for index, block in enumerate(blocks):
        path = folder / f"settings_block_{index}.py"
        path.write_text(block, encoding="utf-8")
        spiders += [
            v
            for v in runpy.run_path(str(path)).values()
            if isinstance(v, type) and issubclass(v, SitemapSpider) and v is not SitemapSpider
        ]
    assert settings and spiders, "no SitemapSpider example of RERP_SITEMAP_DISCOVERY"
    assert settings[0].get("RERP_SITEMAP_DISCOVERY") is True
    spider = spiders[0]
    assert spider.sitemap_urls, "the example names robots.txt URLs in sitemap_urls"
    return settings[0], spider


@pytest.mark.scrapy
def test_sitemap_discovery_has_an_example(tmp_path: Path) -> None:
    settings, spider = discovery_example(tmp_path)
    assert all(url.endswith("/robots.txt") for url in spider.sitemap_urls)
    assert "ADDONS" in settings


@pytest.mark.crawl
@pytest.mark.parametrize("discovery", [True, False])
@pytest_twisted.ensureDeferred
async def test_the_sitemap_discovery_example_follows_a_found_site_s_sitemaps(
    make_server: Any, discovery: bool, tmp_path: Path
) -> None:
    settings, spider = discovery_example(tmp_path)
    shop, seller = make_server(), make_server()
    shop.robots(f"User-agent: *\nDisallow: /private\nSitemap: {shop.url('/sitemap.xml')}\n")
    shop.route("/sitemap.xml", urlset([shop.url("/products/1")]))
    html = "text/html; charset=utf-8"
    page = '<html><body><h1>{0}</h1><a class="seller" href="{1}">{1}</a></body></html>'
    shop.route("/products/1", Reply(body=page.format("one", seller.url("/")), content_type=html))
    seller.robots("User-agent: *\nDisallow:\nSitemap: /sitemap.xml\n")
    seller.route("/", Reply(body="<html><body>seller</body></html>", content_type=html))
    seller.route("/sitemap.xml", urlset([seller.url("/products/9")]))
    seller.route(
        "/products/9", Reply(body="<html><body><h1>nine</h1></body></html>", content_type=html)
    )
    crawler = await crawl(
        spider,
        {**settings, "RERP_SITEMAP_DISCOVERY": discovery},
        sitemap_urls=[shop.url("/robots.txt")],
        allowed_domains=["127.0.0.1"],
    )
    assert shop.count("/robots.txt") == 1
    assert shop.count("/products/1") == 1
    assert seller.count("/robots.txt") == 1 and seller.count("/") == 1
    if discovery:
        assert seller.count("/sitemap.xml") == 1 and seller.count("/products/9") == 1
    else:
        assert sorted(seller.paths()) == ["/", "/robots.txt"]
    assert crawler.stats is not None
    assert crawler.stats.get_value("robotstxt/served_to_spider") == 1
    # Items: product 1 and the seller; product 9, parsed by the same callback, with discovery.
    assert crawler.stats.get_value("item_scraped_count") == (3 if discovery else 2)


# -- the README's figures ---------------------------------------------------------------------

#: The README's columns and the ways of bench_crawl.py's results.
WAYS = {"Scrapy": "Scrapy's RobotsTxtMiddleware + Protego", "scrapy_rerp": "scrapy_rerp (Addon)"}


def memory_per_origin() -> dict[str, tuple[int, int]]:
    """Each way's bytes per cached origin, retained and deep size, from the newest "Memory per
    cached origin" table of CRAWL_RESULTS.md that measured both (newest runs come first)."""
    for table in re.split(r"\nMemory per cached origin", read(CRAWL_RESULTS))[1:]:
        rows = re.findall(r"^\| ([^|]+?) \| ([\d,]+) \| ([\d,]+) \|$", table, re.M)
        if rows:
            return {
                way: (int(retained.replace(",", "")), int(deep.replace(",", "")))
                for way, retained, deep in rows
            }
    raise AssertionError("no retained bytes in CRAWL_RESULTS.md")


def agrees(quoted: str, measured: int) -> bool:
    """``quoted`` kilobytes are ``measured`` bytes, rounded as written ("9.5", "68")."""
    return float(quoted) == round(measured / 1000, len(quoted.partition(".")[2]))


def test_the_readme_s_memory_per_site_is_the_benchmark_s() -> None:
    readme = read(README)
    header = re.search(r"^ +(Scrapy)[^\n]*?  +(scrapy_rerp)$", readme, re.M)
    assert header is not None
    row = re.search(r"^memory per cached site .*$", readme, re.M)
    assert row is not None
    line = row.group(0)
    measured = memory_per_origin()
    for column in (1, 2):
        quoted = re.match(r"([\d.]+) KB", line[header.start(column) - header.start() :])
        assert quoted is not None, f"no figure in the {header.group(column)} column: {line!r}"
        retained = measured[WAYS[header.group(column)]][0]
        assert agrees(quoted.group(1), retained), (quoted.group(0), retained)


def test_the_benchmarks_page_quotes_the_same_memory() -> None:
    text = " ".join(read(DOCS / "benchmarks.rst").split())
    retained = re.search(r"([\d.]+) KB with scrapy_rerp against ([\d.]+) KB with Protego", text)
    deep = re.search(r"([\d.]+) KB against ([\d.]+) KB as the deep size", text)
    assert retained is not None and deep is not None
    measured = memory_per_origin()
    for match, column in ((retained, 0), (deep, 1)):
        assert agrees(match.group(1), measured[WAYS["scrapy_rerp"]][column]), match.group(0)
        assert agrees(match.group(2), measured[WAYS["Scrapy"]][column]), match.group(0)


def broad_crawl() -> dict[str, tuple[int, float, float]]:
    """Each way's pages/s, CPU s per 1,000 requests and CPU per request against Scrapy's, from
    the newest broad crawl section of CRAWL_RESULTS.md (its first table)."""
    sections = re.split(r"^# ", read(CRAWL_RESULTS), flags=re.M)
    section = next(s for s in sections if s.startswith("A broad crawl"))
    rows = re.findall(
        r"^\| ([^|]+?) \| ([\d,]+) \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| ([\d.]+) "
        r"\| [^|]+ \| ([\d.]+)x \|",
        section,
        re.M,
    )
    assert rows, "no pages/s table in the broad crawl section"
    return {
        way: (int(pages.replace(",", "")), float(cpu), float(vs)) for way, pages, cpu, vs in rows
    }


def test_the_readme_s_broad_crawl_is_the_benchmark_s() -> None:
    # Two lines of the table: pages/s and CPU s per 1,000 pages for each, and "about the same"
    # only while the CPU ratio is within the noise the section gives (0.9x to 1.1x).
    row = re.search(
        r"^broad crawl, ([\d,]+) sites x (\d) pages +(\d+) pages/s, ([\d.]+) CPU s per +"
        r"about the same: (\d+) pages/s,\n +1,000 pages +([\d.]+) CPU s, within the noise$",
        read(README),
        re.M,
    )
    assert row is not None
    measured = broad_crawl()
    scrapy, rerp = measured[WAYS["Scrapy"]], measured[WAYS["scrapy_rerp"]]
    assert int(row.group(3)) == scrapy[0] and int(row.group(5)) == rerp[0]
    assert float(row.group(4)) == round(scrapy[1], 1)
    assert float(row.group(6)) == round(rerp[1], 1)
    assert 0.9 <= rerp[2] <= 1.1
    assert f"{row.group(1)} origins, {row.group(2)} pages each" in read(CRAWL_RESULTS)
    assert f"{row.group(1)} origins, {row.group(2)} pages each" in read(CRAWL_RESULTS)
