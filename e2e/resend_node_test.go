package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/storetest"
)

// resendNodeVersion is the npm "resend" package .ci/run installs into
// resendNodeDir (`npm install --prefix e2e/testdata/resend
// resend@6.38.0`); tests never install it themselves.
const (
	resendNodeVersion = "6.38.0"
	resendNodeDir     = "testdata/resend"
	// standardWebhooksNodeDir is where .ci/run installs the Standard
	// Webhooks library for webhook/standardwebhooks_test.go; the Node
	// script verifies with that install, not the copy resend depends on.
	standardWebhooksNodeDir = "../webhook/testdata/standardwebhooks"
)

// requireResendNode returns the folders holding resend and
// standardwebhooks in node_modules, or skips the test saying how to
// install what is missing (fails it, under MAILROOM_REQUIRE).
func requireResendNode(t *testing.T) (resendDir, standardWebhooksDir string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		require.Missing(t, require.Resend, "node is not installed, so Resend's Node SDK cannot run (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(resendNodeDir, "node_modules", "resend", "package.json")); err != nil {
		require.Missing(t, require.Resend, "Resend's Node SDK is not installed (%v): `npm install --prefix e2e/testdata/resend resend@%s` (from the repository root) installs it, as .ci/run does", err, resendNodeVersion)
	}
	if _, err := os.Stat(filepath.Join(standardWebhooksNodeDir, "node_modules", "standardwebhooks", "package.json")); err != nil {
		require.Missing(t, require.StandardWebhooks, "the Standard Webhooks library is not installed (%v): `npm install --prefix webhook/testdata/standardwebhooks standardwebhooks@1.1.1` (from the repository root) installs it, as .ci/run does", err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return abs(resendNodeDir), abs(standardWebhooksNodeDir)
}

// nodeOut is what testdata/resendsdk/sdk.mjs prints: each call's {data,
// error} as the SDK returned them.
type nodeOut struct {
	SDKVersion string              `json:"sdkVersion"`
	BaseURL    string              `json:"baseURL"`
	Calls      map[string]nodeCall `json:"calls"`
}

type nodeCall struct {
	Data  json.RawMessage `json:"data"`
	Error *struct {
		StatusCode int    `json:"statusCode"`
		Name       string `json:"name"`
		Message    string `json:"message"`
	} `json:"error"`
	Thrown string `json:"thrown"`
	// Verify mode's verdicts.
	SDK                      string `json:"sdk"`
	SDKTampered              string `json:"sdkTampered"`
	StandardWebhooks         string `json:"standardWebhooks"`
	StandardWebhooksTampered string `json:"standardWebhooksTampered"`
}

// runResendSDKScript runs the script with input on stdin, RESEND_BASE_URL
// the node's address WITH a trailing slash (the SDK then asks for
// "//emails", which must reach the same route) and NODE_EXTRA_CA_CERTS
// its certificate.
func runResendSDKScript(t *testing.T, e *resendEnv, input map[string]any) nodeOut {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "resendsdk", "sdk.mjs"))
	cmd.Env = append(os.Environ(), "RESEND_BASE_URL="+e.node.base+"/",
		"NODE_EXTRA_CA_CERTS="+filepath.Join(e.node.dataDir, "tls", "cert.pem"), "RESEND_API_KEY=", "RESEND_DEBUG=")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sdk.mjs: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	var o nodeOut
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("node sdk.mjs printed %q: %v\n%s", out, err, stderr.Bytes())
	}
	return o
}

// data decodes a call's data into v, failing the check if the call
// failed.
func (o nodeOut) data(t *testing.T, name string, v any) bool {
	t.Helper()
	c, ok := o.Calls[name]
	switch {
	case !ok:
		t.Errorf("%s: the script made no such call", name)
	case c.Thrown != "":
		t.Errorf("%s: the SDK threw %s", name, c.Thrown)
	case c.Error != nil:
		t.Errorf("%s: the SDK returned the error %+v", name, *c.Error)
	case json.Unmarshal(c.Data, v) != nil:
		t.Errorf("%s: data %s", name, c.Data)
	default:
		return true
	}
	return false
}

// wantError checks that call name returned Resend's error with status and
// errName, as the SDK passes the body through.
func (o nodeOut) wantError(t *testing.T, name string, status int, errName string) {
	t.Helper()
	c := o.Calls[name]
	if c.Error == nil || c.Error.Name != errName || c.Error.StatusCode != status || c.Error.Message == "" {
		t.Errorf("%s: %+v (data %s, thrown %q), want error %d %s with a message", name, c.Error, c.Data, c.Thrown, status, errName)
	}
}

type nodeEmail struct {
	Object      string   `json:"object"`
	ID          string   `json:"id"`
	To          []string `json:"to"`
	Subject     string   `json:"subject"`
	LastEvent   string   `json:"last_event"`
	ScheduledAt *string  `json:"scheduled_at"`
}

type nodeList[T any] struct {
	Object  string `json:"object"`
	HasMore bool   `json:"has_more"`
	Data    []T    `json:"data"`
}

type nodeBatch struct {
	Data   []struct{ ID string } `json:"data"`
	Errors []struct {
		Index   int    `json:"index"`
		Message string `json:"message"`
	} `json:"errors"`
}

// Resend's Node SDK, unmodified, against the binary: every call of
// Resend's guides through a base URL that ends in "/", each attachment
// form the SDK sends, and a webhook Mailroom delivers verified by the
// SDK's resend.webhooks.verify and by the Standard Webhooks library.
func TestResendNodeSDK(t *testing.T) {
	resendDir, swDir := requireResendNode(t)
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := startResendEnv(t, eng)
		attachment := make([]byte, 600)
		_, _ = rand.Read(attachment)
		pdf := append([]byte("%PDF-1.4\n"), attachment...)
		rescheduleAt := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
		o := runResendSDKScript(t, e, map[string]any{
			"mode": "api", "key": e.key, "resendDir": resendDir,
			"attachment":   base64.StdEncoding.EncodeToString(attachment),
			"pathURL":      e.outside.file("/files/node-invoice.pdf", pdf),
			"rescheduleAt": rescheduleAt.Format(time.RFC3339),
			"hookURL":      e.outside.hookURL("/hooks/node"),
		})
		if o.SDKVersion != resendNodeVersion || !strings.HasSuffix(o.BaseURL, "/") {
			t.Errorf("the script ran resend %s against %s, want %s with a trailing slash", o.SDKVersion, o.BaseURL, resendNodeVersion)
		}

		// Send: it arrives as sent, every attachment byte for byte.
		var sent struct{ ID string }
		if o.data(t, "send", &sent) {
			m := e.waitReceived(t, "Node order 8001", 1)[0]
			for name, want := range map[string]string{"From": "Shop <orders@shop.example>", "To": "ann@example.net",
				"Cc": "cy@example.net", "Reply-To": "help@shop.example", "X-Order-Id": "8001", "Bcc": ""} {
				if h := m.Header.Get(name); !sameHeader(name, h, want) {
					t.Errorf("the received %s is %q, want %q", name, h, want)
				}
			}
			if m.text("text/plain") != "Thanks from Node." || m.text("text/html") != "<p>Thanks from <b>Node</b>.</p>" {
				t.Errorf("received text %q, html %q", m.text("text/plain"), m.text("text/html"))
			}
			for name, want := range map[string][]byte{"base64.bin": attachment, "buffer.bin": attachment, "uint8.bin": attachment,
				"buffer-json.bin": attachment, "invoice.pdf": pdf, "logo.png": attachment} {
				if p, ok := m.part("", name); !ok || !bytes.Equal(p.Body, want) {
					t.Errorf("attachment %s: found %v, %d bytes; want the %d sent (parts %v)", name, ok, len(p.Body), len(want), partNames(m))
				}
			}
			if p, _ := m.part("", "logo.png"); strings.Trim(p.ContentID, "<>") != "logo-8001" || p.MediaType != "image/png" {
				t.Errorf("the inline logo: %s Content-ID %q", p.MediaType, p.ContentID)
			}
			v1 := e.waitV1Status(t, sent.ID, "delivered")
			if v1["subject"] != "Node order 8001" || v1["tags"].(map[string]any)["kind"] != "receipt" {
				t.Errorf("the native log: %v", v1)
			}
		}
		var got nodeEmail
		if o.data(t, "get", &got) && (got.Object != "email" || got.ID != sent.ID || got.Subject != "Node order 8001" ||
			len(got.To) != 1 || got.To[0] != "ann@example.net" || got.LastEvent == "") {
			t.Errorf("emails.get: %+v", got)
		}

		// Batch.
		var b nodeBatch
		if o.data(t, "batchStrict", &b) && len(b.Data) != 2 {
			t.Errorf("batch (strict): %+v", b)
		}
		o.wantError(t, "batchStrictInvalid", 422, "validation_error")
		if r := e.node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages?to=nstrict-a@example.net", Key: e.key}); len(r.Map()["data"].([]any)) != 0 {
			t.Errorf("the refused strict batch's valid item was accepted: %s", r.Body)
		}
		if o.data(t, "batchPermissive", &b) {
			if len(b.Data) != 2 || len(b.Errors) != 1 || b.Errors[0].Index != 1 || b.Errors[0].Message == "" {
				t.Errorf("batch (permissive, item 1 invalid): %+v", b)
			}
			e.waitReceived(t, "Node batch 8004 c", 1)
		}

		// Idempotency.
		var first, again struct{ ID string }
		if o.data(t, "idempotentFirst", &first) && o.data(t, "idempotentAgain", &again) && (first.ID != again.ID || first.ID == "") {
			t.Errorf("the same idempotency key gave %s and %s", first.ID, again.ID)
		}
		o.wantError(t, "idempotentOther", 409, "invalid_idempotent_request")
		var b1, b2 nodeBatch
		if o.data(t, "batchIdempotentFirst", &b1) && o.data(t, "batchIdempotentAgain", &b2) &&
			(len(b1.Data) != 2 || len(b2.Data) != 2 || b1.Data[0].ID != b2.Data[0].ID || b1.Data[1].ID != b2.Data[1].ID) {
			t.Errorf("the batch's key again: %+v then %+v", b1, b2)
		}
		if first.ID != "" {
			e.waitV1Status(t, first.ID, "delivered")
			if n := len(e.receivedWithSubject("Node once 8005")); n != 1 {
				t.Errorf("the idempotent send arrived %d times", n)
			}
		}

		// List.
		var l1, l2 nodeList[nodeEmail]
		if o.data(t, "listFirst", &l1) && o.data(t, "listNext", &l2) {
			if l1.Object != "list" || len(l1.Data) != 2 || !l1.HasMore || len(l2.Data) == 0 {
				t.Errorf("emails.list pages: %+v then %+v", l1, l2)
			}
			for _, a := range l1.Data {
				for _, b := range l2.Data {
					if a.ID == b.ID {
						t.Errorf("email %s is on both pages", a.ID)
					}
				}
			}
		}

		// Scheduled, moved, canceled.
		var sg, ug, cg nodeEmail
		if o.data(t, "scheduledGet", &sg) && sg.LastEvent != "scheduled" {
			t.Errorf("a scheduled email: %+v", sg)
		}
		var upd, canc struct{ Object, ID string }
		if o.data(t, "update", &upd) && (upd.Object != "email" || upd.ID != sg.ID) {
			t.Errorf("emails.update: %+v", upd)
		}
		if o.data(t, "updatedGet", &ug) {
			if ug.ScheduledAt == nil {
				t.Errorf("the rescheduled email has no scheduled_at: %+v", ug)
			} else if at, err := parseResendTime(*ug.ScheduledAt); err != nil || !at.Equal(rescheduleAt) {
				t.Errorf("rescheduled to %v; emails.get says %s", rescheduleAt, *ug.ScheduledAt)
			}
		}
		if o.data(t, "cancel", &canc) && (canc.Object != "email" || canc.ID != sg.ID) {
			t.Errorf("emails.cancel: %+v", canc)
		}
		if o.data(t, "canceledGet", &cg) && cg.LastEvent != "canceled" {
			t.Errorf("a canceled email: %+v", cg)
		}

		// Domains.
		var dc struct {
			ID, Name string
			Records  []struct{ Record, Name, Type, TTL, Value string }
		}
		if o.data(t, "domainCreate", &dc) && (dc.ID == "" || dc.Name != "node.example" || len(dc.Records) == 0) {
			t.Errorf("domains.create: %+v", dc)
		}
		var dl nodeList[struct{ ID, Name string }]
		if o.data(t, "domainList", &dl) {
			found := false
			for _, d := range dl.Data {
				found = found || (d.ID == dc.ID && d.Name == "node.example")
			}
			if !found {
				t.Errorf("domains.list has no node.example: %+v", dl)
			}
		}
		var dg struct{ Object, ID, Name string }
		if o.data(t, "domainGet", &dg) && (dg.Object != "domain" || dg.ID != dc.ID || dg.Name != "node.example") {
			t.Errorf("domains.get: %+v", dg)
		}
		var dv, du struct{ Object, ID string }
		if o.data(t, "domainVerify", &dv) && dv.ID != dc.ID {
			t.Errorf("domains.verify: %+v", dv)
		}
		if o.data(t, "domainUpdate", &du) && du.ID != dc.ID {
			t.Errorf("domains.update: %+v", du)
		}
		var removed struct {
			Object, ID string
			Deleted    bool
		}
		if o.data(t, "domainRemove", &removed) && (!removed.Deleted || removed.ID != dc.ID) {
			t.Errorf("domains.remove: %+v", removed)
		}
		o.wantError(t, "domainGetRemoved", 404, "not_found")

		// API keys.
		var kc struct{ ID, Token string }
		if o.data(t, "keyCreate", &kc) && (kc.ID == "" || kc.Token == "") {
			t.Errorf("apiKeys.create: %+v", kc)
		}
		var kl nodeList[map[string]any]
		if o.data(t, "keyList", &kl) {
			found := false
			for _, k := range kl.Data {
				found = found || (k["id"] == kc.ID && k["name"] == "node-app")
				if _, ok := k["token"]; ok {
					t.Errorf("apiKeys.list shows a token: %v", k)
				}
			}
			if !found {
				t.Errorf("apiKeys.list has no node-app: %+v", kl)
			}
		}
		var ks struct{ ID string }
		o.data(t, "keySends", &ks)
		o.wantError(t, "keyOnDomains", 401, "restricted_api_key")
		var keyRemoved struct {
			Object, ID string
			Deleted    bool
		}
		if o.data(t, "keyRemove", &keyRemoved) && (!keyRemoved.Deleted || keyRemoved.ID != kc.ID) {
			t.Errorf("apiKeys.remove: %+v", keyRemoved)
		}
		o.wantError(t, "keyRemovedSends", 403, "invalid_api_key")

		// Errors.
		o.wantError(t, "errWrongKey", 403, "invalid_api_key")
		o.wantError(t, "errUnverified", 403, "validation_error")
		o.wantError(t, "errMissingTo", 422, "missing_required_field")
		o.wantError(t, "errNotFound", 404, "not_found")

		// The webhook: Resend's payload, verified by the SDK and by the
		// Standard Webhooks library, and a tampered body by neither.
		var wh struct {
			ID            string `json:"id"`
			SigningSecret string `json:"signing_secret"`
		}
		var hooked struct{ ID string }
		if !o.data(t, "webhookCreate", &wh) || !o.data(t, "hookedSend", &hooked) {
			return
		}
		h := e.outside.waitHook(t, "/hooks/node", "email.delivered of the Node SDK's email arrives", func(h hookPost) bool {
			var p resendPayload
			return json.Unmarshal(h.Body, &p) == nil && p.Type == "email.delivered" && p.Data.EmailID == hooked.ID
		})
		headers := map[string]string{}
		for name := range h.Header {
			headers[strings.ToLower(name)] = h.Header.Get(name)
		}
		v := runResendSDKScript(t, e, map[string]any{"mode": "verify", "resendDir": resendDir, "standardWebhooksDir": swDir,
			"secret": wh.SigningSecret, "headers": headers, "payload": string(h.Body)}).Calls["verify"]
		if v.SDK != "verified" || v.StandardWebhooks != "verified" {
			t.Errorf("a delivery: resend.webhooks.verify says %q, standardwebhooks says %q (headers %v)", v.SDK, v.StandardWebhooks, headers)
		}
		if v.SDKTampered == "verified" || v.StandardWebhooksTampered == "verified" {
			t.Errorf("a tampered body: resend.webhooks.verify says %q, standardwebhooks says %q", v.SDKTampered, v.StandardWebhooksTampered)
		}
	})
}

// parseResendTime reads a time as Resend writes it (ISO 8601, or its
// "2006-01-02 15:04:05.999999+00" form).
func parseResendTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999-07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Parse(time.RFC3339, s)
}
