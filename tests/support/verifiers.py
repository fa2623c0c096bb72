"""Web Bot Auth signatures checked as sites check them, by two implementations that share no
code with scrapy_rerp: Cloudflare's ``web-bot-auth`` package (npm, under node:
``tests/support/webbotauth/verify.mjs``) and the ``http-message-signatures`` package (PyPI).

Both are given a request as a server received it (its method, its URL from the ``Host`` header it
was sent with, its headers) and the key directory, and find the key by the signature's keyid.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageVerifier,
    MappingKeyResolver,
    algorithms,
)

from scrapy_rerp.core.identity import TAG, _b64url_decode, thumbprint
from scrapy_rerp.demo.local_server import Hit

__all__ = ["Sent", "sent", "verified_by_http_message_signatures", "verified_by_web_bot_auth"]

WEBBOTAUTH = Path(__file__).resolve().parent / "webbotauth"


@dataclass(frozen=True)
class Sent:
    """A request as a server received it."""

    method: str
    url: str  # http://<its Host header><its path>
    headers: Mapping[str, str]


def sent(hit: Hit) -> Sent:
    return Sent(hit.method, f"http://{hit.header('Host')}{hit.path}", dict(hit.headers))


def _node_modules() -> Path:
    """The verifier's node_modules, installed from its package-lock.json (``npm ci``, as .ci/run
    does) when absent: under a lock, as pytest's workers may ask at once."""
    installed = WEBBOTAUTH / "node_modules" / "web-bot-auth"
    if installed.is_dir():
        return installed
    npm = shutil.which("npm")
    assert npm is not None, (
        "npm is needed for the web-bot-auth verifier (Debian: apt-get install npm)"
    )
    with open(WEBBOTAUTH / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.is_dir():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(WEBBOTAUTH)],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, (
                f"npm ci --prefix {WEBBOTAUTH} failed; run it by hand:\n{done.stderr}"
            )
    return installed


def verified_by_web_bot_auth(
    directory: Mapping[str, Any], requests_sent: Sequence[Sent]
) -> list[dict[str, Any]]:
    """Cloudflare's verifier's verdict on each request: ``{"verified", "keyid", "error"}``."""
    _node_modules()
    node = shutil.which("node")
    assert node is not None, "node is needed for the web-bot-auth verifier"
    payload = {
        "directory": directory,
        "requests": [
            {"method": r.method, "url": r.url, "headers": dict(r.headers)} for r in requests_sent
        ],
    }
    done = subprocess.run(
        [node, str(WEBBOTAUTH / "verify.mjs")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(results) == len(requests_sent)
    return results


def verified_by_http_message_signatures(directory: Mapping[str, Any], request: Sent) -> str | None:
    """None when the ``http-message-signatures`` package verifies ``request`` with the
    directory's keys (the web-bot-auth tag and ``@authority`` required, and
    ``signature-agent`` when the header is sent), else why not."""
    public_keys = {}
    for jwk in directory["keys"]:
        keyid = thumbprint(jwk)
        public_keys[keyid] = Ed25519PublicKey.from_public_bytes(_b64url_decode(jwk["x"]))
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ED25519,
        key_resolver=MappingKeyResolver(public_keys=public_keys, private_keys={}),
    )
    headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
    prepared = requests.Request(request.method, request.url, headers=headers).prepare()
    required: tuple[str, ...] = ("@authority",)
    if any(name.lower() == "signature-agent" for name in headers):
        required += ("signature-agent",)
    try:
        verifier.verify(prepared, expect_tag=TAG, require_components=required)
    except HTTPMessageSignaturesException as error:
        return f"{type(error).__name__}: {error}"
    return None
