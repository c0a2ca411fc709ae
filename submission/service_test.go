package submission_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/submission"
)

// The Submissions service over fakes: the header handling of SMTP
// submission (docs/api.md "SMTP submission") without storage. storetest
// runs it over both engines with the real signer.

var subNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const subAccount = "acct_01kaxyz0000000000000000000"

type subKeys struct {
	mailroom.APIKeyStore
	mu   sync.Mutex
	keys map[string]*mailroom.APIKey
}

func (s *subKeys) APIKey(_ context.Context, id string) (*mailroom.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "no key")
	}
	c := *k
	return &c, nil
}

type subDomains struct {
	mailroom.DomainStore
	status map[string]mailroom.DomainStatus
}

func (s *subDomains) DomainStatus(_ context.Context, _, name string) (mailroom.DomainStatus, mailroom.Tracking, error) {
	st, ok := s.status[name]
	if !ok {
		return "", mailroom.Tracking{}, mailroom.Errorf(mailroom.ECodeNotFound, "no domain")
	}
	return st, mailroom.Tracking{}, nil
}

func (s *subDomains) Domain(_ context.Context, accountID, name string) (*mailroom.Domain, error) {
	if _, ok := s.status[name]; !ok {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "no domain")
	}
	return &mailroom.Domain{ID: "dom_" + name, AccountID: accountID, Name: name, DKIMSelector: "sel",
		DKIMPrivateKeySealed: []byte("key of " + name)}, nil
}

type plainSealer struct{}

func (plainSealer) Seal(p, _ []byte) []byte          { return p }
func (plainSealer) Open(s, _ []byte) ([]byte, error) { return s, nil }

// subSigner puts a recognisable field in front, as a DKIM-Signature is.
type subSigner struct{}

func (subSigner) SignRaw(raw []byte, key mailroom.DKIMKey) ([]byte, error) {
	return append([]byte("DKIM-Signature: d="+key.Domain+"; k="+string(key.PrivateKeyPKCS8)+"\r\n"), raw...), nil
}

// subMessages keeps accepted messages and answers idempotency keys as
// storage does.
type subMessages struct {
	mailroom.MessageStore
	mu       sync.Mutex
	accepted []*mailroom.Message
	byKey    map[string]*mailroom.Message
}

func (s *subMessages) AcceptMessage(_ context.Context, m *mailroom.Message) (mailroom.AcceptResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first, ok := s.byKey[m.IdempotencyKey]; ok && m.IdempotencyKey != "" {
		return mailroom.KeyedMessage{ID: first.ID, Status: first.Status, RequestDigest: first.RequestDigest}.Answer(m.RequestDigest)
	}
	if s.byKey == nil {
		s.byKey = map[string]*mailroom.Message{}
	}
	s.byKey[m.IdempotencyKey] = m
	s.accepted = append(s.accepted, m)
	return mailroom.AcceptResult{MessageID: m.ID, Status: mailroom.MessageQueued}, nil
}

func (s *subMessages) IdempotentMessage(_ context.Context, _, key string, digest []byte) (mailroom.AcceptResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.byKey[key]
	if !ok {
		return mailroom.AcceptResult{}, mailroom.Errorf(mailroom.ECodeNotFound, "none")
	}
	return mailroom.KeyedMessage{ID: first.ID, Status: first.Status, RequestDigest: first.RequestDigest}.Answer(digest)
}

type subWorld struct {
	svc      *submission.Service
	keys     *subKeys
	messages *subMessages
	key      *mailroom.APIKey
	password string
	queued   int
}

func newSubWorld(t *testing.T) *subWorld {
	t.Helper()
	w := &subWorld{keys: &subKeys{keys: map[string]*mailroom.APIKey{}}, messages: &subMessages{}}
	w.password, w.key = mailroom.NewAPIKey(subAccount, "smtp", mailroom.Scopes{mailroom.ScopeSend}, subNow)
	w.keys.keys[w.key.KeyID] = w.key
	w.svc = &submission.Service{
		Auth:  &apikey.Authenticator{Keys: w.keys, Now: func() time.Time { return subNow }},
		Store: w.messages,
		Domains: &domain.Service{Sealer: plainSealer{}, Store: &subDomains{status: map[string]mailroom.DomainStatus{
			"shop.example": mailroom.DomainVerified, "mail.shop.example": mailroom.DomainVerified,
			"pending.example": mailroom.DomainPending}}},
		Signer: subSigner{},
		Now:    func() time.Time { return subNow },
		Queued: func() { w.queued++ },
	}
	return w
}

func (w *subWorld) submit(mailFrom string, rcpts []string, raw string) (string, error) {
	return w.svc.Submit(context.Background(), w.key, submission.Envelope{MailFrom: mailFrom, Rcpts: rcpts}, strings.NewReader(raw))
}

// last is the message accepted last.
func (w *subWorld) last(t *testing.T) *mailroom.Message {
	t.Helper()
	if len(w.messages.accepted) == 0 {
		t.Fatal("nothing was accepted")
	}
	return w.messages.accepted[len(w.messages.accepted)-1]
}

// unsigned is what was stored, less the signer's field.
func unsigned(t *testing.T, m *mailroom.Message) string {
	t.Helper()
	sig, rest, ok := strings.Cut(string(m.Raw), "\r\n")
	if !ok || sig != "DKIM-Signature: d="+m.Domain+"; k=key of "+m.Domain {
		t.Fatalf("stored bytes are not signed with %s's key: %q", m.Domain, sig)
	}
	return rest
}

// body is a body no MIME parser would leave alone: trailing whitespace, a
// line that would need dot-stuffing, 8-bit bytes, a line that looks like a
// header field, and no final empty line.
const subBody = "Hello Ann,  \r\n\t tabbed\r\n.leading dot\r\n\r\n\xff\xfe 8-bit \xe2\x82\xac\r\nBcc: not a header\r\nlast line\r\n"

func TestSubmitHeaderHandling(t *testing.T) {
	w := newSubWorld(t)
	header := "Received: from app.internal by app.internal; Sun, 22 Nov 2026 09:59:59 +0000\r\n" +
		"Return-Path: <bounce@app.internal>\r\n" +
		"From: Shop <orders@shop.example>\r\n" +
		"To: Ann <ann@x.example>, dora@x.example\r\n" +
		"Cc: =?utf-8?q?C=C3=A4rl?= <carl@y.example>\r\n" +
		"Bcc: hidden@z.example,\r\n\tother@z.example\r\n" +
		"Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?= and\r\n more\r\n" +
		"BCC: second@z.example\r\n" +
		"Idempotency-Key: order-42\r\n" +
		"X-Mailer: PHPMailer 6.9  \r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n"
	rcpts := []string{"ann@x.example", "Carl@Y.example", "hidden@z.example", "ANN@x.example", "bob@w.example"}
	id, err := w.submit("bounce@shop.example", rcpts, header+"\r\n"+subBody)
	if err != nil {
		t.Fatal(err)
	}
	m := w.last(t)
	if id != m.ID || !strings.HasPrefix(id, "msg_") || w.queued != 1 {
		t.Fatalf("id %q, accepted %q, queued %d", id, m.ID, w.queued)
	}
	ulid := strings.TrimPrefix(id, "msg_")
	// The trace fields (Received, Return-Path) are gone, as the Bcc
	// fields and the Idempotency-Key are.
	want := "From: Shop <orders@shop.example>\r\n" +
		"To: Ann <ann@x.example>, dora@x.example\r\n" +
		"Cc: =?utf-8?q?C=C3=A4rl?= <carl@y.example>\r\n" +
		"Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?= and\r\n more\r\n" +
		"X-Mailer: PHPMailer 6.9  \r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Message-ID: <" + ulid + "@shop.example>\r\n" +
		"Date: Sun, 22 Nov 2026 10:00:00 +0000\r\n" +
		"\r\n" + subBody
	if got := unsigned(t, m); got != want {
		t.Fatalf("stored message:\n%q\nwant\n%q", got, want)
	}

	if m.AccountID != subAccount || m.Domain != "shop.example" || m.From != (mailroom.Address{Name: "Shop", Address: "orders@shop.example"}) ||
		m.Subject != "Grüße and more" || m.Category != mailroom.CategoryTransactional || len(m.Tags) != 0 ||
		m.MessageIDHeader != ulid+"@shop.example" || m.IdempotencyKey != "order-42" || len(m.RequestDigest) != 32 ||
		!m.CreatedAt.Equal(subNow) || m.ScheduledAt != nil {
		t.Fatalf("message fields: %+v", m)
	}
	var got []string
	for _, r := range m.Recipients {
		got = append(got, string(r.Kind)+":"+r.Address)
	}
	// The envelope decides who gets it; the header only which list the
	// log shows each under. A RCPT given twice is one recipient.
	if want := "to:ann@x.example cc:Carl@y.example bcc:hidden@z.example bcc:bob@w.example"; strings.Join(got, " ") != want {
		t.Fatalf("recipients %s, want %s", strings.Join(got, " "), want)
	}
	if fmt.Sprint(m.To, m.Cc, m.Bcc) != "[Ann <ann@x.example>] [Cärl <Carl@y.example>] [hidden@z.example bob@w.example]" {
		t.Fatalf("log lists: to %v cc %v bcc %v", m.To, m.Cc, m.Bcc)
	}
}

// A Message-ID and a Date the client wrote are kept as they are, and none
// is added; the log's Message-ID is the client's.
func TestSubmitKeepsMessageIDAndDate(t *testing.T) {
	w := newSubWorld(t)
	raw := "Date: Sat, 21 Nov 2026 08:00:00 -0500\r\nmessage-id:   <abc.123@app.example>\r\nFrom: orders@shop.example\r\nTo: ann@x.example\r\nSubject: hi\r\n\r\n" + subBody
	if _, err := w.submit("orders@shop.example", []string{"ann@x.example"}, raw); err != nil {
		t.Fatal(err)
	}
	m := w.last(t)
	if got := unsigned(t, m); got != raw {
		t.Fatalf("stored %q, want it unchanged %q", got, raw)
	}
	if m.MessageIDHeader != "abc.123@app.example" {
		t.Fatalf("Message-ID %q", m.MessageIDHeader)
	}
}

// Bare LF line endings become CRLF, as on the wire; a message that ends
// without a line break gets one; a header with no body gets its empty
// line.
func TestSubmitLineEndings(t *testing.T) {
	w := newSubWorld(t)
	for _, tc := range []struct{ raw, want string }{
		{"From: orders@shop.example\nDate: x\nMessage-ID: <a@b>\n\nline 1\nline 2\n", "From: orders@shop.example\r\nDate: x\r\nMessage-ID: <a@b>\r\n\r\nline 1\r\nline 2\r\n"},
		{"From: orders@shop.example\r\nDate: x\r\nMessage-ID: <a@b>\r\n\r\nno final break", "From: orders@shop.example\r\nDate: x\r\nMessage-ID: <a@b>\r\n\r\nno final break\r\n"},
		{"From: orders@shop.example\r\nDate: x\r\nMessage-ID: <a@b>\r\n", "From: orders@shop.example\r\nDate: x\r\nMessage-ID: <a@b>\r\n\r\n"},
	} {
		if _, err := w.submit("orders@shop.example", []string{"ann@x.example"}, tc.raw); err != nil {
			t.Fatal(err)
		}
		if got := unsigned(t, w.last(t)); got != tc.want {
			t.Errorf("%q became %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// The same Idempotency-Key with the same submission is the first message;
// with another submission it is idempotency_key_reused; nothing more is
// accepted either way.
func TestSubmitIdempotencyKey(t *testing.T) {
	w := newSubWorld(t)
	raw := "From: orders@shop.example\r\nTo: ann@x.example\r\nIdempotency-Key: order-7\r\nSubject: receipt\r\n\r\nThanks.\r\n"
	first, err := w.submit("orders@shop.example", []string{"ann@x.example"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.submit("orders@shop.example", []string{"ann@x.example"}, raw)
	if err != nil || again != first {
		t.Fatalf("retry: %q %v, want %q", again, err, first)
	}
	_, err = w.submit("orders@shop.example", []string{"ann@x.example"}, strings.Replace(raw, "Thanks.", "Thank you.", 1))
	wantSubmitError(t, err, mailroom.ECodeIdempotencyKeyReused, "")
	_, err = w.submit("orders@shop.example", []string{"ann@x.example", "bob@x.example"}, raw)
	wantSubmitError(t, err, mailroom.ECodeIdempotencyKeyReused, "")
	if n := len(w.messages.accepted); n != 1 || w.queued != 1 {
		t.Fatalf("%d messages accepted, %d wake-ups, want 1", n, w.queued)
	}
	if bytes.Contains(w.last(t).Raw, []byte("order-7")) {
		t.Fatal("the Idempotency-Key header was sent")
	}
	_, err = w.submit("orders@shop.example", []string{"ann@x.example"},
		"From: orders@shop.example\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n\r\nx\r\n")
	wantSubmitError(t, err, mailroom.ECodeValidation, "Idempotency-Key")
}

func TestSubmitRefusals(t *testing.T) {
	w := newSubWorld(t)
	ok := "From: orders@shop.example\r\nTo: ann@x.example\r\nSubject: s\r\n\r\nbody\r\n"
	many := make([]string, mailroom.MaxRecipients+1)
	for i := range many {
		many[i] = fmt.Sprintf("user%d@x.example", i)
	}
	for _, tc := range []struct {
		name     string
		mailFrom string
		rcpts    []string
		raw      string
		code     string
		says     string
	}{
		{"From unverified", "orders@shop.example", []string{"a@x.example"}, strings.Replace(ok, "shop.example", "pending.example", 1),
			mailroom.ECodeDomainNotVerified, "The From header's domain pending.example is not verified"},
		{"From unknown", "orders@shop.example", []string{"a@x.example"}, strings.Replace(ok, "shop.example", "elsewhere.example", 1),
			mailroom.ECodeDomainNotVerified, "The From header's domain elsewhere.example is not verified"},
		{"envelope unverified", "bounce@pending.example", []string{"a@x.example"}, ok,
			mailroom.ECodeDomainNotVerified, "The envelope sender's domain pending.example is not verified"},
		{"null sender", "", []string{"a@x.example"}, ok, mailroom.ECodeValidation, "MAIL FROM"},
		{"no recipient", "orders@shop.example", nil, ok, mailroom.ECodeValidation, "RCPT TO"},
		{"bad recipient", "orders@shop.example", []string{"not an address"}, ok, mailroom.ECodeValidation, "RCPT TO"},
		{"51 recipients", "orders@shop.example", many, ok, mailroom.ECodeValidation, "51 envelope recipients; at most 50"},
		{"no From", "orders@shop.example", []string{"a@x.example"}, "To: a@x.example\r\n\r\nx\r\n", mailroom.ECodeValidation, "no From header"},
		{"two From", "orders@shop.example", []string{"a@x.example"}, "From: a@shop.example\r\nFrom: b@shop.example\r\n\r\nx\r\n", mailroom.ECodeValidation, "2 From headers"},
		{"two mailboxes", "orders@shop.example", []string{"a@x.example"}, "From: a@shop.example, b@shop.example\r\n\r\nx\r\n", mailroom.ECodeValidation, "one well-formed address"},
		// Mail clients show the first address of a field that does not
		// parse; the lenient reading would take the last.
		{"a second address before ours", "orders@shop.example", []string{"a@x.example"}, "From: <evil@elsewhere.example> <orders@shop.example>\r\n\r\nx\r\n", mailroom.ECodeValidation, "one well-formed address"},
		{"a bare address before ours", "orders@shop.example", []string{"a@x.example"}, "From: evil@elsewhere.example <orders@shop.example>\r\n\r\nx\r\n", mailroom.ECodeValidation, "one well-formed address"},
		{"not a header", "orders@shop.example", []string{"a@x.example"}, "From: a@shop.example\r\nHello there\r\n\r\nx\r\n", mailroom.ECodeValidation, "not a header field"},
		{"empty", "orders@shop.example", []string{"a@x.example"}, "", mailroom.ECodeValidation, "empty"},
		// The API's header policy (headerpolicy_test.go tries each class
		// end to end): a lone CR is a line break in a value, and a field
		// given twice is named once.
		{"lone CR", "orders@shop.example", []string{"a@x.example"}, "From: orders@shop.example\r\nSubject: a\rBcc: b@x.example\r\n\r\nx\r\n",
			mailroom.ECodeValidation, "Subject: the field's value must not contain line breaks"},
		{"ARC chain", "orders@shop.example", []string{"a@x.example"}, "ARC-Seal: i=2\r\nARC-Seal: i=1\r\nFrom: orders@shop.example\r\n\r\nx\r\n",
			mailroom.ECodeValidation, "ARC-Seal: a submitted message must not carry this field: ARC-* fields are the trust chain of forwarding servers (RFC 8617 §4); a sender must not write them; remove it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.submit(tc.mailFrom, tc.rcpts, tc.raw)
			wantSubmitError(t, err, tc.code, tc.says)
		})
	}
	if n := len(w.messages.accepted); n != 0 {
		t.Fatalf("%d refused messages were accepted", n)
	}
	// 50 distinct recipients, one of them given twice, are within the limit.
	if _, err := w.submit("orders@shop.example", append(many[:50], many[0]), ok); err != nil {
		t.Fatal(err)
	}
	// The envelope sender may be on another verified domain of the account.
	if _, err := w.submit("bounce@mail.shop.example", []string{"a@x.example"}, ok); err != nil {
		t.Fatal(err)
	}
}

func TestSubmitTooLarge(t *testing.T) {
	w := newSubWorld(t)
	raw := "From: orders@shop.example\r\n\r\n" + strings.Repeat("x", submission.MaxSubmittedMessageBytes)
	_, err := w.submit("orders@shop.example", []string{"a@x.example"}, raw)
	wantSubmitError(t, err, mailroom.ECodePayloadTooLarge, "")
}

func TestSubmissionsAuthenticate(t *testing.T) {
	w := newSubWorld(t)
	ctx := context.Background()
	if k, err := w.svc.Authenticate(ctx, w.password); err != nil || k.KeyID != w.key.KeyID {
		t.Fatalf("send key: %v %v", k, err)
	}
	domainsOnly, k := mailroom.NewAPIKey(subAccount, "dns", mailroom.Scopes{mailroom.ScopeDomains}, subNow)
	w.keys.keys[k.KeyID] = k
	_, err := w.svc.Authenticate(ctx, domainsOnly)
	wantSubmitError(t, err, mailroom.ECodeInsufficientScope, "")
	// A changed last character (never the one it was: "x" would be no
	// change for one key in 62).
	last := "x"
	if strings.HasSuffix(w.password, last) {
		last = "y"
	}
	_, err = w.svc.Authenticate(ctx, w.password[:len(w.password)-1]+last)
	wantSubmitError(t, err, mailroom.ECodeInvalidAPIKey, "")
	_, err = w.svc.Authenticate(ctx, "hunter2")
	wantSubmitError(t, err, mailroom.ECodeInvalidAPIKey, "")

	// Revoked after AUTH: the session's next message is refused.
	w.keys.mu.Lock()
	revoked := *w.key
	revoked.RevokedAt = &subNow
	w.keys.keys[w.key.KeyID] = &revoked
	w.keys.mu.Unlock()
	_, err = w.submit("orders@shop.example", []string{"a@x.example"}, "From: orders@shop.example\r\n\r\nx\r\n")
	wantSubmitError(t, err, mailroom.ECodeAPIKeyRevoked, "")
	_, err = w.svc.Authenticate(ctx, w.password)
	wantSubmitError(t, err, mailroom.ECodeAPIKeyRevoked, "")
}

func TestSubmissionsAllow(t *testing.T) {
	w := newSubWorld(t)
	if !w.svc.Allow(w.key) {
		t.Fatal("no limiter refused")
	}
	var asked string
	w.svc.Admit = func(accountID string) bool { asked = accountID; return false }
	if w.svc.Allow(w.key) || asked != subAccount {
		t.Fatalf("limiter asked for %q and its no not heeded", asked)
	}
}

func wantSubmitError(t *testing.T, err error, code, says string) {
	t.Helper()
	if err == nil || mailroom.ErrorCode(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	if !strings.Contains(err.Error(), says) {
		t.Fatalf("error %q does not say %q", err, says)
	}
}
