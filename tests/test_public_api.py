"""The package's public names, the dotted paths a project names, and what importing it loads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

import scrapy_rerp

PUBLIC = [
    "GYM2008",
    "MAX_FILESIZE",
    "MK1996",
    "PAGE_RULES",
    "PAGE_RULE_USAGE",
    "RFC9309",
    "SEVEN_DAYS",
    "Addon",
    "AnswersMiddleware",
    "Decision",
    "EvidenceItemsMiddleware",
    "PageDirectives",
    "PageDirectivesMiddleware",
    "PageRule",
    "PageStatement",
    "PageUsageDecision",
    "PageWarning",
    "ParseWarning",
    "RequestRate",
    "RerpRobotParser",
    "RerpSettingsError",
    "RobotExclusionRulesParser",
    "RobotFileParserLookalike",
    "RobotsTxt",
    "RobotsTxtMiddleware",
    "RslContent",
    "RslDecision",
    "RslFile",
    "RslLicense",
    "RslProblem",
    "SigningMiddleware",
    "TdmRepDecision",
    "TdmRepEntry",
    "TdmRepFile",
    "TdmRepStatement",
    "TdmRepWarning",
    "TdmReservation",
    "UsageDecision",
    "VisitTime",
    "__version__",
    "license_decision",
    "license_link_tags",
    "license_links",
    "page_directives",
    "parse",
    "parse_rsl",
    "parse_tdmrep",
    "robots_meta_tags",
    "tdm_reservation",
]

REPO = Path(__file__).resolve().parents[1]


#: ``scrapy_rerp.signals``: the layer's signals (docs/signals.rst), as Scrapy's are
#: ``scrapy.signals``.
SIGNALS = [
    "document_received",
    "page_read",
    "request_admitted",
    "request_answered",
    "request_failed",
    "request_refused",
]


def test_the_signals_are_pinned_and_each_its_own_object() -> None:
    from scrapy_rerp import signals

    assert signals.__all__ == SIGNALS
    assert len({id(getattr(signals, name)) for name in SIGNALS}) == len(SIGNALS)
    page = (REPO / "docs" / "signals.rst").read_text(encoding="utf-8")
    assert sorted(re.findall(r"^``(\w+)``$", page, re.M)) == SIGNALS


def test_the_signals_import_neither_scrapy_nor_twisted() -> None:
    code = CHECK_MODULES + "from scrapy_rerp import signals\nprint(json.dumps(loaded()))\n"
    assert run_fresh(code) == {"scrapy": False, "twisted": False}


def test_all_is_pinned() -> None:
    assert scrapy_rerp.__all__ == PUBLIC
    assert sorted(scrapy_rerp.__all__) == sorted(set(PUBLIC))


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(scrapy_rerp, name) is not None
    assert name in dir(scrapy_rerp)


def test_constants() -> None:
    assert (scrapy_rerp.MK1996, scrapy_rerp.GYM2008) == (1, 2)
    assert scrapy_rerp.RFC9309 not in (scrapy_rerp.MK1996, scrapy_rerp.GYM2008)
    assert scrapy_rerp.SEVEN_DAYS == 604800
    assert scrapy_rerp.MAX_FILESIZE == 100 * 1024
    assert isinstance(scrapy_rerp.__version__, str) and scrapy_rerp.__version__


def test_engine_names_are_the_engines() -> None:
    from scrapy_rerp import engine

    for name in (
        "parse",
        "RobotsTxt",
        "Decision",
        "ParseWarning",
        "RequestRate",
        "UsageDecision",
        "VisitTime",
        "PAGE_RULES",
        "PAGE_RULE_USAGE",
        "PageDirectives",
        "PageRule",
        "PageStatement",
        "PageUsageDecision",
        "PageWarning",
        "page_directives",
        "robots_meta_tags",
        "TdmRepDecision",
        "TdmRepEntry",
        "TdmRepFile",
        "TdmRepStatement",
        "TdmRepWarning",
        "TdmReservation",
        "parse_tdmrep",
        "tdm_reservation",
        "RslFile",
        "parse_rsl",
        "license_decision",
        "license_links",
        "license_link_tags",
    ):
        assert getattr(scrapy_rerp, name) is getattr(engine, name)
    for name in ("RobotExclusionRulesParser", "RobotFileParserLookalike"):
        assert getattr(scrapy_rerp, name) is getattr(engine, name)


ENGINE_PUBLIC = [
    "GYM2008",
    "MAX_FILESIZE",
    "MAX_HTML_BYTES",
    "MAX_LICENSE_LINKS",
    "MAX_RSL_BYTES",
    "MAX_RSL_DEPTH",
    "MAX_RSL_ELEMENTS",
    "MAX_RSL_TEXT_CHARS",
    "MAX_TDMREP_BYTES",
    "MK1996",
    "PAGE_RULES",
    "PAGE_RULE_USAGE",
    "RFC9309",
    "RSL_HELD_PAYMENTS",
    "RSL_MEDIA_TYPE",
    "RSL_NAMESPACE",
    "RSL_PAYMENT_TYPES",
    "RSL_USAGES",
    "RSL_WARNING_CODES",
    "SEVEN_DAYS",
    "TDMREP_META_NAMES",
    "TDMREP_PATH",
    "TDMREP_PURPOSES",
    "TDMREP_TECHNIQUES",
    "TDMREP_WARNING_CODES",
    "USAGE_CATEGORIES",
    "WARNING_CODES",
    "Decision",
    "Group",
    "PageDirectives",
    "PageRule",
    "PageStatement",
    "PageUsageDecision",
    "PageWarning",
    "ParseWarning",
    "RequestRate",
    "RobotExclusionRulesParser",
    "RobotFileParserLookalike",
    "RobotsTxt",
    "RslContent",
    "RslDecision",
    "RslFile",
    "RslLicense",
    "RslProblem",
    "TdmRepDecision",
    "TdmRepEntry",
    "TdmRepFile",
    "TdmRepStatement",
    "TdmRepWarning",
    "TdmReservation",
    "UsageDecision",
    "VisitTime",
    "header_usage",
    "license_decision",
    "license_link_tags",
    "license_links",
    "page_directives",
    "parse",
    "parse_rsl",
    "parse_tdmrep",
    "robots_meta_tags",
    "set_shared_table_limit",
    "shared_table_limit",
    "tdm_reservation",
    "usage_category",
]
#: What the engine exports for the package's other layers and its benchmarks, so that none
#: imports a private module (tests/test_layout.py), listed as such in docs/engine.rst.
ENGINE_FOR_THE_LAYERS = [
    "ALLOWED",
    "CONTENT_USAGE",
    "CONTENT_USAGE_LABELS",
    "DIRECTIVES",
    "DISALLOWED",
    "FILE_KINDS",
    "NOT_BODY_CHARSETS",
    "NO_USAGE_STATED",
    "SIGNAL_KEYS",
    "SITEMAP",
    "SYNTAX_BY_NAME",
    "UNKNOWN",
    "VALUE_KINDS",
    "UsageStatement",
    "body_codec",
    "caller_tokens",
    "check_syntax",
    "clear_shared_tables",
    "combined",
    "html_encoding",
    "text_codec",
]


def test_engine_all_is_pinned() -> None:
    from scrapy_rerp import engine

    assert engine.__all__ == ENGINE_PUBLIC + ENGINE_FOR_THE_LAYERS
    for name in engine.__all__:
        assert getattr(engine, name) is not None


def test_the_engine_s_exports_for_the_layers_are_listed_as_such() -> None:
    """docs/engine.rst names each export for the other layers in its own section, so that
    rerp's users are not promised them, and names no other export there."""
    page = (REPO / "docs" / "engine.rst").read_text(encoding="utf-8")
    section = page.split("For the other layers\n--------------------\n", 1)[1].split("\n---", 1)[0]
    listed = re.findall(r"``(\w+)``", section)
    assert sorted(listed) == sorted(ENGINE_FOR_THE_LAYERS)


#: The dotted paths a project's settings (or the docs' examples) name: ADDONS,
#: DOWNLOADER_MIDDLEWARES, SPIDER_MIDDLEWARES, ROBOTSTXT_PARSER and RERP_CACHE take them, and
#: they stay whatever module the code lives in.
PUBLIC_PATHS = [
    "scrapy_rerp.Addon",
    "scrapy_rerp.RobotsTxtMiddleware",
    "scrapy_rerp.AnswersMiddleware",
    "scrapy_rerp.RerpRobotParser",
    "scrapy_rerp.PageDirectivesMiddleware",
    "scrapy_rerp.EvidenceItemsMiddleware",
    "scrapy_rerp.SigningMiddleware",
    "scrapy_rerp.addon.Addon",
    "scrapy_rerp.middleware.RobotsTxtMiddleware",
    "scrapy_rerp.middleware.AnswersMiddleware",
    "scrapy_rerp.robotparser.RerpRobotParser",
    "scrapy_rerp.cache.MemoryOriginCache",
    "scrapy_rerp.cache.RedisOriginCache",
    "scrapy_rerp.cache.FailoverCache",
    "scrapy_rerp.cache.OriginCache",
    "scrapy_rerp.cache.SharedOriginCache",
    "scrapy_rerp.cache.RobotsEntry",
    "scrapy_rerp.demo.main",
]


def resolve(path: str) -> Any:
    module, _, name = path.replace(":", ".").rpartition(".")
    return getattr(import_module(module), name)


@pytest.mark.parametrize("path", PUBLIC_PATHS)
def test_every_public_path_resolves(path: str) -> None:
    assert resolve(path).__name__ == path.rpartition(".")[2]


def test_the_cache_s_public_path_names_the_classes_of_their_layers() -> None:
    """``scrapy_rerp.cache`` holds no code (``core/cache`` does, and ``fleet/store``): each name
    a project's ``RERP_CACHE`` may give resolves, by Scrapy's ``load_object``, to the class of
    the layer's module."""
    from scrapy.utils.misc import load_object

    from scrapy_rerp.core import cache
    from scrapy_rerp.fleet import store

    for name in cache.__all__:
        assert load_object(f"scrapy_rerp.cache.{name}") is getattr(cache, name)
    for name in ("RedisOriginCache", "SharedOriginCache"):
        assert load_object(f"scrapy_rerp.cache.{name}") is getattr(store, name)


def test_a_module_path_is_the_package_s_name() -> None:
    for path in PUBLIC_PATHS:
        name = path.rpartition(".")[2]
        if name in scrapy_rerp.__all__:
            assert resolve(path) is getattr(scrapy_rerp, name), path


def test_the_entry_points_of_pyproject_resolve() -> None:
    # [project.scripts] and Scrapy's command: "module:name".
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    targets = re.findall(r'^\S+ = "(scrapy_rerp[\w.]*:\w+)"$', pyproject, re.M)
    assert sorted(targets) == ["scrapy_rerp.cli:main", "scrapy_rerp.commands:RobotsCommand"]
    for target in targets:
        assert callable(resolve(target))


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        scrapy_rerp.NoSuchName  # noqa: B018


def run_fresh(code: str) -> dict[str, bool]:
    """Run *code* in a new interpreter; it prints a JSON object, which is returned."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


CHECK_MODULES = """
import json, sys
loaded = lambda: {"scrapy": "scrapy" in sys.modules, "twisted": "twisted" in sys.modules}
"""


def test_engine_does_not_import_scrapy_or_twisted() -> None:
    code = CHECK_MODULES + (
        "import scrapy_rerp\n"
        "from scrapy_rerp import parse, RobotsTxt, RFC9309, GYM2008, MK1996\n"
        "from scrapy_rerp import RobotExclusionRulesParser, RobotFileParserLookalike\n"
        "for syntax in (MK1996, GYM2008, RFC9309):\n"
        "    r = parse('User-agent: *\\nDisallow: /x\\nCrawl-delay: 1\\n', syntax)\n"
        "    assert r.allowed('https://example.com/x', 'bot') is False\n"
        "    r.decide('https://example.com/y', 'bot'); str(r)\n"
        "    RobotsTxt.allow_all(syntax)\n"
        "p = RobotExclusionRulesParser(); p.parse('User-agent: *\\nDisallow: /x\\n')\n"
        "assert p.is_allowed('bot', '/x') is False\n"
        "l = RobotFileParserLookalike(); l.parse(['User-agent: *', 'Disallow: /x'])\n"
        "assert l.can_fetch('bot', '/x') is False\n"
        "print(json.dumps(loaded()))\n"
    )
    assert run_fresh(code) == {"scrapy": False, "twisted": False}


def test_the_settings_error_is_loaded_on_access_only() -> None:
    # The settings' module brings the store's and the body readers' imports: a third of the
    # engine's import time, which rerp's users have no use for.
    code = (
        "import json, sys\n"
        "import scrapy_rerp\n"
        "before = 'scrapy_rerp.core.settings' in sys.modules\n"
        "error = scrapy_rerp.RerpSettingsError\n"
        "assert issubclass(error, ValueError)\n"
        "after = 'scrapy_rerp.core.settings' in sys.modules\n"
        "print(json.dumps({'before': before, 'after': after}))\n"
    )
    assert run_fresh(code) == {"before": False, "after": True}


@pytest.mark.parametrize(
    "name",
    [
        "RerpRobotParser",
        "RobotsTxtMiddleware",
        "AnswersMiddleware",
        "PageDirectivesMiddleware",
        "EvidenceItemsMiddleware",
        "SigningMiddleware",
        "Addon",
    ],
)
def test_scrapy_names_import_scrapy_on_access(name: str) -> None:
    code = CHECK_MODULES + (
        "import scrapy_rerp\n"
        "before = loaded()\n"
        f"cls = scrapy_rerp.{name}\n"
        "after = loaded()\n"
        f"assert cls.__name__ == {name!r}\n"
        "print(json.dumps({'before': before['scrapy'], 'after': after['scrapy']}))\n"
    )
    assert run_fresh(code) == {"before": False, "after": True}
