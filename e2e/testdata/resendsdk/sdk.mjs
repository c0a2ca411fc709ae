// An application written for Resend, run unmodified against Mailroom by
// e2e/resend_node_test.go: Resend's official Node SDK (npm "resend", the
// version .ci/run pins) finds the API through RESEND_BASE_URL and trusts
// the node's certificate through NODE_EXTRA_CA_CERTS, as a user sets
// them. It reads its task as JSON on stdin and prints, as JSON, what
// every call returned ({data, error} as the SDK gives them), for the Go
// test to judge; it judges nothing itself.
//
// Modes: "api" makes every call of Resend's guides; "verify" checks a
// webhook delivery with the SDK's resend.webhooks.verify and with the
// Standard Webhooks library (npm "standardwebhooks").
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const input = JSON.parse(readFileSync(0, "utf8"));

// requireFrom loads a package installed under dir/node_modules (the
// folders .ci/run installs into, outside this script's own tree).
const requireFrom = (dir) => createRequire(join(dir, "noop.js"));
const { Resend } = requireFrom(input.resendDir)("resend");
const sdkVersion = JSON.parse(
  readFileSync(join(input.resendDir, "node_modules", "resend", "package.json"), "utf8"),
).version;

// call keeps what one SDK call returned; a thrown error is kept too.
const out = { sdkVersion, baseURL: process.env.RESEND_BASE_URL, calls: {} };
async function call(name, fn) {
  try {
    const { data, error } = await fn();
    out.calls[name] = { data, error };
  } catch (e) {
    out.calls[name] = { thrown: String(e && e.stack ? e.stack : e) };
  }
  return out.calls[name];
}

async function api() {
  // The key from the constructor, the base URL from RESEND_BASE_URL.
  const resend = new Resend(input.key);
  const from = "Shop <orders@shop.example>";
  const content = Buffer.from(input.attachment, "base64");

  // Send: every field, and each attachment form the SDK takes: base64
  // text, a Buffer (which 6.37 and later send as base64), a Uint8Array, a
  // path; and what SDKs before 6.37 put on the wire for a Buffer (its
  // toJSON(), {"type": "Buffer", "data": [...]}), which 6.38 passes
  // through as it is.
  await call("send", () =>
    resend.emails.send({
      from,
      to: "ann@example.net",
      cc: ["cy@example.net"],
      bcc: "bo@example.net",
      replyTo: "help@shop.example",
      subject: "Node order 8001",
      html: "<p>Thanks from <b>Node</b>.</p>",
      text: "Thanks from Node.",
      headers: { "X-Order-Id": "8001" },
      tags: [{ name: "kind", value: "receipt" }],
      attachments: [
        { filename: "base64.bin", content: input.attachment },
        { filename: "buffer.bin", content },
        { filename: "uint8.bin", content: new Uint8Array(content), contentType: "application/octet-stream" },
        { filename: "buffer-json.bin", content: content.toJSON() },
        { filename: "invoice.pdf", path: input.pathURL },
        { filename: "logo.png", content, contentType: "image/png", contentId: "logo-8001" },
      ],
    }),
  );
  const sentID = out.calls.send.data?.id;

  await call("get", () => resend.emails.get(sentID));

  // Batch: strict (the SDK's default header), strict with an invalid
  // item, permissive with one.
  const item = (to, subject) => ({ from, to: [to], subject, text: "Batch from Node." });
  await call("batchStrict", () =>
    resend.batch.send([item("ann@example.net", "Node batch 8002 a"), item("bob@example.net", "Node batch 8002 b")]),
  );
  await call("batchStrictInvalid", () =>
    resend.batch.send([item("nstrict-a@example.net", "Node batch 8003 a"), item("not an address", "Node batch 8003 b")]),
  );
  await call("batchPermissive", () =>
    resend.batch.send(
      [item("ann@example.net", "Node batch 8004 a"), item("not an address", "Node batch 8004 b"), item("cy@example.net", "Node batch 8004 c")],
      { batchValidation: "permissive" },
    ),
  );

  // Idempotency: the same key twice is one email; a batch's key too.
  const once = { from, to: ["ann@example.net"], subject: "Node once 8005", text: "Once." };
  await call("idempotentFirst", () => resend.emails.send(once, { idempotencyKey: "node-8005" }));
  await call("idempotentAgain", () => resend.emails.send(once, { idempotencyKey: "node-8005" }));
  await call("idempotentOther", () =>
    resend.emails.send({ ...once, text: "Something else." }, { idempotencyKey: "node-8005" }),
  );
  const pair = [item("ann@example.net", "Node batch 8006 a"), item("bob@example.net", "Node batch 8006 b")];
  await call("batchIdempotentFirst", () => resend.batch.send(pair, { idempotencyKey: "node-batch-8006" }));
  await call("batchIdempotentAgain", () => resend.batch.send(pair, { idempotencyKey: "node-batch-8006" }));

  // List: a page of 2, then the next with after.
  await call("listFirst", () => resend.emails.list({ limit: 2 }));
  const firstPage = out.calls.listFirst.data?.data ?? [];
  await call("listNext", () => resend.emails.list({ limit: 2, after: firstPage[firstPage.length - 1]?.id }));

  // Scheduled: in Resend's words, then moved (ISO 8601), then canceled.
  await call("schedule", () =>
    resend.emails.send({ from, to: ["later@example.net"], subject: "Node scheduled 8007", text: "Later.", scheduledAt: "in 1 min" }),
  );
  const scheduledID = out.calls.schedule.data?.id;
  await call("scheduledGet", () => resend.emails.get(scheduledID));
  await call("update", () => resend.emails.update({ id: scheduledID, scheduledAt: input.rescheduleAt }));
  await call("updatedGet", () => resend.emails.get(scheduledID));
  await call("cancel", () => resend.emails.cancel(scheduledID));
  await call("canceledGet", () => resend.emails.get(scheduledID));

  // Domains.
  await call("domainCreate", () => resend.domains.create({ name: "node.example" }));
  const domainID = out.calls.domainCreate.data?.id;
  await call("domainList", () => resend.domains.list());
  await call("domainGet", () => resend.domains.get(domainID));
  await call("domainVerify", () => resend.domains.verify(domainID));
  await call("domainUpdate", () => resend.domains.update({ id: domainID, tls: "enforced", openTracking: false }));
  await call("domainRemove", () => resend.domains.remove(domainID));
  await call("domainGetRemoved", () => resend.domains.get(domainID));

  // API keys.
  await call("keyCreate", () => resend.apiKeys.create({ name: "node-app", permission: "sending_access" }));
  await call("keyList", () => resend.apiKeys.list());
  const restricted = new Resend(out.calls.keyCreate.data?.token ?? "none");
  await call("keySends", () =>
    restricted.emails.send({ from, to: "ann@example.net", subject: "Node key 8008", text: "Sending access." }),
  );
  await call("keyOnDomains", () => restricted.domains.list());
  await call("keyRemove", () => resend.apiKeys.remove(out.calls.keyCreate.data?.id));
  await call("keyRemovedSends", () =>
    restricted.emails.send({ from, to: "ann@example.net", subject: "Node key 8009", text: "Removed." }),
  );

  // Errors, by name.
  await call("errWrongKey", () => new Resend("re_123_notAMailroomKey").emails.send(once));
  await call("errUnverified", () => resend.emails.send({ ...once, from: "orders@unverified.example" }));
  await call("errMissingTo", () => resend.emails.send({ from, subject: "No recipient", text: "x" }));
  await call("errNotFound", () => resend.emails.get("msg_doesnotexist"));

  // A webhook endpoint, for the Go test to send through and then ask
  // this script to verify what arrives ("verify" mode).
  await call("webhookCreate", () =>
    resend.webhooks.create({ endpoint: input.hookURL, events: ["email.sent", "email.delivered"] }),
  );
  await call("hookedSend", () =>
    resend.emails.send({ from, to: ["hooked@example.net"], subject: "Node hooked 8010", text: "Watch." }),
  );
}

// verify runs both verifiers on the delivery as it came and on a tampered
// body; each says "verified" or the error it threw.
function verify() {
  const resend = new Resend("re_unused");
  const { Webhook } = requireFrom(input.standardWebhooksDir)("standardwebhooks");
  const h = input.headers;
  const bySDK = (payload) => {
    try {
      resend.webhooks.verify({
        payload,
        headers: { id: h["svix-id"], timestamp: h["svix-timestamp"], signature: h["svix-signature"] },
        webhookSecret: input.secret,
      });
      return "verified";
    } catch (e) {
      return `${e.name}: ${e.message}`;
    }
  };
  const byStandardWebhooks = (payload) => {
    try {
      new Webhook(input.secret).verify(payload, h);
      return "verified";
    } catch (e) {
      return `${e.name}: ${e.message}`;
    }
  };
  const tampered = input.payload.replace("Node hooked 8010", "Node hooked 9999");
  out.calls.verify = {
    sdk: bySDK(input.payload),
    sdkTampered: bySDK(tampered),
    standardWebhooks: byStandardWebhooks(input.payload),
    standardWebhooksTampered: byStandardWebhooks(tampered),
  };
}

if (input.mode === "api") await api();
else verify();
process.stdout.write(JSON.stringify(out));
