"""scrapy_rerp: a fast, standards-correct robots.txt engine, and its Scrapy integration.

``import scrapy_rerp`` loads only the engine (standard library only). The Scrapy-facing names,
``RerpRobotParser``, ``RobotsTxtMiddleware``, ``AnswersMiddleware``, ``PageDirectivesMiddleware``,
``EvidenceItemsMiddleware``, ``SigningMiddleware`` and ``Addon``, are imported on first access, as
is ``RerpSettingsError``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .core.version import __version__
from .engine import (
    GYM2008,
    MAX_FILESIZE,
    MK1996,
    PAGE_RULE_USAGE,
    PAGE_RULES,
    RFC9309,
    SEVEN_DAYS,
    Decision,
    PageDirectives,
    PageRule,
    PageStatement,
    PageUsageDecision,
    PageWarning,
    ParseWarning,
    RequestRate,
    RobotExclusionRulesParser,
    RobotFileParserLookalike,
    RobotsTxt,
    RslContent,
    RslDecision,
    RslFile,
    RslLicense,
    RslProblem,
    TdmRepDecision,
    TdmRepEntry,
    TdmRepFile,
    TdmRepStatement,
    TdmRepWarning,
    TdmReservation,
    UsageDecision,
    VisitTime,
    license_decision,
    license_link_tags,
    license_links,
    page_directives,
    parse,
    parse_rsl,
    parse_tdmrep,
    robots_meta_tags,
    tdm_reservation,
)

if TYPE_CHECKING:
    from .addon import Addon
    from .core.settings import RerpSettingsError
    from .crawl.evidence import EvidenceItemsMiddleware
    from .crawl.middleware import AnswersMiddleware, RobotsTxtMiddleware
    from .crawl.page_directives import PageDirectivesMiddleware
    from .crawl.robotparser import RerpRobotParser
    from .crawl.signing import SigningMiddleware


__all__ = [
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

# Scrapy-facing names, resolved on first use so that the engine never imports scrapy; and the
# settings' error, whose module (the settings, the store's, the body's readers) would add a
# third to the engine's import time (35 of 95 ms, python -X importtime).
_LAZY = {
    "RerpSettingsError": "scrapy_rerp.core.settings",
    "RerpRobotParser": "scrapy_rerp.crawl.robotparser",
    "RobotsTxtMiddleware": "scrapy_rerp.crawl.middleware",
    "AnswersMiddleware": "scrapy_rerp.crawl.middleware",
    "PageDirectivesMiddleware": "scrapy_rerp.crawl.page_directives",
    "EvidenceItemsMiddleware": "scrapy_rerp.crawl.evidence",
    "SigningMiddleware": "scrapy_rerp.crawl.signing",
    "Addon": "scrapy_rerp.addon",
}


def __getattr__(name: str) -> Any:
    if name == "signals":  # the layer's signals, as scrapy.signals are Scrapy's
        value = import_module("scrapy_rerp.core.signals")
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_rerp' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
