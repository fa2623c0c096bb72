"""Web Bot Auth's keys and signatures (``scrapy_rerp.core.identity``): the JWK thumbprint
against RFC 8037's example, signatures checked by an independent verifier (the
``http-message-signatures`` package, given the public key only), a tampered header or another
authority refused, and key files that cannot sign refused without their private half in the
message."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import (
    HTTPMessageVerifier,
    InvalidSignature,
    MappingKeyResolver,
    algorithms,
)

from scrapy_rerp.core.identity import (
    TAG,
    RequestSigner,
    SigningKey,
    SigningKeyError,
    _b64url_decode,
    authority,
    directory,
    load_key,
    sign_request,
    signature_base,
    signature_params,
    thumbprint,
    write_new_key,
)

#: RFC 8037, appendix A.1 and A.3: an Ed25519 key and its RFC 7638 thumbprint.
RFC8037_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
RFC8037_D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
RFC8037_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
AGENT = "https://crawler.example/.well-known/http-message-signatures-directory"


def key_file(tmp_path: Path, jwk: dict[str, str], mode: int = 0o600) -> str:
    path = tmp_path / "key.jwk"
    path.write_text(json.dumps(jwk), encoding="utf-8")
    path.chmod(mode)
    return str(path)


def rfc8037_key(tmp_path: Path) -> str:
    return key_file(tmp_path, {"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X, "d": RFC8037_D})


def new_key(path: Path) -> SigningKey:
    write_new_key(str(path))
    return load_key(str(path))


def verify(url: str, headers: dict[str, str], x: str) -> None:
    """What a site's verifier does: the public key only, the web-bot-auth tag required."""
    public = Ed25519PublicKey.from_public_bytes(_b64url_decode(x))
    keyid = thumbprint({"kty": "OKP", "crv": "Ed25519", "x": x})
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ED25519,
        key_resolver=MappingKeyResolver(public_keys={keyid: public}, private_keys={}),
    )
    request = requests.Request("GET", url, headers=headers).prepare()
    verifier.verify(request, expect_tag=TAG, require_components=("@authority",))


def test_the_keyid_is_the_rfc_7638_thumbprint() -> None:
    assert thumbprint({"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X}) == RFC8037_THUMBPRINT


def test_a_signed_request_verifies_with_the_public_key_alone(tmp_path: Path) -> None:
    key = load_key(rfc8037_key(tmp_path))
    assert key.keyid == RFC8037_THUMBPRINT and RFC8037_D not in repr(key)
    url = "https://example.com:8443/robots.txt"
    headers = sign_request(key, url, AGENT, window=60)
    assert headers["Signature-Agent"] == f'"{AGENT}"'
    params = headers["Signature-Input"]
    assert params.startswith('sig1=("@authority" "signature-agent");created=')
    for part in (f'keyid="{RFC8037_THUMBPRINT}"', 'alg="ed25519"', 'tag="web-bot-auth"', "nonce="):
        assert part in params
    verify(url, headers, RFC8037_X)
    # Without a Signature-Agent, @authority alone is covered.
    alone = sign_request(key, url, None)
    assert "Signature-Agent" not in alone and '("@authority")' in alone["Signature-Input"]
    verify(url, alone, RFC8037_X)
    # Each signature has its own nonce.
    assert sign_request(key, url, None)["Signature-Input"] != alone["Signature-Input"]


def test_a_tampered_header_another_authority_or_an_old_signature_fails(tmp_path: Path) -> None:
    key = load_key(rfc8037_key(tmp_path))
    url = "https://example.com/page"
    headers = sign_request(key, url, AGENT)
    with pytest.raises(InvalidSignature):
        verify(url, {**headers, "Signature-Agent": '"https://evil.example/dir"'}, RFC8037_X)
    with pytest.raises(InvalidSignature):  # a redirect to another host must be signed again
        verify("https://other.example/page", headers, RFC8037_X)
    expired = sign_request(key, url, AGENT, window=10, now=1_000_000_000)
    with pytest.raises(InvalidSignature):
        verify(url, expired, RFC8037_X)
    with pytest.raises(InvalidSignature):  # another key
        other = new_key(tmp_path / "other.jwk")
        verify(url, sign_request(other, url, AGENT), RFC8037_X)


def test_authority_is_the_host_lower_cased_with_a_port_not_the_default() -> None:
    assert authority("https://EXAMPLE.com/a") == "example.com"
    assert authority("https://example.com:443/a") == "example.com"
    assert authority("http://example.com:8080/a") == "example.com:8080"
    assert authority("http://[::1]:8080/a") == "[::1]:8080"


def test_a_new_key_file_is_private_and_never_overwritten(tmp_path: Path) -> None:
    path = str(tmp_path / "new.jwk")
    keyid = write_new_key(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    key = load_key(path)
    assert key.keyid == keyid
    verify(
        "https://example.com/",
        sign_request(key, "https://example.com/", AGENT),
        key.public_jwk["x"],
    )
    with pytest.raises(FileExistsError):
        write_new_key(path)
    jwks = directory([path, rfc8037_key(tmp_path)])
    assert [k["kid"] for k in jwks["keys"]] == [keyid, RFC8037_THUMBPRINT]
    assert all("d" not in k and k["kty"] == "OKP" and k["crv"] == "Ed25519" for k in jwks["keys"])


@pytest.mark.parametrize(
    ("content", "mode", "says"),
    [
        (None, 0o600, "does not exist"),
        ('{"kty": "OKP", "crv": "Ed25519", "x": "X", "d": "D"}', 0o644, "readable by others"),
        ("not json", 0o600, "not JSON"),
        ('{"kty": "RSA", "n": "x", "e": "AQAB", "d": "secret"}', 0o600, "not an Ed25519 key"),
        ('{"kty": "OKP", "crv": "Ed25519", "x": "' + RFC8037_X + '", "d": "short"}', 0o600, "'d'"),
        (b"\xff\xfe", 0o600, "not UTF-8"),
    ],
)
def test_a_key_file_that_cannot_sign_is_refused_without_its_secret(
    tmp_path: Path, content: str | bytes | None, mode: int, says: str
) -> None:
    path = tmp_path / "bad.jwk"
    if content is not None:
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        path.chmod(mode)
    with pytest.raises(SigningKeyError) as raised:
        load_key(str(path))
    message = str(raised.value)
    assert says in message and str(path) in message
    for secret in ("secret", "short", RFC8037_D):
        assert secret not in message


def test_a_public_half_that_is_not_the_private_one_is_refused(tmp_path: Path) -> None:
    other = new_key(tmp_path / "o.jwk")
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": other.public_jwk["x"], "d": RFC8037_D}
    with pytest.raises(SigningKeyError, match="not the public half") as raised:
        load_key(key_file(tmp_path, jwk))
    assert RFC8037_D not in str(raised.value)


VECTORS = json.loads((Path(__file__).parents[1] / "data" / "web_bot_auth.json").read_text())


def _vectors_in_the_form_sent() -> list[tuple[str, dict[str, Any]]]:
    """Cloudflare's Ed25519 vectors whose Signature-Agent, if any, is a quoted string: the
    form a crawl sends (the dictionary form is in tests/crawl/test_signing.py)."""
    return [
        (f"{name}-{vector['label']}", vector)
        for name, vectors in VECTORS["records"].items()
        for vector in vectors
        if vector.get("signature_agent", '"').startswith('"')
    ]


@pytest.mark.parametrize(
    ("name", "vector"), _vectors_in_the_form_sent(), ids=[n for n, _ in _vectors_in_the_form_sent()]
)
def test_cloudflare_s_test_vectors_are_signed_byte_for_byte(
    tmp_path: Path, name: str, vector: dict[str, Any]
) -> None:
    """Ed25519 is deterministic: with the vector's key, time, window and nonce, the headers
    are the reference signer's, to the byte (label sig1 only: a crawl signs as sig1)."""
    if vector["label"] != "sig1":
        vector = {
            **vector,
            "signature_input": vector["signature_input"].replace(f"{vector['label']}=", "sig1=", 1),
            "signature": vector["signature"].replace(f"{vector['label']}=", "sig1=", 1),
        }
    jwk = {k: vector["key"][k] for k in ("kty", "crv", "x", "d")}
    key = load_key(key_file(tmp_path, jwk))
    created = vector["created_ms"] // 1000
    agent = vector.get("signature_agent")
    headers = sign_request(
        key,
        vector["target_url"],
        agent.strip('"') if agent else None,
        window=vector["expires_ms"] // 1000 - created,
        now=created,
        nonce=vector["nonce"],
    )
    expected = {"Signature-Input": vector["signature_input"], "Signature": vector["signature"]}
    if agent:
        expected["Signature-Agent"] = agent
    assert headers == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com:8443/robots.txt",
        "http://user:secret@EXAMPLE.com:8080?q=1",
        "https://example.com#top",
        "http://[::1]:80/a",
        "https://Example.COM:443",
    ],
)
@pytest.mark.parametrize("agent", [AGENT, None])
def test_the_request_signer_writes_what_the_rfc_9421_steps_write(
    tmp_path: Path, url: str, agent: str | None
) -> None:
    """RequestSigner writes each request's base around what it prepared once; the plain
    steps (signature_params, signature_base) write the same signed bytes."""
    key = load_key(rfc8037_key(tmp_path))
    nonce = "n" * 88
    signed = RequestSigner(key, agent, 30).headers(url, now=1_800_000_000, nonce=nonce)
    values = {"@authority": authority(url)}
    if agent is not None:
        values["signature-agent"] = f'"{agent}"'
    params = signature_params(
        covered=tuple(values),
        created=1_800_000_000,
        expires=1_800_000_030,
        keyid=key.keyid,
        nonce=nonce,
    )
    signature = base64.b64encode(key.sign(signature_base(values, params))).decode()
    expected = {"Signature-Input": f"sig1={params}", "Signature": f"sig1=:{signature}:"}
    if agent is not None:
        expected = {"Signature-Agent": f'"{agent}"', **expected}
    assert signed == expected and list(signed) == list(expected)
    assert "secret" not in signed["Signature-Input"]
