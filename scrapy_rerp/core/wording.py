"""How the layer's messages word what they say: durations, counts, and the lines said once per
origin.

* :func:`duration`: seconds as a reader takes them in, ``1.5 s``, ``45 minutes``, ``2.0 days``
  (never ``172803s`` or ``2.592e+06 s``);
* :func:`counted`: a count with its noun, in the singular for one (``1 entry``, ``2 entries``);
* :func:`stat_seconds`: seconds as the stats hold them, rounded to the millisecond;
* :class:`FirstTimes`: the origins an INFO line was already written for, so that the next ones
  go to DEBUG (docs/logging.rst), bounded.

Standard library only: the CLI and the crawl word their lines alike.
"""

from __future__ import annotations

import math
from collections import OrderedDict

__all__ = ["FirstTimes", "counted", "duration", "stat_seconds"]

#: From two of a unit up, the duration is said in that unit: 119 s, then 2.0 minutes.
_UNITS = ((24 * 3600.0, "days"), (3600.0, "hours"), (60.0, "minutes"))


def duration(seconds: float) -> str:
    """``seconds`` as a message says it: up to two minutes in seconds (three significant
    digits, to the millisecond), then in minutes, hours or days, with one decimal below ten
    of them (``2.0 days``) and none from ten on (``30 days``)."""
    if not math.isfinite(seconds):
        return "forever" if seconds > 0 else f"{seconds} s"
    for size, name in _UNITS:
        if abs(seconds) >= 2 * size:
            amount = seconds / size
            return f"{amount:.1f} {name}" if abs(amount) < 10 else f"{amount:.0f} {name}"
    return f"{round(seconds, 3):.3g} s"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and its noun: ``1 request``, ``2 requests``, ``1 entry``/``3 entries`` (the
    plural given when it is not the singular with an ``s``)."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def stat_seconds(seconds: float) -> float:
    """Seconds as a stat holds them: rounded to the millisecond (``2.994``, not
    ``2.993825912475586``)."""
    return round(seconds, 3)


class FirstTimes:
    """The origins a line was written for at INFO: :meth:`first` is True once per origin.

    Bounded: past ``limit`` origins the longest-known is forgotten (should it come again, it is
    told once more), so a broad crawl holds at most ``limit`` names.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._told: OrderedDict[str, None] = OrderedDict()

    def first(self, origin: str) -> bool:
        """True the first time ``origin`` is asked about (remembered from then on)."""
        if origin in self._told:
            return False
        self._told[origin] = None
        if len(self._told) > self.limit:
            self._told.popitem(last=False)
        return True

    def forget(self, origin: str) -> None:
        """``origin`` left the crawl's memory (its rules were evicted): told again if it
        comes back."""
        self._told.pop(origin, None)

    def __len__(self) -> int:
        return len(self._told)
