package tracking

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// Service answers the tracking addresses of tracked copies (docs/api.md
// "Engagement tracking"): it opens their tokens and records each open and
// click through the store, in the same transaction as its event
// (EngagementStore.RecordEngagement), so that it reaches the timeline,
// /v1/events and webhooks. Recording never stands between a reader and
// the answer: the pixel always answers, a click that opens always
// redirects.
type Service struct {
	Tokens *Tokens
	Store  mailroom.EngagementStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives what could not be recorded; nil means slog.Default.
	Log *slog.Logger
	// Limits bound each client network's recordings; zero means
	// DefaultLimits.
	Limits Limits
	// RecordTimeout bounds one recording, so that a slow store holds no
	// request for long; zero means DefaultRecordTimeout.
	RecordTimeout time.Duration

	once    sync.Once
	limiter *clientLimiter
}

// DefaultRecordTimeout is how long a recording may take before the answer
// goes out without it.
const DefaultRecordTimeout = 5 * time.Second

// Request is what the service reads of an HTTP request to a tracking
// address.
type Request struct {
	Method string
	Header http.Header
	// Client is the connection's peer: the API trusts no forwarding
	// header (X-Forwarded-For is the client's to write).
	Client netip.Addr
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Open records the open a pixel's token names, when it names one and the
// client's network is within its limit. It never fails the caller: the
// pixel answers whatever happens.
func (s *Service) Open(ctx context.Context, token string, r Request) {
	p, err := s.Tokens.OpenPixel(token)
	if err != nil {
		return
	}
	s.record(ctx, r, &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: p.MessageID, Recipient: p.Recipient})
}

// Click returns the original address of the link a click token names,
// and records the click as Open does an open. A token that does not open
// is ECodeNotFound, and nothing is recorded: a tampered token is never a
// redirect.
func (s *Service) Click(ctx context.Context, token string, r Request) (string, error) {
	l, err := s.Tokens.OpenLink(token)
	if err != nil {
		return "", err
	}
	s.record(ctx, r, &mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: l.MessageID, Recipient: l.Recipient,
		LinkIndex: l.Index, URL: l.URL})
	return l.URL, nil
}

// record completes hit from the request and stores it. The recording runs
// to its own deadline, apart from the request's: a reader whose browser
// moves on before the answer still counts. Failures are logged with the
// message's id, never the token (which opens the recipient's copy).
func (s *Service) record(ctx context.Context, r Request, hit *mailroom.EngagementHit) {
	s.once.Do(func() { s.limiter = newClientLimiter(s.Limits) })
	hit.At = s.now()
	if !s.limiter.allow(r.Client, hit.At) {
		return
	}
	hit.IP = mailroom.TruncateIP(r.Client)
	hit.UserAgent = cutUserAgent(r.Header.Get("User-Agent"))
	hit.Machine = LooksAutomated(r.Method, r.Header)
	timeout := s.RecordTimeout
	if timeout <= 0 {
		timeout = DefaultRecordTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if _, err := s.Store.RecordEngagement(ctx, hit); err != nil {
		level := slog.LevelWarn
		if mailroom.IsCode(err, mailroom.ECodeNotFound) {
			// The message left the log (retention): its links still
			// redirect, and nothing is left to count on.
			level = slog.LevelDebug
		}
		s.log().Log(ctx, level, "tracking: not recorded", "event", hit.Type, "message", hit.MessageID, "error", err)
	}
}

// cutUserAgent is a User-Agent as an event keeps it: valid UTF-8 of at
// most mailroom.MaxUserAgent bytes, cut at a character's start.
func cutUserAgent(ua string) string {
	ua = strings.ToValidUTF8(ua, "\uFFFD")
	if len(ua) <= mailroom.MaxUserAgent {
		return ua
	}
	cut := mailroom.MaxUserAgent
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}
