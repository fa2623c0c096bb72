"""``scrapy-rerp keys``: a new key file (mode 0600, its keyid printed, never over a file) and
the key directory of several keys (public halves only); each run as a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

from scrapy_rerp.core.identity import load_key
from tests.support.cli import run, run_json


def test_keys_new_then_directory(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jwk", tmp_path / "b.jwk"
    done = run("keys", "new", str(first))
    assert done.returncode == 0, done.stderr
    keyid = load_key(str(first)).keyid
    assert done.stdout == f"{first}: a new Ed25519 key, keyid {keyid} (mode 0600)\n"
    assert os.stat(first).st_mode & 0o777 == 0o600
    status, doc = run_json("keys", "new", str(second))
    assert status == 0 and doc["keyid"] == load_key(str(second)).keyid
    status, doc = run_json("keys", "directory", str(first), str(second))
    assert status == 0
    assert doc["path"] == "/.well-known/http-message-signatures-directory"
    keys = doc["directory"]["keys"]
    assert [k["kid"] for k in keys] == [keyid, load_key(str(second)).keyid]
    secrets = [json.loads(path.read_text())["d"] for path in (first, second)]
    text = run("keys", "directory", str(first), str(second)).stdout
    assert json.loads(text) == doc["directory"]
    assert not any(secret in text for secret in secrets)


def test_keys_new_never_overwrites_and_a_bad_file_exits_two(tmp_path: Path) -> None:
    path = tmp_path / "a.jwk"
    assert run("keys", "new", str(path)).returncode == 0
    before = path.read_text()
    done = run("keys", "new", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert "cannot write" in done.stderr and path.read_text() == before
    bad = tmp_path / "bad.jwk"
    bad.write_text('{"kty": "RSA"}')
    done = run("keys", "directory", str(bad))
    assert done.returncode == 2 and "not an Ed25519 key" in done.stderr
