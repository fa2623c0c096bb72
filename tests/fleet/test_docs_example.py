"""docs/fleet.rst's example works as written: the ``redis`` extra installs what its code imports,
and its project (its settings, its ``RedisSpider``, its ``redis-cli lpush`` line, run by the real
redis-cli against a real redis-server) crawls the pushed URLs, obeying robots.txt, without
scrapy-redis's deprecation WARNING for plain-string start URLs."""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from tests.support.redis import RedisServer
from tests.support.servers import Server

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fleet.rst"


def code_blocks(language: str) -> list[str]:
    """The page's ``.. code-block:: <language>`` blocks, dedented."""
    text = PAGE.read_text(encoding="utf-8")
    pattern = rf"^\.\. code-block:: {language}\n\n((?:(?:    .*)?\n)+)"
    return [
        "\n".join(line[4:] for line in block.splitlines()).strip() + "\n"
        for block in re.findall(pattern, text, re.MULTILINE)
    ]


def block(language: str, containing: str) -> str:
    (found,) = [b for b in code_blocks(language) if containing in b]
    return found


def redis_extra() -> list[str]:
    """The requirements of pyproject.toml's ``redis`` extra (read without tomllib, which Python
    3.10 lacks)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text.split("\n[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    match = re.search(r"^redis = \[(.*)\]$", table, re.MULTILINE)
    assert match is not None, "pyproject.toml has no redis extra"
    return re.findall(r'"([^"]+)"', match.group(1))


def imported(code: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
    return modules


def test_the_redis_extra_installs_what_the_fleet_page_imports_and_names() -> None:
    """``pip install -e ".[redis]"`` then the page's RedisSpider once failed with
    ``ModuleNotFoundError: No module named 'scrapy_redis'``."""
    names = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in redis_extra()}
    assert {"redis", "scrapy", "scrapy-redis"} <= names, names
    code = block("python", "RedisSpider")
    settings = block("python", "RERP_CACHE")
    distributions = packages_distributions()
    for module in imported(code) | {"scrapy_redis"}:  # the settings name scrapy_redis's classes
        assert module in distributions, module
        assert {d.lower() for d in distributions[module]} <= names | {"scrapy-rerp"}, module
    assert "scrapy_redis.scheduler.Scheduler" in settings
    assert any(r.startswith("scrapy-redis>=0.9") for r in redis_extra())


def test_the_fleet_page_s_project_crawls_the_urls_its_redis_cli_line_pushes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    redis_cli = shutil.which("redis-cli")
    assert redis_cli is not None, "redis-cli is not installed (Debian's redis-tools)"
    with Server(host="127.0.0.61") as site:
        site.robots("User-agent: *\nDisallow: /a\n")
        project = tmp_path / "products"
        (project / "products" / "spiders").mkdir(parents=True)
        (project / "scrapy.cfg").write_text("[settings]\ndefault = products.settings\n")
        (project / "products" / "__init__.py").write_text("")
        (project / "products" / "spiders" / "__init__.py").write_text("")
        (project / "products" / "spiders" / "products.py").write_text(
            block("python", "RedisSpider")
        )
        (project / "products" / "settings.py").write_text(
            block("python", "RERP_CACHE")
            + f"\nREDIS_URL = {redis_server.url!r}\n"
            + 'SPIDER_MODULES = ["products.spiders"]\n'
            + "TELNETCONSOLE_ENABLED = False\n"
            + "MAX_IDLE_TIME_BEFORE_CLOSE = 2  # scrapy-redis: close once idle that long\n"
        )
        # The page's lines, as a shell splits them, on this redis-server and this site.
        push, crawl = [
            shlex.split(line) for line in block("console", "redis-cli lpush").splitlines()
        ]
        assert push[:2] == ["redis-cli", "lpush"] and crawl[:3] == ["scrapy", "crawl", "products"]
        entries = [json.loads(entry) for entry in push[3:]]
        assert [set(e) for e in entries] == [{"url"}, {"url"}], entries
        ours = {"https://example.com/": site.url("/"), "https://example.org/a": site.url("/a")}
        pushed = [json.dumps({"url": ours[e["url"]]}) for e in entries]
        done = subprocess.run(
            [redis_cli, "-p", str(redis_server.port), *push[1:3], *pushed],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0 and done.stdout.strip() == "2", done
        done = subprocess.run(
            [sys.executable, "-m", *crawl[:3], "-o", "items.jsonl", "-s", "LOG_LEVEL=INFO"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=project,
        )
        log = done.stderr
        assert done.returncode == 0, log
        items = [json.loads(line) for line in (project / "items.jsonl").read_text().splitlines()]
        assert items == [{"url": site.url("/")}]
        assert sorted(site.paths()) == ["/", "/robots.txt"]
        assert "'robotstxt/forbidden': 1" in log
        assert "String request is deprecated" not in log
        # No WARNING but scrapy-redis's own Python warnings about newer Scrapy APIs.
        warnings = [
            line
            for line in log.splitlines()
            if "] WARNING: " in line and not ("[py.warnings]" in line and "/scrapy_redis/" in line)
        ]
        assert warnings == [], warnings
