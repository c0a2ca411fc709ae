package receiving

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Store is what receiving needs of storage (mailroom.ReceivedStore has it).
type Store interface {
	ReceivingDomains(ctx context.Context, name string) ([]mailroom.ReceivingDomain, error)
	SaveReceived(ctx context.Context, msgs []*mailroom.ReceivedMessage, events []*mailroom.Event) error
}

// Receiver is the mailroom.MailReceiver the inbound MX hands mail for
// receiving domains to. Set the fields before use.
type Receiver struct {
	Store    Store
	Resolver Resolver
	// Hostname is the service's --hostname: the authserv-id of its
	// Authentication-Results (RFC 8601 §2.5) and the "by" of its
	// Received field.
	Hostname string
	Now      func() time.Time
	Log      *slog.Logger
	// CacheFor is how long a domain's answer at RCPT is reused
	// (DefaultCacheFor when zero): a domain just set receiving, or just
	// verified, takes mail within it.
	CacheFor time.Duration

	domains domainCache
}

var _ mailroom.MailReceiver = (*Receiver)(nil)

// Accepts says whether rcpt is at a verified receiving domain of some
// account: every address of it is taken (a catch-all, +tags and all).
func (rc *Receiver) Accepts(ctx context.Context, rcpt string) (bool, error) {
	name := domainOf(rcpt)
	if name == "" {
		return false, nil
	}
	ds, err := rc.receivingDomains(ctx, name)
	return len(ds) > 0, err
}

// Receive checks the message, adds the Authentication-Results and
// Received fields above it (having removed any Authentication-Results
// that claims this service's authserv-id), parses it once and stores it
// once for each account its recipients belong to, with an email.received
// event each, in one transaction: none is stored unless all are. A store
// that cannot take it is an ECodeUnavailable error, for the MX's 451.
func (rc *Receiver) Receive(ctx context.Context, in mailroom.InboundMessage) error {
	now := in.ReceivedAt
	if now.IsZero() {
		now = rc.now()
	}
	in.ReceivedAt = now
	byAccount, order, err := rc.recipientsByAccount(ctx, in.Recipients)
	if err != nil {
		return err
	}
	if len(order) == 0 {
		// No recipient is at a receiving domain any more (the domain was
		// just turned off): nothing to store.
		rc.log().Info("received message for no receiving domain; dropped", "rcpts", in.Recipients)
		return nil
	}
	v := Authenticate(ctx, rc.Resolver, in, in.Data)
	raw := rc.stamp(in, v)
	parsed := Parse(raw, now)

	msgs := make([]*mailroom.ReceivedMessage, 0, len(order))
	events := make([]*mailroom.Event, 0, len(order))
	for _, account := range order {
		m := newMessage(account, byAccount[account], in, v, parsed, raw, now)
		ev, err := mailroom.NewEvent(account, mailroom.EventEmailReceived, eventData(m), now)
		if err != nil {
			return err
		}
		msgs, events = append(msgs, m), append(events, ev)
	}
	if err := rc.Store.SaveReceived(ctx, msgs, events); err != nil {
		return err
	}
	for _, m := range msgs {
		rc.log().Info("received message stored", "id", m.ID, "account", m.AccountID, "rcpts", m.Recipients,
			"bytes", m.Size, "spf", m.Authentication.SPF, "dkim", m.Authentication.DKIM, "dmarc", m.Authentication.DMARC,
			"parse_problem", m.ParseProblem)
	}
	return nil
}

// stamp is the stored message: the service's Authentication-Results and
// Received fields, then the bytes received without any
// Authentication-Results claiming the service's authserv-id.
func (rc *Receiver) stamp(in mailroom.InboundMessage, v Verdicts) []byte {
	body := withoutOwnAuthResults(in.Data, rc.Hostname)
	ar, rf := authResultsField(rc.Hostname, v), receivedField(rc.Hostname, in)
	raw := make([]byte, 0, len(ar)+len(rf)+len(body))
	raw = append(raw, ar...)
	raw = append(raw, rf...)
	return append(raw, body...)
}

// recipientsByAccount groups the recipients by the accounts whose
// receiving domains they are at, accounts in the order first met.
func (rc *Receiver) recipientsByAccount(ctx context.Context, rcpts []string) (map[string][]string, []string, error) {
	by := map[string][]string{}
	var order []string
	for _, rcpt := range rcpts {
		ds, err := rc.receivingDomains(ctx, domainOf(rcpt))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range ds {
			if _, ok := by[d.AccountID]; !ok {
				order = append(order, d.AccountID)
			}
			by[d.AccountID] = append(by[d.AccountID], rcpt)
		}
	}
	return by, order, nil
}

func newMessage(account string, rcpts []string, in mailroom.InboundMessage, v Verdicts, p Parsed, raw []byte, now time.Time) *mailroom.ReceivedMessage {
	atts := make([]mailroom.ReceivedAttachment, len(p.Attachments))
	copy(atts, p.Attachments)
	return &mailroom.ReceivedMessage{
		ID:             mailroom.NewID(mailroom.PrefixReceived, now),
		AccountID:      account,
		MailFrom:       in.MailFrom,
		Recipients:     rcpts,
		From:           p.From,
		To:             p.To,
		Cc:             p.Cc,
		Subject:        p.Subject,
		MessageID:      p.MessageID,
		RemoteIP:       remoteIPString(in.RemoteIP),
		Helo:           in.Helo,
		ReceivedAt:     now.UTC(),
		Authentication: v.Auth,
		Headers:        p.Headers,
		Text:           p.Text,
		HTML:           p.HTML,
		Attachments:    atts,
		ParseProblem:   p.Problem,
		Raw:            raw,
		Size:           int64(len(raw)),
	}
}

// eventData is the email.received event's data (docs/api.md "Receiving
// mail"): the attachments' metadata, never their bytes.
func eventData(m *mailroom.ReceivedMessage) mailroom.ReceivedEventData {
	atts := make([]mailroom.ReceivedAttachment, len(m.Attachments))
	for i, a := range m.Attachments {
		a.Content = nil
		atts[i] = a
	}
	return mailroom.ReceivedEventData{
		ReceivedID: m.ID, From: m.From, To: m.To, Cc: m.Cc, Recipients: m.Recipients,
		// To the second, as every time of the API is (GET /v1/received
		// shows the same), so that the two can be matched.
		Subject: m.Subject, MessageID: m.MessageID, ReceivedAt: m.ReceivedAt.UTC().Truncate(time.Second),
		Authentication: m.Authentication, Attachments: atts,
	}
}

func remoteIPString(s string) string {
	if ip := remoteIP(s); ip != nil {
		return ip.String()
	}
	return s
}

// domainOf is the normalised domain of an address ("" without one).
func domainOf(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return ""
	}
	name, err := mailroom.NormalizeDomainName(addr[at+1:])
	if err != nil {
		return ""
	}
	return name
}

func (rc *Receiver) now() time.Time {
	if rc.Now != nil {
		return rc.Now()
	}
	return time.Now()
}

func (rc *Receiver) log() *slog.Logger {
	if rc.Log != nil {
		return rc.Log
	}
	return slog.New(slog.DiscardHandler)
}
