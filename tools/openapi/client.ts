// A minimal Paygate client typed by openapi-typescript, as a merchant
// would write one: Node built-ins only (fetch, node:crypto), request signing
// per docs/signing.md. internal/server/generated_clients_test.go generates
// schema.d.ts from internal/openapi/openapi.yaml next to a copy of this
// file, compiles both with `tsc --strict` and runs the result against a
// test server: the document must yield types a strict compiler accepts and
// that describe what the server answers.
//
// Usage: node client.js BASE_URL, with PAYGATE_ACCESS_KEY and
// PAYGATE_SECRET in the environment. Creates one hosted payment session and
// prints {"payment_id", "status"} on success; exits 1 otherwise.
import { createHash, createHmac, randomBytes } from "node:crypto";
import type { components, paths } from "./schema.js";

type CreatePayment = components["schemas"]["CreatePayment"];
type Payment = components["schemas"]["Payment"];
type ErrorEnvelope = components["schemas"]["ErrorEnvelope"];
type SessionCreated =
  paths["/api/v1/payment-sessions"]["post"]["responses"][201]["content"]["application/json"];

/** The four signature headers of a request (docs/signing.md). */
export function signatureHeaders(
  method: string,
  target: string,
  accessKey: string,
  secret: string,
  body: string,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000).toString();
  const nonce = randomBytes(24).toString("base64url");
  const bodyHash = createHash("sha256").update(body, "utf8").digest("hex");
  const canonical = [method.toUpperCase(), target, accessKey, timestamp, nonce, bodyHash].join("\n");
  const signature = createHmac("sha256", secret).update(canonical, "utf8").digest("base64");
  return {
    "X-Access-Key": accessKey,
    "X-Timestamp": timestamp,
    "X-Nonce": nonce,
    "X-Signature": signature,
  };
}

async function createSession(baseURL: string, accessKey: string, secret: string): Promise<Payment> {
  const input: CreatePayment = {
    order_id: `ts-${randomBytes(8).toString("hex")}`,
    amount_minor: 1250,
    currency: "UAH",
    description: "openapi-typescript client",
    metadata: { source: "tools/openapi/client.ts" },
  };
  const target = "/api/v1/payment-sessions";
  const body = JSON.stringify(input);
  const res = await fetch(baseURL + target, {
    method: "POST",
    headers: {
      ...signatureHeaders("POST", target, accessKey, secret, body, new Date()),
      "Content-Type": "application/json",
      "Idempotency-Key": `ts-${randomBytes(12).toString("hex")}`,
    },
    body,
  });
  const text = await res.text();
  if (res.status !== 201) {
    const envelope = JSON.parse(text) as ErrorEnvelope;
    throw new Error(`answered ${res.status} ${envelope.error.code}: ${envelope.error.message}`);
  }
  const created = JSON.parse(text) as SessionCreated;
  if (created.status !== "created" || created.amount_minor !== input.amount_minor || created.currency !== input.currency) {
    throw new Error("the answer does not describe the payment sent");
  }
  return created;
}

async function main(): Promise<void> {
  const baseURL = process.argv[2];
  const accessKey = process.env["PAYGATE_ACCESS_KEY"];
  const secret = process.env["PAYGATE_SECRET"];
  if (baseURL === undefined || accessKey === undefined || secret === undefined) {
    throw new Error("usage: PAYGATE_ACCESS_KEY=… PAYGATE_SECRET=… node client.js BASE_URL");
  }
  const p = await createSession(baseURL, accessKey, secret);
  console.log(JSON.stringify({ payment_id: p.payment_id, status: p.status }));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
