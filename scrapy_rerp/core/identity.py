"""Web Bot Auth: the crawler's Ed25519 key, its JWK thumbprint (RFC 7638), and the HTTP Message
Signature (RFC 9421) over a request's ``@authority`` and ``Signature-Agent``.

No Scrapy import here; ``cryptography`` is imported only when a key is made or loaded. A key's
private half stays inside :class:`SigningKey`: no message, ``repr`` or record names it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_WINDOW",
    "DIRECTORY_PATH",
    "NONCE_BYTES",
    "RequestSigner",
    "SigningKeyError",
    "TAG",
    "SigningKey",
    "authority",
    "directory",
    "load_key",
    "new_key_jwk",
    "signature_base",
    "sign_request",
    "signature_params",
    "thumbprint",
    "write_new_key",
]

#: Where a site looks for the key directory of the agent a ``Signature-Agent`` header names.
DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
#: The ``tag`` parameter Web Bot Auth verifiers look for.
TAG = "web-bot-auth"
#: Seconds between ``created`` and ``expires`` (RERP_SIGNATURE_WINDOW's default).
DEFAULT_WINDOW = 60.0
#: Random bytes in a signature's ``nonce`` (base64): as many as Cloudflare's reference signer
#: draws, and its ``validateNonce`` expects.
NONCE_BYTES = 64
_LABEL = "sig1"
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: What ends a URL's host and port.
_AFTER_HOST = re.compile(r"[/?#]")


class SigningKeyError(ValueError):
    """A key file that cannot sign: its message names the file and the problem, never the key."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def thumbprint(public_jwk: dict[str, Any]) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638) of an OKP key: its ``keyid``."""
    members = {"crv": public_jwk["crv"], "kty": public_jwk["kty"], "x": public_jwk["x"]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return _b64url(hashlib.sha256(canonical).digest())


def new_key_jwk() -> dict[str, str]:
    """A new Ed25519 private key as a JWK (``kty``, ``crv``, ``x``, ``d``)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    key = Ed25519PrivateKey.generate()
    d = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    x = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": _b64url(x), "d": _b64url(d)}


def write_new_key(path: str) -> str:
    """Write a new key to ``path`` (mode 0600, never over an existing file); its keyid."""
    jwk = new_key_jwk()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(jwk, file)
        file.write("\n")
    return thumbprint(jwk)


def _read_jwk(path: str, *, private: bool) -> dict[str, Any]:
    try:
        mode = os.stat(path).st_mode
        if private and mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SigningKeyError(
                f"key file {path!r} is readable by others (mode {stat.S_IMODE(mode):04o}); "
                "chmod 600 it"
            )
        with open(path, encoding="utf-8") as file:
            text = file.read(65536)
    except FileNotFoundError:
        raise SigningKeyError(f"key file {path!r} does not exist") from None
    except OSError as error:
        raise SigningKeyError(f"key file {path!r} cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise SigningKeyError(f"key file {path!r} is not a JWK (not UTF-8 text)") from None
    try:
        jwk = json.loads(text)
    except ValueError:
        raise SigningKeyError(f"key file {path!r} is not a JWK (not JSON)") from None
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise SigningKeyError(f"key file {path!r} is not an Ed25519 key (kty OKP, crv Ed25519)")
    for member in ("x", "d") if private else ("x",):
        value = jwk.get(member)
        try:
            raw = _b64url_decode(value) if isinstance(value, str) else b""
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise SigningKeyError(
                f"key file {path!r} has no valid {member!r} (32 bytes, base64url)"
            )
    return jwk


@dataclass(frozen=True, repr=False)
class SigningKey:
    """An Ed25519 private key and its keyid. Its ``repr`` shows the keyid only."""

    keyid: str
    public_jwk: dict[str, str]
    _key: Any

    def __repr__(self) -> str:
        return f"SigningKey(keyid={self.keyid!r})"

    def sign(self, data: bytes) -> bytes:
        signature: bytes = self._key.sign(data)
        return signature


def load_key(path: str) -> SigningKey:
    """The key in ``path``; :class:`SigningKeyError` if it is missing, unreadable, malformed, not
    Ed25519, or readable by group or others. ``ImportError`` if ``cryptography`` is absent."""
    jwk = _read_jwk(path, private=True)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(_b64url_decode(jwk["d"]))
    x = _b64url(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    if x != jwk["x"]:
        raise SigningKeyError(f"key file {path!r}: its 'x' is not the public half of its 'd'")
    public = {"kty": "OKP", "crv": "Ed25519", "x": x}
    return SigningKey(thumbprint(public), public, key)


def directory(paths: list[str]) -> dict[str, Any]:
    """The key directory (a JWK Set) of the keys in ``paths``: public halves only."""
    keys = []
    for path in paths:
        jwk = _read_jwk(path, private=False)
        public = {"kty": "OKP", "crv": "Ed25519", "x": jwk["x"]}
        keys.append({**public, "kid": thumbprint(public), "alg": "Ed25519", "use": "sig"})
    return {"keys": keys}


def authority(url: str) -> str:
    """``@authority`` (RFC 9421 2.2.3): the host, lowercased, with a port that is not the
    scheme's default."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _authority(url)
    # Worked out once per scheme and host (a crawl signs many URLs of few hosts).
    return _authority(f"{scheme}://{_AFTER_HOST.split(rest, 1)[0]}")


@lru_cache(maxsize=4096)
def _authority(origin: str) -> str:
    parts = urlsplit(origin)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host


def signature_params(
    *, covered: tuple[str, ...], created: int, expires: int, keyid: str, nonce: str
) -> str:
    """The ``@signature-params`` value: the inner list of covered components and parameters,
    in the order Cloudflare's reference signer writes them (any order verifies; this one lets
    its published test vectors be reproduced byte for byte)."""
    components = " ".join(f'"{name}"' for name in covered)
    return (
        f'({components});created={created};keyid="{keyid}";alg="ed25519"'
        f';expires={expires};nonce="{nonce}";tag="{TAG}"'
    )


def signature_base(values: dict[str, str], params: str) -> bytes:
    """The RFC 9421 signature base: one line a covered component, then ``@signature-params``."""
    lines = [f'"{name}": {value}' for name, value in values.items()]
    lines.append(f'"@signature-params": {params}')
    return "\n".join(lines).encode("utf-8")


class RequestSigner:
    """Signs requests with one key, for one ``Signature-Agent`` (or none) and window: what
    does not change between requests is written once (a crawl signs every request)."""

    def __init__(
        self, key: SigningKey, signature_agent: str | None, window: float = DEFAULT_WINDOW
    ) -> None:
        self.key = key
        self.window = max(1, int(window))
        self._agent = None if signature_agent is None else f'"{signature_agent}"'
        covered = ("@authority",) if self._agent is None else ("@authority", "signature-agent")
        # @signature-params is written around its three varying values: created, expires and
        # the nonce (signature_params writes the same, in one call).
        self._components = "(" + " ".join(f'"{name}"' for name in covered) + ")"
        self._after_created = f';keyid="{key.keyid}";alg="ed25519";expires='
        self._agent_line = "" if self._agent is None else f'\n"signature-agent": {self._agent}'

    def __repr__(self) -> str:
        return f"RequestSigner(keyid={self.key.keyid!r})"

    def headers(
        self, url: str, *, now: float | None = None, nonce: str | None = None
    ) -> dict[str, str]:
        """The headers that sign a request to ``url`` (:func:`sign_request`)."""
        created = int(time.time() if now is None else now)
        if nonce is None:
            nonce = base64.b64encode(secrets.token_bytes(NONCE_BYTES)).decode("ascii")
        params = (
            f"{self._components};created={created}{self._after_created}"
            f'{created + self.window};nonce="{nonce}";tag="{TAG}"'
        )
        base = f'"@authority": {authority(url)}{self._agent_line}\n"@signature-params": {params}'
        signature = base64.b64encode(self.key.sign(base.encode("utf-8"))).decode("ascii")
        headers = {} if self._agent is None else {"Signature-Agent": self._agent}
        headers["Signature-Input"] = f"{_LABEL}={params}"
        headers["Signature"] = f"{_LABEL}=:{signature}:"
        return headers


def sign_request(
    key: SigningKey,
    url: str,
    signature_agent: str | None,
    *,
    window: float = DEFAULT_WINDOW,
    now: float | None = None,
    nonce: str | None = None,
) -> dict[str, str]:
    """The headers that sign a request to ``url``: ``Signature-Input`` and ``Signature`` (and
    ``Signature-Agent`` when one is given, written as a quoted string, as deployed verifiers
    accept), over ``@authority`` and ``signature-agent`` (:func:`signature_params`,
    :func:`signature_base`). ``nonce`` is a fresh one (:data:`NONCE_BYTES` random bytes,
    base64) unless given (a test vector's)."""
    return RequestSigner(key, signature_agent, window).headers(url, now=now, nonce=nonce)
