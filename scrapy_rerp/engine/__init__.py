"""The exclusion engine: robots.txt parsing and matching, standard library only."""

# The syntax families register with RobotsTxt: parse() and unpickling find them by syntax.
from . import _legacy, _rfc9309  # noqa: F401
from ._agents import caller_tokens
from ._constants import (
    GYM2008,
    MAX_FILESIZE,
    MK1996,
    RFC9309,
    SEVEN_DAYS,
    SYNTAX_BY_NAME,
    check_syntax,
)
from ._directives import (
    CONTENT_USAGE,
    DIRECTIVES,
    FILE_KINDS,
    SITEMAP,
    VALUE_KINDS,
    RequestRate,
    UsageStatement,
    VisitTime,
)
from ._html_meta import MAX_HTML_BYTES, robots_meta_tags
from ._html_meta import _encoding_of as html_encoding
from ._lines import WARNING_CODES, ParseWarning
from ._page import (
    PageDirectives,
    PageStatement,
    PageUsageDecision,
    PageWarning,
    page_directives,
)
from ._page_rules import PAGE_RULE_USAGE, PAGE_RULES, PageRule
from ._robots import NO_USAGE_STATED, Decision, Group, RobotsTxt, parse
from ._shared import clear_shared_tables, set_shared_table_limit, shared_table_limit
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
from ._text_codecs import NOT_BODY_CHARSETS, body_codec, text_codec
from ._usage import (
    ALLOWED,
    CONTENT_USAGE_LABELS,
    DISALLOWED,
    SIGNAL_KEYS,
    UNKNOWN,
    UsageDecision,
    combined,
    header_usage,
    usage_category,
)
from ._usage import CATEGORIES as USAGE_CATEGORIES
from .rerp import RobotExclusionRulesParser, RobotFileParserLookalike

__all__ = [
    "GYM2008",
    "MAX_FILESIZE",
    "MAX_HTML_BYTES",
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
    # For the package's own layers and its benchmarks (docs/engine.rst, "For the other layers"):
    # exported so that no other layer imports a private module, not promised to rerp's users.
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
