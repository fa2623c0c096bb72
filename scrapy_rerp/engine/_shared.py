"""Tables that every parsed file shares, bounded by an estimate of their bytes.

Many sites serve the same lines (a CMS's defaults, the same few crawler names), so what is
read or compiled from them is kept in a few tables for the next file. Each table holds its share
of one limit (``set_shared_table_limit``, DEFAULT_LIMIT bytes in all), estimated from the sizes of
its keys and values. An entry bigger than a sixteenth of its table's share is not kept: it is not
worth pushing out many smaller ones.

A table drops its least recently used entries in two generations, as a cheap stand-in for exact
LRU order: entries go into the recent generation; an entry found in the older one is moved up;
when the recent generation holds half the table's share, it becomes the older one and the older
one is dropped. Every step is one dictionary operation or an attribute store, so threads may
share the tables without a lock (a race can only lose an entry or misjudge a count a little).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

MIB = 1024 * 1024
#: The tables' total bound, in (estimated) bytes, unless set_shared_table_limit changes it.
DEFAULT_LIMIT = 12 * MIB
# What a str costs beyond its characters (CPython's compact ASCII header, 64-bit), and what a
# table entry costs beyond its key and value (the dictionary's slot and index).
STR_OVERHEAD = 50
ENTRY_OVERHEAD = 60

Key = TypeVar("Key")
Value = TypeVar("Value")

_TABLES: list[SharedTable[Any, Any]] = []
_limit = DEFAULT_LIMIT


class SharedTable(Generic[Key, Value]):
    """A table bounded by the estimated bytes of its entries, least recently used out first.

    *share* is the fraction of the shared limit this table may hold. Whoever puts an entry
    says what it costs (``put``'s *size*, key and value), estimated from lengths at hand where
    the entry is made: a size function called per entry, and one more call to file it, cost
    3 % of the first checks (794M -> 776M instructions on 2,000 files of the corpus).
    """

    def __init__(self, share: float) -> None:
        self._share = share
        # The recent generation, a plain dictionary: hot paths look a key up here first, in C
        # (``table.recent.get(key) or table.get(key)``), rather than through a method call
        # (parse: 857M -> 845M instructions on 2,000 files of the corpus). Read it each time:
        # it is replaced when generations turn.
        self.recent: dict[Key, Value] = {}
        self._older: dict[Key, Value] = {}
        self._recent_bytes = 0
        self._older_bytes = 0
        self.limit = int(_limit * share)
        _TABLES.append(self)

    def get(self, key: Key) -> Value | None:
        value = self.recent.get(key)
        if value is None:
            older = self._older
            value = older.get(key)
            if value is not None:  # used again: into the recent generation
                # Counted as an average entry of its generation, whose sizes are not kept.
                self.put(key, value, self._older_bytes // len(older) - ENTRY_OVERHEAD)
        return value

    def put(self, key: Key, value: Value, size: int) -> None:
        """Keep *value* for *key* (*size*: the entry's estimated bytes), unless the entry is
        too big to be worth keeping."""
        size += ENTRY_OVERHEAD
        if size * 16 > self.limit:
            return
        if self._recent_bytes + size > self.limit // 2:
            # The recent generation becomes the older one; the older one is dropped.
            self._older, self._older_bytes = self.recent, self._recent_bytes
            self.recent, self._recent_bytes = {}, 0
        self.recent[key] = value
        self._recent_bytes += size

    def clear(self) -> None:
        self.recent, self._recent_bytes = {}, 0
        self._older, self._older_bytes = {}, 0

    def __len__(self) -> int:
        """Entries held (one moved up to the recent generation may be counted twice)."""
        return len(self.recent) + len(self._older)

    @property
    def estimated_bytes(self) -> int:
        """What the entries held now are estimated to cost."""
        return self._recent_bytes + self._older_bytes

    def _set_limit(self, total: int) -> None:
        """Take a new share of *total*, keeping the most recent entries that fit in half of it
        (each counted as an average entry of its generation)."""
        self.limit = int(total * self._share)
        generations = [
            (reversed(entries.items()), size // len(entries) if entries else 0)
            for entries, size in (
                (self.recent, self._recent_bytes),
                (self._older, self._older_bytes),
            )
        ]
        self.clear()
        kept: dict[Key, Value] = {}
        room = self.limit // 2
        for newest_first, average in generations:
            for key, value in newest_first:
                if key in kept:
                    continue
                if average > room:
                    break
                kept[key] = value
                room -= average
        self.recent = dict(reversed(kept.items()))
        self._recent_bytes = self.limit // 2 - room


class SharedStrings(SharedTable[str, str]):
    """Equal strings read from different files kept as one object, as ``sys.intern`` would,
    but in a bounded table (CPython 3.12 never frees interned strings).

    ``share_all`` looks a whole list up in one C-level pass (``dict.setdefault``). Unlike the
    other tables, it keeps one generation: when it is full it starts again empty. Looking
    strings up in an older generation too cost 3 % of a parse (25M of 822M instructions on
    2,000 files of the corpus) and kept 1.3 MiB of the corpus's 75 MiB.
    """

    def share_all(self, values: list[str], chars: int) -> list[str]:
        """*values*, each replaced by an equal string kept before, if any; the others are kept
        (*chars*: at least the number of characters of *values*, all told)."""
        if (chars + STR_OVERHEAD * len(values)) * 16 > self.limit:
            return values  # too big to be worth keeping
        recent = self.recent
        count = len(recent)
        shared = list(map(recent.setdefault, values, values))
        added = len(recent) - count
        if added:
            average = chars // len(values)
            self._recent_bytes += added * (STR_OVERHEAD + ENTRY_OVERHEAD + average)
            if self._recent_bytes > self.limit:
                self.clear()
        return shared


def str_bytes(text: str) -> int:
    """An estimate of what *text* costs (exact for ASCII on 64-bit CPython, within 4x else)."""
    return STR_OVERHEAD + len(text)


def set_shared_table_limit(limit: int) -> None:
    """Bound what the tables shared by parsed files may hold, in bytes (estimated), in all.

    The default is DEFAULT_LIMIT (12 MiB). 0 turns sharing off. Entries past a lowered limit are
    dropped at once, least recently used first.
    """
    global _limit
    if type(limit) is not int:
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be at least 0, not {limit}")
    _limit = limit
    for table in _TABLES:
        table._set_limit(limit)


def shared_table_limit() -> int:
    """The bound set by set_shared_table_limit (bytes, estimated)."""
    return _limit


def clear_shared_tables() -> None:
    """Empty every shared table. Nothing needs it; the benchmark calls it so that each repeat
    starts cold."""
    for table in _TABLES:
        table.clear()
