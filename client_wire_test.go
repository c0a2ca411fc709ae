package mailroom_test

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/template"
	"github.com/mailroom/mailroom/webhook"
)

// The Go client's wire types and webhook verification against what the
// service itself writes and signs, so that they cannot drift apart.

// The exported shapes of the root package that package api repeats: the
// same JSON names and, for what the service writes, left out when unset in
// the same cases (omitempty means nothing to the service's decoding of a
// request).
func TestClientTypesMatchTheServers(t *testing.T) {
	for _, pair := range []struct {
		api, server reflect.Type
		writes      bool
	}{
		{reflect.TypeFor[api.EmailEventData](), reflect.TypeFor[mailroom.EmailEventData](), true},
		{reflect.TypeFor[api.DNSRecord](), reflect.TypeFor[mailroom.DNSRecord](), true},
		{reflect.TypeFor[api.ReceivedEventData](), reflect.TypeFor[mailroom.ReceivedEventData](), true},
		{reflect.TypeFor[api.ReceivedAuthentication](), reflect.TypeFor[mailroom.ReceivedAuthentication](), true},
		{reflect.TypeFor[api.DKIMSignatureResult](), reflect.TypeFor[mailroom.DKIMSignatureResult](), true},
		// The event's attachments leave out a contentId the part lacks;
		// the API's show it null.
		{reflect.TypeFor[api.ReceivedAttachment](), reflect.TypeFor[mailroom.ReceivedAttachment](), false},
		{reflect.TypeFor[api.TemplateRef](), reflect.TypeFor[mailroom.TemplateRef](), true},
		{reflect.TypeFor[api.ErrorDetail](), reflect.TypeFor[mailroom.FieldError](), true},
		{reflect.TypeFor[api.SendRequest](), reflect.TypeFor[mailroom.SendRequest](), false},
		{reflect.TypeFor[api.Attachment](), reflect.TypeFor[mailroom.SendAttachment](), false},
		{reflect.TypeFor[api.TemplateRequest](), reflect.TypeFor[template.Request](), false},
		{reflect.TypeFor[api.WebhookUpdateRequest](), reflect.TypeFor[webhook.Request](), false},
		{reflect.TypeFor[api.RescheduleRequest](), reflect.TypeFor[send.RescheduleRequest](), false},
	} {
		a, s := jsonFields(pair.api), jsonFields(pair.server)
		for name, f := range a {
			sf, ok := s[name]
			switch {
			case !ok:
				t.Errorf("%s has %s, %s does not", pair.api, name, pair.server)
			case pair.writes && f.omitempty != sf.omitempty:
				t.Errorf("%s.%s: omitempty %v, the server's %s: %v", pair.api, name, f.omitempty, pair.server, sf.omitempty)
			}
		}
		for name := range s {
			if _, ok := a[name]; !ok {
				t.Errorf("%s has %s, %s does not", pair.server, name, pair.api)
			}
		}
	}
}

// The enumerations of package api are the service's.
func TestClientEnumsMatchTheServers(t *testing.T) {
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: package api %q, the service %q", what, got, want)
		}
	}
	check("event types", strs(api.EventTypes()), mailroom.EventTypes)
	check("audit actions", strs(api.AuditActions()), strs(mailroom.AuditActions))
	check("audit actors", strs([]api.AuditActorType{api.AuditByAPIKey, api.AuditByCLI, api.AuditBySystem}),
		strs([]mailroom.AuditActorType{mailroom.AuditByAPIKey, mailroom.AuditByCLI, mailroom.AuditBySystem}))
	check("the subscription to all", []string{string(api.EventAll)}, []string{mailroom.AllEventTypes})
	check("scopes", strs(api.Scopes()), strs(mailroom.AllScopes))
	check("key statuses", strs([]api.KeyStatus{api.KeyActive, api.KeyRevoked}), []string{mailroom.KeyStatusActive, mailroom.KeyStatusRevoked})
	check("categories", strs([]api.Category{api.CategoryTransactional, api.CategoryMarketing}), strs([]mailroom.Category{mailroom.CategoryTransactional, mailroom.CategoryMarketing}))
	for _, s := range api.MessageStatuses() {
		if !mailroom.MessageStatus(s).Valid() {
			t.Errorf("message status %q is not the service's", s)
		}
	}
	check("recipient statuses", strs(api.RecipientStatuses()), strs([]mailroom.RecipientStatus{mailroom.RecipientQueued, mailroom.RecipientDeferred,
		mailroom.RecipientDelivered, mailroom.RecipientBounced, mailroom.RecipientFailed, mailroom.RecipientSuppressed, mailroom.RecipientComplained, mailroom.RecipientCanceled}))
	check("domain statuses", strs([]api.DomainStatus{api.DomainPending, api.DomainVerified, api.DomainTemporaryFailure, api.DomainFailed}),
		strs([]mailroom.DomainStatus{mailroom.DomainPending, mailroom.DomainVerified, mailroom.DomainTemporaryFailure, mailroom.DomainFailed}))
	check("suppression reasons", strs([]api.SuppressionReason{api.SuppressedHardBounce, api.SuppressedComplaint, api.SuppressedManual, api.SuppressedUnsubscribe}),
		strs([]mailroom.SuppressionReason{mailroom.SuppressedHardBounce, mailroom.SuppressedComplaint, mailroom.SuppressedManual, mailroom.SuppressedUnsubscribe}))
	check("deferral reasons", strs(api.DeferralReasons()), strs(mailroom.DeferralReasons))
	check("domain health checks", []string{api.DomainCheckDMARC, api.DomainCheckSPFCoversSending, api.DomainCheckFCrDNS,
		api.DomainCheckReturnPathMX, api.DomainCheckMTASTS, api.DomainCheckTLSRPT, api.DomainCheckDNSBL}, strs(mailroom.HealthCheckNames))
	check("domain health statuses", strs([]api.DomainHealthStatus{api.DomainHealthPass, api.DomainHealthWarn, api.DomainHealthFail}),
		strs([]mailroom.HealthStatus{mailroom.HealthPass, mailroom.HealthWarn, mailroom.HealthFail}))
	check("attempt statuses", strs([]api.AttemptStatus{api.AttemptSucceeded, api.AttemptFailed}),
		strs([]mailroom.WebhookAttemptStatus{mailroom.WebhookAttemptSucceeded, mailroom.WebhookAttemptFailed}))
	check("error codes", []string{api.CodeInvalidJSON, api.CodeValidation, api.CodeMissingAPIKey, api.CodeInvalidAPIKey, api.CodeAPIKeyRevoked,
		api.CodeInsufficientScope, api.CodeDomainNotVerified, api.CodeNotFound, api.CodeMethodNotAllowed, api.CodeIdempotencyKeyReused,
		api.CodeAlreadyExists, api.CodeInvalidState, api.CodePayloadTooLarge, api.CodeUnsupportedMediaType, api.CodeRateLimited,
		api.CodeServiceUnavailable, api.CodeInternal},
		[]string{mailroom.ECodeInvalidJSON, mailroom.ECodeValidation, mailroom.ECodeMissingAPIKey, mailroom.ECodeInvalidAPIKey, mailroom.ECodeAPIKeyRevoked,
			mailroom.ECodeInsufficientScope, mailroom.ECodeDomainNotVerified, mailroom.ECodeNotFound, mailroom.ECodeMethodNotAllowed, mailroom.ECodeIdempotencyKeyReused,
			mailroom.ECodeAlreadyExists, mailroom.ECodeInvalidState, mailroom.ECodePayloadTooLarge, mailroom.ECodeUnsupportedMediaType, mailroom.ECodeRateLimited,
			mailroom.ECodeUnavailable, mailroom.ECodeInternal})
}

// client.VerifyWebhook takes what the service signs (webhook.Sign,
// the dispatcher's signer), with one key and with the two of a rotation,
// and ParseEvent reads the body it sends (webhook.Body).
func TestClientVerifiesWhatTheServiceSigns(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev, err := mailroom.NewEvent("acct_1", mailroom.EventEmailBounced, mailroom.EmailEventData{MessageID: "msg_1", Recipient: "ann@example.net",
		From: "o@shop.example", Subject: "Hi", Tags: map[string]string{"kind": "receipt"},
		EmailEventDetail: mailroom.EmailEventDetail{SMTPCode: 550, SMTPResponse: "550 5.1.1 unknown", BounceType: "hard", Attempt: 1}},
		now.Add(123*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	body := webhook.Body(ev)
	oldKey, oldSecret := webhook.NewSecret()
	newKey, newSecret := webhook.NewSecret()
	header := func(keys ...[]byte) http.Header {
		h := http.Header{}
		h.Set("webhook-id", ev.ID)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("webhook-signature", webhook.Sign(keys, ev.ID, now, body))
		return h
	}
	for _, secret := range []string{oldSecret, newSecret} {
		if err := client.VerifyWebhookAt(secret, header(newKey, oldKey), body, now.Add(time.Minute)); err != nil {
			t.Errorf("a rotation's signatures with %s: %v", secret[:10], err)
		}
	}
	if err := client.VerifyWebhookAt(newSecret, header(newKey), body, now); err != nil {
		t.Errorf("one signature: %v", err)
	}
	if err := client.VerifyWebhookAt(oldSecret, header(newKey), body, now); !errors.Is(err, client.ErrWebhookNoMatchingSignature) {
		t.Errorf("another secret: %v", err)
	}
	tampered := bytes.Replace(body, []byte("ann@"), []byte("eve@"), 1)
	if err := client.VerifyWebhookAt(newSecret, header(newKey), tampered, now); !errors.Is(err, client.ErrWebhookNoMatchingSignature) {
		t.Errorf("a tampered body: %v", err)
	}
	if err := client.VerifyWebhookAt(newSecret, header(newKey), body, now.Add(webhook.Tolerance+time.Second)); !errors.Is(err, client.ErrWebhookTooOld) {
		t.Errorf("an old request: %v", err)
	}
	// The service's own verifier agrees.
	if err := webhook.Verify(newKey, ev.ID, strconv.FormatInt(now.Unix(), 10), header(newKey, oldKey).Get("webhook-signature"), body, now); err != nil {
		t.Errorf("webhook.Verify: %v", err)
	}
	if client.WebhookTolerance != webhook.Tolerance {
		t.Errorf("tolerance %v, the service's %v", client.WebhookTolerance, webhook.Tolerance)
	}

	got, err := client.ParseEvent(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != client.EventEmailBounced || !got.Timestamp.Equal(now.Add(123*time.Millisecond)) {
		t.Errorf("event %+v", got)
	}
	d, err := got.EmailData()
	if err != nil {
		t.Fatal(err)
	}
	want := api.EmailEventData{MessageID: "msg_1", Recipient: "ann@example.net", From: "o@shop.example", Subject: "Hi",
		Tags: map[string]string{"kind": "receipt"}, SMTPCode: 550, SMTPResponse: "550 5.1.1 unknown", BounceType: api.BounceHard, Attempt: 1}
	if !reflect.DeepEqual(*d, want) {
		t.Errorf("data %+v, want %+v", *d, want)
	}
}
