package mailroom

import (
	"context"
	"net/netip"
	"time"
)

// Engagement tracking (docs/api.md "Engagement tracking"): off unless a
// domain or a send asks for it. A tracked message's HTML part is
// rewritten for each recipient before it is signed: a 1×1 image at its end
// (opens) and each http(s) link through the service (clicks), with sealed
// tokens of that recipient (package tracking). Each open or click that
// comes back is an EngagementHit, recorded through the same event path as
// deliveries, so it reaches the timeline, /v1/events and webhooks.

// Event types of engagement (docs/api.md "Webhooks and events").
const (
	EventEmailOpened  = "email.opened"
	EventEmailClicked = "email.clicked"
)

// Tracking says what a message's copies are tracked for: a domain's
// openTracking and clickTracking, or a message's settings once its send
// was accepted (ResolveTracking).
type Tracking struct {
	Opens  bool `json:"opens"`
	Clicks bool `json:"clicks"`
}

// Any says whether anything is tracked: the message is then composed per
// recipient.
func (t Tracking) Any() bool { return t.Opens || t.Clicks }

// TrackingOverride is a send's `tracking`: a field given overrides the
// domain's setting for that message, a field left out (nil) follows it.
type TrackingOverride struct {
	Opens  *bool `json:"opens,omitempty"`
	Clicks *bool `json:"clicks,omitempty"`
}

// ResolveTracking is what a message is tracked for, given its domain's
// settings, its send's override (nil for none) and its HTML: a message
// without an HTML part has nothing to rewrite (the text part is never
// rewritten), so nothing of it is tracked.
func ResolveTracking(domain Tracking, o *TrackingOverride, html string) Tracking {
	t := domain
	if o != nil {
		if o.Opens != nil {
			t.Opens = *o.Opens
		}
		if o.Clicks != nil {
			t.Clicks = *o.Clicks
		}
	}
	if html == "" {
		return Tracking{}
	}
	return t
}

// TrackedLink is one link of a click-tracked message, as the log shows
// it: the original address (what the link pointed to before it was
// rewritten; link i of the HTML part, in document order) and how many
// clicks it had, from every recipient.
type TrackedLink struct {
	URL    string `json:"url"`
	Clicks int    `json:"clicks"`
}

// Limits of tracking.
const (
	// ClickScanWindow is how soon after delivery a click looks like a
	// link scanner's rather than a reader's: mail filters follow every
	// link of a message as it arrives.
	ClickScanWindow = 10 * time.Second
	// MaxClickEvents bounds the email.clicked events of one recipient's
	// copy: clicks past it are still counted and still redirected, but
	// write no event, so that a copy forwarded to a crowd, or a script
	// replaying a link from many addresses, cannot flood the timeline and
	// every webhook.
	MaxClickEvents = 100
	// MaxTrackedLinks bounds the links of one message that are rewritten:
	// later links are left as they are.
	MaxTrackedLinks = 1000
)

// EngagementHit is one open or click that came back, as the tracking
// service read it from the request and its token.
type EngagementHit struct {
	// Type is EventEmailOpened or EventEmailClicked.
	Type      string
	MessageID string
	// Recipient is the address the copy was made for, as the message
	// holds it.
	Recipient string
	// LinkIndex is the clicked link's position among the message's
	// tracked links (TrackedLink); 0 for an open.
	LinkIndex int
	// URL is the clicked link's original address; "" for an open.
	URL string
	// UserAgent is the request's User-Agent, cut to MaxUserAgent bytes.
	UserAgent string
	// IP is the client's address truncated (TruncateIP).
	IP string
	// Machine says the request alone looked automated: a HEAD, a
	// prefetch, a known scanner's or image proxy's agent. A click within
	// ClickScanWindow of delivery is machine too, which the recipient's
	// state tells (NewEngagementEvent).
	Machine bool
	At      time.Time
}

// MaxUserAgent is how much of a User-Agent an engagement event keeps.
const MaxUserAgent = 512

// Engagement is what an email.opened or email.clicked event tells
// (docs/api.md "Engagement tracking"); nil on every other event.
type Engagement struct {
	// URL is the clicked link's original address; absent on opens.
	URL       string `json:"url,omitempty"`
	UserAgent string `json:"userAgent"`
	// IP is truncated: an IPv4 address to its /24, an IPv6 one to its
	// /48.
	IP      string `json:"ip"`
	Machine bool   `json:"machine"`
}

// NewEngagementEvent makes the event of hit for recipient r of message
// m. A click is machine when the request looked automated or it came
// within ClickScanWindow of the recipient's delivery, or before a
// delivery was recorded at all (a filter following links while the
// receiving server still holds the transaction).
func NewEngagementEvent(m *MessageSummary, r *Recipient, hit *EngagementHit) *Event {
	e := NewEmailEvent(m, r, hit.Type, hit.At)
	machine := hit.Machine
	if hit.Type == EventEmailClicked && ClickLooksAutomated(r, hit.At) {
		machine = true
	}
	// The delivery attempt's details (its reply, MX, TLS) describe the
	// delivery, not this request: the event carries its own alone.
	e.Email.EmailEventDetail = EmailEventDetail{Attempt: r.Attempts,
		Engagement: &Engagement{URL: hit.URL, UserAgent: hit.UserAgent, IP: hit.IP, Machine: machine}}
	return e
}

// ClickLooksAutomated says whether a click at at on r's copy came too soon
// to be a reader's: before r's delivery was recorded, or within
// ClickScanWindow of it.
func ClickLooksAutomated(r *Recipient, at time.Time) bool {
	delivered := r.Status == RecipientDelivered || r.Status == RecipientComplained
	if !delivered || r.LastAttemptAt == nil {
		return true
	}
	return at.Sub(*r.LastAttemptAt) < ClickScanWindow
}

// EngagementCounts are a recipient's counts once a hit is counted: every
// open, the opens that did not look automated, and every click.
type EngagementCounts struct {
	Opens, ReaderOpens, Clicks int
}

// WritesEvent says whether hit, already counted in c, writes an event.
//
// An open does when it is the recipient's first, and when it is the first
// that did not look automated after automated ones: a mail filter or
// security gateway that fetches the pixel as the message arrives would
// otherwise hide the reader's own open, which is what a filter on
// machine: false is after. Later opens are counted only. A click does
// while the recipient has had at most MaxClickEvents.
func (c EngagementCounts) WritesEvent(hit *EngagementHit) bool {
	if hit.Type == EventEmailOpened {
		return c.Opens == 1 || (!hit.Machine && c.ReaderOpens == 1)
	}
	return c.Clicks <= MaxClickEvents
}

// TruncateIP is the part of a client's address an engagement event
// keeps: its ClientNetwork's address ("192.0.2.0", "2001:db8:1::");
// enough to tell a network, not a household. "" for an invalid address.
func TruncateIP(a netip.Addr) string {
	p := ClientNetwork(a)
	if !p.IsValid() {
		return ""
	}
	return p.Addr().String()
}

// ClientNetwork is the network of a client's address that tracking keeps
// and limits: an IPv4 address (or an IPv4-mapped IPv6 one) to its /24, an
// IPv6 address to its /48, since one host of either may hold many
// addresses. The zero Prefix for an invalid address.
func ClientNetwork(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	bits := 48
	if a.Is4() {
		bits = 24
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

// EngagementFilter selects the messages of the email log some recipient
// of which opened or clicked (`?event=opened`, `?event=clicked`).
type EngagementFilter string

const (
	EngagementOpened  EngagementFilter = "opened"
	EngagementClicked EngagementFilter = "clicked"
)

// ParseEngagementFilter reads the log's event parameter; "" is no filter.
func ParseEngagementFilter(v *Validator, field, s string) EngagementFilter {
	switch f := EngagementFilter(s); f {
	case "", EngagementOpened, EngagementClicked:
		return f
	}
	v.Add(field, "must be opened or clicked")
	return ""
}

// EngagementStore keeps what comes back from tracked copies (the links
// they carry are the message's: MessageStore.SaveTrackedLinks).
type EngagementStore interface {
	// RecordEngagement records hit in one transaction: it counts it on
	// its recipient (Opens or Clicks) and its link, and writes its event
	// (NewEngagementEvent) when EngagementCounts.WritesEvent says so; the
	// event is returned, nil when the hit was only counted. A message or
	// recipient that is gone (retention removed it) is ECodeNotFound:
	// nothing is recorded, and the caller answers all the same.
	RecordEngagement(ctx context.Context, hit *EngagementHit) (*Event, error)
}
