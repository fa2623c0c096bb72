"""Structured Field Values (RFC 9651): a parser, standard library only.

It follows the RFC's parsing algorithms (section 4.2) step by step, so that it accepts and
rejects exactly what they do: the RFC wants strict parsers (its section 1.1), and a lenient one
would read some values that other implementations drop. The AI preference drafts
(draft-ietf-aipref-vocab, -attach) carry their statements as Dictionaries.

Values come back as Python objects: Integer ``int``, Decimal ``decimal.Decimal`` (exact, as
written), String ``str``, Token ``Token``, Byte Sequence ``bytes``, Boolean ``bool``, Date
``Date``, Display String ``DisplayString``. An Item is ``(bare_item, parameters)``, an Inner List
``([item, ...], parameters)``, parameters a ``dict``. Tokens, Dates and Display Strings are
subclasses of ``str``/``int`` and so compare equal to them: test their type with
``isinstance`` where the difference matters (``y`` the Token is not ``"y"`` the String).

There is no upper limit on sizes beyond the RFC's own (the digits of numbers); every minimum the
RFC asks parsers to support is met, and the callers' input is bounded (a robots.txt line, an
HTTP field).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar

__all__ = [
    "BareItem",
    "Date",
    "DisplayString",
    "InnerList",
    "Item",
    "Member",
    "Parameters",
    "StructuredFieldError",
    "Token",
    "parse_dictionary",
    "parse_item",
    "parse_list",
]


class Token(str):
    """A Token (RFC 9651 section 3.3.4): a bare word, unlike a quoted String."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Token({str.__repr__(self)})"


class DisplayString(str):
    """A Display String (section 3.3.8): Unicode text, written ``%"..."`` percent-encoded."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"DisplayString({str.__repr__(self)})"


class Date(int):
    """A Date (section 3.3.7): seconds since 1970-01-01T00:00:00Z, written ``@seconds``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Date({int.__repr__(self)})"


BareItem = int | Decimal | str | bytes | bool  # Token, Date, DisplayString are subclasses
Parameters = dict[str, BareItem]
Item = tuple[BareItem, Parameters]
InnerList = tuple[list[Item], Parameters]
Member = Item | InnerList  # an Inner List's first element is a list
_Structure = TypeVar("_Structure")


class StructuredFieldError(ValueError):
    """The text is not a valid Structured Field; *offset* is where parsing stopped (0-based)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset})")
        self.message = message
        self.offset = offset


_DIGITS = frozenset("0123456789")
_LCALPHA = frozenset("abcdefghijklmnopqrstuvwxyz")
_ALPHA = _LCALPHA | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_START = _LCALPHA | {"*"}
_KEY_CHARS = _KEY_START | _DIGITS | frozenset("_-.")
_TCHAR = _ALPHA | _DIGITS | frozenset("!#$%&'*+-.^_`|~")  # RFC 9110's tchar
_TOKEN_START = _ALPHA | {"*"}
_TOKEN_CHARS = _TCHAR | frozenset(":/")
_BASE64_CHARS = _ALPHA | _DIGITS | frozenset("+/=")
_LOWER_HEX = frozenset("0123456789abcdef")
_SP = frozenset(" ")
_OWS = frozenset(" \t")
_INTEGER_DIGITS = 15
_DECIMAL_INTEGER_DIGITS = 12
_DECIMAL_FRACTION_DIGITS = 3


def _printable(char: str) -> bool:
    """VCHAR or SP: what Strings and Display Strings may hold unescaped."""
    return " " <= char <= "~"


class _Parser:
    """One pass over *text*; each method is the RFC algorithm of the same name."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str | bytes) -> None:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("latin-1")  # one character a byte; checked below
        # 4.2 step 0: the field is ASCII; anything else fails the whole field.
        if not text.isascii():
            first = next(index for index, char in enumerate(text) if not char.isascii())
            raise StructuredFieldError("a character outside ASCII", first)
        self.text = text
        self.pos = 0

    # -- helpers ----------------------------------------------------------------------------

    def fail(self, message: str) -> StructuredFieldError:
        return StructuredFieldError(message, self.pos)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def skip(self, chars: frozenset[str]) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in chars:
            pos += 1
        self.pos = pos

    def take(self, chars: frozenset[str]) -> str:
        start = self.pos
        self.skip(chars)
        return self.text[start : self.pos]

    def top_level(self, parse_structure: Callable[[_Parser], _Structure]) -> _Structure:
        """4.2: leading SP, the structure, trailing SP, then nothing."""
        self.skip(_SP)
        output = parse_structure(self)
        self.skip(_SP)
        if not self.at_end():
            raise self.fail(f"unexpected {self.peek()!r} after the value")
        return output

    # -- 4.2.1 lists ------------------------------------------------------------------------

    def parse_list(self) -> list[Member]:
        members: list[Member] = []
        while not self.at_end():
            members.append(self.parse_item_or_inner_list())
            if self.end_of_member():
                return members
        return members

    def end_of_member(self) -> bool:
        """Steps shared by lists and dictionaries: True at the end, else past the comma."""
        self.skip(_OWS)
        if self.at_end():
            return True
        if self.peek() != ",":
            raise self.fail(f"expected ',' between members, found {self.peek()!r}")
        self.pos += 1
        self.skip(_OWS)
        if self.at_end():
            raise self.fail("a trailing comma")
        return False

    def parse_item_or_inner_list(self) -> Member:
        return self.parse_inner_list() if self.peek() == "(" else self.parse_item()

    def parse_inner_list(self) -> InnerList:
        self.pos += 1  # the "(" that parse_item_or_inner_list saw
        inner_list: list[Item] = []
        while not self.at_end():
            self.skip(_SP)
            if self.peek() == ")":
                self.pos += 1
                return inner_list, self.parse_parameters()
            inner_list.append(self.parse_item())
            if self.peek() not in (" ", ")"):
                raise self.fail("expected a space or ')' after an item of an inner list")
        raise self.fail("an inner list without its closing ')'")

    # -- 4.2.2 dictionaries -----------------------------------------------------------------

    def parse_dictionary(self) -> dict[str, Member]:
        dictionary: dict[str, Member] = {}
        while not self.at_end():
            key = self.parse_key()
            if self.peek() == "=":
                self.pos += 1
                member = self.parse_item_or_inner_list()
            else:
                member = (True, self.parse_parameters())
            # A repeated key keeps its first place and takes the last value, as the RFC says.
            dictionary[key] = member
            if self.end_of_member():
                return dictionary
        return dictionary

    # -- 4.2.3 items, parameters, keys ------------------------------------------------------

    def parse_item(self) -> Item:
        return self.parse_bare_item(), self.parse_parameters()

    def parse_bare_item(self) -> BareItem:
        char = self.peek()
        reader = _BARE_ITEM_READERS.get(char)
        if reader is None:
            if char in _TOKEN_START:
                return self.parse_token()
            raise self.fail(f"no item starts with {char!r}" if char else "a missing item")
        return reader(self)

    def parse_parameters(self) -> Parameters:
        parameters: Parameters = {}
        while self.peek() == ";":
            self.pos += 1
            self.skip(_SP)
            key = self.parse_key()
            value: BareItem = True
            if self.peek() == "=":
                self.pos += 1
                value = self.parse_bare_item()
            parameters[key] = value
        return parameters

    def parse_key(self) -> str:
        if self.peek() not in _KEY_START:
            raise self.fail("a key starts with a lowercase letter or '*'")
        return self.take(_KEY_CHARS)

    # -- 4.2.4 to 4.2.10 bare items ---------------------------------------------------------

    def parse_number(self) -> int | Decimal:
        start = self.pos
        sign = 1
        if self.peek() == "-":
            self.pos += 1
            sign = -1
        if self.peek() not in _DIGITS:
            raise self.fail("a number needs a digit")
        integer_part = self.take(_DIGITS)
        if self.peek() != ".":
            if len(integer_part) > _INTEGER_DIGITS:
                raise StructuredFieldError("an integer of more than 15 digits", start)
            return sign * int(integer_part)
        if len(integer_part) > _DECIMAL_INTEGER_DIGITS:
            raise StructuredFieldError("a decimal of more than 12 integer digits", start)
        self.pos += 1
        fraction = self.take(_DIGITS)
        if not fraction:
            raise self.fail("a decimal ending in '.'")
        if len(fraction) > _DECIMAL_FRACTION_DIGITS:
            raise StructuredFieldError("a decimal of more than 3 fractional digits", start)
        return sign * Decimal(f"{integer_part}.{fraction}")

    def parse_string(self) -> str:
        text = self.text
        self.pos += 1  # the opening DQUOTE
        output: list[str] = []
        while not self.at_end():
            char = text[self.pos]
            self.pos += 1
            if char == "\\":
                next_char = self.peek()
                if next_char not in ('"', "\\"):
                    raise self.fail("only '\"' and '\\' may follow '\\' in a string")
                self.pos += 1
                output.append(next_char)
            elif char == '"':
                return "".join(output)
            elif not _printable(char):
                raise StructuredFieldError("a control character in a string", self.pos - 1)
            else:
                output.append(char)
        raise self.fail("a string without its closing '\"'")

    def parse_token(self) -> Token:
        return Token(self.take(_TOKEN_CHARS))

    def parse_byte_sequence(self) -> bytes:
        start = self.pos
        end = self.text.find(":", start + 1)
        if end < 0:
            raise self.fail("a byte sequence without its closing ':'")
        content = self.text[start + 1 : end]
        self.pos = end + 1
        if not set(content) <= _BASE64_CHARS:
            raise StructuredFieldError("a byte sequence with a character outside base64", start)
        # The RFC asks parsers to accept missing "=" padding and non-zero pad bits; padding
        # anywhere but the end is still an error.
        unpadded = content.rstrip("=")
        if "=" in unpadded or len(unpadded) % 4 == 1:
            raise StructuredFieldError("a byte sequence that is not valid base64", start)
        try:
            return base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
        except binascii.Error:
            raise StructuredFieldError("a byte sequence that is not valid base64", start) from None

    def parse_boolean(self) -> bool:
        self.pos += 1  # the "?"
        value = {"1": True, "0": False}.get(self.peek())
        if value is None:
            raise self.fail("a boolean is ?0 or ?1")
        self.pos += 1
        return value

    def parse_date(self) -> Date:
        self.pos += 1  # the "@"
        start = self.pos
        seconds = self.parse_number()
        if isinstance(seconds, Decimal):
            raise StructuredFieldError("a date is a whole number of seconds", start)
        return Date(seconds)

    def parse_display_string(self) -> DisplayString:
        start = self.pos
        if self.text[start : start + 2] != '%"':
            raise self.fail("a display string starts with '%\"'")
        self.pos += 2
        text = self.text
        octets = bytearray()
        while not self.at_end():
            char = text[self.pos]
            self.pos += 1
            if not _printable(char):
                raise StructuredFieldError("a control character in a display string", self.pos - 1)
            if char == "%":
                hex_pair = text[self.pos : self.pos + 2]
                # RFC 9651 accepts lowercase hex only, so that a value has one spelling.
                if len(hex_pair) != 2 or not set(hex_pair) <= _LOWER_HEX:
                    raise self.fail("'%' in a display string takes two lowercase hex digits")
                octets.append(int(hex_pair, 16))
                self.pos += 2
            elif char == '"':
                try:
                    return DisplayString(octets.decode("utf-8"))
                except UnicodeDecodeError:
                    raise StructuredFieldError(
                        "a display string that is not UTF-8", start
                    ) from None
            else:
                octets.append(ord(char))
        raise self.fail("a display string without its closing '\"'")


# Parsing a Bare Item (4.2.3.1): the first character picks the type; tokens are the default.
_BARE_ITEM_READERS = {
    **dict.fromkeys("-0123456789", _Parser.parse_number),
    '"': _Parser.parse_string,
    ":": _Parser.parse_byte_sequence,
    "?": _Parser.parse_boolean,
    "@": _Parser.parse_date,
    "%": _Parser.parse_display_string,
}


def parse_dictionary(text: str | bytes) -> dict[str, Member]:
    """A Dictionary field value: ``{key: (value, parameters)}`` in order; raises
    ``StructuredFieldError``. An Inner List member's value is a list of Items."""
    return _Parser(text).top_level(_Parser.parse_dictionary)


def parse_list(text: str | bytes) -> list[Member]:
    """A List field value: ``[(value, parameters), ...]``; raises ``StructuredFieldError``."""
    return _Parser(text).top_level(_Parser.parse_list)


def parse_item(text: str | bytes) -> Item:
    """An Item field value: ``(bare_item, parameters)``; raises ``StructuredFieldError``."""
    return _Parser(text).top_level(_Parser.parse_item)
