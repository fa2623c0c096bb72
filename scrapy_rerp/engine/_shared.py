"""Tables that every parsed file shares, bounded by an estimate of their bytes.

Many sites serve the same lines (a CMS's defaults, the same few crawler names), so what is
read or compiled from them is kept in a few tables for the next file. Each table holds its share
of one limit (``set_shared_table_limit``, DEFAULT_LIMIT bytes in all), estimated from the sizes of
its keys and values, and drops its least recently used entries past it. An entry bigger than a
sixteenth of its table's share is not kept: it is not worth pushing out many smaller ones.
Tables are safe to use from several threads: each has its own lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

MIB = 1024 * 1024
#: The tables' total bound, in (estimated) bytes, unless set_shared_table_limit changes it.
DEFAULT_LIMIT = 4 * MIB
# What a str costs beyond its characters (CPython's compact ASCII header, 64-bit), and what a
# table entry costs beyond its key and value (the ordered dictionary's slot and link).
STR_OVERHEAD = 50
ENTRY_OVERHEAD = 120

Key = TypeVar("Key")
Value = TypeVar("Value")

_TABLES: list[SharedTable] = []  # type: ignore[type-arg]
_limit = DEFAULT_LIMIT


class SharedTable(Generic[Key, Value]):
    """A least-recently-used table bounded by the estimated bytes of its entries.

    *share* is the fraction of the shared limit this table may hold; *size_of* estimates what
    an entry (key and value) costs in bytes.
    """

    def __init__(self, share: float, size_of: Callable[[Key, Value], int]) -> None:
        self._share = share
        self._size_of = size_of
        self._entries: OrderedDict[Key, Value] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.limit = int(_limit * share)
        _TABLES.append(self)

    def get(self, key: Key) -> Value | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Key, value: Value) -> None:
        """Keep *value* for *key*, unless the entry is too big to be worth keeping."""
        size = self._size_of(key, value) + ENTRY_OVERHEAD
        if size * 16 > self.limit:
            return
        with self._lock:
            entries = self._entries
            if key in entries:
                return
            entries[key] = value
            self._bytes += size
            while self._bytes > self.limit:
                old_key, old_value = entries.popitem(last=False)
                self._bytes -= self._size_of(old_key, old_value) + ENTRY_OVERHEAD

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def estimated_bytes(self) -> int:
        """What the entries held now are estimated to cost."""
        return self._bytes

    def _set_limit(self, total: int) -> None:
        with self._lock:
            self.limit = int(total * self._share)
            while self._bytes > self.limit:
                old_key, old_value = self._entries.popitem(last=False)
                self._bytes -= self._size_of(old_key, old_value) + ENTRY_OVERHEAD


def str_bytes(text: str) -> int:
    """An estimate of what *text* costs (exact for ASCII on 64-bit CPython, within 4x else)."""
    return STR_OVERHEAD + len(text)


def set_shared_table_limit(limit: int) -> None:
    """Bound what the tables shared by parsed files may hold, in bytes (estimated), in all.

    The default is DEFAULT_LIMIT (4 MiB). 0 turns sharing off. Entries past a lowered limit are
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
