// Package http serves Mailroom's HTTPS JSON API (docs/api.md): routing, the
// request pipeline (request ids, logs, metrics, authentication, JSON rules)
// and the mapping of domain errors to HTTP, all in one place.
package http

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/audit"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/emaillog"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/ratelimit"
	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/send"
	"github.com/mailroom/mailroom/suppression"
	"github.com/mailroom/mailroom/template"
	"github.com/mailroom/mailroom/tracking"
	"github.com/mailroom/mailroom/unsubscribe"
	"github.com/mailroom/mailroom/webhook"
)

// Server holds what the API handlers need. Build it with its fields set,
// then call Handler once.
type Server struct {
	Store mailroom.Store
	Auth  *apikey.Authenticator
	// Keys is the API keys service (docs/api.md "API keys").
	Keys    *apikey.Service
	Domains *domain.Service
	Sender  *send.Sender
	// Templates is the saved-templates service (docs/api.md "Templates").
	Templates *template.Service
	Messages  *emaillog.Service
	// Scheduled serves the scheduled sends (docs/api.md "Scheduled sends").
	Scheduled *send.Scheduled
	Log       *slog.Logger
	// Suppressions is the suppression list service (docs/api.md "Suppressions").
	Suppressions *suppression.Service
	// Unsubscribes serves the one-click unsubscribe links of marketing
	// mail (docs/api.md "Mail coming back"); nil answers them 404.
	Unsubscribes *unsubscribe.Service
	// Tracking answers the open pixels and click addresses of tracked
	// copies (docs/api.md "Engagement tracking"); nil answers the pixel
	// and records nothing, and answers every click 404.
	Tracking *tracking.Service
	// Audit lists the audit log (docs/api.md "Audit log").
	Audit *audit.Service
	// Received serves the received mail (docs/api.md "Receiving mail").
	Received *receiving.Mailbox
	// Webhooks serves webhook endpoints and the events list (docs/api.md
	// "Webhooks and events").
	Webhooks *webhook.Service
	// AttachmentFetcher fetches the attachments Resend's requests give by
	// path (docs/api.md "Moving from Resend"); nil fetches them through the
	// guard with the system's resolver and roots, no private target
	// allowed.
	AttachmentFetcher resend.Fetcher
	// AttachmentFetchTimeout bounds all the attachment fetches of one
	// request together; zero means resend.FetchTimeout.
	AttachmentFetchTimeout time.Duration
	// Dashboard serves GET and HEAD of every path outside /v1 that no route
	// claims (docs/api.md "Dashboard"); nil answers them the JSON 404.
	Dashboard http.Handler
	// Metrics receives the request metrics; nil keeps them unregistered.
	Metrics prometheus.Registerer
	// Limiter enforces each account's request rate (docs/api.md "Limits"); nil lets
	// every request through, which tests that are not about rates want.
	Limiter *ratelimit.Limiter
	// Memory is the node's memory budget for requests in flight, which
	// each authenticated request's body takes from as it is read
	// (docs/api.md "Limits"); nil bounds nothing. MemoryRefusals counts
	// its refusals (membudget.Metrics), with SMTP submission's.
	Memory         *membudget.Budget
	MemoryRefusals *membudget.Refusals
	// StorageBudget bounds each authenticated request's storage work; zero
	// means the package's StorageBudget.
	StorageBudget time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoHSTS leaves Strict-Transport-Security out of every answer, for
	// serve --dev (securityheaders.go says why).
	NoHSTS bool

	log     *slog.Logger
	metrics *metrics
	// fetcher is AttachmentFetcher or its default, set by Handler.
	fetcher resend.Fetcher
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Server) storageBudget() time.Duration {
	if s.StorageBudget > 0 {
		return s.StorageBudget
	}
	return StorageBudget
}

// Handler returns the API with its whole request pipeline.
func (s *Server) Handler() http.Handler {
	s.log = s.Log
	if s.log == nil {
		s.log = slog.Default()
	}
	s.metrics = newMetrics(s.Metrics)
	s.fetcher = s.AttachmentFetcher
	if s.fetcher == nil {
		s.fetcher = resend.NewAttachmentFetcher(nil, nil, false)
	}
	return s.observe(s.routes())
}

// NewHTTPServer wraps h in an *http.Server with the timeouts and limits
// that keep a slow or oversized client from holding the server: the TLS
// handshake must end within 10 s (net/http takes the shortest of the
// timeouts for it), and so must each request's headers, which stay under
// 64 KiB; a whole request may take 2 minutes (16 MiB on a slow link), and
// an idle keep-alive connection, HTTP/1.1 or HTTP/2, is closed after 2
// minutes. So every connection that does nothing ends within 2 minutes;
// how many may be held meanwhile is LimitConnections'.
func NewHTTPServer(addr string, h http.Handler, tlsConfig *tls.Config, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// "OPTIONS *" goes to the routes (a JSON 404 with X-Request-Id),
		// not net/http's bare 200.
		DisableGeneralOptionsHandler: true,
		// Failed handshakes (a plain-HTTP request, a scanner) are noise at
		// the default level.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}
