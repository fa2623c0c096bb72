"""Reading one response header up to the cap (``capped_lines``: docs/usage.rst, "Bounds")."""

from __future__ import annotations

from scrapy_rerp.core.body import MAX_HEADER_BYTES, capped_lines


def test_lines_within_the_cap_are_read_whole() -> None:
    lines = [b"train-ai=n", b"search=y"]
    assert capped_lines(lines) == (lines, 0)
    assert capped_lines([]) == ([], 0)
    exact = [b"x" * (MAX_HEADER_BYTES - 1), b"y"]
    assert capped_lines(exact) == (exact, 0)


def test_the_line_that_crosses_the_cap_keeps_its_members_before_it() -> None:
    line = b"train-ai=n, " + b", ".join(b"c%d=y" % n for n in range(5_000))
    kept, unread = capped_lines([line, line])
    [first] = kept
    assert first.startswith(b"train-ai=n, c0=y, c1=y")
    assert len(first) <= MAX_HEADER_BYTES
    assert line.startswith(first + b",")  # cut at a comma: each member kept is whole
    assert unread == 2 * len(line) - len(first)


def test_a_line_without_a_comma_within_the_cap_is_not_read() -> None:
    kept, unread = capped_lines([b"noai", b"u" * (2 * MAX_HEADER_BYTES), b"noindex"])
    assert kept == [b"noai"]
    assert unread == 2 * MAX_HEADER_BYTES + len(b"noindex")


def test_lines_after_the_cap_are_not_read() -> None:
    lines = [b"noai, nofollow"] * 2_000
    # 7 whole lines are 98 bytes; 5 more reach the first comma of the eighth.
    kept, unread = capped_lines(lines, limit=103)
    assert kept == [b"noai, nofollow"] * 7 + [b"noai"]
    assert unread == len(b", nofollow") + (2_000 - 8) * len(lines[0])
    kept, unread = capped_lines(lines, limit=102)
    assert (kept, unread) == ([b"noai, nofollow"] * 7, (2_000 - 7) * len(lines[0]))
