"""Length bounds on what a crawl logs and records: a site's text quoted in a log line or an
evidence record is cut to a documented length, with a marker saying how much was cut
(docs/evidence.rst, "Bounds"; standard library only).

The text a site controls (a header's value, a robots.txt line, a page's meta tag) reaches the
log and the evidence through a reason or a statement; without a bound, one response with 28 MB
of ``Content-Usage`` lines made a 25 MB log line and a 50 MB record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_ENTRIES", "MAX_FIELD_CHARS", "bounded", "bounded_entries", "bounded_record"]

#: The characters of one logged or recorded text field, the marker of a cut included.
MAX_FIELD_CHARS = 4096
#: The entries of one recorded list (a page's directives, the agents a robots.txt matches), the
#: entry that says how many more there were included.
MAX_ENTRIES = 100

_T = TypeVar("_T")


def _marker(cut: int) -> str:
    return f" [... {cut:,} more characters not shown]"


def bounded(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text``, or its first characters and a marker of how many were cut, in at most
    ``limit`` characters (a ``limit`` shorter than the marker gives the marker alone)."""
    if len(text) <= limit:
        return text
    # The marker's length for the longest cut there can be: what is kept then fits.
    kept = max(0, limit - len(_marker(len(text))))
    return text[:kept] + _marker(len(text) - kept)


def bounded_entries(
    entries: list[_T], more: Callable[[int], _T], limit: int = MAX_ENTRIES
) -> list[_T]:
    """``entries``, or the first ``limit - 1`` of them and ``more(n)``, an entry of their
    shape saying that ``n`` more were left out."""
    if len(entries) <= limit:
        return entries
    kept = max(0, limit - 1)
    return [*entries[:kept], more(len(entries) - kept)]


def _more_text(count: int) -> str:
    return f"[... {count:,} more not recorded]"


def _bounded_value(value: Any) -> Any:
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, dict):
        return {key: _bounded_value(item) for key, item in value.items()}
    if isinstance(value, list):
        if len(value) > MAX_ENTRIES:
            value = bounded_entries(value, lambda n: _more_of(value[0], n))
        return [_bounded_value(item) for item in value]
    return value


def _more_of(sample: Any, count: int) -> Any:
    """The entry that says ``count`` entries like ``sample`` were left out: a string, or, for a
    list of objects, an object of the same keys whose text fields say it."""
    if isinstance(sample, dict):
        return {
            key: _more_text(count) if isinstance(item, str) else item
            for key, item in sample.items()
        }
    return _more_text(count)


def bounded_record(record: dict[str, Any], *, unbounded: tuple[str, ...] = ()) -> dict[str, Any]:
    """``record`` with every text field (at any depth) cut to :data:`MAX_FIELD_CHARS` and every
    list to :data:`MAX_ENTRIES`, except the top-level fields named in ``unbounded`` (a robots.txt
    record's ``body``, bounded by ``RERP_MAX_SIZE`` where it is read)."""
    for key, value in record.items():
        # Checked before rebuilt: almost every record is within its bounds as it is.
        if key not in unbounded and not _within(value):
            record[key] = _bounded_value(value)
    return record


def _within(value: Any) -> bool:
    """Whether ``value`` is within the bounds at every depth."""
    if isinstance(value, str):
        return len(value) <= MAX_FIELD_CHARS
    if isinstance(value, dict):
        return all(_within(item) for item in value.values())
    if isinstance(value, list):
        return len(value) <= MAX_ENTRIES and all(_within(item) for item in value)
    return True
