"""The exclusion engine: robots.txt parsing and matching, standard library only."""

from ._constants import GYM2008, MAX_FILESIZE, MK1996, RFC9309, SEVEN_DAYS
from ._directives import RequestRate, VisitTime
from ._lines import ParseWarning
from ._robots import Decision, Group, RobotsTxt, parse
from ._shared import set_shared_table_limit, shared_table_limit
from .rerp import RobotExclusionRulesParser, RobotFileParserLookalike

__all__ = [
    "GYM2008",
    "MAX_FILESIZE",
    "MK1996",
    "RFC9309",
    "SEVEN_DAYS",
    "Decision",
    "Group",
    "ParseWarning",
    "RequestRate",
    "RobotExclusionRulesParser",
    "RobotFileParserLookalike",
    "RobotsTxt",
    "VisitTime",
    "parse",
    "set_shared_table_limit",
    "shared_table_limit",
]
