"""RerpSettings: defaults, validation, and errors that name the setting (no crawler needed)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings

from scrapy_rerp._settings import RerpSettings, RerpSettingsError
from scrapy_rerp.engine import GYM2008, MK1996, RFC9309

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
            }
        )
    )
    assert s.crawl_delay is False and s.max_crawl_delay == 2.5 and s.max_size == 1024
    assert s.sitemap_discovery is True and s.user_agent == "MyBot"


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
        ("RERP_RETRY_BACKOFF_BASE", 0),
        ("ROBOTSTXT_USER_AGENT", 42),
        ("ROBOTSTXT_OBEY", "yes please"),
    ],
)
def test_bad_values_are_errors_naming_setting_and_value(name: str, value: Any) -> None:
    with pytest.raises(RerpSettingsError) as info:
        RerpSettings.from_settings({**ON, name: value})
    assert info.value.setting == name
    assert name in str(info.value) and repr(value) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_inconsistent_bounds() -> None:
    with pytest.raises(RerpSettingsError, match="RERP_MIN_LIFETIME"):
        RerpSettings.from_settings({**ON, "RERP_MIN_LIFETIME": 10, "RERP_MAX_LIFETIME": 5})
    with pytest.raises(RerpSettingsError, match="RERP_RETRY_BACKOFF_MAX"):
        RerpSettings.from_settings(
            {**ON, "RERP_RETRY_BACKOFF_BASE": 10, "RERP_RETRY_BACKOFF_MAX": 5}
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
