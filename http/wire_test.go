package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

var updateWire = flag.Bool("update-wire", false, "rewrite http/testdata/wire/*.json from what the conversions write now")

// The JSON the handlers write, pinned byte for byte: every conversion to a
// response body, written by writeJSON (or writeError) from values that
// try each of its cases — times in other zones and with fractions of a
// second, unset optional fields, nil lists and maps. A change to a wire
// type or a conversion that changes a single byte fails here; when the
// change is meant, run go test ./http/ -run TestWireJSON -update-wire and
// review the diff of testdata/wire.
func TestWireJSON(t *testing.T) {
	for _, c := range wireCases() {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c.write(w)
			got := w.Body.Bytes()
			path := filepath.Join("testdata", "wire", c.name+".json")
			if *updateWire {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-wire to make it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s writes\n%s\nwant (%s)\n%s", c.name, got, path, want)
			}
		})
	}
}

type wireCase struct {
	name  string
	write func(w http.ResponseWriter)
}

// Times as storage or a clock may hand them over: in another zone, with
// nanoseconds, on the last nanosecond of a second and of a year.
var (
	wireT1 = time.Date(2026, 11, 22, 12, 0, 0, 987654321, time.FixedZone("UTC+2", 2*3600)) // 2026-11-22T10:00:00Z
	wireT2 = time.Date(2026, 11, 23, 9, 30, 15, 1, time.UTC)                               // 2026-11-23T09:30:15Z
	wireT3 = time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -5*3600))   // 2027-01-01T04:59:59Z
	wireT4 = time.Date(2027, 1, 2, 3, 4, 5, 0, time.Local)
)

func ptr[T any](v T) *T { return &v }

func writes(status int, v func() any) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { writeJSON(w, status, v()) }
}

func wireCases() []wireCase {
	req := httptest.NewRequest("POST", "/v1/send/batch", nil)
	req = req.WithContext(context.WithValue(req.Context(), requestInfoKey{}, &requestInfo{requestID: "req_wire"}))
	writesError := func(err error) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { writeError(w, req, err) }
	}

	activeKey := &mailroom.APIKey{KeyID: "k1234567890abcde", AccountID: "acc", Name: "ci", Scopes: mailroom.Scopes{mailroom.ScopeSend}, CreatedAt: wireT1}
	revokedKey := &mailroom.APIKey{KeyID: "kabcdefghij12345", Name: "Ünïcode \"quoted\" <b>&", Scopes: mailroom.AllScopes,
		CreatedAt: wireT2, LastUsedAt: ptr(wireT3), RevokedAt: ptr(wireT4)}
	noScopes := &mailroom.APIKey{KeyID: "k0000000000000000", Name: "none", CreatedAt: wireT1}

	records := []mailroom.DNSRecord{
		{Purpose: mailroom.PurposeDKIM, Type: "TXT", Name: "mr1._domainkey.example.com", Value: "v=DKIM1; k=rsa; p=MIIB", Required: true, Status: mailroom.RecordPending},
		{Purpose: mailroom.PurposeReturnPath, Type: "MX", Name: "bounces.example.com", Value: "mail.example.net", Priority: ptr(10), Required: true,
			Status: mailroom.RecordFailed, Found: []string{"20 other.example."}, Problem: "the MX record points elsewhere"},
		{Purpose: mailroom.PurposeDMARC, Type: "TXT", Name: "_dmarc.example.com", Value: "v=DMARC1; p=none", Status: mailroom.RecordVerified, Found: []string{}},
	}
	pending := &mailroom.Domain{Name: "example.com", Status: mailroom.DomainPending, Records: records, CreatedAt: wireT1, NextCheckAt: ptr(wireT2)}
	verified := &mailroom.Domain{Name: "xn--bcher-kva.example", Status: mailroom.DomainVerified, CreatedAt: wireT1,
		VerifiedAt: ptr(wireT2), LastCheckedAt: ptr(wireT3), NextCheckAt: ptr(wireT4), IPPool: "bulk",
		Checks: []mailroom.HealthCheck{
			{Name: mailroom.HealthDMARC, Status: mailroom.HealthWarn, Detail: `No DMARC record at _dmarc.xn--bcher-kva.example; add TXT "v=DMARC1; p=none;" <&>`},
			{Name: mailroom.HealthDNSBL, Status: mailroom.HealthFail, Detail: "192.0.2.25 is listed on bl.example with 127.0.0.2"},
		}}
	noRecords := &mailroom.Domain{Name: "failed.example", Status: mailroom.DomainFailed, CreatedAt: wireT1, LastCheckedAt: ptr(wireT1)}
	// After a DKIM rotation moved signing, with an Ed25519 key beside it.
	rotated := &mailroom.Domain{Name: "example.com", Status: mailroom.DomainVerified, CreatedAt: wireT1, VerifiedAt: ptr(wireT2),
		LastCheckedAt: ptr(wireT3), NextCheckAt: ptr(wireT4), DKIMSelector: "mr2", DKIMPublicKey: "MIIC",
		DKIMKeys: []mailroom.DomainDKIMKey{
			{Role: mailroom.DKIMKeyRetired, Selector: "mr1", PublicKey: "MIIB", RemovableAfter: ptr(wireT3.Add(7 * 24 * time.Hour))},
			{Role: mailroom.DKIMKeyEd25519, Selector: "ed1", PublicKey: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="},
		},
		Records: []mailroom.DNSRecord{{Purpose: mailroom.PurposeDKIM, Type: "TXT", Name: "mr2._domainkey.example.com",
			Value: "v=DKIM1; k=rsa; p=MIIC", Required: true, Status: mailroom.RecordVerified}}}
	mailroom.SyncDKIMRecords(rotated)

	plain := &mailroom.Message{ID: "msg_01", Status: mailroom.MessageQueued,
		From: mailroom.Address{Address: "a@example.com"}, To: []mailroom.Address{{Address: "b@example.net"}},
		Subject: "Hi", Category: mailroom.CategoryTransactional, CreatedAt: wireT1,
		Recipients: []*mailroom.Recipient{{Address: "b@example.net", Status: mailroom.RecipientQueued}}}
	full := &mailroom.Message{ID: "msg_02", Status: mailroom.MessagePartiallyDelivered,
		From: mailroom.Address{Name: "Shop, Inc.", Address: "orders@example.com"},
		To:   []mailroom.Address{{Name: "Ann", Address: "ann@example.net"}, {Address: "bob@example.net"}},
		Cc:   []mailroom.Address{{Address: "cc@example.org"}}, Bcc: []mailroom.Address{{Address: "audit@example.com"}},
		ReplyTo: []mailroom.Address{{Name: "Help <desk>", Address: "help@example.com"}},
		Subject: "Your receipt <#1042> & more", Category: mailroom.CategoryMarketing,
		Tags: map[string]string{"kind": "receipt", "a": "<b>"}, Template: &mailroom.TemplateRef{ID: "tpl_01", Name: "receipt", Version: 3},
		IdempotencyKey: "order-1042", CreatedAt: wireT1, ScheduledAt: ptr(wireT2), RequireTLS: true,
		Recipients: []*mailroom.Recipient{
			{Address: "ann@example.net", Status: mailroom.RecipientDelivered, Attempts: 1, LastAttemptAt: ptr(wireT3),
				SMTPCode: 250, SMTPResponse: "2.0.0 OK", MX: "mx.example.net", Site: "mx.example.net", LastDeferralReason: mailroom.DeferThrottled,
				TLS: &mailroom.TLSInfo{Version: "TLS1.3", Cipher: "TLS_AES_128_GCM_SHA256", Verified: true, Policy: mailroom.TLSPolicyRequireTLS}},
			{Address: "bob@example.net", Status: mailroom.RecipientDeferred, Attempts: 2, LastAttemptAt: ptr(wireT3), NextAttemptAt: ptr(wireT4),
				SMTPCode: 451, SMTPResponse: "4.7.1 try later", MX: "mx.example.net", Unencrypted: true, Site: "google",
				LastDeferralReason: mailroom.DeferGreylisted},
			{Address: "cc@example.org", Status: mailroom.RecipientBounced, Attempts: 1, SMTPCode: 550},
			{Address: "audit@example.com", Status: mailroom.RecipientSuppressed},
		}}
	scheduled := &mailroom.Message{ID: "msg_03", Status: mailroom.MessageScheduled, From: mailroom.Address{Address: "a@example.com"},
		To: []mailroom.Address{{Address: "b@example.net"}}, Subject: "Later", Category: mailroom.CategoryTransactional,
		Tags: map[string]string{}, CreatedAt: wireT1, ScheduledAt: ptr(wireT3),
		Recipients: []*mailroom.Recipient{{Address: "b@example.net", Status: mailroom.RecipientScheduled, NextAttemptAt: ptr(wireT3)}}}
	events := []*mailroom.Event{
		{ID: "evt_01", Type: "email.queued", CreatedAt: wireT1, MessageID: "msg_02", Recipient: "ann@example.net",
			Data: json.RawMessage(`{"messageId":"msg_02","recipient":"ann@example.net","from":"orders@example.com","subject":"Hi","tags":{},"attempt":0}`)},
		{ID: "evt_02", Type: "email.delivered", CreatedAt: wireT3, MessageID: "msg_02", Recipient: "ann@example.net",
			Data: json.RawMessage("{ \"spaced\" : [1, 2] ,\n \"html\":\"<b>&</b>\" }")},
		{ID: "evt_03", Type: "email.canceled", CreatedAt: wireT4, MessageID: "msg_02"},
	}

	// A tracked message: opened twice and clicked by one recipient, one
	// of its links never clicked; its timeline holds the events the
	// tracking service writes (mailroom.NewEngagementEvent).
	tracked := &mailroom.Message{ID: "msg_04", Status: mailroom.MessageDelivered, From: mailroom.Address{Address: "a@example.com"},
		To: []mailroom.Address{{Address: "ann@example.net"}, {Address: "bob@example.net"}}, Subject: "Tracked", Category: mailroom.CategoryTransactional,
		CreatedAt: wireT1, Tracking: mailroom.Tracking{Opens: true, Clicks: true},
		Links: []mailroom.TrackedLink{{URL: "https://shop.example/o?id=1&x=<2>#frag", Clicks: 3}, {URL: "https://ünï.example/pfad", Clicks: 0}},
		Recipients: []*mailroom.Recipient{
			{Address: "ann@example.net", Status: mailroom.RecipientDelivered, Attempts: 1, LastAttemptAt: ptr(wireT1), SMTPCode: 250, Opens: 2, Clicks: 3},
			{Address: "bob@example.net", Status: mailroom.RecipientDelivered, Attempts: 1, LastAttemptAt: ptr(wireT1), SMTPCode: 250},
		}}
	engagement := func(id string, hit *mailroom.EngagementHit) *mailroom.Event {
		e := mailroom.NewEngagementEvent(tracked.Summary(), tracked.Recipients[0], hit)
		// As storage gives it back: its data as JSON.
		data, err := json.Marshal(e.Email)
		if err != nil {
			panic(err)
		}
		e.ID, e.Data, e.Email = id, data, nil
		return e
	}
	trackedEvents := []*mailroom.Event{
		engagement("evt_10", &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: "msg_04", Recipient: "ann@example.net",
			UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) \"quoted\" <b>", IP: "192.0.2.0", At: wireT2}),
		engagement("evt_11", &mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: "msg_04", Recipient: "ann@example.net",
			URL: tracked.Links[0].URL, UserAgent: "Scanner/1.0", IP: "2001:db8:1::", Machine: true, At: wireT2}),
	}

	accountEvents := []*mailroom.Event{
		events[0],
		{ID: "evt_04", Type: "domain.verified", CreatedAt: wireT2,
			Data: json.RawMessage(`{"domain":"example.com","status":"verified","records":[]}`)},
		{ID: "evt_05", Type: "webhook.test", CreatedAt: wireT3},
	}

	suppressions := []*mailroom.Suppression{
		{Address: "ann@example.net", Reason: mailroom.SuppressedManual, CreatedAt: wireT1},
		{Address: "bob@example.net", Reason: mailroom.SuppressedHardBounce, MessageID: "msg_02", CreatedAt: wireT3},
	}

	tplFull := &mailroom.Template{ID: "tpl_01", Name: "receipt", Description: "The receipt", Subject: "Receipt {{order.id}}",
		HTML: "<p>{{customer.name}} & co</p>", Text: "Thanks {{customer.name}}", From: "Shop <orders@example.com>",
		Layout: &mailroom.TemplateRef{ID: "tpl_02", Name: "layout", Version: 7}, Version: 3,
		Variables: []string{"customer.name", "order.id"}, CreatedAt: wireT1, UpdatedAt: wireT3}
	tplBare := &mailroom.Template{ID: "tpl_03", Name: "bare", Subject: "Hello", Text: "Hi", Version: 1, CreatedAt: wireT2, UpdatedAt: wireT2}
	tplHTML := &mailroom.Template{ID: "tpl_04", Name: "html-only", Subject: "Hello", HTML: "<p>Hi</p>", Version: 2,
		Variables: []string{}, CreatedAt: wireT2, UpdatedAt: wireT4}

	now := wireT2
	hookOn := &mailroom.WebhookEndpoint{ID: "wh_01", URL: "https://hooks.example.com/in?a=1&b=<2>", Description: "main",
		Events: []string{"email.delivered", "email.bounced"}, Enabled: true, CreatedAt: wireT1, UpdatedAt: wireT3}
	hookAll := &mailroom.WebhookEndpoint{ID: "wh_02", URL: "https://hooks.example.com/all", Events: []string{"*"}, Enabled: true,
		PreviousSecretSealed: []byte("old"), PreviousSecretUntil: ptr(wireT3), CreatedAt: wireT1, UpdatedAt: wireT1}
	hookRotationOver := &mailroom.WebhookEndpoint{ID: "wh_03", URL: "https://hooks.example.com/over", Events: nil, Enabled: true,
		PreviousSecretSealed: []byte("old"), PreviousSecretUntil: ptr(wireT1), CreatedAt: wireT1, UpdatedAt: wireT1}
	hookOff := &mailroom.WebhookEndpoint{ID: "wh_04", URL: "https://hooks.example.com/off", Events: []string{"domain.failed"},
		CreatedAt: wireT1, UpdatedAt: wireT4}
	hookFailing := &mailroom.WebhookEndpoint{ID: "wh_05", URL: "https://hooks.example.com/failing", Events: []string{"*"},
		DisabledReason: "failing since 2026-11-20: every attempt for 5 days failed", CreatedAt: wireT1, UpdatedAt: wireT4}

	attempts := []*mailroom.WebhookAttempt{
		{ID: "wha_01", EventID: "evt_01", EventType: "email.queued", Attempt: 1, Status: mailroom.WebhookAttemptSucceeded,
			StatusCode: 204, Duration: 1234567 * time.Microsecond, CreatedAt: wireT1},
		{ID: "wha_02", EventID: "evt_02", EventType: "email.delivered", Attempt: 3, Status: mailroom.WebhookAttemptFailed,
			StatusCode: 500, Error: "answered 500", Duration: 999 * time.Microsecond, ResponseBody: "<html>oops & \"bad\"</html>",
			CreatedAt: wireT3, NextAttemptAt: ptr(wireT4)},
		{ID: "wha_03", EventID: "evt_03", EventType: "webhook.test", Attempt: 1, Status: mailroom.WebhookAttemptFailed,
			Error: "dial tcp: connection refused", CreatedAt: wireT2},
	}

	long := strings.Repeat("é", 700) // 1,400 bytes: over the message bound
	validation := &mailroom.Error{Code: mailroom.ECodeValidation, Message: "The request has 3 problems.", Details: []mailroom.FieldError{
		{Field: "to", Index: ptr(1), Message: "not an email address"},
		{Field: "subject", Message: strings.Repeat("x", 600)},
		{Field: "attachments[0].filename", Message: "contains a <slash> & \"quotes\""},
	}}

	return []wireCase{
		{"apikey-active", writes(200, func() any { return toAPIKey(activeKey) })},
		{"apikey-revoked", writes(200, func() any { return toAPIKey(revokedKey) })},
		{"apikey-noscopes", writes(200, func() any { return toAPIKey(noScopes) })},
		{"apikey-restricted", writes(200, func() any {
			k := *activeKey
			k.Domain = "shop.example"
			return toAPIKey(&k)
		})},
		{"apikey-created", writes(201, func() any {
			return api.APIKeyCreated{APIKey: toAPIKey(activeKey), Key: "mailroom_k1234567890abcde_secret"}
		})},
		{"apikey-list", writes(200, func() any {
			return newList([]api.APIKey{toAPIKey(activeKey), toAPIKey(revokedKey)}, scopeAPIKeys, "c1")
		})},

		// Received mail: every field set (in a zone other than UTC, with a
		// fraction of a second), and a malformed message with nil lists,
		// no bodies and no verdicts yet.
		{"received-full", writes(200, func() any {
			return toReceivedMessage(&mailroom.ReceivedMessage{ID: "rcv_01", MailFrom: "b@sender.example", Recipients: []string{"in+t@in.example"},
				From: "Ann <ann@sender.example>", To: []string{"in+t@in.example"}, Cc: []string{"c@example.org"}, Subject: "Ünïcode <b>&",
				MessageID: "<1@sender.example>", RemoteIP: "2001:db8::1", Helo: "mail.sender.example",
				ReceivedAt: wireT1.In(time.FixedZone("x", 3600)).Add(500 * time.Millisecond),
				Authentication: mailroom.ReceivedAuthentication{SPF: mailroom.AuthPass, DKIM: mailroom.AuthFail, DMARC: mailroom.AuthSoftFail,
					DKIMSignatures: []mailroom.DKIMSignatureResult{{Domain: "sender.example", Selector: "s1", Result: mailroom.AuthFail}}},
				Headers: []mailroom.ReceivedHeader{{Name: "Subject", Value: "Ünïcode <b>&"}}, Text: "hi\n", HTML: "<p>hi</p>",
				Attachments: []mailroom.ReceivedAttachment{{ID: "att_1", Filename: "a.pdf", ContentType: "application/pdf", Size: 4, ContentID: "x@y",
					Content: []byte("%PDF")}}, Size: 1234, Raw: []byte("never shown")})
		})},
		{"received-malformed-list", writes(200, func() any {
			m := &mailroom.ReceivedMessage{ID: "rcv_02", ReceivedAt: wireT2, ParseProblem: "the header does not end", Size: 10}
			return newList([]api.ReceivedSummary{toReceivedSummary(m)}, "received", "c1")
		})},

		{"domain-pending", writes(201, func() any { return toDomain(pending) })},
		{"domain-verified", writes(200, func() any { return toDomain(verified) })},
		{"domain-norecords", writes(200, func() any { return toDomain(noRecords) })},
		{"domain-rotated", writes(200, func() any { return toDomain(rotated) })},
		{"domain-tracking", writes(200, func() any {
			d := *verified
			d.Tracking = mailroom.Tracking{Opens: true, Clicks: false}
			return toDomain(&d)
		})},
		{"domain-list-empty", writes(200, func() any { return newList([]api.Domain(nil), scopeDomains, "") })},

		{"message-plain", writes(200, func() any { return toMessage(plain, nil) })},
		{"message-full", writes(200, func() any { return toMessage(full, events) })},
		{"message-tracked", writes(200, func() any { return toMessage(tracked, trackedEvents) })},
		{"events-engagement", writes(200, func() any {
			return newList([]api.EventRecord{toEventRecord(trackedEvents[0]), toEventRecord(trackedEvents[1])}, "events", "")
		})},
		{"message-scheduled", writes(200, func() any { return toMessage(scheduled, nil) })},
		{"message-list", writes(200, func() any {
			return newList([]api.Message{toMessage(plain, nil), toMessage(full, nil)}, "log", "c2")
		})},

		{"events-list", writes(200, func() any {
			out := make([]api.EventRecord, len(accountEvents))
			for i, e := range accountEvents {
				out[i] = toEventRecord(e)
			}
			return newList(out, "events", "")
		})},
		{"event-test", writes(202, func() any { return toEventRecord(accountEvents[2]) })},
		{"replay", writes(202, func() any { return api.ReplayResult{EventID: "evt_01", Endpoints: []string{"wh_01", "wh_02"}} })},
		{"replay-none", writes(202, func() any { return api.ReplayResult{EventID: "evt_01", Endpoints: nil} })},

		{"suppression-manual", writes(201, func() any { return toSuppression(suppressions[0]) })},
		{"suppression-list", writes(200, func() any {
			return newList([]api.Suppression{toSuppression(suppressions[0]), toSuppression(suppressions[1])}, scopeSuppressions, "c3")
		})},

		{"template-full", writes(201, func() any { return toTemplate(tplFull) })},
		{"template-bare", writes(200, func() any { return toTemplate(tplBare) })},
		{"template-htmlonly", writes(200, func() any { return toTemplate(tplHTML) })},
		{"template-list", writes(200, func() any {
			return newList(toTemplateSummaries([]*mailroom.Template{tplFull, tplBare, tplHTML}), scopeTemplates, "")
		})},
		{"template-list-empty", writes(200, func() any { return newList(toTemplateSummaries(nil), scopeTemplates, "") })},
		{"template-rendered", writes(200, func() any {
			return api.TemplateRendered{Subject: "Receipt 1042", HTML: "", Text: "Thanks <Ann> & co"}
		})},

		{"webhook-on", writes(200, func() any { return toWebhook(hookOn, now) })},
		{"webhook-rotating", writes(200, func() any { return toWebhook(hookAll, now) })},
		{"webhook-rotation-over", writes(200, func() any { return toWebhook(hookRotationOver, now) })},
		{"webhook-off", writes(200, func() any { return toWebhook(hookOff, now) })},
		{"webhook-resend", writes(200, func() any {
			e := *hookOn
			e.Format = mailroom.WebhookFormatResend
			return toWebhook(&e, now)
		})},
		{"webhook-failing", writes(200, func() any { return toWebhook(hookFailing, now) })},
		{"webhook-created", writes(201, func() any {
			return api.WebhookCreated{Webhook: toWebhook(hookOn, now), Secret: "whsec_c2VjcmV0"}
		})},
		{"webhook-list", writes(200, func() any {
			return newList([]api.Webhook{toWebhook(hookOn, now), toWebhook(hookFailing, now)}, scopeWebhooks, "c4")
		})},
		{"webhook-secret", writes(200, func() any {
			out, err := toWebhookSecret("whsec_bmV3", hookAll)
			if err != nil {
				panic(err)
			}
			return out
		})},
		{"webhook-attempts", writes(200, func() any {
			out := make([]api.WebhookAttempt, len(attempts))
			for i, a := range attempts {
				out[i] = toWebhookAttempt(a)
			}
			return newList(out, scopeWebhooks, "c5")
		})},

		{"send-queued", writes(200, func() any {
			return toSendResult(mailroom.AcceptResult{MessageID: "msg_01", Status: mailroom.MessageQueued})
		})},
		{"send-scheduled", writes(200, func() any {
			return toSendResult(mailroom.AcceptResult{MessageID: "msg_03", Status: mailroom.MessageScheduled})
		})},
		{"send-duplicate", writes(200, func() any {
			return toSendResult(mailroom.AcceptResult{MessageID: "msg_01", Status: mailroom.MessageScheduled, Duplicate: true})
		})},
		{"batch", writes(200, func() any {
			return toBatchResult(req, []mailroom.AcceptOutcome{
				{Result: mailroom.AcceptResult{MessageID: "msg_01", Status: mailroom.MessageQueued}},
				{Err: validation},
				{Err: mailroom.Errorf(mailroom.ECodeIdempotencyKeyReused, "The key was used with another request.")},
				{Result: mailroom.AcceptResult{MessageID: "msg_03", Status: mailroom.MessageScheduled}},
				{Err: errors.New("a bug")},
				{Result: mailroom.AcceptResult{MessageID: "msg_01", Duplicate: true}},
			})
		})},
		{"batch-empty", writes(200, func() any { return toBatchResult(req, nil) })},

		{"health", writes(200, func() any { return api.Status{Status: api.StatusOK} })},
		{"unsubscribed", writes(200, func() any { return api.Unsubscribed{Status: "unsubscribed", Address: "ann@example.net"} })},

		{"error-validation", writesError(validation)},
		{"error-plain", writesError(mailroom.Errorf(mailroom.ECodeNotFound, "No message %q in this account.", "msg_<x>"))},
		{"error-long", writesError(mailroom.Errorf(mailroom.ECodeInvalidJSON, "%s", long))},
		{"error-internal", writesError(errors.New("a bug"))},
		{"error-unknown-code", writesError(&mailroom.Error{Code: "no_such_code", Message: "?"})},
	}
}

// The api request types a handler decodes into read every body as the
// local structs they replaced did, under the same strict decoder: the same
// value, or the same error (code, message and details).
func TestWireRequestsDecodeAsBefore(t *testing.T) {
	type domainBefore struct {
		Name string `json:"name"`
	}
	type suppressionBefore struct {
		Address string `json:"address"`
	}
	bodies := []string{
		`{"name":"example.com","address":"a@example.com"}`,
		`{"name":"example.com"}`, `{"address":"a@example.com"}`, `{}`,
		`{"Name":"example.com"}`, `{"ADDRESS":"a@example.com"}`, `{"ſame":"x"}`,
		`{"name":"a","name":"b"}`, `{"address":"a","address":"b"}`,
		`{"name":1}`, `{"address":["a"]}`, `{"name":null}`, `{"address":{}}`, `{"name":true}`,
		`{"name":"x","extra":1}`, `{"address":"x","nested":{"deep":[1]}}`,
		`[]`, `"x"`, `null`, `{"name":"x"} {}`, `{"name":"x"`, "{\"name\":\"\xff\"}", `{"address":"\u00e9"}`,
	}
	check := func(body string, before, after any) {
		t.Helper()
		errBefore, errAfter := unmarshalRequest([]byte(body), before), unmarshalRequest([]byte(body), after)
		if (errBefore == nil) != (errAfter == nil) || (errBefore != nil && !sameError(errBefore, errAfter)) {
			t.Errorf("%s into %T: %v; before, into %T: %v", body, after, errAfter, before, errBefore)
		}
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		if !bytes.Equal(a, b) {
			t.Errorf("%s into %T: %s; before, into %T: %s", body, after, a, before, b)
		}
	}
	for _, body := range bodies {
		check(body, &domainBefore{}, &api.DomainCreateRequest{})
		check(body, &suppressionBefore{}, &api.SuppressionRequest{})
	}
}

func sameError(a, b error) bool {
	var ea, eb *mailroom.Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return a.Error() == b.Error()
	}
	ja, _ := json.Marshal(toErrorBody(ea))
	jb, _ := json.Marshal(toErrorBody(eb))
	return bytes.Equal(ja, jb)
}

// A rotation always leaves the previous secret an expiry; a store that
// did not is a bug, answered as one rather than with an empty time.
func TestWebhookSecretWithoutExpiry(t *testing.T) {
	if _, err := toWebhookSecret("whsec_x", &mailroom.WebhookEndpoint{ID: "wh_1"}); err == nil {
		t.Fatal("a rotation without the previous secret's expiry was answered")
	}
}
