// Verifies requests as a site running Cloudflare's web-bot-auth package does (its `verify`,
// with the Ed25519 key the key directory lists under the signature's keyid, that keyid worked
// out by the package's own RFC 7638 thumbprint).
//
// stdin: {"directory": {"keys": [JWK, ...]}, "requests": [{"method", "url", "headers"}, ...]}
// stdout: one {"verified": bool, "keyid": string|null, "error": string|null} per request.
import { jwkToKeyID, verify } from "web-bot-auth";
import { verifierFromJWK } from "web-bot-auth/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const sha256 = (bytes) => crypto.subtle.digest("SHA-256", bytes);
const base64url = (digest) => Buffer.from(digest).toString("base64url");

const keys = new Map();
for (const jwk of input.directory.keys) {
  const keyid = await jwkToKeyID(jwk, sha256, base64url);
  keys.set(keyid, await verifierFromJWK(jwk));
}

const results = [];
for (const request of input.requests) {
  let keyid = null;
  try {
    await verify(
      new Request(request.url, { method: request.method, headers: request.headers }),
      async (data, signature, params) => {
        keyid = params.keyid;
        const check = keys.get(params.keyid);
        if (check === undefined) throw new Error(`keyid ${params.keyid} is not in the directory`);
        await check(data, signature, params);
      },
    );
    results.push({ verified: true, keyid, error: null });
  } catch (error) {
    results.push({ verified: false, keyid, error: String(error && error.message) });
  }
}
process.stdout.write(JSON.stringify(results));
