package http

import (
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/connlimit"
	"github.com/mailroom/mailroom/positive"
)

// DefaultMaxConnsPerAddress is how many HTTPS connections one client
// address (an IPv4 address, or an IPv6 /64) may hold at once. It is above
// the default burst of one account (200 requests at once, each on its own
// HTTP/1.1 connection) so that an honest client, or an office behind one
// NAT address, is never refused, and far below what exhausts the process.
const DefaultMaxConnsPerAddress = 256

// maxConnsCeiling is the overall default where the open-file limit allows
// it: ample for one node, whose request rate the accounts' limits bound.
const maxConnsCeiling = 10000

// DefaultMaxConns is how many HTTPS connections the server holds at once
// when the operator sets no number: 10,000, or half the process's open-file
// limit (RLIMIT_NOFILE, which Go raises to its hard limit at start) when
// that is lower. Every connection is a file descriptor, and the other half
// is for what must keep working when the API is flooded: storage (the
// SQLite files, the PostgreSQL pool), the SMTP listeners (up to 1,000
// connections each), delivery's SMTP sessions and webhook requests, DNS,
// and the accepted connection that is being refused. Past the process's
// limit, accept fails for everyone and storage cannot open a connection:
// the outage the cap exists to prevent.
func DefaultMaxConns() int {
	if n, ok := connlimit.OpenFileLimit(); ok {
		return max(min(maxConnsCeiling, n/2), 1)
	}
	return maxConnsCeiling
}

// ConnLimits bound the HTTPS connections held at once: PerAddress of one
// client address and Total in all. Zero takes DefaultMaxConnsPerAddress
// and DefaultMaxConns.
type ConnLimits struct {
	PerAddress int
	Total      int
}

// LimitConnections wraps the HTTPS listener ln so that a connection beyond
// the limits is reset as it is accepted, before its TLS handshake, costing
// no goroutine and holding no file descriptor. Give the result to
// http.Server.ServeTLS, which does the handshake on the connections let
// through. Refusals are counted on reg (when not nil), by which cap
// refused them, beside a gauge of the connections held.
func LimitConnections(ln net.Listener, limits ConnLimits, reg prometheus.Registerer) net.Listener {
	lim := connlimit.New(positive.Or(limits.PerAddress, DefaultMaxConnsPerAddress), positive.Or(limits.Total, DefaultMaxConns()))
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_http_connections_refused_total",
		Help: "HTTPS connections reset at accept, before the TLS handshake, by the cap that refused them: per_address or total.",
	}, []string{"reason"})
	for _, r := range []connlimit.Reason{connlimit.PerAddress, connlimit.Total} {
		refused.WithLabelValues(string(r))
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mailroom_http_connections_open",
		Help: "HTTPS connections held now, idle keep-alive ones included.",
	}, func() float64 { return float64(lim.Open()) })
	if reg != nil {
		reg.MustRegister(refused, open)
	}
	return &connlimit.Listener{Listener: ln, Limiter: lim, OnRefuse: func(_ net.Addr, why connlimit.Reason) {
		refused.WithLabelValues(string(why)).Inc()
	}}
}
