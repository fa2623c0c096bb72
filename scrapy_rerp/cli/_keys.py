"""``scrapy-rerp keys``: Web Bot Auth keys (:mod:`scrapy_rerp.core.identity`). ``new FILE``
writes a new Ed25519 key and prints its keyid; ``directory FILE...`` prints the key directory
(a JWK set of the public halves) a site fetches. A private key is never printed. Exit status 2
(a :class:`CliError`) when a key cannot be read or written, or ``cryptography`` is missing."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scrapy_rerp.cli._output import EXIT_OK, CliError
from scrapy_rerp.core.identity import DIRECTORY_PATH, SigningKeyError, directory, write_new_key

__all__ = ["KeysReport"]


@dataclass(kw_only=True)
class KeysReport:
    action: str
    files: list[str]
    keyid: str | None = None  # new: the new key's
    jwks: dict[str, Any] | None = None  # directory: the JWK set
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, action: str, files: Sequence[str]) -> KeysReport:
        try:
            if action == "new":
                if len(files) != 1:
                    raise CliError("keys new takes one FILE")
                return cls(action=action, files=list(files), keyid=write_new_key(files[0]))
            return cls(action=action, files=list(files), jwks=directory(list(files)))
        except SigningKeyError as error:
            raise CliError(str(error)) from None
        except ImportError as error:
            needed = f"keys need cryptography ({error}): pip install -e './scrapy-rerp[identity]'"
            raise CliError(needed) from None
        except OSError as error:
            raise CliError(f"cannot write {files[0]}: {error.strerror or error}") from None

    @property
    def status(self) -> int:
        return EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        if self.action == "new":
            return {"file": self.files[0], "keyid": self.keyid}
        return {"directory": self.jwks, "path": DIRECTORY_PATH}

    def render_text(self, out: Callable[[str], None]) -> None:
        if self.action == "new":
            out(f"{self.files[0]}: a new Ed25519 key, keyid {self.keyid} (mode 0600)")
            return
        out(json.dumps(self.jwks, indent=2))
