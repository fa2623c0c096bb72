"""RerpSettings: defaults, validation, and errors that name the setting (no crawler needed)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

import scrapy_rerp
from scrapy_rerp import RerpSettingsError
from scrapy_rerp.core import settings as settings_module
from scrapy_rerp.core.settings import (
    CLOSE_REASON,
    ROBOTS_ORIGIN_META,
    ROBOTSTXT_REQUEST_META_KEYS,
    SYNTAX_NAMES,
    RerpSettings,
    crawler_user_agent,
    known_settings,
    robotstxt_request_meta,
    settings_for,
    syntax_from,
    syntax_name,
    unknown_settings,
)
from scrapy_rerp.crawl.compat import close_when_opened
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

ON = {"ROBOTSTXT_OBEY": True}


def test_defaults_from_scrapy_settings() -> None:
    s = RerpSettings.from_settings(Settings(ON))
    assert s.obey and s.syntax == RFC9309 and s.syntax_name == "rfc9309"
    assert s.max_size == 500 * 1024
    assert s.max_redirects == 5
    assert s.lifetime == 24 * 3600 and s.max_lifetime == 24 * 3600 and s.min_lifetime == 3600
    assert s.error_lifetime == 3600
    assert s.unreachable_max_wait == 300
    assert s.cache_max_origins == 10_000
    assert s.cache == "scrapy_rerp.cache.MemoryOriginCache"
    assert s.crawl_delay is True and s.max_crawl_delay == 30.0
    assert s.sitemap_discovery is False
    assert s.user_agent is None
    assert s.default_user_agent.startswith("Scrapy/")  # Scrapy's USER_AGENT
    assert s.default_charset == "utf-8" and not s.legacy
    assert s.slowdown is True and s.slowdown_max_wait == 24 * 3600
    assert s.slowdown_start_floor == 0.5 and s.slowdown_max_floor == 60
    assert s.slowdown_decay_after == 10


@pytest.mark.parametrize(
    ("value", "syntax"), [("mk1996", MK1996), ("GYM2008", GYM2008), (3, RFC9309)]
)
def test_legacy_syntaxes_change_the_defaults(value: Any, syntax: int) -> None:
    s = RerpSettings.from_settings({**ON, "RERP_SYNTAX": value})
    assert s.syntax == syntax
    if syntax != RFC9309:
        assert s.legacy and s.lifetime == 7 * 24 * 3600 and s.max_lifetime == s.lifetime
        assert s.default_charset == "iso-8859-1"


def test_values_from_strings_as_on_the_command_line() -> None:
    s = RerpSettings.from_settings(
        Settings(
            {
                **ON,
                "RERP_CRAWL_DELAY": "False",
                "RERP_MAX_CRAWL_DELAY": "2.5",
                "RERP_MAX_SIZE": "1024",
                "RERP_SITEMAP_DISCOVERY": "1",
                "ROBOTSTXT_USER_AGENT": "MyBot",
                "RERP_SLOWDOWN": "0",
                "RERP_SLOWDOWN_MAX_WAIT": "600",
                "RERP_SLOWDOWN_DECAY_AFTER": "4",
            }
        )
    )
    assert s.crawl_delay is False and s.max_crawl_delay == 2.5 and s.max_size == 1024
    assert s.sitemap_discovery is True and s.user_agent == "MyBot"
    assert s.slowdown is False and s.slowdown_max_wait == 600 and s.slowdown_decay_after == 4


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RERP_SYNTAX", "rfc"),
        ("RERP_SYNTAX", 4),
        ("RERP_SYNTAX", True),
        ("RERP_MAX_CRAWL_DELAY", -1),
        ("RERP_MAX_CRAWL_DELAY", "soon"),
        ("RERP_MAX_CRAWL_DELAY", float("nan")),
        ("RERP_CRAWL_DELAY", "maybe"),
        ("RERP_CRAWL_DELAY", 2),
        ("RERP_MAX_SIZE", 0),
        ("RERP_MAX_SIZE", 1.5),
        ("RERP_MAX_REDIRECTS", -1),
        ("RERP_UNREACHABLE_MAX_WAIT", -5),
        ("RERP_LIFETIME", [1]),
        ("RERP_ERROR_LIFETIME", -1),
        ("RERP_CACHE_MAX_ORIGINS", 0),
        ("RERP_CACHE", "nodots"),
        ("RERP_CACHE", "nope.Cache"),
        ("RERP_CACHE", "scrapy_rerp.cache.NoSuchCache"),
        ("RERP_CACHE", "scrapy_rerp.cache.DEFAULT_NOTHING"),
        ("RERP_RETRY_BACKOFF_BASE", 0),
        ("ROBOTSTXT_USER_AGENT", 42),
        ("ROBOTSTXT_OBEY", "yes please"),
        ("RERP_ROBOTSTXT_META", ["proxy", None]),
        ("RERP_ROBOTSTXT_META", "{not json"),
        ("RERP_ROBOTSTXT_META", '["a list"]'),
        ("RERP_ROBOTSTXT_META", {1: "not a str key"}),
        ("RERP_ROBOTSTXT_META", {"dont_redirect": False}),
        ("RERP_ROBOTSTXT_META", {"proxy": None, "rerp_robots_origin": "x"}),
        ("RERP_SLOWDOWN", "sometimes"),
        ("RERP_SLOWDOWN_MAX_WAIT", 0),
        ("RERP_SLOWDOWN_MAX_WAIT", "a day"),
        ("RERP_SLOWDOWN_START_FLOOR", 0),
        ("RERP_SLOWDOWN_START_FLOOR", -0.5),
        ("RERP_SLOWDOWN_MAX_FLOOR", float("inf")),
        ("RERP_SLOWDOWN_DECAY_AFTER", 0),
        ("RERP_SLOWDOWN_DECAY_AFTER", 2.5),
        ("RERP_SIGNATURE_KEY", 42),
        ("RERP_SIGNATURE_WINDOW", 0),
        ("RERP_SIGNATURE_WINDOW", 0.5),
        ("RERP_SIGNATURE_WINDOW", 3601),
        ("RERP_SIGNATURE_WINDOW", "a minute"),
    ],
)
def test_bad_values_are_errors_naming_setting_and_value(name: str, value: Any) -> None:
    with pytest.raises(RerpSettingsError) as info:
        RerpSettings.from_settings({**ON, name: value})
    assert info.value.setting == name
    assert name in str(info.value) and repr(value) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_robotstxt_meta_as_a_dict_or_its_json() -> None:
    assert dict(RerpSettings.from_settings(ON).robotstxt_meta) == {}
    extra = {"proxy": None, "zyte_api_automap": False, "download_timeout": 10}
    for value in (extra, json.dumps(extra)):
        s = RerpSettings.from_settings(Settings({**ON, "RERP_ROBOTSTXT_META": value}))
        assert dict(s.robotstxt_meta) == extra
    with pytest.raises(TypeError):  # read once, never changed afterwards
        s.robotstxt_meta["proxy"] = "http://elsewhere"  # type: ignore[index]


@pytest.mark.parametrize("key", sorted(ROBOTSTXT_REQUEST_META_KEYS))
def test_robotstxt_meta_may_name_none_of_the_middleware_s_own_keys(key: str) -> None:
    with pytest.raises(RerpSettingsError, match=key):
        RerpSettings.from_settings({**ON, "RERP_ROBOTSTXT_META": {"proxy": None, key: 1}})


def test_a_robots_txt_request_s_meta_is_the_project_s_then_the_middleware_s() -> None:
    project = {"proxy": None, "api_params": {"timeout": 5}}
    meta = robotstxt_request_meta(project, "http://h:80", 7)
    assert meta == {
        "proxy": None,
        "api_params": {"timeout": 5},
        "dont_obey_robotstxt": True,
        "dont_redirect": True,
        "dont_retry": True,
        "allow_offsite": True,
        "handle_httpstatus_all": True,
        "download_maxsize": 7,
        "download_warnsize": 0,
        "rerp_robots_origin": "http://h:80",
    }
    assert meta[ROBOTS_ORIGIN_META] == "http://h:80"
    assert meta["api_params"] is not project["api_params"]  # each request its own copy
    # The keys the setting may not name are exactly those the middleware sets.
    assert set(meta) == ROBOTSTXT_REQUEST_META_KEYS | set(project)
    assert ROBOTSTXT_REQUEST_META_KEYS.isdisjoint(project)


@pytest.mark.parametrize(
    ("settings", "header", "agent"),
    [
        ({"ROBOTSTXT_USER_AGENT": "MyBot", "USER_AGENT": "Ua/1"}, b"Header/2", "MyBot"),
        ({"USER_AGENT": "Ua/1"}, b"Header/2 (+\xc3\xa4)", "Header/2 (+\xe4)"),
        ({"USER_AGENT": "Ua/1"}, b"Bad \xff", "Bad \ufffd"),
        ({"USER_AGENT": "Ua/1"}, None, "Ua/1"),
        ({"USER_AGENT": "Ua/1"}, b"", "Ua/1"),
        ({}, None, "Scrapy"),
    ],
)
def test_the_user_agent_robots_txt_is_matched_against(
    settings: dict[str, Any], header: bytes | None, agent: str
) -> None:
    # ROBOTSTXT_USER_AGENT, else the request's User-Agent header, else USER_AGENT.
    assert crawler_user_agent(RerpSettings.from_settings({**ON, **settings}), header) == agent


def test_the_user_agent_is_chosen_in_one_place() -> None:
    # ROBOTSTXT_USER_AGENT and USER_AGENT are read by crawler_user_agent alone, and the crawl's
    # every reading of a request's User-Agent header goes straight into it (the middleware's
    # user_agent_for, which the gate and the new-rules listener are given, and the page layer).
    package = Path(scrapy_rerp.__file__).parent
    home = Path(settings_module.__file__)
    outside: list[str] = []
    headers_read = 0
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in ("engine", "cli"):  # their own user agents
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        given = {
            id(argument)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _called(node) == "crawler_user_agent"
            for argument in node.args
        }
        for node in ast.walk(tree):
            where = f"{path.relative_to(package)}:{getattr(node, 'lineno', '')}"
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("user_agent", "default_user_agent")
                and path != home
            ):
                outside.append(f"{where} reads .{node.attr}")
            if isinstance(node, ast.Call) and _called(node) == "user_agent_header":
                headers_read += 1
                if id(node) not in given:
                    outside.append(f"{where} reads the User-Agent header for itself")
    assert outside == []
    assert headers_read == 2  # RobotsTxtMiddleware.user_agent_for, PageDirectivesMiddleware


def _called(call: ast.Call) -> str | None:
    function = call.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


def test_inconsistent_bounds() -> None:
    with pytest.raises(RerpSettingsError, match="RERP_MIN_LIFETIME"):
        RerpSettings.from_settings({**ON, "RERP_MIN_LIFETIME": 10, "RERP_MAX_LIFETIME": 5})
    with pytest.raises(RerpSettingsError, match="RERP_RETRY_BACKOFF_MAX"):
        RerpSettings.from_settings(
            {**ON, "RERP_RETRY_BACKOFF_BASE": 10, "RERP_RETRY_BACKOFF_MAX": 5}
        )
    with pytest.raises(RerpSettingsError, match="RERP_SLOWDOWN_MAX_FLOOR = 1.0 is invalid"):
        RerpSettings.from_settings(
            {**ON, "RERP_SLOWDOWN_START_FLOOR": 2, "RERP_SLOWDOWN_MAX_FLOOR": 1}
        )


def test_obey_off_is_not_configured_after_validation() -> None:
    with pytest.raises(NotConfigured):
        RerpSettings.from_settings({"ROBOTSTXT_OBEY": False})
    with pytest.raises(RerpSettingsError):
        RerpSettings.from_settings({"ROBOTSTXT_OBEY": False, "RERP_SYNTAX": "bogus"})
    assert RerpSettings.from_settings({}, require_obey=False).obey is False


def test_lifetime_clamped_within_bounds() -> None:
    s = RerpSettings.from_settings({**ON, "RERP_MIN_LIFETIME": 60, "RERP_MAX_LIFETIME": 600})
    assert s.clamp_lifetime(None) == 600  # default 24 h, capped by the max
    assert s.clamp_lifetime(0) == 60
    assert s.clamp_lifetime(300) == 300
    assert s.clamp_lifetime(10**9) == 600


def test_frozen() -> None:
    s = RerpSettings.from_settings(ON)
    with pytest.raises(AttributeError):
        s.max_size = 1  # type: ignore[misc]


def test_cache_class_is_imported_when_validated() -> None:
    s = RerpSettings.from_settings({**ON, "RERP_CACHE": "scrapy_rerp.cache.MemoryOriginCache"})
    assert s.cache == "scrapy_rerp.cache.MemoryOriginCache"
    with pytest.raises(RerpSettingsError, match=r"RERP_CACHE = 'nope.Cache' .*No module named"):
        RerpSettings.from_settings({**ON, "RERP_CACHE": "nope.Cache"})


# -- one syntax table --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "syntax"),
    [
        ("rfc9309", RFC9309),
        (" GYM2008 ", GYM2008),
        ("Mk1996", MK1996),
        (RFC9309, RFC9309),
        (GYM2008, GYM2008),
        (MK1996, MK1996),
    ],
)
def test_syntax_by_name_or_constant(value: Any, syntax: int) -> None:
    assert syntax_from(value) == syntax
    assert RerpSettings.from_settings({**ON, "RERP_SYNTAX": value}).syntax == syntax
    assert SYNTAX_NAMES[syntax_name(syntax)] == syntax


@pytest.mark.parametrize("value", ["rfc", "", 0, 4, True, 3.0, None])
def test_unknown_syntax_names_the_parameter(value: Any) -> None:
    with pytest.raises(RerpSettingsError, match="^RERP_SYNTAX = .* 'rfc9309', 'gym2008'"):
        syntax_from(value, "RERP_SYNTAX")


# -- unknown names -----------------------------------------------------------------------------

#: Every setting the plugin reads; the settings reference (docs/settings.rst) documents each.
KNOWN = {
    "RERP_SYNTAX",
    "RERP_MAX_SIZE",
    "RERP_MAX_REDIRECTS",
    "RERP_UNREACHABLE_MAX_WAIT",
    "RERP_RETRY_BACKOFF_BASE",
    "RERP_RETRY_BACKOFF_MAX",
    "RERP_MAX_PARKED_PER_ORIGIN",
    "RERP_LIFETIME",
    "RERP_MIN_LIFETIME",
    "RERP_MAX_LIFETIME",
    "RERP_ERROR_LIFETIME",
    "RERP_CACHE_MAX_ORIGINS",
    "RERP_CACHE",
    "RERP_CRAWL_DELAY",
    "RERP_MAX_CRAWL_DELAY",
    "RERP_SITEMAP_DISCOVERY",
    "RERP_PAGE_HEADER",
    "RERP_PAGE_META",
    "RERP_PAGE_NOFOLLOW",
    "RERP_PAGE_STRICT_NOFOLLOW",
    "RERP_SLOWDOWN",
    "RERP_SLOWDOWN_MAX_WAIT",
    "RERP_SLOWDOWN_START_FLOOR",
    "RERP_SLOWDOWN_MAX_FLOOR",
    "RERP_SLOWDOWN_DECAY_AFTER",
}


def test_known_settings_are_those_read() -> None:
    assert KNOWN <= known_settings()
    assert all(name.startswith("RERP_") for name in known_settings())


def test_unknown_names_with_the_closest_known_one() -> None:
    settings = Settings(
        {
            "RERP_CRAWL_DELAYS": True,
            "RERP_SITEMAP_DISCOVER": True,
            "RERP_SYNTAX": "rfc9309",
            "RERP_FROBNICATE": 1,
        }
    )
    assert unknown_settings(settings) == [
        ("RERP_CRAWL_DELAYS", "RERP_CRAWL_DELAY"),
        ("RERP_FROBNICATE", None),
        ("RERP_SITEMAP_DISCOVER", "RERP_SITEMAP_DISCOVERY"),
    ]


def test_settings_for_warns_once_per_unknown_name(caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler(settings_dict={"RERP_CRAWL_DELAYS": False, "RERP_MAX_SIZE": 10})
    for _ in range(3):
        settings = settings_for(crawler, close_when_opened)
        assert settings is not None and settings.max_size == 10
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "Unknown setting RERP_CRAWL_DELAYS: scrapy_rerp has no such setting, it is ignored; "
        "did you mean RERP_CRAWL_DELAY?"
    ]


def setting_families() -> dict[str, list[str]]:
    """Each word prefix of the known settings that is no setting itself (``RERP_PAGE``), with
    the settings it begins."""
    known = known_settings()
    families: dict[str, list[str]] = {}
    for name in sorted(known):
        words = name.split("_")
        for count in range(2, len(words)):
            prefix = "_".join(words[:count])
            if prefix not in known:
                families.setdefault(prefix, []).append(name)
    return families


def test_a_prefix_suggests_the_settings_it_begins() -> None:
    families = setting_families()
    assert "RERP_PAGE" in families and "RERP_REDIS" in families
    wrong = {}
    for prefix, members in sorted(families.items()):
        [(name, suggestion)] = unknown_settings(Settings({prefix: True}))
        named = set(re.findall(r"RERP_[A-Z_]*[A-Z]", suggestion or ""))
        if name != prefix or named != set(members):
            wrong[prefix] = suggestion
    assert wrong == {}


@pytest.mark.parametrize("guess", ["RERP_PAGE", "RERP_PAGE_", "RERP_PAGES"])
def test_guessing_the_page_settings_suggests_them(
    guess: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings_for(get_crawler(settings_dict={guess: False}), close_when_opened)
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    page = sorted(name for name in known_settings() if name.startswith("RERP_PAGE_"))
    assert warning == (
        f"Unknown setting {guess}: scrapy_rerp has no such setting, it is ignored; "
        f"did you mean one of {', '.join(page)}?"
    )


def test_settings_for_reports_a_bad_value_once(caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler(settings_dict={"RERP_CACHE": "nope.Cache"})
    closes: list[str] = []
    assert settings_for(crawler, lambda _, reason: closes.append(reason)) is None
    assert settings_for(crawler, lambda _, reason: closes.append(reason)) is None
    assert closes == [CLOSE_REASON]  # the crawl is closed once
    [error] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert error.getMessage().startswith("RERP_CACHE = 'nope.Cache' is invalid")
    assert error.exc_info is None


@pytest.mark.parametrize(
    ("value", "purposes"),
    [
        (None, ()),
        ("", ()),
        ("train-ai", ("train-ai",)),
        ("ai-train", ("train-ai",)),  # Content-Signal's name, read as the vocabulary's
        (" Search , AI-Input ", ("search", "ai-input")),
        (["search", "train-ai", "ai-train"], ("search", "train-ai")),
        (("ai-input",), ("ai-input",)),
    ],
)
def test_usage_purposes(value: Any, purposes: tuple[str, ...]) -> None:
    settings = RerpSettings.from_settings({"ROBOTSTXT_OBEY": True, "RERP_USAGE": value})
    assert settings.usage == purposes


def test_usage_defaults_change_nothing() -> None:
    settings = RerpSettings.from_settings({"ROBOTSTXT_OBEY": True})
    assert (settings.usage, settings.usage_deny_unknown, settings.usage_drop) == ((), False, True)
    deny = RerpSettings.from_settings(
        {"ROBOTSTXT_OBEY": True, "RERP_USAGE_DEFAULT": "DENY", "RERP_USAGE_DROP": "false"}
    )
    assert (deny.usage_deny_unknown, deny.usage_drop) == (True, False)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RERP_USAGE", "training"),
        ("RERP_USAGE", "train-ai,"),
        ("RERP_USAGE", 3),
        ("RERP_USAGE", ["search", None]),
        ("RERP_USAGE_DEFAULT", "block"),
        ("RERP_USAGE_DROP", "maybe"),
    ],
)
def test_bad_usage_settings_name_the_setting(name: str, value: Any) -> None:
    with pytest.raises(RerpSettingsError) as error:
        RerpSettings.from_settings({"ROBOTSTXT_OBEY": True, name: value})
    assert error.value.setting == name
    assert repr(value) in str(error.value)


def test_page_directive_settings() -> None:
    default = RerpSettings.from_settings({"ROBOTSTXT_OBEY": True})
    assert (
        default.page_header,
        default.page_meta,
        default.page_nofollow,
        default.page_strict_nofollow,
    ) == (True, True, True, False)
    given = RerpSettings.from_settings(
        Settings(
            {
                "ROBOTSTXT_OBEY": True,
                "RERP_PAGE_HEADER": "False",
                "RERP_PAGE_META": 0,
                "RERP_PAGE_NOFOLLOW": "false",
                "RERP_PAGE_STRICT_NOFOLLOW": "1",
            }
        )
    )
    assert (
        given.page_header,
        given.page_meta,
        given.page_nofollow,
        given.page_strict_nofollow,
    ) == (False, False, False, True)


@pytest.mark.parametrize(
    "name",
    ["RERP_PAGE_HEADER", "RERP_PAGE_META", "RERP_PAGE_NOFOLLOW", "RERP_PAGE_STRICT_NOFOLLOW"],
)
@pytest.mark.parametrize("value", ["yes", 2, 0.5, [True]])
def test_bad_page_settings_name_the_setting(name: str, value: Any) -> None:
    with pytest.raises(RerpSettingsError, match=f"^{name} = .* expected a boolean") as error:
        RerpSettings.from_settings({"ROBOTSTXT_OBEY": True, name: value})
    assert error.value.setting == name


@pytest.mark.parametrize(
    "agent",
    [
        "crawler.example/.well-known/http-message-signatures-directory",  # no scheme
        "ftp://crawler.example/dir",
        "https:///no-host",
        'https://crawler.example/"quoted"',
        "https://crawler.example/a b",
        "https://crawler.example/\u00e9",
        "https://crawler.example:99999/",
    ],
)
def test_a_signature_agent_is_an_http_url_a_quoted_string_can_hold(agent: str) -> None:
    with pytest.raises(RerpSettingsError, match="RERP_SIGNATURE_AGENT") as info:
        RerpSettings.from_settings(
            {**ON, "RERP_SIGNATURE_KEY": "k.jwk", "RERP_SIGNATURE_AGENT": agent}
        )
    assert "an https:// (or http://) URL" in str(info.value)


def test_signing_settings_read_together() -> None:
    agent = "https://crawler.example/.well-known/http-message-signatures-directory"
    read = RerpSettings.from_settings(
        {
            **ON,
            "RERP_SIGNATURE_KEY": "k.jwk",
            "RERP_SIGNATURE_AGENT": agent,
            "RERP_SIGNATURE_WINDOW": "30",
        }
    )
    assert (read.signature_key, read.signature_agent, read.signature_window) == (
        "k.jwk",
        agent,
        30.0,
    )
    default = RerpSettings.from_settings(ON)
    assert (default.signature_key, default.signature_agent, default.signature_window) == (
        None,
        None,
        60.0,
    )
    # An agent without a key would send a Signature-Agent no signature covers.
    with pytest.raises(RerpSettingsError, match="RERP_SIGNATURE_KEY = None is invalid"):
        RerpSettings.from_settings({**ON, "RERP_SIGNATURE_AGENT": agent})
