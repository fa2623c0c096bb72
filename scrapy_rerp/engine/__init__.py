"""The exclusion engine: robots.txt parsing and matching, standard library only."""

from ._constants import GYM2008, MAX_FILESIZE, MK1996, RFC9309, SEVEN_DAYS
from ._directives import RequestRate, VisitTime
from ._lines import WARNING_CODES, ParseWarning
from ._robots import Decision, Group, RobotsTxt, parse
from ._shared import set_shared_table_limit, shared_table_limit
from ._usage import CATEGORIES as USAGE_CATEGORIES
from ._usage import UsageDecision, header_usage, usage_category
from .rerp import RobotExclusionRulesParser, RobotFileParserLookalike

__all__ = [
    "GYM2008",
    "MAX_FILESIZE",
    "MK1996",
    "RFC9309",
    "SEVEN_DAYS",
    "USAGE_CATEGORIES",
    "WARNING_CODES",
    "Decision",
    "Group",
    "ParseWarning",
    "RequestRate",
    "RobotExclusionRulesParser",
    "RobotFileParserLookalike",
    "RobotsTxt",
    "UsageDecision",
    "VisitTime",
    "header_usage",
    "parse",
    "set_shared_table_limit",
    "shared_table_limit",
    "usage_category",
]
