"""The exclusion engine: robots.txt parsing and matching, standard library only."""

# The syntax families register with RobotsTxt: parse() and unpickling find them by syntax.
from . import _legacy, _rfc9309  # noqa: F401
from ._constants import GYM2008, MAX_FILESIZE, MK1996, RFC9309, SEVEN_DAYS
from ._directives import RequestRate, VisitTime
from ._html_meta import robots_meta_tags
from ._lines import WARNING_CODES, ParseWarning
from ._page import (
    PageDirectives,
    PageStatement,
    PageUsageDecision,
    PageWarning,
    page_directives,
)
from ._page_rules import PAGE_RULE_USAGE, PAGE_RULES, PageRule
from ._robots import Decision, Group, RobotsTxt, parse
from ._shared import set_shared_table_limit, shared_table_limit
from ._tdmrep import (
    MAX_TDMREP_BYTES,
    TDMREP_META_NAMES,
    TDMREP_PATH,
    TDMREP_PURPOSES,
    TDMREP_TECHNIQUES,
    TDMREP_WARNING_CODES,
    TdmRepDecision,
    TdmRepEntry,
    TdmRepFile,
    TdmRepStatement,
    TdmRepWarning,
    TdmReservation,
    parse_tdmrep,
    tdm_reservation,
)
from ._usage import CATEGORIES as USAGE_CATEGORIES
from ._usage import UsageDecision, header_usage, usage_category
from .rerp import RobotExclusionRulesParser, RobotFileParserLookalike

__all__ = [
    "GYM2008",
    "MAX_FILESIZE",
    "MAX_TDMREP_BYTES",
    "MK1996",
    "PAGE_RULES",
    "PAGE_RULE_USAGE",
    "RFC9309",
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
    "TdmRepDecision",
    "TdmRepEntry",
    "TdmRepFile",
    "TdmRepStatement",
    "TdmRepWarning",
    "TdmReservation",
    "UsageDecision",
    "VisitTime",
    "header_usage",
    "page_directives",
    "parse",
    "parse_tdmrep",
    "robots_meta_tags",
    "set_shared_table_limit",
    "shared_table_limit",
    "tdm_reservation",
    "usage_category",
]
